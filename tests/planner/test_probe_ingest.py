"""Probe report → `ingest` → `load_calibration` → `estimate`: a measured number replaces the
datasheet × default fraction, and is named in the estimate's assumptions.

The reports are built from the probe schema's records (tests/planner/conftest.py) and written
with the probes' own `write_report_atomic`, so they have exactly the shape `python -m probes`
writes on a GPU instance.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3

import pytest

from planner import CalibrationError, Workload, estimate, preset, reference_cluster
from planner._probe_store import db_path, ingest, list_reports, load_calibration
from probes import write_report_atomic


def llama3_8b() -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=4 * 1024 * 1024)


def test_an_ingested_h100_report_calibrates_the_estimate(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(bf16_tflops=650.0), tmp_path / "h100.json")
    stored = ingest(path, catalog)
    assert stored.accelerator == "H100-SXM5-80GB"  # from "NVIDIA H100 80GB HBM3"
    assert stored.device_type == "cuda" and stored.instance_type == "p5.48xlarge"
    assert stored.measurements["matmul_tflops"] == {"bf16": 650.0}
    assert stored.measurements["device_copy_gb_per_s"] == {"copy": 2982.6}
    assert stored.measurements["busbw_intra_gb_per_s"] == {"all_reduce": 481.8}

    cal = load_calibration(catalog)
    m = cal.matmul("H100-SXM5-80GB", "bf16")
    assert m.value == 650.0 and m.source == "probe report 1 on p5.48xlarge, 2026-01-31"
    assert cal.hbm_gb_per_s["H100-SXM5-80GB"].value == 2982.6

    cluster = reference_cluster(catalog, "H100", 64)
    plain = estimate(llama3_8b(), cluster)
    measured = estimate(llama3_8b(), cluster, calibration=cal)
    assert ("matmul bf16: measured 650.0 TFLOP/s (probe report 1 on p5.48xlarge, 2026-01-31)"
            in measured.assumptions)
    assert any(a.startswith("HBM: measured copy 2983 GB/s") for a in measured.assumptions)
    # 650 < the default 989.5 × 0.801 = 792.6 TFLOP/s, so the measured run is slower
    assert measured.step_time_s > plain.step_time_s


def test_the_intra_node_bandwidth_calibrates_the_instance_it_was_measured_on(
        tmp_path, catalog, make_report):
    from planner import build_cluster

    ingest(write_report_atomic(make_report(), tmp_path / "r.json"), catalog)
    cal = load_calibration(catalog)
    cluster, memory = build_cluster(catalog, instance="p5.48xlarge", nodes=2)
    est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert any(a.startswith("intra-node busbw: measured 482 GB/s") for a in est.assumptions)


def test_reingesting_the_same_file_is_a_no_op(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    first = ingest(path, catalog)
    again = ingest(path, catalog)
    assert again.id == first.id == 1
    assert len(list_reports()) == 1
    with sqlite3.connect(db_path()) as conn:
        assert conn.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 3


def test_the_newest_report_wins(tmp_path, catalog, make_report):
    old = write_report_atomic(make_report(bf16_tflops=600.0, created_utc="2026-01-01T00:00:00Z"),
                              tmp_path / "old.json")
    new = write_report_atomic(make_report(bf16_tflops=700.0, created_utc="2026-02-01T00:00:00Z"),
                              tmp_path / "new.json")
    ingest(new, catalog)
    ingest(old, catalog)  # ingested later, but measured earlier
    assert load_calibration(catalog).matmul("H100-SXM5-80GB", "bf16").value == 700.0


def test_a_cpu_report_is_stored_but_does_not_calibrate(tmp_path, catalog, make_report):
    report = make_report(device_type="cpu", gpu_model=None)
    stored = ingest(write_report_atomic(report, tmp_path / "cpu.json"), catalog)
    assert stored.device_type == "cpu" and stored.accelerator is None
    assert [r.id for r in list_reports()] == [stored.id]
    assert load_calibration(catalog).empty


def test_no_reports_means_no_calibration(catalog):
    assert load_calibration(catalog).empty
    assert not db_path().exists()  # reading does not create the database


def test_the_accelerator_can_be_named_when_the_gpu_model_is_unknown(tmp_path, catalog,
                                                                     make_report):
    path = write_report_atomic(make_report(gpu_model="Mystery GPU 9000", instance_type=None,
                                           cloud=None), tmp_path / "r.json")
    with pytest.raises(CalibrationError, match="Mystery GPU 9000") as info:
        ingest(path, catalog)
    assert "--accelerator" in str(info.value)
    assert ingest(path, catalog, accelerator="H100").accelerator == "H100-SXM5-80GB"


def test_a_corrupt_file_is_a_clear_error(tmp_path, catalog):
    path = tmp_path / "broken.json"
    path.write_text('{"schema_version": 1, "tool_version": ')
    with pytest.raises(CalibrationError, match="not valid JSON") as info:
        ingest(path, catalog)
    assert "broken.json" in str(info.value) and "To fix" in str(info.value)
    assert list_reports() == []


def test_an_unknown_schema_version_is_a_clear_error(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "schema_version": 99}))
    with pytest.raises(CalibrationError, match="unknown schema_version 99") as info:
        ingest(path, catalog)
    assert "To fix" in str(info.value)


def test_a_report_missing_a_field_is_a_clear_error(tmp_path, catalog, make_report):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    data = json.loads(path.read_text())
    del data["environment"]["device_type"]
    path.write_text(json.dumps(data))
    with pytest.raises(CalibrationError, match="environment.device_type"):
        ingest(path, catalog)


def test_a_failed_matmul_dtype_does_not_calibrate(tmp_path, catalog, make_report):
    report = make_report()
    failed = dataclasses.replace(report.matmul.dtypes[0], status="failed", reason="OOM",
                                 best_tflops=None, best_shape=None)
    report = dataclasses.replace(report, matmul=dataclasses.replace(
        report.matmul, dtypes=(failed,)))
    ingest(write_report_atomic(report, tmp_path / "r.json"), catalog)
    assert load_calibration(catalog).matmul("H100-SXM5-80GB", "bf16") is None
