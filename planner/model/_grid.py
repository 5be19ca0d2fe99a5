"""The plan grid: every (tp, pp, cp, ep, zero, micro-batch, recompute) a framework can run on
a cluster, pruned by memory before it is timed, and the vectorised model run over it.

Only what the workload's framework profile can run and only the degrees the user did not pin
are enumerated; ``prune`` keeps, per row, the least recomputation that fits (more is never
faster); ``run_model`` times every remaining row with ``_perf.evaluate``; ``best_index`` picks
the fastest plan that fits (ties: less memory).
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

from ._assumptions import Assumptions
from ._inputs import ClusterInputs
from ._memory import interleaving_fits, memory_by_recompute, memory_terms, virtual_stages
from ._perf import RECOMPUTE_CODES, evaluate
from ._scalars import ModelScalars
from ._software import PROFILES
from ._workload import GPUS_PER_SEQUENCE, Workload

if TYPE_CHECKING:
    import numpy as np

TP_CHOICES = (1, 2, 4, 8, 16)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MB_CHOICES = (1, 2, 4, 8, 16)
# Below 2,048-token sequences the micro-batch doubles on, up to 16 × 2,048 tokens of sequences
# (at most MB_MOST): at 128 tokens 16 sequences are 2,048 tokens a micro-batch, and 128-token
# runs were slower per token than 512-token ones (a pinned micro-batch of 64 was faster).
MB_MOST_TOKENS = 16 * 2048
MB_MOST = 1024
# … and is chosen only where it saves more than this share of the time: it holds several times
# the activations, and a 0.02% gain took gpt2-medium from 8.5 to 37.5 GiB a GPU (ranking only)
MB_BEYOND_GAIN = 0.02
# Context parallelism is searched from 8,192-token sequences (each GPU keeps ≥ 4,096 tokens of
# a sequence): below that, ring exchanges cost more than the activation memory they save. At
# 8,192 it pays where activations force recomputation or pipeline bubbles — NeMo's Llama 3 8B
# and 70B recipes run CP 2 there (nemo/collections/llm/recipes/llama3_{8b,70b}.py), and from
# 16,384 only, 70B on 64 L40S was timed slower at 8,192 tokens than at 16,384 (1,898 h against
# 1,773 h; 1,658 h with CP 4).
CP_CHOICES = (1, 2, 4, 8, 16)
CP_SEARCH_MIN_TOKENS = 4096
CP_SEARCH_MIN_SEQ = 8192


def _choices(pinned: int | None, options: tuple[int, ...]) -> tuple[int, ...]:
    return (pinned,) if pinned is not None else options


def mb_options(seq_len: int) -> tuple[int, ...]:
    """The micro-batches searched for ``seq_len``-token sequences: MB_CHOICES, and doublings
    while a micro-batch stays within MB_MOST_TOKENS tokens and MB_MOST sequences."""
    out = list(MB_CHOICES)
    while out[-1] * 2 * seq_len <= MB_MOST_TOKENS and out[-1] * 2 <= MB_MOST:
        out.append(out[-1] * 2)
    return tuple(out)


def _cp_options(ms: ModelScalars, profile) -> tuple[int, ...]:
    if not profile.context_parallel or ms.s < CP_SEARCH_MIN_SEQ:
        return (1,)
    return tuple(c for c in CP_CHOICES if ms.s // c >= CP_SEARCH_MIN_TOKENS)


@functools.lru_cache(maxsize=64)
def _base_grid(tp_domain: int, heads: int, layers: int, seq_len: int, framework: str,
               pins: tuple, cp_options: tuple[int, ...]) -> np.ndarray:
    """(tp, pp, cp, zero, mb) rows the framework can run, before the cluster size is known.
    Tensor parallelism stays inside ``tp_domain`` GPUs joined by NVLink (a node, or a GB200
    NVL72 rack); ``plan_grid`` then keeps, per cluster size, the degrees that divide the
    domain the cluster spans, so no group straddles two domains."""
    import numpy as np

    p = PROFILES[framework]
    tp_pin, pp_pin, cp_pin, _vp, z_pin, mb_pin = pins
    tps = _choices(tp_pin, TP_CHOICES if p.tensor_parallel else (1,))
    pps = _choices(pp_pin, PP_CHOICES if p.pipeline_parallel else (1,))
    cps = _choices(cp_pin, cp_options)
    zs = _choices(z_pin, p.zero_stages)
    mbs = _choices(mb_pin, mb_options(seq_len))
    rows = [(tp, pp, cp, z, mb) for tp in tps for pp in pps for cp in cps for z in zs
            for mb in mbs
            if tp <= tp_domain and heads % tp == 0
            and pp <= layers and seq_len % cp == 0
            # a pinned stage too: with pipelines searched it takes only the depths the
            # framework combines it with (DeepSpeed's ZeRO-3 timed at pp 2, refused pinned)
            and (pp == 1 or z in p.zero_with_pipeline)]
    return np.array(rows, dtype=np.int64).reshape(-1, 5)


def expert_options(experts: int, pinned: int | None, most: int) -> tuple[int, ...]:
    """Expert-parallel degrees to search: the pinned one, else every divisor of the expert
    count up to ``most`` GPUs (1 for a dense model)."""
    if not experts:
        return (1,)
    if pinned is not None:
        return (pinned,)
    return tuple(e for e in range(1, min(experts, most) + 1) if experts % e == 0)


def _with_experts(out: dict, experts: int, pinned: int | None) -> dict:
    """Each row once per expert-parallel degree that can run it: ep divides tp·cp·dp and,
    folded first over data/context-parallel ranks, the rest of it divides tp."""
    import numpy as np

    if experts == 0 or len(out["tp"]) == 0:
        return out | {"ep": np.ones(len(out["tp"]), dtype=np.int64)}
    most = int((out["tp"] * out["dp"] * out["cp"]).max())
    opts = np.array(expert_options(experts, pinned, most), dtype=np.int64)
    rows = np.repeat(np.arange(len(out["tp"])), len(opts))
    ep = np.tile(opts, len(out["tp"]))
    tp, n = out["tp"][rows], out["dp"][rows] * out["cp"][rows]
    fold = ep // np.gcd(ep, n)
    keep = (tp % fold == 0) & (ep <= tp * n)
    return {k: v[rows][keep] for k, v in out.items()} | {"ep": ep[keep]}


def recompute_codes(recompute: str) -> tuple[int, ...]:
    """The recomputation choices to search, least recomputation first."""
    names = ("none", "selective", "full") if recompute == "auto" else (recompute,)
    return tuple(RECOMPUTE_CODES[n] for n in names)


def batch_sequences(workload: Workload, gpus: np.ndarray) -> np.ndarray:
    """Sequences per step for each cluster size (the default rule depends on it).

    The rule (``Workload.sequences_per_step``) is max(its value for one GPU, ⌈GPUs /
    GPUS_PER_SEQUENCE⌉) without a global batch or fine-tuning, and one value otherwise: taken
    so, vectorised, and checked against the rule itself at both ends of the range and where
    the two meet (a rule that changes shape falls back to asking it for every size)."""
    import numpy as np

    g = np.asarray(gpus, dtype=np.int64)
    if g.size == 0:
        return np.empty(0, dtype=np.int64)
    one = workload.sequences_per_step(1)
    if workload.global_batch_tokens is not None or workload.finetune != "none":
        out = np.full(g.shape, one, dtype=np.int64)
    else:
        out = np.maximum(one, -(-g // GPUS_PER_SEQUENCE))
    probes = {int(g.min()), int(g.max()), GPUS_PER_SEQUENCE * one, GPUS_PER_SEQUENCE * one + 1}
    if any(workload.sequences_per_step(x) != int(out[g == x][0]) for x in probes
           if (g == x).any()):
        out = np.array([workload.sequences_per_step(int(x)) for x in g], dtype=np.int64)
    return out


def plan_grid(ms: ModelScalars, gpus_per_node: int, nodes: np.ndarray, recompute: str, *,
              workload: Workload | None = None,
              nvlink_domain_gpus: int | None = None) -> dict[str, np.ndarray]:
    """Every valid (tp, pp, cp, dp, zero, mb) for each node count in ``nodes``; ``prune`` then
    picks the recomputation (from ``recompute``) per row.

    Built per (tp, pp, cp) triple so only valid combinations are ever materialised: tp·pp·cp
    must divide the GPU count and the global batch must hold dp·mb sequences. With more than
    one data-parallel rank, plain data parallelism (ZeRO-0) moves the same bytes as ZeRO-1
    with more memory and an unsharded optimizer step, so it is searched only when the
    framework has no ZeRO-1 (or when pinned); with one rank the stages are the same plan."""
    import numpy as np

    framework = workload.framework if workload else ms.framework
    pins = workload.pins if workload else None
    pin_t = (pins.tp, pins.pp, pins.cp, pins.vp, pins.zero, pins.micro_batch) if pins \
        else (None,) * 6
    profile = PROFILES[framework]
    # ``nvlink_domain_gpus`` (default: the node) bounds tensor parallelism: a GB200 NVL72 rack
    # runs tp 8 across two 4-GPU nodes over NVLink, as NeMo's GB200 recipes do
    tp_domain = max(gpus_per_node, int(nvlink_domain_gpus or gpus_per_node))
    base = _base_grid(tp_domain, ms.a, ms.L, ms.s, framework, pin_t,
                      _cp_options(ms, profile))
    n = np.asarray(nodes, dtype=np.int64)
    total = n * gpus_per_node
    gbs_n = batch_sequences(workload, total) if workload else np.full(len(n), ms.gbs_seqs)
    zero_pinned = pin_t[4] is not None
    has_z1 = 1 in profile.zero_stages
    parts = []
    # the distinct (tp, pp, cp) in order, as np.unique(axis=0) gives them (that would import
    # numpy.ma, 13 ms of an `estimate`, for a few hundred rows)
    for tp, pp, cp in sorted(set(map(tuple, base[:, :3].tolist()))):
        # tp divides the GPUs NVLink joins in this cluster: the whole cluster while it fits
        # one domain (16 GPUs of a GB200 rack run tp 16), else the domain (72: tp ≤ 8)
        ok = (total % (tp * pp * cp) == 0) & (np.minimum(total, tp_domain) % tp == 0)
        if not ok.any():
            continue
        nv, dpv, gv = n[ok], total[ok] // (tp * pp * cp), gbs_n[ok]
        rows = base[(base[:, 0] == tp) & (base[:, 1] == pp) & (base[:, 2] == cp)]
        r = np.repeat(np.arange(len(rows)), len(nv))
        k = np.tile(np.arange(len(nv)), len(rows))
        z, mb, dp, g = rows[r, 3], rows[r, 4], dpv[k], gv[k]
        sharded = dp * cp > 1
        if zero_pinned:
            zero_ok = np.ones(len(z), dtype=bool)
        else:
            zero_ok = np.where(sharded, (z > 0) | (not has_z1), z == 0)
        keep = (dp * mb <= g) & zero_ok
        if keep.any():
            parts.append(np.column_stack([rows[r][keep], dp[keep], nv[k][keep], g[keep]]))
    codes = np.array(recompute_codes(recompute), dtype=np.int64)
    keys = ("tp", "pp", "cp", "zero", "mb", "dp", "nodes", "gbs")
    if not parts:
        return {key: np.empty(0, dtype=np.int64) for key in (*keys, "vp", "ep")} | {
            "rc_options": codes}
    g = np.concatenate(parts)
    ep_pin = pins.ep if pins else None
    out = _with_experts({key: g[:, i] for i, key in enumerate(keys)}, ms.E,
                        ep_pin if profile.expert_parallel or ep_pin else 1)
    if pin_t[3] is not None:
        vp = np.where(out["pp"] > 1, pin_t[3], 1)
        # a pinned vp > 1 asks for an interleaved pipeline: plans without one do not qualify
        keep = interleaving_fits(ms.L, out["pp"], vp) & ((out["pp"] > 1) | (pin_t[3] == 1))
        out = {k: v[keep] for k, v in out.items()}
        out["vp"] = vp[keep].astype(np.int64)
    else:
        out["vp"] = virtual_stages(ms.L, out["pp"],
                                   profile.interleaved_pipeline).astype(np.int64)
    return out | {"rc_options": codes}


def prune(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs,
          measured: dict | None = None) -> dict:
    """Choose each row's recomputation and drop rows the model can rule out untimed.

    For fixed (tp, pp, cp, dp, zero, micro-batch) more recomputation is never faster and never
    needs more memory, so only the least recomputation that fits can be best; rows that fit
    under no recomputation choice go. Memory is cheap to compute, time is not. ``measured``:
    the workload probe's activation ratios (``_memory.memory_by_recompute``)."""
    import numpy as np

    rows = {k: v for k, v in grid.items() if k != "rc_options"}
    chosen = np.full(len(rows["tp"]), -1, dtype=np.int64)
    codes = grid["rc_options"][::-1]  # most recomputation first; less overwrites it
    mems = memory_by_recompute(ms, A, tp=rows["tp"], pp=rows["pp"], dp=rows["dp"],
                               zero=rows["zero"], mb=rows["mb"], rcs=[float(c) for c in codes],
                               cp=rows["cp"], vp=rows["vp"], gbs=rows["gbs"],
                               memory_gib=ci.memory_gib, ep=rows.get("ep"), measured=measured)
    for code, mem in zip(codes, mems, strict=True):
        chosen = np.where(mem["fits"], code, chosen)
    keep = chosen >= 0
    out = {k: v[keep] for k, v in rows.items()}
    out["rc"] = chosen[keep]
    return out


def _memory(ms, A, rows, rc, ci, measured=None):
    return memory_terms(ms, A, tp=rows["tp"], pp=rows["pp"], dp=rows["dp"], zero=rows["zero"],
                        mb=rows["mb"], rc=rc, cp=rows["cp"], vp=rows["vp"], gbs=rows["gbs"],
                        memory_gib=ci.memory_gib, ep=rows.get("ep"), measured=measured)


def least_memory(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs,
                 measured: dict | None = None) -> float:
    """GiB per GPU of the most memory-frugal plan in ``grid`` (most recomputation allowed)."""
    import numpy as np

    code = int(max(grid["rc_options"]))
    mem = _memory(ms, A, grid, np.full_like(grid["tp"], code), ci, measured)
    return float(np.min(mem["memory_gib"]))



def run_model(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs,
              gpus_per_node: int, nic: np.ndarray | None = None,
              layer_scale: np.ndarray | None = None,
              nvlink_domain_gpus: float | None = None,
              measured_memory: dict | None = None) -> dict[str, np.ndarray]:
    """The model on every row of ``grid``; ``nic`` (per row) overrides the per-GPU
    inter-node bandwidth, for measured figures that depend on the node count; ``layer_scale``
    (per row) applies a workload probe's per-layer measurement of time, ``measured_memory``
    (by micro-batch and recompute code) its activations; ``nvlink_domain_gpus`` (the
    accelerator's whole domain, for a grid of many node counts) is capped per row by the
    row's GPUs — default ``ci``'s, which is its own cluster's."""
    import numpy as np

    k = len(grid["tp"])

    def full(x):
        return np.full(k, x, dtype=np.float64)

    domain = full(ci.nvlink_domain_gpus) if nvlink_domain_gpus is None else np.minimum(
        float(nvlink_domain_gpus), grid["nodes"] * float(gpus_per_node))

    return evaluate(ms, A, tp=grid["tp"], pp=grid["pp"], dp=grid["dp"], zero=grid["zero"],
                    mb=grid["mb"], rc=grid["rc"], cp=grid["cp"], vp=grid["vp"],
                    gbs=grid["gbs"], gpus_per_node=full(gpus_per_node),
                    matmul_tflops=full(ci.matmul_tflops),
                    attention_tflops=full(ci.attention_tflops),
                    hbm_gb_per_s=full(ci.hbm_gb_per_s), memory_gib=full(ci.memory_gib),
                    intra_busbw_gb_per_s=full(ci.intra_busbw_gb_per_s),
                    nic_gb_per_s_per_gpu=full(ci.nic_gb_per_s_per_gpu) if nic is None
                    else nic,
                    sm_count=None if math.isnan(ci.sm_count) else full(ci.sm_count),
                    hop_latency_s=full(ci.hop_latency_s), layer_scale=layer_scale,
                    ep=grid.get("ep"), nvlink_domain_gpus=domain,
                    measured_memory=measured_memory)


BATCH_ROUNDING_LIMIT = 1.1  # a global batch rounded up beyond this × the wanted one is warned
# about, and its extra sequences earn no credit when plans are ranked


def seconds_per_sequence(grid: dict[str, np.ndarray], res: dict[str, np.ndarray]) -> np.ndarray:
    """Each row's step time per sequence it trains, counting at most BATCH_ROUNDING_LIMIT ×
    the wanted batch (inf where it does not fit): what ranks plans. Plans round the global
    batch up differently (whole micro-batches per data-parallel rank), so a longer step can
    train more tokens and finish sooner: step time alone ranked tp2·dp16 (336 sequences,
    700.8 h) above tp1·dp32 (352 sequences, 683.3 h) for 334 wanted. Without the cap, plans
    that double the batch — another training recipe, not a faster run of this one — won."""
    import numpy as np

    per_step = res["micro_batches"] * grid["dp"] * grid["mb"]
    credited = np.minimum(per_step, BATCH_ROUNDING_LIMIT * grid["gbs"])
    beyond = np.where(grid["mb"] > MB_CHOICES[-1], 1 + MB_BEYOND_GAIN, 1.0)  # ``mb_options``
    return np.where(res["fits"], res["step_s"] / credited * beyond, np.inf)


def best_index(grid: dict[str, np.ndarray], res: dict[str, np.ndarray]) -> int | None:
    """Fastest plan that fits — least time per sequence trained (ties: less memory); None
    when none fits."""
    import numpy as np

    if not res["fits"].any():
        return None
    order = np.lexsort((res["memory_gib"], seconds_per_sequence(grid, res)))
    return int(order[0])

