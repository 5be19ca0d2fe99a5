"""A piped workload run says the summary and its warnings only (tester's findings, 2026-12):
torch.profiler's Kineto wrote "USDT:… SyncActivityProfilerHandler.cpp:52] profiler_start"
and "…:59] profiler_stop" on stderr, and a CPU step's expected time ("about 2 s a step") was
said on a terminal only, so the emulated-bf16 warning in a log gave no time."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

SHAPE = ["--hidden", "64", "--heads", "4", "--ffn-hidden", "96", "--seq-len", "32",
         "--device", "cpu", "--steps", "2", "--warmup-steps", "1", "--quick"]


def test_a_piped_cpu_run_says_no_profiler_marks_and_the_step_time_once(tmp_path):
    pytest.importorskip("torch")
    env = {k: v for k, v in os.environ.items() if k != "KINETO_LOG_LEVEL"}
    env.update(GPUPLAN_NO_METADATA="1", OMP_NUM_THREADS="1")
    proc = subprocess.run([sys.executable, "-m", "probes", "workload", *SHAPE, "--out",
                           str(tmp_path / "w.json")], capture_output=True, text=True, env=env,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "USDT" not in proc.stderr and "profiler_st" not in proc.stderr, proc.stderr
    said = [line for line in proc.stderr.splitlines() if " a step" in line]
    assert len(said) == 1 and said[0].startswith("note: one step is ~"), proc.stderr
    assert "GFLOP/s, about " in said[0]
    # the profiler still measured: the split is the profiler's, not "not available"
    assert '"source": "torch.profiler: shares' in (tmp_path / "w.json").read_text()


def test_the_step_time_is_said_once_into_a_pipe(capsys):
    from probes._workload_watch import Progress

    Progress().expect(2e9, 1e9)  # capsys's stderr is no terminal, as a pipe
    err = capsys.readouterr().err
    assert err == ("note: one step is ~2 GFLOP of forward + backward; at this CPU's ~1.0 "
                   "GFLOP/s, about 2 s a step (Ctrl-C stops it)\n")


def test_a_kineto_level_the_user_set_is_kept(monkeypatch):
    from probes._workload_watch import quiet_profiler

    monkeypatch.setenv("KINETO_LOG_LEVEL", "0")
    quiet_profiler()
    assert os.environ["KINETO_LOG_LEVEL"] == "0"
    monkeypatch.delenv("KINETO_LOG_LEVEL")
    quiet_profiler()
    assert os.environ["KINETO_LOG_LEVEL"] == "6"
