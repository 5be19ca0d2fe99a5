"""A signal that comes as the command exits: its work done, its output flushed, its status
known. It died by the signal (shell: 130 or 143) with complete output and no message, and a
SIGTERM turned into KeyboardInterrupt ended as a death by SIGINT, 130 (fault sweep: 14 of 45
late signals; `catalog refresh` so after its new catalog was active). Now a late signal is
ignored until the interpreter has exited, and a SIGTERM ends with 143 and its own line.

Deterministic: the script sends the signal to itself at the point under test."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SAID = {"SIGINT": "error: interrupted (Ctrl-C); files are written whole or not at all",
        "SIGTERM": "error: terminated (SIGTERM); files are written whole or not at all"}


def _run(body: str, tmp_path) -> subprocess.CompletedProcess:
    """`gpuplan offers --gpu H100 --limit 1` run as the program (planner.cli.main with
    sys.argv), then ``body``, then the interpreter's own exit with main's status."""
    script = ("import os, signal, sys, time\n"
              "import planner.cli as cli\n"
              "from planner.cli import _stdio\n"
              "sys.argv = ['gpuplan', 'offers', '--gpu', 'H100', '--limit', '1']\n"
              f"{body}\n")
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home"),
           "GPUPLAN_CACHE_DIR": str(tmp_path / "cache")}
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120)


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_after_main_returned_changes_nothing(signum, tmp_path):
    proc = _run("code = cli.main()\n"
                "ignored = [signal.getsignal(s) is signal.SIG_IGN\n"
                "           for s in (signal.SIGINT, signal.SIGTERM)]\n"
                "print('ignored', ignored, flush=True)\n"
                f"os.kill(os.getpid(), signal.{signum})\n"
                "time.sleep(0.3)  # where the signal is delivered, as the interpreter exits\n"
                "sys.exit(code)", tmp_path)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    assert proc.stderr == ""
    assert "H100" in proc.stdout
    # SIG_IGN, which the interpreter's clean-up leaves in place (it restores only its own)
    assert "ignored [True, True]" in proc.stdout


@pytest.mark.parametrize("signum", ["SIGINT", "SIGTERM"])
def test_a_signal_that_escapes_main_ends_with_its_own_status_and_line(signum, tmp_path):
    # the first signal stops the catalog's load; one more lands at each of the three places
    # that say it, before the handlers are replaced: the last escaped main as a
    # KeyboardInterrupt (Python: a death by SIGINT, whichever signal it was)
    proc = _run("import catalog\n"
                "def load(*args, **kwargs):\n"
                f"    signal.raise_signal(signal.{signum})\n"
                "    time.sleep(5)\n"
                "catalog.load_catalog = load\n"
                "real, calls = _stdio._stop_listening, []\n"
                "def stop():\n"
                "    calls.append(1)\n"
                "    if len(calls) <= 3:\n"
                f"        signal.raise_signal(signal.{signum})\n"
                "    real()\n"
                "_stdio._stop_listening = stop\n"
                "code = cli.main()\n"
                f"os.kill(os.getpid(), signal.{signum})\n"
                "time.sleep(0.3)\n"
                "sys.exit(code)", tmp_path)
    assert proc.returncode == 128 + getattr(signal, signum), (proc.returncode, proc.stderr)
    assert proc.stderr.strip().splitlines() == [SAID[signum]]


def test_in_process_main_leaves_the_signal_handlers_alone():
    # tests (and programs embedding it) call main(argv): their handlers are theirs
    from planner.cli import main

    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert main(["--version"]) == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
