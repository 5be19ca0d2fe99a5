"""Reports whose figures contradict each other are refused (fuzz round 2, /tmp/fuzz2/REPORT.md
sections 3-5): an entry the probe writes once appearing twice (tamper_dup_intra_series,
tamper_dup_dtype, tamper_dup_point, dup_mem_point), a derived figure that is not what the raw
timings give (tamper_busbw, tamper_hbm, mm_seconds_incons, tamper_rank_vs_best,
tamper_workload_layer, work_step_lt_fwdbwd, work_layerstep_lt_layer, work_split_gt_total) and
percentiles out of order (tamper_p10_gt_p90, work_p10_gt_p90). Each forgery is built from the
valid reports of tests/probe_reports.py with dataclasses.replace; the unedited reports, and
reports the probes write on CPU, must still pass."""

from __future__ import annotations

import dataclasses

import pytest
from probe_reports import EDITED, LLAMA3_8B_LAYER, h100_report, h100_workload_report
from probe_store import H100, put, refused

from planner.model import WorkloadShape
from planner.store import load_calibration
from probes._consistency import (
    BUS_FACTOR,
    COUNTED_PER_BYTE,
    RANK_WORKLOAD,
    REL_TOL,
    contradiction,
    rank_0_workload_edited,
)
from probes._figures import report_figures, workload_refusal
from probes._gather import with_spreads
from probes._schema import CollectivePoint, NamedValue
from probes._stats import spread

MERGED = "the report was edited or merged. To fix: re-run the probes"


def _refusals(report):
    """Every figure's refusal (all the same when the report itself is refused)."""
    return {f.refusal for f in report_figures(report)}


def _refused_as(report, says, fix=EDITED):
    (why,) = _refusals(report)
    assert says in why and fix in why, why
    assert "\n" not in why and why.endswith("re-run the probes and ingest the file they write")
    return why


def _with_series(report, **changes):
    col = report.collectives
    return dataclasses.replace(report, collectives=dataclasses.replace(col, series=tuple(
        dataclasses.replace(s, **changes) if s.scope == "intra_node" else s
        for s in col.series)))


def _with_points(report, points):
    return _with_series(report, points=points)


def _point(busbw, size=2**30, n=8, factor=None, **changes):
    """A collective point as probes._collectives writes it (algbw = size / seconds)."""
    factor = factor or BUS_FACTOR["all_reduce"](n)
    seconds = size / (busbw / factor * 1e9)
    return CollectivePoint(size_bytes=size, seconds_median=seconds,
                           algbw_gb_per_s=size / seconds / 1e9,
                           busbw_gb_per_s=size / seconds / 1e9 * factor,
                           busbw_p10_gb_per_s=busbw * 0.97, busbw_p90_gb_per_s=busbw * 1.005,
                           iterations=10, **changes)


def _with_ranks_figure(report, attr, name, value):
    """Every rank's ``attr`` figure ``name`` set to ``value``, the summaries recomputed as the
    probe would (so only the contradiction under test remains)."""
    ranks = tuple(dataclasses.replace(r, **{attr: tuple(
        NamedValue(name=v.name, value=value) if v.name == name else v
        for v in getattr(r, attr))}) for r in report.ranks)
    matmul, memory = with_spreads(report.matmul, report.memory, ranks)
    return dataclasses.replace(report, ranks=ranks, matmul=matmul, memory=memory)


def _with_workload(report, *, ranks=None, **changes):
    """The workload section changed; ``ranks`` (name -> value) on every rank, with the summary
    over GPUs recomputed as the probe would."""
    out = dataclasses.replace(report, workload=dataclasses.replace(report.workload, **changes))
    if ranks:
        new = tuple(dataclasses.replace(r, workload=tuple(
            NamedValue(name=v.name, value=ranks.get(v.name, v.value)) for v in r.workload))
            for r in report.ranks)
        values = [v.value for r in new for v in r.workload if v.name == "layer_fwd_bwd_seconds"]
        out = dataclasses.replace(out, ranks=new, workload=dataclasses.replace(
            out.workload, across_ranks=spread(values, [r.rank for r in new])))
    return out


# -- honest reports ------------------------------------------------------------------------
HONEST = {
    "one GPU": dict(world_size=1, local_world_size=1),
    "2 of 8 GPUs": dict(world_size=2, local_world_size=2),
    "a full node, fp16 and fp8": dict(fp16_tflops=700.0, fp8_tflops=1300.0),
    "several message sizes": dict(busbw_by_size=((2**20, 120.0), (2**26, 420.0),
                                                 (2**30, 481.8))),
    "2 nodes over IB": dict(world_size=16, node_count=2),
    "4 nodes over EFA": dict(world_size=32, node_count=4, net="AWS Libfabric"),
}


@pytest.mark.parametrize("changes", HONEST.values(), ids=HONEST.keys())
def test_honest_reports_have_no_contradiction(changes):
    report = h100_report(**changes)
    assert contradiction(report) is None
    assert _refusals(report) <= {None, "the run used 2 of the node's 8 GPUs; bus bandwidth "
                                       "depends on the group, so only full nodes calibrate"}


@pytest.mark.parametrize("changes", [
    {}, {"rank_ms": (30.0, 31.0, 29.5, 30.2, 30.0, 30.4, 29.9, 30.1)},
    {"world_size": 1, "local_world_size": 1}, {"activation_mib": None}, {"layer_ms": 4.0},
    {"shape": {"seq_len": 4096, "micro_batch": 2}},
])
def test_honest_workload_reports_have_no_contradiction(changes):
    report = h100_workload_report(**changes)
    assert contradiction(report) is None and rank_0_workload_edited(report) is None
    assert workload_refusal(report) in (None, "the run used 1 of the node's 8 GPUs: only a full "
                                              "node shows the power and heat of a training "
                                              "step; run torchrun with --nproc-per-node equal "
                                              "to the node's GPUs")
    # every figure the probe derives, as it derives it
    w = report.workload
    with_totals = _with_workload(report, optimizer_seconds=w.split.optimizer_seconds * 4,
                                 tokens_per_second=w.micro_batch * w.seq_len / w.step_seconds,
                                 step_seconds_p10=w.step_seconds * 0.99,
                                 step_seconds_p90=w.step_seconds * 1.02)
    assert contradiction(with_totals) is None


def test_reports_the_probes_write_on_cpu_have_no_contradiction(tmp_path, single_thread):
    """A real run (hardware probes, then the workload probe) agrees with itself exactly:
    the tolerance is for rounding, not for the probe's own numbers."""
    pytest.importorskip("torch")
    from probes import ProbeConfig, WorkloadConfig, run_probes, run_workload_probe

    hardware = run_probes(ProbeConfig(quick=True, device="cpu", probes=("matmul", "memory")))
    assert hardware.matmul is not None and hardware.memory is not None
    assert contradiction(hardware) is None
    for p in hardware.memory.points:  # STREAM's byte counting, as repeated in _consistency
        if p.status == "measured":
            assert p.counted_bytes == COUNTED_PER_BYTE[p.name] * p.size_bytes
    workload = run_workload_probe(WorkloadConfig(
        hidden=64, heads=4, kv_heads=2, ffn_hidden=96, seq_len=32, micro_batch=2,
        device="cpu", steps=2, warmup_steps=1, model="tiny", model_layers=4))
    assert workload.workload.status == "measured"
    assert contradiction(workload) is None and rank_0_workload_edited(workload) is None
    assert {v.name for v in workload.ranks[0].workload} <= set(RANK_WORKLOAD)


def test_the_conventions_are_the_probes_own():
    """_consistency repeats what probes._collectives (torch) computes; they must not drift."""
    pytest.importorskip("torch")
    import inspect

    import probes._collectives as collectives
    import probes._workload_run as workload_run

    for op, factor in collectives.BUS_FACTOR.items():
        assert all(BUS_FACTOR[op](n) == factor(n) for n in (2, 3, 8, 16, 1024))
    assert set(BUS_FACTOR) == set(collectives.OPS)
    assert all(f'"{name}"' in inspect.getsource(workload_run) for name in RANK_WORKLOAD)
    assert 1e-15 < REL_TOL <= 1e-6  # above float rounding, below any edit that moves a plan


# -- 1. an entry the probe writes once, twice -------------------------------------------------
def test_a_collective_series_written_twice_is_refused(tmp_path, catalog):
    """tamper_dup_intra_series: a second intra_node all_reduce series at 890 GB/s (consistent
    in itself) moved the calibrated intra-node bandwidth from 481.8 to 685.9 GB/s, "the median
    of 2 reports (reports 1, 1)"."""
    honest = h100_report()
    (intra,) = honest.collectives.series
    second = dataclasses.replace(intra, points=(_point(890.0),))
    forged = dataclasses.replace(honest, collectives=dataclasses.replace(
        honest.collectives, series=(intra, second)))
    _refused_as(forged, "collective all_reduce/intra_node appears twice, and the probe runs "
                        "each op once per scope", MERGED)
    stored = put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.intra("p5.48xlarge", H100, 8) is None
    assert any(MERGED in r for r in refused(cal, stored.id))


def test_a_matmul_dtype_written_twice_is_refused():
    """tamper_dup_dtype: the bf16 summary twice, "median of 2 reports (reports 1, 1)"."""
    honest = h100_report()
    forged = dataclasses.replace(honest, matmul=dataclasses.replace(
        honest.matmul, dtypes=(*honest.matmul.dtypes, honest.matmul.dtypes[0])))
    _refused_as(forged, "matmul bf16 appears twice, and the probe sweeps each dtype once",
                MERGED)


def test_a_message_size_written_twice_is_refused():
    """tamper_dup_point: a second 1 GiB point at 890 GB/s; the plateau took it."""
    honest = h100_report()
    (intra,) = honest.collectives.series
    forged = _with_points(honest, (*intra.points, _point(890.0)))
    _refused_as(forged, "collective all_reduce/intra_node: message size 1,073,741,824 B "
                        "appears twice, and the probe times each size once (unless --sizes "
                        "repeats it)", MERGED)
    # several distinct sizes are what the probe writes
    assert contradiction(_with_points(honest, (_point(400.0, 2**26), *intra.points))) is None


def test_a_memory_point_written_twice_is_refused():
    """dup_mem_point: device_copy twice."""
    honest = h100_report()
    forged = dataclasses.replace(honest, memory=dataclasses.replace(
        honest.memory, points=honest.memory.points * 2))
    _refused_as(forged, "memory device_copy appears twice, and the probe measures each once",
                MERGED)


# -- 2. derived figures that are not what the raw ones give -----------------------------------
def test_busbw_that_is_not_algbw_times_the_bus_factor_is_refused(tmp_path, catalog):
    """tamper_busbw: busbw 481.8 -> 890 GB/s (p90 895) with algbw 275.3 and the time unchanged:
    calibrated as 890 GB/s intra-node."""
    honest = h100_report()
    (intra,) = honest.collectives.series
    (p,) = intra.points
    forged = _with_points(honest, (dataclasses.replace(p, busbw_gb_per_s=890.0,
                                                       busbw_p90_gb_per_s=895.0),))
    _refused_as(forged, "collective all_reduce/intra_node at 1,073,741,824 B: busbw 890 GB/s is "
                        "not algbw 275.314 x 2(n-1)/n for 8 ranks = 481.8")
    stored = put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.intra("p5.48xlarge", H100, 8) is None
    assert any(EDITED in r for r in refused(cal, stored.id))


@pytest.mark.parametrize("op", ["all_gather", "reduce_scatter"])
def test_all_gather_and_reduce_scatter_use_their_own_bus_factor(op):
    """busbw = algbw x (n-1)/n for all_gather and reduce_scatter, not all_reduce's 2(n-1)/n."""
    honest = h100_report()
    (intra,) = honest.collectives.series
    theirs = dataclasses.replace(intra, op=op, points=(
        _point(400.0, factor=BUS_FACTOR[op](8)),))
    report = dataclasses.replace(honest, collectives=dataclasses.replace(
        honest.collectives, series=(intra, theirs)))
    assert contradiction(report) is None
    wrong = dataclasses.replace(theirs, points=(_point(400.0),))  # all_reduce's factor
    forged = dataclasses.replace(honest, collectives=dataclasses.replace(
        honest.collectives, series=(intra, wrong)))
    _refused_as(forged, f"collective {op}/intra_node at 1,073,741,824 B: busbw 400 GB/s is not "
                        f"algbw 228.571 x (n-1)/n for 8 ranks = 200")


def test_algbw_that_is_not_size_over_seconds_is_refused():
    """busbw and algbw raised together (busbw = algbw x 1.75 still holds), the time unchanged:
    algbw = size / seconds_median says otherwise."""
    honest = h100_report()
    (p,) = honest.collectives.series[0].points
    forged = _with_points(honest, (dataclasses.replace(
        p, algbw_gb_per_s=500.0, busbw_gb_per_s=875.0, busbw_p90_gb_per_s=880.0),))
    _refused_as(forged, "collective all_reduce/intra_node at 1,073,741,824 B: algbw 500 GB/s is "
                        "not size / seconds_median (0.00390006 s) = 275.314")


def test_memory_bandwidth_that_is_not_counted_bytes_over_seconds_is_refused():
    """tamper_hbm: device_copy and every rank's figure 2,982.6 -> 3,300 GB/s (the summary
    recomputed): counted_bytes / seconds_median still says 2,982.6."""
    honest = h100_report()
    raised = _with_ranks_figure(honest, "memory_gb_per_s", "device_copy", 3300.0)
    forged = dataclasses.replace(raised, memory=dataclasses.replace(raised.memory, points=tuple(
        dataclasses.replace(p, gb_per_s=3300.0, gb_per_s_p10=3290.0, gb_per_s_p90=3310.0)
        for p in raised.memory.points)))
    _refused_as(forged, "memory device_copy: 3,300 GB/s is not counted_bytes / seconds_median "
                        "= 2,982.6")
    # the bytes credited are the probe's: 2N for a copy (STREAM Copy)
    (p,) = honest.memory.points
    recounted = dataclasses.replace(honest, memory=dataclasses.replace(honest.memory, points=(
        dataclasses.replace(p, counted_bytes=3 * p.size_bytes),)))
    _refused_as(recounted, "memory device_copy credits 3,221,225,472 bytes to a buffer of "
                           "1,073,741,824, and the probe credits 2 x N")


def test_matmul_tflops_that_are_not_2mnk_over_seconds_are_refused():
    """mm_seconds_incons: a point of 650 TFLOP/s that took 100 s."""
    honest = h100_report()
    forged = dataclasses.replace(honest, matmul=dataclasses.replace(honest.matmul, points=tuple(
        dataclasses.replace(p, seconds_median=100.0) for p in honest.matmul.points)))
    _refused_as(forged, "matmul bf16 8192x8192x8192/nt: 650 TFLOP/s is not 2MNK / "
                        "seconds_median (100 s) = 0.0109951")


def test_a_best_above_every_point_is_refused():
    """best_tflops, every rank's figure and the summary raised to 950 together, the points left
    at 650: best_tflops is the max over the points."""
    honest = h100_report()
    raised = _with_ranks_figure(honest, "matmul_best_tflops", "bf16", 950.0)
    forged = dataclasses.replace(raised, matmul=dataclasses.replace(raised.matmul, dtypes=tuple(
        dataclasses.replace(d, best_tflops=950.0) if d.dtype == "bf16" else d
        for d in raised.matmul.dtypes)))
    _refused_as(forged, "matmul bf16: best_tflops 950 is above every point measured (the "
                        "fastest 650 TFLOP/s), and the probe takes the max over its points")


@pytest.mark.parametrize("env", [dict(), dict(world_size=2, local_world_size=2),
                                 dict(world_size=16, node_count=2)])
def test_rank_0s_figure_that_is_not_its_sections_is_refused(tmp_path, catalog, env):
    """tamper_rank_vs_best: every rank's matmul_best_tflops 650 -> 950 (the summary recomputed);
    the section's best_tflops (rank 0's own), its sustained figure and every point stayed 650:
    calibrated as 950 TFLOP/s. Checked with one GPU only; the sections are rank 0's at any
    world size. The same for memory."""
    honest = h100_report(**env)
    forged = _with_ranks_figure(honest, "matmul_best_tflops", "bf16", 950.0)
    _refused_as(forged, "the report's own matmul bf16 figure (650) is not rank 0's (950)")
    stored = put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None
    assert any(EDITED in r for r in refused(cal, stored.id))
    memory = _with_ranks_figure(honest, "memory_gb_per_s", "device_copy", 3300.0)
    _refused_as(memory, "the report's own memory device_copy figure (2,983) is not rank 0's "
                        "(3,300)")


def test_gpus_other_than_rank_0_above_the_datasheet_are_still_refused_by_the_bound(
        tmp_path, catalog):
    """What tests/planner/test_probe_ingest.py's outlier test means (three GPUs at 5,000
    TFLOP/s, a fine median), with rank 0's figure left its section's own: the P90 bound
    refuses it."""
    honest = h100_report()
    ranks = tuple(dataclasses.replace(r, matmul_best_tflops=tuple(
        NamedValue(name=v.name, value=5000.0) if r.rank >= 5 else v
        for v in r.matmul_best_tflops)) for r in honest.ranks)
    matmul, memory = with_spreads(honest.matmul, honest.memory, ranks)
    report = dataclasses.replace(honest, ranks=ranks, matmul=matmul, memory=memory)
    assert contradiction(report) is None and _refusals(report) == {None}
    stored = put(tmp_path, catalog, report)
    assert any("P90 (over GPUs, or one GPU's repeats), 5,000 TFLOP/s, is above the datasheet "
               "989.5" in r for r in refused(load_calibration(catalog), stored.id))


def test_a_layer_time_that_is_not_the_run_over_its_layers_is_refused(tmp_path, catalog):
    """tamper_workload_layer: every rank's and the section's layer_fwd_bwd_seconds 30 ms ->
    13 ms, fwd_bwd_seconds 0.12 s for 4 layers (30 ms each) unchanged: calibrated as 13 ms per
    layer, measured/modelled 0.52."""
    honest = h100_workload_report()
    forged = _with_workload(honest, layer_fwd_bwd_seconds=0.013,
                            layer_fwd_bwd_seconds_p10=0.0129, layer_fwd_bwd_seconds_p90=0.0131,
                            ranks={"layer_fwd_bwd_seconds": 0.013})
    why = workload_refusal(forged)
    assert why.startswith("workload layer_fwd_bwd_seconds 0.013 x 4 layers is 0.052 s, not "
                          "fwd_bwd_seconds 0.12") and EDITED in why
    put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", WorkloadShape(**LLAMA3_8B_LAYER)) is None
    assert any(EDITED in n.reason for n in cal.rejected())
    # the step's per-layer figure likewise
    step = _with_workload(honest, layer_step_seconds=0.031, ranks={"layer_step_seconds": 0.031})
    assert workload_refusal(step).startswith("workload layer_step_seconds 0.031 x 4 layers is "
                                             "0.124 s, not step_seconds 0.132")


def test_a_step_shorter_than_its_forward_and_backward_is_refused():
    """work_step_lt_fwdbwd, work_layerstep_lt_layer: a step (forward + backward + optimizer)
    cannot take less than its forward + backward, in all or per layer."""
    honest = h100_workload_report()
    short = _with_workload(honest, step_seconds=0.1, layer_step_seconds=0.025,
                           ranks={"layer_step_seconds": 0.025})
    why = workload_refusal(short)
    assert why.startswith("workload step_seconds 0.1 is below fwd_bwd_seconds 0.12, a part of "
                          "every step") and EDITED in why
    per_layer = _with_workload(short, step_seconds=None, fwd_bwd_seconds=None)
    assert workload_refusal(per_layer).startswith(
        "workload layer_step_seconds 0.025 is below layer_fwd_bwd_seconds 0.03")


def test_a_split_above_the_layer_time_is_refused():
    """work_split_gt_total: a 5 s matmul share of a 30 ms layer."""
    honest = h100_workload_report()
    forged = _with_workload(honest, split=dataclasses.replace(honest.workload.split,
                                                              matmul_seconds=5.0))
    why = workload_refusal(forged)
    assert why.startswith("workload split: matmul, attention, other and communication add up "
                          "to 5.012 s, more than the layer's forward + backward (0.03 s) they "
                          "share out") and EDITED in why


def test_throughput_and_optimizer_time_not_from_the_step_are_refused():
    honest = h100_workload_report()
    w = honest.workload
    tokens = _with_workload(honest, tokens_per_second=2 * 8192 / w.step_seconds)
    assert workload_refusal(tokens).startswith("workload tokens_per_second 124,121 is not "
                                               "micro_batch x seq_len / step_seconds = 62,060.6")
    optimizer = _with_workload(honest, optimizer_seconds=0.1)
    assert workload_refusal(optimizer).startswith(
        "workload split.optimizer_seconds 0.003 x 4 layers is 0.012 s, not optimizer_seconds 0.1")


def test_rank_0s_workload_figures_are_its_sections():
    """The section is rank 0's: its gathered activation bytes (the planner's memory figure is
    the median over ranks) must be the section's."""
    honest = h100_workload_report()
    forged = _with_workload(honest, ranks={"layer_activation_bytes": 100 * 2**20})
    why = workload_refusal(forged)
    assert why.startswith("rank 0's workload layer_activation_bytes (104,857,600) is not the "
                          "section's (1,468,006,400)") and EDITED in why


# -- 3. percentiles out of order ------------------------------------------------------------
def _collective_p(report):
    (p,) = report.collectives.series[0].points
    return _with_points(report, (dataclasses.replace(p, busbw_p10_gb_per_s=800.0,
                                                     busbw_p90_gb_per_s=100.0),))


def _memory_p(report):
    return dataclasses.replace(report, memory=dataclasses.replace(report.memory, points=tuple(
        dataclasses.replace(p, gb_per_s_p90=1000.0) for p in report.memory.points)))


def _matmul_p(report):
    return dataclasses.replace(report, matmul=dataclasses.replace(report.matmul, points=tuple(
        dataclasses.replace(p, tflops_p10=700.0) for p in report.matmul.points)))


@pytest.mark.parametrize(("forge", "says"), [
    (_collective_p, "collective all_reduce/intra_node busbw at 1,073,741,824 B: p10 800, "
                    "median 481.8, p90 100 are not in order"),  # tamper_p10_gt_p90
    (_memory_p, "memory device_copy GB/s: p10 2,952.77, median 2,982.6, p90 1,000 are not in "
                "order"),
    (_matmul_p, "matmul bf16 8192x8192x8192/nt TFLOP/s: p10 700, median 650, p90 653.25 are "
                "not in order"),
])
def test_percentiles_out_of_order_are_refused(tmp_path, catalog, forge, says):
    """tamper_p10_gt_p90: intra-node busbw p10 800, p90 100 around a median of 481.8 was used
    and shown as "p10 800.0, p90 100.0"."""
    forged = forge(h100_report())
    _refused_as(forged, f"{says} (p10 <= median <= p90 of one set of samples)")
    stored = put(tmp_path, catalog, forged)
    assert all(EDITED in r for r in refused(load_calibration(catalog), stored.id))


@pytest.mark.parametrize(("changes", "says"), [
    ({"layer_fwd_bwd_seconds_p10": 0.5, "layer_fwd_bwd_seconds_p90": 0.001},
     "workload layer_fwd_bwd_seconds: p10 0.5, median 0.03, p90 0.001 are not in order"),
    ({"step_seconds_p10": 0.2}, "workload step_seconds: p10 0.2, median 0.132, p90 none are "
                                "not in order"),
])
def test_workload_percentiles_out_of_order_are_refused(changes, says):
    """work_p10_gt_p90: layer p10 500 ms, p90 1 ms around 30 ms was used."""
    why = workload_refusal(_with_workload(h100_workload_report(), **changes))
    assert why.startswith(says) and EDITED in why


def test_rounding_is_not_a_contradiction():
    """Figures a few ulps apart, as float arithmetic leaves them, are the same figure."""
    honest = h100_report()
    (p,) = honest.collectives.series[0].points
    nudged = _with_points(honest, (dataclasses.replace(
        p, busbw_gb_per_s=p.busbw_gb_per_s * (1 + 1e-12),
        busbw_p90_gb_per_s=p.busbw_gb_per_s * (1 - 1e-12)),))
    assert contradiction(nudged) is None
    w = h100_workload_report()
    assert contradiction(_with_workload(w, fwd_bwd_seconds=w.workload.fwd_bwd_seconds
                                        * (1 + 1e-12))) is None
