"""The catalog store survives a crash at every filesystem step of a swap (issue #16).

A crash is simulated by killing the swap at its k-th filesystem call, for every k: from that
call on every filesystem call fails too (a dead process does nothing more, cleanup included).
Then, as a fresh process would, the catalog is loaded again: it must load, and be the old
catalog or the new one — never neither.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

from catalog import (
    CatalogError,
    CatalogNotice,
    UnknownNameError,
    _load,
    _paths,
    _store,
    _writes,
    load_catalog,
    use_catalog,
)
from catalog import _install as installer  # the crash guarantees: private, tested directly


class Killed(BaseException):
    """The process died here (a BaseException: no `except Exception` may swallow it)."""


class Killer:
    """Stands in for the ``os`` and ``shutil`` modules: counts the calls that touch the disk
    and dies at call number ``at``; after that, every such call dies too."""

    STEPS = {"mkdir", "makedirs", "rename", "replace", "open", "write", "fsync", "unlink",
             "rmdir", "fchmod", "rmtree"}

    def __init__(self, at: int | None) -> None:
        self.at, self.count, self.dead = at, 0, False

    def proxy(self, module):
        killer = self

        class Proxy:
            def __getattr__(self, name):
                attr = getattr(module, name)
                if name not in Killer.STEPS or not callable(attr):
                    return attr

                def step(*args, **kwargs):
                    if killer.dead:
                        raise Killed(name)
                    killer.count += 1
                    if killer.count == killer.at:
                        killer.dead = True
                        raise Killed(name)
                    if name == "fsync":
                        return None  # a step all the same; skipping the flush keeps it fast
                    return attr(*args, **kwargs)

                return step

        return Proxy()



def _meta(tag: str) -> dict:
    return {"name": "refreshed", "refreshed_at": f"2026-01-0{tag}T00:00:00+00:00",
            "source": f"test {tag}", "clouds": {}}


def _fresh_process():
    _load._cached.cache_clear()
    _load._with_overrides.cache_clear()


def _install(small, name, tag):
    return installer.install(*small, _meta(tag), name=name)


def _swap_with_kill(monkeypatch, small, at):
    killer = Killer(at)
    with monkeypatch.context() as m:
        m.setattr(_store, "os", killer.proxy(os))
        m.setattr(installer, "os", killer.proxy(os))
        m.setattr(_writes, "os", killer.proxy(os))
        m.setattr(_store, "shutil", killer.proxy(shutil))
        m.setattr(installer, "shutil", killer.proxy(shutil))
        try:
            _install(small, "refreshed-new", "3")
        except Killed:
            pass
    return killer


def test_a_swap_killed_at_any_filesystem_step_leaves_a_usable_catalog(monkeypatch, small,
                                                                      tmp_path):
    home = _paths.user_data_dir()
    _install(small, "refreshed-older", "0")
    _install(small, "refreshed-old", "1")
    template = tmp_path / "before"
    shutil.copytree(home, template)
    steps = _swap_with_kill(monkeypatch, small, at=None).count  # how many steps a swap takes
    assert steps >= 10
    for at in range(1, steps + 1):
        shutil.rmtree(home)
        shutil.copytree(template, home)
        killer = _swap_with_kill(monkeypatch, small, at)
        assert killer.dead, f"step {at} of {steps} was never reached"
        _fresh_process()
        cat = load_catalog()  # must not raise
        assert cat.name in ("refreshed-old", "refreshed-new"), (at, cat.name)
        assert cat.meta["source"] in ("test 1", "test 3")
        assert len(cat.offers) == len(small[2])
        if cat.name == "refreshed-old":  # the switch did not happen: the old one is intact,
            assert _store.is_complete(home / "catalogs" / "refreshed-old")
        names = [c.name for c in _store.stored_catalogs()]
        assert "refreshed-old" in names  # the previous catalog is never lost
        for name in names:  # every catalog listed is complete and can be selected
            assert load_catalog(name).name == name
        assert not [p for p in (home / "catalogs").iterdir()
                    if p.is_dir() and not p.name.startswith(".") and p.name not in names]


def test_the_swap_switches_with_the_marker_written_last(small):
    _install(small, "refreshed-a", "1")
    _install(small, "refreshed-b", "2")
    status = _store.status()
    assert status["active"] == "refreshed-b" and status["previous"] == "refreshed-a"
    assert load_catalog().name == "refreshed-b"
    assert load_catalog("previous").name == "refreshed-a"
    assert load_catalog("refreshed").name == "refreshed-b"  # the newest


def test_a_marker_naming_a_missing_catalog_is_recovered_at_the_next_start(small):
    _install(small, "refreshed-a", "1")
    _install(small, "refreshed-b", "2")
    shutil.rmtree(_paths.catalogs_dir() / "refreshed-b")  # the crash of an older gpuplan
    _fresh_process()
    with pytest.warns(CatalogNotice, match="'refreshed-b' is missing or incomplete; using "
                                           "'refreshed-a' instead .it is now the active"):
        assert load_catalog().name == "refreshed-a"  # previous-active
    assert _paths.active_marker().read_text().strip() == "refreshed-a"  # repaired
    shutil.rmtree(_paths.catalogs_dir() / "refreshed-a")
    _fresh_process()
    with pytest.warns(CatalogNotice, match="using 'packaged'"):
        assert load_catalog().name == "packaged"


@pytest.mark.parametrize("marker", [b"", b"\xff\xfe\x00garbage", b"../../etc", b"x" * 10_000,
                                    b"refreshed-nonexistent\n"])
def test_a_damaged_marker_falls_back_to_a_complete_catalog(small, marker):
    _install(small, "refreshed-a", "1")
    _paths.active_marker().write_bytes(marker)
    _fresh_process()
    with pytest.warns(CatalogNotice, match="using 'refreshed-a'"):
        assert load_catalog().name == "refreshed-a"


def test_an_incomplete_directory_is_never_pointed_at(small):
    _install(small, "refreshed-a", "1")
    broken = _paths.catalogs_dir() / "refreshed-z"
    broken.mkdir()
    (broken / "offers.csv").write_text("half")
    assert [c.name for c in _store.stored_catalogs()] == ["refreshed-a"]
    # there on disk, so not "unknown": what is wrong with it, and what to do
    with pytest.raises(CatalogError, match=r"catalog 'refreshed-z' is incomplete "
                       r"\(accelerators.csv is missing\). To fix: remove .*refreshed-z, or "
                       "run `gpuplan catalog use packaged`"):
        use_catalog("refreshed-z")
    with pytest.raises(UnknownNameError, match="unknown catalog 'refreshed-y'"):
        use_catalog("refreshed-y")


def test_catalog_use_selects_any_complete_catalog(small):
    _install(small, "refreshed-a", "1")
    _install(small, "refreshed-b", "2")
    assert use_catalog("refreshed-a").name == "refreshed-a"
    assert load_catalog().name == "refreshed-a"
    use_catalog("packaged")
    assert load_catalog().name == "packaged"
    use_catalog("previous")
    assert load_catalog().name == "refreshed-a"
    with pytest.raises(UnknownNameError, match="Did you mean 'refreshed-b'"):
        use_catalog("refreshed-bb")


def test_no_refreshed_catalog_says_how_to_make_one():
    with pytest.raises(CatalogError, match="no refreshed catalog. To fix: run `gpuplan catalog"):
        use_catalog("refreshed")
    with pytest.raises(CatalogError, match="no previous catalog"):
        use_catalog("previous")


def test_a_legacy_layout_still_loads(small):
    # gpuplan before the store: catalogs/refreshed/ and an "active" marker naming it
    _install(small, "refreshed-x", "1")
    base = _paths.catalogs_dir()
    os.rename(base / "refreshed-x", base / "refreshed")
    _paths.active_marker().write_text("refreshed\n")
    _paths.previous_marker().unlink(missing_ok=True)
    _fresh_process()
    assert load_catalog().name == "refreshed"
    assert load_catalog("refreshed").name == "refreshed"


def test_old_catalogs_beyond_the_kept_ones_are_removed_whole(small):
    for i in range(_store.KEEP + 3):
        _install(small, f"refreshed-{i:02d}", str(i % 10))
    names = [c.name for c in _store.stored_catalogs()]
    assert len(names) <= _store.KEEP + 2 and "refreshed-05" in names
    assert not [p for p in _paths.catalogs_dir().iterdir() if p.name.startswith(".trash")]
    with pytest.raises(CatalogError, match="in use"):
        _store.remove("refreshed-05")


def test_stale_work_directories_are_cleaned_and_never_listed(small):
    base = _paths.catalogs_dir()
    base.mkdir(parents=True)
    stale = base / ".tmp-refreshed-dead"
    stale.mkdir()
    (stale / "meta.json").write_text(json.dumps({}))
    os.utime(stale, (0, 0))
    _install(small, "refreshed-a", "1")
    assert not stale.exists()
    assert [c.name for c in _store.stored_catalogs()] == ["refreshed-a"]


def test_a_home_that_is_a_file_is_one_clear_error(tmp_path, monkeypatch):
    # GPUPLAN_HOME pointing at a file was a NotADirectoryError traceback from mkdir
    blocker = tmp_path / "home.yaml"
    blocker.write_text("x\n")
    monkeypatch.setenv("GPUPLAN_HOME", str(blocker))
    with pytest.raises(CatalogError, match=rf"{blocker} is a file, not a directory\. To fix: "
                                           "move it away, or point GPUPLAN_HOME"):
        use_catalog("packaged")
    assert blocker.read_text() == "x\n"


def test_a_marker_that_is_a_directory_says_to_remove_it(small):
    _paths.active_marker().mkdir(parents=True)
    with pytest.raises(CatalogError, match=r"is a directory; gpuplan keeps a one-line file "
                                           r"there\. To fix: remove it \(rmdir "):
        use_catalog("packaged")
    with pytest.warns(CatalogNotice, match="could not be read; using 'packaged' instead .the "
                                           "marker could not be rewritten"):
        assert load_catalog().name == "packaged"  # loading still works around it


def test_a_home_that_is_a_dangling_symlink_says_so(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.symlink_to(tmp_path / "nowhere")
    monkeypatch.setenv("GPUPLAN_HOME", str(home))
    with pytest.raises(CatalogError, match="is a symbolic link to a missing place or to itself"):
        use_catalog("packaged")


def test_the_probe_database_under_a_home_that_is_a_file_is_one_clear_error(tmp_path,
                                                                           monkeypatch):
    from planner.store import ingest  # the probe store creates its folder the same way

    blocker = tmp_path / "home"
    blocker.write_text("x\n")
    monkeypatch.setenv("GPUPLAN_HOME", str(blocker))
    report = tmp_path / "r.json"
    fixture = Path(__file__).parents[1] / "probes/fixtures/hostile/cpu_quick_report.json"
    report.write_bytes(fixture.read_bytes())
    with pytest.raises(CatalogError, match=rf"{blocker} is a file, not a directory"):
        ingest(report, load_catalog())


# ---- hostile store contents (a fuzz of the catalog commands found each of these) ----------

def test_a_deeply_nested_meta_in_a_stray_directory_is_skipped_not_a_traceback(small):
    _install(small, "refreshed-a", "1")
    junk = _paths.catalogs_dir() / "junk"
    shutil.copytree(_paths.catalogs_dir() / "refreshed-a", junk)
    (junk / "meta.json").write_text("[" * 1000 + "]" * 1000)  # RecursionError in json
    _fresh_process()
    assert [c.name for c in _store.stored_catalogs()] == ["refreshed-a"]
    assert load_catalog().name == "refreshed-a"
    with pytest.raises(CatalogError, match=r"catalog 'junk' is incomplete \(meta.json: nesting "
                       "deeper than 16 levels"):
        use_catalog("junk")


@pytest.mark.parametrize("clouds", [[1, 2], "abc", {"aws": [1]},
                                    {"aws": {"sources": "abc"}},
                                    {"aws": {"sources": [{"x": 1}]}}])
def test_a_meta_of_the_wrong_shape_is_one_catalog_error(small, clouds):
    _, path = _install(small, "refreshed-a", "1")
    meta = json.loads((path / "meta.json").read_text())
    meta["clouds"] = clouds
    (path / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(CatalogError, match="meta.json: clouds.*To fix"):
        _load.read_catalog_dir(path, "refreshed-a")
    _fresh_process()
    with pytest.warns(CatalogNotice, match="'refreshed-a' is missing or incomplete"):
        assert load_catalog().name == "packaged"  # not complete: never pointed at


@pytest.mark.parametrize("marker", ["active", "previous-active"])
def test_a_marker_that_is_a_named_pipe_does_not_hang(small, marker):
    from time_limit import time_limit

    _install(small, "refreshed-a", "1")
    _install(small, "refreshed-b", "2")
    path = _paths.catalogs_dir() / marker
    path.unlink()
    os.mkfifo(path)
    _fresh_process()
    with time_limit(20, f"a FIFO as {marker}"):
        with (pytest.warns(CatalogNotice, match="could not be read") if marker == "active"
              else contextlib.nullcontext()):
            load_catalog()
            _store.status()
        # switching writes both markers: the error says what to remove
        with pytest.raises(CatalogError, match=r"is a named pipe.*To fix: remove it"):
            use_catalog("packaged")


def test_use_previous_after_the_first_refresh_goes_back_to_packaged(small):
    # the refresh output promises `gpuplan catalog use previous` switches back; with no
    # marker before it (packaged implicitly active) there used to be no previous catalog
    _install(small, "refreshed-a", "1")
    assert use_catalog("previous") == _paths.packaged_catalog_dir()
    _fresh_process()
    assert load_catalog().name == "packaged"


def test_use_refuses_a_catalog_that_cannot_be_loaded_and_keeps_the_active_one(small):
    _install(small, "refreshed-a", "1")
    _, broken = _install(small, "refreshed-b", "2")
    use_catalog("refreshed-a")
    offers = broken / "offers.csv"
    lines = offers.read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    row[head.index("usd_per_hour")] = "-1"
    offers.write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")
    with pytest.raises(CatalogError, match="cannot be used.*unchanged"):
        use_catalog("refreshed-b")
    _fresh_process()
    assert load_catalog().name == "refreshed-a"


def test_a_catalog_name_use_cannot_take_is_not_listed(small):
    # a 115-character directory was listed by `catalog info` but refused by `catalog use`
    _install(small, "refreshed-a", "1")
    shutil.copytree(_paths.catalogs_dir() / "refreshed-a", _paths.catalogs_dir() / ("x" * 115))
    assert [c.name for c in _store.stored_catalogs()] == ["refreshed-a"]


# -- the folders' environment variables (fault sweep 2026-12-06) -----------------------------
@pytest.mark.parametrize("variable", ["GPUPLAN_HOME", "GPUPLAN_CACHE_DIR"])
def test_a_folder_variable_that_names_no_folder_is_one_clear_error(variable, monkeypatch,
                                                                    tmp_path):
    """`GPUPLAN_HOME='~nosuchuser/x'` was a RuntimeError traceback in every command; a
    relative one followed the working directory (reports ingested in one folder were "no
    probe reports" from another); an escape sequence in it reached the terminal raw."""
    from catalog import GpuplanError, _cache, _paths

    read = _paths.user_data_dir if variable == "GPUPLAN_HOME" else _cache.cache_dir
    monkeypatch.chdir(tmp_path)
    for value, says in (("~nosuchuser-gpuplan/x", "names the home of user 'nosuchuser-gpuplan'"),
                        ("relhome", "is a relative path"),
                        ("esc\x1b[31mhome", "has a control character")):
        monkeypatch.setenv(variable, value)
        with pytest.raises(GpuplanError) as info:
            read()
        text = str(info.value)
        assert text.startswith(f"{variable} ") and says in text and "To fix: set " in text
        assert "\x1b" not in text and "\n" not in text
    monkeypatch.setenv(variable, "relhome")
    with pytest.raises(GpuplanError, match=f"To fix: set {variable}={tmp_path}/relhome"):
        read()  # the fix names the folder the relative path means here


def test_no_home_folder_at_all_is_one_clear_error(monkeypatch):
    """HOME unset under a user id with no passwd entry (a container): Path.home() raised
    RuntimeError, a traceback in every command."""
    from pathlib import Path

    from catalog import GpuplanError, _cache, _paths

    for variable in ("GPUPLAN_HOME", "GPUPLAN_CACHE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)

    def no_home():
        raise RuntimeError("Could not determine home directory.")

    monkeypatch.setattr(Path, "home", staticmethod(no_home))
    for read in (_paths.user_data_dir, _cache.cache_dir):
        with pytest.raises(GpuplanError, match="cannot tell the home folder.*To fix: set "
                                               "GPUPLAN_HOME"):
            read()


def test_a_relative_home_is_one_clear_error(monkeypatch, tmp_path):
    """HOME=relhome with no GPUPLAN_HOME wrote ./relhome/.cache/gpuplan: the working-directory
    dependence refused for GPUPLAN_HOME, by the default path."""
    from catalog import GpuplanError, _cache, _paths

    for variable in ("GPUPLAN_HOME", "GPUPLAN_CACHE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "relhome")
    for read in (_paths.user_data_dir, _cache.cache_dir):
        with pytest.raises(GpuplanError, match=f"HOME 'relhome' is not an absolute path.*To fix: "
                                               f"set HOME={tmp_path}/relhome"):
            read()


@pytest.mark.parametrize(("home", "says"), [("", "HOME is empty"),
                                            ("~nosuchuser-gpuplan", "is not an absolute path")])
def test_an_empty_or_unexpanded_home_is_one_clear_error(monkeypatch, home, says):
    """HOME='' put the data folder at /.local/share/gpuplan; HOME='~nosuchuser' was said to
    be "not set" (review 2026-12-06)."""
    from catalog import GpuplanError, _cache, _paths

    for variable in ("GPUPLAN_HOME", "GPUPLAN_CACHE_DIR", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("HOME", home)
    for read in (_paths.user_data_dir, _cache.cache_dir):
        with pytest.raises(GpuplanError, match=f"{says}.*To fix: set "):
            read()
