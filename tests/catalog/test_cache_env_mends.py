"""Five mends to the per-user folders and the environment variables that move or change them
(fault sweep 2026-12-06), each a regression test named after the bug it pins:

1. a shared GPUPLAN_CACHE_DIR (used as given) lost files gpuplan never wrote: any stale
   `.tmp-*` was swept and any `eval-*` pruned to the budget (`eval-results.csv`, 300 MB);
2. a catalogs/ folder this user may not enter silently meant the packaged prices (lexists is
   False on EACCES), and `catalog use` then said to "give the path of a file";
3. GPUPLAN_NO_CACHE=false, =no, =off and =maybe all turned the cache off;
4. GPUPLAN_HOME=' ' was "a relative path", '$HOME/x' got cwd/$HOME/x as its fix, and bytes
   that are not UTF-8 were "a control character";
5. GPUPLAN_TODAY took any year 0001-9999 (team dates are limited to 2000-2200), and the
   catalog's age was printed without the thousands separator other commands use.
"""

from __future__ import annotations

import datetime as dt
import errno
import os
import warnings

import pytest

from catalog import (
    CatalogError,
    CatalogNotice,
    GpuplanError,
    _blobs,
    _cache,
    _load,
    _paths,
    _store,
    load_catalog,
)
from catalog import _install as installer
from catalog._today import today_utc
from planner.cli import main

OLD = 1_000_000_000.0  # 2001: far beyond the hour a temp file must be stale for


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. only gpuplan's own names are swept or pruned -----------------------------------------

@pytest.fixture
def shared(tmp_path, monkeypatch):
    folder = tmp_path / "shared"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(folder))
    monkeypatch.setattr(_cache, "_SWEPT", set())
    return folder


def _old_file(path, size: int = 1) -> None:
    path.write_bytes(b"x" * size)
    os.utime(path, (OLD, OLD))


def test_a_shared_cache_folder_keeps_the_files_of_other_programs(shared):
    theirs = [shared / ".tmp-otherapp-session", shared / "sweeptest-results.csv",
              shared / "sweeptest-0123456789abcdef0123.bin.bak", shared / ".tmp-1-0123abcd.x",
              shared / "catalog-notes.txt"]
    for path in theirs:
        _old_file(path, 8192)
    ours = shared / ".tmp-4242-0123abcd"
    _old_file(ours)
    # a budget the foreign files alone exceed: the prune once removed them, oldest first
    _blobs.write_cached("sweeptest", "ab" * 16, b"k" * 32, ("value",), budget_bytes=4096)
    assert (shared / f"sweeptest-{'ab' * 16}.bin").is_file()
    assert all(p.exists() for p in theirs), [p.name for p in theirs if not p.exists()]
    assert not ours.exists()  # a killed writer's temp file is still swept


def test_the_cache_sweeps_exactly_the_temp_names_its_writer_makes(shared, monkeypatch):
    made = []

    def refuse(src, dst):
        made.append(os.path.basename(src))
        raise OSError(errno.EIO, "simulated")

    monkeypatch.setattr(_cache.os, "replace", refuse)
    _cache._write_atomic(shared / "catalog-0123456789abcdef01234567.bin", b"data")
    assert made and _cache.is_temp(made[0])
    for name in (".tmp-otherapp-session", ".tmp-12-0123abc", ".tmp-12-0123abcde",
                 ".tmp--0123abcd", ".tmp-x-0123abcd", ".tmp-12-0123ABCD", ".tmp-12-0123abcd\n"):
        assert not _cache.is_temp(name), name


# -- 2. a catalogs/ folder this user may not enter -----------------------------------------------

def _small_catalog():
    cat = load_catalog("packaged")
    keep = {"p5.48xlarge", "g5.xlarge"}
    types = tuple(t for t in cat.instance_types if t.cloud == "aws" and t.name in keep)
    offers = tuple(o for o in cat.offers if o.cloud == "aws" and o.instance_type in keep
                   and o.region == "us-east-1")
    return cat.accelerators, types, offers


def _deny_entries_of(folder, monkeypatch):
    """What a folder without search permission does to this user (tests run as root, which
    chmod cannot stop): every entry's stat and the listing fail with EACCES."""
    inside = str(folder)

    def denied(path) -> bool:
        text = os.path.abspath(os.fspath(path))
        return text == inside or text.startswith(inside + os.sep)

    for name in ("stat", "lstat", "listdir", "scandir"):
        real = getattr(os, name)

        def guard(path=".", *args, _real=real, _name=name, **kwargs):
            if denied(path) and (_name in ("listdir", "scandir") or os.fspath(path) != inside):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return _real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, guard)


def test_an_unreadable_catalogs_folder_is_said_not_silently_packaged(monkeypatch):
    meta = {"name": "refreshed", "refreshed_at": "2026-01-01T00:00:00+00:00",
            "source": "test", "clouds": {}}
    installer.install(*_small_catalog(), meta, name="refreshed-a")
    assert _store.active()[0] == "refreshed-a"
    folder = _paths.catalogs_dir()
    _deny_entries_of(folder, monkeypatch)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        name, _ = _store.active()
    notes = [str(w.message) for w in caught if issubclass(w.category, CatalogNotice)]
    assert name == "packaged" and len(notes) == 1, notes
    assert "permission denied" in notes[0] and f"chmod u+rwx {folder}" in notes[0]
    with pytest.raises(CatalogError) as info:
        _store.switch("packaged")
    text = str(info.value)
    assert f"chmod u+rwx {folder}" in text and "give the path of a file" not in text


def test_no_catalogs_folder_at_all_is_still_the_packaged_snapshot_without_a_note():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _store.active()[0] == "packaged"


# -- 3. GPUPLAN_NO_CACHE ----------------------------------------------------------------------

@pytest.mark.parametrize(("value", "on"), [("", True), ("0", True), ("false", True),
                                           ("No", True), (" OFF ", True), ("1", False),
                                           ("true", False), ("YES", False), ("on", False)])
def test_gpuplan_no_cache_means_what_it_says(monkeypatch, value, on):
    monkeypatch.setenv("GPUPLAN_NO_CACHE", value)
    assert _cache.enabled() is on


def test_a_gpuplan_no_cache_that_is_neither_is_one_clear_error(monkeypatch, capsys):
    monkeypatch.setenv("GPUPLAN_NO_CACHE", "maybe")
    with pytest.raises(GpuplanError, match="GPUPLAN_NO_CACHE='maybe'.*To fix: .*1, true, yes "
                                           "or on.*0, false, no or off"):
        _cache.enabled()
    _load._cached.cache_clear()  # as a new process: the catalog is read again
    _load._with_overrides.cache_clear()
    code, _, err = run(capsys, "catalog", "info")
    assert code == 2 and "GPUPLAN_NO_CACHE='maybe'" in err and "To fix" in err


# -- 4. the folders' variables: what is wrong with them --------------------------------------

@pytest.mark.parametrize("variable", ["GPUPLAN_HOME", "GPUPLAN_CACHE_DIR"])
def test_a_folder_variable_says_blank_unexpanded_or_undecodable(variable, monkeypatch,
                                                                  tmp_path):
    read = _paths.user_data_dir if variable == "GPUPLAN_HOME" else _cache.cache_dir
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "/home/someone")
    for value, says, fix in (
            ("  ", "is blank", f"{variable} to an absolute path, or unset it"),
            ("$HOME/.cache/x", "starts with '$', which the shell did not expand",
             f"{variable}=/home/someone/.cache/x"),
            ("$GPUPLAN_NO_SUCH_VAR/x", "which the shell did not expand",
             f"{variable} to the folder it means"),
            (os.fsdecode(b"/data/\xff\xfe"), "is not valid UTF-8",
             f"{variable} to an absolute path in UTF-8")):
        monkeypatch.setenv(variable, value)
        with pytest.raises(GpuplanError) as info:
            read()
        text = str(info.value)
        assert says in text and f"To fix: set {fix}" in text, text
        assert str(tmp_path) not in text and "control character" not in text
    assert "\\xff\\xfe" in text  # the bytes shown as they were


# -- 5. GPUPLAN_TODAY's years, and the catalog's age -----------------------------------------

@pytest.mark.parametrize("day", ["0001-01-01", "1999-12-31", "2201-01-01", "9999-12-31"])
def test_gpuplan_today_outside_the_team_years_is_refused(monkeypatch, day):
    monkeypatch.setenv("GPUPLAN_TODAY", day)
    with pytest.raises(GpuplanError, match=f"GPUPLAN_TODAY='{day}' is outside the years "
                                           "2000–2200. To fix: "):
        today_utc()


@pytest.mark.parametrize("day", ["2000-01-01", "2200-12-31"])
def test_gpuplan_today_inside_the_team_years_is_taken(monkeypatch, day):
    monkeypatch.setenv("GPUPLAN_TODAY", day)
    assert today_utc() == dt.date.fromisoformat(day)


def test_the_catalogs_age_has_the_thousands_separator():
    info = load_catalog("packaged").info(today=dt.date(2200, 12, 31), include_store=False)
    assert f"{info['age_days']:,} days old" in info["warning"] and info["age_days"] > 1000
