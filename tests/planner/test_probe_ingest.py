"""Probe report → `ingest` → `load_calibration` → `estimate`: what the rules believe, what they
refuse (and say why), and a store that survives concurrent writers and faults. (Workload
layers: test_workload_calibration.py.)

The reports are built from the probe schema's records (tests/probe_reports.py) and written with
the probes' own `write_report_atomic`, so they have exactly the shape `python -m probes` writes.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing as mp
import pickle
import sqlite3

import pytest
from probe_store import H100, p5, put, refused

from planner import CalibrationError, Workload, estimate, preset
from planner.model import (
    NO_CALIBRATION,
    Calibration,
    Measurement,
)
from planner.store import (
    db_path,
    ingest,
    list_reports,
    load_calibration,
    load_calibration_with_notes,
)
from probes import write_report_atomic


def llama3_8b() -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=4 * 1024 * 1024)


# -- a report that calibrates -----------------------------------------------------------------
def test_a_full_node_report_calibrates_the_estimate(tmp_path, catalog, make_report):
    stored = put(tmp_path, catalog, make_report(bf16_tflops=650.0), "h100.json")
    assert stored.accelerator == H100  # from "NVIDIA H100 80GB HBM3"
    assert stored.device_type == "cuda" and stored.instance_type == "p5.48xlarge"
    assert (stored.quick, stored.schema_version, stored.gpus_per_node) == (False, 3, 8)
    assert stored.measurements["matmul_tflops"] == {"bf16": 650.0}
    assert stored.measurements["device_copy_gb_per_s"] == {"copy": 2982.6}
    assert stored.measurements["busbw_intra_gb_per_s"] == {"all_reduce": 481.8}

    cal = load_calibration(catalog)
    m = cal.matmul(H100, "bf16")
    assert m.value == 650.0 and m.source == "probe report 1 on p5.48xlarge, 2026-01-31"
    assert (m.unit, m.n_reports, m.report_ids) == ("TFLOP/s", 1, (1,))
    assert m.p10 <= m.value <= m.p90  # over the eight GPUs (all equal) and repeats
    assert cal.hbm(H100).value == cal.hbm_gb_per_s[H100].value == 2982.6
    assert cal.intra("p5.48xlarge", H100).value == 481.8
    assert cal.intra(None, H100, gpus_per_node=8).value == 481.8  # a full 8-GPU H100 node
    assert cal.intra(None, H100) is None  # no node size: no match by accelerator
    assert cal.intra(None, H100, gpus_per_node=4) is None  # another group, another busbw
    assert cal.rejected() == ()

    cluster, memory = p5(catalog)
    plain = estimate(llama3_8b(), cluster, memory_gib=memory)
    measured = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    # each measured figure is shown next to the datasheet default it replaces
    assert ("matmul bf16: measured 650.0 TFLOP/s instead of the datasheet default 792.6 "
            "(probe report 1 on p5.48xlarge, 2026-01-31)" in measured.calibrated)
    assert any(a.startswith("HBM copy: measured 2983 GB/s instead of 3350 × 0.85")
               for a in measured.calibrated)
    assert any(a.startswith("intra-node busbw: measured 482 GB/s instead of 360")
               for a in measured.calibrated)
    assert set(measured.calibrated) <= set(measured.assumptions)
    assert plain.calibrated == ()
    # 650 < the default 989.5 x 0.801 = 792.6 TFLOP/s, so the measured run is slower
    assert measured.step_time_s > plain.step_time_s


def test_the_done_when_case_quick_and_impossible_reports_change_nothing(tmp_path, catalog,
                                                                       make_report):
    # Issue #15: a 2-GPU --quick report and a 1e308 TFLOP/s report leave an 8-GPU estimate
    # unchanged, and say why; a full-node report changes it.
    cluster, memory = p5(catalog)
    before = estimate(llama3_8b(), cluster, memory_gib=memory)
    quick = put(tmp_path, catalog, make_report(bf16_tflops=300.0, quick=True, world_size=2,
                                               local_world_size=2), "quick.json")
    wild = put(tmp_path, catalog, make_report(bf16_tflops=1e308), "wild.json")
    cal = load_calibration(catalog)
    assert cal.empty
    after = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert after.step_time_s == before.step_time_s
    assert after.wall_clock_hours == before.wall_clock_hours
    assert all("quick mode" in r for r in refused(cal, quick.id))
    reasons = refused(cal, wild.id)
    assert any("above the datasheet 989.5 TFLOP/s" in r and "impossible" in r for r in reasons)
    # its plausible copy and busbw are not trusted either
    assert any(r.startswith("another figure of this report is out of bounds") for r in reasons)
    _, notes = load_calibration_with_notes(catalog)
    assert any(n.startswith("not used: matmul H100-SXM5-80GB bf16: 1e+308") for n in notes)

    put(tmp_path, catalog, make_report(bf16_tflops=600.0), "full.json")
    cal = load_calibration(catalog)
    changed = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert changed.step_time_s != before.step_time_s
    assert any("measured 600.0 TFLOP/s" in a for a in changed.assumptions)


def test_a_partial_node_calibrates_matmul_but_not_bus_bandwidth(tmp_path, catalog,
                                                                make_report):
    put(tmp_path, catalog, make_report(world_size=2, local_world_size=2,
                                       busbw_by_size=((2**30, 150.0),)))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").value == 650.0  # each GPU's matmul is its own
    assert cal.intra("p5.48xlarge", H100) is None
    assert cal.intra(None, H100, gpus_per_node=2) is None
    (why,) = [n.reason for n in cal.rejected() if n.kind == "intra"]
    assert "used 2 of the node's 8 GPUs" in why


def test_several_reports_combine_by_median_not_newest(tmp_path, catalog, make_report):
    for i, (tflops, day) in enumerate(((600.0, "02"), (700.0, "01"), (640.0, "03"))):
        put(tmp_path, catalog, make_report(bf16_tflops=tflops,
                                           created_utc=f"2026-01-{day}T00:00:00Z"), f"{i}.json")
    m = load_calibration(catalog).matmul(H100, "bf16")
    assert m.value == 640.0 and m.n_reports == 3 and m.report_ids == (1, 2, 3)
    assert m.source == "median of probe reports 1, 2, 3 (2026-01-01 .. 2026-01-03)"
    # the envelope of the reports' spreads (each over its eight equal GPUs)
    assert (m.p10, m.p90) == (600.0, 700.0)


def test_reports_that_disagree_more_than_twofold_calibrate_nothing(tmp_path, catalog,
                                                                   make_report):
    """900 and 60 TFLOP/s from two reports of one machine were "measured 480.0 TFLOP/s (median
    of probe reports 1, 2)": a figure nobody measured. Within one report a GPU under half the
    median already refuses it; across reports the same factor withholds the figure."""
    put(tmp_path, catalog, make_report(bf16_tflops=900.0), "a.json")
    put(tmp_path, catalog, make_report(bf16_tflops=400.0, created_utc="2026-02-01T12:00:00Z"),
        "b.json")
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None
    why = [n.reason for n in cal.rejected() if n.kind == "matmul"]
    assert len(why) == 2 and all("the reports of this figure disagree more than 2x (400 in "
                                 "report 2, 900 in report 1): none is used. To fix: remove the "
                                 "wrong one (`gpuplan probe remove ID`)" in w for w in why), why
    assert cal.hbm(H100) is not None  # the figures they agree on still calibrate


def test_a_report_of_more_gpus_than_its_instance_has_calibrates_nothing(tmp_path, catalog,
                                                                        make_report):
    """16 ranks on p5.48xlarge (8 GPUs): matmul and HBM were used, only busbw refused."""
    stored = put(tmp_path, catalog, make_report(world_size=16, local_world_size=16,
                                                gpu_count=16, gpu_count_smi=16))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None and cal.hbm(H100) is None
    assert any("saw 16 GPUs per node on p5.48xlarge, which has 8" in why
               for why in refused(cal, stored.id))


def test_a_cpu_report_is_stored_but_does_not_calibrate(tmp_path, catalog, make_report):
    stored = put(tmp_path, catalog, make_report(device_type="cpu", gpu_model=None), "cpu.json")
    assert stored.device_type == "cpu" and stored.accelerator is None
    assert [r.id for r in list_reports()] == [stored.id]
    cal = load_calibration(catalog)
    assert cal.empty and all("a cpu run does not measure a GPU" in r
                             for r in refused(cal, stored.id))


def test_a_schema_1_report_is_listed_and_refused(tmp_path, catalog, make_report):
    stored = put(tmp_path, catalog, make_report(schema_version=1))
    assert stored.schema_version == 1
    cal = load_calibration(catalog)
    assert cal.empty and all(r.startswith("schema 1 report") for r in refused(cal, stored.id))


def test_a_figure_far_below_the_datasheet_refuses_the_report(tmp_path, catalog, make_report):
    stored = put(tmp_path, catalog, make_report(copy_gb_per_s=10.0))  # 0.3% of 3350 GB/s
    cal = load_calibration(catalog)
    assert cal.empty
    assert any("below 5% of the datasheet 3,350 GB/s" in r for r in refused(cal, stored.id))


def test_fp8_that_fails_its_accuracy_check_does_not_calibrate(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(fp8_tflops=1200.0, fp8_rel_error=0.4), "bad.json")
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "fp8") is None and cal.matmul(H100, "bf16") is not None
    assert any("accuracy check" in n.reason and "0.4" in n.reason for n in cal.rejected())
    put(tmp_path, catalog, make_report(fp8_tflops=1200.0), "good.json")
    assert load_calibration(catalog).matmul(H100, "fp8").value == 1200.0


def test_a_failed_matmul_dtype_does_not_calibrate(tmp_path, catalog, make_report):
    report = make_report()
    failed = dataclasses.replace(report.matmul.dtypes[0], status="failed", reason="OOM",
                                 best_tflops=None, best_shape=None, across_ranks=None)
    report = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, dtypes=(failed,)))
    put(tmp_path, catalog, report)
    assert load_calibration(catalog).matmul(H100, "bf16") is None


# -- the fabric -------------------------------------------------------------------------------
def two_nodes(make_report, busbw: float, *, net: str = "IB", nodes: int = 2, **kw):
    return make_report(world_size=8 * nodes, node_count=nodes,
                       world_busbw_by_size=((2**30, busbw),), net=net, **kw)


def test_only_rdma_multi_node_runs_calibrate_the_fabric(tmp_path, catalog, make_report):
    put(tmp_path, catalog, two_nodes(make_report, 90.0, net="Socket"), "tcp.json")
    cal = load_calibration(catalog)
    assert cal.inter("p5.48xlarge", 2) is None
    assert any("went over Socket" in n.reason and "not RDMA" in n.reason
               for n in cal.rejected())
    assert cal.matmul(H100, "bf16") is not None  # the rest of that report is fine

    put(tmp_path, catalog, two_nodes(make_report, 370.0, net="AWS Libfabric"), "efa.json")
    cal = load_calibration(catalog)
    m = cal.inter("p5.48xlarge", 2)
    assert m.value == 370.0 and m.report_ids == (2,)
    assert cal.inter("p5.48xlarge", 1) is None and cal.inter("p4d.24xlarge", 2) is None
    assert "measured at 2 nodes, node count not given" in cal.inter("p5.48xlarge").source

    cluster, memory = p5(catalog, nodes=2)
    est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert any(a.startswith("inter-node busbw at 2 nodes: measured 370 GB/s")
               for a in est.calibrated)


def test_the_fabric_is_interpolated_between_node_counts_never_extrapolated(tmp_path, catalog,
                                                                         make_report):
    put(tmp_path, catalog, two_nodes(make_report, 380.0, nodes=2), "2.json")
    put(tmp_path, catalog, two_nodes(make_report, 320.0, nodes=8), "8.json")
    cal = load_calibration(catalog)
    assert cal.inter("p5.48xlarge", 2).value == 380.0
    mid = cal.inter("p5.48xlarge", 4)  # log2: halfway between 2 and 8
    assert mid.value == pytest.approx(350.0)
    assert mid.source.startswith("interpolated in log2(nodes) between 2 nodes (380 GB/s")
    assert mid.report_ids == (1, 2)
    assert cal.inter("p5.48xlarge", 16) is None


def test_a_fabric_figure_without_a_known_transport_is_refused(tmp_path, catalog, make_report):
    report = two_nodes(make_report, 370.0)
    world = dataclasses.replace(report.collectives.series[1], net=None, rdma=None,
                                transport=None, transport_source="unknown")
    report = dataclasses.replace(report, collectives=dataclasses.replace(
        report.collectives, series=(report.collectives.series[0], world)))
    put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.inter("p5.48xlarge", 2) is None
    assert any("did not say which network" in n.reason for n in cal.rejected())


# -- ingest behaviour ---------------------------------------------------------------------------
def test_reingesting_the_same_file_is_a_no_op(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    first = ingest(path, catalog)
    again = ingest(path, catalog)
    assert again.id == first.id == 1 and first.ingest_status == "stored"
    assert again.ingest_status == "already stored as report 1 (same file)"
    assert len(list_reports()) == 1
    with sqlite3.connect(db_path()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 3


def test_reingesting_with_another_accelerator_is_not_ignored(tmp_path, catalog, make_report):
    # "NVIDIA H100" alone does not say SXM or NVL (on a p5.48xlarge the instance would, and
    # so would a memory figure: 79.6 GiB is an SXM's, and an NVL label would be refused)
    path = write_report_atomic(make_report(gpu_model="NVIDIA H100", instance_type=None,
                                           cloud=None, gpu_memory_bytes=None),
                               tmp_path / "r.json")
    first = ingest(path, catalog, accelerator="H100")
    again = ingest(path, catalog, accelerator="H100-NVL-94GB")
    assert again.id == first.id and again.accelerator == "H100-NVL-94GB"
    assert f"was {first.accelerator}" in again.ingest_status
    assert "`accelerator`" in again.ingest_status
    assert list_reports()[0].accelerator == "H100-NVL-94GB"


def test_no_reports_means_no_calibration(catalog):
    assert load_calibration(catalog).empty
    assert not db_path().exists()  # reading does not create the database


def test_the_accelerator_can_be_named_when_the_gpu_model_is_unknown(tmp_path, catalog,
                                                                     make_report):
    path = write_report_atomic(make_report(gpu_model="Mystery GPU 9000", instance_type=None,
                                           cloud=None), tmp_path / "r.json")
    with pytest.raises(CalibrationError, match="Mystery GPU 9000") as info:
        ingest(path, catalog)
    assert "`accelerator`" in str(info.value) and info.value.field == "accelerator"
    assert ingest(path, catalog, accelerator="H100").accelerator == H100


def test_a_corrupt_file_is_a_clear_error(tmp_path, catalog):
    path = tmp_path / "broken.json"
    path.write_text('{"schema_version": 2, "tool_version": ')
    with pytest.raises(CalibrationError, match="not valid JSON") as info:
        ingest(path, catalog)
    assert "broken.json" in str(info.value) and "To fix" in str(info.value)
    assert list_reports() == []


def test_an_unknown_schema_version_is_a_clear_error(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": 99}))
    with pytest.raises(CalibrationError,
                       match="schema_version 99 is newer than this gpuplan reads") as info:
        ingest(path, catalog)
    assert "To fix" in str(info.value)


def test_a_report_missing_a_field_is_a_clear_error(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    data = json.loads(path.read_text())
    del data["environment"]["device_type"]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="environment.device_type"):
        ingest(path, catalog)


# -- the Calibration record ---------------------------------------------------------------------
def test_calibration_is_frozen_and_shares_no_mutable_default():
    assert NO_CALIBRATION.empty and NO_CALIBRATION.used() == NO_CALIBRATION.rejected() == ()
    with pytest.raises(TypeError):
        NO_CALIBRATION.hbm_gb_per_s["x"] = Measurement(1.0, "t")  # read-only view
    given = {("A", "bf16"): Measurement(500.0, "t")}
    cal = Calibration(matmul_tflops=given)
    given.clear()  # the caller's dict is copied, not shared
    assert cal.matmul("A", "bf16").value == 500.0 and Calibration().empty
    with pytest.raises(dataclasses.FrozenInstanceError):
        cal.matmul_tflops = {}
    assert pickle.loads(pickle.dumps(cal)) == cal
    with pytest.raises(ValueError):
        Measurement(float("inf"), "t")


def test_no_calibration_is_importable_from_planner():
    import planner

    assert planner.NO_CALIBRATION.empty and isinstance(planner.NO_CALIBRATION,
                                                        planner.Calibration)


# -- the store under concurrency and faults -----------------------------------------------------
def _ingest_many(home: str, paths: list[str], barrier, results) -> None:
    import os

    os.environ["GPUPLAN_HOME"] = home
    from catalog import load_catalog

    cat = load_catalog()
    barrier.wait()  # every process starts on the fresh store at the same moment
    results.put(sum(1 for p in paths if ingest(p, cat).ingest_status == "stored"))


def test_eight_processes_ingesting_at_once_keep_every_report(tmp_path, make_report,
                                                             _isolated_home):
    # Issue #16: 8 ingests starting together on a fresh store lost 20 of 96 reports.
    per, procs = 6, 8
    # each its own measurements: copies of one run (only created_utc differing) count once
    paths = [[str(write_report_atomic(make_report(bf16_tflops=600.0 + p * per + i,
                                                  created_utc=f"2026-01-01T00:{p:02d}:{i:02d}Z"),
                                      tmp_path / f"{p}-{i}.json")) for i in range(per)]
             for p in range(procs)]
    ctx = mp.get_context("fork")
    barrier, results = ctx.Barrier(procs), ctx.Queue()
    workers = [ctx.Process(target=_ingest_many, args=(str(_isolated_home), ps, barrier, results))
               for ps in paths]
    for w in workers:
        w.start()
    stored = sorted(results.get(timeout=120) for _ in workers)
    for w in workers:
        w.join(timeout=30)
    assert [w.exitcode for w in workers] == [0] * procs
    assert stored == [per] * procs
    assert len(list_reports()) == per * procs
    with sqlite3.connect(db_path()) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_a_half_created_store_is_completed_not_called_damaged(tmp_path, catalog, make_report):
    # what the old non-transactional creation left after a crash: one table, no version
    db_path().parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("CREATE TABLE reports (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE,"
                     " ingested_utc TEXT NOT NULL, created_utc TEXT NOT NULL, source_path TEXT,"
                     " accelerator TEXT, gpu_model TEXT, device_type TEXT NOT NULL, gpu_count "
                     "INTEGER, node_count INTEGER, world_size INTEGER, cloud TEXT, instance_type"
                     " TEXT, region TEXT, report_json TEXT NOT NULL)")
    assert list_reports() == [] and load_calibration(catalog).empty  # reads as empty
    assert put(tmp_path, catalog, make_report()).id == 1
    assert load_calibration(catalog).matmul(H100, "bf16") is not None


def test_a_lock_held_elsewhere_says_locked(tmp_path, catalog, make_report, monkeypatch):
    from planner.store import _db as _probe_store  # the database's retries: private

    put(tmp_path, catalog, make_report(), "a.json")
    monkeypatch.setattr(_probe_store, "BUSY_TIMEOUT_SECONDS", 0.05)
    monkeypatch.setattr(_probe_store, "RETRIES", 1)
    holder = sqlite3.connect(db_path(), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:  # the wait is said once (a note), then the error
        with pytest.raises(CalibrationError) as info, \
                pytest.warns(_probe_store.StoreNotice, match="another gpuplan process"):
            put(tmp_path, catalog, make_report(bf16_tflops=640.0), "b.json")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    text = str(info.value)
    assert "locked by another process" in text and "To fix" in text and "damaged" not in text
    assert len(list_reports()) == 1


def test_a_full_disk_says_disk_full(tmp_path, catalog, make_report, monkeypatch):
    from planner.store import _db as _probe_store  # the database's retries: private

    real_open = _probe_store._open

    def tiny(path):  # SQLite's own "database or disk is full" (SQLITE_FULL) on the next page
        conn = real_open(path)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    put(tmp_path, catalog, make_report(), "a.json")
    monkeypatch.setattr(_probe_store, "_open", tiny)
    with pytest.raises(CalibrationError) as info:
        put(tmp_path, catalog, make_report(bf16_tflops=640.0), "b.json")
    text = str(info.value)
    assert "disk is full" in text and "To fix" in text and "damaged" not in text
    monkeypatch.setattr(_probe_store, "_open", real_open)  # (undo() would drop GPUPLAN_HOME)
    assert [r.id for r in list_reports()] == [1]  # nothing half-written


def test_a_newer_store_schema_is_a_clear_error(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report())
    with sqlite3.connect(db_path()) as conn:
        conn.execute("PRAGMA user_version = 9")
    with pytest.raises(CalibrationError, match="newer than this gpuplan understands"):
        list_reports()


def test_another_programs_database_is_refused_not_adopted(tmp_path, catalog, make_report):
    """A probes.db of another program (a table `foo`) read as an empty store, and ingest added
    gpuplan's tables to it (hostile sweep, 2026-12-08)."""
    db_path().parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("CREATE TABLE foo (x)")
    for action in (list_reports, lambda: put(tmp_path, catalog, make_report())):
        with pytest.raises(CalibrationError, match=r"is another program's SQLite database "
                           r"\(tables foo\), not gpuplan's probe database. To fix: move"):
            action()
    with sqlite3.connect(db_path()) as conn:
        assert conn.execute("SELECT name FROM sqlite_master").fetchall() == [("foo",)]


def test_a_report_file_with_a_byte_order_mark_is_stored_usable(tmp_path, catalog, make_report):
    """Validation strips a UTF-8 BOM; the store kept it, so the report calibrated nothing
    ("Unexpected UTF-8 BOM") and `probe show N --json` was a traceback."""
    from planner.store import ingest_bytes, report_json

    path = write_report_atomic(make_report(bf16_tflops=650.0), tmp_path / "h100.json")
    stored = ingest_bytes(b"\xef\xbb\xbf" + path.read_bytes(), catalog, source="bom.json")
    assert load_calibration(catalog).matmul(H100, "bf16").value == 650.0
    assert report_json(stored.id)["environment"]["instance_type"] == "p5.48xlarge"
    # the same report without the BOM is the same report (it was stored twice, counted twice)
    assert ingest_bytes(path.read_bytes(), catalog, source="plain.json").id == stored.id


def test_gpus_above_the_datasheet_refuse_the_report_though_the_median_is_fine(
        tmp_path, catalog, make_report):
    """Only the median was bounded: three of eight GPUs at 5,000 bf16 TFLOP/s (H100: 989.5)
    calibrated, and `probe show` listed the report as used with "p90 5,000.0". (Ranks 5-7:
    rank 0's figure is its section's, and a rank 0 that disagrees is refused as edited.)"""
    from probes._gather import with_spreads
    from probes._schema import NamedValue

    report = make_report(bf16_tflops=650.0)
    ranks = tuple(dataclasses.replace(r, matmul_best_tflops=tuple(
        NamedValue(name=v.name, value=5000.0) if v.name == "bf16" and r.rank >= 5 else v
        for v in r.matmul_best_tflops)) for r in report.ranks)
    matmul, memory = with_spreads(report.matmul, report.memory, ranks)  # as the probe would
    report = dataclasses.replace(report, ranks=ranks, matmul=matmul, memory=memory)
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None
    assert any("P90 (over GPUs, or one GPU's repeats), 5,000 TFLOP/s, is above the datasheet "
               "989.5" in r
               for r in refused(cal, stored.id))


def test_a_summary_that_is_not_what_the_ranks_measured_refuses_the_report(tmp_path, catalog,
                                                                          make_report):
    """The summaries over GPUs were trusted as written: an edited report could hide outlier
    GPUs behind a tidy median and P90."""
    report = make_report(bf16_tflops=650.0)
    bf16 = next(d for d in report.matmul.dtypes if d.dtype == "bf16")
    tidy = dataclasses.replace(bf16, across_ranks=dataclasses.replace(
        bf16.across_ranks, p50=700.0, p90=700.0, max=700.0))
    report = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, dtypes=tuple(tidy if d is bf16 else d for d in report.matmul.dtypes)))
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None
    assert any("matmul bf16 summary over GPUs (median 700, n 8) is not what the ranks' own "
               "figures give (median 650" in r for r in refused(cal, stored.id))


def test_an_accelerator_other_than_the_one_the_report_measured_is_refused(tmp_path, catalog,
                                                                          make_report):
    """`--accelerator H200` on an H100 report turned H100 figures into H200 calibration."""
    with pytest.raises(CalibrationError, match=r"measured 'NVIDIA H100 80GB HBM3' "
                                               r"\(H100-SXM5-80GB\), not H200"):
        put(tmp_path, catalog, make_report(), accelerator="H200")
    assert put(tmp_path, catalog, make_report(), accelerator="H100").accelerator == H100
    # without a GPU name the instance type says which GPU it was
    nameless = make_report(gpu_model=None)
    with pytest.raises(CalibrationError, match=r"measured the GPUs of a p5.48xlarge "
                                               r"\(H100-SXM5-80GB\), not H200"):
        put(tmp_path, catalog, nameless, "nameless.json", accelerator="H200")
