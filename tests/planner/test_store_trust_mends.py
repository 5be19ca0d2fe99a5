"""Trust in stored workload reports, from a tester's sweep (items 1, 2, 3, 6 and 7): an edited
per-step P10 or P90 is held to the bounds of the median, workload reports 10x apart are not
averaged, a relabelling `--accelerator` is held to the report it relabels, and the range note
names why a measurement widened the range.

Reports are the builders' (tests/probe_reports.py), edited in their JSON as the tester edited
the files `python -m probes workload` writes (``d["workload"][...] = ...``).
"""

from __future__ import annotations

import json
import math

import pytest
from probe_reports import (
    LLAMA3_8B_LAYER,
    h100_report,
    h100_workload_report,
    unknown_gpu_data,
)
from probe_store import H100, put, refused

from planner import CalibrationError, PlanPins, Workload, cluster_for_instance, estimate, preset
from planner.cli import main
from planner.model import NO_CALIBRATION, Assumptions, WorkloadMeasurement, WorkloadShape
from planner.store import ingest, ingest_bytes, list_reports, load_calibration
from probes import report_to_json, write_report_atomic

LAYER = WorkloadShape(**LLAMA3_8B_LAYER)


def _edited(**section) -> bytes:
    """The fixture's workload report (30 ms per layer, P10 0.99x and P90 1.02x of it) with
    fields of its workload section set as a hand edit would."""
    data = json.loads(report_to_json(h100_workload_report()))
    data["workload"].update(section)
    return json.dumps(data).encode()


def _llama3_8b(**kw) -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e12, seq_len=seq, framework="fsdp", **kw)


# -- item 1: the P10 and P90 are held to the median's bounds ----------------------------------
@pytest.mark.parametrize("section, why", [
    # 1e-12 s: gave σ 9.4 and a P10-P90 of 2,257,731,446 h both; the plan turned infeasible
    ({"layer_fwd_bwd_seconds_p10": 1e-12}, "its P10 over steps and GPUs: 1e-09 ms per layer is "
                                           "faster than its 1.24e+13 FLOPs at the datasheet "
                                           "peak 989.5 TFLOP/s (12.5 ms): impossible"),
    # 80,000 s (under the schema's day): gave a P10-P90 of 1-1,200,684 h
    ({"layer_fwd_bwd_seconds_p90": 80000.0}, "its P90 over steps and GPUs: 8e+07 ms per layer "
                                             "is over 20x the modelled"),
    # possible for the hardware, not for one run: a tenth of its steps twice as fast
    ({"layer_fwd_bwd_seconds_p10": 0.014}, "its P10 over steps and GPUs: 14 ms per layer is "
                                           "under 50% of its median 30 ms"),
    # a tenth of the steps at under half speed: a faulty run
    ({"layer_fwd_bwd_seconds_p90": 0.070}, "its P90 over steps and GPUs: 70 ms per layer is "
                                           "over 2x its median 30 ms: a tenth of the steps or "
                                           "GPUs ran at half speed or worse"),
], ids=["p10-beats-the-peak", "p90-broken", "p10-under-half", "p90-over-twice"])
def test_an_edited_step_percentile_refuses_the_report(catalog, section, why):
    stored = ingest_bytes(_edited(**section), catalog, source="wl.json")
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", LAYER) is None
    (reason,) = refused(cal, stored.id)
    assert why in reason, reason
    assert "To fix:" in reason or reason.endswith(("impossible", "CPU fallback)"))


def test_an_honest_step_spread_still_calibrates(catalog):
    stored = ingest_bytes(_edited(layer_fwd_bwd_seconds_p10=0.016,
                                  layer_fwd_bwd_seconds_p90=0.058), catalog, source="wl.json")
    m = load_calibration(catalog).workload(H100, "fsdp", LAYER)
    assert m is not None and m.report_ids == (stored.id,)


def test_an_edited_p10_leaves_the_estimate_range_as_without_it(tmp_path, catalog):
    """The tester's run: `estimate --model llama3-8b --instance p5.48xlarge --framework fsdp`
    after ingesting the hardware report and the edited one printed P10-P90 2,257,731,446-
    2,257,731,446 h with σ 9.423."""
    put(tmp_path, catalog, h100_report())
    ingest_bytes(_edited(layer_fwd_bwd_seconds_p10=1e-12), catalog, source="wl.json")
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is not None and not cal.workload_layers
    cluster = cluster_for_instance(catalog, catalog.instance_type("p5.48xlarge"), 1)
    got = estimate(_llama3_8b(), cluster, calibration=cal).wall_clock
    assert got.p10 < got.p50 < got.p90 < 3 * got.p50
    # the σ of an estimate no workload measurement covers
    assert got.log_sigma == estimate(_llama3_8b(), cluster).wall_clock.log_sigma < 0.3


def test_a_measured_spread_widens_sigma_at_most_by_what_a_run_can_show():
    """A Calibration built by hand (or ratios of shapes that disagree) with P10-P90 of
    1e-9-1: σ was ln(1e9)/2.563 = 8.1; it is taken as the widest spread the rules accept
    (P90/P10 = 8: each report within 2x of its median, reports within 2x of each other)."""
    m = WorkloadMeasurement(accelerator=H100, framework="fsdp", shape=LAYER,
                            measured_shape=LAYER, distance=0.0, measured_layer_seconds=0.03,
                            modelled_layer_seconds=0.025, time_ratio=1.2, time_ratio_p10=1e-9,
                            time_ratio_p90=1.0, modelled_layer_memory_bytes=1.0, source="x")
    assert m.log_sigma == pytest.approx(math.log(8.0) / (2 * 1.2815515655446004))
    honest = WorkloadMeasurement(**{**{f: getattr(m, f) for f in m.__dataclass_fields__},
                                    "time_ratio_p10": 1.19, "time_ratio_p90": 1.22})
    assert honest.log_sigma == pytest.approx(math.log(1.22 / 1.19) / (2 * 1.2815515655446004))


@pytest.mark.parametrize("sigma", [5.5, 7.0, 9.423])
def test_the_calendar_range_never_collapses_at_a_wide_sigma(sigma):
    """60 halvings of [0, B·e^(6σ)] resolve B·e^(6σ)/2^60: at σ 9.4 both quantiles came back as
    the first step (2,257,731,446 h each, median 731 h)."""
    import numpy as np

    from planner.model._goodput import calendar_range, goodput_arrays
    from planner.model._probability import probability_within

    kw = {"gpus": 8, "nodes": 1, "checkpoint_bytes": 1e11, "A": Assumptions(),
          "interruption_rate_per_node_hour": 0.0, "restart_minutes": 18.75}
    q10, q90, _, _ = calendar_range(ideal_hours=700.0, sigma=sigma, **kw)
    g = goodput_arrays(ideal_hours=np.array([700.0]), **kw)
    base = float(np.ravel(g["checkpointed_hours"])[0])
    assert q10 < base < q90
    p = probability_within(np.array([q10, q90]), base_hours=base, sigma=sigma,
                           loss_hours=float(np.ravel(g["loss_hours"])[0]),
                           rate=float(np.ravel(g["rate"])[0]))
    assert p == pytest.approx([0.1, 0.9], abs=1e-6)


# -- item 2: workload reports 10x apart are not averaged ---------------------------------------
def test_workload_reports_ten_times_apart_calibrate_nothing(tmp_path, catalog):
    """30 and 300 ms per layer were "165.0 ms/layer (reports 1, 2): median of 2 reports", as
    hardware figures 2x apart are not."""
    put(tmp_path, catalog, h100_workload_report(), "a.json")
    put(tmp_path, catalog, h100_workload_report(layer_ms=300.0,
                                                created_utc="2026-02-02T12:00:00Z"), "b.json")
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", LAYER) is None and not cal.used()
    for rid in (1, 2):
        (why,) = refused(cal, rid)
        assert why.startswith("the reports of this figure disagree more than 2x (30 ms in "
                              "report 1, 300 ms in report 2): none is used. To fix: remove the "
                              "wrong one (`gpuplan probe remove ID`)"), why


def test_workload_reports_whose_activations_are_far_apart_calibrate_nothing(tmp_path, catalog):
    put(tmp_path, catalog, h100_workload_report(), "a.json")
    put(tmp_path, catalog, h100_workload_report(layer_ms=31.0, activation_mib=4000.0,
                                                created_utc="2026-02-02T12:00:00Z"), "b.json")
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", LAYER) is None
    (why,) = refused(cal, 2)
    assert "disagree more than 2x (1,400.0 MiB of activations in report 1, 4,000.0 MiB of " \
           "activations in report 2)" in why
    # within 2x they still combine by the median
    put(tmp_path, catalog, h100_workload_report(layer_ms=40.0,
                                                created_utc="2026-02-03T12:00:00Z"), "c.json")
    from planner.store import remove_reports

    remove_reports([2])
    m = load_calibration(catalog).workload(H100, "fsdp", LAYER)
    assert m.n_reports == 2 and m.measured_layer_seconds == pytest.approx(0.035)


# -- item 3: a relabelling --accelerator is held to the report it relabels ---------------------
def _edited_copy(tmp_path):
    """The stored H100 report re-saved with its GPU named "Foo GPU", no instance or cloud, and
    150 GB of memory: the same measurements, so ingest matches it to the stored run."""
    data = unknown_gpu_data(h100_report(), gpu_memory_bytes=150_000_000_000)
    path = tmp_path / "copy.json"
    path.write_text(json.dumps(data))
    return path


def test_a_copy_cannot_relabel_a_stored_report_of_another_gpu(tmp_path, catalog):
    """It said "already stored as report 1 (same measurements); its accelerator is now
    H200-SXM-141GB" and the H100 calibration was lost."""
    first = put(tmp_path, catalog, h100_report())
    with pytest.raises(CalibrationError) as info:
        ingest(_edited_copy(tmp_path), catalog, accelerator="H200-SXM-141GB")
    text = str(info.value)
    assert text.startswith("this file has the measurements of stored report 1, and "
                           "`accelerator` would relabel that report, but the report measured "
                           "'NVIDIA H100 80GB HBM3' (H100-SXM5-80GB), not H200-SXM-141GB")
    assert "To fix:" in text and "\n" not in text
    (stored,) = list_reports()
    assert stored.id == first.id and stored.accelerator == H100
    assert load_calibration(catalog).matmul(H100, "bf16") is not None


def test_the_cli_refuses_the_relabel_in_one_line_exit_2(tmp_path, catalog, capsys):
    put(tmp_path, catalog, h100_report())
    code = main(["probe", "ingest", str(_edited_copy(tmp_path)), "--accelerator",
                 "H200-SXM-141GB"])
    out, err = capsys.readouterr()
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1
    assert "--accelerator would relabel" in err and "To fix:" in err
    assert "Traceback" not in out + err and list_reports()[0].accelerator == H100


# -- item 6: the range note names why the range widened ----------------------------------------
def test_one_report_widening_the_range_is_not_called_a_disagreement(tmp_path, catalog):
    """`estimate … --micro-batch 4 --zero 2` with one workload report said "(the measurements
    used disagree)": the measured shape is 2 away (the model's σ stays whole) and the report's
    own spread adds to it."""
    put(tmp_path, catalog, h100_workload_report())
    w = _llama3_8b(recompute="none", pins=PlanPins(micro_batch=4, zero=2))
    cluster = cluster_for_instance(catalog, catalog.instance_type("p5.48xlarge"), 1)
    measured = estimate(w, cluster, calibration=load_calibration(catalog))
    plain = estimate(w, cluster, calibration=NO_CALIBRATION)
    assert measured.wall_clock.log_sigma > plain.wall_clock.log_sigma
    line = next(x for x in measured.calibrated if x.startswith("layer time:"))
    assert "disagree" not in line
    assert "range widened from σ " in line and "(report 1's own measured/modelled P10–P90 " in line
    assert "over its steps and GPUs; the measured shape is 2.00 away" in line
    # both σ, to the decimals that part them: "widened to σ 0.251" read as no change beside
    # the 0.2506 the estimate has without the probe (review, 2026-12-07)
    assert "the range widened from σ 0.2506 to 0.2508 (" in line, line


# -- item 7: `probe show --json` does not invent an ingest status ------------------------------
def test_ingest_status_is_said_by_ingest_only(tmp_path, catalog, capsys):
    path = write_report_atomic(h100_report(), tmp_path / "r.json")
    assert main(["probe", "ingest", str(path), "--json"]) == 0
    (ingested,) = json.loads(capsys.readouterr().out)
    assert ingested["ingest_status"] == "stored"
    assert main(["probe", "ingest", str(path), "--json"]) == 0
    (again,) = json.loads(capsys.readouterr().out)
    # a fixed value, the words beside it (tests/cli/test_probe_ingest_all_or_none.py)
    assert again["ingest_status"] == "already_stored"
    assert again["ingest_note"] == "already stored as report 1 (same file)"
    assert main(["probe", "show", "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert "ingest_status" not in shown and shown["id"] == 1 and shown["used"]
