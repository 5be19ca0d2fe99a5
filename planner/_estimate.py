"""`estimate`: the best parallel plan for one workload on one cluster, and what it costs in time.

The plan search enumerates tensor (within a node), pipeline and data parallel degrees, ZeRO
stage, micro-batch size and recomputation, evaluates them all at once with the vectorised model
(``_perf.evaluate``) and keeps the fastest plan that fits in memory.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ._assumptions import SM_COUNT, Assumptions, gpu_family
from ._calibration import NO_CALIBRATION, Calibration
from ._errors import HardwareError, NoFitError
from ._goodput import Goodput, goodput
from ._hardware import Cluster
from ._perf import (
    CHECKPOINT_BYTES,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    ModelScalars,
    evaluate,
    memory_terms,
)
from ._workload import Workload

TP_CHOICES = (1, 2, 4, 8, 16)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MB_CHOICES = (1, 2, 4, 8, 16)
ZERO_CHOICES = (0, 1, 2, 3)

# A10G: AWS and NVIDIA publish no tensor peak (reference SPECS.md). A community benchmark
# measured ≈69.5 TFLOP/s bf16 matmul; the A10 datasheet's 125 is the nearest published peak.
PUBLISHED_ACHIEVABLE = {("A10G", "bf16"): 69.5, ("A10G", "fp16"): 69.5}
PEAK_STAND_IN = {"A10G": 125.0}


@dataclass(frozen=True, slots=True, kw_only=True)
class ClusterInputs:
    """Per-cluster numbers the vectorised model needs, with the reason for each."""

    matmul_tflops: float
    attention_tflops: float
    peak_tflops: float  # datasheet dense peak of the matmul dtype, for MFU
    hbm_gb_per_s: float
    memory_gib: float
    intra_busbw_gb_per_s: float
    nic_gb_per_s_per_gpu: float
    sm_count: float  # nan when unknown: no wave quantization
    hop_latency_s: float  # one inter-node step of a NCCL ring/tree
    notes: tuple[str, ...]


def matmul_dtype(precision: str) -> str:
    return {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8"}[precision]


def costable(acc, precision: str) -> bool:
    """Whether the model has what it needs to time ``precision`` training on ``acc``."""
    half = "fp16" if precision == "fp16" else "bf16"
    peaks = (acc.peak_tflops(matmul_dtype(precision)) or PEAK_STAND_IN.get(acc.name),
             acc.peak_tflops(half) or PEAK_STAND_IN.get(acc.name))
    return all(peaks) and bool(acc.memory_gib) and bool(acc.memory_bandwidth_gb_per_s)


def cluster_inputs(cluster: Cluster, workload: Workload, A: Assumptions,
                   cal: Calibration = NO_CALIBRATION, *,
                   memory_gib: float | None = None) -> ClusterInputs:
    acc = cluster.accelerator
    dtype = matmul_dtype(workload.precision)
    half = "fp16" if workload.precision == "fp16" else "bf16"
    notes = []
    peak = acc.peak_tflops(dtype) or PEAK_STAND_IN.get(acc.name)
    half_peak = acc.peak_tflops(half) or PEAK_STAND_IN.get(acc.name)
    if not half_peak or not peak:
        missing = dtype if not peak else half
        raise HardwareError(
            f"{acc.name} has no {missing} peak in the catalog, so {workload.precision} "
            f"training cannot be modelled on it. To fix: choose --precision "
            f"{'fp16' if acc.tflops_fp16 else 'bf16'} or another accelerator"
            if (acc.tflops_fp16 or acc.tflops_bf16) else
            f"{acc.name} has no published tensor peaks. To fix: pick another --gpu, or "
            "measure it with `gpuplan probe run` and `gpuplan probe ingest`")
    measured = cal.matmul(acc.name, dtype)
    if measured:
        matmul = measured.value
        notes.append(f"matmul {dtype}: measured {matmul:.1f} TFLOP/s ({measured.source})")
    elif (acc.name, dtype) in PUBLISHED_ACHIEVABLE:
        matmul = PUBLISHED_ACHIEVABLE[(acc.name, dtype)]
        notes.append(f"matmul {dtype}: {matmul} TFLOP/s from a community A10G benchmark "
                     "(unverified; no datasheet peak exists); MFU against the A10's 125")
    else:
        fam = gpu_family(acc.architecture, acc.form_factor)
        frac = A.matmul_fraction.get(fam, A.default_matmul_fraction)
        if dtype == "fp8":
            frac *= A.fp8_relative_fraction
        matmul = peak * frac
        src = ("published MAMF for " + fam if fam in A.matmul_fraction
               else "default (no published measurement)")
        notes.append(f"matmul {dtype}: {peak:g} TFLOP/s peak × {frac:.3f} = {matmul:.1f} "
                     f"TFLOP/s achievable ({src})")
    hbm = acc.memory_bandwidth_gb_per_s
    hbm_m = cal.hbm_gb_per_s.get(acc.name)
    if hbm_m:
        # a measured copy bandwidth is already "achievable": undo the default efficiency
        hbm = hbm_m.value / A.memory_bandwidth_efficiency
        notes.append(f"HBM: measured copy {hbm_m.value:.0f} GB/s ({hbm_m.source})")
    if not hbm:
        raise HardwareError(f"{acc.name} has no memory bandwidth in the catalog. To fix: "
                            "choose another accelerator")
    mem = memory_gib or acc.memory_gib
    if not mem:
        raise HardwareError(f"{acc.name} has no memory size in the catalog")
    intra_m = cal.intra(cluster.instance_type, acc.name)
    if intra_m:
        intra = intra_m.value
        notes.append(f"intra-node busbw: measured {intra:.0f} GB/s ({intra_m.source})")
    else:
        eff = A.intra_node_efficiency.get(cluster.topology, 0.6)
        intra = cluster.intra_node_gb_per_s_per_gpu / 2 * eff
        notes.append(f"intra-node busbw: {cluster.intra_node_gb_per_s_per_gpu:g}/2 GB/s per "
                     f"direction × {eff} ({cluster.topology}) = {intra:.0f} GB/s")
    inter_m = cal.inter(cluster.instance_type)
    if inter_m:
        nic = inter_m.value / cluster.gpus_per_node
        notes.append(f"inter-node busbw: measured {inter_m.value:.0f} GB/s ({inter_m.source})")
    elif cluster.inter_node_gbps:
        eff = A.inter_node_efficiency.get(cluster.fabric, 0.4)
        nic = cluster.inter_node_gbps / 8 * eff / cluster.gpus_per_node
        if cluster.nodes > 1:
            notes.append(f"inter-node: {cluster.inter_node_gbps:g} Gb/s {cluster.fabric} × {eff}"
                         f" = {nic * cluster.gpus_per_node:.0f} GB/s per node")
    else:
        nic = 0.0
    return ClusterInputs(
        matmul_tflops=matmul, attention_tflops=half_peak, peak_tflops=peak,
        hbm_gb_per_s=hbm, memory_gib=mem, intra_busbw_gb_per_s=intra,
        nic_gb_per_s_per_gpu=nic, sm_count=float(SM_COUNT.get(acc.name, "nan")),
        hop_latency_s=(A.inter_node_latency_tcp_s if cluster.fabric in ("ethernet",
                                                                         "gpudirect_tcpx")
                       else A.inter_node_latency_s),
        notes=tuple(notes))


@functools.lru_cache(maxsize=64)
def _base_grid(gpus_per_node: int, heads: int, layers: int) -> np.ndarray:
    rows = [(tp, pp, z, mb) for tp in TP_CHOICES for pp in PP_CHOICES
            for z in ZERO_CHOICES for mb in MB_CHOICES
            if tp <= gpus_per_node and gpus_per_node % tp == 0 and heads % tp == 0
            and pp <= layers and (pp == 1 or z <= 1)]
    return np.array(rows, dtype=np.int64).reshape(-1, 4)


def recompute_codes(recompute: str) -> tuple[int, ...]:
    """The recomputation choices to search, least recomputation first."""
    names = ("none", "selective", "full") if recompute == "auto" else (recompute,)
    return tuple(RECOMPUTE_CODES[n] for n in names)


def plan_grid(ms: ModelScalars, gpus_per_node: int, nodes: np.ndarray,
              recompute: str) -> dict[str, np.ndarray]:
    """Every valid (tp, pp, dp, zero, mb) for each node count in ``nodes``; ``prune`` then
    picks the recomputation (from ``recompute``) per row.

    Built per (tp, pp) pair so only valid combinations are ever materialised: tp·pp must
    divide the GPU count, the global batch must hold dp·mb sequences, and ZeRO needs dp > 1
    (with dp > 1, plain data parallelism (ZeRO-0) moves the same bytes as ZeRO-1 with more
    memory and an unsharded optimizer step, so it can never be best and is not evaluated)."""
    base = _base_grid(gpus_per_node, ms.a, ms.L)
    n = np.asarray(nodes, dtype=np.int64)
    total = n * gpus_per_node
    parts = []
    pairs = np.unique(base[:, :2], axis=0)
    for tp, pp in pairs:
        ok = total % (tp * pp) == 0
        if not ok.any():
            continue
        nv, dpv = n[ok], total[ok] // (tp * pp)
        rows = base[(base[:, 0] == tp) & (base[:, 1] == pp)]
        r = np.repeat(np.arange(len(rows)), len(nv))
        k = np.tile(np.arange(len(nv)), len(rows))
        z, mb, dp = rows[r, 2], rows[r, 3], dpv[k]
        keep = (dp * mb <= ms.gbs_seqs) & np.where(dp == 1, z == 0, z > 0)
        if keep.any():
            parts.append(np.column_stack([rows[r][keep], dp[keep], nv[k][keep]]))
    codes = np.array(recompute_codes(recompute), dtype=np.int64)
    if not parts:
        return {key: np.empty(0, dtype=np.int64)
                for key in ("tp", "pp", "zero", "mb", "dp", "nodes")} | {"rc_options": codes}
    g = np.concatenate(parts)
    return {"tp": g[:, 0], "pp": g[:, 1], "zero": g[:, 2], "mb": g[:, 3], "dp": g[:, 4],
            "nodes": g[:, 5], "rc_options": codes}


def prune(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs) -> dict:
    """Choose each row's recomputation and drop rows the model can rule out untimed.

    For fixed (tp, pp, dp, zero, micro-batch) more recomputation is never faster and never
    needs more memory, so only the least recomputation that fits can be best; rows that fit
    under no recomputation choice go. Memory is cheap to compute, time is not."""
    rows = {k: v for k, v in grid.items() if k != "rc_options"}
    chosen = np.full(len(rows["tp"]), -1, dtype=np.int64)
    for code in grid["rc_options"][::-1]:  # most recomputation first; less overwrites it
        mem = memory_terms(ms, A, tp=rows["tp"], pp=rows["pp"], dp=rows["dp"],
                           zero=rows["zero"], mb=rows["mb"], rc=np.full_like(rows["tp"], code),
                           memory_gib=ci.memory_gib)
        chosen = np.where(mem["fits"], code, chosen)
    keep = chosen >= 0
    out = {k: v[keep] for k, v in rows.items()}
    out["rc"] = chosen[keep]
    return out


def least_memory(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs) -> float:
    """GiB per GPU of the most memory-frugal plan in ``grid`` (most recomputation allowed)."""
    code = int(max(grid["rc_options"]))
    mem = memory_terms(ms, A, tp=grid["tp"], pp=grid["pp"], dp=grid["dp"], zero=grid["zero"],
                       mb=grid["mb"], rc=np.full_like(grid["tp"], code),
                       memory_gib=ci.memory_gib)
    return float(np.min(mem["memory_gib"]))


def run_model(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs,
              gpus_per_node: int) -> dict[str, np.ndarray]:
    k = len(grid["tp"])

    def full(x):
        return np.full(k, x, dtype=np.float64)

    return evaluate(ms, A, tp=grid["tp"], pp=grid["pp"], dp=grid["dp"], zero=grid["zero"],
                    mb=grid["mb"], rc=grid["rc"], gpus_per_node=full(gpus_per_node),
                    matmul_tflops=full(ci.matmul_tflops),
                    attention_tflops=full(ci.attention_tflops),
                    hbm_gb_per_s=full(ci.hbm_gb_per_s), memory_gib=full(ci.memory_gib),
                    intra_busbw_gb_per_s=full(ci.intra_busbw_gb_per_s),
                    nic_gb_per_s_per_gpu=full(ci.nic_gb_per_s_per_gpu),
                    sm_count=None if math.isnan(ci.sm_count) else full(ci.sm_count),
                    hop_latency_s=full(ci.hop_latency_s))


def best_index(res: dict[str, np.ndarray]) -> int | None:
    """Fastest plan that fits (ties: less memory); None when none fits."""
    fits = res["fits"]
    if not fits.any():
        return None
    step = np.where(fits, res["step_s"], np.inf)
    order = np.lexsort((res["memory_gib"], step))
    return int(order[0])


@dataclass(frozen=True, slots=True, kw_only=True)
class ParallelPlan:
    tp: int
    pp: int
    dp: int
    zero_stage: int
    micro_batch: int
    recompute: str
    micro_batches: int
    expert_parallel: int = 1
    virtual_stages: int = 1

    def as_dict(self) -> dict:
        d = {"tp": self.tp, "pp": self.pp, "dp": self.dp, "zero_stage": self.zero_stage,
             "micro_batch": self.micro_batch, "recompute": self.recompute,
             "grad_accumulation": self.micro_batches}
        if self.expert_parallel > 1:
            d["ep"] = self.expert_parallel
        if self.pp > 1:
            d["virtual_stages"] = self.virtual_stages
        return d


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    workload: Workload
    cluster: Cluster
    plan: ParallelPlan
    step_time_s: float
    steps: int
    breakdown: dict[str, float]
    memory: dict[str, float]
    mfu: float
    model_tflops_per_gpu: float
    tokens_per_s: float
    ideal_hours: float
    goodput: Goodput
    assumptions: tuple[str, ...] = field(default=())

    @property
    def wall_clock_hours(self) -> float:
        return self.ideal_hours / self.goodput.fraction

    @property
    def gpu_hours(self) -> float:
        return self.wall_clock_hours * self.cluster.gpus

    def as_dict(self) -> dict:
        c = self.cluster
        return {
            "wall_clock_hours": self.wall_clock_hours, "gpu_hours": self.gpu_hours,
            "ideal_wall_clock_hours": self.ideal_hours, "mfu": self.mfu,
            "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "tokens_per_second": self.tokens_per_s,
            "memory_per_gpu_gib": self.memory["total_gib"], "memory": self.memory,
            "step_time_s": self.step_time_s, "steps": self.steps,
            "goodput": self.goodput.fraction, "goodput_detail": self.goodput.as_dict(),
            "plan": self.plan.as_dict(), "breakdown": self.breakdown,
            "hardware": {"accelerator": c.accelerator.name, "gpus": c.gpus,
                         "gpus_per_node": c.gpus_per_node, "nodes": c.nodes,
                         "instance_type": c.instance_type, "cloud": c.cloud,
                         "topology": c.topology, "fabric": c.fabric,
                         "inter_node_gbps": c.inter_node_gbps},
            "workload": workload_dict(self.workload),
            "assumptions": list(self.assumptions),
        }


def workload_dict(w: Workload) -> dict:
    a = w.arch
    return {"model": a.name, "params_total": a.params_total(),
            "params_active": a.params_active(), "layers": a.layers, "hidden": a.hidden,
            "heads": a.heads, "kv_heads": a.kv_heads, "ffn_hidden": a.ffn_hidden,
            "vocab": a.vocab, "experts": a.experts, "experts_per_token": a.experts_per_token,
            "tokens": w.tokens, "seq_len": w.seq_len,
            "global_batch_tokens": w.global_batch_tokens, "precision": w.precision,
            "optimizer": w.optimizer, "finetune": w.finetune}


def checkpoint_bytes(ms: ModelScalars) -> float:
    """What a checkpoint holds: bf16 weights + fp32 optimizer state of trainable weights."""
    trainable = ms.params_total * ms.trainable_fraction
    return trainable * CHECKPOINT_BYTES[ms.optimizer] + (ms.params_total - trainable) * 0.0


def summarise(workload: Workload, cluster: Cluster, ms: ModelScalars, A: Assumptions,
              ci: ClusterInputs, grid: dict, res: dict, i: int,
              interruption_rate_per_node_hour: float = 0.0,
              restart_minutes: float | None = None) -> Estimate:
    step = float(res["step_s"][i])
    mb = int(grid["mb"][i])
    dp = int(grid["dp"][i])
    m = int(res["micro_batches"][i])
    tokens_per_step = m * dp * mb * workload.seq_len
    steps = math.ceil(workload.tokens / tokens_per_step)
    ideal_h = steps * step / 3600
    tokens_per_s = tokens_per_step / step
    mflops = ms.model_flops_per_token()
    tflops_gpu = mflops * tokens_per_s / cluster.gpus / 1e12
    gp = goodput(ideal_hours=ideal_h, gpus=cluster.gpus, nodes=cluster.nodes,
                 checkpoint_bytes=checkpoint_bytes(ms), A=A,
                 interruption_rate_per_node_hour=interruption_rate_per_node_hour,
                 restart_minutes=restart_minutes)
    plan = ParallelPlan(tp=int(grid["tp"][i]), pp=int(grid["pp"][i]), dp=dp,
                        zero_stage=int(grid["zero"][i]), micro_batch=mb,
                        recompute=RECOMPUTE_NAMES[int(grid["rc"][i])], micro_batches=m,
                        expert_parallel=int(res["ep"][i]),
                        virtual_stages=int(res["virtual_stages"][i]))
    breakdown = {k: float(res[k][i]) for k in ("compute_s", "tp_comm_s", "dp_comm_s",
                                               "pp_bubble_s", "other_s")}
    if ms.E:
        breakdown["ep_comm_s"] = float(res["ep_comm_s"][i])
    memory = {"total_gib": float(res["memory_gib"][i]),
              "weights_gib": float(res["memory_weights_gib"][i]),
              "gradients_gib": float(res["memory_grads_gib"][i]),
              "optimizer_gib": float(res["memory_optimizer_gib"][i]),
              "activations_gib": float(res["memory_activations_gib"][i]),
              "logits_gib": float(res["memory_logits_gib"][i]),
              "runtime_reserve_gib": A.runtime_reserve_gib,
              "capacity_gib": ci.memory_gib}
    notes = [*workload.inferred, *cluster.notes, *ci.notes,
             f"model FLOPs per token {mflops:.3e} (6·N + 6·L·s·h causal attention"
             f"{'; LoRA 4·N' if ms.lora else ''}"
             f"); MFU against the {matmul_dtype(workload.precision)} dense peak "
             f"{ci.peak_tflops:g} TFLOP/s",
             f"global batch {tokens_per_step:,} tokens ({m} micro-batches × {dp} DP × {mb} "
             f"sequences of {workload.seq_len})",
             f"attention: FlashAttention at {A.attention_efficiency:.0%} of peak, causal "
             f"fraction {A.causal_fraction}",
             f"HBM {ci.hbm_gb_per_s:g} GB/s × {A.memory_bandwidth_efficiency} for elementwise "
             "kernels and the optimizer step",
             f"memory: {A.runtime_reserve_gib} GiB runtime reserve, "
             f"{A.usable_memory_fraction:.0%} of {ci.memory_gib:g} GiB usable",
             *gp.notes]
    return Estimate(workload=workload, cluster=cluster, plan=plan, step_time_s=step,
                    steps=steps, breakdown=breakdown, memory=memory,
                    mfu=tflops_gpu / ci.peak_tflops, model_tflops_per_gpu=tflops_gpu,
                    tokens_per_s=tokens_per_s, ideal_hours=ideal_h, goodput=gp,
                    assumptions=tuple(notes))


def estimate(workload: Workload, cluster: Cluster, *, assumptions: Assumptions | None = None,
             calibration: Calibration = NO_CALIBRATION,
             memory_gib: float | None = None) -> Estimate:
    """The fastest plan that fits for ``workload`` on ``cluster``; NoFitError when none."""
    A = assumptions or Assumptions()
    ms = ModelScalars.of(workload)
    ci = cluster_inputs(cluster, workload, A, calibration, memory_gib=memory_gib)
    grid = plan_grid(ms, cluster.gpus_per_node, np.array([cluster.nodes]), workload.recompute)
    if len(grid["tp"]) == 0:
        raise NoFitError(f"no parallel plan divides {cluster.gpus} GPUs for this model "
                         f"(heads {ms.a}, global batch {ms.gbs_seqs} sequences). To fix: "
                         "raise --global-batch-tokens or change the GPU count")
    pruned = prune(ms, A, grid, ci)
    if len(pruned["tp"]) == 0:
        raise NoFitError(no_fit_message(workload, cluster, ms, A, ci,
                                        least_memory(ms, A, grid, ci)))
    res = run_model(ms, A, pruned, ci, cluster.gpus_per_node)
    i = best_index(res)
    return summarise(workload, cluster, ms, A, ci, pruned, res, i)


def no_fit_message(workload, cluster, ms, A, ci, least: float) -> str:
    capacity = ci.memory_gib * A.usable_memory_fraction
    hint = ""
    if cluster.inter_node_gbps or cluster.nodes == 1:
        for nodes in (2, 4, 8, 16, 32, 64, 128, 256, 512):
            if nodes <= cluster.nodes or not cluster.inter_node_gbps:
                continue
            grid = plan_grid(ms, cluster.gpus_per_node, np.array([nodes]), workload.recompute)
            if len(grid["tp"]) == 0:
                continue
            grid = prune(ms, A, grid, ci)
            if len(grid["tp"]) == 0:
                continue
            r = run_model(ms, A, grid, ci, cluster.gpus_per_node)
            j = best_index(r)
            if j is not None:
                hint = (f" The smallest setup that fits is {nodes} nodes "
                        f"({nodes * cluster.gpus_per_node} GPUs) with tp={grid['tp'][j]} "
                        f"pp={grid['pp'][j]} zero={grid['zero'][j]} "
                        f"recompute={RECOMPUTE_NAMES[int(grid['rc'][j])]}.")
                break
    return (f"{ms.params_total / 1e9:.1f}B parameters do not fit on {cluster.gpus}x "
            f"{cluster.accelerator.name}: the most memory-frugal plan needs {least:.1f} GiB per "
            f"GPU of {capacity:.1f} usable.{hint} To fix: use more GPUs (--nodes/--gpus), a GPU "
            "with more memory, --recompute full, or a smaller --global-batch-tokens")
