"""The process settings `gpuplan` makes for the planner's commands (issue #19): one BLAS
thread, and malloc keeping the memory it freed. Both leave the probes and the app alone and
give way to the user's own variables."""

from __future__ import annotations

import sys

import pytest

from planner.cli import _main


@pytest.fixture
def clean_env(monkeypatch):
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                     "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        monkeypatch.delenv(variable, raising=False)
    return monkeypatch


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_planner_commands_keep_freed_memory(clean_env):
    assert _main.keep_freed_memory("plan") is True
    assert _main.keep_freed_memory("estimate") is True


@pytest.mark.parametrize("command", [None, "probe", "app"])
def test_probes_the_app_and_no_command_keep_mallocs_defaults(clean_env, command):
    assert _main.keep_freed_memory(command) is False


def test_a_users_malloc_variable_wins(clean_env):
    clean_env.setenv("MALLOC_TRIM_THRESHOLD_", "0")
    assert _main.keep_freed_memory("plan") is False


def test_blas_threads_are_set_only_before_numpy_and_only_when_the_user_did_not(clean_env):
    clean_env.delitem(sys.modules, "numpy", raising=False)
    _main.single_threaded_blas("plan")
    assert all(_main.os.environ[v] == "1" for v in _main.BLAS_THREAD_VARIABLES)
    clean_env.setenv("OPENBLAS_NUM_THREADS", "4")
    clean_env.delenv("OMP_NUM_THREADS")
    _main.single_threaded_blas("plan")
    assert _main.os.environ["OPENBLAS_NUM_THREADS"] == "4"
    assert "OMP_NUM_THREADS" not in _main.os.environ
