"""The reports `benchmarks/gpu_check.py` wrote on a real NVIDIA H200 (2026-12-04,
benchmarks/data/gpu_check_h200_2026-12-04/, untouched): what the store, the calibration and the
estimate do with real GPU output rather than the synthetic reports of tests/probe_reports.py.

The figures pinned here are the report's own (read from its JSON), so the tests check the
planner's handling of them, not the machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner import Workload, estimate, preset, reference_cluster
from planner.model import WorkloadShape
from planner.store import ingest, load_calibration
from probes import load_report, report_figures, workload_refusal

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"
H200 = "H200-SXM-141GB"


@pytest.fixture(scope="module")
def catalog():
    from catalog import load_catalog

    return load_catalog()


def _json(name: str) -> dict:
    return json.loads((RUN / name).read_text())


def _stored(tmp_path, catalog, *names):
    db = tmp_path / "probes.db"
    for name in names:
        ingest(RUN / name, catalog, db=db)
    return load_calibration(catalog, db=db)


def test_the_real_reports_load_and_contradict_nothing():
    """The consistency checks (probes/_consistency.py, tolerance 1e-6) were set on CPU runs;
    a real H200 run passes them: nothing refused as edited or merged."""
    hardware, workload = (load_report(RUN / name) for name in ("probe-report.json",
                                                               "workload-report.json"))
    for report in (hardware, workload):
        assert report.environment.gpu_model == "NVIDIA H200" and report.errors == ()
    refused = {f.name: f.refusal for f in report_figures(hardware) if f.refusal}
    # fp8 with fast accumulation is refused by design (recorded for comparison only)
    assert report_figures(hardware) and set(refused) == {"fp8_e4m3_fast"}, refused
    assert workload.workload.status == "measured" and workload_refusal(workload) is None


def test_the_hardware_report_calibrates_the_h200_with_its_own_figures(tmp_path, catalog):
    raw = _json("probe-report.json")
    best = {d["dtype"]: d["best_tflops"] for d in raw["matmul"]["dtypes"]}
    copy = next(p["gb_per_s"] for p in raw["memory"]["points"] if p["name"] == "device_copy")
    cal = _stored(tmp_path, catalog, "probe-report.json")
    assert cal.matmul(H200, "bf16").value == pytest.approx(best["bf16"])
    assert cal.matmul(H200, "fp8").value == pytest.approx(best["fp8_e4m3"])
    assert cal.hbm(H200).value == pytest.approx(copy)
    (fast,) = [n for n in cal.rejected() if "fp8_fast" in n.line()]
    assert "fast accumulation is recorded for comparison" in fast.reason


def test_the_estimate_uses_the_measured_h200_and_says_so(tmp_path, catalog):
    raw = _json("probe-report.json")
    bf16 = next(d["best_tflops"] for d in raw["matmul"]["dtypes"] if d["dtype"] == "bf16")
    copy = next(p["gb_per_s"] for p in raw["memory"]["points"] if p["name"] == "device_copy")
    cal = _stored(tmp_path, catalog, "probe-report.json")
    arch, seq = preset("llama3-8b")
    workload = Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=4 * 2**20)
    cluster = reference_cluster(catalog, H200, 8)
    before = estimate(workload, cluster)
    after = estimate(workload, cluster, calibration=cal)
    # the H200 multiplied at 679.7 TFLOP/s, below the Hopper default of 0.801 x 989.5
    assert bf16 < 0.801 * 989.5 and after.step_time_s > before.step_time_s
    text = "\n".join(after.assumptions)
    assert f"matmul bf16: measured {bf16:.1f} TFLOP/s" in text
    # the elementwise line quotes the measured copy, not copy / 0.85 (above the datasheet)
    assert f"HBM {copy:.0f} GB/s (the measured copy) for elementwise kernels" in text
    assert f"{copy / 0.85:g}" not in text
    assert any(a.startswith("HBM 4800 GB/s × 0.85 for elementwise") for a in before.assumptions)


def test_the_workload_report_calibrates_its_own_layer(tmp_path, catalog):
    """The 1B-class layer (Llama 3.2 1B shape, 4,096 x 2 tokens): found for its shape with the
    measured time and both activation counts; the modelled layer is the planner's own at the
    measured matmul rate (the hardware report is stored beside it, as gpu_check does)."""
    w = _json("workload-report.json")["workload"]
    shape = WorkloadShape(hidden=w["hidden"], heads=w["heads"], kv_heads=w["kv_heads"],
                          head_dim=w["head_dim"], ffn_hidden=w["ffn_hidden"], gated=w["gated"],
                          seq_len=w["seq_len"], micro_batch=w["micro_batch"],
                          precision=w["precision"], recompute=w["recompute"])
    cal = _stored(tmp_path, catalog, "probe-report.json", "workload-report.json")
    m = cal.workload(H200, "fsdp", shape)
    assert m is not None and m.distance == 0.0
    assert m.measured_layer_seconds == pytest.approx(w["layer_fwd_bwd_seconds"])
    assert m.measured_layer_memory_bytes == pytest.approx(w["layer_activation_bytes"])
    # the allocator and autograd's saved tensors agree to 1 kB in 769 MiB on the GPU
    assert w["layer_saved_bytes"] == pytest.approx(w["layer_activation_bytes"], rel=1e-5)
    assert m.time_ratio == pytest.approx(w["layer_fwd_bwd_seconds"]
                                         / m.modelled_layer_seconds)
    assert m.memory_ratio == pytest.approx(w["layer_activation_bytes"]
                                           / m.modelled_layer_memory_bytes)
    # the eager layer's count (silu(gate) and the repeated K/V kept) is the allocator's to 0.2%;
    # the Megatron-style count alone was 592 MiB, 23% short
    assert m.modelled_layer_memory_bytes == pytest.approx(w["layer_activation_bytes"],
                                                          rel=0.002)


def test_a_range_the_workload_probe_widened_is_not_said_to_be_narrowed(tmp_path, catalog):
    """A measured shape 2.00 away widened the range (σ 0.251), and the range note said
    "narrowed by the workload probe" beside it (workload-probe sweep, 2026-12-06)."""
    from planner.model import WorkloadSpec, build_workload

    cal = _stored(tmp_path, catalog, "probe-report.json", "workload-report.json")
    w = build_workload(WorkloadSpec(model="llama3-8b", tokens="1B", seq_len=4096,
                                    framework="fsdp", arch_overrides=(
                                        ("layers", 16), ("hidden", 2048), ("heads", 32),
                                        ("kv_heads", 8), ("ffn_hidden", 8192))))
    est = estimate(w, reference_cluster(catalog, H200, 8), calibration=cal)
    said = " ".join(est.calibrated + est.assumptions)
    layer = next(n for n in est.calibrated if n.startswith("layer time:"))
    if "widened from σ" in layer:
        assert "narrowed by the workload probe" not in said, said
        assert "widened by the workload probe" in said
    elif "narrowed from σ" in layer:
        assert "narrowed by the workload probe" in said
    else:
        assert "by the workload probe" not in said
