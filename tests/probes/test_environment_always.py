"""A report's environment and what ingest says of a report without one (fix sweep, 2026-12):
`--probes matmul,memory` (docs/probes.md's own example) wrote `environment: null`, a report that
could never calibrate, without a word; and ingesting a 2-rank collectives report without an
environment said "unknown (no GPU), 1 process" and "intra - x1"."""

from __future__ import annotations

import dataclasses
import json

import pytest
from probe_reports import h100_report

from planner.cli import main as gpuplan
from probes import write_report_atomic


def test_the_environment_is_collected_whatever_probes_says(tmp_path):
    pytest.importorskip("torch")
    from probes.cli import main

    out = tmp_path / "r.json"
    assert main(["--device", "cpu", "--quick", "--probes", "matmul,memory",
                 "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["environment"] is not None and data["environment"]["device_type"] == "cpu"
    assert data["matmul"] is not None and data["collectives"] is None


def _without_environment(tmp_path):
    """A 2-rank CPU run's report as `--probes collectives` wrote it before: no environment."""
    report = h100_report()
    col = report.collectives
    series = tuple(dataclasses.replace(s, group_size=2) for s in col.series
                   if s.scope == "intra_node")
    report = dataclasses.replace(
        report, environment=None, matmul=None, memory=None,
        collectives=dataclasses.replace(col, world_size=2, local_world_size=2, node_count=1,
                                        series=series),
        ranks=tuple(dataclasses.replace(r, matmul_best_tflops=(), memory_gb_per_s=())
                    for r in report.ranks[:2]))
    return write_report_atomic(report, tmp_path / "c.json")


def test_a_report_without_an_environment_is_said_as_it_is(tmp_path, capsys):
    path = _without_environment(tmp_path)
    assert gpuplan(["probe", "ingest", str(path)]) == 0
    out = capsys.readouterr().out
    assert "report 1: unknown machine, 2 processes" in out, out
    assert "no GPU" not in out and "1 process" not in out, out
    assert "x2" in out and "x1" not in out, out  # the intra-node group of 2, not "intra - x1"
    assert gpuplan(["probe", "show", "1"]) == 0
    out = capsys.readouterr().out
    assert "unknown machine" in out and "no GPU" not in out, out
    assert gpuplan(["probe", "show", "--json"]) == 0
    (shown,) = json.loads(capsys.readouterr().out)
    assert (shown["world_size"], shown["gpus_per_node"]) == (2, 2), shown


def test_a_cpu_run_still_says_no_gpu(tmp_path, capsys):
    report = h100_report(device_type="cpu", gpu_model=None)
    path = write_report_atomic(report, tmp_path / "cpu.json")
    assert gpuplan(["probe", "ingest", str(path)]) == 0
    assert "cpu (no GPU), 8 processes" in capsys.readouterr().out
