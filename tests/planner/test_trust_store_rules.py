"""The store's rules against the tester's probetest sweep (c2/c4/c7/c9 and the ingest
listing): a throttled node calibrated plans, compute capability 8.0 passed as an H100's, a
no-recompute layer measured at 5% of its modelled activations scaled plans into running out
of memory, and a cross-node figure without an instance type was labelled "None x 2 nodes"."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from probe_reports import LLAMA3_8B_LAYER, h100_report, h100_workload_report
from probe_store import H100, put, refused

from planner import CalibrationError
from planner.model import WorkloadShape
from planner.store import (
    Candidate,
    db_path,
    ingest,
    list_reports,
    load_calibration,
)
from probes import report_to_json, write_report_atomic
from probes._schema import GpuTelemetry


def _layer(**changes) -> WorkloadShape:
    return dataclasses.replace(WorkloadShape(**LLAMA3_8B_LAYER), **changes)


# -- 1. a throttled node calibrates nothing --------------------------------------------------
def test_a_throttled_nodes_figures_do_not_calibrate(tmp_path, catalog):
    report = h100_report(bf16_tflops=120.0)
    slow = GpuTelemetry(sampled="under_load", sm_clock_mhz=345, power_limit_w=700.0,
                        power_default_limit_w=700.0, temperature_c=92.0,
                        clock_event_reasons="0x0000000000000048")
    report = dataclasses.replace(
        report, ranks=tuple(dataclasses.replace(r, under_load=slow) for r in report.ranks),
        matmul=dataclasses.replace(report.matmul, under_load=slow))
    stored = put(tmp_path, catalog, report)
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16") is None and cal.hbm(H100) is None and cal.empty
    reasons = refused(cal, stored.id)
    assert reasons and all("hardware slowdown" in r and "not throttled" in r for r in reasons)


# -- 2. compute capability against the catalog accelerator ------------------------------------
def test_a_compute_capability_that_is_not_the_accelerators_is_refused_at_ingest(tmp_path,
                                                                               catalog):
    """c2.py: "8.0" (an A100's) on an "NVIDIA H100 80GB HBM3" on a p5 was stored and used."""
    with pytest.raises(CalibrationError) as info:
        put(tmp_path, catalog, h100_report(compute_capability="8.0"))
    text = str(info.value)
    assert text.startswith("the report gives its GPU compute capability 8.0, and "
                           "H100-SXM5-80GB has 9.0: it measured another GPU, or was edited")
    assert "To fix:" in text and "\n" not in text and list_reports() == []
    # an accelerator named by hand is held to it too
    with pytest.raises(CalibrationError, match="has 9.0"):
        put(tmp_path, catalog, h100_report(gpu_model="Some GPU", compute_capability="8.6",
                                           instance_type=None, cloud=None), "s.json",
            accelerator="H100")
    assert put(tmp_path, catalog, h100_report()).ingest_status == "stored"  # 9.0


def test_families_the_table_does_not_know_are_not_checked(tmp_path, catalog):
    # an MI250X's GCD (ROCm's own numbering) and a garbled capability (probes' rule refuses it)
    gcd = h100_report(gpu_model="AMD Instinct MI250X", instance_type=None, cloud=None,
                      gpu_memory_bytes=68702699520, compute_capability="9.4")
    assert put(tmp_path, catalog, gcd, "gcd.json").ingest_status == "stored"
    nine = put(tmp_path, catalog, h100_report(bf16_tflops=640.0, compute_capability="nine"),
               "nine.json")
    assert any("compute capability 'nine'" in r for r in refused(load_calibration(catalog),
                                                                 nine.id))


def test_a_capability_contradiction_stored_before_ingest_knew_is_refused(tmp_path, catalog):
    put(tmp_path, catalog, h100_report())
    with sqlite3.connect(db_path()) as conn:  # as an older gpuplan stored it
        conn.execute("INSERT INTO reports (sha256, ingested_utc, created_utc, accelerator, "
                      "device_type, report_json) SELECT 'past', ingested_utc, created_utc, "
                      "accelerator, device_type, ? FROM reports WHERE id = 1",
                      (report_to_json(h100_report(bf16_tflops=600.0, compute_capability="8.0",
                                                  created_utc="2026-02-01T00:00:00Z")),))
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").report_ids == (1,)
    (why,) = refused(cal, 2)
    assert why.startswith("the report gives its GPU compute capability 8.0")


# -- 3. activations far below the model without full recomputation ----------------------------
@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_activations_far_below_the_model_refuse_the_report(tmp_path, catalog, recompute):
    """c7.py: 70 MiB measured against 1,408 modelled (rc:none) calibrated, and its memory
    ratio of 0.05 made plans that run out of memory look like they fit."""
    stored = put(tmp_path, catalog, h100_workload_report(
        activation_mib=70.0, shape={"recompute": recompute}))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer(recompute=recompute)) is None
    (why,) = refused(cal, stored.id)
    assert "70.0 MiB of activations per layer is" in why
    assert f"MiB modelled for recompute {recompute}, under 50%" in why
    assert "run out of memory look like they fit" in why and "To fix:" in why


def test_full_recomputation_keeps_the_input_floor_alone(tmp_path, catalog):
    # full recomputation keeps about the layer's input (64 MiB here): still used
    put(tmp_path, catalog, h100_workload_report(activation_mib=70.0,
                                                shape={"recompute": "full"}))
    assert load_calibration(catalog).workload(H100, "fsdp", _layer(recompute="full"))
    # an honest no-recompute count (1,400 MiB against 1,408 modelled) is used
    put(tmp_path, catalog, h100_workload_report(created_utc="2026-02-02T00:00:00Z"), "n.json")
    m = load_calibration(catalog).workload(H100, "fsdp", _layer())
    assert m is not None and m.memory_ratio == pytest.approx(1400 / 1408, rel=0.01)


# -- 5. the label of a cross-node figure without an instance type -----------------------------
def test_a_cross_node_figure_without_an_instance_type_is_labelled_by_its_gpus(tmp_path,
                                                                            catalog):
    stored = put(tmp_path, catalog, h100_report(world_size=16, node_count=2,
                                                instance_type=None, cloud=None))
    cal = load_calibration(catalog)
    (note,) = [n for n in cal.rejected() if n.kind == "inter"]
    assert note.key == f"{H100} x 2 nodes (no instance type)" and stored.id in note.report_ids
    assert "None" not in note.key
    assert Candidate(report_id=1, created_utc="x", kind="inter", accelerator=H100,
                     instance_type="p5.48xlarge", nodes=2, value=300.0,
                     unit="GB/s").label == "p5.48xlarge x 2 nodes"


def test_ingest_lists_a_throttled_report_with_what_to_do(tmp_path, catalog):
    report = h100_report()
    env = report.environment
    capped = dataclasses.replace(report, environment=dataclasses.replace(
        env, idle=dataclasses.replace(env.idle, power_limit_w=150.0)))
    ingest(write_report_atomic(capped, tmp_path / "c.json"), catalog)
    (why, *_) = refused(load_calibration(catalog), 1)
    assert "power limit at 150 W, 21% of its default 700 W" in why
    assert "re-run them on a node that is not throttled" in why
