"""The report schema: round trips, clear errors for bad files, atomic writes, and the version
history (a version-1 file still reads; version-2 fields round-trip)."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from probe_reports import report_data_with

from probes import (
    SCHEMA_VERSION,
    ProbeReport,
    ReportError,
    load_report,
    parse_report,
    report_to_json,
    write_report_atomic,
)
from probes._schema import (
    BandwidthPoint,
    CollectivePoint,
    CollectiveSeries,
    CollectivesSection,
    Environment,
    MatmulDtype,
    MatmulPoint,
    MatmulSection,
    MemorySection,
    ProbeFailure,
)


def sample_report(**changes) -> ProbeReport:
    env = Environment(
        hostname="node-0", cpu_count=192, platform="Linux-x86_64", python_version="3.11.7",
        torch_version="2.5.1+cu124", cuda_version="12.4", nccl_version="2.21.5",
        driver_version="550.54.15", device_type="cuda", gpu_model="NVIDIA H100 80GB HBM3",
        gpu_count=8, gpu_memory_bytes=85_520_809_984, compute_capability="9.0",
        sm_clock_mhz=1980, sm_clock_max_mhz=1980, memory_clock_mhz=2619,
        memory_clock_max_mhz=2619, cloud="aws", instance_type="p5.48xlarge",
        region="us-east-1", zone="us-east-1a", world_size=8, local_world_size=8, node_count=1)
    point = MatmulPoint(dtype="bf16", m=8192, n=8192, k=8192, seconds_median=0.00155,
                        tflops=2 * 8192**3 / 0.00155 / 1e12)
    matmul = MatmulSection(
        device="cuda:0", timing="cuda_events", flop_convention="2*M*N*K", warmup_iters=5,
        repeats=5, target_seconds_per_repeat=0.1, cache_bytes=52_428_800,
        cache_bytes_source="device_properties", tf32_matmul_allowed=False,
        cudnn_tf32_allowed=True, float32_matmul_precision="highest",
        dtypes=(MatmulDtype(dtype="bf16", status="measured", best_tflops=point.tflops,
                            best_shape=(8192, 8192, 8192)),
                MatmulDtype(dtype="fp8_e4m3", status="skipped", reason="capability 8.0")),
        points=(point,))
    memory = MemorySection(device="cuda:0", timing="cuda_events", byte_convention="2*N", points=(
        BandwidthPoint(name="device_copy", status="measured", size_bytes=2**30,
                       counted_bytes=2**31, seconds_median=0.00072, gb_per_s=2.9826e3),
        BandwidthPoint(name="h2d_pageable", status="failed", reason="RuntimeError: x")))
    collectives = CollectivesSection(
        backend="nccl", status="measured", world_size=8, local_world_size=8, node_count=1,
        timeout_seconds=120.0, timing="cuda_events", series=(
            CollectiveSeries(op="all_reduce", scope="intra_node", group_size=8,
                             status="measured", implementation="torch.distributed.all_reduce",
                             points=(CollectivePoint(size_bytes=2**30, seconds_median=0.0039,
                                                     algbw_gb_per_s=275.3,
                                                     busbw_gb_per_s=481.8),)),
            CollectiveSeries(op="all_reduce", scope="world", group_size=8, status="skipped",
                             reason="single node")))
    report = ProbeReport(schema_version=SCHEMA_VERSION, tool_version="0.1.0",
                         created_utc="2025-01-31T12:00:00Z", quick=False, duration_seconds=61.5,
                         environment=env, matmul=matmul, memory=memory,
                         collectives=collectives,
                         errors=(ProbeFailure(probe="memory", error_type="RuntimeError",
                                              message="boom", rank=0),))
    return dataclasses.replace(report, **changes)


def test_round_trip_through_json_and_file(tmp_path):
    report = sample_report()
    assert parse_report(json.loads(report_to_json(report))) == report
    path = write_report_atomic(report, tmp_path / "sub" / "r.json")
    assert load_report(path) == report
    assert isinstance(load_report(path).matmul.dtypes[0].best_shape, tuple)


def test_a_report_replaces_an_earlier_report_and_nothing_else(tmp_path):
    """`probe run --out` (root on a rented node) replaced whatever the path named: a sweep's
    typo overwrote /etc/passwd; `--out train.py` would lose a training script."""
    from probes._errors import ReportWriteError

    report = sample_report()
    script = tmp_path / "train.py"
    script.write_text("print('train')\n")
    with pytest.raises(ReportWriteError, match="exists and is not a probe report; refusing "
                                               "to replace it. To fix: choose another path"):
        write_report_atomic(report, script)
    assert script.read_text() == "print('train')\n"
    earlier = write_report_atomic(report, tmp_path / "r.json")
    assert write_report_atomic(report, earlier) == earlier  # a re-run replaces its report
    (tmp_path / "empty.json").write_text("")  # nothing to lose: a `mktemp` name
    write_report_atomic(report, tmp_path / "empty.json")


def test_sections_may_be_absent():
    report = sample_report(matmul=None, memory=None, collectives=None, environment=None)
    assert parse_report(json.loads(report_to_json(report))) == report


@given(seconds=st.floats(1e-9, 1e3), size=st.integers(1, 2**40), factor=st.floats(0, 2))
def test_collective_points_round_trip_exactly(seconds, size, factor):
    algbw = size / seconds / 1e9
    point = CollectivePoint(size_bytes=size, seconds_median=seconds, algbw_gb_per_s=algbw,
                            busbw_gb_per_s=algbw * factor)
    series = CollectiveSeries(op="all_gather", scope="world", group_size=2, status="measured",
                              points=(point,))
    base = sample_report()
    report = dataclasses.replace(
        base, collectives=dataclasses.replace(base.collectives, series=(series,)))
    assert parse_report(json.loads(report_to_json(report))) == report


def _one_line_with_fix(exc: ReportError) -> str:
    message = str(exc)
    assert "\n" not in message
    assert "To fix:" in message
    return message


def test_corrupt_json_says_where(tmp_path):
    path = tmp_path / "r.json"
    path.write_text(report_to_json(sample_report())[:200])
    with pytest.raises(ReportError) as info:
        load_report(path)
    message = _one_line_with_fix(info.value)
    assert "not valid JSON" in message and "line" in message


def test_unknown_schema_version_lists_supported(tmp_path):
    data = json.loads(report_to_json(sample_report()))
    data["schema_version"] = 99
    with pytest.raises(ReportError) as info:
        parse_report(data)
    message = _one_line_with_fix(info.value)
    assert "schema_version 99 is newer than this gpuplan reads (1, 2, 3)" in message
    assert "upgrade gpuplan" in message


@pytest.mark.parametrize("version", ["3", 0, 2.5, None])
def test_a_schema_version_that_is_no_supported_number_is_not_called_newer(version):
    # '3' (text) said "unknown schema_version '3'; this gpuplan reads version(s) 1, 2, 3"
    data = json.loads(report_to_json(sample_report()))
    data["schema_version"] = version
    with pytest.raises(ReportError) as info:
        parse_report(data)
    message = _one_line_with_fix(info.value)
    # the value as the report's JSON spells it: "3", null (not '3', None)
    assert f"schema_version must be one of 1, 2, 3, got {json.dumps(version)}" in message
    assert "upgrade" not in message


@pytest.mark.parametrize("drop", [("schema_version",), ("created_utc",),
                                  ("matmul", "points", 0, "tflops"),
                                  ("environment", "gpu_model"),
                                  ("collectives", "series", 0, "points", 0, "busbw_gb_per_s")])
def test_missing_field_is_named(drop):
    data = json.loads(report_to_json(sample_report()))
    holder = data
    for key in drop[:-1]:
        holder = holder[key]
    del holder[drop[-1]]
    with pytest.raises(ReportError) as info:
        parse_report(data)
    message = _one_line_with_fix(info.value)
    expected = ".".join(str(k) for k in drop).replace(".0", "[0]")
    assert f"missing field '{expected}'" in message


@pytest.mark.parametrize("path, value", [(("matmul", "points", 0, "tflops"), "fast"),
                                         (("environment", "gpu_count"), 8.5),
                                         (("quick",), 1),
                                         (("matmul", "points", 0, "tflops"), -3.0),
                                         (("matmul", "dtypes", 0, "status"), "guessed")])
def test_wrong_values_are_rejected(path, value):
    with pytest.raises(ReportError) as info:
        parse_report(report_data_with(sample_report(), path, value))
    _one_line_with_fix(info.value)


def test_top_level_must_be_an_object(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("[1, 2]")
    with pytest.raises(ReportError, match="top level"):
        load_report(path)


def test_missing_file_is_a_report_error(tmp_path):
    with pytest.raises(ReportError, match="cannot read"):
        load_report(tmp_path / "nope.json")


def test_atomic_write_leaves_no_temp_file(tmp_path):
    write_report_atomic(sample_report(), tmp_path / "r.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.parametrize("broken", ["fsync", "replace"])
def test_failed_write_keeps_old_file_whole(tmp_path, monkeypatch, broken):
    path = tmp_path / "r.json"
    old = sample_report(tool_version="old")
    write_report_atomic(old, path)
    before = path.read_bytes()

    def fail(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, broken, fail)
    with pytest.raises(OSError, match="disk full"):
        write_report_atomic(sample_report(tool_version="new"), path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert load_report(path) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_invariants_are_checked_at_construction():
    with pytest.raises(ValueError, match="needs a reason"):
        MatmulDtype(dtype="fp16", status="skipped")
    with pytest.raises(ValueError, match="best_tflops"):
        MatmulDtype(dtype="fp16", status="measured")


def test_a_version_1_file_still_reads_with_the_new_fields_defaulted():
    # A report as gpuplan wrote it before schema 2: none of the version-2 fields.
    data = json.loads(report_to_json(sample_report(schema_version=1)))
    for d in data["matmul"]["dtypes"]:
        for key in ("best_layout", "median_tflops", "points_measured", "across_ranks",
                    "accumulation", "check_reference", "check_rel_error",
                    "check_max_rel_error", "check_passed"):
            d.pop(key)
    for key in ("sweep", "layouts", "warmup_dtype", "warmup_shape", "warmup_seconds",
                "warmup_settled", "burst_tflops", "sustained_tflops", "under_load"):
        data["matmul"].pop(key)
    for key in ("idle", "gpu_count_smi", "nccl_env"):
        data["environment"].pop(key)
    data.pop("ranks")
    report = parse_report(data)
    assert report.schema_version == 1 and report.ranks == ()
    assert report.matmul.sweep == "default" and report.matmul.dtypes[0].across_ranks is None


def test_the_version_2_fields_round_trip():
    from probe_reports import h100_report

    report = h100_report(fp8_tflops=1300.0, world_size=16, node_count=2, net="IB")
    assert report.schema_version == SCHEMA_VERSION == 3
    again = parse_report(json.loads(report_to_json(report)))
    assert again == report
    bf16 = again.matmul.dtypes[0]
    assert bf16.across_ranks.n == 16 and bf16.across_ranks.min_rank == 0
    assert again.environment.nccl_env == (("NCCL_DEBUG", "INFO"),)
    assert again.environment.idle.mig_mode == "Disabled"
    world = again.collectives.series[1]
    assert (world.scope, world.net, world.rdma) == ("world", "IB", True)
    assert len(again.ranks) == 16 and again.ranks[9].hostname == "node-1"


def test_spread_and_layout_invariants():
    from probes._schema import Spread

    with pytest.raises(ValueError, match="min <= p10"):
        Spread(n=2, min=2.0, p10=1.0, p50=2.0, p90=3.0, max=3.0)
    with pytest.raises(ValueError, match="layout"):
        MatmulPoint(dtype="bf16", m=1, n=1, k=1, seconds_median=1.0, tflops=1.0, layout="tn")
