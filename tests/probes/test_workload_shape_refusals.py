"""The workload probe's sweep of 2026-12-06: shapes and options that passed every check and then
failed mid-run (or ran something else), refused before anything is built, exit 2, with a fix
that works; and `gpuplan probe workload` labelling and bounding its run as the probe does."""

from __future__ import annotations

import json

import pytest

from probes._workload_config import WorkloadConfig
from probes.cli import main as probes_main

SMALL = ["--ffn-hidden", "64", "--seq-len", "16", "--device", "cpu", "--quick",
         "--build-layers", "1", "--no-profile"]


def _one_error(capsys) -> str:
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err
    assert "To fix: " in captured.err
    return captured.err.rstrip("\n")


def _config(tmp_path, name: str, **settings) -> str:
    body = {"_name_or_path": "my-tiny", "model_type": "llama", "hidden_size": 64,
            "intermediate_size": 96, "num_attention_heads": 4, "num_key_value_heads": 4,
            "num_hidden_layers": 2, "vocab_size": 128, **settings}
    path = tmp_path / name
    path.write_text(json.dumps(body))
    return str(path)


@pytest.mark.parametrize(("hidden", "heads", "head_dim", "d"), [
    (300, 4, 0, 75), (514, 2, 0, 257), (4, 4, 0, 1), (64, 2, 33, 33)])
def test_an_odd_head_dim_is_refused_by_the_config(hidden, heads, head_dim, d):
    """Rotary embeddings rotate pairs: head dim 75 crashed mid-run ("size of tensor a (75)
    must match … (76)"), head dim 1 said "No available kernel"."""
    with pytest.raises(ValueError) as info:
        WorkloadConfig(hidden=hidden, heads=heads, kv_heads=heads, ffn_hidden=64, seq_len=16,
                       head_dim=head_dim)
    said = str(info.value)
    assert said.startswith(f"head_dim {d} must be even (rotary embeddings rotate pairs of "
                           "dimensions). To fix: "), said


def test_an_odd_head_dim_is_refused_before_the_run(capsys, tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "w.json"
    assert probes_main(["workload", "--hidden", "514", "--heads", "2", *SMALL,
                        "--out", str(out)]) == 2
    line = _one_error(capsys)
    assert line.startswith("error: head_dim 257 must be even") and "hidden 516" in line, line
    assert line.count("To fix") == 1 and not out.exists()


def test_gpuplan_refuses_a_config_of_odd_head_dim(capsys, tmp_path):
    from planner.cli import main as gpuplan

    config = _config(tmp_path, "odd.json", hidden_size=300, intermediate_size=512)
    out = tmp_path / "odd.out.json"
    assert gpuplan(["probe", "workload", "--config", config, "--seq-len", "64", "--device",
                    "cpu", "--quick", "--out", str(out)]) == 2
    line = _one_error(capsys)
    assert line.startswith("error: probe workload: head_dim 75 must be even"), line
    assert not out.exists()


def test_shared_experts_without_experts_are_refused():
    with pytest.raises(ValueError, match=r"^shared_experts \(2\) are part of a mixture of "
                                         r"experts.*To fix: "):
        WorkloadConfig(hidden=64, heads=2, kv_heads=2, ffn_hidden=64, seq_len=16,
                       shared_experts=2)
    # with experts they stay as they were
    WorkloadConfig(hidden=64, heads=2, kv_heads=2, ffn_hidden=64, seq_len=16, experts=4,
                   experts_per_token=2, shared_experts=2)


def test_shared_experts_without_experts_exit_2(capsys, tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "w.json"
    assert probes_main(["workload", "--hidden", "64", "--heads", "2", "--shared-experts", "2",
                        *SMALL, "--out", str(out)]) == 2
    assert _one_error(capsys).startswith("error: shared_experts (2) are part of a mixture")
    assert not out.exists()


@pytest.mark.parametrize("given", [["--head-dim", "64"], ["--head-dim=64"],
                                   ["--shared-experts", "2"], ["--shared-experts=2"]])
def test_gpuplan_refuses_shape_flags_the_model_gives(capsys, given):
    """--head-dim went through beside gpuplan's own ("--head-dim is given twice"), and
    --shared-experts made a dense model's report say shared_experts 2."""
    from planner.cli import main as gpuplan

    flag = given[0].split("=")[0]
    assert gpuplan(["probe", "workload", "--model", "llama3-8b", *given,
                    "--print-command"]) == 2
    line = _one_error(capsys)
    assert line.startswith(f"error: {flag} is for a shape given in full; with --model, "
                           "--config or --params the model's own is used. To fix: drop "
                           f"{flag}"), line


def test_gpuplan_labels_a_config_by_its_name(capsys, tmp_path):
    """The file name ("tiny.json"; "config.json" for every download) was the label, where
    `python -m probes` and `estimate` use the config's _name_or_path."""
    from planner.cli import main as gpuplan

    config = _config(tmp_path, "tiny.json")
    assert gpuplan(["probe", "workload", "--config", config, "--seq-len", "64",
                    "--print-command"]) == 0
    command = next(line for line in capsys.readouterr().out.splitlines()
                   if line.startswith("torchrun "))
    assert "--model-name my-tiny" in command and "tiny.json" not in command, command


def test_an_attention_backend_this_device_lacks_is_a_set_up_error(capsys, tmp_path):
    """--attention efficient on CPU: a failed report (exit 1) whose reason was cut mid-sentence
    ("This is likely due") and whose fix ("another --precision") cannot help on a CPU."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    q = torch.randn(1, 2, 16, 32, dtype=torch.bfloat16)
    try:
        with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION]):
            F.scaled_dot_product_attention(q, q, q, is_causal=True)
        pytest.skip("this torch runs the efficient backend on CPU")
    except RuntimeError:
        pass
    out = tmp_path / "w.json"
    assert probes_main(["workload", "--hidden", "64", "--heads", "2", *SMALL,
                        "--attention", "efficient", "--out", str(out)]) == 2
    line = _one_error(capsys)
    assert line.startswith("error: the SDPA efficient backend is not available on this cpu "
                           "for head_dim 32 in bf16 ("), line
    assert line.endswith("To fix: choose --attention auto (the first backend that runs "
                         "here) or --attention math"), line
    assert "likely due" not in line and "--precision" not in line, line
    assert not out.exists()


def test_a_torch_reason_is_cut_at_a_boundary():
    pytest.importorskip("torch")
    from probes._workload import _first_clause

    assert _first_clause("No viable backend was found. This is likely due to x.") == \
        "No viable backend was found"
    long = "word " * 40
    cut = _first_clause(long.strip())
    assert cut.endswith(" …") and "wor …" not in cut and len(cut) <= 122


@pytest.mark.parametrize(("given", "said"), [
    (["--micro-batch", "0"], "error: --micro-batch: '0' is not a whole number from 1 to 65,536. "
                             "To fix: pass e.g. --micro-batch 1, or leave it out"),
    (["--tp", "0"], "error: --tp: '0' is not a whole number from 1 to 1,024. To fix: pass e.g. "
                    "--tp 1, or leave it out"),
    (["--tp", "2048"], "error: --tp: '2048' is not a whole number from 1 to 1,024. To fix: "),
])
def test_gpuplan_bounds_are_the_probes(capsys, given, said):
    """The planner's "or leave it to the search" (the probe has none) and its --tp bound of
    131,072, where the probe refuses 2048."""
    from planner.cli import main as gpuplan

    assert gpuplan(["probe", "workload", "--model", "llama3-8b", *given,
                    "--print-command"]) == 2
    line = _one_error(capsys)
    assert line.startswith(said) and "search" not in line, line


def test_a_windowed_model_is_told_its_window_is_not_probed(capsys, tmp_path):
    """A sliding-window model's layer is timed with full causal attention: MLA and dense
    layers got a note, a window none (workload-probe sweep)."""
    from planner.cli import main as gpuplan

    config = _config(tmp_path, "sw.json", model_type="mistral", sliding_window=16)
    assert gpuplan(["probe", "workload", "--config", config, "--seq-len", "64",
                    "--print-command"]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "its sliding window or chunks are not probed" in err, err
    config = _config(tmp_path, "full.json")
    assert gpuplan(["probe", "workload", "--config", config, "--seq-len", "64",
                    "--print-command"]) == 0
    assert "sliding window" not in capsys.readouterr().err
