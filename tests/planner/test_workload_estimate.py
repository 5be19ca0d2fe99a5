"""A workload probe's per-layer measurement in `estimate` and `plan` (issue #20): it changes the
estimate for the measured shape and framework on that accelerator only, says so, and narrows
the P10–P90 range by the share of the step it covers."""

from __future__ import annotations

import pytest
from probe_reports import h100_workload_report
from small_catalog import make_offer, small_catalog

from catalog import load_catalog
from planner import (
    Constraints,
    PlanPins,
    Workload,
    cluster_for_instance,
    estimate,
    plan,
    preset,
)
from planner.store import ingest, load_calibration
from probes import write_report_atomic

H100 = "H100-SXM5-80GB"


@pytest.fixture()
def calibrated(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    # 60 ms per Llama-3 8B layer at 8,192 tokens, micro-batch 1 (slower than modelled)
    path = write_report_atomic(h100_workload_report(layer_ms=60.0), tmp_path / "w.json")
    ingest(path, cat)
    return cat, load_calibration(cat)


def llama3_8b(**kw) -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e12, seq_len=seq, framework="fsdp", **kw)


def cluster(cat, nodes=1):
    return cluster_for_instance(cat, cat.instance_type("p5.48xlarge"), nodes)


def test_the_measured_shape_is_scaled_stated_and_its_range_narrowed(calibrated):
    cat, cal = calibrated
    w = llama3_8b(recompute="none", pins=PlanPins(micro_batch=1, tp=1))
    plain = estimate(w, cluster(cat))
    measured = estimate(w, cluster(cat), calibration=cal)
    # 60 ms measured per layer is more than the model's: the run is slower, and says why
    assert measured.step_time_s > plain.step_time_s
    line = next(x for x in measured.calibrated if x.startswith("layer time:"))
    assert "per layer measured" in line and "modelled" in line and "scaled by" in line
    # the layers' work is measured: only the rest keeps the fit's throughput spread
    assert measured.wall_clock.log_sigma < plain.wall_clock.log_sigma


def test_another_shape_or_framework_is_unchanged(calibrated):
    cat, cal = calibrated
    for w in (Workload(arch=preset("llama3-8b")[0], tokens=1e12, seq_len=2048,
                       framework="fsdp", recompute="none", pins=PlanPins(micro_batch=4, tp=1)),
              Workload(arch=preset("llama3-8b")[0], tokens=1e12, seq_len=8192,
                       framework="megatron", recompute="none",
                       pins=PlanPins(micro_batch=1, tp=1))):
        plain = estimate(w, cluster(cat))
        with_cal = estimate(w, cluster(cat), calibration=cal)
        assert with_cal.step_time_s == pytest.approx(plain.step_time_s, rel=1e-12)
        assert not any(x.startswith("layer time:") for x in with_cal.calibrated)


def test_plan_uses_the_measurement_for_the_candidates_it_applies_to(calibrated):
    cat, cal = calibrated
    offers = [make_offer("aws", "p5.48xlarge", "us-east-1", "on_demand", 55.04)]
    w = llama3_8b(recompute="none", pins=PlanPins(micro_batch=1, tp=1))
    c = Constraints(deadline_hours=1e5, max_gpus=16)
    base = plan(w, small_catalog(offers), c).recommendation
    measured = plan(w, small_catalog(offers), c, calibration=cal).recommendation
    assert measured.wall_clock_hours > base.wall_clock_hours
    assert measured.distribution["sigma"] < base.distribution["sigma"]
    assert any(x.startswith("layer time:") for x in measured.estimate.calibrated)


# -- measured activations ----------------------------------------------------------------------
@pytest.fixture()
def heavy(tmp_path, monkeypatch):
    """A stack that keeps 3x the activations the model counts for the Llama-3 8B layer (the
    modelled 1,408 MiB at micro-batch 1, no recomputation, fsdp): 4,224 MiB measured, in the
    modelled time."""
    from probe_reports import LLAMA3_8B_LAYER

    from planner.model import WorkloadShape, hardware_for, model_layer

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    shape = WorkloadShape(**LLAMA3_8B_LAYER)
    # timed as modelled (time ratio 1), so that only the memory differs from the model's
    model = model_layer(shape, framework="fsdp", hardware=hardware_for(
        cat.accelerator(H100), shape, framework="fsdp", attention="flash"))
    assert model.activation_bytes == 1408 * 2**20
    path = write_report_atomic(h100_workload_report(layer_ms=model.layer_seconds * 1e3,
                                                    activation_mib=3 * 1408.0),
                               tmp_path / "w.json")
    ingest(path, cat)
    return cat, load_calibration(cat)


def test_measured_activations_scale_the_memory_of_the_measured_rows(heavy):
    cat, cal = heavy
    w = llama3_8b(recompute="none", pins=PlanPins(micro_batch=1, tp=4))
    plain = estimate(w, cluster(cat))
    measured = estimate(w, cluster(cat), calibration=cal)
    assert plain.plan == measured.plan
    assert measured.memory["activations_gib"] == pytest.approx(
        3 * plain.memory["activations_gib"], rel=1e-3)
    line = next(x for x in measured.calibrated if x.startswith("layer time:"))
    assert "activations scaled by 3.00 (measured)" in line


def test_a_stack_that_keeps_more_gets_a_plan_that_fits_it(heavy):
    """Uncalibrated, 8 H100s run Llama-3 8B without recomputation at micro-batch 1 (tp1,
    67 GiB of 76 usable); with 3x the activations measured that plan would need 155 GiB, and
    neither estimate nor the search may offer it."""
    cat, cal = heavy
    w = llama3_8b(pins=PlanPins(micro_batch=1))
    plain = estimate(w, cluster(cat))
    assert plain.plan.recompute == "none"
    measured = estimate(w, cluster(cat), calibration=cal)
    capacity = 80 * 0.95
    assert plain.memory["total_gib"] + 2 * plain.memory["activations_gib"] > capacity
    assert measured.plan != plain.plan and measured.memory["total_gib"] <= capacity
    unscaled = estimate(llama3_8b(recompute="none", pins=PlanPins(
        micro_batch=1, tp=measured.plan.tp, pp=measured.plan.pp)), cluster(cat))
    if measured.plan.recompute == "none":  # kept only where 3x its activations still fit
        assert measured.memory["activations_gib"] == pytest.approx(
            3 * unscaled.memory["activations_gib"], rel=1e-3)
    else:
        assert unscaled.memory["total_gib"] + 2 * unscaled.memory["activations_gib"] > capacity
    offers = [make_offer("aws", "p5.48xlarge", "us-east-1", "on_demand", 55.04)]
    c = Constraints(deadline_hours=1e5, max_gpus=8)
    rec = plan(w, small_catalog(offers), c, calibration=cal).recommendation
    assert rec.estimate.memory["total_gib"] <= capacity
    assert rec.estimate.plan == measured.plan


def test_measuring_one_recomputation_does_not_push_plans_to_its_neighbour(tmp_path, monkeypatch):
    """The stack's measured/modelled time at "none" transfers to "selective" and "full" (0.5
    and 1.0 away): a ratio kept for the measured setting alone made "none" look slower than
    an unmeasured "selective" and switched the plan to recomputation, and with only
    "selective" reached, to "full" (reviews 2026-12-04). Activations do not transfer across
    recomputation (it changes what is kept)."""
    from planner import reference_cluster
    from planner.model import shape_of

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    ingest(write_report_atomic(h100_workload_report(layer_ms=30.0), tmp_path / "w.json"), cat)
    cal = load_calibration(cat)
    w = llama3_8b(pins=PlanPins(micro_batch=1))
    plain = estimate(w, cluster(cat))
    measured = estimate(w, cluster(cat), calibration=cal)
    assert plain.plan.recompute == measured.plan.recompute == "none"
    # two GPUs: uncalibrated, recomputation is needed; the calibrated plan is the same one
    two = reference_cluster(cat, H100, 2)
    assert estimate(w, two).plan == estimate(w, two, calibration=cal).plan
    none, sel, full = (cal.workload(H100, "fsdp", shape_of(w, micro_batch=1, recompute=rc))
                       for rc in ("none", "selective", "full"))
    assert (none.distance, sel.distance, full.distance) == (0.0, 0.5, 1.0)
    assert sel.time_ratio == pytest.approx(none.time_ratio) == pytest.approx(full.time_ratio)
    assert none.memory_ratio is not None and sel.memory_ratio is full.memory_ratio is None
    # nor are the measured setting's activations printed beside an unscaled estimate
    assert sel.measured_layer_memory_bytes is None and "activations" not in sel.summary()


def test_the_cli_estimate_when_only_the_measured_activations_fit(tmp_path, monkeypatch, capsys):
    """5 H100s hold Llama-3 8B without recomputation only with the stack's measured 0.85x
    activations; the CLI's comparison with datasheet defaults then raised "does not fit" and
    the command failed (review 2026-12-04). It answers, and says the defaults do not fit."""
    import json

    from planner.cli import main

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    ingest(write_report_atomic(h100_workload_report(activation_mib=0.85 * 1408),
                               tmp_path / "w.json"), cat)
    argv = ["estimate", "--model", "llama3-8b", "--framework", "fsdp", "--gpu", "H100",
            "--gpus", "5", "--recompute", "none"]
    with pytest.raises(Exception, match="fit"):
        estimate(llama3_8b(recompute="none"), planner_cluster(cat, 5))
    assert main(argv) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "with datasheet defaults no plan fits (the measured activations are smaller)" in out
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["wall_clock_hours_without_calibration"] is None and d["wall_clock_hours"] > 0


def planner_cluster(cat, gpus):
    from planner import reference_cluster

    return reference_cluster(cat, H100, gpus)


def test_a_full_recomputation_measurement_scales_the_kept_inputs_not_the_live_layer():
    """Under full recomputation each layer keeps its input (what the probe measures) and the
    layer recomputed in backward keeps the "none" count, which that run did not measure: the
    ratio scales only the first (review 2026-12-04)."""
    import numpy as np

    from planner.model import Assumptions, ModelScalars, memory_terms

    ms = ModelScalars.of(llama3_8b())
    A = Assumptions()
    one = np.array([1.0])

    def activations(measured):
        return float(memory_terms(ms, A, tp=one, pp=one, dp=one * 8, zero=one * 3, mb=one,
                                  rc=one * 2, memory_gib=one * 80,
                                  measured=measured)["memory_activations_gib"][0])

    # f(r) = r·kept + live: the kept inputs scale, the live layer stays
    plain, doubled = activations(None), activations({(1, 2): 2.0})
    kept, live = doubled - plain, 2 * plain - doubled
    assert kept > 0 and live > 0
    assert activations({(1, 2): 3.0}) == pytest.approx(3 * kept + live)
    assert activations({(1, 0): 3.0}) == plain  # a ratio for another setting: nothing


def _assert_measured_rows_not_preferred(w, cl, plain, measured) -> None:
    """The calibrated plan is one the uncalibrated model times as fast as its own best (a
    near-tie may break either way), slower by the measured 1.2x: no row escaped the ratio."""
    from dataclasses import replace

    from planner.model import PlanPins

    p = measured.plan
    as_planned = estimate(replace(w, pins=PlanPins(
        tp=p.tp, pp=p.pp, cp=p.cp, zero=p.zero_stage, micro_batch=p.micro_batch)), cl)
    assert as_planned.step_time_s <= plain.step_time_s * 1.01
    assert 1.15 < measured.step_time_s / plain.step_time_s < 1.2


def test_a_measured_stack_keeps_its_plan_at_every_micro_batch(tmp_path, monkeypatch):
    """Measured at micro-batch 1 (1.2x the model), the stack was planned at micro-batch 2
    with selective recomputation or micro-batch 4 at tp4 — rows the ratio did not reach,
    which looked faster — for a step only 1.07-1.16x the uncalibrated one (review
    2026-12-04). The ratio reaches every row of the grid: the plan is one the uncalibrated
    model times as fast as its own best, slower by the measured share."""
    from planner import reference_cluster

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    ingest(write_report_atomic(h100_workload_report(layer_ms=30.0), tmp_path / "w.json"), cat)
    cal = load_calibration(cat)
    w = llama3_8b()
    for gpus in (8, 256):
        cl = reference_cluster(cat, H100, gpus)
        plain, measured = estimate(w, cl), estimate(w, cl, calibration=cal)
        _assert_measured_rows_not_preferred(w, cl, plain, measured)


def test_a_measurement_of_other_sizes_reaches_every_row_too(tmp_path, monkeypatch):
    """A layer of half the hidden size (distance 1) reached only micro-batch 1 without
    recomputation; the search moved to micro-batch 2 on tp2, unscaled, at 1.04x where the
    measured rows were 1.15x (second review 2026-12-04). Whether a measurement transfers is
    decided by the layer sizes alone; every micro-batch and recomputation then gets it."""
    from probe_reports import LLAMA3_8B_LAYER

    from planner import reference_cluster
    from planner.model import WorkloadShape, hardware_for, model_layer, shape_of

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    half = {"hidden": 2048, "heads": 16, "kv_heads": 4, "ffn_hidden": 7168}
    shape = WorkloadShape(**{**LLAMA3_8B_LAYER, **half})
    model = model_layer(shape, framework="fsdp", hardware=hardware_for(
        cat.accelerator(H100), shape, framework="fsdp", attention="flash"))
    ingest(write_report_atomic(h100_workload_report(
        layer_ms=1.2 * model.layer_seconds * 1e3, activation_mib=None, shape=half),
        tmp_path / "w.json"), cat)
    cal = load_calibration(cat)
    w = llama3_8b()
    for mb, rc in ((1, "none"), (1, "selective"), (1, "full"), (2, "none"), (8, "none")):
        m = cal.workload(H100, "fsdp", shape_of(w, micro_batch=mb, recompute=rc))
        assert m is not None and m.time_ratio == pytest.approx(1.2)
    cl = reference_cluster(cat, H100, 8)
    plain, measured = estimate(w, cl), estimate(w, cl, calibration=cal)
    _assert_measured_rows_not_preferred(w, cl, plain, measured)
    # sizes too far (a quarter of the hidden size): nothing, at any micro-batch
    assert cal.workload(H100, "fsdp", WorkloadShape(**{
        **LLAMA3_8B_LAYER, "hidden": 8192, "heads": 64, "kv_heads": 16,
        "ffn_hidden": 28672})) is None


def test_other_head_counts_are_a_distance_not_an_exact_match():
    """Same sizes with half the heads counted as distance 1e-9 — an exact match, narrowing
    the range fully (second review 2026-12-04)."""
    from probe_reports import LLAMA3_8B_LAYER

    from planner.model import WorkloadShape, shape_distance

    a = WorkloadShape(**LLAMA3_8B_LAYER)
    b = WorkloadShape(**{**LLAMA3_8B_LAYER, "heads": 16, "kv_heads": 4})
    assert shape_distance(a, b) == pytest.approx(1.0)


def test_disagreeing_measurements_say_the_range_widened(tmp_path, monkeypatch):
    """Micro-batch 1 measured at 1.2x the model and micro-batch 4 at 0.8x: at micro-batch 2
    the range takes both spreads and is wider than with no measurement; the note said "kept"
    (second review 2026-12-04)."""
    from probe_reports import LLAMA3_8B_LAYER

    from planner.model import WorkloadShape, hardware_for, model_layer

    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    cat = load_catalog("packaged")
    for mb, ratio in ((1, 1.2), (4, 0.8)):
        shape = WorkloadShape(**{**LLAMA3_8B_LAYER, "micro_batch": mb})
        model = model_layer(shape, framework="fsdp", hardware=hardware_for(
            cat.accelerator(H100), shape, framework="fsdp", attention="flash"))
        ingest(write_report_atomic(h100_workload_report(
            layer_ms=ratio * model.layer_seconds * 1e3, activation_mib=1408.0 * mb,
            shape={"micro_batch": mb}, created_utc=f"2026-02-0{mb}T00:00:00Z"),
            tmp_path / f"w{mb}.json"), cat)
    cal = load_calibration(cat)
    w = llama3_8b(recompute="none", pins=PlanPins(micro_batch=2, tp=2))
    plain, measured = estimate(w, cluster(cat)), estimate(w, cluster(cat), calibration=cal)
    assert measured.wall_clock.log_sigma > plain.wall_clock.log_sigma
    line = next(x for x in measured.calibrated if x.startswith("layer time:"))
    assert "range widened from σ " in line and "(the measurements used disagree)" in line
