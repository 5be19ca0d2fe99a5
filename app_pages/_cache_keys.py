"""The keys the pages' caches (``st.cache_data``) are keyed by: what identifies the catalog's
contents (its overrides file's edits included) and the ingested probe reports."""

from __future__ import annotations

import json
import os

import catalog


def catalog_key(cat: catalog.Catalog) -> tuple:
    """What identifies a catalog's contents, for cache keys (a refresh changes ``meta``; an
    edit of the overrides file its stamp, as the loader's own cache reads it: keyed by the
    path alone, an edited file's new prices were re-read but its old plans served)."""
    return (cat.name, str(cat.path), cat.overrides_path, _stamps(cat.overrides_path),
            json.dumps(cat.meta, sort_keys=True, default=str))


def _stamps(paths: str | None) -> tuple:
    out = []
    for path in (paths or "").split("; ") if paths else ():
        try:
            st_ = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((st_.st_mtime_ns, st_.st_size))
    return tuple(out)


def calibration_key() -> tuple[tuple[int, str | None], ...]:
    """The ingested probe reports: ingesting, relabelling (a re-ingest with another
    accelerator keeps the id) or removing one invalidates cached plans. Ids are never reused
    (``store.remove_reports``)."""
    from planner import store

    try:
        return tuple((r.id, r.accelerator) for r in store.list_reports())
    except catalog.GpuplanError:
        return ()


