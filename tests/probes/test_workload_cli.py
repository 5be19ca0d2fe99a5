"""`python -m probes workload` (and `gpuplan probe workload`, which runs it): a problem to fix
before anything is measured — no shape, a --tp the shape or the processes cannot hold, no CUDA
for --device cuda, torch missing — is one line on stderr, "error: … To fix: …", exit 2, with
stdout left to the summary; under torchrun it is said once, by rank 0."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from probes._errors import TORCH_MISSING
from probes.cli import main

SHAPE = ["--hidden", "64", "--heads", "4", "--ffn-hidden", "96", "--seq-len", "32",
         "--device", "cpu", "--steps", "2", "--warmup-steps", "1", "--quick"]


def _error_line(captured) -> str:
    assert captured.out == "", captured.out
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    assert "To fix: " in captured.err
    return captured.err.rstrip("\n")


def test_missing_torch_is_one_error_line(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "torch", None)
    assert main(["workload", *SHAPE, "--out", str(tmp_path / "w.json")]) == 2
    assert _error_line(capsys.readouterr()) == f"error: {TORCH_MISSING}"
    assert not (tmp_path / "w.json").exists()


def test_a_missing_shape_is_one_error_line(capsys, tmp_path):
    pytest.importorskip("torch")
    assert main(["workload", "--hidden", "64", "--out", str(tmp_path / "w.json")]) == 2
    line = _error_line(capsys.readouterr())
    assert line.startswith("error: give the model (--model NAME, --config config.json or "
                           "--params N) or its shape. To fix: e.g. --model llama3-8b")
    assert line.endswith("(missing: --heads, --ffn-hidden, --seq-len)")


@pytest.mark.parametrize(("tp", "said"), [
    # a tp the shape cannot hold
    ("3", "error: tp=3 must divide heads (4), kv_heads (4) and ffn_hidden (96). To fix: see "
          "`python -m probes workload --help`."),
    # a tp above the one process
    ("2", "error: tp=2 does not divide the 1 processes. To fix: run torchrun with a multiple "
          "of 2 processes, or change --tp."),
])
def test_a_tp_that_cannot_run_is_one_error_line(capsys, tmp_path, tp, said):
    pytest.importorskip("torch")
    assert main(["workload", *SHAPE, "--tp", tp, "--out", str(tmp_path / "w.json")]) == 2
    assert _error_line(capsys.readouterr()) == said
    assert not (tmp_path / "w.json").exists()


def test_cuda_without_a_gpu_is_one_error_line(capsys, tmp_path):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    argv = ["workload", *SHAPE, "--device", "cuda", "--out", str(tmp_path / "w.json")]
    assert main(argv) == 2
    line = _error_line(capsys.readouterr())
    assert line.startswith("error: --device cuda was asked for") and "no CUDA device" in line


def test_gpuplan_probe_workload_says_it_the_same_way(capsys, tmp_path):
    pytest.importorskip("torch")
    from planner.cli import main as gpuplan

    code = gpuplan(["probe", "workload", "--model", "gpt2", "--seq-len", "64", "--device",
                    "cpu", "--quick", "--tp", "2", "--out", str(tmp_path / "w.json")])
    assert code == 2
    assert _error_line(capsys.readouterr()) == (
        "error: tp=2 does not divide the 1 processes. To fix: run torchrun with a multiple of "
        "2 processes, or change --tp.")
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("tp", "says"), [
    ("3", "error: tp=3 must divide heads (4), kv_heads (4) and ffn_hidden (96). To fix: see "
          "`python -m probes workload --help`."),  # refused before torch starts anything
    ("4", "error: tp=4 does not divide the 2 processes. To fix: run torchrun with a multiple "
          "of 4 processes, or change --tp."),  # refused by every rank in the process group
    # an option argparse refuses: every rank said it (8 lines on an 8-GPU node)
    ("0", "python -m probes workload: error: argument --tp: '0' is not a whole number from 1 "
          "to 1,024. To fix: see `python -m probes workload --help`."),
])
def test_under_torchrun_the_error_is_said_once(tmp_path, tp, says):
    pytest.importorskip("torch")
    env = dict(os.environ, GPUPLAN_NO_METADATA="1", OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "probes", "workload", *SHAPE, "--kv-heads", "4", "--tp", tp,
           "--out", str(tmp_path / "w.json")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert proc.returncode != 0
    assert "error:" not in proc.stdout and "To fix" not in proc.stdout, proc.stdout
    lines = [line for line in proc.stderr.splitlines() if "error: " in line
             and not line.startswith(("torch.", "[", " "))]
    assert lines == [says], proc.stderr[-3000:]
    assert not (tmp_path / "w.json").exists()


def test_the_users_model_name_is_the_label_given_once(capsys):
    """`gpuplan probe workload --model-name mylabel`: gpuplan added its own --model-name too,
    and the probes said "--model-name is given twice" of an option given once."""
    from planner.cli import main

    code = main(["probe", "workload", "--model", "llama3-8b", "--seq-len", "256",
                 "--print-command", "--model-name", "mylabel"])
    out, err = capsys.readouterr()
    assert code == 0, err
    command = next(line for line in out.splitlines() if line.startswith("torchrun "))
    assert command.count("--model-name") == 1 and "--model-name mylabel" in command


@pytest.mark.parametrize("given", [["--model-name"], ["--model-name="], ["--model-name", " "],
                                   ["--model-name", "--out", "r.json"]])
def test_a_model_name_without_a_value_is_one_error(capsys, given):
    """A dangling --model-name was left among the options beside gpuplan's own, and the probes
    said it was "given twice"; `--model-name=` fell back to gpuplan's label without a word."""
    from planner.cli import main

    code = main(["probe", "workload", "--model", "llama3-8b", "--seq-len", "256",
                 "--print-command", *given])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "--model-name needs a value. To fix: give one, e.g. --model-name=NAME" in err


@pytest.mark.parametrize(("flag", "value"), [("--head-dim", "64"), ("--shared-experts", "2")])
def test_a_shape_flag_a_model_would_ignore_is_refused(capsys, tmp_path, flag, value):
    """`--model llama3-8b --head-dim 64` ran head_dim 128 without a word: the planner builds
    the model's shape and has no such override (docs sweep 2026-12-06)."""
    pytest.importorskip("torch")
    out = tmp_path / "w.json"
    # small and quick, so that a regression fails in seconds rather than timing a whole layer
    assert main(["workload", "--model", "llama3-8b", flag, value, "--seq-len", "64", "--quick",
                 "--device", "cpu", "--build-layers", "1", "--out", str(out)]) == 2
    line = _error_line(capsys.readouterr())
    assert line.startswith(f"error: {flag} is for a shape given in full; with --model, "
                           "--config or --params the model's own is used. To fix: drop "
                           f"{flag}, or give the shape without --model"), line
    assert not out.exists()


def test_a_config_file_is_read_and_measured(capsys, tmp_path):
    """`python -m probes workload --config config.json` refused every file ("expected a JSON
    object of model settings, found str": the path itself went to WorkloadSpec); a missing
    file said the same thing."""
    pytest.importorskip("torch")
    from probes import load_report

    config = tmp_path / "config.json"
    config.write_text(
        '{"model_type": "llama", "hidden_size": 64, "intermediate_size": 96, '
        '"num_attention_heads": 4, "num_key_value_heads": 4, "num_hidden_layers": 2, '
        '"vocab_size": 128, "_name_or_path": "tiny-llama"}')
    out = tmp_path / "w.json"
    argv = ["workload", "--config", str(config), "--seq-len", "32", "--device", "cpu",
            "--steps", "2", "--warmup-steps", "1", "--quick", "--build-layers", "1"]
    assert main([*argv, "--out", str(out)]) == 0, capsys.readouterr().err
    report = load_report(out)
    assert report.workload is not None and report.workload.model == "tiny-llama"
    capsys.readouterr()
    assert main(["workload", "--config", str(tmp_path / "missing.json"), "--device", "cpu",
                 "--out", str(tmp_path / "x.json")]) == 2
    assert "cannot read config (no such file)" in _error_line(capsys.readouterr())
    (tmp_path / "empty.json").write_text("{}")  # the fix names this command's option
    assert main(["workload", "--config", str(tmp_path / "empty.json"), "--device", "cpu",
                 "--out", str(tmp_path / "x.json")]) == 2
    assert "or give --params instead" in _error_line(capsys.readouterr())  # not `params`


def test_an_empty_model_source_is_refused_and_stages_count_the_steps_timed(capsys, tmp_path,
                                                                         monkeypatch):
    """`--config ""` read as "no config" (beside a shape it was ignored); the stage line said
    "(None steps)" for a run without --steps."""
    pytest.importorskip("torch")
    for flag in ("--config", "--model", "--params"):
        assert main(["workload", flag, " ", *SHAPE, "--out", str(tmp_path / "w.json")]) == 2
        assert f"{flag} is empty" in _error_line(capsys.readouterr())
    import probes._workload_run as run

    said = []
    monkeypatch.setattr(run, "progress", lambda text, **_: said.append(text))
    argv = [a for a in SHAPE if a not in ("--steps", "2")]
    assert main(["workload", *argv, "--out", str(tmp_path / "w.json")]) == 0
    assert said == ["building and timing the layers (5 steps)"]  # --quick: 5 timed steps
