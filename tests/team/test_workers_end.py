"""The planning workers of `gpuplan report` end with the command: killed (SIGKILL, SIGTERM,
the OOM killer), it never shut its pool down, and the workers lived on under init holding
the caller's stdout open, so `$(gpuplan report …)` never returned (fault sweep, 2026-12)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="reads /proc; the kernel's parent-death signal is Linux's")


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; init reaps it when it will


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_the_workers_end_when_the_report_is_killed(tmp_path, sig):
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home"),
           "GPUPLAN_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen([sys.executable, "-m", "planner", "report", "examples/team.yaml",
                             "--workers", "2", "--out", str(tmp_path / "r.html")], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while len(workers) < 2 and time.monotonic() < deadline and proc.poll() is None:
            workers = _children(proc.pid)
            time.sleep(0.01)
        if len(workers) < 2:
            pytest.skip("the report finished before both workers were seen")
        proc.send_signal(sig)
        proc.wait(30)
        deadline = time.monotonic() + 10
        while any(map(_alive, workers)) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = [w for w in workers if _alive(w)]
        for w in left:
            os.kill(w, signal.SIGKILL)
        assert not left, f"workers {left} outlived the killed report"
    finally:
        if proc.poll() is None:
            proc.kill()
