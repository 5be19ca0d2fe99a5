"""Properties every estimate must have, over random valid workloads and reference clusters.

A workload is a preset or a shape inferred from a parameter count (dense 100M–200B, or MoE
1B–200B with 30–80% active), with random
training tokens, sequence length (512–8192) and global batch; a cluster is a reference node of
H100, A100-80GB, H200 or MI300X scaled to a multiple of 8 GPUs.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from catalog import load_catalog
from planner import (
    NoFitError,
    Workload,
    estimate,
    infer_architecture,
    preset,
    reference_cluster,
)
from planner.model import Assumptions

GPUS = ("H100", "A100-80GB", "H200", "MI300X")
PRESETS = ("gpt2", "gpt2-xl", "llama2-7b", "llama2-13b", "llama3-8b", "mistral-7b",
           "mixtral-8x7b", "qwen2.5-7b", "llama2-70b")
FAST = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


@st.composite
def workloads(draw) -> Workload:
    source = draw(st.sampled_from(("preset", "dense", "moe")))
    if source == "preset":
        arch, _ = preset(draw(st.sampled_from(PRESETS)))
    elif source == "dense":
        arch, _ = infer_architecture(draw(st.floats(min_value=100e6, max_value=200e9)))
    else:  # 8 experts, top-2: the active share must be at least 2/8
        total = draw(st.floats(min_value=1e9, max_value=200e9))
        arch, _ = infer_architecture(total, total * draw(st.floats(0.3, 0.8)))
    seq = draw(st.sampled_from((512, 1024, 2048, 4096, 8192)))
    gbs = seq * draw(st.sampled_from((64, 256, 512, 1024, 2048)))
    tokens = draw(st.floats(min_value=1e9, max_value=2e13))
    return Workload(arch=arch, tokens=tokens, seq_len=seq, global_batch_tokens=gbs,
                    optimizer=draw(st.sampled_from(("adamw", "adamw", "sgd", "adafactor"))),
                    recompute=draw(st.sampled_from(("auto", "auto", "none", "full"))))


clusters = st.tuples(st.sampled_from(GPUS), st.sampled_from((8, 16, 32, 64, 128, 256)))


def estimate_or_none(w, gpu, gpus, **kw):
    """The estimate, or None when the model honestly says no plan fits."""
    try:
        return estimate(w, reference_cluster(load_catalog(), gpu, gpus), **kw)
    except NoFitError as exc:
        assert "To fix" in str(exc)
        return None


@FAST
@given(w=workloads(), hw=clusters)
def test_every_returned_plan_fits_in_memory(w, hw):
    est = estimate_or_none(w, *hw)
    assume(est is not None)
    capacity = est.cluster.accelerator.memory_gib * Assumptions().usable_memory_fraction
    assert est.memory["total_gib"] <= capacity
    parts = ("weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib",
             "runtime_reserve_gib")
    assert sum(est.memory[k] for k in parts) == pytest.approx(est.memory["total_gib"],
                                                              rel=1e-9)


@FAST
@given(w=workloads(), hw=clusters)
def test_mfu_is_a_fraction(w, hw):
    est = estimate_or_none(w, *hw)
    assume(est is not None)
    assert 0 < est.mfu < 1


@FAST
@given(w=workloads(), hw=clusters, more=st.floats(min_value=1.0, max_value=100.0))
def test_more_tokens_never_take_less_time(w, hw, more):
    est = estimate_or_none(w, *hw)
    assume(est is not None)
    longer = estimate(w.with_tokens(w.tokens * more), est.cluster)
    assert longer.plan == est.plan  # the plan depends on the step, not on the run length
    assert longer.wall_clock_hours >= est.wall_clock_hours
    assert longer.gpu_hours >= est.gpu_hours


@FAST
@given(w=workloads(), hw=clusters)
def test_breakdown_adds_up_to_the_step_time(w, hw):
    est = estimate_or_none(w, *hw)
    assume(est is not None)
    assert all(v >= 0 for v in est.breakdown.values())
    assert sum(est.breakdown.values()) == pytest.approx(est.step_time_s, rel=1e-9)


@FAST
@given(w=workloads(), hw=clusters)
def test_the_plan_uses_every_gpu_and_keeps_tensor_parallel_in_a_node(w, hw):
    est = estimate_or_none(w, *hw)
    assume(est is not None)
    p, c = est.plan, est.cluster
    assert p.tp * p.pp * p.cp * p.dp == c.gpus == hw[1]
    assert p.tp <= c.gpus_per_node
    assert w.arch.heads % p.tp == 0
    assert p.zero_stage == 0 or p.dp > 1
    assert p.micro_batches * p.dp * p.micro_batch >= w.sequences_per_step(c.gpus)


@settings(max_examples=50, deadline=None)
@given(w=workloads(), gpu=st.sampled_from(GPUS), nodes=st.sampled_from((2, 4, 8, 16)))
def test_a_slower_network_never_makes_training_faster(w, gpu, nodes):
    fast = estimate_or_none(w, gpu, 8 * nodes)
    assume(fast is not None)
    from dataclasses import replace

    slow_cluster = replace(fast.cluster, inter_node_gbps=fast.cluster.inter_node_gbps / 4)
    slow = estimate(w, slow_cluster)
    assert slow.step_time_s >= fast.step_time_s * (1 - 1e-12)
