"""What a report offers the planner (probes._figures) and the refusals that depend on the report
alone; percentiles and spreads (probes._stats); every rank's figures into one report
(probes._gather). All torch-free."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st
from probe_reports import by_kind, h100_report

from probes._figures import report_figures
from probes._gather import merge_failures, rank_result, with_spreads
from probes._schema import NamedValue, ProbeFailure
from probes._stats import percentile, spread


def test_a_full_node_report_offers_each_kind_with_its_spread():
    figures = by_kind(h100_report(fp8_tflops=1300.0, world_size=16, node_count=2))
    bf16 = figures[("matmul", "bf16")]
    assert (bf16.value, bf16.unit, bf16.refusal) == (650.0, "TFLOP/s", None)
    assert bf16.p10 == bf16.p90 == 650.0  # 16 equal GPUs
    assert figures[("matmul", "fp8_e4m3")].refusal is None
    assert figures[("hbm", "device_copy")].value == 2982.6
    intra, inter = figures[("intra", "all_reduce")], figures[("inter", "all_reduce")]
    assert intra.value == 481.8 and intra.full_node and intra.refusal is None
    assert (inter.value, inter.net, inter.rdma, inter.nodes) == (370.0, "IB", True, 2)


@pytest.mark.parametrize("changes, needle", [
    ({"quick": True}, "quick mode"),
    ({"schema_version": 1}, "schema 1 report"),
    ({"device_type": "cpu", "gpu_model": None}, "a cpu run"),
])
def test_report_level_refusals_cover_every_figure(changes, needle):
    figures = report_figures(h100_report(**changes))
    assert figures and all(needle in f.refusal for f in figures)


def test_mig_a_missing_rank_and_a_failed_probe_are_refusals():
    report = h100_report()
    mig = dataclasses.replace(report, environment=dataclasses.replace(
        report.environment, idle=dataclasses.replace(report.environment.idle,
                                                     mig_mode="Enabled")))
    assert all("MIG" in f.refusal for f in report_figures(mig))
    missing = dataclasses.replace(report, ranks=report.ranks[:7])
    assert all("only 7 of 8 ranks" in f.refusal for f in report_figures(missing))
    failed = dataclasses.replace(report, errors=(ProbeFailure(
        probe="memory", error_type="RuntimeError", message="CUDA error", rank=5),))
    figures = by_kind(failed)
    assert "memory probe failed on rank 5" in figures[("hbm", "device_copy")].refusal
    assert figures[("matmul", "bf16")].refusal is None


def test_repeated_ranks_and_ranks_on_other_gpus_are_refusals():
    """Only the count of rank entries was checked: ranks [0, 0, 2 … 7] or 8,000 entries for 8
    GPUs calibrated, and 4 H100 + 4 A100 ranks calibrated H100 from all eight."""
    report = h100_report()
    repeated = dataclasses.replace(report, ranks=(*report.ranks, report.ranks[0]))
    assert all("not ranks 0–7 once each" in f.refusal for f in report_figures(repeated))
    hole = dataclasses.replace(report, ranks=(report.ranks[0], *report.ranks[:1],
                                              *report.ranks[2:]))
    assert all("only 7 of 8 ranks" in f.refusal for f in report_figures(hole))
    mixed = dataclasses.replace(report, ranks=tuple(
        dataclasses.replace(r, gpu_name="NVIDIA A100-SXM4-80GB") if r.rank >= 4 else r
        for r in report.ranks))
    different = "the ranks and the environment name different GPUs"
    assert all(f"{different} (NVIDIA A100-SXM4-80GB, NVIDIA H100 80GB HBM3)" in f.refusal
               for f in report_figures(mixed))
    # every rank on another GPU than the environment says, a rank without a name, no ranks
    others = dataclasses.replace(report, ranks=tuple(
        dataclasses.replace(r, gpu_name="NVIDIA A100-SXM4-80GB") for r in report.ranks))
    assert all(different in f.refusal for f in report_figures(others))
    unnamed = dataclasses.replace(report, ranks=tuple(
        dataclasses.replace(r, gpu_name=None) if r.rank == 3 else r for r in report.ranks))
    assert all("unnamed" in f.refusal for f in report_figures(unnamed))
    none = dataclasses.replace(report, ranks=())
    assert all("only 0 of 8 ranks reported" in f.refusal for f in report_figures(none))


def test_partial_nodes_custom_shapes_fast_fp8_and_short_messages():
    partial = by_kind(h100_report(world_size=2, local_world_size=2))
    assert "used 2 of the node's 8 GPUs" in partial[("intra", "all_reduce")].refusal
    assert partial[("matmul", "bf16")].refusal is None
    report = h100_report(fp8_tflops=1300.0, busbw_by_size=((2**20, 90.0),))
    custom = dataclasses.replace(report, matmul=dataclasses.replace(report.matmul,
                                                                    sweep="custom"))
    assert "custom shapes" in by_kind(custom)[("matmul", "bf16")].refusal
    assert "short of the busbw plateau" in by_kind(report)[("intra", "all_reduce")].refusal
    fast = dataclasses.replace(report.matmul.dtypes[1], dtype="fp8_e4m3_fast")
    ranks = tuple(dataclasses.replace(r, matmul_best_tflops=(
        *r.matmul_best_tflops, NamedValue(name="fp8_e4m3_fast", value=1300.0)))
        for r in report.ranks)  # every rank reports it, as the probe's gather does
    matmul, memory = with_spreads(dataclasses.replace(
        report.matmul, dtypes=(*report.matmul.dtypes, fast)), report.memory, ranks)
    report = dataclasses.replace(report, matmul=matmul, memory=memory, ranks=ranks)
    assert "fast accumulation" in by_kind(report)[("matmul", "fp8_e4m3_fast")].refusal


def test_a_single_gpu_uses_its_repeats_for_the_spread():
    report = h100_report(world_size=1, local_world_size=1, gpu_count=1, gpu_count_smi=1)
    bf16 = by_kind(report)[("matmul", "bf16")]
    assert (bf16.p10, bf16.value, bf16.p90) == pytest.approx((650 * 0.99, 650, 650 * 1.005))


def test_the_slowest_gpu_is_named():
    report = h100_report()
    ranks = [rank_result(rank=r.rank, local_rank=r.local_rank, hostname=r.hostname,
                         device=r.device, gpu_name=None, gpu_uuid=None,
                         matmul=dataclasses.replace(report.matmul, dtypes=(dataclasses.replace(
                             report.matmul.dtypes[0],
                             best_tflops=500.0 if r.rank == 5 else 650.0),)),
                         memory=report.memory) for r in report.ranks]
    matmul, _ = with_spreads(report.matmul, report.memory, ranks)
    s = matmul.dtypes[0].across_ranks
    assert (s.n, s.min, s.min_rank, s.p50, s.max) == (8, 500.0, 5, 650.0, 650.0)


def test_failures_from_every_rank_are_kept_once():
    a = ProbeFailure(probe="matmul", error_type="E", message="x", rank=3)
    b = ProbeFailure(probe="memory", error_type="E", message="y", rank=0)
    assert merge_failures([[b], [a], [a]]) == (b, a)


@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=50))
def test_spread_is_ordered_and_matches_the_extremes(values):
    s = spread(values, list(range(len(values))))
    assert s.min == min(values) and s.max == max(values)
    assert s.min <= s.p10 <= s.p50 <= s.p90 <= s.max
    assert values[s.min_rank] == s.min


def test_percentile_interpolates_linearly():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([10.0], 90) == 10.0
    assert percentile([0, 10], 10) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        percentile([], 50)


def test_a_summary_without_rank_figures_or_ranks_without_a_summary_is_refused():
    """Both bypassed the summary check: a bf16 summary of 900 with no rank reporting bf16
    calibrated 900, and a deleted summary fell back to rank 0 while ranks 1–7 said 5,000."""
    report = h100_report(bf16_tflops=650.0)
    no_figures = dataclasses.replace(report, ranks=tuple(dataclasses.replace(
        r, matmul_best_tflops=tuple(v for v in r.matmul_best_tflops if v.name != "bf16"))
        for r in report.ranks))
    assert all("0 of 8 ranks report their matmul bf16 figure" in f.refusal
               for f in report_figures(no_figures))
    outliers = tuple(dataclasses.replace(r, matmul_best_tflops=tuple(
        NamedValue(name=v.name, value=5000.0) if v.name == "bf16" and r.rank else v
        for v in r.matmul_best_tflops)) for r in report.ranks)
    deleted = dataclasses.replace(report, ranks=outliers, matmul=dataclasses.replace(
        report.matmul, dtypes=tuple(dataclasses.replace(d, across_ranks=None)
                                    if d.dtype == "bf16" else d
                                    for d in report.matmul.dtypes)))
    assert all("matmul bf16 summary over GPUs (missing) is not what the ranks' own figures "
               "give (median 5,000" in f.refusal for f in report_figures(deleted))
