"""meta.json for the packaged snapshot (see ``catalog._meta`` for the per-cloud part)."""

from __future__ import annotations

from .._clouds import CLOUDS
from .._meta import cloud_meta
from .._records import Offer
from ._common import REFERENCE_FILES


def snapshot_meta(offers: list[Offer], skipped: dict[str, list[str]]) -> dict:
    basis = {}
    for cloud in CLOUDS:
        files = sorted((f for f in REFERENCE_FILES.values() if f.cloud == cloud),
                       key=lambda f: f.as_of, reverse=True)
        basis[cloud] = "; ".join(f"{f.name}: {f.as_of.isoformat()}"
                                 f"{' (approximate)' if f.approximate else ''} — {f.basis}"
                                 for f in files)
    return {
        "name": "packaged",
        "built_by": "tools/build_snapshot.py",
        "source": "public list prices from the shared reference (per-offer sources and dates), "
                  "datasheet specs and cloud network docs (SPECS.md)",
        "clouds": {c: cloud_meta(offers, c, basis) for c in CLOUDS},
        "skipped": {c: v for c, v in skipped.items() if v},
    }
