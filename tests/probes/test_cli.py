"""The command line: one-line errors with a fix, isolation of failing probes, no torch at
import."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from probes import PROBE_NAMES, SCHEMA_VERSION, ProbeConfig, load_report, run_probes
from probes._errors import TORCH_MISSING
from probes.cli import main, parse_size

FAST = ["--quick", "--device", "cpu", "--shapes", "64", "--dtypes", "fp32,tf32"]


def test_import_does_not_load_torch():
    code = ("import sys, probes, probes.cli, probes._schema, probes._environment\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_missing_torch_is_one_line_and_exit_2(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)  # makes `import torch` fail
    assert main(["--out", str(tmp_path / "r.json")]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"error: {TORCH_MISSING}\n" and captured.out == ""
    assert not (tmp_path / "r.json").exists()


def test_quick_run_writes_report_and_summary(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    assert main([*FAST, "--out", str(out)]) == 0
    report = load_report(out)
    assert report.quick and report.errors == ()
    assert report.collectives.status == "skipped" and "world size 1" in report.collectives.reason
    (rank,) = report.ranks  # one process: one rank, still gathered
    assert rank.rank == 0 and rank.device == "cpu"
    assert [v.name for v in rank.memory_gb_per_s] == ["host_copy", "host_triad"]
    assert report.matmul.sweep == "custom" and report.matmul.layouts == ("nt",)
    assert report.matmul.warmup_seconds > 0 and report.matmul.burst_tflops > 0
    text = capsys.readouterr().out
    assert "fp32:" in text and "TFLOP/s at 64x64x64/nt" in text and "host_copy" in text
    assert "host_triad" in text and "warm-up fp32 64x64x64" in text
    assert f"report written to {out}" in text


def test_a_failing_probe_is_recorded_and_the_others_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    from probes import _matmul

    def broken(*args, **kwargs):
        raise RuntimeError("CUBLAS_STATUS_EXECUTION_FAILED\nsecond line")

    monkeypatch.setattr(_matmul, "run_matmul_probe", broken)
    out = tmp_path / "r.json"
    assert main([*FAST, "--out", str(out)]) == 1
    report = load_report(out)
    assert report.matmul is None
    (error,) = report.errors
    assert (error.probe, error.error_type, error.message, error.rank) == (
        "matmul", "RuntimeError", "CUBLAS_STATUS_EXECUTION_FAILED", 0)
    assert report.environment is not None and report.memory is not None
    assert any(p.status == "measured" for p in report.memory.points)
    assert report.collectives is not None
    assert "error in matmul" in capsys.readouterr().out


def test_run_probes_selects_probes():
    pytest.importorskip("torch")
    report = run_probes(ProbeConfig(quick=True, device="cpu", probes=("environment",)))
    assert report.environment is not None
    assert report.matmul is None and report.memory is None and report.collectives is None


def test_cuda_without_a_gpu_is_a_clear_error(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    assert main(["--device", "cuda", "--out", str(tmp_path / "r.json")]) == 2
    line = setup_error_line(capsys.readouterr())
    assert line.startswith("error: --device cuda was asked for") and "no CUDA device" in line
    assert "To fix: install a CUDA build of torch" in line


def setup_error_line(captured) -> str:
    """A setup error as the project says every error: one line on stderr, "error: … To fix:
    …", and nothing on stdout (which scripts read)."""
    assert captured.out == "", captured.out
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    assert "To fix: " in captured.err
    return captured.err.rstrip("\n")


def test_a_value_the_api_refuses_is_one_error_line(monkeypatch, capsys, tmp_path):
    pytest.importorskip("torch")
    import probes.cli as cli

    def refused(**kwargs):
        raise ValueError("timeout_seconds must be a finite number > 0, got nan")

    monkeypatch.setattr(cli, "ProbeConfig", refused)
    assert main(["--out", str(tmp_path / "r.json")]) == 2
    assert setup_error_line(capsys.readouterr()) == (
        "error: timeout_seconds must be a finite number > 0, got nan. To fix: see "
        "`python -m probes --help`.")


def test_a_setup_error_is_said_by_rank_0_at_once(monkeypatch, capsys, tmp_path):
    """Under torchrun every rank meets the same error: rank 0 says it at once; the others
    first give torchrun the time to stop them once rank 0 has exited (one line in a log that
    gathers every rank), and still say it if they are not stopped (an error of their own)."""
    import probes._args as cli  # where the rank-0 rule and its wait live

    waited = []
    monkeypatch.setattr(cli.time, "sleep", waited.append)
    monkeypatch.setitem(sys.modules, "torch", None)
    argv = ["--out", str(tmp_path / "r.json")]
    monkeypatch.setenv("RANK", "0")
    assert main(argv) == 2 and waited == []
    first = setup_error_line(capsys.readouterr())
    monkeypatch.setenv("RANK", "1")
    assert main(argv) == 2 and waited == [cli.PEER_GRACE_S] and cli.PEER_GRACE_S >= 1
    assert setup_error_line(capsys.readouterr()) == first


def test_a_setup_error_with_stderr_closed_keeps_stdout_clean(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setattr(sys, "stderr", None)  # 2>&-
    assert main(["--out", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize("argv", [["--sizes", "12Q"], ["--shapes", "1x2"],
                                  ["--dtypes", "fp64"], ["--probes", "disk"]])
def test_bad_options_exit_2_with_a_fix(argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    assert "To fix:" in capsys.readouterr().err


@pytest.mark.parametrize("text, expected", [("4096", 4096), ("1K", 1024), ("64KiB", 65536),
                                            ("1m", 2**20), ("2G", 2**31)])
def test_parse_size(text, expected):
    assert parse_size(text) == expected


def test_report_json_is_stable(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    assert main([*FAST, "--probes", "matmul", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["schema_version"] == SCHEMA_VERSION and set(PROBE_NAMES) <= set(data)
    assert data["matmul"]["dtypes"][1]["status"] == "skipped"  # tf32 on CPU


FAKE_TORCH = '''# torch's import, as far as a Ctrl-C is concerned: a broad except around work
import os
import signal
import time

try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.2)
except BaseException:
    pass
'''


@pytest.mark.parametrize("argv", [
    ["-m", "planner", "probe", "run", "--quick", "--device", "cpu"],
    ["-m", "probes", "workload", "--hidden", "64", "--heads", "4", "--ffn-hidden", "96",
     "--seq-len", "32", "--device", "cpu"],
], ids=["probe-run", "probes-workload"])
def test_ctrl_c_during_the_torch_import_stops_the_run(tmp_path, argv):
    """torch's import swallowed a KeyboardInterrupt raised inside it in 2 of 30 tries (the
    run then went on and wrote its report); the interrupt is now held until the import ends
    and then stops the run. A stand-in torch interrupts itself inside a broad except."""
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(FAKE_TORCH)
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{root}",
           "GPUPLAN_HOME": str(tmp_path / "home")}
    out = tmp_path / "r.json"
    done = subprocess.run([sys.executable, *argv, "--out", str(out)], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode in (130, -2), (done.returncode, done.stderr[-500:])
    assert "interrupt" in done.stderr.lower() or "KeyboardInterrupt" in done.stderr
    assert not out.exists()


def test_ctrl_c_under_python_m_probes_is_one_line_and_exit_130(tmp_path):
    """`python -m probes` (the entry point on nodes and under torchrun) printed a 40-line
    KeyboardInterrupt traceback per rank; `gpuplan probe run` said one line."""
    import signal

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "probes", "--out", str(tmp_path / "r.json")],
                            cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env={**os.environ, "PYTHONPATH": str(root)})
    _wait_for_torch(proc)  # importing torch and starting to measure
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and err.strip().splitlines()[-1] == (
        "error: interrupted (Ctrl-C); reports are written whole or not at all")


def test_the_summary_fits_the_terminal_and_keeps_its_columns(monkeypatch):
    """At 80 columns the stored H200 run's summary printed lines of 113-147 characters (and a
    280-character "bytes: …" line); "matmul fp8_e4m3_fast:" broke the column of colons; a CPU
    run's spread said "2 GPUs"."""
    from pathlib import Path

    from probes import load_report
    from probes._fit import fit
    from probes.cli import format_summary

    root = Path(__file__).resolve().parents[2]
    report = load_report(root / "benchmarks" / "data" / "gpu_check_h200_2026-12-04" /
                         "probe-report.json")
    monkeypatch.setenv("COLUMNS", "80")
    text = format_summary(report)
    assert max(len(line) for line in text.splitlines()) > 100  # what needed fitting
    fitted = fit(text)
    assert all(len(line) <= 80 for line in fitted.splitlines()), fitted
    assert " ".join(fitted.split()) == " ".join(text.split())  # nothing lost, only wrapped
    colons = {line.index(":") for line in text.splitlines() if line.startswith("matmul ")}
    assert len(colons) == 1, text
    import probes.cli as cli

    units = []
    monkeypatch.setattr(cli, "_spread", lambda s, ranks="GPUs": units.append(ranks) or "")
    cpu = dataclasses.replace(report, environment=dataclasses.replace(
        report.environment, device_type="cpu"))
    format_summary(cpu)
    assert units and set(units) == {"ranks"}


def test_sigterm_stops_the_run_with_one_line_and_no_partial_report(tmp_path):
    """torchrun stops its workers with SIGTERM: `python -m probes` died without a word (exit
    143 from the signal), where `gpuplan probe run` says "terminated"."""
    import signal

    pytest.importorskip("torch")
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "probes", "--device", "cpu", "--out",
                             str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            cwd=tmp_path, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                                sys.path)})
    _wait_for_torch(proc)  # torch imported, the probes running
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert err.decode().strip().splitlines()[-1] == \
        "error: terminated (SIGTERM); reports are written whole or not at all"
    assert list(tmp_path.iterdir()) == []  # no report, no temp file


def test_long_runs_say_each_stage_on_a_terminal_only(monkeypatch):
    """A full run said nothing for 35 s on a CPU (2 minutes on a GPU node) before its summary;
    stages are said on stderr by rank 0 when it is a terminal — logs and pipes get nothing."""
    import io

    from probes import _fit

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    for stream, rank, said in ((Terminal(), 0, True), (io.StringIO(), 0, False),
                               (Terminal(), 1, False)):
        monkeypatch.setattr(sys, "stderr", stream)
        _fit.progress("matmul", rank=rank, started=0.0)
        assert ("probes: [" in stream.getvalue() and "] matmul …" in stream.getvalue()) \
            == said


def _wait_for_torch(proc, timeout_s: float = 90.0) -> None:
    """Until ``proc`` has mapped torch's library, read from /proc, then 3 s for the import to
    finish and the probes to start (a signal inside torch's import can be swallowed there):
    a fixed 3 s from the start also counted Python's start-up, seconds on a busy machine."""
    import time

    maps, until = f"/proc/{proc.pid}/maps", time.monotonic() + timeout_s
    if not os.path.exists(maps):
        time.sleep(3)
        return
    while time.monotonic() < until and proc.poll() is None:
        try:
            with open(maps) as f:
                if "libtorch" in f.read():
                    time.sleep(3)  # the import finished, into the first probe
                    return
        except OSError:
            return
        time.sleep(0.1)


def test_output_rules_of_the_summary_and_the_stage_lines(monkeypatch, tmp_path):
    """COLUMNS=0 wrapped the summary at 20 columns (gpuplan ignores it: 100 when piped); with
    stdout closed a written report ended in a traceback, exit 1; Ctrl-C was said by every
    rank under torchrun."""
    import io
    import signal

    from probes import _fit

    monkeypatch.setenv("COLUMNS", "0")
    monkeypatch.setattr(sys, "stdout", io.StringIO())  # piped
    assert _fit.summary_width() == 100
    pytest.importorskip("torch")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    closed = subprocess.run(
        ["sh", "-c", f'"{sys.executable}" -m probes --quick --device cpu --probes environment '
                     f'--out "{tmp_path / "r.json"}" >&-'], capture_output=True, text=True,
        env=env, timeout=120)
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr
    assert (tmp_path / "r.json").exists()
    other = subprocess.Popen([sys.executable, "-m", "probes", "--device", "cpu", "--out",
                              str(tmp_path / "o.json")], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, env={**env, "RANK": "1"}, cwd=tmp_path)
    _wait_for_torch(other)  # a fixed 3 s sleep sent the signal before main() on a busy CI
    other.send_signal(signal.SIGINT)
    _, err = other.communicate(timeout=60)
    assert other.returncode == 130 and "interrupted" not in err.decode()  # rank 0 says it
