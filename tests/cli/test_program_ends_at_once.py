"""The `gpuplan` program ends a short command's process as soon as its output is flushed
(``_stdio.end_now``: the interpreter's teardown was 40-50 ms of a 0.5 s plan), doing first
what that teardown did that matters: the atexit functions run, both streams are flushed, the
status is the command's. A thread still running, or a command not on the list, gets the
interpreter's own exit; ``main`` embedded in a program still returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _program(args: list[str], tmp_path, before: str = "") -> subprocess.CompletedProcess:
    """``args`` run by the console script's function, after ``before``; an atexit function
    says it ran, and the script says whether ``run`` came back (it never should)."""
    script = ("import atexit, sys, threading, time\n"
              "atexit.register(lambda: print('exit functions ran', file=sys.stderr))\n"
              f"{before}\n"
              f"sys.argv = ['gpuplan', *{args!r}]\n"
              "from planner.cli._program import run\n"
              "try:\n"
              "    run()\n"
              "finally:\n"
              "    print('interpreter exit', file=sys.stderr)\n")
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home"),
           "GPUPLAN_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


def test_a_plan_ends_at_once_with_its_whole_output_and_exit_functions(tmp_path):
    proc = _program(["plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "1d",
                     "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["recommendation"]["nodes"] >= 1  # whole: it parses
    said = proc.stderr.splitlines()
    assert said[-1] == "exit functions ran" and "interpreter exit" not in said


def test_an_error_ends_at_once_with_its_status_and_line(tmp_path):
    proc = _program(["offers", "--gpu", "H1OO"], tmp_path)
    assert proc.returncode == 2
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("error: ") and "H100" in lines[0]
    assert lines[-1] == "exit functions ran" and "interpreter exit" not in lines


def test_a_running_thread_gets_the_interpreters_exit(tmp_path):
    """A normal exit waits for a thread that is not a daemon: so does this one."""
    proc = _program(["gpus"], tmp_path, before=(
        "threading.Thread(target=lambda: (time.sleep(2.0), print('thread done', "
        "file=sys.stderr))).start()"))
    assert proc.returncode == 0, proc.stderr
    assert "thread done" in proc.stderr and "interpreter exit" in proc.stderr


@pytest.mark.parametrize("args", [["probe", "show"], ["--version"]])
def test_other_commands_get_the_interpreters_exit(tmp_path, args):
    proc = _program(args, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "interpreter exit" in proc.stderr and "exit functions ran" in proc.stderr


def test_main_embedded_in_a_program_returns(tmp_path):
    script = ("import sys\n"
              "sys.argv = ['gpuplan', 'gpus']\n"
              "from planner.cli import main\n"
              "code = main()\n"
              "print('returned', code, file=sys.stderr)\n")
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home")}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)
    assert "returned 0" in proc.stderr
