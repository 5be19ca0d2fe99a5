"""What a refresh may do to ``$GPUPLAN_HOME/catalogs/``, and what recovery may switch to.

A refresh removes only its own older catalogs (``refreshed-…`` with ``refreshed_at``), never a
folder the user put there, and says which it removed; it checks that the store can be written
before any source is called, and sweeps a crash's stale work folders even when it fails.
Recovery from a lost ``active`` marker switches only to a catalog that loads.
"""

from __future__ import annotations

import csv
import datetime as _dt
import errno
import os
import shutil
import time
from dataclasses import replace

import pytest

from catalog import CatalogFileError, CatalogNotice, _load, _paths, _store, load_catalog
from catalog import _install as installer
from catalog._refresh import refresh_catalog, use_catalog
from catalog.sources import CloudData, RefreshError, SourceUnavailable

AS_OF = _dt.date(2026, 2, 15)


class OneRegionAws:
    """The packaged on-demand AWS prices of us-east-1, 1 % dearer; counts its calls."""

    cloud = "aws"

    def __init__(self) -> None:
        self.calls = 0

    def fetch(self, regions, progress):
        self.calls += 1
        packaged = load_catalog("packaged")
        offers = tuple(replace(o, usd_per_hour=round(o.usd_per_hour * 1.01, 5), as_of=AS_OF,
                               source="fake", flags=(), flag_reasons="")
                       for o in packaged.offers
                       if o.cloud == "aws" and o.region == "us-east-1"
                       and o.pricing == "on_demand" and o.usd_per_hour is not None)
        used = {o.instance_type for o in offers}
        types = tuple(t for t in packaged.instance_types if t.cloud == "aws" and t.name in used)
        return CloudData(cloud="aws", instance_types=types, offers=offers, as_of=AS_OF,
                         source="fake", regions=("us-east-1",), covered_pricing=("on_demand",))


class Offline:
    cloud = "aws"

    def fetch(self, regions, progress):
        raise SourceUnavailable("aws", "cannot reach it. To fix: check your network")



@pytest.fixture
def loader_check(monkeypatch):
    """Recovery's check of a candidate, as the loader gives it (``_store.use_load_check``)."""
    monkeypatch.setattr(_store, "_load_check", _load.read_catalog_dir, raising=False)


def _fresh_process():
    _load._cached.cache_clear()
    _load._with_overrides.cache_clear()


def _refresh(source=None):
    return refresh_catalog(clouds=["aws"], regions=["us-east-1"],
                           sources={"aws": source or OneRegionAws()})


def _user_copy(name: str, of=None):
    """A folder the user made under catalogs/: a copy of the packaged snapshot (or of ``of``)."""
    target = _paths.catalogs_dir() / name
    shutil.copytree(of or _paths.packaged_catalog_dir(), target,
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    return target


def _listed():
    return sorted(p.name for p in _paths.catalogs_dir().iterdir())


def test_a_refresh_removes_only_its_own_older_catalogs_and_says_which(small, monkeypatch):
    # names in the order of the refreshes: two in one second tied on refreshed_at, and their
    # random suffixes decided which was the newer
    made = iter(range(1, 100))
    monkeypatch.setattr(_store, "new_name",
                        lambda now=None: f"refreshed-20261201T0000{next(made):02d}Z-abcdef")
    base = _paths.catalogs_dir()
    installer.install(*small, {"name": "mine1", "clouds": {}}, name="mine1", activate=False)
    mine = ["mine2", "mine3", "mine4", "backup-2025", "refreshed-by-hand"]
    for name in mine:  # the last: named like a refresh's, but a copy of the packaged one
        _user_copy(name)
    use_catalog("mine1")
    first = _refresh()
    # a copy of a refreshed catalog (refreshed_at and all) is still the user's
    _user_copy("backup-of-refresh", of=first.path)
    user = ["mine1", *mine, "backup-of-refresh"]
    assert set(user) <= set(_listed()), _listed()  # mine2, backup-2025 … went here
    assert first.removed_catalogs == ()
    # four older refreshes' catalogs (an older gpuplan's, say): three go at the next refresh
    old = [f"refreshed-2025010{i}T000000Z-00000{i}" for i in range(1, 5)]
    for i, name in enumerate(old, 1):
        installer.install(*small, {"name": "refreshed", "clouds": {},
                                   "refreshed_at": f"2025-01-0{i}T00:00:00+00:00"},
                          name=name, activate=False)
    second = _refresh()
    assert second.removed_catalogs == tuple(reversed(old[:3]))  # newest first, as listed
    assert second.to_dict()["removed_catalogs"] == list(reversed(old[:3]))
    assert set(user) <= set(_listed())
    kept = {c.name for c in _store.stored_catalogs() if _store.made_by_refresh(c)}
    assert kept == {first.name, second.name, old[3]}
    third = _refresh()  # the third refresh removed every mine* before
    assert third.removed_catalogs == (old[3],)
    fourth = _refresh()  # the first refresh's: neither active nor previous now
    assert fourth.removed_catalogs == (first.name,)
    assert set(user) <= set(_listed()), _listed()
    # nothing left of the work either (the write check's probe included)
    assert not [p for p in base.iterdir() if p.name.startswith((".trash-", ".tmp-"))]


@pytest.mark.parametrize("store", ["missing", "present"])
def test_a_read_only_store_fails_before_any_source_is_called(monkeypatch, read_only_filesystem,
                                                            store):
    base = _paths.catalogs_dir()
    if store == "present":
        base.mkdir(parents=True)
    real_mkdir = os.mkdir

    def refuse(path, *args, **kwargs):  # mkdir on a read-only mount
        if str(path).startswith(str(_paths.user_data_dir())):
            raise OSError(errno.EROFS, "Read-only file system", str(path))
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", refuse)
    source = OneRegionAws()
    said = "cannot create it" if store == "missing" else "cannot create files in it"
    with pytest.raises(CatalogFileError, match=rf"catalog store {base}: {said} \(read-only file "
                       r"system\)\. To fix: set GPUPLAN_HOME to a folder on a writable file "
                       "system"):
        _refresh(source)
    assert source.calls == 0  # nothing downloaded (an AWS refresh: ~300 MB, up to 30 minutes)


def test_a_failed_refresh_sweeps_stale_work_folders_and_keeps_live_ones():
    base = _paths.catalogs_dir()
    base.mkdir(parents=True)
    stale, live = base / ".tmp-refreshed-x", base / ".tmp-refreshed-live"
    for folder in (stale, live):
        folder.mkdir()
        (folder / "offers.csv").write_text("half")
    two_days_ago = time.time() - 2 * 86400
    os.utime(stale, (two_days_ago, two_days_ago))
    with pytest.raises(RefreshError, match="no cloud could be refreshed"):
        _refresh(Offline())
    assert not stale.exists()
    assert live.exists()  # another refresh may be writing it right now


def _with_a_nan_price(folder):
    rows = list(csv.reader((folder / "offers.csv").open(newline="")))
    rows[1][rows[0].index("usd_per_hour")] = "nan"
    with (folder / "offers.csv").open("w", newline="") as handle:
        csv.writer(handle).writerows(rows)


def test_recovery_passes_over_a_complete_catalog_that_does_not_load(small, loader_check):
    installer.install(*small, {"name": "refreshed", "clouds": {},
                               "refreshed_at": "2026-01-01T00:00:00+00:00"},
                      name="refreshed-good", activate=False)
    installer.install(*small, {"name": "nan", "clouds": {}}, name="nan", activate=False)
    _with_a_nan_price(_paths.catalogs_dir() / "nan")
    assert _store.is_complete(_paths.catalogs_dir() / "nan")  # complete, but refused
    _paths.active_marker().write_text("zzz\n")
    _paths.previous_marker().write_text("nan\n")
    _fresh_process()
    with pytest.warns(CatalogNotice, match=r"'zzz' is missing or incomplete; using "
                      r"'refreshed-good' instead \(it is now the active catalog; passed over "
                      r"'nan', which cannot be loaded\)"):
        assert load_catalog().name == "refreshed-good"
    assert _paths.active_marker().read_text().strip() == "refreshed-good"
    _fresh_process()
    assert load_catalog().name == "refreshed-good"  # and every command after it works


def test_recovery_with_no_catalog_that_loads_falls_back_to_the_packaged_one(small,
                                                                            loader_check):
    installer.install(*small, {"name": "nan", "clouds": {}}, name="nan", activate=False)
    _with_a_nan_price(_paths.catalogs_dir() / "nan")
    _paths.active_marker().write_text("zzz\n")
    _paths.previous_marker().write_text("nan\n")
    _fresh_process()
    with pytest.warns(CatalogNotice, match="using 'packaged' instead"):
        assert load_catalog().name == "packaged"
    _fresh_process()
    assert load_catalog().name == "packaged"


def test_the_normal_start_does_not_run_the_loaders_check(small, monkeypatch):
    installer.install(*small, {"name": "refreshed", "clouds": {}}, name="refreshed-a")

    def never(path, name):
        raise AssertionError("the check ran outside recovery")

    monkeypatch.setattr(_store, "_load_check", never)
    assert _store.active()[0] == "refreshed-a"


def test_recovery_checks_with_the_loader():
    """The loader hands recovery its own check (the store cannot import it)."""
    from catalog import _load

    assert _store._load_check is _load.read_catalog_dir
