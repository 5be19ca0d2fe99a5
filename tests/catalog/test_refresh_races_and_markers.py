"""Two refreshes at once, and markers that cannot be written (fault-injection sweep, 2026-12):

1. of two concurrent refreshes, one pruned the other's catalog between that one's install and
   its switch: the slow one reported success for a catalog that was gone, and ``active`` named
   it. A refresh now holds the store's lock from its install to its prune.
2. ``switch`` wrote a marker naming a catalog removed meanwhile, and said nothing.
3. a marker that could not be written after the install (a full disk) left a complete catalog
   behind that no message named; a read-only ``active`` marker (in a writable folder) failed
   every refresh after its downloads, saying "choose another path"; a directory where a marker
   goes was found only after the downloads.
"""

from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import functools
import os
import shutil
import threading

import pytest
from fake_sources import OneRegionAws

import catalog
from catalog import CatalogError, _paths, _refresh, _store, active_catalog_name
from catalog import _install as installer
from planner.cli import main


def _refresh_aws(source=None):
    return _refresh.refresh_catalog(clouds=["aws"], regions=["us-east-1"],
                                    sources={"aws": source or OneRegionAws()})


def _active_marker() -> str | None:
    return _store._read_marker(_paths.active_marker())


# -- 1. two refreshes at once ----------------------------------------------------------------
def test_a_concurrent_refresh_never_prunes_a_catalog_before_it_is_active(monkeypatch, small):
    # three newer refreshes' catalogs: the slow refresh's own is past the newest KEEP at once
    for i in range(_store.KEEP):
        installer.install(*small, {"name": "refreshed", "clouds": {},
                                   "refreshed_at": (_dt.datetime.now(_dt.UTC) + _dt.timedelta(
                                       hours=1, minutes=i)).isoformat(timespec="seconds")},
                          name=f"refreshed-20990101T00000{i}Z-00000{i}", activate=False)
    other: dict = {}
    over, waiting = threading.Event(), threading.Event()

    def other_refresh():
        try:
            other["result"] = _refresh_aws()
        except BaseException as exc:  # noqa: BLE001 -- reported by the test
            other["error"] = exc
        finally:
            over.set()

    real_flock, real_activate = fcntl.flock, _refresh.activate_installed

    def flock(fd, operation):
        try:
            return real_flock(fd, operation)
        except BlockingIOError:
            waiting.set()  # the other refresh waits for this one's lock
            raise

    def activate_after_the_other_refresh(name):
        if threading.current_thread() is threading.main_thread():
            thread = threading.Thread(target=other_refresh, daemon=True)
            thread.start()  # the whole other refresh, in this one's window
            while not (over.wait(0.02) or waiting.is_set()):
                pass
        return real_activate(name)

    monkeypatch.setattr(fcntl, "flock", flock)
    monkeypatch.setattr(_refresh, "activate_installed", activate_after_the_other_refresh)
    slow = _refresh_aws()
    assert over.wait(120) and "error" not in other, other.get("error")
    assert _store.is_complete(slow.path), "the slow refresh reported a catalog that is gone"
    assert _store._catalog_path(_active_marker()) is not None
    assert slow.name in {c.name for c in _store.stored_catalogs()}


def test_a_switch_to_a_catalog_removed_meanwhile_says_so_and_leaves_active_alone(monkeypatch,
                                                                                small):
    name, path = installer.install(*small, {"name": "refreshed", "clouds": {},
                                            "refreshed_at": "2026-01-01T00:00:00+00:00"},
                                   name="refreshed-gone", activate=False)
    real = _store._write_marker

    def write_then_remove(marker, what):
        real(marker, what)
        if what == name:  # removed by hand just as the marker names it
            shutil.rmtree(path)

    monkeypatch.setattr(_store, "_write_marker", write_then_remove)
    with pytest.raises(CatalogError, match=r"^catalog 'refreshed-gone' was removed while it was "
                       r"being made active; the active catalog is unchanged\. To fix: "):
        _store.switch(name)
    assert _active_marker() == "packaged"


# -- 3. markers ------------------------------------------------------------------------------
@pytest.fixture
def cli_refresh(monkeypatch):
    """`gpuplan catalog refresh` with the fake AWS source."""
    monkeypatch.setattr(catalog, "refresh_catalog",
                        functools.partial(_refresh.refresh_catalog,
                                          sources={"aws": OneRegionAws()}))
    return ["catalog", "refresh", "--cloud", "aws", "--regions", "us-east-1"]


def test_a_full_disk_at_the_marker_names_the_catalog_it_saved(monkeypatch, capsys, cli_refresh):
    real_write = os.write

    def full_at_the_marker(fd, data):
        if os.path.basename(os.readlink(f"/proc/self/fd/{fd}")).startswith(".previous-active."):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    with monkeypatch.context() as m:
        m.setattr(os, "write", full_at_the_marker)
        code = main(cli_refresh)
    out, err = capsys.readouterr()
    saved = [c.name for c in _store.stored_catalogs()]
    assert code != 0 and len(saved) == 1 and active_catalog_name() == "packaged"
    line = " ".join(err.split())  # the terminal wraps it
    assert "cannot write it (disk full)" in line
    assert (f"the refreshed catalog {saved[0]} was saved but is not active (the active catalog "
            f"is unchanged). To fix: free space on that disk") in line
    assert (f"; once the marker can be written there, `gpuplan catalog use {saved[0]}` makes "
            "it active") in line
    assert "applied" not in err  # the note that the refresh was applied contradicted it
    assert main(["catalog", "use", saved[0]]) == 0  # what the message says works
    assert active_catalog_name() == saved[0]


def test_a_read_only_marker_in_a_writable_folder_is_replaced(monkeypatch, small):
    catalog.use_catalog("packaged")  # an active marker to make read-only
    marker = _paths.active_marker()
    os.chmod(marker, 0o444)
    real_access = os.access

    def access(path, mode, *args, **kwargs):  # as for a user who is not root
        if mode & os.W_OK and os.path.abspath(path) == str(marker):
            return False
        return real_access(path, mode, *args, **kwargs)

    monkeypatch.setattr(os, "access", access)
    result = _refresh_aws()
    assert _active_marker() == result.name == active_catalog_name()


@pytest.mark.filterwarnings("ignore::catalog.CatalogNotice")  # the unreadable marker, said
@pytest.mark.parametrize("which", ["previous-active", "active"])
def test_a_directory_where_a_marker_goes_fails_the_refresh_before_any_download(which):
    where = _paths.catalogs_dir() / which
    where.mkdir(parents=True)
    source = OneRegionAws()
    with pytest.raises(CatalogError, match=rf"catalog marker {where} is a directory; gpuplan "
                       rf"keeps a one-line file there\. To fix: remove it \(rmdir {where}\)"):
        _refresh_aws(source)
    assert source.fetches == 0
    assert not [c.name for c in _store.stored_catalogs()]
