"""What an estimate says of its probe calibration besides the calibration block: a measured
figure more than 2x from its datasheet default is warned about (it moved llama3-8b on 2 p5
from 1.65 h to 15.45 h with no warning), a figure whose stored reports disagree says that the
default stands in for them (792.6 TFLOP/s, faster than every report), and an intra-node bus
bandwidth measured on one instance type calibrates that instance type only (880 GB/s on a p5
calibrated a3-highgpu-8g and Azure's ND H100 v5)."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from probe_store import H100, p5, put

from planner import Workload, build_cluster, estimate, preset
from planner.cli import main
from planner.store import load_calibration


def llama3_8b() -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e9, seq_len=seq)


def calibration_lines(warnings) -> list[str]:
    return [w for w in warnings if "probe" in w]


# -- a measured figure far from its default -----------------------------------------------------
def test_a_poor_measurement_used_is_warned_once_with_how_to_check_and_remove(
        tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(bf16_tflops=60.0))
    cluster, memory = p5(catalog, nodes=2)
    plain = estimate(llama3_8b(), cluster, memory_gib=memory)
    est = estimate(llama3_8b(), cluster, calibration=load_calibration(catalog),
                   memory_gib=memory)
    assert est.wall_clock_hours > 5 * plain.wall_clock_hours  # the figure is still used
    (line,) = calibration_lines(est.warnings)
    assert line.startswith(f"matmul bf16 on {H100}: measured 60.0 TFLOP/s is used, 13.2× "
                           "below the datasheet default 792.6 TFLOP/s (probe report 1 on "
                           "p5.48xlarge")
    assert line.endswith("To check: `gpuplan probe show`; remove it with `gpuplan probe "
                         "remove 1` if the node was faulty")
    assert "\n" not in line
    assert calibration_lines(plain.warnings) == []


def test_a_figure_within_twice_its_default_is_not_warned(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(bf16_tflops=650.0))  # 0.82x; intra 481.8 is 1.34x
    cluster, memory = p5(catalog, nodes=2)
    est = estimate(llama3_8b(), cluster, calibration=load_calibration(catalog),
                   memory_gib=memory)
    assert est.calibrated and calibration_lines(est.warnings) == []


def test_a_figure_far_above_its_default_is_warned_too(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(busbw_by_size=((2**30, 880.0),)))
    cluster, memory = p5(catalog)
    est = estimate(llama3_8b(), cluster, calibration=load_calibration(catalog),
                   memory_gib=memory)
    (line,) = calibration_lines(est.warnings)
    assert line.startswith("intra-node busbw on p5.48xlarge: measured 880.0 GB/s is used, "
                           "2.4× above the datasheet default 360.0 GB/s")
    assert line.endswith("`gpuplan probe remove 1` if the report is wrong")


def test_the_command_puts_the_warning_in_json_and_text(capsys, tmp_path, catalog,
                                                       make_report):
    put(tmp_path, catalog, make_report(bf16_tflops=60.0))
    argv = ["estimate", "--model", "llama3-8b", "--instance", "p5.48xlarge", "--nodes", "2",
            "--tokens", "1B"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["wall_clock_hours"] == pytest.approx(15.45, abs=0.01)
    assert data["wall_clock_hours_without_calibration"] == pytest.approx(1.65, abs=0.01)
    (line,) = calibration_lines(data["warnings"])
    assert "60.0 TFLOP/s" in line and "792.6" in line and "report 1" in line
    assert main(argv) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "warning: matmul bf16 on H100-SXM5-80GB: measured 60.0 TFLOP/s is used" in text


# -- reports that disagree ------------------------------------------------------------------------
def disagreeing(tmp_path, catalog, make_report):
    for name, tflops, day in (("A", 650.0, "01-31"), ("B", 400.0, "02-01"),
                              ("C", 190.0, "02-02")):
        put(tmp_path, catalog, make_report(bf16_tflops=tflops,
                                           created_utc=f"2026-{day}T12:00:00Z"), f"{name}.json")
    return load_calibration(catalog)


def test_reports_that_disagree_say_the_default_is_used_without_changing_it(
        tmp_path, catalog, make_report):
    cal = disagreeing(tmp_path, catalog, make_report)
    assert cal.matmul(H100, "bf16") is None  # the rules use none of them
    cluster, memory = p5(catalog, nodes=2)
    plain = estimate(llama3_8b(), cluster, memory_gib=memory)
    est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert not any(c.startswith("matmul") for c in est.calibrated)
    assert est.step_time_s == pytest.approx(plain.step_time_s, rel=0.05)  # HBM, intra only
    (line,) = calibration_lines(est.warnings)
    assert line == (f"matmul bf16 on {H100}: 3 stored reports disagree (190.0–650.0 TFLOP/s, "
                    "reports 1, 2, 3), none used; the datasheet default 792.6 TFLOP/s is used, "
                    "above every measurement. To fix: see `gpuplan probe show`, and remove the "
                    "wrong one (`gpuplan probe remove ID`)")


def test_a_disagreement_of_another_accelerator_or_dtype_is_not_said(tmp_path, catalog,
                                                                   make_report):
    cal = disagreeing(tmp_path, catalog, make_report)
    for gpu in ("A100-80GB", "H200"):  # other accelerators: their own figures
        cluster, memory = build_cluster(catalog, gpu=gpu, gpus=8)
        est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
        assert calibration_lines(est.warnings) == []
    cluster, memory = p5(catalog)
    fp16 = estimate(replace(llama3_8b(), precision="fp16"), cluster, calibration=cal,
                    memory_gib=memory)
    assert calibration_lines(fp16.warnings) == []


# -- intra-node bus bandwidth is the instance type's --------------------------------------------
@pytest.mark.parametrize("instance", ["a3-highgpu-8g", "a3-megagpu-8g",
                                      "Standard_ND96isr_H100_v5"])
def test_a_p5_bus_bandwidth_does_not_calibrate_other_instance_types(tmp_path, catalog,
                                                                    make_report, instance):
    put(tmp_path, catalog, make_report(busbw_by_size=((2**30, 880.0),)))
    cal = load_calibration(catalog)
    cluster, memory = build_cluster(catalog, instance=instance)
    assert cluster.accelerator.name == H100 and cluster.gpus_per_node == 8
    assert cal.intra(instance, H100, 8) is None
    est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert not any("intra-node busbw" in c for c in est.calibrated)
    assert calibration_lines(est.warnings) == []


def test_the_accelerator_key_still_calibrates_a_node_without_an_instance_type(
        tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(busbw_by_size=((2**30, 500.0),)))
    cal = load_calibration(catalog)
    assert cal.intra("p5.48xlarge", H100, 8).value == 500.0
    assert cal.intra(None, H100, 8).value == 500.0
    cluster, memory = build_cluster(catalog, gpu="H100", gpus=8)
    assert cluster.instance_type is None
    est = estimate(llama3_8b(), cluster, calibration=cal, memory_gib=memory)
    assert any(c.startswith("intra-node busbw: measured 500 GB/s") for c in est.calibrated)
