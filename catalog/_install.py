"""Installing a catalog directory: written complete under a temporary name, read back with the
normal loader, renamed into place, then (by default) made active — the steps and the crash
guarantees are in ``_store``'s docstring."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from . import _store
from ._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, write_table
from ._errors import CatalogError, CatalogFileError, without_fix
from ._files import _os_reason
from ._load import read_catalog_dir
from ._meta import cloud_meta
from ._paths import catalogs_dir
from ._writes import make_directory, write_fix, write_text_atomic


def install(accelerators, instance_types, offers, meta: dict, *, name: str | None = None,
            activate: bool = True) -> tuple[str, Path]:
    """Write a complete catalog directory and (by default) make it active; see the module
    docstring for the steps and what a crash at each leaves behind."""
    base = catalogs_dir()
    make_directory(base, what="catalog store")
    _store._clean_stale_work(base)
    name = name or _store.new_name()
    if not _store._valid_name(name):
        raise CatalogError(f"invalid catalog name {name!r}. To fix: use letters, digits, '.', "
                           "'_' and '-'")
    meta = with_cloud_meta(meta, offers)
    tmp = base / f".tmp-{name}"
    final = base / name
    try:
        os.mkdir(tmp)
    except FileExistsError:  # another install of this name under way: as before
        raise
    except OSError as exc:  # a read-only or locked store: the store's fix, not a traceback
        raise CatalogFileError(f"catalog store {base}: cannot create {tmp.name} in it "
                               f"({_os_reason(exc)}). To fix: "
                               f"{write_fix(exc.errno, base, own=True)}") from None
    try:
        write_table(tmp / "accelerators.csv", accelerators, ACCELERATORS)
        write_table(tmp / "instance_types.csv", instance_types, INSTANCE_TYPES)
        write_table(tmp / "offers.csv", offers, OFFERS)
        write_text_atomic(tmp / "meta.json", json.dumps(meta, indent=2, sort_keys=True) + "\n",
                          what="catalog meta")
        _store._fsync_dir(tmp)
        _read_back(tmp, name)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _store._fsync_dir(base)
    if activate:
        activate_installed(name)
    return name, final


def activate_installed(name: str) -> tuple[str, ...]:
    """Make the installed catalog ``name`` active, then remove the refreshes' catalogs past the
    newest ``_store.KEEP``; the names removed (a refresh lists them)."""
    _store.switch(name)
    return _store._prune_old(catalogs_dir())


def _read_back(tmp: Path, name: str) -> None:
    """The normal loader must accept what was just written. When it does not, the records
    handed to ``install`` were wrong — a bug in what built them (the refresh), not in any
    stored catalog: the loader's own fix ("run `gpuplan catalog use packaged`", naming the
    temporary directory, which is removed) pointed at the wrong thing."""
    try:
        read_catalog_dir(tmp, name)
    except CatalogError as exc:
        if isinstance(exc.__cause__ or exc.__context__, OSError):
            raise  # the disk, not the records: the loader's message says which file
        said = without_fix(exc).replace(f"{tmp}{os.sep}", "").replace(str(tmp), "it")
        raise CatalogError(f"the new catalog does not load back ({said}): a bug in gpuplan's "
                           "catalog refresh, not in your catalogs, which are unchanged. To "
                           "fix: leave the cloud at fault out with --cloud, and report this "
                           "line") from None


def with_cloud_meta(meta: dict, offers) -> dict:
    """``meta`` with an entry under ``clouds`` (``cloud_meta``) for every cloud that has offers
    and none yet: the loader refuses offers whose dates and counts meta.json does not state."""
    clouds = dict(meta.get("clouds") or {})
    present = {o.cloud for o in offers}
    missing = [c for c in sorted(present) if c not in clouds]
    if not missing:
        return meta
    for cloud in missing:
        clouds[cloud] = cloud_meta(offers, cloud)
    return {**meta, "clouds": clouds}
