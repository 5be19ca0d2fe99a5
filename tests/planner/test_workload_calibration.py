"""Workload layers (`gpuplan probe workload`, issue #20) → `ingest` → the calibration: a layer
is found for its own shape only (or interpolated from a near one, the distance stated), only
full runs count, impossible or broken layers refuse the report, several combine by the median,
and the modelled layer is the planner's own. Split from test_probe_ingest.py."""

from __future__ import annotations

import dataclasses
import math
import pickle

import pytest
from probe_reports import LLAMA3_8B_LAYER, h100_workload_report
from probe_store import H100, put, refused

from planner import Workload, preset
from planner.model import (
    WorkloadShape,
    hardware_for,
    layer_flops,
    model_layer,
    shape_distance,
    shape_of,
)
from planner.store import load_calibration


# -- workload layers (`gpuplan probe workload`, issue #20) ---------------------------------------
# Reports as `torchrun --nproc-per-node 8 -m probes workload --model llama3-8b` writes them on a
# p5.48xlarge (tests/probe_reports.py); the layer is Llama-3 8B's at 8,192 tokens.
def _layer(**changes) -> WorkloadShape:
    return dataclasses.replace(WorkloadShape(**LLAMA3_8B_LAYER), **changes)


def _model(catalog, shape, framework="fsdp"):
    acc = catalog.accelerator(H100)
    return model_layer(shape, framework=framework, hardware=hardware_for(
        acc, shape, framework=framework, attention="flash"))


def test_a_workload_report_is_stored_and_found_for_its_shape_only(tmp_path, catalog):
    stored = put(tmp_path, catalog, h100_workload_report(layer_ms=30.0), "w.json")
    key = f"fsdp {_layer().label}"
    assert (stored.accelerator, stored.schema_version) == (H100, 3)
    assert stored.measurements == {"workload_layer_ms": {key: 30.0},
                                   "workload_layer_activation_mib": {key: 1400.0}}
    cal = load_calibration(catalog)
    assert not cal.empty and cal.rejected() == ()
    model = _model(catalog, _layer())
    m = cal.workload(H100, "fsdp", _layer())
    assert (m.distance, m.measured_shape, m.shape) == (0.0, _layer(), _layer())
    assert m.measured_layer_seconds == pytest.approx(0.030)
    assert m.modelled_layer_seconds == pytest.approx(model.layer_seconds)
    assert m.time_ratio == pytest.approx(0.030 / model.layer_seconds)
    assert m.measured_layer_memory_bytes == 1400 * 2**20
    assert m.modelled_layer_memory_bytes == model.activation_bytes
    assert m.memory_ratio == pytest.approx(1400 * 2**20 / model.activation_bytes)
    assert m.memory_difference_bytes == 1400 * 2**20 - model.activation_bytes
    assert m.modelled_optimizer_seconds == pytest.approx(model.optimizer_seconds)
    assert m.time_ratio_p10 < m.time_ratio < m.time_ratio_p90 and 0 < m.log_sigma < 0.05
    assert (m.n_reports, m.report_ids, m.source) == (1, (1,),
                                                     "probe report 1 on p5.48xlarge, 2026-02-01")
    assert m.layer_seconds_at(0.010) == pytest.approx(0.010 * m.time_ratio)
    # another framework, accelerator, or sizes too far: nothing
    assert cal.workload(H100, "megatron", _layer()) is None
    assert cal.workload("A100-SXM4-80GB", "fsdp", _layer()) is None
    assert cal.workload(H100, "fsdp", _layer(hidden=16384, heads=128, kv_heads=32,
                                             ffn_hidden=57344)) is None  # distance 2
    assert cal.workload(H100, "fsdp", _layer(seq_len=2048, micro_batch=4)) is None  # 2
    # the same layer sizes at any micro-batch or recomputation: the ratio, with its distance
    far = cal.workload(H100, "fsdp", _layer(micro_batch=4, recompute="full"))
    assert far.distance == pytest.approx(math.sqrt(5)) and far.time_ratio == m.time_ratio
    assert far.memory_ratio is None  # another recomputation keeps other tensors
    (note,) = cal.used()
    assert (note.kind, note.key, note.report_ids) == ("workload", f"{H100} {key}", (1,))
    assert "measured/modelled" in note.reason and "activations 1,400.0 MiB measured" in note.reason
    assert pickle.loads(pickle.dumps(cal)).workload(H100, "fsdp", _layer()) == m


def test_a_nearby_shape_interpolates_the_ratio_and_states_the_distance(tmp_path, catalog):
    put(tmp_path, catalog, h100_workload_report(layer_ms=30.0), "b1.json")
    put(tmp_path, catalog, h100_workload_report(layer_ms=110.0, activation_mib=5600.0,
                                                shape={"micro_batch": 4}), "b4.json")
    cal = load_calibration(catalog)
    r1 = cal.workload(H100, "fsdp", _layer()).time_ratio
    r4 = cal.workload(H100, "fsdp", _layer(micro_batch=4)).time_ratio
    m = cal.workload(H100, "fsdp", _layer(micro_batch=2))
    # a doubled micro-batch is distance 1 from both: equal weights, the geometric mean
    assert m.distance == 1.0 and m.shape == _layer(micro_batch=2)
    assert m.measured_shape == _layer() and m.measured_layer_seconds == pytest.approx(0.030)
    assert m.time_ratio == pytest.approx(math.sqrt(r1 * r4))
    assert m.report_ids == (1, 2) and m.n_reports == 2
    assert m.source.startswith("interpolated") and m.source.count("weight 0.50") == 2
    assert "interpolated to" in m.summary() and "distance 1.00" in m.summary()
    # a doubled hidden size of the same family (head dim, GQA ratio, FFN ratio) is near too
    wide = cal.workload(H100, "fsdp", _layer(hidden=8192, heads=64, kv_heads=16,
                                             ffn_hidden=28672))
    assert wide.distance == 1.0 and wide.measured_shape == _layer()


@pytest.mark.parametrize(("changes", "why"), [
    ({"quick": True}, "quick mode"),
    ({"world_size": 2, "local_world_size": 2}, "used 2 of the node's 8 GPUs"),
    ({"tp": 2}, "tensor parallel (tp=2)"),
    ({"failed_rank": 3}, "the workload probe failed on rank 3"),
    ({"status": "failed"}, "the workload probe failed on rank 0"),
    ({"device_type": "cpu", "gpu_model": None}, "a cpu run does not measure a GPU"),
])
def test_only_full_workload_runs_calibrate(tmp_path, catalog, changes, why):
    stored = put(tmp_path, catalog, h100_workload_report(**changes))
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None and cal.empty
    (reason,) = refused(cal, stored.id)
    assert why in reason
    (note,) = cal.rejected()
    assert note.kind == "workload" and note.line().startswith("workload ")


def test_an_impossible_or_broken_layer_refuses_the_whole_report(tmp_path, catalog,
                                                                make_report):
    fast = put(tmp_path, catalog, h100_workload_report(layer_ms=5.0), "fast.json")
    slow = put(tmp_path, catalog, h100_workload_report(layer_ms=2000.0), "slow.json")
    hw, wl = make_report(), h100_workload_report(layer_ms=5.0)
    # hardware figures and an impossible layer in one report (each rank carries its layer
    # time: a summary no rank reports is refused as edited before any bound is checked)
    both = dataclasses.replace(hw, workload=wl.workload, ranks=tuple(
        dataclasses.replace(r, workload=w.workload)
        for r, w in zip(hw.ranks, wl.ranks, strict=True)))
    mixed = put(tmp_path, catalog, both, "mixed.json")
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None and cal.empty
    (reason,) = refused(cal, fast.id)
    assert "faster than its 1.24e+13 FLOPs at the datasheet peak 989.5 TFLOP/s" in reason
    assert reason.endswith("impossible")
    (reason,) = refused(cal, slow.id)
    assert "over 20x the modelled" in reason and "broken measurement" in reason
    # the report's plausible matmul, copy and busbw are not trusted either
    assert sum(r.startswith("another figure of this report is out of bounds (workload")
               for r in refused(cal, mixed.id)) == 3


def test_activations_below_the_layer_input_refuse_the_report(tmp_path, catalog):
    """1 MiB per Llama-3 8B layer was used and scaled plans' activations by 0.00 (review
    2026-12-04); every layer keeps at least its 16-bit input (64 MiB at 8,192 tokens)."""
    stored = put(tmp_path, catalog, h100_workload_report(activation_mib=1.0), "tiny.json")
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", _layer()) is None
    (reason,) = refused(cal, stored.id)
    assert "1.0 MiB of activations per layer is below the layer's own input (64.0 MiB" in reason
    assert reason.endswith("impossible")
    # the input itself is possible with full recomputation, which keeps about that (without
    # it, under half the modelled count is refused: MIN_ACTIVATION_RATIO)
    put(tmp_path, catalog, h100_workload_report(activation_mib=64.0,
                                                created_utc="2026-02-02T00:00:00Z",
                                                shape={"recompute": "full"}), "in.json")
    assert load_calibration(catalog).workload(H100, "fsdp", _layer(recompute="full")) is not None


def test_a_megatron_labelled_report_compares_memory_with_the_eager_count(tmp_path, catalog):
    """The probe's layers are eager whatever --framework labels the run: its activations
    (1,400 MiB) are compared with the eager count (1,408), not Megatron's fused one (1,088),
    which inflated Megatron plans' activations by 29% (review 2026-12-04)."""
    put(tmp_path, catalog, h100_workload_report(framework="megatron"), "m.json")
    m = load_calibration(catalog).workload(H100, "megatron", _layer())
    assert m.modelled_layer_memory_bytes == 1408 * 2**20
    assert m.memory_ratio == pytest.approx(1400 / 1408)
    # the time is still compared with the labelled profile's model
    assert m.modelled_layer_seconds == pytest.approx(
        _model(catalog, _layer(), "megatron").layer_seconds)


def test_several_workload_reports_combine_by_median(tmp_path, catalog):
    for i, ms in enumerate((28.0, 40.0, 30.0)):
        put(tmp_path, catalog, h100_workload_report(
            layer_ms=ms, created_utc=f"2026-02-0{i + 1}T00:00:00Z"), f"{i}.json")
    m = load_calibration(catalog).workload(H100, "fsdp", _layer())
    assert m.measured_layer_seconds == pytest.approx(0.030) and m.n_reports == 3
    assert m.source == "median of probe reports 1, 2, 3 (2026-02-01 .. 2026-02-03)"
    assert m.time_ratio_p10 * m.modelled_layer_seconds == pytest.approx(28.0 * 0.99e-3)
    assert m.time_ratio_p90 * m.modelled_layer_seconds == pytest.approx(40.0 * 1.02e-3)


def test_the_layer_is_modelled_with_the_figures_estimate_uses(tmp_path, catalog, make_report):
    put(tmp_path, catalog, h100_workload_report(), "w.json")
    before = load_calibration(catalog).workload(H100, "fsdp", _layer())
    put(tmp_path, catalog, make_report(bf16_tflops=650.0), "hw.json")  # below 792.6 default
    after = load_calibration(catalog).workload(H100, "fsdp", _layer())
    assert after.measured_layer_seconds == before.measured_layer_seconds
    assert after.modelled_layer_seconds > before.modelled_layer_seconds
    assert after.time_ratio < before.time_ratio  # no double counting of the slower matmul


def test_probe_show_lists_workload_layers_used_and_refused(tmp_path, catalog, capsys):
    from planner.cli import main

    put(tmp_path, catalog, h100_workload_report(), "good.json")
    put(tmp_path, catalog, h100_workload_report(quick=True, layer_ms=31.0), "quick.json")
    assert main(["probe", "show"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table may wrap long lines
    used, _, refused_part = out.partition("Not used:")
    assert f"workload {H100} fsdp {_layer().label}: 30.0 ms/layer (report 1)" in used
    assert "measured/modelled" in used
    assert "31.0 ms/layer (report 2): quick mode" in refused_part


# -- the layer model ------------------------------------------------------------------------------
def test_the_modelled_layer_by_hand(catalog):
    T, h, a, kv, d, F = 8192, 4096, 32, 8, 128, 14336
    m = _model(catalog, _layer())
    # activations per token: 8h + 4ad + 4·a_kv·d + 2·m·F bytes (_memory, after Korthikanti et
    # al.) for Megatron's fused layers; eager ones (fsdp) keep silu(gate) (2F) and K/V repeated
    # to a heads (4·(a − a_kv)·d) too
    megatron = (8 * h + 4 * a * d + 4 * kv * d + 6 * F) * T
    assert _model(catalog, _layer(), "megatron").activation_bytes == pytest.approx(megatron)
    assert m.activation_bytes == pytest.approx(megatron + (2 * F + 4 * (a - kv) * d) * T)
    # selective drops the activation output and the attention output: the repeat stays
    selective = (8 * h + 2 * a * d + 4 * kv * d + 2 * F) * T
    assert _model(catalog, _layer(recompute="selective"), "megatron").activation_bytes == \
        pytest.approx(selective)
    assert _model(catalog, _layer(recompute="selective")).activation_bytes == \
        pytest.approx(selective + 4 * (a - kv) * d * T)
    assert _model(catalog, _layer(recompute="full")).activation_bytes == pytest.approx(2 * h * T)
    assert m.layer_seconds == pytest.approx(m.compute_seconds + m.other_seconds)
    assert m.flops == layer_flops(_layer()) == (
        3 * 2 * T * (h * (a + 2 * kv) * d + a * d * h + 3 * h * F) + 3 * 0.5 * 4 * T * T * a * d)
    assert m.flops / m.layer_seconds < 989.5e12  # below the datasheet peak
    # AdamW over one layer's parameters: 30 bytes each at 85% of 3,350 GB/s
    params = 2 * h * a * d + 2 * h * kv * d + 3 * h * F + 2 * h
    assert m.optimizer_seconds == pytest.approx(params * 30 / (3350e9 * 0.85))
    arch, seq = preset("llama3-8b")
    assert shape_of(Workload(arch=arch, tokens=1e12, seq_len=seq)) == _layer()


def test_shape_distance_is_stated_in_log2_steps():
    assert shape_distance(_layer(), _layer()) == 0.0
    assert shape_distance(_layer(), _layer(micro_batch=2)) == 1.0
    assert shape_distance(_layer(), _layer(seq_len=4096)) == pytest.approx(math.sqrt(2))
    assert shape_distance(_layer(), _layer(seq_len=4096, micro_batch=2)) == 1.0
    assert shape_distance(_layer(), _layer(hidden=8192, heads=64, kv_heads=16,
                                           ffn_hidden=28672)) == 1.0
    # recomputation is a distance: none and full as far apart as a doubled micro-batch
    assert shape_distance(_layer(), _layer(recompute="selective")) == 0.5
    assert shape_distance(_layer(), _layer(recompute="full")) == 1.0
    assert shape_distance(_layer(recompute="full"), _layer(recompute="selective")) == 0.5
    assert shape_distance(_layer(), _layer(recompute="full", micro_batch=2)) == \
        pytest.approx(math.sqrt(2))
    for other in (_layer(kv_heads=32), _layer(ffn_hidden=11008),
                  _layer(precision="fp16"), _layer(gated=False), _layer(head_dim=64),
                  _layer(experts=8, experts_per_token=2)):
        assert shape_distance(_layer(), other) is None
