"""`estimate`: the best parallel plan for one workload on one cluster, and what it costs in time.

The plan search enumerates tensor (within a node), pipeline, context and data parallel degrees,
ZeRO stage, micro-batch size and recomputation — only what the workload's framework profile can
run, and only the values the user did not pin — evaluates them all at once with the vectorised
model (``_perf.evaluate``) and keeps the fastest plan that fits in memory.

Time has three layers: the step time (physics × the framework's fitted software constants),
*training time* = steps × step time, and *calendar time* = training time / goodput (failures,
checkpoints, evaluation and operational losses, ``_goodput``). The range: log(actual/model) is
taken as normal with σ² = σ_throughput² (leave-one-source-out residuals of the software fit,
per framework) + σ_operations² (spread of published effective-training-time reports);
P10/P90 = P50 · exp(∓1.2816·σ).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from ._assumptions import SM_COUNT, Assumptions, attention_key, gpu_family
from ._calibration import NO_CALIBRATION, Calibration
from ._errors import HardwareError, NoFitError, WorkloadError
from ._goodput import Goodput, goodput
from ._hardware import Cluster
from ._perf import (
    CHECKPOINT_BYTES,
    RECOMPUTE_CODES,
    RECOMPUTE_NAMES,
    ModelScalars,
    evaluate,
    memory_terms,
    virtual_stages,
)
from ._software import PROFILES, check_pins
from ._workload import Workload, default_batch_note

TP_CHOICES = (1, 2, 4, 8, 16)
PP_CHOICES = (1, 2, 4, 8, 16, 32, 64)
MB_CHOICES = (1, 2, 4, 8, 16)
# Context parallelism is searched only for long sequences (each GPU keeps ≥ 4,096 tokens of a
# sequence): below that, ring exchanges cost more than the activation memory they save.
CP_CHOICES = (1, 2, 4, 8, 16)
CP_SEARCH_MIN_TOKENS = 4096
CP_SEARCH_MIN_SEQ = 16384
Z_P90 = 1.2815515655446004  # standard normal 90th percentile
BUBBLE_WARNING = 0.25  # warn when the pipeline bubble is above this share of the step

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
    calibrated: tuple[str, ...] = ()  # measured figures used instead of datasheet defaults


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
    fam = gpu_family(acc.architecture, acc.form_factor)
    if (acc.name, dtype) in PUBLISHED_ACHIEVABLE:
        default_matmul = PUBLISHED_ACHIEVABLE[(acc.name, dtype)]
        default_note = (f"matmul {dtype}: {default_matmul} TFLOP/s from a community A10G "
                        "benchmark (unverified; no datasheet peak exists); MFU against the "
                        "A10's 125")
    else:
        frac = A.matmul_fraction.get(fam, A.default_matmul_fraction)
        if dtype == "fp8":
            frac *= A.fp8_relative_fraction
        default_matmul = peak * frac
        src = ("published MAMF for " + fam if fam in A.matmul_fraction
               else "default_matmul_fraction: no published measurement for this family")
        default_note = (f"matmul {dtype}: {peak:g} TFLOP/s peak × {frac:.3f} = "
                        f"{default_matmul:.1f} TFLOP/s achievable ({src})")
    calibrated = []
    measured = cal.matmul(acc.name, dtype)
    if measured:
        matmul = measured.value
        calibrated.append(f"matmul {dtype}: measured {matmul:.1f} TFLOP/s instead of the "
                          f"datasheet default {default_matmul:.1f} ({measured.source})")
    else:
        matmul = default_matmul
        notes.append(default_note)
    hbm = acc.memory_bandwidth_gb_per_s
    hbm_m = cal.hbm(acc.name)
    if hbm_m and hbm:
        # a measured copy bandwidth is already "achievable": undo the default efficiency
        calibrated.append(f"HBM copy: measured {hbm_m.value:.0f} GB/s instead of "
                          f"{hbm:g} × {A.memory_bandwidth_efficiency} = "
                          f"{hbm * A.memory_bandwidth_efficiency:.0f} ({hbm_m.source})")
        hbm = hbm_m.value / A.memory_bandwidth_efficiency
    if not hbm:
        raise HardwareError(f"{acc.name} has no memory bandwidth in the catalog. To fix: "
                            "choose another accelerator")
    mem = memory_gib or acc.memory_gib
    if not mem:
        raise HardwareError(f"{acc.name} has no memory size in the catalog")
    eff = A.intra_node_efficiency.get(cluster.topology, 0.6)
    default_intra = cluster.intra_node_gb_per_s_per_gpu / 2 * eff
    intra_m = cal.intra(cluster.instance_type, acc.name, cluster.gpus_per_node)
    if intra_m:
        intra = intra_m.value
        calibrated.append(f"intra-node busbw: measured {intra:.0f} GB/s instead of "
                          f"{default_intra:.0f} ({intra_m.source})")
    else:
        intra = default_intra
        notes.append(f"intra-node busbw: {cluster.intra_node_gb_per_s_per_gpu:g}/2 GB/s per "
                     f"direction × {eff} ({cluster.topology}) = {intra:.0f} GB/s")
    nic = default_nic(cluster, A)
    inter_m = cal.inter(cluster.instance_type, cluster.nodes) if cluster.nodes > 1 else None
    if inter_m:
        calibrated.append(f"inter-node busbw at {cluster.nodes} nodes: measured "
                          f"{inter_m.value:.0f} GB/s instead of {nic * cluster.gpus_per_node:.0f}"
                          f" ({inter_m.source})")
        nic = inter_m.value / cluster.gpus_per_node
    elif cluster.inter_node_gbps and cluster.nodes > 1:
        e = A.inter_node_efficiency.get(cluster.fabric, 0.4)
        notes.append(f"inter-node: {cluster.inter_node_gbps:g} Gb/s {cluster.fabric} × {e}"
                     f" = {nic * cluster.gpus_per_node:.0f} GB/s per node")
    notes.extend(calibrated)
    akey = attention_key(acc.architecture, workload.framework, workload.attention)
    ramp = (1 + A.attention_ramp_tokens / 8192) / (1 + A.attention_ramp_tokens
                                                    / workload.seq_len)
    attn = half_peak * A.attention_fraction[akey] * A.attention_efficiency * ramp
    if workload.attention != "unfused":
        notes.append(f"attention kernel {akey}: {half_peak:g} TFLOP/s × "
                     f"{A.attention_fraction[akey]} (published fwd+bwd share) × "
                     f"{A.attention_efficiency:.2f} (fitted) × {ramp:.2f} (sequence "
                     f"{workload.seq_len}) = {attn:.0f} TFLOP/s")
    return ClusterInputs(
        matmul_tflops=matmul, attention_tflops=attn, peak_tflops=peak,
        hbm_gb_per_s=hbm, memory_gib=mem, intra_busbw_gb_per_s=intra,
        nic_gb_per_s_per_gpu=nic, sm_count=float(SM_COUNT.get(acc.name, "nan")),
        hop_latency_s=(A.inter_node_latency_tcp_s if cluster.fabric in ("ethernet",
                                                                         "gpudirect_tcpx")
                       else A.inter_node_latency_s),
        notes=tuple(notes), calibrated=tuple(calibrated))


def default_nic(cluster: Cluster, A: Assumptions) -> float:
    """Inter-node bus bandwidth per GPU (GB/s) from the catalog's line rate and the fabric's
    efficiency; 0 when the instance has no collective network."""
    if not cluster.inter_node_gbps:
        return 0.0
    eff = A.inter_node_efficiency.get(cluster.fabric, 0.4)
    return cluster.inter_node_gbps / 8 * eff / cluster.gpus_per_node


def nic_by_nodes(cluster: Cluster, ci: ClusterInputs, cal: Calibration,
                 nodes: np.ndarray) -> np.ndarray | None:
    """Per-GPU inter-node bus bandwidth for each node count: the probe's measurement at that
    count (interpolated between measured counts) where there is one, else the default.
    None when nothing is measured for this instance type."""
    if cal.empty or not cluster.instance_type:
        return None
    out = np.full(len(nodes), ci.nic_gb_per_s_per_gpu, dtype=np.float64)
    hit = False
    for n in np.unique(nodes):
        m = cal.inter(cluster.instance_type, int(n)) if n > 1 else None
        if m:
            out[nodes == n] = m.value / cluster.gpus_per_node
            hit = True
    return out if hit else None


def _choices(pinned: int | None, options: tuple[int, ...]) -> tuple[int, ...]:
    return (pinned,) if pinned is not None else options


def _cp_options(ms: ModelScalars, profile) -> tuple[int, ...]:
    if not profile.context_parallel or ms.s < CP_SEARCH_MIN_SEQ:
        return (1,)
    return tuple(c for c in CP_CHOICES if ms.s // c >= CP_SEARCH_MIN_TOKENS)


@functools.lru_cache(maxsize=64)
def _base_grid(gpus_per_node: int, heads: int, layers: int, seq_len: int, framework: str,
               pins: tuple, cp_options: tuple[int, ...]) -> np.ndarray:
    """(tp, pp, cp, zero, mb) rows the framework can run, before the cluster size is known."""
    p = PROFILES[framework]
    tp_pin, pp_pin, cp_pin, _vp, z_pin, mb_pin = pins
    tps = _choices(tp_pin, TP_CHOICES if p.tensor_parallel else (1,))
    pps = _choices(pp_pin, PP_CHOICES if p.pipeline_parallel else (1,))
    cps = _choices(cp_pin, cp_options)
    zs = _choices(z_pin, p.zero_stages)
    mbs = _choices(mb_pin, MB_CHOICES)
    rows = [(tp, pp, cp, z, mb) for tp in tps for pp in pps for cp in cps for z in zs
            for mb in mbs
            if tp <= gpus_per_node and gpus_per_node % tp == 0 and heads % tp == 0
            and pp <= layers and seq_len % cp == 0
            and (pp == 1 or z in p.zero_with_pipeline or z_pin is not None)]
    return np.array(rows, dtype=np.int64).reshape(-1, 5)


def recompute_codes(recompute: str) -> tuple[int, ...]:
    """The recomputation choices to search, least recomputation first."""
    names = ("none", "selective", "full") if recompute == "auto" else (recompute,)
    return tuple(RECOMPUTE_CODES[n] for n in names)


def batch_sequences(workload: Workload, gpus: np.ndarray) -> np.ndarray:
    """Sequences per step for each cluster size (the default rule depends on it)."""
    return np.array([workload.sequences_per_step(int(g)) for g in np.asarray(gpus)],
                    dtype=np.int64)


def plan_grid(ms: ModelScalars, gpus_per_node: int, nodes: np.ndarray, recompute: str, *,
              workload: Workload | None = None) -> dict[str, np.ndarray]:
    """Every valid (tp, pp, cp, dp, zero, mb) for each node count in ``nodes``; ``prune`` then
    picks the recomputation (from ``recompute``) per row.

    Built per (tp, pp, cp) triple so only valid combinations are ever materialised: tp·pp·cp
    must divide the GPU count and the global batch must hold dp·mb sequences. With more than
    one data-parallel rank, plain data parallelism (ZeRO-0) moves the same bytes as ZeRO-1
    with more memory and an unsharded optimizer step, so it is searched only when the
    framework has no ZeRO-1 (or when pinned); with one rank the stages are the same plan."""
    framework = workload.framework if workload else ms.framework
    pins = workload.pins if workload else None
    pin_t = (pins.tp, pins.pp, pins.cp, pins.vp, pins.zero, pins.micro_batch) if pins \
        else (None,) * 6
    profile = PROFILES[framework]
    base = _base_grid(gpus_per_node, ms.a, ms.L, ms.s, framework, pin_t,
                      _cp_options(ms, profile))
    n = np.asarray(nodes, dtype=np.int64)
    total = n * gpus_per_node
    gbs_n = batch_sequences(workload, total) if workload else np.full(len(n), ms.gbs_seqs)
    zero_pinned = pin_t[4] is not None
    has_z1 = 1 in profile.zero_stages
    parts = []
    for tp, pp, cp in np.unique(base[:, :3], axis=0) if len(base) else ():
        ok = total % (tp * pp * cp) == 0
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
        return {key: np.empty(0, dtype=np.int64) for key in (*keys, "vp")} | {
            "rc_options": codes}
    g = np.concatenate(parts)
    out = {key: g[:, i] for i, key in enumerate(keys)}
    layers_stage = np.ceil(ms.L / out["pp"])
    if pin_t[3] is not None:
        vp = np.where(out["pp"] > 1, pin_t[3], 1)
        keep = (layers_stage % vp == 0)
        out = {k: v[keep] for k, v in out.items()}
        out["vp"] = vp[keep].astype(np.int64)
    else:
        out["vp"] = virtual_stages(layers_stage, out["pp"],
                                   profile.interleaved_pipeline).astype(np.int64)
    return out | {"rc_options": codes}


def prune(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs) -> dict:
    """Choose each row's recomputation and drop rows the model can rule out untimed.

    For fixed (tp, pp, cp, dp, zero, micro-batch) more recomputation is never faster and never
    needs more memory, so only the least recomputation that fits can be best; rows that fit
    under no recomputation choice go. Memory is cheap to compute, time is not."""
    rows = {k: v for k, v in grid.items() if k != "rc_options"}
    chosen = np.full(len(rows["tp"]), -1, dtype=np.int64)
    for code in grid["rc_options"][::-1]:  # most recomputation first; less overwrites it
        mem = _memory(ms, A, rows, np.full_like(rows["tp"], code), ci)
        chosen = np.where(mem["fits"], code, chosen)
    keep = chosen >= 0
    out = {k: v[keep] for k, v in rows.items()}
    out["rc"] = chosen[keep]
    return out


def _memory(ms, A, rows, rc, ci):
    return memory_terms(ms, A, tp=rows["tp"], pp=rows["pp"], dp=rows["dp"], zero=rows["zero"],
                        mb=rows["mb"], rc=rc, cp=rows["cp"], vp=rows["vp"], gbs=rows["gbs"],
                        memory_gib=ci.memory_gib)


def least_memory(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs) -> float:
    """GiB per GPU of the most memory-frugal plan in ``grid`` (most recomputation allowed)."""
    code = int(max(grid["rc_options"]))
    mem = _memory(ms, A, grid, np.full_like(grid["tp"], code), ci)
    return float(np.min(mem["memory_gib"]))


def workload_scales(cal: Calibration, workload: Workload, accelerator: str,
                    grid: dict) -> tuple[np.ndarray | None, dict]:
    """Per row of ``grid``: the workload probe's measured / modelled per-layer time for that
    row's micro-batch and recomputation (1 where nothing is measured), and the measurement
    per (micro-batch, recompute code). (None, {}) when the calibration has no workload
    measurements."""
    if cal.empty or not cal.workload_layers:
        return None, {}
    from ._layer_model import shape_of

    scale = np.ones(len(grid["tp"]))
    found = {}
    for mb, rc in {(int(a), int(b)) for a, b in zip(grid["mb"], grid["rc"], strict=True)}:
        m = cal.workload(accelerator, workload.framework,
                         shape_of(workload, micro_batch=mb, recompute=RECOMPUTE_NAMES[rc]))
        if m is not None:
            found[(mb, rc)] = m
            scale[(grid["mb"] == mb) & (grid["rc"] == rc)] = m.time_ratio
    return (scale if found else None), found


def run_model(ms: ModelScalars, A: Assumptions, grid: dict, ci: ClusterInputs,
              gpus_per_node: int, nic: np.ndarray | None = None,
              layer_scale: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The model on every row of ``grid``; ``nic`` (per row) overrides the per-GPU
    inter-node bandwidth, for measured figures that depend on the node count; ``layer_scale``
    (per row) applies a workload probe's per-layer measurement."""
    k = len(grid["tp"])

    def full(x):
        return np.full(k, x, dtype=np.float64)

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
                    hop_latency_s=full(ci.hop_latency_s), layer_scale=layer_scale)


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
    cp: int = 1
    expert_parallel: int = 1
    virtual_stages: int = 1

    def as_dict(self) -> dict:
        d = {"tp": self.tp, "pp": self.pp, "cp": self.cp, "dp": self.dp,
             "zero_stage": self.zero_stage, "micro_batch": self.micro_batch,
             "recompute": self.recompute, "grad_accumulation": self.micro_batches}
        if self.expert_parallel > 1:
            d["ep"] = self.expert_parallel
        if self.pp > 1:
            d["virtual_stages"] = self.virtual_stages
        return d

    def __str__(self) -> str:
        """One line, the same everywhere a plan is shown (CLI tables, app, reports)."""
        parts = [f"tp{self.tp}", f"pp{self.pp}"]
        if self.pp > 1 and self.virtual_stages > 1:
            parts[-1] += f"×v{self.virtual_stages}"
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        if self.expert_parallel > 1:
            parts.append(f"ep{self.expert_parallel}")
        parts += [f"dp{self.dp}", f"zero{self.zero_stage}",
                  f"mb{self.micro_batch}×{self.micro_batches}",
                  {"none": "no-recompute", "selective": "sel-recompute",
                   "full": "full-recompute"}[self.recompute]]
        return " ".join(parts)


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeRange:
    """P10/P50/P90 of a duration: log-normal around the model's median."""

    p10: float
    p50: float
    p90: float
    log_sigma: float

    @classmethod
    def around(cls, median: float, log_sigma: float) -> TimeRange:
        k = math.exp(Z_P90 * log_sigma)
        return cls(p10=median / k, p50=median, p90=median * k, log_sigma=log_sigma)

    def scaled(self, factor: float) -> TimeRange:
        return TimeRange(p10=self.p10 * factor, p50=self.p50 * factor, p90=self.p90 * factor,
                         log_sigma=self.log_sigma)


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate:
    workload: Workload
    cluster: Cluster
    plan: ParallelPlan
    step_time_s: float
    steps: int
    tokens_per_step: int
    breakdown: dict[str, float]
    memory: dict[str, float]
    mfu: float
    model_tflops_per_gpu: float
    tokens_per_s: float
    ideal_hours: float  # training time: steps × step time, nothing lost
    goodput: Goodput
    wall_clock: TimeRange  # calendar time
    assumptions: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())
    calibrated: tuple[str, ...] = field(default=())  # measured figures used (probe reports)

    @property
    def training_hours(self) -> float:
        return self.ideal_hours

    @property
    def wall_clock_hours(self) -> float:
        return self.wall_clock.p50

    @property
    def gpu_hours(self) -> float:
        return self.wall_clock_hours * self.cluster.gpus

    def as_dict(self) -> dict:
        c, w = self.cluster, self.workload
        r = self.wall_clock
        return {
            "wall_clock_hours": r.p50, "wall_clock_hours_p10": r.p10,
            "wall_clock_hours_p90": r.p90, "gpu_hours": self.gpu_hours,
            "gpu_hours_p10": r.p10 * c.gpus, "gpu_hours_p90": r.p90 * c.gpus,
            "training_hours": self.ideal_hours, "ideal_wall_clock_hours": self.ideal_hours,
            "range": {"distribution": "log-normal", "log_sigma": r.log_sigma,
                      "p10_factor": r.p10 / r.p50, "p90_factor": r.p90 / r.p50},
            "mfu": self.mfu, "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "tokens_per_second": self.tokens_per_s,
            "tokens_per_second_per_gpu": self.tokens_per_s / c.gpus,
            "memory_per_gpu_gib": self.memory["total_gib"], "memory": self.memory,
            "step_time_s": self.step_time_s, "steps": self.steps,
            "tokens_per_step": self.tokens_per_step,
            "goodput": self.goodput.fraction, "goodput_detail": self.goodput.as_dict(),
            "framework": w.framework, "attention": w.attention,
            "pinned": w.pins.as_dict() | ({"recompute": w.recompute}
                                          if w.recompute != "auto" else {}),
            "plan": self.plan.as_dict(), "breakdown": self.breakdown,
            "hardware": {"accelerator": c.accelerator.name, "gpus": c.gpus,
                         "gpus_per_node": c.gpus_per_node, "nodes": c.nodes,
                         "instance_type": c.instance_type, "cloud": c.cloud,
                         "topology": c.topology, "fabric": c.fabric,
                         "inter_node_gbps": c.inter_node_gbps},
            "workload": workload_dict(w),
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "calibration": list(self.calibrated),
        }


def workload_dict(w: Workload) -> dict:
    a = w.arch
    return {"model": a.name, "params_total": a.params_total(),
            "params_active": a.params_active(), "layers": a.layers, "hidden": a.hidden,
            "heads": a.heads, "kv_heads": a.kv_heads, "ffn_hidden": a.ffn_hidden,
            "vocab": a.vocab, "experts": a.experts, "experts_per_token": a.experts_per_token,
            "tokens": w.tokens, "seq_len": w.seq_len,
            "global_batch_tokens": w.global_batch_tokens, "precision": w.precision,
            "optimizer": w.optimizer, "finetune": w.finetune, "framework": w.framework,
            "attention": w.attention}


def checkpoint_bytes(ms: ModelScalars) -> float:
    """What a checkpoint holds: bf16 weights + fp32 optimizer state of the trainable weights
    (a LoRA run saves its adapters; the frozen base weights are already on storage)."""
    return ms.params_total * ms.trainable_fraction * CHECKPOINT_BYTES[ms.optimizer]


def range_sigma(A: Assumptions, framework: str, measurement=None,
                covered: float = 0.0) -> float:
    """σ of log(actual/model) for calendar time: throughput and operations, independent.

    With a workload probe measurement of the layers, the throughput part shrinks to the share
    of the step the measurement does not cover (communication, bubble, optimizer), grows back
    with the distance to the measured shape (1 at the largest distance used), and adds the
    measurement's own spread: σ_t' = hypot(σ_meas, σ_t · min(1, (1 − covered) + distance))."""
    sigma_t = A.throughput_log_sigma[framework]
    if measurement is not None:
        sigma_t = math.hypot(measurement.log_sigma or 0.0, sigma_t * min(
            1.0, max(0.0, 1.0 - covered) + measurement.distance))
    return math.hypot(sigma_t, A.operations_log_sigma)


def summarise(workload: Workload, cluster: Cluster, ms: ModelScalars, A: Assumptions,
              ci: ClusterInputs, grid: dict, res: dict, i: int,
              interruption_rate_per_node_hour: float = 0.0,
              restart_minutes: float | None = None,
              measurements: dict | None = None) -> Estimate:
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
                        cp=int(grid["cp"][i]), zero_stage=int(grid["zero"][i]), micro_batch=mb,
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
    sw = A.software(workload.framework)
    wm = (measurements or {}).get((mb, int(grid["rc"][i])))
    covered = float(res["layer_s"][i]) / step if step > 0 else 0.0
    sigma = range_sigma(A, workload.framework, wm, covered)
    calibrated = list(ci.calibrated)
    if wm is not None:
        calibrated.append(
            f"layer time: {wm.summary()}; the layers' work ({covered:.0%} of the step) is "
            f"scaled by {wm.time_ratio:.2f} and the range narrowed to σ {sigma:.3f}")
    wall = TimeRange.around(ideal_h / gp.fraction, sigma)
    profile = PROFILES[workload.framework]
    batch_note = (f"global batch {tokens_per_step:,} tokens ({m} micro-batches × {dp} DP × "
                  f"{mb} sequences of {workload.seq_len})")
    if workload.global_batch_tokens is None:
        batch_note += "; " + default_batch_note(params=ms.params_active, seq_len=ms.s,
                                                finetune=workload.finetune != "none")
    notes = [*workload.inferred, *cluster.notes, *ci.notes,
             f"framework profile {workload.framework} ({profile.label}): GEMMs at "
             f"{sw.gemm_efficiency:.2f}× the achievable matmul rate, non-matmul kernels move "
             f"{sw.elementwise_factor:.2f}× fused bytes, {sw.comm_overlap:.0%} of data/context-"
             f"parallel communication hidden, {sw.tp_comm_overlap:.0%} of tensor-parallel, "
             f"{sw.host_overhead_s_per_layer * 1e6:.0f} µs host time per layer and micro-batch "
             "(fitted on published measured throughput: benchmarks/fit_software.py)",
             f"model FLOPs per token {mflops:.3e} (6·N + 6·L·s·h causal attention"
             f"{'; LoRA 4·N' if ms.lora else ''}"
             f"); MFU against the {matmul_dtype(workload.precision)} dense peak "
             f"{ci.peak_tflops:g} TFLOP/s",
             batch_note,
             (f"attention: flash kernel, causal fraction {A.causal_fraction} of the score "
              "blocks computed") if ms.flash else
             "attention: unfused (scores materialised in HBM, no causal skip)",
             f"HBM {ci.hbm_gb_per_s:g} GB/s × {A.memory_bandwidth_efficiency} for elementwise "
             "kernels and the optimizer step",
             f"memory: {A.runtime_reserve_gib} GiB runtime reserve, "
             f"{A.usable_memory_fraction:.0%} of {ci.memory_gib:g} GiB usable",
             *gp.notes,
             f"range P10–P90 {wall.p10:,.1f}–{wall.p90:,.1f} h: log-normal, σ = {sigma:.3f} "
             f"(throughput σ {A.throughput_log_sigma[workload.framework]:.3f} from the fit's "
             f"leave-one-source-out residuals for {workload.framework}"
             + (", narrowed by the workload probe" if wm is not None else "")
             + f"; operations σ {A.operations_log_sigma:.3f} from published "
             "effective-training-time reports)", *calibrated[len(ci.calibrated):]]
    warnings = []
    bubble_share = breakdown["pp_bubble_s"] / step if step > 0 else 0.0
    if bubble_share > BUBBLE_WARNING:
        warnings.append(f"the pipeline bubble is {bubble_share:.0%} of each step: the global "
                        f"batch ({m} micro-batches per {plan.pp}-stage pipeline) is too small "
                        "to feed this cluster; a larger --global-batch-tokens or fewer GPUs "
                        "would waste less")
    wanted = ms.gbs_seqs or workload.sequences_per_step(cluster.gpus)
    if wanted < cluster.gpus / (plan.tp * plan.pp * plan.cp):
        warnings.append(f"the global batch ({wanted} sequences) is smaller than the "
                        f"{cluster.gpus // (plan.tp * plan.pp * plan.cp)} data-parallel ranks "
                        "would need: some GPUs get no sequence")
    if m * dp * mb > 1.1 * wanted:
        warnings.append(f"the global batch was rounded up from {wanted} to {m * dp * mb} "
                        f"sequences to give each of the {dp} data-parallel ranks whole "
                        f"micro-batches of {mb}")
    fam = gpu_family(cluster.accelerator.architecture, cluster.accelerator.form_factor)
    if "default_matmul_fraction" in A.overridden and fam in A.matmul_fraction:
        warnings.append(f"--assume default_matmul_fraction has no effect on "
                        f"{cluster.accelerator.name}: its family {fam!r} has a published value;"
                        f" to change it use --assume matmul_fraction.{fam}=…")
    return Estimate(workload=workload, cluster=cluster, plan=plan, step_time_s=step,
                    steps=steps, tokens_per_step=tokens_per_step, breakdown=breakdown,
                    memory=memory, mfu=tflops_gpu / ci.peak_tflops,
                    model_tflops_per_gpu=tflops_gpu, tokens_per_s=tokens_per_s,
                    ideal_hours=ideal_h, goodput=gp, wall_clock=wall,
                    assumptions=tuple(notes), warnings=tuple(warnings),
                    calibrated=tuple(calibrated))


def check_pins_fit_cluster(workload: Workload, cluster: Cluster) -> None:
    """Pins that cannot work on this cluster → one error saying why (before any search)."""
    p, a = workload.pins, workload.arch
    check_pins(p, workload.framework)
    G, N = cluster.gpus_per_node, cluster.gpus
    if p.tp is not None:
        if p.tp > G:
            raise WorkloadError(f"tp={p.tp} is above the {G} GPUs per node: tensor parallelism "
                                "stays inside a node (its all-reduces run every layer). To "
                                f"fix: pin tp to a divisor of {G}", field="tp", value=p.tp)
        if G % p.tp or a.heads % p.tp:
            raise WorkloadError(f"tp={p.tp} must divide both the {G} GPUs per node and the "
                                f"{a.heads} attention heads. To fix: pin one of "
                                f"{', '.join(str(t) for t in TP_CHOICES if t <= G and not G % t and not a.heads % t)}",
                                field="tp", value=p.tp)
    if p.pp is not None and p.pp > a.layers:
        raise WorkloadError(f"pp={p.pp} is above the model's {a.layers} layers. To fix: pin pp "
                            f"to at most {a.layers}", field="pp", value=p.pp)
    if p.cp is not None and workload.seq_len % p.cp:
        raise WorkloadError(f"cp={p.cp} must divide the sequence length {workload.seq_len}. "
                            "To fix: pin a power of two that divides it", field="cp",
                            value=p.cp)
    split = (p.tp or 1) * (p.pp or 1) * (p.cp or 1)
    if N % split:
        raise WorkloadError(f"tp·pp·cp = {split} does not divide the {N} GPUs. To fix: change "
                            "the pins or the GPU count", field="tp", value=p.tp)
    if p.vp is not None and p.pp and p.pp > 1 and math.ceil(a.layers / p.pp) % p.vp:
        raise WorkloadError(f"vp={p.vp} must divide the {math.ceil(a.layers / p.pp)} layers of "
                            f"each of the {p.pp} pipeline stages. To fix: pin a divisor",
                            field="vp", value=p.vp)


def estimate(workload: Workload, cluster: Cluster, *, assumptions: Assumptions | None = None,
             calibration: Calibration = NO_CALIBRATION,
             memory_gib: float | None = None) -> Estimate:
    """The fastest plan that fits for ``workload`` on ``cluster`` (within the workload's pins
    and framework); NoFitError when none, WorkloadError when a pin cannot work."""
    A = assumptions or Assumptions()
    check_pins_fit_cluster(workload, cluster)
    ms = ModelScalars.of(workload)
    ci = cluster_inputs(cluster, workload, A, calibration, memory_gib=memory_gib)
    grid = plan_grid(ms, cluster.gpus_per_node, np.array([cluster.nodes]), workload.recompute,
                     workload=workload)
    if len(grid["tp"]) == 0:
        raise NoFitError(_no_grid_message(workload, cluster, ms))
    pruned = prune(ms, A, grid, ci)
    if len(pruned["tp"]) == 0:
        raise NoFitError(no_fit_message(workload, cluster, ms, A, ci,
                                        least_memory(ms, A, grid, ci)))
    scale, found = workload_scales(calibration, workload, cluster.accelerator.name, pruned)
    res = run_model(ms, A, pruned, ci, cluster.gpus_per_node, layer_scale=scale)
    i = best_index(res)
    return summarise(workload, cluster, ms, A, ci, pruned, res, i, measurements=found)


def _no_grid_message(workload: Workload, cluster: Cluster, ms: ModelScalars) -> str:
    gbs = workload.sequences_per_step(cluster.gpus)
    pins = workload.pins.as_dict()
    if pins:
        return (f"no parallel plan with {', '.join(f'{k}={v}' for k, v in pins.items())} "
                f"runs {workload.framework} on {cluster.gpus} GPUs with a global batch of {gbs} "
                "sequences (each data-parallel rank needs whole micro-batches). To fix: lower "
                "the micro-batch, raise --global-batch-tokens, or unpin a degree")
    return (f"no parallel plan divides {cluster.gpus} GPUs for this model (heads {ms.a}, "
            f"global batch {gbs} sequences). To fix: raise --global-batch-tokens or change "
            "the GPU count")


def no_fit_message(workload, cluster, ms, A, ci, least: float) -> str:
    capacity = ci.memory_gib * A.usable_memory_fraction
    hint = ""
    if cluster.inter_node_gbps or cluster.nodes == 1:
        for nodes in (2, 4, 8, 16, 32, 64, 128, 256, 512):
            if nodes <= cluster.nodes or not cluster.inter_node_gbps:
                continue
            grid = plan_grid(ms, cluster.gpus_per_node, np.array([nodes]), workload.recompute,
                             workload=workload)
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
    pins = workload.pins.as_dict()
    pinned = (f" with {', '.join(f'{k}={v}' for k, v in pins.items())} pinned" if pins else "")
    return (f"{ms.params_total / 1e9:.1f}B parameters do not fit on {cluster.gpus}x "
            f"{cluster.accelerator.name}{pinned}: the most memory-frugal plan needs "
            f"{least:.1f} GiB per GPU of {capacity:.1f} usable.{hint} To fix: use more GPUs "
            "(--nodes/--gpus), a GPU with more memory, --recompute full, a smaller "
            "--micro-batch, or fewer pins")
