#!/usr/bin/env python3
"""Build the embedded catalog snapshot (catalog/data/) from the shared reference tables.

    python tools/build_snapshot.py [--reference ../shared/reference] [--out catalog/data]

Deterministic and re-runnable: the same reference gives byte-identical files (rows sorted, no
timestamps). The product never reads the reference at run time: ``catalog.write_snapshot``
copies what it needs into the catalog's own format. The judgements the reference README asks
for (newest file wins per offer, retired sizes dropped, suspect and placeholder prices flagged,
wrong facts corrected, the planning facts of each accelerator) live in ``catalog/_build/``; the
anomaly rules in ``catalog/_anomalies.py`` run over the result exactly as they do after a
refresh.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog import write_snapshot


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=ROOT.parent / "shared" / "reference")
    parser.add_argument("--out", type=Path, default=ROOT / "catalog" / "data")
    args = parser.parse_args(argv)
    counts = write_snapshot(args.reference, args.out)
    print(f"wrote {counts['accelerators']} accelerators, {counts['instance_types']} instance "
          f"types, {counts['offers']} offers to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
