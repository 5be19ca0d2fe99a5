"""How a `python -m probes` process exits: a torchrun worker of a multi-process run skips
interpreter finalization (CPU gloo aborted a rank there after its report was written), with
what it printed flushed and its exit status kept; any other run exits normally."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys, types
sys.modules.setdefault("torch.distributed", types.ModuleType("torch.distributed"))
from probes.__main__ import _leave
atexit.register(lambda: print(" finalized", flush=True))
sys.stdout.write("report written")  # buffered: no newline, no flush
_leave(3)
"""


def _run(world_size: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "WORLD_SIZE"}
    if world_size is not None:
        env["WORLD_SIZE"] = world_size
    return subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          env=env, timeout=60)


def test_a_worker_of_a_multi_process_run_leaves_without_finalization_output_flushed():
    proc = _run("2")
    assert (proc.returncode, proc.stdout, proc.stderr) == (3, "report written", "")


@pytest.mark.parametrize("world_size", [None, "1", "two"])
def test_a_single_process_run_exits_normally(world_size):
    proc = _run(world_size)
    assert (proc.returncode, proc.stdout.strip()) == (3, "report written finalized")
