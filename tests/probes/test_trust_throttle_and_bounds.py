"""A report's own evidence that its node was throttled, and values no GPU or run can have
(tester's probetest sweep, c4/c9/c10): a throttled node's figures calibrated plans, an
impossible warm-up burst, temperature, clock or duration was stored and believed, and a
rank listed twice was called a GPU that did not answer.

NVML's clock event reasons (nvml.h, nvmlClocksEventReason*): 0x1 GPU idle, 0x2 application
clocks setting, 0x4 SW power cap, 0x8 HW slowdown, 0x10 sync boost, 0x20 SW thermal slowdown,
0x40 HW thermal slowdown, 0x80 HW power brake, 0x100 display clock setting.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from probe_reports import h100_report, h100_workload_report, report_data_with

from probes import ReportError, load_report, report_from_bytes, report_to_json
from probes._figures import report_figures, workload_refusal
from probes._schema import GpuTelemetry

ROOT = Path(__file__).resolve().parents[2]
H200_RUN = ROOT / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"


def _loaded(mask: str = "0x0000000000000004", *, sm_clock_mhz: int = 1380,
            power_limit_w: float = 700.0) -> GpuTelemetry:
    """A GPU during the matmul warm-up, as the H200 of docs/probes.md was (power-bound)."""
    return GpuTelemetry(sampled="under_load", sm_clock_mhz=sm_clock_mhz, memory_clock_mhz=2619,
                        power_draw_w=690.0, power_limit_w=power_limit_w,
                        power_default_limit_w=700.0, temperature_c=62.0,
                        clock_event_reasons=mask, mig_mode="Disabled", ecc_mode="Enabled")


def _under_load(report, telemetry: dict[int, GpuTelemetry]):
    """``report`` with ranks' telemetry under load set from {rank: telemetry}; rank 0's also
    in the matmul section, as the probe's gather keeps it."""
    ranks = tuple(dataclasses.replace(r, under_load=telemetry.get(r.rank)) for r in report.ranks)
    return dataclasses.replace(report, ranks=ranks, matmul=dataclasses.replace(
        report.matmul, under_load=telemetry.get(0)))


def _refusals(report) -> set[str | None]:
    return {f.refusal for f in report_figures(report)}


# -- 1. throttle evidence ---------------------------------------------------------------------
def test_a_healthy_power_capped_node_still_calibrates():
    """0x4 (SW power cap) at ~70% of the maximum clock is what a healthy H100/H200 shows under
    matmul (the real H200 run: 0x4, 1,380 of 1,980 MHz): it is not throttling."""
    healthy = _under_load(h100_report(), {r: _loaded() for r in range(8)})
    assert _refusals(healthy) == {None}
    for mask in ("0x0000000000000000", "0x0000000000000001", "0x0000000000000014", "[N/A]"):
        assert _refusals(_under_load(h100_report(), {0: _loaded(mask)})) == {None}, mask


def test_the_real_h200_run_still_calibrates():
    report = load_report(H200_RUN / "probe-report.json")
    assert report.matmul.under_load.clock_event_reasons == "0x0000000000000004"
    assert {f.refusal for f in report_figures(report) if f.name != "fp8_e4m3_fast"} == {None}
    assert workload_refusal(load_report(H200_RUN / "workload-report.json")) is None


@pytest.mark.parametrize("bit,words", [(0x8, "hardware slowdown"),
                                       (0x20, "software thermal slowdown"),
                                       (0x40, "hardware thermal slowdown"),
                                       (0x80, "hardware power brake")])
def test_a_slowdown_clock_event_on_any_gpu_refuses_every_figure(bit, words):
    mask = f"0x{bit | 0x4:016x}"  # with the power cap a loaded GPU shows anyway
    report = _under_load(h100_report(), {r: _loaded(mask if r == 5 else "0x4")
                                         for r in range(8)})
    (why,) = _refusals(report)
    assert why.startswith("1 of 8 GPU(s) showed clock events that slow a GPU (rank 5 under "
                          f"load: {mask}, software power cap, {words})"), why
    assert "re-run the probes on a node that is not throttled" in why and "\n" not in why


def test_the_testers_hw_slowdown_report_is_refused():
    """c4.py: every rank 0x48 (HW slowdown + HW thermal) at 345 MHz, 92 C, bf16 120 TFLOP/s:
    it calibrated H100 bf16 at 120 TFLOP/s."""
    t = dataclasses.replace(_loaded("0x0000000000000048", sm_clock_mhz=345), temperature_c=92.0)
    report = _under_load(h100_report(bf16_tflops=120.0), {r: t for r in range(8)})
    (why,) = _refusals(report)
    assert "8 of 8 GPU(s) showed clock events" in why
    assert "0x0000000000000048, hardware slowdown, hardware thermal slowdown" in why


def test_slowdown_bits_before_the_run_refuse_a_workload_report_too():
    """A workload report has no matmul warm-up: rank 0's GPU before the run is its evidence."""
    report = h100_workload_report()
    env = report.environment
    hot = dataclasses.replace(report, environment=dataclasses.replace(env, idle=dataclasses.replace(
        env.idle, clock_event_reasons="0x0000000000000020")))
    why = workload_refusal(hot)
    assert why.startswith("1 of 8 GPU(s) showed clock events that slow a GPU (rank 0 before the "
                          "run (idle): 0x0000000000000020, software thermal slowdown)")
    assert workload_refusal(report) is None


def test_a_lowered_power_limit_refuses_every_figure():
    """c4.py: the enforced limit at 150 of the default 700 W, and the report calibrated."""
    report = h100_report(bf16_tflops=150.0)
    env = report.environment
    capped = dataclasses.replace(report, environment=dataclasses.replace(
        env, idle=dataclasses.replace(env.idle, power_limit_w=150.0)))
    (why,) = _refusals(capped)
    assert why.startswith("rank 0's GPU before the run (idle) had its power limit at 150 W, 21% "
                          "of its default 700 W")
    assert "nvidia-smi -pl 700" in why and "To fix:" in why
    # under load, on one rank, too
    (why,) = _refusals(_under_load(h100_report(), {3: _loaded(power_limit_w=300.0)}))
    assert why.startswith("rank 3's GPU under load had its power limit at 300 W")
    # a few percent below the default is not a cap worth refusing
    assert _refusals(_under_load(h100_report(), {3: _loaded(power_limit_w=650.0)})) == {None}


def test_sm_clocks_far_under_the_maximum_under_load_refuse_every_figure():
    """A driver may not report the reasons: the clock itself under half its maximum is a HW
    slowdown's (it halves the clock or more)."""
    report = _under_load(h100_report(), {r: _loaded("0x0", sm_clock_mhz=700 if r in (2, 6)
                                                    else 1500) for r in range(8)})
    (why,) = _refusals(report)
    assert why.startswith("2 of 8 GPU(s) ran under load at SM clocks under 50% of the maximum "
                          "1,980 MHz (rank 2: 700 MHz)")


def test_a_warm_up_that_loses_half_its_speed_is_refused():
    report = h100_report()
    fell = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, burst_tflops=650.0, sustained_tflops=300.0))
    (why,) = _refusals(fell)
    assert why.startswith("the matmul warm-up fell from 650 to 300 TFLOP/s (bf16), under 50% of "
                          "its first window")
    ok = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, burst_tflops=674.1, sustained_tflops=668.7))  # the H200's
    assert _refusals(ok) == {None}


# -- 2. impossible values in fields that do not calibrate -------------------------------------
def test_a_burst_over_twice_the_best_is_an_edited_report():
    """c9.py: burst 5,000 TFLOP/s (5x the H100's datasheet) with bf16 at 300 was believed."""
    report = h100_report(bf16_tflops=300.0)
    edited = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, burst_tflops=5000.0, sustained_tflops=300.0))
    (why,) = _refusals(edited)
    assert why.startswith("the matmul warm-up's burst, 5,000 TFLOP/s of bf16, is over 2x the "
                          "sweep's best bf16 (300)")
    assert why.endswith("the report was edited. To fix: re-run the probes and ingest the file "
                        "they write")


@pytest.mark.parametrize("path,value,words", [
    ("environment.idle.temperature_c", 500.0, "temperature_c must be from -40 to 150 degrees C"),
    ("environment.idle.temperature_c", -273.0, "temperature_c must be from -40 to 150"),
    ("ranks.3.under_load", dict(sampled="under_load", temperature_c=1e6), "temperature_c must"),
    ("environment.sm_clock_max_mhz", 99999, "sm_clock_max_mhz must be at most 10,000 MHz"),
    ("environment.idle.sm_clock_mhz", 20000, "sm_clock_mhz must be at most 10,000 MHz"),
    ("environment.memory_clock_max_mhz", 99999, "memory_clock_max_mhz must be at most 50,000"),
    ("duration_seconds", 1e300, "duration_seconds must be at most 604,800 seconds"),
])
def test_readings_no_gpu_or_run_can_have_are_refused_when_read(path, value, words):
    data = report_data_with(h100_report(), path, value)
    with pytest.raises(ReportError) as info:
        report_from_bytes(json.dumps(data).encode(), source="r.json")
    text = str(info.value)
    assert words in text and "To fix:" in text and "\n" not in text, text


def test_plausible_readings_still_read():
    data = report_data_with(h100_report(), "environment.idle.temperature_c", 95.0)
    data["environment"]["memory_clock_max_mhz"] = 14001  # GDDR7 as nvidia-smi states it
    data["duration_seconds"] = 86_400.0 * 2
    assert report_from_bytes(json.dumps(data).encode(), source="r.json").duration_seconds \
        == 172_800.0


# -- 5. a rank listed twice -------------------------------------------------------------------
def test_a_rank_listed_twice_is_named_as_an_edit_not_a_silent_gpu():
    """c10.py: rank 7's entry relabelled rank 0 said "only 7 of 8 ranks reported: a GPU that
    did not answer may be the slow one"; the report was edited."""
    report = h100_report()
    twice = dataclasses.replace(report, ranks=(*report.ranks[:7], dataclasses.replace(
        report.ranks[7], rank=0)))
    (why,) = _refusals(twice)
    assert "rank 0 is listed more than once (8 entries): the report was edited or merged" in why
    assert "did not answer" not in why
    missing = dataclasses.replace(report, ranks=report.ranks[:7])
    (why,) = _refusals(missing)
    assert why == ("only 7 of 8 ranks reported: a GPU that did not answer may be the slow one")
    again = json.loads(report_to_json(report))
    again["ranks"].append(dict(again["ranks"][0]))  # all eight and rank 0 once more
    (why,) = _refusals(report_from_bytes(json.dumps(again).encode(), source="r.json"))
    assert "(9 entries; rank 0 more than once) are not ranks 0–7 once each" in why
