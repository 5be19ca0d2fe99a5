"""Memory per GPU, and the plan quantities time and memory share (virtual pipeline stages,
expert parallelism, parameters per GPU).

Memory per GPU (bytes):
    static = params/(t·p[·ep for experts]) · (2 weights + g grads + optimizer), sharded /n
             (g = 2, or grad_reduce_bytes on megatron: its gradients live in that dtype)
             by ZeRO stage (1: optimizer, 2: + grads, 3: + weights)
    activations per layer per token /t (sequence parallel; flash attention keeps no s² term,
        unfused attention keeps 4·a·s bytes of scores per token unless recomputed):
        none 8h + 4ad + 4·a_kv·d + 2·m_mat·F,  selective drops the activation-function
        outputs and attention output (and unfused scores, + one layer's 4·a·s live while
        recomputed), full keeps the 2h layer input (+ one layer live);
        frameworks with eager layers (``FrameworkProfile.eager_layers``) keep 2F more for a
        gated FFN's activation output (none only) and 4·(a − a_kv)·d for K/V repeated over
        the query groups (none and selective);
        × L/p layers × min(p, m) micro-batches in flight (1F1B) + logits T·V/t·6 bytes
(Korthikanti et al. 2022, arXiv:2205.05198, Table 2, adapted to gated FFNs, GQA and
FlashAttention.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._assumptions import Assumptions
from ._scalars import ModelScalars
from ._software import profile

if TYPE_CHECKING:
    import numpy as np

OPTIMIZER_STATE_BYTES = {"adamw": 12, "sgd": 8, "adafactor": 4}  # fp32 master + moments


def virtual_stages(layers: int, pp: np.ndarray, interleaved: bool = True) -> np.ndarray:
    """The largest of 4, 2, 1 virtual stages a pipeline of ``pp`` stages over ``layers``
    layers can interleave (``interleaving_fits``); 1 without a pipeline."""
    import numpy as np

    pp = np.asarray(pp)
    v = np.where(interleaving_fits(layers, pp, 4), 4.0,
                 np.where(interleaving_fits(layers, pp, 2), 2.0, 1.0))
    return np.where((pp > 1) & interleaved, v, 1.0)


def interleaving_fits(layers: int, pp, vp):
    """Whether ``vp`` virtual stages fit: ``vp`` divides a stage's ⌈layers/pp⌉ layers (the
    slowest stage, the one the model times) and every one of the pp·vp chunks holds a layer,
    the embedding or the loss (Megatron-Core's account_for_embedding_in_pipeline_split and
    account_for_loss_in_pipeline_split give those a chunk each, as NeMo's 126-layer 405B
    recipe does): pp·vp ≤ layers + 2 — GPT-2's 12 layers cannot run as 8 stages × 2 chunks.
    Arrays broadcast."""
    import numpy as np

    pp, vp = np.asarray(pp, dtype=np.float64), np.asarray(vp, dtype=np.float64)
    return (np.ceil(layers / pp) % vp == 0) & (pp * vp <= layers + 2)


def expert_parallel(ms: ModelScalars, dp: np.ndarray) -> np.ndarray:
    """The default expert-parallel degree where none is given: the largest common divisor of
    dp and the expert count (experts spread over data-parallel ranks)."""
    import numpy as np

    if not ms.E:
        return np.ones_like(dp)
    return np.gcd(dp.astype(np.int64), ms.E).astype(np.float64)


def expert_layout(tp, dp, cp, ep):
    """(expert shards, expert replicas, tensor ranks folded) of an expert-parallel degree.

    Megatron-Core's MoE parallel folding: the ep ranks of an expert group are data/context-
    parallel ranks first and, when ep exceeds gcd(ep, dp·cp), also k = ep / gcd(ep, dp·cp)
    tensor-parallel ranks, whose experts then run with tensor parallelism tp/k. A stage's
    routed experts are split over ep·tp/k GPUs (shards) and held by tp·dp·cp / shards
    replicas, the expert-data-parallel group their gradients and ZeRO shards span."""
    import numpy as np

    ep = np.asarray(ep, dtype=np.float64)
    n = np.asarray(dp, dtype=np.float64) * np.asarray(cp, dtype=np.float64)
    fold = ep / np.gcd(ep.astype(np.int64), n.astype(np.int64))
    shards = ep * tp / fold
    return shards, tp * n / shards, fold


def params_per_gpu(ms: ModelScalars, tp, pp, shards=None):
    """(dense, routed-expert) parameters one GPU holds: dense ones split by tp·pp, a stage's
    routed experts by its expert ``shards`` (``expert_layout``; none without experts)."""
    dense = (ms.params_total - ms.params_experts) / pp / tp
    return dense, (0.0 if shards is None else ms.params_experts / (pp * shards))


def activation_factor(measured: dict | None, mb, rc):
    """Per entry: a workload probe's measured / modelled activations where the calibration has
    one for the entry's (micro-batch, recompute code) — ``measured`` maps those to the ratio
    (``_estimate.workload_memory_ratios``) — else 1."""
    import numpy as np

    if not measured:
        return 1.0
    mb, rc = np.asarray(mb, dtype=np.float64), np.asarray(rc, dtype=np.float64)
    factor = np.ones(np.broadcast(mb, rc).shape)
    for (m_mb, m_rc), ratio in measured.items():
        factor = np.where((mb == m_mb) & (rc == m_rc), ratio, factor)
    return factor


def memory_terms(ms: ModelScalars, A: Assumptions, *, tp, pp, dp, zero, mb, rc, memory_gib,
                 cp=None, vp=None, gbs=None, ep=None,
                 measured: dict | None = None) -> dict[str, np.ndarray]:
    """Memory per GPU (GiB) and whether it fits; cheap, so the search runs it first."""
    return memory_by_recompute(ms, A, tp=tp, pp=pp, dp=dp, zero=zero, mb=mb, rcs=(rc,),
                               memory_gib=memory_gib, cp=cp, vp=vp, gbs=gbs, ep=ep,
                               measured=measured)[0]


def memory_by_recompute(ms: ModelScalars, A: Assumptions, *, tp, pp, dp, zero, mb, rcs,
                        memory_gib, cp=None, vp=None, gbs=None, ep=None,
                        measured: dict | None = None) -> list[dict]:
    """``memory_terms`` for each recomputation in ``rcs`` (a code, or codes per entry): only
    the activations depend on it, so the rest is computed once (the search's pruning asks
    for every choice). ``measured``: the workload probe's activation ratios by (micro-batch,
    recompute code), which scale the activations of the entries they were measured for."""
    import numpy as np

    f = np.float64
    tp, pp, dp, mb, zero = (np.asarray(x, dtype=f) for x in (tp, pp, dp, mb, zero))
    cp = np.ones_like(tp) if cp is None else np.asarray(cp, dtype=f)
    gbs = np.full_like(tp, ms.gbs_seqs) if gbs is None else np.asarray(gbs, dtype=f)
    h, d, a, a_kv, V = ms.h, ms.d, ms.a, ms.a_kv, ms.V
    T = mb * ms.s / cp
    n = dp * cp
    m = np.ceil(gbs / (dp * mb))
    layers_stage = np.ceil(ms.L / pp)
    ep = expert_parallel(ms, dp) if ep is None else np.asarray(ep, dtype=f)
    if ms.E:
        # dense parameters shard over the n data/context-parallel copies, routed experts over
        # their own replicas (expert data parallelism)
        shards, replicas, _ = expert_layout(tp, dp, cp, ep)
        dense, expert = params_per_gpu(ms, tp, pp, shards)
        groups = ((dense, n), (expert, replicas))
    else:
        groups = ((params_per_gpu(ms, tp, pp)[0], n),)
    weights = grads = optim = 0.0
    grad_bytes = A.grad_reduce_bytes if profile(ms.framework).grads_in_reduce_dtype else 2.0
    for params, copies in groups:
        trainable = params * ms.trainable_fraction
        # bf16 weights, and LoRA adapters beside them (ms.adapter_fraction: 0 without)
        weights = weights + (params * 2.0 * (1.0 + ms.adapter_fraction)) / np.where(
            zero >= 3, copies, 1.0)
        grads = grads + trainable * grad_bytes / np.where(zero >= 2, copies, 1.0)
        optim = optim + trainable * OPTIMIZER_STATE_BYTES[ms.optimizer] / np.where(
            zero >= 1, copies, 1.0)
    per_tok_none = 8 * h + 4 * a * d + 4 * a_kv * d + 2 * ms.m_mat * ms.F_act
    per_tok_sel = 8 * h + 2 * a * d + 4 * a_kv * d + 2 * ms.F_act
    if profile(ms.framework).eager_layers:
        repeated_kv = 4 * (a - a_kv) * d  # K and V at a heads instead of a_kv, bf16
        per_tok_none = per_tok_none + repeated_kv + (2 * ms.F_act if ms.m_mat == 3 else 0)
        per_tok_sel = per_tok_sel + repeated_kv
    # unfused attention keeps QKᵀ scores and the softmax output, bf16; selective recomputation
    # drops them, but the layer whose attention core backward recomputes holds them again
    scores = 0.0 if ms.flash else 4 * a * ms.s
    per_tok_none = per_tok_none + scores
    # 1F1B keeps p micro-batches in flight on the first stage; interleaving (v > 1 virtual
    # stages) adds (p−1)/(p·v) of that (Korthikanti et al. 2022 §4.2.3); without it, none.
    vpp = virtual_stages(ms.L, pp) if vp is None else np.asarray(vp, dtype=f)
    extra = np.where(vpp > 1, (pp - 1) / (pp * vpp), 0.0)
    in_flight = np.minimum(pp * (1 + extra), np.maximum(m, 1.0))
    logits = T * V / tp * (A.logits_bytes + 2)
    gib = 2.0 ** 30
    capacity = np.asarray(memory_gib, dtype=f) * A.usable_memory_fraction
    weights_gib, grads_gib, optim_gib, logits_gib = (weights / gib, grads / gib, optim / gib,
                                                     logits / gib)
    out = []
    for rc in rcs:
        rc = np.asarray(rc, dtype=f)
        per_tok = np.where(rc == 0, per_tok_none, np.where(rc == 1, per_tok_sel, 2 * h))
        # a measurement scales what each layer keeps; under full recomputation the layer
        # recomputed in backward keeps the "none" count, which that measurement did not see
        act = layers_stage * per_tok * T / tp * in_flight * activation_factor(measured, mb, rc)
        # the layer recomputed: all of it (full), its attention scores (selective, unfused)
        act = act + np.where(rc == 2, per_tok_none, np.where(rc == 1, scores, 0.0)) * T / tp
        total_gib = (weights + grads + optim + act + logits) / gib + A.runtime_reserve_gib
        out.append({"memory_gib": total_gib, "memory_weights_gib": weights_gib,
                    "memory_grads_gib": grads_gib, "memory_optimizer_gib": optim_gib,
                    "memory_activations_gib": act / gib, "memory_logits_gib": logits_gib,
                    "fits": total_gib <= capacity})
    return out
