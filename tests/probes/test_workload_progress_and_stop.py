"""The workload probe on CPU (sweep 23): the documented llama3-8b check ran 7 minutes on a
2-core machine saying nothing, and SIGTERM waited more than 3 minutes inside one backward.
Now it says each phase and step, warns up front when bf16 is emulated, and a signal stops it
within seconds even inside a step. A tiny model throughout: seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parents[2]
TINY = ["workload", "--hidden", "64", "--heads", "4", "--ffn-hidden", "96", "--seq-len", "32",
        "--device", "cpu", "--quick", "--model-name", "tiny"]


def test_each_phase_and_step_is_said_with_its_time_and_emulated_bf16_is_warned(
        tmp_path, capsys, monkeypatch):
    from probes import _workload
    from probes.cli import main

    monkeypatch.setattr(_workload, "cpu_has_native", lambda precision: False, raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert main([*TINY, "--no-profile", "--out", str(tmp_path / "r.json")]) == 0
    err = capsys.readouterr().err
    assert "warning: this CPU has no native bf16" in err and "To fix:" in err
    for said in ("choosing the attention kernel", "building 2 layer(s)", "GFLOP/s, about",
                 "warm-up step 1 of 2 done (", "timed step 1 of 5 done (",
                 "timed step 5 of 5 done (", "one more step to measure memory"):
        assert said in err, (said, err)
    assert "for the rest" in err  # the first step tells what the others will take


def test_the_half_precision_warning_is_for_an_emulating_cpu_only():
    from probes._workload_watch import cpu_half_note

    assert cpu_half_note("bf16", False) is not None
    assert cpu_half_note("bf16", True) is None
    assert cpu_half_note("bf16", None) is None  # torch cannot tell: no warning on a guess
    # fp16 is emulated too (16x fp32's time on an AVX2 machine), and was not warned about
    assert "no native fp16" in cpu_half_note("fp16", False)
    assert cpu_half_note("fp16", None) is None
    assert cpu_half_note("fp32", False) is None


def test_this_machines_answer_matches_its_cpu_features():
    import torch

    from probes._workload_watch import cpu_has_native

    assert cpu_has_native("fp32") is None
    if torch.backends.cpu.get_cpu_capability() == "AVX2":  # no AVX-512: neither is native
        assert cpu_has_native("bf16") is False and cpu_has_native("fp16") is False


SCRIPT = textwrap.dedent("""
    import ctypes, signal, sys
    from probes import _workload

    def stuck(self):  # one long torch call: Python runs no handler until it returns
        sleep = ctypes.CDLL(None).sleep
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        print("in a step", file=sys.stderr, flush=True)
        sleep(40)

    def on_term(signum, frame):  # as gpuplan's CLI and `python -m probes` do
        raise KeyboardInterrupt

    _workload._Trainer.fwd_bwd = stuck
    signal.signal(signal.SIGTERM, on_term)
    from probes.cli import main
    sys.exit(main(sys.argv[1:]))
""")


@pytest.mark.skipif(sys.platform != "linux", reason="pthread_sigmask and libc sleep")
def test_sigterm_stops_the_run_within_seconds_even_inside_a_long_step(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT), GPUPLAN_NO_METADATA="1")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, *TINY, "--out", str(out)],
                            stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        lines = []
        for line in proc.stderr:
            lines.append(line)
            if "in a step" in line:
                break
        else:
            pytest.fail("".join(lines))
        time.sleep(0.5)  # inside the call, not in the bytecodes before it
        sent = time.perf_counter()
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=30)
        took = time.perf_counter() - sent
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert took < 10, f"SIGTERM took {took:.0f} s to stop the run"
    assert code == 128 + signal.SIGTERM, err
    assert "stopped (SIGTERM) inside a step" in err
    assert not out.exists()  # whole or not at all


def test_a_step_expected_to_take_minutes_is_said_in_logs_too(capsys):
    from probes._workload_watch import Progress

    Progress().expect(337e9, 0.4e9)  # llama3-8b at 256 tokens, bf16 emulated on 2 cores
    err = capsys.readouterr().err  # not a terminal: progress lines are not said here
    assert err.startswith("note: one step is ~337 GFLOP") and "about 14 min a step" in err
    Progress().expect(1e9, 1e10)  # a short one too, once (tests/probes/test_workload_quiet.py)
    assert capsys.readouterr().err.startswith("note: one step is ~1 GFLOP")
