"""Writing the packaged snapshot (``catalog/data/``) from the shared reference tables: the one
public entry to ``_build`` (``tools/build_snapshot.py`` calls it; the product never does).

Deterministic: the same reference gives byte-identical files (rows sorted, no timestamps).
"""

from __future__ import annotations

import json
from pathlib import Path

from ._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, write_table
from ._writes import write_text_atomic


def write_snapshot(reference: Path, out: Path) -> dict[str, int]:
    """Build the snapshot from ``reference`` into ``out``; the number of rows of each table."""
    from ._build import build_snapshot  # developer-only: reads ../shared/reference

    snap = build_snapshot(Path(reference))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_table(out / "accelerators.csv", snap.accelerators, ACCELERATORS)
    write_table(out / "instance_types.csv", snap.instance_types, INSTANCE_TYPES)
    write_table(out / "offers.csv", snap.offers, OFFERS)
    write_text_atomic(out / "meta.json",
                      json.dumps(snap.meta, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    return {"accelerators": len(snap.accelerators), "instance_types": len(snap.instance_types),
            "offers": len(snap.offers)}
