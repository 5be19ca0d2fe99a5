"""Probes that can be trusted, from hostile sweep 23: an implausible report is refused, or used
with a warning in the estimate that names it and says how to check and remove it.

1. a workload layer far from its model (375 ms against 25 ms modelled moved an estimate from
   383 h to 5,379 h with no warning) warns; activations over 2x the model warn, over 4x are
   refused (14,000 MiB against 1,408 was used silently);
2. a matmul or copy figure at the datasheet peak (989.5 of 989.5 TFLOP/s, 3,349 of 3,350 GB/s)
   warns: no real run reaches 95% of it;
3. a report over a year old (2020-01-02, counted to GPUPLAN_TODAY) warns;
5. a report whose memory and collective sections hold another's measurements counts them once;
6. an instance type the catalog does not have, or another cloud's, is said, not dropped.
"""

from __future__ import annotations

from probe_reports import h100_report, h100_workload_report
from probe_store import H100, p5, put, refused

from planner import Workload, estimate, preset
from planner.store import load_calibration


def llama3_8b() -> Workload:
    arch, seq = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e11, seq_len=seq, framework="fsdp")


def warned(catalog) -> list[str]:
    cluster, memory = p5(catalog)
    est = estimate(llama3_8b(), cluster, calibration=load_calibration(catalog),
                   memory_gib=memory)
    return [w for w in est.warnings if "gpuplan probe show" in w]


# -- 1. workload layers ------------------------------------------------------------------------
def test_a_layer_15x_slower_than_its_model_is_used_with_a_warning(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_workload_report(layer_ms=375.0))
    cal = load_calibration(catalog)
    assert not refused(cal, stored.id)  # under the 20x that refuses it: used, said
    (line,) = warned(catalog)
    assert line.startswith(f"workload layer {H100} fsdp ")
    assert "measured/modelled layer time 14.97, outside 0.5–2" in line
    assert f"`gpuplan probe remove {stored.id}`" in line


def test_a_layer_near_its_model_is_not_warned(tmp_path, catalog):
    put(tmp_path, catalog, h100_workload_report(layer_ms=30.0))
    assert warned(catalog) == []


def test_activations_over_twice_the_model_warn_and_over_four_times_are_refused(tmp_path,
                                                                               catalog):
    first = put(tmp_path, catalog, h100_workload_report(activation_mib=3500.0), "a.json")
    (line,) = warned(catalog)
    assert "measured activations 2.5x the modelled" in line and f"remove {first.id}" in line
    big = put(tmp_path, catalog, h100_workload_report(activation_mib=14000.0,
                                                      created_utc="2026-02-02T12:00:00Z"),
              "b.json")
    (why,) = refused(load_calibration(catalog), big.id)
    assert "14,000.0 MiB of activations per layer is 9.9x the 1,408.0 MiB modelled, over 4x" \
        in why


# -- 2. figures at the datasheet peak ----------------------------------------------------------
def test_a_matmul_at_the_dense_peak_warns(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_report(bf16_tflops=989.5))
    (line,) = warned(catalog)
    assert line.startswith(f"matmul bf16 on {H100}: measured 989.5 TFLOP/s is used")
    assert "100.0% of the datasheet 989.5 TFLOP/s" in line and "above the 95%" in line
    assert f"`gpuplan probe remove {stored.id}`" in line


def test_a_copy_at_the_hbm_bandwidth_warns(tmp_path, catalog):
    put(tmp_path, catalog, h100_report(copy_gb_per_s=3349.0))
    (line,) = warned(catalog)
    assert line.startswith(f"HBM copy on {H100}: measured 3,349.0 GB/s is used")
    assert "above the 95%" in line


def test_figures_a_real_run_reaches_do_not_warn(tmp_path, catalog):
    put(tmp_path, catalog, h100_report(bf16_tflops=800.0, copy_gb_per_s=3100.0))
    assert warned(catalog) == []


# -- 3. old reports ----------------------------------------------------------------------------
def test_a_report_over_a_year_old_warns_once_naming_each_figure_it_gives(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_report(created_utc="2020-01-02T00:00:00Z"))
    (line,) = warned(catalog)  # was three lines, each saying the same age
    assert f"report {stored.id} was measured 2020-01-02, 83 months before 2026-12-01" in line
    assert "drivers, CUDA, NCCL" in line
    assert line.startswith(f"measured matmul bf16 on {H100} (")  # matmul, HBM, intra busbw
    assert f", HBM copy on {H100} (" in line and " and intra-node busbw on p5.48xlarge (" in line
    assert f" are used (report {stored.id}), but " in line


def test_a_report_under_a_year_old_does_not_warn(tmp_path, catalog):
    put(tmp_path, catalog, h100_report(created_utc="2026-01-02T00:00:00Z"))
    assert warned(catalog) == []


# -- 5. partial copies -------------------------------------------------------------------------
def test_sections_copied_bit_for_bit_from_another_report_count_once(tmp_path, catalog):
    first = put(tmp_path, catalog, h100_report(), "a.json")
    # another matmul pasted over a copy of the first run: memory and collectives are its bits
    second = put(tmp_path, catalog, h100_report(bf16_tflops=700.0,
                                                created_utc="2026-02-03T12:00:00Z"), "b.json")
    cal = load_calibration(catalog)
    assert cal.hbm(H100).report_ids == (first.id,)
    assert cal.intra("p5.48xlarge", H100, 8).report_ids == (first.id,)
    assert cal.matmul(H100, "bf16").report_ids == (first.id, second.id)  # its own run
    reasons = refused(cal, second.id)
    assert len(reasons) == 2
    assert all(f"section is report {first.id}'s (the same measurements: a partial copy" in r
               for r in reasons)


# -- 6. instance types the catalog does not have --------------------------------------------------
def test_an_unknown_instance_type_says_its_figure_is_not_the_instances(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_report(instance_type="p9.99xlarge"))
    cal = load_calibration(catalog)
    (note,) = [n for n in cal.rejected() if n.report_ids == (stored.id,)]
    assert (note.kind, note.key) == ("intra", "p9.99xlarge")
    assert "is not in the catalog" in note.reason
    assert cal.intra(None, H100, 8) is not None  # by its GPUs per node, as it says


def test_another_clouds_instance_type_refuses_the_report(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_report(cloud="gcp"))
    cal = load_calibration(catalog)
    (why,) = refused(cal, stored.id)
    assert "instance type 'p5.48xlarge' on cloud 'gcp', but p5.48xlarge is aws's" in why
    assert cal.empty
