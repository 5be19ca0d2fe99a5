"""The small-results store of the per-user cache (``catalog.read_cached``/``write_cached``):
plain data only, the right key only, within a size budget, oldest removed first."""

from __future__ import annotations

import os

import pytest


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _entries(cache):
    return sorted(cache.glob("eval-*.bin"))


def test_a_forged_entry_is_not_unpickled(cache):
    """An entry whose payload names a global (what could run code) is a miss."""
    from fractions import Fraction

    from catalog import read_cached, write_cached

    key = bytes(32)
    write_cached("eval", "ab" * 16, key, Fraction(1, 3), budget_bytes=2**20)
    assert (cache / f"eval-{'ab' * 16}.bin").exists()
    assert read_cached("eval", "ab" * 16, key) is None
    write_cached("eval", "cd" * 16, key, ("plain", 1.5, b"x"), budget_bytes=2**20)
    assert read_cached("eval", "cd" * 16, key) == ("plain", 1.5, b"x")
    assert read_cached("eval", "cd" * 16, bytes([1]) * 32) is None  # another key


def test_the_budget_removes_the_oldest_entries(cache):
    from catalog import _blobs, read_cached, write_cached

    _blobs._WRITTEN.clear()
    key = bytes(32)
    names = [f"{i:032x}" for i in range(6)]
    for age, name in enumerate(names):
        write_cached("eval", name, key, b"x" * 10_000, budget_bytes=50_000)
        os.utime(cache / f"eval-{name}.bin", (1000 + age, 1000 + age))
    _blobs._WRITTEN.clear()  # the next write prunes
    write_cached("eval", "f" * 32, key, b"y" * 10_000, budget_bytes=50_000)
    left = {p.name[5:-4] for p in _entries(cache)}
    assert "f" * 32 in left and names[-1] in left and names[0] not in left
    assert sum(p.stat().st_size for p in _entries(cache)) <= 50_000
    assert read_cached("eval", "f" * 32, key) == b"y" * 10_000
    with pytest.raises(ValueError):
        read_cached("eval", "../x", key)


def test_a_killed_writers_temporary_file_is_removed_once_stale(cache):
    """A writer killed between writing and renaming leaves ``.tmp-…``: pruning removes it an
    hour on (a younger one may be another process's write in progress)."""
    from catalog import _blobs, write_cached

    cache.mkdir(mode=0o700, parents=True)
    stale, fresh = cache / ".tmp-123-deadbeef", cache / ".tmp-456-cafef00d"
    for tmp in (stale, fresh):
        tmp.write_bytes(b"half an entry")
    os.utime(stale, (1000, 1000))
    _blobs._WRITTEN.clear()  # this write prunes
    write_cached("eval", "ab" * 16, bytes(32), b"x", budget_bytes=2**20)
    assert not stale.exists() and fresh.exists()
