"""A report's labels against what the probe writes (hostile sweep 23, finding 4): each of these
was ingested and calibrated plans with no word. Each forgery is the valid report of
tests/probe_reports.py with one fact changed; every figure of the report is then refused with
the reason (probes._consistency._labels), and the honest reports still pass (CPU runs too)."""

from __future__ import annotations

import dataclasses

import pytest
from probe_reports import h100_report, h100_workload_report

from probes._consistency import contradiction
from probes._figures import report_figures
from probes._schema import ProbeFailure


def _env(**changes):
    return lambda r: dataclasses.replace(r, environment=dataclasses.replace(r.environment,
                                                                            **changes))


def _sec(name, **changes):
    return lambda r: dataclasses.replace(r, **{name: dataclasses.replace(getattr(r, name),
                                                                         **changes)})


def _emulated(r):
    col = r.collectives
    series = (dataclasses.replace(col.series[0], emulated=True), *col.series[1:])
    return dataclasses.replace(r, collectives=dataclasses.replace(col, series=series))


def _error(**kw):
    return lambda r: dataclasses.replace(r, errors=(ProbeFailure(
        probe=kw.get("probe", "matmul"), error_type="X", message="boom",
        rank=kw.get("rank", 0)),))


FORGED = {
    "nvidia-smi lists 4 GPUs": (_env(gpu_count_smi=4), "nvidia-smi lists 4 GPUs"),
    "nvidia-smi lists 0 GPUs": (_env(gpu_count_smi=0), "nvidia-smi lists 0 GPUs"),
    "no GPU name": (_env(gpu_model=None), "a CUDA run without its GPU's name"),
    "matmul on the CPU": (_sec("matmul", device="cpu"), "matmul ran on device 'cpu'"),
    "CPU build of torch": (_env(torch_version="2.5.1+cpu"), "'2.5.1+cpu' is a CPU-only build"),
    "byte convention": (_sec("memory", byte_convention="1*N"), "memory convention '1*N'"),
    "flop convention": (_sec("matmul", flop_convention="1*M*N*K"),
                        "matmul convention '1*M*N*K'"),
    "wall-clock timing": (_sec("matmul", timing="wall_clock"), "matmul timing 'wall_clock'"),
    "gloo on CUDA": (_sec("collectives", backend="gloo"), "ran over 'gloo' in a CUDA run"),
    "an emulated series": (_emulated, "is marked emulated"),
    "an error of rank 99": (_error(rank=99), "names rank 99 of a run of 8 ranks"),
    "an error of no probe": (_error(probe="bogus"), "names probe 'bogus'"),
    "another hostname": (_env(hostname="other-machine"), "hostname 'other-machine' is not "
                                                         "rank 0's ('node-0')"),
    "lasted 0 s": (lambda r: dataclasses.replace(r, duration_seconds=0.0),
                   "the run lasted 0 s, under its own"),
}


@pytest.mark.parametrize(("forge", "why"), FORGED.values(), ids=FORGED.keys())
def test_a_label_the_probe_never_writes_refuses_the_report(forge, why):
    report = forge(h100_report())
    said = contradiction(report)
    assert said is not None and why in said and "To fix: re-run the probes" in said
    assert {f.refusal for f in report_figures(report)} == {said}


def test_schema_2_with_a_workload_section_is_refused():
    report = dataclasses.replace(h100_workload_report(), schema_version=2)
    assert "schema 2 has no workload section" in contradiction(report)


@pytest.mark.parametrize("report", [
    h100_report(), h100_report(device_type="cpu"), h100_workload_report(),
    h100_report(world_size=16, node_count=2),
    h100_report(gpu_count_smi=None),
], ids=["gpu", "cpu", "workload", "2 nodes", "no nvidia-smi"])
def test_honest_reports_pass_the_label_checks(report):
    assert contradiction(report) is None
