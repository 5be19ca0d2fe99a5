"""An overrides file edited while the app runs: the app re-reads it (the catalog loader stamps
the file's mtime), but its cached plans, offers and summaries were keyed by the file's *path*
and the catalog's meta, so the page kept showing the old prices until the server restarted."""

from __future__ import annotations

import os

import catalog
from app_pages import _shared as S


def _write(path, percent: int, at_ns: int) -> None:
    path.write_text(f"discounts:\n  - {{cloud: aws, percent: {percent}}}\n")
    os.utime(path, ns=(at_ns, at_ns))


def test_an_edited_overrides_file_changes_the_cache_key(tmp_path):
    path = tmp_path / "overrides.yaml"
    _write(path, 10, 1_700_000_000_000_000_000)
    first = catalog.load_catalog(overrides=str(path))
    first_key = S.catalog_key(first)  # as a page run keys its caches: load, then key
    _write(path, 40, 1_700_000_100_000_000_000)
    second = catalog.load_catalog(overrides=str(path))

    def p5(cat):
        return next(o.usd_per_hour for o in cat.offers if o.instance_type == "p5.48xlarge"
                    and o.region == "us-east-1" and o.pricing == "on_demand")

    assert p5(second) < p5(first)  # the loader saw the edit …
    assert S.catalog_key(second) != first_key  # … and so do the page caches


def test_the_same_file_unchanged_keeps_its_key(tmp_path):
    path = tmp_path / "overrides.yaml"
    _write(path, 10, 1_700_000_000_000_000_000)
    assert S.catalog_key(catalog.load_catalog(overrides=str(path))) == \
        S.catalog_key(catalog.load_catalog(overrides=str(path)))
