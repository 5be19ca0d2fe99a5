#!/usr/bin/env python3
"""Build the embedded catalog snapshot (catalog/data/) from the shared reference tables.

    python tools/build_snapshot.py [--reference ../shared/reference] [--out catalog/data]

Deterministic and re-runnable: the same reference gives byte-identical files (rows sorted, no
timestamps). The product never reads the reference at run time: this script copies what it
needs into the catalog's own format. The judgements the reference README asks for (newest
file wins per offer, retired sizes dropped, suspect and placeholder prices flagged, wrong facts
corrected) live in ``catalog/_build/``; the anomaly rules in ``catalog/_anomalies.py`` run over
the result exactly as they do after a refresh.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog._build import build_snapshot  # noqa: E402
from catalog._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, write_table  # noqa: E402
from catalog._files import write_text_atomic  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=ROOT.parent / "shared" / "reference")
    parser.add_argument("--out", type=Path, default=ROOT / "catalog" / "data")
    args = parser.parse_args(argv)
    snap = build_snapshot(args.reference)
    args.out.mkdir(parents=True, exist_ok=True)
    write_table(args.out / "accelerators.csv", snap.accelerators, ACCELERATORS)
    write_table(args.out / "instance_types.csv", snap.instance_types, INSTANCE_TYPES)
    write_table(args.out / "offers.csv", snap.offers, OFFERS)
    write_text_atomic(args.out / "meta.json",
                      json.dumps(snap.meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {len(snap.accelerators)} accelerators, {len(snap.instance_types)} instance "
          f"types, {len(snap.offers)} offers to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
