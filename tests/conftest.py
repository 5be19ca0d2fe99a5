"""Shared fixtures. Every test runs with GPUPLAN_HOME in a temporary folder, so nothing reads or
writes the real user data directory, with cloud metadata look-ups disabled and with today's
date pinned (``TODAY``).

The cache of parsed catalogs (``catalog._cache``) and of shape evaluations
(``planner.search._kept``) lives in one temporary folder for the whole session, never in the
user's cache: it is keyed by the catalog files' content and by the model's code and inputs, so
sharing it between tests changes no answer, only how often the packaged catalog is parsed and
the model run (tests of the caches themselves point it elsewhere)."""

from __future__ import annotations

import errno
import os

import pytest

TODAY = "2026-12-01"  # what every test counts as today's date (GPUPLAN_TODAY)


def pytest_configure(config):
    """Ctrl-C as a terminal delivers it, whoever started the suite: a background job of a
    non-interactive shell (`cmd &` in a script) starts with SIGINT ignored, which every process
    the tests start inherits, so the tests of interrupts saw no interrupt (8 failed so)."""
    import signal

    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def _catalog_cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("gpuplan-cache")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch, _catalog_cache_dir):
    home = tmp_path_factory.mktemp("gpuplan-home")
    monkeypatch.setenv("GPUPLAN_HOME", str(home))
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(_catalog_cache_dir))
    monkeypatch.setenv("GPUPLAN_NO_METADATA", "1")
    # team reports refuse deadlines that have passed (planner.team.check_dates): the team
    # files under test are dated 2027 on, so "today" is pinned before them, or the suite would
    # start failing the day their dates pass
    monkeypatch.setenv("GPUPLAN_TODAY", TODAY)
    monkeypatch.delenv("GPUPLAN_OVERRIDES", raising=False)
    monkeypatch.delenv("GPUPLAN_NO_CACHE", raising=False)
    yield home


@pytest.fixture
def read_only_filesystem(monkeypatch):
    """Creating any file fails with EROFS, as on a read-only mount: root passes access(), so
    such a folder is found only by trying to create a file in it."""
    real_open = os.open

    def read_only(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", read_only)
