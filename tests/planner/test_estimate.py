"""`estimate` end to end: the plan it picks, what it says when nothing fits, and how
calibration, sequence length, fabric and instance types move the answer."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest

from planner import (
    Assumptions,
    Calibration,
    Cluster,
    HardwareError,
    Measurement,
    NoFitError,
    PlanPins,
    Workload,
    WorkloadSpec,
    build_cluster,
    build_workload,
    cluster_for_instance,
    estimate,
    preset,
    reference_cluster,
)
from planner.model import ModelScalars, evaluate

GBS = 4 * 1024 * 1024  # Llama 2's 4M-token batch


def workload(name: str, *, tokens: float = 1e12, seq_len: int | None = None, **kw) -> Workload:
    arch, seq = preset(name)
    return Workload(arch=arch, tokens=tokens, seq_len=seq_len or seq, global_batch_tokens=GBS,
                    **kw)


def test_llama3_8b_on_64_h100_is_a_full_estimate(catalog):
    est = estimate(workload("llama3-8b", tokens=15e12), reference_cluster(catalog, "H100", 64))
    p = est.plan
    assert p.tp * p.pp * p.dp == 64
    assert 0.3 < est.mfu < 0.9
    assert est.memory["total_gib"] <= 80 * 0.95
    assert est.steps * p.micro_batches * p.dp * p.micro_batch * 8192 >= 15e12
    assert est.wall_clock_hours == pytest.approx(est.ideal_hours / est.goodput.fraction)
    assert est.gpu_hours == pytest.approx(est.wall_clock_hours * 64)
    assert est.model_tflops_per_gpu == pytest.approx(est.mfu * 989.5)
    assert any("published MAMF for hopper" in a for a in est.assumptions)


def test_llama2_70b_does_not_fit_on_one_h100_node_and_says_what_would(catalog):
    with pytest.raises(NoFitError) as info:
        estimate(workload("llama2-70b"), reference_cluster(catalog, "H100", 8))
    message = str(info.value)
    assert "do not fit on 8x H100-SXM5-80GB" in message
    assert "The smallest setup that fits is 2 nodes (16 GPUs)" in message
    assert "To fix" in message
    # and the setup it names does fit
    est = estimate(workload("llama2-70b"), reference_cluster(catalog, "H100", 16))
    assert est.memory["total_gib"] <= 80 * 0.95


def test_the_smallest_setup_named_is_the_smallest_not_the_next_power_of_two(catalog):
    """Only 2, 4, 8, 16 … nodes were tried: llama3-8b on g5.xlarge (one A10G each) was told
    16 nodes where 11 fit."""
    it = catalog.instance_type("g5.xlarge", "aws")
    with pytest.raises(NoFitError, match=r"The smallest setup that fits is (\d+) nodes") as info:
        estimate(workload("llama3-8b"), cluster_for_instance(catalog, it, 4))
    n = int(re.search(r"fits is (\d+) nodes", str(info.value))[1])
    estimate(workload("llama3-8b"), cluster_for_instance(catalog, it, n))  # fits
    with pytest.raises(NoFitError):
        estimate(workload("llama3-8b"), cluster_for_instance(catalog, it, n - 1))


def test_the_fixes_offered_are_only_those_that_can_still_help(catalog):
    """The most frugal plan already recomputes all it may and runs micro-batch 1: "--recompute
    full, a smaller --micro-batch, or fewer pins" was offered with none of them given."""
    cluster = reference_cluster(catalog, "H100", 8)
    with pytest.raises(NoFitError) as info:
        estimate(workload("llama2-70b"), cluster)
    assert str(info.value).endswith("To fix: use more GPUs (`gpus`) or a GPU with more "
                                    "memory"), str(info.value)
    pinned = workload("llama2-70b", recompute="selective", pins=PlanPins(micro_batch=2))
    with pytest.raises(NoFitError) as info:
        estimate(pinned, cluster)
    assert str(info.value).endswith("a GPU with more memory, `recompute` full, a smaller "
                                    "`micro_batch` or fewer pins"), str(info.value)


def test_no_setup_up_to_the_search_limit_is_said_not_left_out(catalog):
    # 405B on one A100-40GB of an 8-GPU node: the message named no setup and gave no reason;
    # then it searched nodes of one GPU (which never fit); now whole nodes, as `gpus` takes them
    with pytest.raises(NoFitError) as info:
        estimate(workload("llama3-405b"), reference_cluster(catalog, "A100-40GB", 1))
    # (25 nodes before context parallelism was searched at 8,192 tokens: cp2 halves activations)
    assert "The smallest setup that fits is 24 nodes (192 GPUs) with tp8 pp1 cp2" in str(info.value)
    assert "; pass `gpus` 192. To fix: use more GPUs (`gpus`)" in str(info.value)


def test_a_single_node_instance_that_cannot_grow_names_no_larger_setup(catalog):
    it = catalog.instance_type("a3-highgpu-4g", "gcp")  # 4x H100, no inter-node network
    with pytest.raises(NoFitError) as info:
        estimate(workload("llama2-70b"), cluster_for_instance(catalog, it, 1))
    assert "smallest setup" not in str(info.value) and "To fix" in str(info.value)


def test_measured_matmul_throughput_replaces_the_datasheet_fraction(catalog):
    w, cluster = workload("llama3-8b"), reference_cluster(catalog, "H100", 64)
    cal = Calibration(matmul_tflops={("H100-SXM5-80GB", "bf16"): Measurement(500.0, "test")})
    plain = estimate(w, cluster)
    measured = estimate(w, cluster, calibration=cal)
    assert ("matmul bf16: measured 500.0 TFLOP/s instead of the datasheet default 792.6 (test)"
            in measured.calibrated)
    assert not any("published MAMF" in a for a in measured.assumptions)
    # 500 TFLOP/s is below the default 989.5 × 0.801 = 792.6: slower, lower MFU
    assert measured.step_time_s > plain.step_time_s
    assert measured.mfu < plain.mfu
    # a measurement for another accelerator changes nothing
    other = Calibration(matmul_tflops={("A100-SXM4-80GB", "bf16"): Measurement(500.0, "t")})
    assert estimate(w, cluster, calibration=other).step_time_s == plain.step_time_s


def test_longer_sequences_raise_the_attention_share():
    # Fixed plan (tp=1, pp=1, dp=8, mb=1, no recompute) on H100 numbers: attention's share of
    # compute is 1 − compute(attention free)/compute(real attention).
    def compute_s(seq: int, attention_tflops: float) -> float:
        ms = ModelScalars.of(dataclasses.replace(workload("llama3-8b"), seq_len=seq))
        one = {k: np.array([v], dtype=float) for k, v in dict(
            gpus_per_node=8, matmul_tflops=792.6, attention_tflops=attention_tflops,
            hbm_gb_per_s=3350.0, memory_gib=80.0, intra_busbw_gb_per_s=360.0,
            nic_gb_per_s_per_gpu=42.5).items()}
        res = evaluate(ms, Assumptions(), tp=np.array([1]), pp=np.array([1]),
                       dp=np.array([8]), zero=np.array([1]), mb=np.array([1]),
                       rc=np.array([0]), **one)
        return float(res["compute_s"][0] / res["micro_batches"][0] / seq)  # per token

    shares = [1 - compute_s(s, 1e12) / compute_s(s, 989.5) for s in (1024, 4096, 16384)]
    assert 0 < shares[0] < shares[1] < shares[2] < 1
    # and the MFU flop count grows the same way: 12·L·s·a·d over the 6·N term
    counts = [ModelScalars.of(dataclasses.replace(workload("llama3-8b"), seq_len=s))
              .model_flops_per_token() for s in (1024, 4096, 16384)]
    assert counts[0] < counts[1] < counts[2]


def test_longer_sequences_make_each_token_cost_more_end_to_end(catalog):
    cluster = reference_cluster(catalog, "H100", 64)
    rates = [estimate(workload("llama3-8b", seq_len=s), cluster).tokens_per_s
             for s in (1024, 4096, 16384)]
    assert rates[0] > rates[1] > rates[2]


def hand_built(catalog, fabric: str, *, gbps: float = 400.0, nodes: int = 8) -> Cluster:
    return Cluster(accelerator=catalog.accelerator("H100"), gpus_per_node=8, nodes=nodes,
                   topology="nvswitch", intra_node_gb_per_s_per_gpu=900.0,
                   inter_node_gbps=gbps, fabric=fabric)


@pytest.mark.parametrize("name", ["llama3-8b", "llama3-70b", "mixtral-8x7b"])
def test_a_slower_fabric_never_makes_training_faster(catalog, name):
    w = workload(name)
    ib = estimate(w, hand_built(catalog, "infiniband"))  # 400 Gb/s × 0.85
    eth = estimate(w, hand_built(catalog, "ethernet"))  # 400 Gb/s × 0.40
    assert eth.step_time_s >= ib.step_time_s
    assert eth.breakdown["dp_comm_s"] >= ib.breakdown["dp_comm_s"] or eth.plan != ib.plan
    assert any("ethernet × 0.4" in a for a in eth.assumptions)


def test_more_inter_node_bandwidth_never_makes_training_slower(catalog):
    w = workload("llama3-8b")
    times = [estimate(w, hand_built(catalog, "infiniband", gbps=g)).step_time_s
             for g in (100, 400, 1600, 3200)]
    assert times == sorted(times, reverse=True)


def test_an_instance_cluster_uses_the_instance_and_its_memory(catalog):
    cluster, memory = build_cluster(catalog, instance="p5.48xlarge", nodes=4)
    assert (cluster.gpus, cluster.fabric, memory) == (32, "efa", 80.0)
    est = estimate(workload("llama3-8b"), cluster, memory_gib=memory)
    p = est.plan
    assert p.tp * p.pp * p.dp == 32 and p.tp <= 8
    assert est.as_dict()["hardware"]["instance_type"] == "p5.48xlarge"
    assert any("aws p5.48xlarge" in a for a in est.assumptions)
    assert any("efa × 0.75" in a for a in est.assumptions)


def test_an_instance_without_inter_node_network_cannot_span_nodes(catalog):
    it = catalog.instance_type("g6e.12xlarge", "aws")  # 4x L40S, no EFA
    with pytest.raises(HardwareError, match="cannot be used across nodes") as info:
        cluster_for_instance(catalog, it, 2)
    assert "g6e.12xlarge" in str(info.value) and "To fix" in str(info.value)
    assert cluster_for_instance(catalog, it, 1).gpus == 4


def test_build_workload_and_cluster_from_user_options(catalog):
    w = build_workload(WorkloadSpec(model="llama3-8b", tokens="15T"))
    # no --global-batch-tokens: GPT-3's 2M tokens for a 6.7–13B model (256 sequences of 8,192),
    # at least one sequence per 8 GPUs
    assert (w.tokens, w.seq_len, w.global_batch_tokens) == (15e12, 8192, None)
    assert w.sequences_per_step(64) == 256
    assert w.sequences_per_step(16384) == 2048
    cluster, memory = build_cluster(catalog, gpu="H100", gpus=16)
    assert (cluster.nodes, cluster.gpus_per_node, memory) == (2, 8, None)
    with pytest.raises(HardwareError, match="give either"):
        build_cluster(catalog, gpu="H100", instance="p5.48xlarge")
    with pytest.raises(HardwareError, match="whole number of 8-GPU"):
        reference_cluster(catalog, "H100", 12)


def test_estimate_does_not_mutate_its_inputs(catalog):
    w, cluster = workload("llama3-8b"), reference_cluster(catalog, "H100", 16)
    A = Assumptions()
    before = (dataclasses.asdict(w), repr(cluster), dict(A.matmul_fraction))
    estimate(w, cluster, assumptions=A)
    assert (dataclasses.asdict(w), repr(cluster), dict(A.matmul_fraction)) == before


def test_lora_needs_less_memory_and_time_than_full_finetuning(catalog):
    cluster = reference_cluster(catalog, "H100", 8)
    full = estimate(workload("llama3-8b"), cluster)
    lora = estimate(workload("llama3-8b", finetune="lora"), cluster)
    assert lora.step_time_s < full.step_time_s
    assert lora.memory["optimizer_gib"] < full.memory["optimizer_gib"]


def test_the_lora_rank_is_stated_in_the_assumptions_and_the_json(catalog):
    # rank 16 and rank 256 differ by GiBs per GPU, and neither output named the rank
    cluster = reference_cluster(catalog, "H100", 8)
    for rank in (16, 256):
        est = estimate(workload("llama3-8b", finetune="lora", lora_rank=rank), cluster)
        assert any(f"4·N for the frozen weights + 6·N_a for LoRA rank {rank}'s adapters of "
                   in a for a in est.assumptions)
        assert est.as_dict()["workload"]["lora_rank"] == rank
    full = estimate(workload("llama3-8b", finetune="full"), cluster)
    assert full.as_dict()["workload"]["lora_rank"] is None  # no adapters: no rank
    assert not any("LoRA" in a for a in full.assumptions)


def test_mfu_stays_below_one_for_a_long_context_small_model(catalog):
    arch, _ = preset("gpt2")
    w = Workload(arch=arch, tokens=1e12, seq_len=131072, global_batch_tokens=64 * 131072)
    est = estimate(w, reference_cluster(catalog, "H100", 8))  # MFU 1.056 today
    assert est.mfu < 1


def test_zero_gpus_is_an_error_not_the_default(catalog):
    with pytest.raises(HardwareError, match="between 1 and"):
        build_cluster(catalog, gpu="H100", gpus=0)


def test_zero_sequence_length_is_an_error_not_the_default():
    from planner import WorkloadError

    with pytest.raises(WorkloadError, match="`seq_len`"):
        build_workload(WorkloadSpec(model="llama3-8b", seq_len=0))


@pytest.mark.parametrize("pins", [{"tp": 1, "zero": 3}, {"tp": 2}, {"tp": 4}, {"zero": 1}])
def test_the_chosen_plan_trains_no_slower_than_a_pinned_one(catalog, pins):
    """Ranked by step time, tp2·dp16 (336 sequences per step, 700.8 h) beat tp1·dp32 zero3
    (352 sequences, 683.3 h) for a batch of 334: a pin made the answer faster. Ranked by time
    per sequence trained, no pinned plan that keeps the batch within 1.1× trains faster."""
    from planner import PlanPins

    spec = WorkloadSpec(model="llama3-70b", tokens="100B")
    cluster = reference_cluster(catalog, "H200", 32)
    free = estimate(build_workload(spec), cluster)
    try:
        pinned = estimate(dataclasses.replace(build_workload(spec), pins=PlanPins(**pins)),
                          cluster)
    except NoFitError:
        return
    if pinned.tokens_per_step > 1.1 * free.workload.sequences_per_step(32) * 8192:
        return  # a larger batch than the recipe: not comparable
    assert free.ideal_hours <= pinned.ideal_hours * (1 + 1e-9), (free.plan, pinned.plan)


def test_estimate_says_why_its_expected_time_is_outside_its_range(catalog):
    """`plan` warned "range: the expected … is below P10" where interruptions come every
    minute; `estimate`, with the same P10–P90 (``calendar_range``), said nothing."""
    from planner.model import Assumptions

    A = Assumptions().with_overrides(failure_rate_per_gpu_hour=1)
    est = estimate(workload("llama3-8b"), reference_cluster(catalog, "H100", 64), assumptions=A)
    assert est.wall_clock.p50 < est.wall_clock.p10
    (why,) = [w for w in est.warnings if w.startswith("range: the expected")]
    assert "is below P10" in why and "`failure_rate_per_gpu_hour`" in why
    usual = estimate(workload("llama3-8b"), reference_cluster(catalog, "H100", 64))
    assert not any(w.startswith("range:") for w in usual.warnings)


def test_a_goodput_lost_to_checkpoint_writes_says_so_not_interruptions(catalog):
    """100 tokens on 64 GPUs: goodput 50% because one 7 s checkpoint write is charged on a
    3 s run; the warning said "an interruption comes every 295 h … so most of the calendar
    time is lost; fewer GPUs would lose less" with 0.01 interruptions expected."""
    tiny = estimate(build_workload(WorkloadSpec(model="llama3-8b", tokens="100")),
                    reference_cluster(catalog, "H100", 64))
    assert tiny.goodput.fraction < 0.5 and tiny.goodput.expected_interruptions < 0.01
    (said,) = [w for w in tiny.warnings if w.startswith("goodput ")]
    assert "writing checkpoints adds" in said and "interruption" not in said
    assert "hardly longer than one write" in said


def test_a_goodput_below_half_is_warned_about(catalog):
    """131,072 H100s: an interruption every 9 min against a 19 min restart, goodput 31%, and
    no warning — the expected time was right, but nothing said most of it is lost."""
    huge = estimate(workload("llama3-70b"), reference_cluster(catalog, "H100", 131072))
    assert huge.goodput.fraction < 0.5
    (said,) = [w for w in huge.warnings if w.startswith("goodput ")]
    assert f"goodput {huge.goodput.fraction:.0%}: on 131,072 GPUs an interruption comes every" \
        in said and "fewer GPUs would lose less" in said
    usual = estimate(workload("llama3-70b"), reference_cluster(catalog, "H100", 1024))
    assert usual.goodput.fraction > 0.5 and not any(w.startswith("goodput ")
                                                    for w in usual.warnings)


def test_a_gpu_without_flash_kernels_says_the_flash_rate_is_a_stand_in(catalog):
    """V100 (Volta) runs no FlashAttention kernel, yet "flash" was timed at A100's
    FlashAttention-2 share without a word (52% MFU for llama3-8b, where Megatron-LM reached
    30% of V100 peak)."""
    volta = estimate(workload("llama3-8b", precision="fp16"),
                     reference_cluster(catalog, "V100-SXM2-32GB", 8))
    (note,) = [n for n in volta.assumptions if n.startswith("attention kernel")]
    assert "V100-SXM2-32GB has no FlashAttention kernel" in note and "`attention` unfused" in note
    ampere = estimate(workload("llama3-8b"), reference_cluster(catalog, "A100-SXM4-80GB", 8))
    assert not any("no FlashAttention kernel" in n for n in ampere.assumptions)
