"""Each term of the performance model against a calculation done by hand in the test.

The arithmetic is written out in the comments so a reader can check it with a pencil; the
published sizes come from the model cards / papers named next to each number.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from planner import (
    Assumptions,
    Workload,
    preset,
)
from planner.model import ModelScalars, evaluate, goodput

GIB = 2**30


def workload(name: str = "llama2-7b", *, seq_len: int | None = None, gbs_seqs: int = 64,
             **kw) -> Workload:
    arch, seq = preset(name)
    seq = seq_len or seq
    return Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=gbs_seqs * seq,
                    **kw)


# H100-SXM-like numbers for the model's hardware inputs; each test says which ones matter.
HARDWARE = dict(gpus_per_node=8, matmul_tflops=792.6, attention_tflops=989.5,
                hbm_gb_per_s=3350.0, memory_gib=80.0, intra_busbw_gb_per_s=360.0,
                nic_gb_per_s_per_gpu=42.5)


FRAMEWORKS = ("megatron", "fsdp", "deepspeed", "hf")
# The physics alone: software constants at their no-loss values, so the hand calculations below
# do not move when benchmarks/fit_software.py refits the shipped constants.
PHYSICS = Assumptions().with_overrides(
    attention_efficiency=1.0,
    **{f"{table}.{fw}": value for fw in FRAMEWORKS
       for table, value in (("gemm_efficiency", 1.0), ("elementwise_factor", 1.0),
                            ("comm_overlap", 0.9), ("tp_comm_overlap", 0.0),
                            ("host_overhead_s_per_layer", 0.0))},
    ep_comm_overlap=0.0, moe_overhead_s_per_layer=0.0)


def run(ms: ModelScalars, A: Assumptions | None = None, *, tp=1, pp=1, dp=1, zero=0, mb=1,
        rc=0, **hardware) -> dict[str, float]:
    """``evaluate`` on a single (cluster, plan) entry, returned as floats."""
    hw = {**HARDWARE, **hardware}
    arrays = {k: np.array([v], dtype=float) for k, v in hw.items()}
    res = evaluate(ms, A or PHYSICS, tp=np.array([tp]), pp=np.array([pp]),
                   dp=np.array([dp]), zero=np.array([zero]), mb=np.array([mb]),
                   rc=np.array([rc]), **arrays)
    return {k: float(v[0]) for k, v in res.items()}


# ---- parameter counts ------------------------------------------------------------------

def test_llama2_7b_parameters_by_hand():
    arch, _ = preset("llama2-7b")
    # L=32, h=4096, a=a_kv=32, d=128, F=11008, V=32000, gated FFN, untied head, no biases
    attention = 4 * 4096 * 4096  # Q, K, V, O: 67,108,864
    mlp = 3 * 4096 * 11008  # gate, up, down: 135,266,304
    norms = 2 * 4096  # 8,192
    embeddings = 2 * 32000 * 4096  # input table + output head: 262,144,000
    total = 32 * (attention + mlp + norms) + embeddings  # 6,738,411,520
    assert total == 6_738_411_520
    assert arch.params_total() == total == arch.params_active()


@pytest.mark.parametrize("name,total_b,active_b,source", [
    ("llama2-7b", 6.74, None, "Llama-2-7b-hf: 6,738,415,616 incl. the final norm"),
    ("llama2-13b", 13.0, None, "arXiv:2307.09288 Table 1"),
    ("llama3-8b", 8.03, None, "Meta-Llama-3-8B model card"),
    ("llama3-70b", 70.6, None, "Meta-Llama-3-70B model card"),
    ("llama3-405b", 405.0, None, "arXiv:2407.21783 Table 3"),
    ("gpt3-175b", 175.0, None, "arXiv:2005.14165 Table 2.1"),
    ("gpt2", 124.0 / 1000, None, "openai-community/gpt2 (124M incl. biases, positions)"),
    ("mixtral-8x7b", 46.7, 12.9, "mistral.ai Mixtral of experts: 46.7B total, 12.9B active"),
    ("deepseek-v3", 671.0, None, "arXiv:2412.19437: 671B total"),
])
def test_preset_sizes_match_published_counts_within_1_percent(name, total_b, active_b, source):
    arch, _ = preset(name)
    assert arch.params_total() == pytest.approx(total_b * 1e9, rel=0.01), source
    if active_b is not None:
        assert arch.params_active() == pytest.approx(active_b * 1e9, rel=0.01), source


def test_deepseek_v3_active_parameters_by_hand():
    arch, _ = preset("deepseek-v3")
    # The paper says "37B activated"; counting the config.json gives 37.55B (the paper rounds
    # down), so the hand count is checked exactly and the rounded figure within 2%.
    attention = 187_105_280 + 2 * 7168  # MLA matrices (see _presets) + 2 norms
    dense_ffn = 3 * 7168 * 18432  # 3 leading dense layers: 396,361,728
    one_expert = 3 * 7168 * 2048  # 44,040,192
    moe_active = (8 + 1) * one_expert + 7168 * 256  # top-8 + 1 shared + router: 398,196,736
    embeddings = 2 * 129280 * 7168  # 1,853,358,080
    active = 61 * attention + 3 * dense_ffn + 58 * moe_active + embeddings
    assert active == 37_552_150_528
    assert arch.params_active() == active
    assert arch.params_active() == pytest.approx(37e9, rel=0.02)
    total = active + 58 * (256 - 8) * one_expert  # every routed expert, counted once
    assert arch.params_total() == total == 671_026_272_256


# ---- model FLOPs (6·N·D) ---------------------------------------------------------------

def test_model_flops_per_token_is_6n_plus_causal_attention_for_llama2_7b():
    ms = ModelScalars.of(workload("llama2-7b", seq_len=4096))
    n_matmul = 6_738_411_520 - 32000 * 4096  # minus the embedding lookup: 6,607,339,520
    # causal attention: half of PaLM's 12·L·s·a·d → 6·32·4096·32·128 = 3,221,225,472
    attention = 6 * 32 * 4096 * 32 * 128
    assert 6 * n_matmul + attention == 42_865_262_592
    assert ms.model_flops_per_token() == pytest.approx(42_865_262_592, rel=1e-12)


def test_a_tied_model_counts_its_one_table_as_the_output_head():
    """GPT-2 shares its embedding table with the output head: the head is still a V·h GEMM
    per token (the time model runs it), so N_matmul is every parameter; subtracting V·h as
    for an untied model dropped the head (MFU read 24% low for GPT-2, 17.5% for Llama 3.2)."""
    ms = ModelScalars.of(workload("gpt2", seq_len=1024))
    assert ms.params_embedding == 50257 * 768  # one table, counted once
    attention = 6 * 12 * 1024 * 12 * 64
    assert ms.model_flops_per_token() == pytest.approx(6 * ms.params_active + attention,
                                                       rel=1e-12)


def test_lora_counts_4n_because_frozen_weights_get_no_weight_gradients():
    ms = ModelScalars.of(workload("llama2-7b", seq_len=4096, finetune="lora"))
    # 4 · 6,607,339,520 + 3,221,225,472 = 29,650,583,552, plus the rank-16 adapters trained in
    # full: 6 · 32 layers · 16 · (4·4096 + 2·4096 + 3·(4096 + 11008)) = 6 · 35,782,656
    assert ms.adapter_params == 35_782_656
    assert ms.model_flops_per_token() == pytest.approx(29_650_583_552 + 6 * 35_782_656,
                                                       rel=1e-12)


def test_attention_flops_grow_linearly_with_sequence_length():
    short = ModelScalars.of(workload("llama2-7b", seq_len=2048)).model_flops_per_token()
    long = ModelScalars.of(workload("llama2-7b", seq_len=4096)).model_flops_per_token()
    # doubling s adds exactly one more 6·L·s·a·d at s = 2048: 1,610,612,736
    assert long - short == pytest.approx(6 * 32 * 2048 * 32 * 128, rel=1e-12)


# ---- memory: bytes per parameter -------------------------------------------------------

N7B = 6_738_411_520


def static_bytes(res: dict) -> float:
    return (res["memory_weights_gib"] + res["memory_grads_gib"]
            + res["memory_optimizer_gib"]) * GIB


@pytest.mark.parametrize("optimizer,bytes_per_param", [
    ("adamw", 16),  # 2 bf16 weights + 2 bf16 grads + 12 (fp32 master, m, v)
    ("sgd", 12),  # 2 + 2 + 8 (fp32 master, momentum)
    ("adafactor", 8),  # 2 + 2 + 4 (fp32 master; factored moments are negligible)
])
def test_static_memory_per_parameter_without_sharding(optimizer, bytes_per_param):
    ms = ModelScalars.of(workload("llama2-7b", optimizer=optimizer))
    res = run(ms, tp=1, pp=1, dp=1, zero=0)
    assert res["memory_weights_gib"] * GIB == pytest.approx(2 * N7B)
    assert res["memory_grads_gib"] * GIB == pytest.approx(2 * N7B)
    assert static_bytes(res) == pytest.approx(bytes_per_param * N7B, rel=1e-12)


@pytest.mark.parametrize("zero,weights,grads,optimizer", [
    (0, 2.0, 2.0, 12.0),
    (1, 2.0, 2.0, 12.0 / 8),  # ZeRO-1 shards the optimizer state over dp = 8
    (2, 2.0, 2.0 / 8, 12.0 / 8),  # ZeRO-2: + gradients
    (3, 2.0 / 8, 2.0 / 8, 12.0 / 8),  # ZeRO-3 / FSDP: + weights
])
def test_zero_stages_divide_state_by_data_parallel_degree(zero, weights, grads, optimizer):
    ms = ModelScalars.of(workload("llama2-7b"))
    res = run(ms, tp=1, pp=1, dp=8, zero=zero)
    assert res["memory_weights_gib"] * GIB == pytest.approx(weights * N7B, rel=1e-12)
    assert res["memory_grads_gib"] * GIB == pytest.approx(grads * N7B, rel=1e-12)
    assert res["memory_optimizer_gib"] * GIB == pytest.approx(optimizer * N7B, rel=1e-12)


def test_tensor_and_pipeline_parallel_divide_the_weights():
    ms = ModelScalars.of(workload("llama2-7b"))
    res = run(ms, tp=2, pp=4, dp=1)
    assert static_bytes(res) == pytest.approx(16 * N7B / (2 * 4), rel=1e-12)


def test_activation_memory_follows_korthikanti_per_token_terms():
    ms = ModelScalars.of(workload("llama2-7b", seq_len=4096))
    # per layer per token, no recompute: 8h + 4ad + 4·a_kv·d + 2·3·F
    #   = 8·4096 + 4·4096 + 4·4096 + 6·11008 = 32,768 + 16,384 + 16,384 + 66,048 = 131,584 B
    # × 32 layers × 4096 tokens (mb = 1), one micro-batch in flight (pp = 1)
    res = run(ms, tp=1, pp=1, dp=1, mb=1, rc=0)
    assert res["memory_activations_gib"] * GIB == pytest.approx(131_584 * 32 * 4096)
    # full recompute keeps the 2h layer input per layer, plus one layer's activations live
    res = run(ms, tp=1, pp=1, dp=1, mb=1, rc=2)
    assert res["memory_activations_gib"] * GIB == pytest.approx(
        (2 * 4096 * 32 + 131_584) * 4096)
    # logits: T·V·(4 fp32 + 2 bf16) bytes = 4096 · 32000 · 6
    assert res["memory_logits_gib"] * GIB == pytest.approx(4096 * 32000 * 6)


# ---- communication ---------------------------------------------------------------------

# Bandwidth terms alone: no overlap with backward, no per-message latency, no stragglers.
NO_OVERLAP = PHYSICS.with_overrides(overlap_compute_slowdown=0.0, gpu_speed_cv=0.0,
                                    intra_node_latency_s=0.0, inter_node_latency_s=0.0,
                                    **{f"comm_overlap.{fw}": 0.0 for fw in FRAMEWORKS})


def test_data_parallel_ring_all_reduce_inside_one_node():
    ms = ModelScalars.of(workload("llama2-7b"))
    res = run(ms, NO_OVERLAP, tp=1, pp=1, dp=2, zero=0, intra_busbw_gb_per_s=360.0)
    # bytes = params per GPU × 2 (bf16 gradient reduction) = 13,476,823,040
    size = N7B * 2
    # ring all-reduce over n = 2: 2(n−1)/n = 1 → 13,476,823,040 / 360e9 = 0.037436 s
    assert res["dp_comm_s"] == pytest.approx(2 * (2 - 1) / 2 * size / 360e9, rel=1e-12)
    assert res["dp_comm_s"] == pytest.approx(0.0374356, rel=1e-5)


def test_data_parallel_all_reduce_is_hierarchical_across_nodes():
    ms = ModelScalars.of(workload("llama2-7b"))
    size = N7B * 2
    # dp = 16 over 2 nodes of 8: ring of 8 inside each node on NVSwitch, then each GPU's
    # 1/8 shard over a ring of 2 nodes on its NIC share
    res = run(ms, NO_OVERLAP, tp=1, pp=1, dp=16, zero=0)
    intra = 2 * 7 / 8 * size / 360e9
    inter = 2 * 1 / 2 * (size / 8) / 42.5e9
    assert res["dp_comm_s"] == pytest.approx(intra + inter, rel=1e-12)
    # tp = 4 leaves 2 members of each data-parallel group per node: dp = 4 spans 2 nodes
    res = run(ms, NO_OVERLAP, tp=4, pp=1, dp=4, zero=0)
    size4 = N7B / 4 * 2
    expected = 2 * 1 / 2 * size4 / 360e9 + 2 * 1 / 2 * (size4 / 2) / 42.5e9
    assert res["dp_comm_s"] == pytest.approx(expected, rel=1e-12)


def test_data_parallel_latency_is_paid_per_gradient_bucket():
    ms = ModelScalars.of(workload("llama2-7b"))
    with_latency = dataclasses.replace(NO_OVERLAP, intra_node_latency_s=10e-6,
                                       inter_node_latency_s=10e-6)
    size = N7B * 2
    # 13,476,823,040 bytes in 25 MiB buckets: ceil(514.1) = 515 buckets
    buckets = math.ceil(size / (25 * 2**20))
    assert buckets == 515
    # inside one node: one intra-node latency per bucket
    one_node = run(ms, with_latency, tp=1, pp=1, dp=8, zero=0)
    bandwidth = 2 * 7 / 8 * size / 360e9
    assert one_node["dp_comm_s"] == pytest.approx(bandwidth + 515 * 10e-6, rel=1e-12)
    # 2 nodes: + min(tree 2·log2(2), ring 2·(2−1)) = 2 network hops per bucket
    two_nodes = run(ms, with_latency, tp=1, pp=1, dp=16, zero=0)
    bandwidth += 2 * 1 / 2 * (size / 8) / 42.5e9
    assert two_nodes["dp_comm_s"] == pytest.approx(bandwidth + 515 * (10e-6 + 2 * 10e-6),
                                                   rel=1e-12)


def test_data_parallel_reduction_hides_under_the_last_backward():
    ms = ModelScalars.of(workload("llama2-7b"))
    A = dataclasses.replace(PHYSICS, gpu_speed_cv=0.0, intra_node_latency_s=0.0,
                            inter_node_latency_s=0.0)
    res = run(ms, A, tp=1, pp=1, dp=16, zero=0)
    no_dp = run(ms, A, tp=1, pp=1, dp=1, zero=0)
    size = N7B * 2
    t_dp = 2 * 7 / 8 * size / 360e9 + 2 * 1 / 2 * (size / 8) / 42.5e9
    # the window: the backward share (2 of 3 passes) of one micro-batch's GPU work — matmul,
    # attention and elementwise kernels (other_s without the optimizer step)
    t_opt = N7B * 30 / (3350e9 * 0.85)
    work = (res["compute_s"] + no_dp["other_s"] - t_opt) / res["micro_batches"]
    t_bwd = work * 2 / 3
    hidden = min(t_dp, 0.9 * t_bwd)
    assert res["dp_comm_s"] == pytest.approx(max(0.0, t_dp - 0.9 * t_bwd) + 0.15 * hidden,
                                             rel=1e-9)


def test_tensor_parallel_all_reduces_are_not_overlapped():
    ms = ModelScalars.of(workload("llama2-7b", seq_len=4096, gbs_seqs=8))
    res = run(ms, tp=8, pp=1, dp=1, mb=1, rc=0)
    # per layer: 4 all-reduces of 2·T·h = 2·4096·4096 = 33,554,432 bytes over a ring of 8
    per_layer = 4 * (2 * 7 / 8 * 33_554_432 / 360e9 + 10e-6)
    assert res["tp_comm_s"] == pytest.approx(8 * 32 * per_layer, rel=1e-12)  # m=8, L=32


# ---- pipeline bubble -------------------------------------------------------------------

def test_pipeline_bubble_is_pp_minus_one_micro_batches():
    # llama2-13b, pp = 8: 40/8 = 5 layers per stage, odd, so no interleaving (v = 1)
    ms = ModelScalars.of(workload("llama2-13b", gbs_seqs=16))
    res = run(ms, NO_OVERLAP, tp=1, pp=8, dp=1, mb=1)
    m = res["micro_batches"]
    assert m == 16 and res["virtual_stages"] == 1
    # the optimizer step (outside the pipeline): N/pp params × 30 B touched / (HBM × 0.85)
    n13 = preset("llama2-13b")[0].params_total()
    t_opt = n13 / 8 * 30 / (3350e9 * 0.85)
    t_mb = (res["compute_s"] + res["tp_comm_s"] + res["other_s"] - t_opt) / m
    assert res["pp_bubble_s"] == pytest.approx((8 - 1) * t_mb, rel=1e-9)
    # so the bubble is (pp−1)/(m+pp−1) = 7/23 of the pipelined time
    assert res["pp_bubble_s"] / (res["step_s"] - t_opt) == pytest.approx(7 / 23, rel=1e-9)


def test_interleaved_stages_cut_the_bubble_v_fold():
    # llama2-7b, pp = 4: 32/4 = 8 layers per stage → v = 4 virtual stages of 2 layers
    # (Megatron interleaved 1F1B): bubble (pp−1)/v micro-batches
    ms = ModelScalars.of(workload("llama2-7b", gbs_seqs=16))
    res = run(ms, NO_OVERLAP, tp=1, pp=4, dp=1, mb=1)
    assert res["virtual_stages"] == 4
    t_opt = N7B / 4 * 30 / (3350e9 * 0.85)
    t_mb = (res["compute_s"] + res["tp_comm_s"] + res["other_s"] - t_opt) / 16
    assert res["pp_bubble_s"] == pytest.approx((4 - 1) / 4 * t_mb, rel=1e-9)


@pytest.mark.parametrize("name,pp,m", [("llama2-13b", 8, 16), ("llama2-13b", 8, 64),
                                       ("gpt2-xl", 16, 64)])
def test_pipeline_bubble_fraction_of_the_step(name, pp, m):
    ms = ModelScalars.of(workload(name, gbs_seqs=m))
    res = run(ms, tp=1, pp=pp, dp=1, mb=1)
    assert res["micro_batches"] == m and res["virtual_stages"] == 1  # 5 and 3 layers/stage
    # ≈ (pp−1)/(m+pp−1): the optimizer step and the straggler margin sit outside the
    # pipeline, so the bubble's share of the whole step is a little smaller
    share = res["pp_bubble_s"] / res["step_s"]
    assert share == pytest.approx((pp - 1) / (m + pp - 1), rel=0.1)
    assert share < (pp - 1) / (m + pp - 1)


def test_pipeline_of_one_stage_has_no_bubble():
    ms = ModelScalars.of(workload("llama2-7b"))
    assert run(ms, pp=1)["pp_bubble_s"] == 0.0


# ---- goodput (Young/Daly) --------------------------------------------------------------

GOODPUT_A = Assumptions(failure_rate_per_gpu_hour=1e-4, restart_minutes=30.0,
                        checkpoint_write_gb_per_s_per_node=1.0,
                        checkpoint_read_gb_per_s_per_node=2.0, evaluation_fraction=0.0,
                        operational_loss_fraction=0.0)


def test_goodput_follows_young_daly():
    g = goodput(ideal_hours=1000.0, gpus=1024, nodes=128, checkpoint_bytes=1e12, A=GOODPUT_A)
    M = 1 / (1e-4 * 1024)  # λ = 0.1024 failures/h → MTBF 9.765625 h
    delta = 1e12 / (1e9 * 128) / 3600  # 7.8125 s write = 0.0021701 h
    delta_r = 1e12 / (2e9 * 128) / 3600  # 3.90625 s read
    R = 30 / 60
    tau = math.sqrt(2 * delta * M)  # Young: √(2·0.0021701·9.765625) = 0.20588 h
    overhead = delta / tau + (tau / 2 + R + delta_r) / M  # 0.01054 + 0.06192 = 0.07247
    assert g.mtbf_hours == pytest.approx(9.765625)
    assert g.checkpoint_write_hours == pytest.approx(delta)
    assert g.checkpoint_interval_hours == pytest.approx(tau) == pytest.approx(0.20588, rel=1e-4)
    assert g.fraction == pytest.approx(1 / (1 + overhead), rel=1e-12)
    assert g.fraction == pytest.approx(0.93243, rel=1e-4)
    assert g.expected_interruptions == pytest.approx(1000 / g.fraction / M)


def test_goodput_interval_is_capped_at_the_run_length():
    g = goodput(ideal_hours=0.1, gpus=1024, nodes=128, checkpoint_bytes=1e12, A=GOODPUT_A)
    assert g.checkpoint_interval_hours == pytest.approx(0.1)  # τ* = 0.206 h > the run


def test_the_goodput_note_writes_the_checkpoint_in_the_unit_it_reads_in():
    # a small run's note read "checkpoint 0 s every 0.00 h"
    g = goodput(ideal_hours=0.01, gpus=8, nodes=1, checkpoint_bytes=1.5e9, A=GOODPUT_A)
    assert "checkpoint 1.5 s every 36 s (Young/Daly" in g.notes[0], g.notes[0]
    g = goodput(ideal_hours=1000.0, gpus=1024, nodes=128, checkpoint_bytes=1e12, A=GOODPUT_A)
    assert "checkpoint 7.8 s every 12.4 min (Young/Daly" in g.notes[0], g.notes[0]


def test_spot_interruptions_add_to_the_failure_rate():
    g = goodput(ideal_hours=100.0, gpus=64, nodes=8, checkpoint_bytes=1e12, A=GOODPUT_A,
                interruption_rate_per_node_hour=0.05)
    # λ = 1e-4 · 64 + 0.05 · 8 = 0.4064 /h
    assert g.mtbf_hours == pytest.approx(1 / 0.4064)


def test_evaluation_and_operational_losses_come_off_the_top():
    A = dataclasses.replace(GOODPUT_A, evaluation_fraction=0.01, operational_loss_fraction=0.04)
    plain = goodput(ideal_hours=1000.0, gpus=1024, nodes=128, checkpoint_bytes=1e12,
                    A=GOODPUT_A)
    lossy = goodput(ideal_hours=1000.0, gpus=1024, nodes=128, checkpoint_bytes=1e12, A=A)
    # goodput = (1 − e − o) / (1 + overhead): 0.95 × 0.93243
    assert lossy.fraction == pytest.approx(0.95 * plain.fraction, rel=1e-12)
    assert any("evaluation 1.0%" in n and "operational losses 4.0%" in n for n in lossy.notes)


def test_no_failures_means_full_goodput():
    A = dataclasses.replace(GOODPUT_A, failure_rate_per_gpu_hour=0.0)
    g = goodput(ideal_hours=500.0, gpus=1024, nodes=128, checkpoint_bytes=1e12, A=A)
    assert g.fraction == 1.0 and g.expected_interruptions == 0.0
    assert math.isinf(g.mtbf_hours)


# ---- expert-parallel all-to-all overlap ---------------------------------------------------

def test_ep_overlap_hides_at_most_its_share_of_the_layer_compute_and_only_for_moe():
    """ep_comm_overlap o: the all-to-all per layer is raw − hidden·(1 − slowdown), hidden =
    min(raw, o·compute); 0 (PHYSICS) is the raw time, and a dense model has no all-to-all to
    hide."""
    moe = ModelScalars.of(workload("mixtral-8x7b", seq_len=4096))
    # 16 ranks of 8 GPUs over 2 nodes: ep = gcd(16, 8) = 8 experts' ranks inside one node
    base = run(moe, dp=16)
    assert base["ep_comm_s"] > 0
    slow = PHYSICS.overlap_compute_slowdown
    for o in (0.25, 0.99):
        hid = run(moe, PHYSICS.with_overrides(ep_comm_overlap=o), dp=16)
        # what was hidden, per the formula, from the two runs' own figures
        hidden = (base["ep_comm_s"] - hid["ep_comm_s"]) / (1.0 - slow)
        assert 0 < hidden <= o * hid["compute_s"] * (1 + 1e-9)
        assert hid["step_s"] < base["step_s"]
        assert hid["compute_s"] == pytest.approx(base["compute_s"])
    dense = ModelScalars.of(workload("llama2-7b", seq_len=4096))
    a, b = run(dense, dp=16), run(dense, PHYSICS.with_overrides(ep_comm_overlap=0.99), dp=16)
    assert a["ep_comm_s"] == b["ep_comm_s"] == 0 and a["step_s"] == b["step_s"]


# ---- expert parallelism: layout, all-to-all, memory --------------------------------------

def test_expert_layout_folds_over_data_parallel_ranks_then_tensor_ranks():
    from planner.model._memory import expert_layout

    def layout(tp, dp, cp, ep):
        return tuple(float(x[0]) for x in expert_layout(np.array([tp], dtype=float),
                                                      np.array([dp]), np.array([cp]),
                                                      np.array([ep])))
    # ep 8 inside 64 data-parallel ranks: experts split 8 ways (× tp 1), 64 / 8 = 8 replicas
    assert layout(1, 64, 1, 8) == (8.0, 8.0, 1.0)
    # ep 8 with tp 2 inside dp 16: the experts also run tensor-parallel: 16 shards, 2 replicas
    assert layout(2, 16, 1, 8) == (16.0, 2.0, 1.0)
    # Qwen3-235B on H100 (Megatron-Bridge): tp 2, dp 16, ep 32 → ep folds over the 2 tensor
    # ranks (32 / gcd(32, 16) = 2); experts run with tp 2 / 2 = 1: 32 shards, 1 replica
    assert layout(2, 16, 1, 32) == (32.0, 1.0, 2.0)


def _moe(E=8, k=2, **kw):
    arch, _ = preset("mixtral-8x7b")
    arch = dataclasses.replace(arch, experts=E, experts_per_token=k, **kw)
    return ModelScalars.of(Workload(arch=arch, tokens=1e12, seq_len=4096,
                                    global_batch_tokens=64 * 4096))


def test_all_to_all_inside_one_node_runs_on_nvlink():
    """Mixtral (h 4096, top-2 of 8), ep 8 on one 8-GPU node, mb 1: a token goes to k = 2 of
    the 8 ranks, 7 of 8 of them another GPU: 2·7/8 = 1.75 copies of 2·h·T = 2·4096·4096 bytes
    per all-to-all at 360 GB/s, + 10 µs; 4 all-to-alls per layer, 32 layers, 8 micro-batches
    (64 sequences / dp 8)."""
    ms = _moe()
    res = run(ms, dp=8, ep=8.0)
    one = 1.75 * 2 * 4096 * 4096 / 360e9 + 10e-6
    assert res["ep_comm_s"] == pytest.approx(8 * 32 * 4 * one, rel=1e-9)


def test_all_to_all_across_nodes_crosses_the_network_once_per_remote_node():
    """ep 16 over two 8-GPU nodes, top-2: the other node holds one of a token's two experts
    with probability 1 − (1/2)² = 0.75, and the token crosses the network once (then NVLink
    forwards it): 0.75 copies at 42.5 GB/s. NVLink carries 2·7/16 local copies plus the
    forwarded 2·(8/16)·(7/8): 1.75 copies at 360 GB/s, at the same time. The slower, + one
    network hop of 10 µs."""
    ms = _moe()
    res = run(ms, dp=16, ep=16.0)
    b = 2 * 4096 * 4096
    one = max(1.75 * b / 360e9, 0.75 * b / 42.5e9) + 10e-6
    m = 64 / 16
    assert res["ep_comm_s"] == pytest.approx(m * 32 * 4 * one, rel=1e-9)
    # a 16-GPU NVLink domain (GB200 NVL72 racks are 72) keeps it on NVLink: 2·15/16 copies
    nvl = run(ms, dp=16, ep=16.0, nvlink_domain_gpus=16.0)
    assert nvl["ep_comm_s"] == pytest.approx(
        m * 32 * 4 * (2 * 15 / 16 * b / 360e9 + 10e-6), rel=1e-9)


def test_expert_optimizer_state_shards_over_expert_replicas_only():
    """ZeRO-1 over dp 8 with ep 8: dense parameters' optimizer state is split 8 ways, each
    expert's over its 8 / 8 = 1 replica (it is already split by ep)."""
    ms = _moe()
    res = run(ms, dp=8, zero=1, ep=8.0)
    dense = ms.params_total - ms.params_experts
    expected = (dense / 8 + ms.params_experts / 8 / 1) * 12 / GIB
    assert res["memory_optimizer_gib"] == pytest.approx(expected, rel=1e-12)


def test_a_non_interleaved_pipeline_keeps_p_micro_batches_in_flight():
    """1F1B's first stage holds p micro-batches (Narayanan et al. 2021); only interleaving
    (v > 1) adds (p − 1)/(p·v) of that (Korthikanti et al. 2022 §4.2.3)."""
    ms = ModelScalars.of(workload("llama2-7b", seq_len=4096))
    plain = run(ms, pp=4, vp=1.0)
    inter = run(ms, pp=4, vp=2.0)
    per_stage = plain["memory_activations_gib"] / 4  # 4 micro-batches in flight
    assert inter["memory_activations_gib"] == pytest.approx(per_stage * 4 * (1 + 3 / 8))


def test_expert_parallel_degrees_stop_at_the_cluster_size():
    from planner.model._grid import expert_options

    assert expert_options(8, None, 64) == (1, 2, 4, 8)
    assert expert_options(256, None, 16) == (1, 2, 4, 8, 16)
    assert expert_options(10**9, None, 8) == (1, 2, 4, 5, 8)
    assert expert_options(256, 32, 16) == (32,)  # a pin is kept; the grid drops what cannot run
    assert expert_options(0, None, 64) == (1,)
