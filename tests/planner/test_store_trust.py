"""Trust in stored probe reports, from the hostile sweep fuzz22 (items 2, 4 and 7): every GPU's
figure is bounded, not only the median; a spread that says "faulty node" refuses the report;
copies of one run count once; a GPU name that contradicts the instance type is refused; and a
workload run is a full node by the catalog's GPU count, not the report's.

Reports are the builders' (tests/probe_reports.py) with one rank's figures changed and the
summaries over GPUs recomputed as the probe's gather does (``with_spreads``), so only the
figure under test is wrong. Rank 0 keeps the sections' own figures.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import pytest
from probe_reports import h100_report, h100_workload_report
from probe_store import H100, put, refused

from planner import CalibrationError
from planner.store import db_path, ingest, ingest_bytes, list_reports, load_calibration
from probes import report_to_json, write_report_atomic
from probes._gather import with_spreads
from probes._schema import NamedValue
from probes._stats import spread


def with_rank_figures(report, attr: str, name: str, values: dict[int, float]):
    """``report`` with ranks' ``attr`` figure ``name`` set from {rank: value}, summaries redone."""
    ranks = tuple(dataclasses.replace(r, **{attr: tuple(
        NamedValue(name=v.name, value=values[r.rank])
        if v.name == name and r.rank in values else v for v in getattr(r, attr))})
        for r in report.ranks)
    matmul, memory = with_spreads(report.matmul, report.memory, ranks)
    return dataclasses.replace(report, ranks=ranks, matmul=matmul, memory=memory)


def workload_with_rank_ms(rank_ms: tuple[float, ...]):
    """A workload report whose ranks time ``rank_ms``; the section's own figures are rank 0's."""
    report = h100_workload_report(rank_ms=rank_ms)
    assert report.workload.across_ranks == spread(
        [ms / 1e3 for ms in rank_ms], list(range(len(rank_ms))))
    return report


def whole_report_refused(cal, report_id: int, why: str) -> None:
    reasons = refused(cal, report_id)
    assert reasons and any(why in r for r in reasons), reasons
    assert all(why in r for r in reasons), reasons  # every figure, not only the bad one


# -- item 2: every GPU's figure is bounded, not only the median -------------------------------
@pytest.mark.parametrize("rank_ms, why", [
    # half the GPUs 12,500x faster than the layer's FLOPs at peak allow: accepted as 15 ms
    ((30.0,) * 4 + (1e-3,) * 4, "rank 4: 0.001 ms per layer is faster than its"),
    # one GPU
    ((30.0,) * 7 + (1e-3,), "rank 7: 0.001 ms per layer is faster than its"),
    # one GPU over 20x the model: broken
    ((30.0,) * 7 + (2000.0,), "rank 7: 2,000 ms per layer is over 20x the modelled"),
])
def test_an_impossible_layer_on_any_gpu_refuses_the_report(tmp_path, catalog, rank_ms, why):
    stored = put(tmp_path, catalog, workload_with_rank_ms(rank_ms))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None
    whole_report_refused(cal, stored.id, why)


def test_one_gpu_above_the_datasheet_peak_refuses_the_report(tmp_path, catalog):
    # rank 7 at 1,700 TFLOP/s (H100 bf16 peak 989.5): the P90 over 8 GPUs was 965, accepted
    report = with_rank_figures(h100_report(), "matmul_best_tflops", "bf16", {7: 1700.0})
    assert report.matmul.dtypes[0].across_ranks.p90 < 989.5
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.empty
    whole_report_refused(cal, stored.id, "rank 7's 1,700 TFLOP/s is above the datasheet 989.5")


def test_one_of_sixteen_gpus_at_a_million_tflops_refuses_the_report(tmp_path, catalog):
    report = h100_report(world_size=16, node_count=2)
    report = with_rank_figures(report, "matmul_best_tflops", "bf16", {15: 1e6})
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.empty and cal.inter("p5.48xlarge", 2) is None
    whole_report_refused(cal, stored.id, "rank 15's 1e+06 TFLOP/s is above")


def test_one_gpu_copying_above_the_hbm_bandwidth_refuses_the_report(tmp_path, catalog):
    # one of 16 GPUs at 1e7 GB/s: the P90 over them was the honest 2,983
    report = with_rank_figures(h100_report(world_size=16, node_count=2), "memory_gb_per_s",
                               "device_copy", {5: 1e7})
    assert report.memory.points[0].across_ranks.p90 < 3350
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.hbm(H100) is None and cal.empty
    whole_report_refused(cal, stored.id, "rank 5's 1e+07 GB/s is above the datasheet 3,350")


def test_half_the_gpus_broken_is_not_averaged_into_the_median(tmp_path, catalog):
    # 4 GPUs at 980 and 4 at 0.01 TFLOP/s were used as 490
    report = with_rank_figures(h100_report(bf16_tflops=980.0), "matmul_best_tflops", "bf16",
                               dict.fromkeys(range(4, 8), 0.01))
    assert report.matmul.dtypes[0].across_ranks.p50 == pytest.approx(490.0, rel=1e-3)
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None and cal.empty
    whole_report_refused(cal, stored.id, "rank 4's 0.01 TFLOP/s is below 5% of the datasheet")


def test_a_gpu_under_half_the_median_is_a_faulty_node(tmp_path, catalog):
    faulty = with_rank_figures(h100_report(), "matmul_best_tflops", "bf16", {6: 300.0})
    stored = put(tmp_path, catalog, faulty)
    cal = load_calibration(catalog)
    assert cal.empty
    whole_report_refused(cal, stored.id, "rank 6's 300 TFLOP/s is under 50% of the median "
                                         "GPU's 650: the report describes a faulty node")
    assert "To fix:" in refused(cal, stored.id)[0]


def test_a_layer_over_twice_the_median_gpu_is_a_faulty_node(tmp_path, catalog):
    stored = put(tmp_path, catalog, workload_with_rank_ms((30.0,) * 7 + (70.0,)))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None
    whole_report_refused(cal, stored.id, "rank 7's 70 ms per layer is over 2x the median "
                                         "GPU's 30 ms: the report describes a faulty node")


def test_activations_above_the_gpu_memory_on_one_gpu_refuse_the_report(tmp_path, catalog):
    report = h100_workload_report()
    ranks = tuple(dataclasses.replace(r, workload=tuple(
        NamedValue(name=v.name, value=200 * 2**30)
        if v.name == "layer_activation_bytes" and r.rank == 3 else v for v in r.workload))
        for r in report.ranks)
    stored = put(tmp_path, catalog, dataclasses.replace(report, ranks=ranks))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None
    whole_report_refused(cal, stored.id, "rank 3: 200.0 GiB of activations per layer is above")


def test_an_honest_spread_between_gpus_calibrates_by_its_median(tmp_path, catalog):
    # GPUs of one model differ by a few percent, a throttled one by 10-30%: all believed
    report = with_rank_figures(h100_report(), "matmul_best_tflops", "bf16",
                               {1: 640.0, 2: 660.0, 3: 600.0, 4: 455.0, 5: 700.0})
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert refused(cal, stored.id) == []
    assert cal.matmul(H100, "bf16").value == report.matmul.dtypes[0].across_ranks.p50 == 650.0
    layers = put(tmp_path, catalog, workload_with_rank_ms((30.0, 29.0, 31.0, 33.0, 30.0, 30.5,
                                                           30.0, 45.0)), "w.json")
    cal = load_calibration(catalog)
    assert refused(cal, layers.id) == []
    assert cal.workload(H100, "fsdp", _layer()).measured_layer_seconds == 0.03025


# -- item 4: copies of one run count once ------------------------------------------------------
def _store_past_ingest(report_json: str, *, accelerator: str | None = None) -> None:
    """Store ``report_json`` beside report 1 as an older gpuplan did, without today's ingest
    checks (``accelerator``: the label stored; default report 1's)."""
    with sqlite3.connect(db_path()) as conn:
        conn.execute("INSERT INTO reports (sha256, ingested_utc, created_utc, accelerator, "
                     "device_type, report_json) SELECT ?, ingested_utc, created_utc, "
                     "coalesce(?, accelerator), device_type, ? FROM reports WHERE id = 1",
                     (f"past-{len(report_json)}", accelerator, report_json))


def _compact(report) -> bytes:
    return json.dumps(json.loads(report_to_json(report))).encode()


@pytest.mark.parametrize("copy", [
    pytest.param(lambda r: _compact(r), id="re-saved as compact JSON"),
    pytest.param(lambda r: report_to_json(dataclasses.replace(
        r, environment=dataclasses.replace(r.environment, hostname="elsewhere"),
        ranks=tuple(dataclasses.replace(x, hostname="elsewhere") for x in r.ranks))).encode(),
        id="another hostname"),
    pytest.param(lambda r: report_to_json(dataclasses.replace(
        r, created_utc="2026-01-31T12:00:01Z")).encode(), id="created 1 s later"),
])
def test_a_copy_of_a_stored_run_is_already_stored(tmp_path, catalog, copy):
    report = h100_report(bf16_tflops=980.0)
    first = put(tmp_path, catalog, report)
    again = ingest_bytes(copy(report), catalog, source="copy.json")
    assert again.id == first.id
    assert again.ingest_status == "already stored as report 1 (same measurements)"
    assert len(list_reports()) == 1
    m = load_calibration(catalog).matmul(H100, "bf16")
    assert (m.value, m.n_reports) == (980.0, 1)


def _nudged(report, factor: float) -> str:
    """``report``'s JSON with every non-integer number times ``factor``: derived figures stay
    what their raw ones give (both sides scale), and percentiles stay in order."""
    def walk(v):
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v * factor if isinstance(v, float) and not v.is_integer() else v
    return json.dumps(walk(json.loads(report_to_json(report))))


def test_a_copy_with_its_figures_nudged_is_the_same_run(tmp_path, catalog):
    """A copy with every figure moved by 1e-9 counted as a second run: the exact fingerprint
    missed it, and one run pulled the median towards itself. Two real runs' timed figures
    differ far more than 1e-6 (timer noise): within that, it is the same run."""
    report = h100_report(bf16_tflops=980.0)
    first = put(tmp_path, catalog, report)
    again = ingest_bytes(_nudged(report, 1 + 1e-9).encode(), catalog, source="nudged.json")
    assert again.id == first.id and len(list_reports()) == 1
    assert again.ingest_status == ("already stored as report 1 (same measurements, within a "
                                   "relative 1e-06)")
    # one that differs as two runs do is another run
    other = ingest_bytes(_nudged(report, 1 + 1e-4).encode(), catalog, source="other.json")
    assert other.ingest_status == "stored" and len(list_reports()) == 2


def test_a_copy_with_a_setting_edited_is_the_same_run(tmp_path, catalog):
    """200 copies of one run with only matmul.warmup_seconds edited (21 + i s) were 200 runs
    and outvoted a genuinely different run in the median (review 2026-12-06): settings are
    not measurements."""
    report = h100_report(bf16_tflops=650.0)
    first = put(tmp_path, catalog, report, "base.json")
    for i, warm in enumerate((22.0, 23.5)):
        copy = dataclasses.replace(report, matmul=dataclasses.replace(report.matmul,
                                                                        warmup_seconds=warm))
        again = put(tmp_path, catalog, copy, f"w{i}.json")
        assert again.id == first.id, again.ingest_status
    assert len(list_reports()) == 1


def test_a_nudged_copy_stored_before_ingest_knew_counts_once(tmp_path, catalog):
    put(tmp_path, catalog, h100_report(bf16_tflops=980.0))
    _store_past_ingest(_nudged(h100_report(bf16_tflops=980.0), 1 - 1e-8))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").report_ids == (1,)
    (why,) = refused(cal, 2)
    assert why.startswith("the same measurements as report 1, within a relative 1e-06 (a copy "
                          "of that run")


def test_copies_do_not_decide_the_median_but_other_runs_do(tmp_path, catalog):
    put(tmp_path, catalog, h100_report(bf16_tflops=650.0), "honest.json")
    put(tmp_path, catalog, h100_report(bf16_tflops=980.0), "forged.json")
    copy = h100_report(bf16_tflops=980.0, hostname="node-9")
    assert ingest_bytes(_compact(copy), catalog, source="c.json").ingest_status.startswith(
        "already stored as report 2")
    assert load_calibration(catalog).matmul(H100, "bf16").value == 815.0  # 650 and 980
    put(tmp_path, catalog, h100_report(bf16_tflops=700.0), "another-run.json")
    assert load_calibration(catalog).matmul(H100, "bf16").n_reports == 3


def test_a_copy_stored_before_ingest_knew_counts_once(tmp_path, catalog):
    first = put(tmp_path, catalog, h100_report(bf16_tflops=980.0))
    _store_past_ingest(_compact(h100_report(bf16_tflops=980.0)).decode())  # other bytes
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").report_ids == (first.id,)
    (why,) = refused(cal, 2)
    assert why.startswith("the same measurements as report 1")


# -- item 7: facts that contradict the catalog ------------------------------------------------
def test_a_gpu_name_that_contradicts_the_instance_type_is_refused(tmp_path, catalog):
    # an A100 name on a p5.48xlarge (H100) calibrated A100 plans: $38,414 became $32,309
    path = write_report_atomic(h100_report(gpu_model="NVIDIA A100-SXM4-80GB"),
                               tmp_path / "r.json")
    with pytest.raises(CalibrationError) as info:
        ingest(path, catalog)
    text = str(info.value)
    assert "'NVIDIA A100-SXM4-80GB' (A100-SXM4-80GB) on a p5.48xlarge" in text
    assert "whose GPUs are H100-SXM5-80GB" in text and "To fix:" in text
    assert "\n" not in text and list_reports() == []


def test_a_contradicting_report_stored_before_ingest_knew_is_refused(tmp_path, catalog):
    put(tmp_path, catalog, h100_report())
    _store_past_ingest(report_to_json(h100_report(bf16_tflops=600.0,
                                                  gpu_model="NVIDIA A100-SXM4-80GB")),
                       accelerator="A100-SXM4-80GB")
    cal = load_calibration(catalog)
    assert cal.matmul("A100-SXM4-80GB", "bf16") is None
    (why,) = refused(cal, 2)
    assert "on a p5.48xlarge, whose GPUs are H100-SXM5-80GB" in why


def test_gpu_memory_that_is_not_the_catalog_gpus_is_refused(tmp_path, catalog):
    """An "H100" with 16 GiB of memory (a T4's, relabelled) calibrated H100 plans: the memory
    a GPU reports is its datasheet figure less what ECC and the driver keep, 0.92-1.0 of it
    on real GPUs (T4 with ECC 14.75 of 16 GiB, H100 79.6 of 80)."""
    path = write_report_atomic(h100_report(gpu_memory_bytes=16 * 2**30), tmp_path / "r.json")
    with pytest.raises(CalibrationError) as info:
        ingest(path, catalog)
    text = str(info.value)
    assert text.startswith("the report gives its GPU 16.0 GiB of memory, and H100-SXM5-80GB "
                           "has 80 GiB")
    assert "To fix:" in text and "\n" not in text and list_reports() == []
    # an accelerator named by hand is held to the same figure
    with pytest.raises(CalibrationError, match="has 80 GiB"):
        ingest(write_report_atomic(h100_report(gpu_model="Some GPU", gpu_memory_bytes=16 * 2**30,
                                               instance_type=None, cloud=None),
                                   tmp_path / "s.json"), catalog, accelerator="H100")
    # 94 GiB is an H100 NVL's, not this 80 GiB SXM part
    with pytest.raises(CalibrationError, match="93.6 GiB"):
        ingest(write_report_atomic(h100_report(gpu_memory_bytes=int(93.6 * 2**30)),
                                   tmp_path / "t.json"), catalog)
    for gib in (68.5, 79.6, 84.0):  # within 0.85-1.05 of 80: ECC, driver, rounding
        put(tmp_path, catalog, h100_report(gpu_memory_bytes=int(gib * 2**30),
                                           bf16_tflops=600.0 + gib), f"{gib}.json")
    assert len(list_reports()) == 3


def test_gpu_memory_stored_before_ingest_knew_is_refused(tmp_path, catalog):
    put(tmp_path, catalog, h100_report())
    _store_past_ingest(report_to_json(h100_report(bf16_tflops=600.0,
                                                  gpu_memory_bytes=16 * 2**30)))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").report_ids == (1,)
    (why,) = refused(cal, 2)
    assert why.startswith("the report gives its GPU 16.0 GiB of memory, and H100-SXM5-80GB")


def test_a_one_gpu_workload_run_on_an_eight_gpu_instance_is_not_a_full_node(tmp_path, catalog):
    # the report's own count says "a node of one GPU"; the catalog says p5.48xlarge has 8
    stored = put(tmp_path, catalog, h100_workload_report(
        world_size=1, local_world_size=1, gpu_count=1, gpu_count_smi=None))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None
    (why,) = refused(cal, stored.id)
    assert "the run used 1 of p5.48xlarge's 8 GPUs" in why and "To fix:" in why


def _layer():
    from probe_reports import LLAMA3_8B_LAYER

    from planner.model import WorkloadShape

    return WorkloadShape(**LLAMA3_8B_LAYER)


# -- a workload shape the planner cannot build ------------------------------------------------
@pytest.mark.parametrize("field,value,says", [
    ("kv_heads", 5, "workload.kv_heads 5 must divide heads 32"),
    ("precision", "fp32", "workload.precision must be one of bf16, fp16, got 'fp32'"),
    ("recompute", "auto", "workload.recompute must be one of none, selective, full"),
    ("layers", 64, "workload.layers 64 (built) is above the model's model_layers 32"),
])
def test_a_workload_shape_no_run_can_have_is_refused_and_never_stops_a_plan(
        field, value, says, tmp_path, catalog):
    """A failed run's report with kv_heads 5 (of 32 heads) was stored, then every `plan`,
    `probe show` and app page that read the store died on the shape the planner builds."""
    data = json.loads(report_to_json(h100_workload_report(status="failed")))
    data["workload"][field] = value
    with pytest.raises(CalibrationError) as info:
        ingest_bytes(json.dumps(data).encode(), catalog, source="w.json")
    assert says in str(info.value) and "To fix:" in str(info.value)
    assert list_reports() == []
    # as an older gpuplan stored it: listed as refused, and the rest of the store still used
    put(tmp_path, catalog, h100_report())
    _store_past_ingest(json.dumps(data))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is not None
    (why,) = refused(cal, 2)
    assert "cannot read it" in why and says in why


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le"])
def test_a_report_re_saved_as_utf16_is_named_as_such(encoding, catalog):
    """It said "'utf-8' codec can't decode byte 0xff … To fix: check the path" (an upload has
    no path); without a byte-order mark it was "not valid JSON"."""
    raw = report_to_json(h100_report()).encode(encoding)
    with pytest.raises(CalibrationError) as info:
        ingest_bytes(raw, catalog, source="r.json")
    text = str(info.value)
    assert "'r.json' is UTF-16 text, not the UTF-8 JSON the probes write" in text
    assert "To fix: use the file the probes wrote, or save this one as UTF-8" in text
    assert "codec" not in text and list_reports() == []


def test_gpu_memory_of_a_mig_slice_or_one_die_of_two_is_not_another_gpu(tmp_path, catalog):
    """The memory band refused a MIG slice at ingest (39.2 GiB of an 80 GiB A100), where the
    report had been stored and then refused by the MIG rule, and an MI250X's GCD, which torch
    shows as a 64 GiB device of the 128 GiB part (review 2026-12-06)."""
    from probes._schema import GpuTelemetry

    mig = h100_report(gpu_model="NVIDIA A100-SXM4-80GB MIG 3g.40gb", instance_type="p4de.24xlarge",
                      gpu_memory_bytes=40192 * 2**20, world_size=1, local_world_size=1,
                      gpu_count=1, gpu_count_smi=8,
                      idle=GpuTelemetry(sampled="idle", mig_mode="Enabled"))
    stored = put(tmp_path, catalog, mig, "mig.json")
    assert stored.ingest_status == "stored"
    assert any("MIG" in why for why in refused(load_calibration(catalog), stored.id))
    gcd = h100_report(gpu_model="AMD Instinct MI250X", instance_type=None, cloud=None,
                      gpu_memory_bytes=68702699520, compute_capability="9.0")
    assert put(tmp_path, catalog, gcd, "gcd.json").ingest_status == "stored"


def test_a_gpu_link_the_catalog_has_not_verified_bounds_nothing(tmp_path, catalog):
    """Standard_NC80adis_H100_v5 pairs two H100 NVL; the catalog does not know whether their
    NVLink bridge is there (network_unverified) and assumes PCIe, 64 GB/s. An honest 300 GB/s
    all-reduce over the bridge was "impossible" and refused the whole report, its matmul and
    HBM figures too (review 2026-12-06). Without a verified figure the busbw is refused alone."""
    report = h100_report(gpu_model="NVIDIA H100 NVL", instance_type="Standard_NC80adis_H100_v5",
                         cloud="azure", region="eastus", zone=None, world_size=2,
                         local_world_size=2, gpu_count=2, gpu_count_smi=2,
                         gpu_memory_bytes=int(93.6 * 2**30), busbw_by_size=((2**30, 300.0),))
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.matmul("H100-NVL-94GB", "bf16") is not None and cal.hbm("H100-NVL-94GB")
    (why,) = refused(cal, stored.id)
    assert "no datasheet figure" in why and "unverified" in why, why


def test_mig_in_the_name_alone_does_not_pass_the_memory_band(tmp_path, catalog):
    """The band let a report through on " MIG " in its GPU name while its mig_mode said
    Disabled (or nvidia-smi was missing), and a 10 GiB slice calibrated whole H100s."""
    report = h100_report(bf16_tflops=93.0, gpu_model="NVIDIA H100 80GB HBM3 MIG 1g.10gb",
                         gpu_memory_bytes=10 * 2**30)
    report = dataclasses.replace(report, ranks=tuple(
        dataclasses.replace(r, gpu_name="NVIDIA H100 80GB HBM3 MIG 1g.10gb")
        for r in report.ranks))
    path = write_report_atomic(report, tmp_path / "r.json")
    with pytest.raises(CalibrationError, match=r"the report's GPU is a MIG slice \(10.0 GiB of "
                                               r"H100-SXM5-80GB's 80 GiB\).*To fix: re-run the "
                                               "probes on whole GPUs"):
        ingest(path, catalog)
