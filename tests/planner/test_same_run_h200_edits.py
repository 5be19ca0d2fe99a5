"""One run counts once, judged by the figures that calibrate (planner/store/_fingerprint.py),
on the real H200 reports (benchmarks/data/gpu_check_h200_2026-12-04/, copied to tmp_path and
edited there).

A copy of a stored run with only a figure no rule reads edited (the matmul warm-up burst, a
point off the best, free text such as notes or a source) was stored as a new report and
joined the median: a stored slow run copied with its burst x1.01 moved a llama3-8b estimate
on 8 H200 by +13% (review, 2026-12). Every rank's own figures, and every figure the rules
read, were the stored report's bit for bit. A run whose calibrating figures differ is still
another run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner import Workload, build_cluster, estimate, preset
from planner.store import ingest, list_reports, load_calibration

RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"
H200 = "H200-SXM-141GB"


@pytest.fixture(scope="module")
def catalog():
    from catalog import load_catalog

    return load_catalog()


def _raw(name: str) -> dict:
    return json.loads((RUN / name).read_text())


def _write(tmp_path, data: dict, name: str) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=1))
    return path


def _non_best_bf16(data: dict) -> dict:
    """A bf16 point of the sweep that is not the dtype's best (no rule reads it)."""
    best = next(d["best_tflops"] for d in data["matmul"]["dtypes"] if d["dtype"] == "bf16")
    return next(p for p in data["matmul"]["points"]
                if p["dtype"] == "bf16" and p["tflops"] != best)


def _burst(data: dict) -> None:
    data["matmul"]["burst_tflops"] *= 1.01


def _point_p90(data: dict) -> None:
    _non_best_bf16(data)["tflops_p90"] *= 1.001


def _point_slower(data: dict) -> None:
    point = _non_best_bf16(data)
    point["seconds_median"] *= 1.2
    for key in ("tflops", "tflops_p10", "tflops_p90"):
        point[key] /= 1.2


def _source_text(data: dict) -> None:
    data["matmul"]["cache_bytes_source"] = "edited by hand"


def _notes(data: dict) -> None:
    data["workload"]["notes"].append("edited")


def _memory_note(data: dict) -> None:
    data["workload"]["memory_note"] = "hand edited"


@pytest.mark.parametrize(("name", "edit"), [
    pytest.param("probe-report.json", _burst, id="matmul burst x1.01"),
    pytest.param("probe-report.json", _point_p90, id="a bf16 point's p90 x1.001"),
    pytest.param("probe-report.json", _point_slower, id="a non-best bf16 point 1.2x slower"),
    pytest.param("probe-report.json", _source_text, id="cache_bytes_source text"),
    pytest.param("workload-report.json", _notes, id="workload notes"),
    pytest.param("workload-report.json", _memory_note, id="workload memory_note"),
])
def test_a_copy_edited_where_no_rule_reads_is_the_stored_run(tmp_path, catalog, name, edit):
    first = ingest(RUN / name, catalog)
    data = _raw(name)
    edit(data)
    again = ingest(_write(tmp_path, data, f"copy-{name}"), catalog)
    assert (again.id, again.ingest_status) == (first.id, "already stored as report 1 (same "
                                                          "measurements)")
    assert len(list_reports()) == 1
    cal = load_calibration(catalog)
    used = cal.matmul(H200, "bf16") if name == "probe-report.json" else None
    assert used is None or used.report_ids == (first.id,)


def _slow(data: dict, factor: float = 0.8) -> dict:
    """``data`` as a run whose matmul was ``factor`` as fast: every rate times it, every time
    divided by it (another run's calibrating figures; consistent, so it calibrates)."""
    m = data["matmul"]
    for d in m["dtypes"]:
        for key in ("best_tflops", "median_tflops"):
            d[key] *= factor
        for key in ("min", "p10", "p50", "p90", "max"):
            d["across_ranks"][key] *= factor
    for p in m["points"]:
        for key in ("tflops", "tflops_p10", "tflops_p90"):
            p[key] *= factor
        p["seconds_median"] /= factor
    for rank in data["ranks"]:
        for nv in rank["matmul_best_tflops"]:
            nv["value"] *= factor
    return data


def _gpu_hours(catalog) -> float:
    arch, seq = preset("llama3-8b")
    cluster, memory = build_cluster(catalog, gpu="H200", gpus=8)
    est = estimate(Workload(arch=arch, tokens=1e12, seq_len=seq, framework="fsdp"), cluster,
                   calibration=load_calibration(catalog), memory_gib=memory)
    return est.gpu_hours


def test_a_slow_runs_copy_with_its_burst_edited_does_not_move_the_estimate(tmp_path, catalog):
    """The review's +13%: 30,593 -> 34,555 GPU-hours from a copy with only its burst x1.01."""
    ingest(RUN / "probe-report.json", catalog)
    ingest(RUN / "workload-report.json", catalog)
    slow = ingest(_write(tmp_path, _slow(_raw("probe-report.json")), "slow.json"), catalog)
    assert slow.ingest_status == "stored"  # another run: its own figures
    m = load_calibration(catalog).matmul(H200, "bf16")
    assert m.report_ids == (1, slow.id)
    before = _gpu_hours(catalog)
    data = _slow(_raw("probe-report.json"))
    _burst(data)
    copy = ingest(_write(tmp_path, data, "slow-copy.json"), catalog)
    assert copy.ingest_status == f"already stored as report {slow.id} (same measurements)"
    assert load_calibration(catalog).matmul(H200, "bf16").report_ids == (1, slow.id)
    assert _gpu_hours(catalog) == before


def test_runs_whose_calibrating_figures_differ_are_still_two_runs(tmp_path, catalog):
    ingest(RUN / "probe-report.json", catalog)
    other = ingest(_write(tmp_path, _slow(_raw("probe-report.json"), 1 - 1e-4), "o.json"),
                   catalog)
    assert other.ingest_status == "stored" and len(list_reports()) == 2
    assert load_calibration(catalog).matmul(H200, "bf16").n_reports == 2


def test_a_section_with_an_unread_spread_edited_is_still_the_earlier_runs(tmp_path, catalog):
    """Another run's matmul over a copy of the rest, with a spread no rule reads edited in the
    copied memory section (device_triad's p90): the memory figures are report 1's and count
    once."""
    ingest(RUN / "probe-report.json", catalog)
    data = _slow(_raw("probe-report.json"))
    triad = next(p for p in data["memory"]["points"] if p["name"] == "device_triad")
    triad["gb_per_s_p90"] *= 1.001
    second = ingest(_write(tmp_path, data, "partial.json"), catalog)
    assert second.ingest_status == "stored"
    cal = load_calibration(catalog)
    assert cal.matmul(H200, "bf16").report_ids == (1, second.id)
    assert cal.hbm(H200).report_ids == (1,)
    assert any("memory section is report 1's (the same measurements: a partial copy" in n.reason
               for n in cal.rejected() if second.id in n.report_ids)


@pytest.mark.parametrize("relabel", [
    pytest.param(lambda data: data["environment"].update(device_type="cpu"), id="cpu"),
    pytest.param(lambda data: data.pop("environment"), id="no environment"),
])
def test_a_gpu_report_relabelled_cpu_is_the_stored_run(tmp_path, catalog, relabel):
    first = ingest(RUN / "probe-report.json", catalog)
    data = _raw("probe-report.json")
    relabel(data)
    again = ingest(_write(tmp_path, data, "cpu.json"), catalog)
    assert (again.id, again.ingest_status) == (first.id, "already stored as report 1 (same "
                                                          "measurements)")
    assert len(list_reports()) == 1


def test_a_cpu_labelled_copy_stored_first_does_not_hide_the_gpu_run(tmp_path, catalog):
    data = _raw("probe-report.json")
    data["environment"]["device_type"] = "cpu"
    relabelled = ingest(_write(tmp_path, data, "cpu.json"), catalog)
    assert relabelled.ingest_status == "stored" and relabelled.accelerator is None
    gpu = ingest(RUN / "probe-report.json", catalog)
    assert (gpu.id, gpu.ingest_status, gpu.accelerator) == (2, "stored", H200)
    assert load_calibration(catalog).matmul(H200, "bf16").report_ids == (gpu.id,)
