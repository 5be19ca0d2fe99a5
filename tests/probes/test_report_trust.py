"""Reports whose figures contradict each other are not trusted (hostile-input sweep fuzz22,
items 1, 3, 5, 6, 7 and 8): each test is named after the forgery it pins, built from the valid
reports of tests/probe_reports.py with one field edited as the sweep's reproduction files did
(named in each test: L1_wl_summary_forged, P3_socket_rdma_true_45, K1-K3, B1, B5, E1-E7, F3,
G1-G4, L5, L6). The unedited reports must still be trusted."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json

import pytest
from probe_reports import EDITED, LLAMA3_8B_LAYER, by_kind, h100_report, h100_workload_report
from probe_store import H100, put

from planner.model import WorkloadShape
from planner.store import load_calibration
from probes import ReportError, report_from_bytes, report_to_json
from probes._figures import (
    FP8_ACCUMULATION,
    FP8_MAX_REL_ERROR,
    FULL_REPEATS,
    FULL_WARMUP_S,
    MIN_STEPS,
    MIN_WARMUP_STEPS,
    report_figures,
    workload_refusal,
)
from probes._schema import MatmulPoint, NamedValue
from probes._spread import check_timestamp
from probes._stats import spread


def _with_dtype(report, dtype, **changes):
    return dataclasses.replace(report, matmul=dataclasses.replace(report.matmul, dtypes=tuple(
        dataclasses.replace(d, **changes) if d.dtype == dtype else d
        for d in report.matmul.dtypes)))


# -- 1. the workload summary over GPUs is the ranks' -------------------------------------------
def test_a_workload_summary_no_rank_agrees_with_is_refused(tmp_path, catalog):
    """L1_wl_summary_forged: every rank timed 30 ms per layer, the summary and the section said
    13 ms, and the planner calibrated with 13 ms (estimate -54%, MFU 0.855)."""
    honest = h100_workload_report(layer_ms=30.0)
    assert workload_refusal(honest) is None
    forged = dataclasses.replace(honest, workload=dataclasses.replace(
        honest.workload, layer_fwd_bwd_seconds=0.013, across_ranks=spread([0.013] * 8)))
    why = workload_refusal(forged)
    assert why.startswith("the workload layer_fwd_bwd_seconds summary over GPUs (median "
                          "0.013, n 8) is not what the ranks' own figures give (median 0.03")
    assert EDITED in why
    put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", WorkloadShape(**LLAMA3_8B_LAYER)) is None
    assert any(EDITED in n.reason for n in cal.rejected())


def test_a_workload_rank_without_its_figure_or_a_section_not_rank_0s_is_refused():
    """L2_wl_rank_missing: rank 3 had no workload figures and no error, and was used. With
    one GPU the section's own figure calibrates: one that is not the rank's is an edit too."""
    honest = h100_workload_report()
    missing = dataclasses.replace(honest, ranks=tuple(
        dataclasses.replace(r, workload=()) if r.rank == 3 else r for r in honest.ranks))
    assert "7 of 8 ranks report their workload layer_fwd_bwd_seconds figure" in \
        workload_refusal(missing)
    one = h100_workload_report(world_size=1, local_world_size=1)
    own = dataclasses.replace(one, workload=dataclasses.replace(
        one.workload, layer_fwd_bwd_seconds=0.013))
    assert "own workload layer_fwd_bwd_seconds figure (0.013) is not rank 0's (0.03)" in \
        workload_refusal(own)
    # a rank whose probe failed is named as such, not as an edit
    assert "failed on rank 3" in workload_refusal(h100_workload_report(failed_rank=3))


def test_one_gpus_matmul_best_is_rank_0s():
    """With one GPU the section's best_tflops calibrates (a summary of one value is not used):
    edited to 980 while the rank said 650, it was trusted."""
    honest = h100_report(world_size=1, local_world_size=1)
    assert by_kind(honest)[("matmul", "bf16")].refusal is None
    forged = _with_dtype(honest, "bf16", best_tflops=980.0)
    assert "own matmul bf16 figure (980) is not rank 0's (650)" in \
        by_kind(forged)[("matmul", "bf16")].refusal


# -- 3. RDMA is the network's, not the flag's --------------------------------------------------
def _two_nodes(**series_changes):
    report = h100_report(world_size=16, node_count=2, net="Socket")
    col = report.collectives
    return dataclasses.replace(report, collectives=dataclasses.replace(col, series=tuple(
        dataclasses.replace(s, **series_changes) if s.scope == "world" else s
        for s in col.series)))


def test_a_socket_link_labelled_rdma_is_not_the_fabric(tmp_path, catalog):
    """P3_socket_rdma_true_45: net Socket, transport NET/Socket, rdma true: used as 45 GB/s of
    fabric, while the same file with rdma false was refused."""
    forged = _two_nodes(rdma=True, transport="NET/Socket")
    assert by_kind(forged)[("inter", "all_reduce")].rdma is False
    put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.inter("p5.48xlarge", 2) is None
    assert any("went over Socket" in n.reason for n in cal.rejected())


def test_rdma_follows_the_network_and_every_channel():
    assert by_kind(h100_report(world_size=16, node_count=2, net="IB"))[
        ("inter", "all_reduce")].rdma is True
    # an IB network whose channels went over sockets is not RDMA, whatever the flag says
    mixed = _two_nodes(net="IB", rdma=True, transport="NET/Socket+P2P/CUMEM")
    assert by_kind(mixed)[("inter", "all_reduce")].rdma is False
    assert by_kind(_two_nodes(net="IB+Socket", rdma=True))[("inter", "all_reduce")].rdma is False


# -- 5. the fp8 check is read from its numbers ------------------------------------------------
@pytest.mark.parametrize(("changes", "says"), [
    ({"check_rel_error": 0.9}, "the accuracy check says passed=True with relative error "
                               "0.9 against the probe's limit 0.05"),  # K1
    ({"check_max_rel_error": 1000.0}, "the accuracy check's limit 1000 is not the probe's "
                                      "0.05"),  # K2
    ({"accumulation": "fast"}, "accumulation 'fast' is not what the probe records for it "
                               "('split (full precision)')"),  # K3
    ({"accumulation": None}, "accumulation None is not what the probe records"),
    ({"check_rel_error": None}, "the accuracy check says passed=True with relative "
                                "error none"),
])
def test_an_fp8_check_that_contradicts_its_numbers_is_refused(changes, says):
    """K1-K3: a 90% error marked passed, a limit of 1000, fast accumulation under fp8_e4m3;
    all were used (fp8 1,500 TFLOP/s)."""
    forged = _with_dtype(h100_report(fp8_tflops=1500.0), "fp8_e4m3", **changes)
    figures = report_figures(forged)
    assert all(f"matmul fp8_e4m3: {says}" in f.refusal and EDITED in f.refusal
               for f in figures)


def test_an_honest_fp8_check_decides_by_the_probes_limit():
    assert by_kind(h100_report(fp8_tflops=1300.0))[("matmul", "fp8_e4m3")].refusal is None
    failed = by_kind(h100_report(fp8_tflops=1300.0, fp8_rel_error=0.2))
    assert failed[("matmul", "fp8_e4m3")].refusal == ("fp8 failed its accuracy check against "
                                                      "bf16 (relative error 0.2, limit 0.05)")
    assert failed[("matmul", "bf16")].refusal is None  # the rest of the report is fine
    unchecked = _with_dtype(h100_report(fp8_tflops=1300.0), "fp8_e4m3", check_rel_error=None,
                            check_passed=None)
    assert by_kind(unchecked)[("matmul", "fp8_e4m3")].refusal == "fp8 has no accuracy check"


def test_the_fp8_facts_are_the_probes_own():
    """_figures repeats what probes._matmul (torch) writes; they must not drift apart."""
    pytest.importorskip("torch")
    import inspect

    import probes._matmul as matmul

    assert FP8_MAX_REL_ERROR == matmul.FP8_MAX_REL_ERROR
    source = inspect.getsource(matmul)
    assert all(f'"{a}"' in source for a in FP8_ACCUMULATION.values())


def test_the_full_run_settings_are_the_probes_own():
    """_figures repeats what a full run does (probes._runner, probes._warmup: torch)."""
    pytest.importorskip("torch")
    import inspect

    import probes._runner as runner
    import probes._warmup as warmup

    assert FULL_WARMUP_S == warmup.GPU_WARMUP[0]
    assert f"repeats=3 if q else {FULL_REPEATS}" in inspect.getsource(runner)


@pytest.mark.parametrize("changes", [{"repeats": 3}, {"warmup_seconds": 0.4},
                                     {"warmup_seconds": 0.0},
                                     {"repeats": 3, "warmup_seconds": 0.4}])
def test_a_quick_run_relabelled_full_calibrates_nothing(changes):
    """`quick: false` on a run of 3 repeats after a 0.4 s warm-up: all four figures were used."""
    report = h100_report()
    edited = dataclasses.replace(report, matmul=dataclasses.replace(report.matmul, **changes))
    figures = by_kind(edited).values()
    assert figures and all("a quick run's settings" in (f.refusal or "") for f in figures)
    assert all(f.refusal is None for f in by_kind(report).values())


# -- 6. matmul figures that contradict each other ----------------------------------------------
def test_a_point_or_median_above_the_stated_best_is_refused():
    """B1_point_5000 and B5: a point at 5,000 TFLOP/s, or a median over shapes of 5,000, with
    best_tflops 650 (the max over the points)."""
    honest = h100_report()
    point = dataclasses.replace(honest, matmul=dataclasses.replace(honest.matmul, points=(
        *honest.matmul.points, MatmulPoint(dtype="bf16", m=8192, n=4096, k=4096, layout="nt",
                                           seconds_median=2 * 8192 * 4096**2 / 5e15,
                                           tflops=5000.0))))
    assert all("matmul bf16: a point (8192x4096x4096, 5,000 TFLOP/s) is above the stated "
               f"best 650, the max over the points: {EDITED}" in f.refusal
               for f in report_figures(point))
    median = _with_dtype(honest, "bf16", median_tflops=5000.0)
    assert all("the median over shapes (5,000 TFLOP/s) is above the best (650)" in f.refusal
               for f in report_figures(median))


def test_unedited_reports_are_still_trusted():
    for report in (h100_report(fp8_tflops=1300.0, fp16_tflops=700.0),
                   h100_report(world_size=16, node_count=2, net="AWS Libfabric")):
        assert all(f.refusal is None for f in report_figures(report))
    assert workload_refusal(h100_workload_report(rank_ms=(30.0, 31.0, 29.5, 30.2, 30.0, 30.4,
                                                          29.9, 30.1))) is None
    ranks = h100_report().ranks  # summaries recomputed from figures that differ per GPU
    assert ranks[0].matmul_best_tflops == (NamedValue(name="bf16", value=650.0),)


# -- 8. timestamps name a moment, in UTC, that a run could have had ------------------------------
def test_a_zoned_time_is_converted_to_utc():
    """E5: 2026-01-31T12:00:00+14:00 was shown as 12:00 UTC; it is 22:00 UTC the day before."""
    report = h100_report(created_utc="2026-01-31T12:00:00+14:00")
    assert report.created_utc == "2026-01-30T22:00:00Z"
    again = report_from_bytes(report_to_json(report).encode())
    assert again.created_utc == "2026-01-30T22:00:00Z"
    assert h100_report().created_utc == "2026-01-31T12:00:00Z"  # what the probes write
    assert check_timestamp("t", "2026-01-31T12:00:00.250000-05:00") == \
        "2026-01-31T17:00:00.250000Z"


def _soon(days: float) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize(("created", "says"), [
    ("2099-12-31T23:59:59Z", "created_utc '2099-12-31T23:59:59Z' is after now"),
    ("1970-01-01T00:00:00Z", "created_utc '1970-01-01T00:00:00Z' is before 2020-01-01"),
    ("2019-12-31T23:59:59Z", "is before 2020-01-01"),
    ("0001-01-01", "created_utc '0001-01-01' has no time zone"),
    ("2026-01-31", "created_utc '2026-01-31' has no time zone"),
    ("20260131T120000", "created_utc '20260131T120000' has no time zone"),
    ("2026-01-31 12:00", "created_utc '2026-01-31 12:00' has no time zone"),
    (_soon(2), "is after now"),
])
def test_a_time_no_run_could_have_is_refused(created, says):
    data = json.loads(report_to_json(h100_report()))
    data["created_utc"] = created
    with pytest.raises(ReportError) as err:
        report_from_bytes(json.dumps(data).encode())
    message = str(err.value)
    assert says in message and "To fix:" in message and "\n" not in message


def test_clock_skew_of_less_than_a_day_is_allowed():
    assert h100_report(created_utc=_soon(0.5)).created_utc.endswith("Z")
    assert h100_report(created_utc="2020-01-01T00:00:00Z").created_utc == \
        "2020-01-01T00:00:00Z"


# -- 7. the run's own facts agree: GPUs, nodes, hosts, devices, steps, bytes -----------------------
def _refusals(report):
    """Every figure's refusal (all the same when the report itself is refused)."""
    return {f.refusal for f in report_figures(report)}


def _with_ranks(report, **changes):
    return dataclasses.replace(report, ranks=tuple(dataclasses.replace(r, **changes)
                                                   for r in report.ranks))


def _with_env(report, **changes):
    return dataclasses.replace(report, environment=dataclasses.replace(report.environment,
                                                                       **changes))


@pytest.mark.parametrize(("changes", "says"), [
    ({"gpu_memory_bytes": 1024}, "the environment gives the GPU 1,024 bytes of memory, below "
                                 "the 1 GiB of any GPU the planner calibrates"),
    ({"gpu_memory_bytes": 2**30 - 1}, "below the 1 GiB"),
    ({"compute_capability": "1.0"}, "compute capability '1.0' is no CUDA GPU's (3 to 15)"),
    ({"compute_capability": "99.0"}, "compute capability '99.0' is no CUDA GPU's"),
    ({"compute_capability": "nine"}, "compute capability 'nine' is no CUDA GPU's"),
])
def test_gpu_facts_no_cuda_gpu_has_are_refused(changes, says):
    """F3_env_nonsense: an "H100" with 1 KB of memory and compute capability 1.0 calibrated."""
    (why,) = _refusals(_with_env(h100_report(), **changes))
    assert says in why and EDITED in why


def test_gpu_facts_of_real_gpus_are_trusted():
    for changes in ({"compute_capability": "3.0"}, {"compute_capability": "12.0"},
                    {"compute_capability": None, "gpu_memory_bytes": None},
                    {"gpu_memory_bytes": 16 * 2**30}):
        assert _refusals(_with_env(h100_report(), **changes)) == {None}


def test_more_ranks_per_node_than_the_node_shows_gpus_is_refused():
    """A CUDA run puts local rank r on GPU r and stops when a rank has none
    (probes._timing.resolve_device), so 8 ranks per node beside 4 GPUs seen by CUDA and by
    nvidia-smi is a report of another machine's shape."""
    (why,) = _refusals(_with_env(h100_report(), gpu_count=4, gpu_count_smi=4))
    assert why.startswith("8 ranks per node ran on a node that shows 4 GPUs to CUDA") \
        and EDITED in why
    (why,) = _refusals(_with_env(h100_report(), gpu_count=4, gpu_count_smi=None))
    assert "shows 4 GPUs" in why
    # nvidia-smi listing more does not help: CUDA_VISIBLE_DEVICES only lowers CUDA's count,
    # and the probe stops where a local rank has no CUDA device
    (why,) = _refusals(_with_env(h100_report(), gpu_count=2, gpu_count_smi=8))
    assert "shows 2 GPUs to CUDA" in why
    # more GPUs than ranks is a run on part of the node: its own rule (bus bandwidth only)
    part = _refusals(_with_env(h100_report(), gpu_count=16, gpu_count_smi=16))
    assert None in part and not any("ranks per node" in r for r in part if r)
    # CUDA_VISIBLE_DEVICES may hide GPUs from CUDA that nvidia-smi still lists: 8 of 16
    assert None in _refusals(_with_env(h100_report(), gpu_count=8, gpu_count_smi=16))


def test_fp8_measured_on_a_gpu_without_fp8_is_refused():
    """fp8 matmuls need compute capability 8.9 (Ada) or above: a report of an fp8 rate at
    capability 8.0 states a GPU that could not have run them."""
    report = h100_report(fp8_tflops=1300.0)
    (why,) = _refusals(_with_env(report, compute_capability="8.0"))
    assert why.startswith("matmul fp8_e4m3 was measured at compute capability 8.0, and fp8 "
                          "matmuls need 8.9 or above") and EDITED in why
    for cc in ("8.9", "9.0", "10.0", None):  # Ada, Hopper, Blackwell; unknown is not a claim
        assert all(r is None or "compute capability" not in r
                   for r in _refusals(_with_env(report, compute_capability=cc)))
    # without an fp8 result, capability 8.0 states nothing against the report
    assert _refusals(_with_env(h100_report(), compute_capability="8.0")) == {None}


def test_a_world_size_that_is_not_nodes_times_gpus_per_node_is_refused():
    """G1_nodes2_world8: 2 nodes of 8 GPUs said the environment, 8 ranks in all."""
    (why,) = _refusals(_with_env(h100_report(), node_count=2))
    assert why.startswith("the environment's world size 8 is not its 2 node(s) x 8 GPUs per "
                          "node") and EDITED in why


def test_a_section_that_states_another_run_is_refused():
    """G2_coll_local2: the collectives said 2 GPUs per node, the environment 8. The workload
    section's tp x dp is its world size too."""
    honest = h100_report()
    forged = dataclasses.replace(honest, collectives=dataclasses.replace(
        honest.collectives, local_world_size=2))
    (why,) = _refusals(forged)
    assert why.startswith("the collectives section's run (8 ranks, 2 per node, 1 node(s)) is "
                          "not the environment's (8, 8, 1)") and EDITED in why
    wl = h100_workload_report()
    wl_forged = dataclasses.replace(wl, workload=dataclasses.replace(wl.workload, dp=4))
    assert "the workload section's run (4 ranks, 8 per node, 1 node(s))" in \
        workload_refusal(wl_forged)
    # a failed run may not have divided the world by --tp: its failure is the reason given
    failed = h100_workload_report(status="failed")
    failed = dataclasses.replace(failed, workload=dataclasses.replace(failed.workload, tp=4,
                                                                      dp=1))
    assert "the workload probe failed on rank 0" in workload_refusal(failed)


def test_a_multi_node_run_on_one_host_is_refused(tmp_path, catalog):
    """G4_2n_one_host: 2 nodes said the run, all 16 ranks said host node-0, and the cross-node
    all-reduce calibrated the fabric."""
    honest = h100_report(world_size=16, node_count=2)
    assert by_kind(honest)[("inter", "all_reduce")].refusal is None
    forged = _with_ranks(honest, hostname="node-0")
    (why,) = _refusals(forged)
    assert why.startswith("the ranks are on 1 host(s) (node-0: 16 ranks), not 2 node(s) of 8 "
                          "GPUs") and EDITED in why
    put(tmp_path, catalog, forged)
    cal = load_calibration(catalog)
    assert cal.inter("p5.48xlarge", 2) is None
    # a third host, or a host holding a rank too many, is no more the run stated
    moved = dataclasses.replace(honest, ranks=tuple(
        dataclasses.replace(r, hostname="node-2") if r.rank == 15 else r
        for r in honest.ranks))
    assert "the ranks are on 3 host(s)" in _refusals(moved).pop()


def test_ranks_on_one_gpu_are_refused():
    """G3_all_ranks_cuda0: all 8 ranks on cuda:0, local rank 0, one GPU UUID: one GPU measured
    8 times (timesliced), with its intra-node busbw used."""
    honest = h100_report()
    (why,) = _refusals(_with_ranks(honest, device="cuda:0", local_rank=0, gpu_uuid="GPU-aaaa"))
    assert why.startswith("ranks 0 and 1 both ran on node-0 cuda:0: one GPU counted twice")
    assert EDITED in why
    # distinct device indices but one UUID (each rank's CUDA_VISIBLE_DEVICES the same GPU)
    (why,) = _refusals(_with_ranks(honest, gpu_uuid="GPU-aaaa"))
    assert "ranks 0 and 1 both ran on GPU GPU-aaaa" in why
    one_local = _with_ranks(honest, local_rank=0)
    assert "both ran on node-0 local rank 0" in _refusals(one_local).pop()
    uuids = dataclasses.replace(honest, ranks=tuple(
        dataclasses.replace(r, gpu_uuid=f"GPU-{r.rank:04d}") for r in honest.ranks))
    assert _refusals(uuids) == {None}  # UUIDs of distinct GPUs; none at all (CPU) is fine too


def test_a_workload_run_of_too_few_steps_is_refused():
    """L6_wl_steps1: 1 timed step after no warm-up (not --quick) calibrated as a full run.
    A shorter run than the defaults (20 after 3) is the user's choice and still counts."""
    assert (MIN_STEPS, MIN_WARMUP_STEPS) == (10, 2)  # docs/probes.md states them
    honest = h100_workload_report()
    for steps, warmup in ((1, 0), (MIN_STEPS - 1, MIN_WARMUP_STEPS),
                          (MIN_STEPS, MIN_WARMUP_STEPS - 1)):
        short = dataclasses.replace(honest, workload=dataclasses.replace(
            honest.workload, steps=steps, warmup_steps=warmup))
        assert workload_refusal(short).startswith(
            f"{steps} timed step(s) after {warmup} warm-up step(s), fewer than 10 after 2")
    for steps, warmup in ((20, 3), (100, 10)):
        enough = dataclasses.replace(honest, workload=dataclasses.replace(
            honest.workload, steps=steps, warmup_steps=warmup))
        assert workload_refusal(enough) is None


@pytest.mark.parametrize("value", [-1e12, 0.0])
def test_a_workload_byte_count_of_nothing_or_less_is_refused(value):
    """L5_wl_neg_act: layer_activation_bytes -1e12 on every rank and in the section was
    accepted (the allocator figures calibrate the memory ratio)."""
    honest = h100_workload_report()
    section = dataclasses.replace(honest.workload, layer_activation_bytes=value)
    why = workload_refusal(dataclasses.replace(honest, workload=section))
    assert why.startswith(f"the workload layer_activation_bytes is {value:,.4g} bytes")
    assert EDITED in why
    ranks = tuple(dataclasses.replace(r, workload=tuple(
        NamedValue(name=v.name, value=value) if v.name == "layer_activation_bytes" else v
        for v in r.workload)) for r in honest.ranks)
    why = workload_refusal(dataclasses.replace(honest, ranks=ranks))
    assert why.startswith(f"rank 0's workload layer_activation_bytes is {value:,.4g}")
    # CPU runs have no allocator figures: not reported is not refused for it
    assert workload_refusal(h100_workload_report(activation_mib=None)) is None
