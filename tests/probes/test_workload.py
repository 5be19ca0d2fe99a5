"""The workload probe in one process on CPU: tiny dense and MoE layers run forward + backward +
AdamW, the report round-trips, what the layers keep for backward matches the recomputation
chosen, and the command lines (`python -m probes workload`, `gpuplan probe workload`) build the
same shape. The shapes are a few hundred parameters wide: the plumbing is under test, not the
CPU's speed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from probes import SCHEMA_VERSION, WorkloadConfig, load_report, parse_report, report_to_json

TINY = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn_hidden": 96, "seq_len": 32,
        "micro_batch": 2, "device": "cpu", "steps": 2, "warmup_steps": 1}


def run(tmp_path, name="w.json", **changes):
    pytest.importorskip("torch")
    from probes import run_workload_probe

    out = tmp_path / name
    return run_workload_probe(WorkloadConfig(**{**TINY, **changes}), out=out), out


def test_a_tiny_dense_layer_runs_and_its_report_round_trips(tmp_path, single_thread):
    report, out = run(tmp_path, model="tiny-dense", model_layers=12)
    assert report.schema_version == SCHEMA_VERSION == 3 and report.errors == ()
    w = report.workload
    assert (w.status, w.model, w.framework, w.layers, w.model_layers) == (
        "measured", "tiny-dense", "megatron", 2, 12)
    assert (w.hidden, w.heads, w.kv_heads, w.head_dim, w.ffn_hidden, w.gated) == (
        64, 4, 2, 16, 96, True)
    assert w.attention_backend in ("flash", "math") and "repeated" in w.gqa
    assert (w.tp, w.dp, w.device, w.timing) == (1, 1, "cpu", "perf_counter")
    assert w.layer_fwd_bwd_seconds == pytest.approx(w.fwd_bwd_seconds / 2)
    assert w.layer_fwd_bwd_seconds_p10 <= w.layer_fwd_bwd_seconds <= w.layer_fwd_bwd_seconds_p90
    assert w.step_seconds >= w.fwd_bwd_seconds > 0 and w.optimizer_seconds > 0
    assert w.tokens_per_second == pytest.approx(64 / w.step_seconds)
    # the split: the profiler's shares applied to the timed forward + backward
    sp = w.split
    assert sp.source.startswith("torch.profiler")
    parts = (sp.matmul_seconds, sp.attention_seconds, sp.other_seconds)
    assert all(p >= 0 for p in parts) and sp.matmul_seconds > 0 and sp.attention_seconds > 0
    assert sum(parts) == pytest.approx(w.layer_fwd_bwd_seconds)
    assert sp.communication_seconds is None  # no tensor parallelism
    # memory: the allocator figures need CUDA; what autograd saved is counted anywhere
    assert (w.peak_memory_bytes, w.layer_activation_bytes) == (None, None)
    assert "not available on cpu" in w.memory_note and w.layer_saved_bytes > 0
    (rank,) = report.ranks
    assert {v.name for v in rank.workload} == {"layer_fwd_bwd_seconds", "layer_step_seconds",
                                               "layer_saved_bytes"}
    assert w.across_ranks.n == 1
    assert load_report(out) == report
    assert parse_report(json.loads(report_to_json(report))) == report


def test_a_tiny_moe_layer_runs_with_its_experts(tmp_path, single_thread):
    report, _ = run(tmp_path, experts=4, experts_per_token=2, shared_experts=1, gated=False,
                    precision="fp8", profile=False)
    w = report.workload
    assert w.status == "measured" and report.errors == ()
    assert (w.experts, w.experts_per_token, w.shared_experts, w.gated) == (4, 2, 1, False)
    assert "top-k" in w.moe_dispatch and "no expert parallelism" in w.moe_dispatch
    # fp8 runs bf16 GEMMs in plain PyTorch, and the report says so
    assert (w.precision, w.precision_requested) == ("bf16", "fp8")
    assert any("fp8 was asked for" in n for n in w.notes)
    assert w.split.source.startswith("not available: profiling was turned off")
    assert w.split.optimizer_seconds > 0 and w.split.matmul_seconds is None


@pytest.mark.parametrize("backend", ["math"])
def test_an_sdpa_backend_can_be_chosen(tmp_path, single_thread, backend):
    report, _ = run(tmp_path, attention=backend, kv_heads=4)
    w = report.workload
    assert w.attention_backend == backend and w.gqa == ""  # heads == kv heads: nothing shared
    assert any(f"SDPA {backend} backend" in n for n in w.notes)


def test_recomputation_keeps_what_the_memory_model_says(tmp_path, single_thread):
    """Full recomputation keeps each layer's input, 2 bytes x hidden per token in bf16 — the
    planner's number exactly; selective keeps less than none."""
    saved = {rc: run(tmp_path, f"{rc}.json", recompute=rc, steps=1, warmup_steps=0,
                     profile=False)[0].workload.layer_saved_bytes
             for rc in ("none", "selective", "full")}
    tokens = TINY["seq_len"] * TINY["micro_batch"]
    assert saved["full"] == 2 * TINY["hidden"] * tokens
    assert saved["full"] < saved["selective"] < saved["none"]


def test_a_failure_while_measuring_is_in_the_report(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from probes import _workload

    def broken(*args, **kwargs):
        raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB\nmore")

    monkeypatch.setattr(_workload, "measure", broken)
    report, out = run(tmp_path)
    w = report.workload
    assert w.status == "failed" and w.reason.startswith("CUDA out of memory")
    assert w.layer_fwd_bwd_seconds is None and w.layers_rule.startswith("not reached")
    (error,) = report.errors
    assert (error.probe, error.rank, error.error_type) == ("workload", 0, "RuntimeError")
    assert load_report(out) == report


def test_the_profiler_split_classes_operators():
    pytest.importorskip("torch")
    from probes._workload import classify

    assert classify("aten::mm", ()) == "matmul"
    assert classify("aten::addmm", ("aten::linear",)) == "matmul"
    assert classify("aten::_scaled_dot_product_flash_attention", ()) == "attention"
    assert classify("aten::mm", ("gpuplan::attention",)) == "attention"  # inside the core
    assert classify("aten::bmm", ()) == "attention"  # the math backend's QK^T and PV
    assert classify("aten::mul", ("autograd::engine::evaluate_function: "
                                  "ScaledDotProductFlashAttentionForCpuBackward0",)) == "attention"
    assert classify("aten::copy_", ("c10d::allreduce_",)) == "communication"
    assert classify("aten::silu", ()) == "other"


@pytest.mark.parametrize(("changes", "match"), [
    ({"heads": 6, "kv_heads": 4}, "multiple of kv_heads"),
    ({"tp": 3}, "tp=3 must divide"),
    ({"recompute": "auto"}, "recompute must be one of"),
    ({"experts": 4, "experts_per_token": 0}, "experts_per_token"),
    ({"hidden": 0}, "hidden must be"),
])
def test_a_config_that_cannot_run_says_why(changes, match):
    with pytest.raises(ValueError, match=match):
        WorkloadConfig(**{**TINY, **changes})


def test_the_command_line_needs_a_shape_and_says_how(tmp_path, capsys):
    pytest.importorskip("torch")
    from probes.cli import main

    assert main(["workload", "--hidden", "64", "--out", str(tmp_path / "w.json")]) == 2
    said = capsys.readouterr()
    assert said.out == "" and said.err.startswith("error: ")  # stdout stays the report's
    assert "To fix:" in said.err and "--heads" in said.err and "--seq-len" in said.err
    assert main(["workload", "--hidden", "64", "--heads", "4", "--ffn-hidden", "96",
                 "--seq-len", "32", "--tp", "3", "--device", "cpu",
                 "--out", str(tmp_path / "w.json")]) == 2
    assert "tp=3 must divide" in capsys.readouterr().err
    assert not (tmp_path / "w.json").exists()
    # before measuring: argparse's one-line error (stderr, exit 2), as for `python -m probes`
    for bad, says in ((str(tmp_path), "is a directory"), ("/dev/null", "is a device"),
                      ("/proc/self/w.json", "kernel's own files")):
        with pytest.raises(SystemExit) as exc:
            main(["workload", "--hidden", "64", "--heads", "4", "--ffn-hidden", "96",
                  "--seq-len", "32", "--device", "cpu", "--out", bad])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and says in err and err.count("\n") == 1, err
        assert "To fix:" in err


def test_a_model_preset_resolves_like_estimate(tmp_path, capsys, single_thread):
    """--model llama3-8b with smaller overrides: the grouped-query ratio (4 query heads per KV
    head) and the model's 32 layers follow, as `estimate` derives them."""
    pytest.importorskip("torch")
    from probes.cli import main

    out = tmp_path / "w.json"
    code = main(["workload", "--model", "llama3-8b", "--hidden", "64", "--heads", "4",
                 "--ffn-hidden", "96", "--seq-len", "32", "--device", "cpu", "--steps", "1",
                 "--warmup-steps", "0", "--no-profile", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0, text
    w = load_report(out).workload
    assert (w.model, w.model_layers, w.hidden, w.heads, w.kv_heads, w.head_dim) == (
        "llama3-8b", 32, 64, 4, 1, 16)
    assert (w.framework, w.recompute, w.micro_batch) == ("fsdp", "none", 1)
    assert "workload llama3-8b (fsdp)" in text and f"report written to {out}" in text


def test_gpuplan_prints_the_node_command_with_the_shape_spelled_out(capsys):
    """The torchrun line `gpuplan probe workload --print-command` prints rebuilds the same
    layer with the probes' own options (what a node without the planner can run)."""
    import shlex

    from planner import WorkloadSpec, build_workload
    from planner.cli import main
    from planner.model import shape_of
    from probes._workload_cli import _explicit, build_parser

    assert main(["probe", "workload", "--model", "mixtral-8x7b", "--seq-len", "4096",
                 "--micro-batch", "2", "--recompute", "selective", "--print-command",
                 "--quick"]) == 0
    line, launch = capsys.readouterr().out.strip().splitlines()
    assert line.startswith("torchrun --standalone --nproc-per-node")
    assert launch.startswith("# or with `gpuplan launch probes`: sky launch --env "
                             "GPUPLAN_PROBE_ARGS='workload --hidden 4096")
    argv = shlex.split(line.split(" -m probes workload ", 1)[1])
    assert argv[-1] == "--quick" and "--out" in argv
    fields = _explicit(build_parser().parse_args(argv))
    expected = shape_of(build_workload(WorkloadSpec(model="mixtral-8x7b", seq_len=4096)),
                        micro_batch=2, recompute="selective")
    assert {k: fields[k] for k in ("hidden", "heads", "kv_heads", "head_dim", "ffn_hidden",
                                   "gated", "seq_len", "micro_batch", "recompute", "experts",
                                   "experts_per_token")} == {
        k: getattr(expected, k) for k in ("hidden", "heads", "kv_heads", "head_dim",
                                          "ffn_hidden", "gated", "seq_len", "micro_batch",
                                          "recompute", "experts", "experts_per_token")}
    assert (fields["model"], fields["model_layers"]) == ("mixtral-8x7b", 32)


def test_version_2_reports_read_without_a_workload_section():
    from probe_reports import h100_report

    data = json.loads(report_to_json(h100_report()))
    data["schema_version"] = 2
    data.pop("workload")
    for r in data["ranks"]:
        r.pop("workload")
    report = parse_report(data)
    assert report.workload is None and report.ranks[0].workload == ()


def test_importing_the_workload_modules_does_not_load_torch():
    code = ("import sys, probes, probes._workload_cli, probes._workload_run, "
            "probes._workload_config, planner.model, planner.store\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_the_launch_task_reaches_the_workload_probe_through_its_extra_arguments():
    """`gpuplan launch probes` runs `-m probes --out report.json $GPUPLAN_PROBE_ARGS`: with
    GPUPLAN_PROBE_ARGS="workload --model ..." the workload probe runs and writes report.json."""
    from probes.cli import workload_position

    assert workload_position(["workload", "--hidden", "64"]) == 0
    assert workload_position(["--out", "report.json", "workload", "--quick"]) == 2
    assert workload_position(["--out", "workload", "--quick"]) is None  # a file named so
    assert workload_position(["--quick", "--probes", "matmul"]) is None


def test_the_layer_size_check_counts_parameters_as_the_planner_does():
    """Before building on a GPU the probe checks that one layer's weights and AdamW state fit:
    its parameter count is the planner's (all experts of an MoE layer live on each GPU)."""
    pytest.importorskip("torch")
    from planner import preset
    from probes._workload import layer_params

    for name in ("llama3-8b", "mixtral-8x7b"):
        arch, seq = preset(name)
        cfg = WorkloadConfig(hidden=arch.hidden, heads=arch.heads, kv_heads=arch.kv_heads,
                             ffn_hidden=arch.expert_ffn, seq_len=seq, experts=arch.experts,
                             experts_per_token=arch.experts_per_token)
        assert layer_params(cfg) == arch.layer_params_total() / arch.layers
    half = WorkloadConfig(hidden=4096, heads=32, kv_heads=8, ffn_hidden=14336, seq_len=8, tp=2)
    assert layer_params(half) == (218_112_000 - 2 * 4096) // 2 + 2 * 4096


def test_a_mistyped_workload_option_is_one_line_with_the_close_match(capsys):
    from probes.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["workload", "--modle", "llama3-8b"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1
    assert "Did you mean --model?" in err and "`python -m probes workload --help`" in err
