"""benchmarks/gpu_check.py: the nccl-tests parser, the clean skip without a GPU, and the whole
flow on CPU (--dry-run) so the script is exercised, not dead code. Its GPU verdicts need a
GPU machine: see docs/probes.md, "Checking the probes on a GPU machine"."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_check.py"

# Trimmed all_reduce_perf output in the layout of nccl-tests 2.x (README "Performance"):
# two header lines, then size, count, type, redop, root, time, algbw, busbw, #wrong, and the
# same time/algbw/busbw/#wrong for in-place.
NCCL_TESTS_OUTPUT = (Path(__file__).parent / "fixtures" / "nccl_tests_all_reduce_perf.txt"
                     ).read_text()


def _load():
    spec = importlib.util.spec_from_file_location("gpu_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_parses_out_of_place_busbw_by_header_column():
    assert _load().parse_nccl_tests(NCCL_TESTS_OUTPUT) == {1024: 0.06, 1073741824: 409.55}


def test_older_layout_without_root_column():
    old = NCCL_TESTS_OUTPUT.replace("    root", "").replace("      -1", "")
    assert _load().parse_nccl_tests(old) == {1024: 0.06, 1073741824: 409.55}


def _run(*argv, home):
    env = dict(os.environ, GPUPLAN_HOME=str(home), GPUPLAN_NO_METADATA="1")
    return subprocess.run([sys.executable, str(SCRIPT), *argv], capture_output=True, text=True,
                          timeout=180, env=env)


def test_help_and_a_clean_skip_without_cuda(tmp_path):
    torch = pytest.importorskip("torch")
    assert _run("--help", home=tmp_path).returncode == 0
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    proc = _run(home=tmp_path)
    assert proc.returncode == 0 and proc.stdout.startswith("no CUDA device: skipped")


def test_the_dry_run_walks_every_check_on_cpu(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    proc = _run("--dry-run", "--out", str(out), home=tmp_path / "home")
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    data = json.loads((out / "gpu_check.json").read_text())
    status = {c["check"]: c["status"] for c in data["checks"]}
    assert list(status) == ["preflight", "probe run", "matmul vs MAMF-lite", "copy vs triad",
                            "burst vs sustained", "fp8 accuracy", "event vs wall clock",
                            "collectives", "workload probe", "planner"]
    assert status["probe run"] == "pass" and status["planner"] == "pass"
    assert status["collectives"] == "not_verified"
    # the workload probe's 1B-class layer needs a GPU: a clear skip on CPU
    workload = next(c for c in data["checks"] if c["check"] == "workload probe")
    assert workload["status"] == "skipped" and workload["detail"].startswith("no GPU:")
    assert status["fp8 accuracy"] in ("pass", "skipped")
    planner = data["checks"][-1]
    # a CPU report is stored in the temporary database but calibrates nothing, and says why
    assert planner["before_hours"] == planner["after_hours"]
    assert any("a cpu run does not measure a GPU" in n for n in planner["not_used"])
    assert (out / "probe-report.json").exists() and (out / "probes.db").exists()


def test_not_verified_fails_only_when_asked_to_verify():
    checks = _load().Checks(strict=True)
    checks.add("collectives", "not_verified", "nccl-tests is not installed")
    checks.add("fp8 accuracy", "pass", "ok")
    assert checks.exit_code(verify=False) == 0 and checks.exit_code(verify=True) == 1
    checks.add("copy vs triad", "fail", "ratio 0.7", timing=True)
    assert checks.exit_code(verify=False) == 1
    cpu = _load().Checks(strict=False)  # a CPU dry run: timing verdicts are only info
    cpu.add("copy vs triad", "fail", "ratio 2.7", timing=True)
    assert cpu.items[0]["status"] == "info" and cpu.exit_code(verify=False) == 0


def test_the_workload_step_runs_its_gpu_path_on_cpu_with_a_tiny_layer(tmp_path):
    """The 1B-class step is GPU-only in the script; here its code runs with a tiny layer on CPU
    so it is not dead code (no catalog accelerator on CPU: no modelled figures)."""
    pytest.importorskip("torch")
    module = _load()
    checks = module.Checks(strict=False)
    tiny = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn_hidden": 96, "seq_len": 32,
            "micro_batch": 2, "model_layers": 2, "steps": 2, "warmup_steps": 1}
    module.check_workload(checks, tmp_path, True, device="cpu", shape=tiny)
    (item,) = checks.items
    assert item["check"] == "workload probe" and item["status"] == "pass", item
    assert "ms fwd+bwd per layer" in item["detail"] and "saved tensors" in item["detail"]
    assert item["layers"] == 2 and item["layer_fwd_bwd_ms"] > 0
    assert (tmp_path / "workload-report.json").exists()


def test_the_workload_step_on_a_gpu_report_compares_with_the_model(tmp_path, monkeypatch):
    """What the step does with a GPU's report (an 8 x H100 node's, tests/probe_reports.py):
    the modelled layer next to the measured one, and the calibration's lookup finding it."""
    from probe_reports import h100_workload_report

    import probes

    def fake_run(config, *, out):
        report = h100_workload_report(layer_ms=30.0)
        probes.write_report_atomic(report, out)
        return report

    monkeypatch.setattr(probes, "run_workload_probe", fake_run)
    module = _load()
    checks = module.Checks(strict=True)
    module.check_workload(checks, tmp_path, True)
    (item,) = checks.items
    assert item["status"] == "pass", item
    # the modelled layer moves with every refit of the fitted constants: the report must
    # state the ratio of the measured 30 ms to whatever the model gives, and the model must
    # give a physical figure for this layer (H100, fsdp: 25.4 ms before the 2026-12-03 refit)
    modelled = item["modelled_ms"]
    assert 20.0 < modelled < 30.0
    ratio = f"measured/modelled {30.0 / modelled:.2f}"
    assert f"{ratio} time" in item["detail"] and "H100-SXM5-80GB" in item["detail"]
    assert ratio in item["calibration"]
