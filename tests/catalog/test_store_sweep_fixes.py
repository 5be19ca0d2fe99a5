"""The stored-catalog commands' answers to a damaged or odd store (a report-only sweep, 2026-12).

- a GPUPLAN_HOME (or ``catalogs``) that is a file is said, not silently the packaged snapshot;
- a ``catalogs/`` folder this user may not read is said by `catalog use`, not "unknown catalog";
- folders named as a keyword (packaged, previous, refreshed) are not listed as selectable;
- ``refreshed_at`` must be a UTC time, not in the future (it orders the catalogs);
- a wait for the store's lock is said after a moment, not five silent minutes;
- a pruned catalog that is a symbolic link goes with its link alone, its target untouched.
"""

from __future__ import annotations

import datetime as dt
import errno
import fcntl
import os
import time
import warnings
from pathlib import Path

import pytest

from catalog import CatalogError, CatalogFileError, CatalogNotice, _paths, _store, _store_prune
from catalog import _install as installer
from catalog._meta import check_meta
from planner.cli import main


def _meta(when: str = "2026-01-01T00:00:00+00:00") -> dict:
    return {"name": "refreshed", "refreshed_at": when, "source": "test", "clouds": {}}


def _notes(call) -> tuple[object, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = call()
    return got, [str(w.message) for w in caught if issubclass(w.category, CatalogNotice)]


# -- 4. a GPUPLAN_HOME that is a file -------------------------------------------------------

def test_a_gpuplan_home_that_is_a_file_is_said_not_silently_packaged(monkeypatch, tmp_path):
    home = tmp_path / "home-file"
    home.write_text("not a folder\n")
    monkeypatch.setenv("GPUPLAN_HOME", str(home))
    (name, _), notes = _notes(_store.active)
    assert name == "packaged" and len(notes) == 1, notes
    assert f"{home} is not a folder" in notes[0] and "To fix:" in notes[0], notes[0]
    assert f"move {home} out of the way" in notes[0]


def test_a_catalogs_link_to_a_file_is_said_and_catalog_info_says_it(monkeypatch, capsys,
                                                                    tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "a-file").write_text("x\n")
    (home / "catalogs").symlink_to(tmp_path / "a-file")
    monkeypatch.setenv("GPUPLAN_HOME", str(home))
    (name, _), notes = _notes(_store.active)
    assert name == "packaged" and len(notes) == 1, notes
    assert f"{home / 'catalogs'} is not a folder" in notes[0] and "To fix:" in notes[0]
    capsys.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        assert main(["catalog", "info"]) == 0
    assert "is not a folder" in capsys.readouterr().err


# -- 5. a catalogs/ folder this user may not read -------------------------------------------

def _deny(monkeypatch, folder: Path) -> None:
    """As a mode-000 folder reads to a user who is not root (the tests may run as root)."""
    inside = os.path.abspath(folder)

    def guard(real, listing: bool):
        def call(path=".", *args, **kwargs):
            text = os.path.abspath(os.fspath(path))
            if text == inside and listing or text.startswith(inside + os.sep):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return real(path, *args, **kwargs)
        return call

    for name in ("stat", "lstat", "listdir", "scandir"):
        monkeypatch.setattr(os, name, guard(getattr(os, name), name in ("listdir", "scandir")))


@pytest.mark.parametrize("name", ["mine", "previous", "refreshed"])
def test_use_with_an_unreadable_store_says_permission_denied(monkeypatch, small, name):
    installer.install(*small, _meta(), name="refreshed-a")
    installer.install(*small, _meta("2026-01-02T00:00:00+00:00"), name="refreshed-b")
    folder = _paths.catalogs_dir()
    _deny(monkeypatch, folder)
    with pytest.raises(CatalogError) as info:
        _store.resolve(name)
    text = str(info.value)
    assert "permission denied" in text and f"chmod u+rwx {folder}" in text, text
    assert "unknown catalog" not in text and "no previous" not in text and \
        "no refreshed" not in text


def test_use_names_still_resolve_in_a_readable_store(small):
    installer.install(*small, _meta(), name="refreshed-a")
    installer.install(*small, _meta("2026-01-02T00:00:00+00:00"), name="refreshed-b")
    assert _store.resolve("refreshed")[0] == "refreshed-b"
    assert _store.resolve("previous")[0] == "refreshed-a"
    with pytest.raises(CatalogError, match="unknown catalog"):
        _store.resolve("mine")


# -- 6. folders named as keywords -----------------------------------------------------------

def test_folders_named_as_keywords_are_not_listed_as_selectable(small):
    installer.install(*small, _meta(), name="refreshed-a", activate=False)
    base = _paths.catalogs_dir()
    for i, name in enumerate(("packaged", "previous", "refreshed")):
        installer.install(*small, _meta(f"2026-01-0{i + 2}T00:00:00+00:00"), name=f"copy-{i}",
                          activate=False)
        os.rename(base / f"copy-{i}", base / name)
    status = _store.status()
    assert status["active"] == "packaged"
    assert [c["name"] for c in status["stored"]] == ["refreshed-a"], status["stored"]
    assert not any(c["active"] for c in status["stored"])
    names = _store.known_names()
    assert len(names) == len(set(names)), names


# -- 7. refreshed_at ------------------------------------------------------------------------

@pytest.mark.parametrize("when", ["garbage", "2099-01-01T00:00:00Z", "2026-01-01",
                                  "2026-01-01T00:00:00+02:00", "2026-01-01T00:00:00"])
def test_a_refreshed_at_that_is_no_past_utc_time_is_one_clear_error(when):
    with pytest.raises(CatalogFileError) as info:
        check_meta(_meta(when), Path("x/meta.json"))
    text = str(info.value)
    assert "refreshed_at" in text and "To fix:" in text and "\n" not in text, text


def test_a_refresh_s_own_times_pass():
    now = dt.datetime.now(dt.UTC)
    for when in (now.isoformat(timespec="seconds"), "2026-01-21T10:15:00Z",
                 (now + dt.timedelta(hours=23)).isoformat(timespec="seconds"),
                 "2026-01-21T10:15:00.250+00:00"):
        check_meta(_meta(when), Path("x/meta.json"))


def test_a_catalog_dated_2099_is_not_the_newest(small):
    installer.install(*small, _meta(), name="refreshed-a")
    installer.install(*small, _meta("2026-01-02T00:00:00+00:00"), name="refreshed-b",
                      activate=False)
    meta = _paths.catalogs_dir() / "refreshed-b" / "meta.json"
    meta.write_text(meta.read_text().replace("2026-01-02T00:00:00+00:00",
                                             "2099-01-01T00:00:00+00:00"))
    assert [c.name for c in _store.stored_catalogs()] == ["refreshed-a"]
    assert _store.resolve("refreshed")[0] == "refreshed-a"
    with pytest.raises(CatalogError, match="refreshed_at"):
        _store.resolve("refreshed-b")


# -- 10. waiting for the store's lock -------------------------------------------------------

def test_a_wait_for_the_store_lock_is_said_once(monkeypatch, capsys):
    base = _paths.catalogs_dir()
    base.mkdir(parents=True)
    monkeypatch.setattr(_store_prune, "LOCK_NOTE_AFTER_S", 0.05, raising=False)
    monkeypatch.setattr(_store_prune, "LOCK_WAIT_S", 0.4)
    holder = os.open(base, os.O_RDONLY)
    try:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another open file: as another process
        start = time.monotonic()
        with pytest.raises(CatalogError, match="another gpuplan command"), \
                _store_prune.store_lock(base):
            pass
        assert time.monotonic() - start < 5
    finally:
        os.close(holder)
    err = capsys.readouterr().err
    assert err.count("note: waiting for another gpuplan command that is changing the "
                     "catalog store") == 1, err
    if Path("/proc/locks").is_file():
        assert f"(pid {os.getpid()}?)" in err, err


def test_a_free_store_lock_says_nothing(capsys):
    base = _paths.catalogs_dir()
    base.mkdir(parents=True)
    with _store_prune.store_lock(base):
        pass
    assert capsys.readouterr().err == ""


# -- 11. a pruned catalog that is a symbolic link -------------------------------------------

def test_discarding_a_linked_catalog_removes_the_link_alone(small, tmp_path):
    installer.install(*small, _meta(), name="refreshed-target", activate=False)
    base = _paths.catalogs_dir()
    target = tmp_path / "elsewhere"
    os.rename(base / "refreshed-target", target)
    link = base / "refreshed-20260101T000000Z-aaaaaa"
    link.symlink_to(target, target_is_directory=True)
    before = sorted(p.name for p in target.iterdir())
    _store._discard(link)
    assert not os.path.lexists(link)
    assert not [p for p in base.iterdir() if p.name.startswith(".trash-")]
    assert sorted(p.name for p in target.iterdir()) == before and before


def test_a_stale_trash_link_is_swept_without_following_it(tmp_path):
    base = _paths.catalogs_dir()
    base.mkdir(parents=True)
    target = tmp_path / "kept"
    target.mkdir()
    (target / "file").write_text("keep me\n")
    link = base / ".trash-refreshed-x-000000"
    link.symlink_to(target, target_is_directory=True)
    old = time.time() - 10 * 86400
    os.utime(link, (old, old), follow_symlinks=False)
    _store_prune.clean_stale_work(base)
    assert not os.path.lexists(link)
    assert (target / "file").read_text() == "keep me\n"
