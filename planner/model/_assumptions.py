"""Every constant of the performance model, with where its value comes from.

Three layers, as in docs/design.md:
- *physics*: datasheet peaks and bandwidths (the catalog), achievable fractions measured by
  others (MAMF, nccl-tests), FLOP and byte counts;
- *software*: per framework profile, how close a real training stack gets to that physics —
  fitted on published measured throughput by ``benchmarks/fit_software.py`` (values and
  provenance in ``_fitted``), never on single runs or on end-to-end runs;
- *operations*: what turns training time into calendar time (failures, restarts,
  checkpoints, evaluation, stalls), from published operations reports.

``Assumptions`` is frozen; ``with_overrides`` (the CLI's ``--assume name=value`` and
``--assume table.entry=value``) returns a copy, and probe calibration replaces the achievable
matmul throughput and bus bandwidths per accelerator/instance (see ``_calibration``). There is
no single "utilisation" knob: time comes from FLOPs, bytes and link speeds, each with its own
constant.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType

from catalog import CLOUDS, UnknownNameError, record

from . import _fitted
from ._assumption_docs import DOCS
from ._errors import PlannerError


def _table(values: Mapping[str, float]):
    """A read-only table default (frozen records must not hold shared mutable dicts)."""
    return field(default_factory=lambda: MappingProxyType(dict(values)))

# Achievable dense bf16 matmul as a fraction of datasheet peak, per GPU architecture: the
# "maximum achievable matmul FLOPS" (MAMF) measured with mamf-finder.py and published in
# stas00/ml-engineering compute/accelerator/README.md (MAMF comparison table):
# A100 SXM 267.9/312 = 0.859, A100 PCIe 256.4/312 = 0.822, H100 SXM 792.1/989 = 0.801,
# GH200 821/989 = 0.830, MI250X 147/191.5 = 0.767 (per GCD), MI300X 781.9/1300 = 0.601,
# B200 1745/2250 = 0.776. Architectures without a published MAMF use DEFAULT (stated in the
# estimate's assumptions so users know to run `gpuplan probe run`).
MAMF_FRACTION = {
    "ampere-ga100-sxm": 0.859,
    "ampere-ga100-pcie": 0.822,
    "hopper": 0.801,
    "blackwell": 0.776,
    "cdna2": 0.767,
    "cdna3": 0.601,
}
DEFAULT_MATMUL_FRACTION = 0.70  # no published measurement: a conservative default

# Attention kernels: achieved fwd+bwd TFLOP/s as a share of the dense 16-bit peak, head dim
# 128, long sequences. Backward does 2.5× the forward FLOPs, so the combined rate is
# 3.5 / (1/fwd + 2.5/bwd). FlashAttention-3 paper (arXiv:2407.08608, Figs. 5–6, H100 SXM5,
# 4k–8k tokens): FlashAttention-2 fwd ≈ 369, bwd ≈ 314 TFLOP/s → 0.33 of 989 ("FlashAttention-2
# achieving only 35% utilization on the H100"); cuDNN fused attention fwd ≈ 605, bwd ≈ 508 →
# 0.54; FlashAttention-3 fwd ≈ 642, bwd ≈ 551 → 0.58. A100: FlashAttention-2 reaches 50–73% of
# peak (arXiv:2307.08691 §4), ≈ 190 of 312 TFLOP/s fwd+bwd → 0.61. Hopper-class kernels
# ("fused": cuDNN/FA3) need Hopper or newer; elsewhere every kernel is FlashAttention-2 class.
# Blackwell and AMD have no comparable published kernel figure: they use the Hopper and A100
# values respectively (stated in the estimate).
# The 2022 FlashAttention in Triton (MPT/llm-foundry's attn_impl=triton): FlashAttention-2 is
# 1.3–1.5× faster forward and ≈ 2× faster backward (arXiv:2307.08691 §4.1), i.e. with fwd 0.70
# and bwd 0.60 of peak for FA2, the Triton kernel runs at 3.5/(1.4/0.70 + 2·2.5/0.60) = 0.34
# against FA2's 0.63: 0.54× FlashAttention-2, taken to hold on Hopper too.
TRITON_VS_FA2 = 0.54
ATTENTION_FRACTION = {
    "fa2/hopper": 0.33,
    "fused/hopper": 0.54,
    "fa2/other": 0.61,
    "triton/hopper": round(0.33 * TRITON_VS_FA2, 3),
    "triton/other": round(0.61 * TRITON_VS_FA2, 3),
}
# Which attention kernel each framework profile runs on Hopper and newer: Megatron-Core/NeMo
# use Transformer Engine's cuDNN fused attention; PyTorch SDPA (torchtitan, llm-foundry, HF)
# and DeepSpeed use FlashAttention-2.
FRAMEWORK_ATTENTION_KERNEL = {"megatron": "fused", "fsdp": "fa2", "deepspeed": "fa2",
                              "hf": "fa2"}

# GEMM output tiles are spread over the device's SMs/CUs in waves (their count per device is a
# planning fact of the catalog, ``Accelerator.sm_count``); a partial last wave idles SMs.
GEMM_TILE_M, GEMM_TILE_N = 128, 256  # cuBLAS/CUTLASS large-GEMM tile for 16-bit inputs

# Intra-node all-reduce bus bandwidth as a fraction of the per-direction link bandwidth.
# nccl-tests all_reduce_perf on 8-GPU NVSwitch boards reaches ≈ 0.78 (DGX A100: ~235 of
# 300 GB/s) to ≈ 0.81 (DGX H100: ~365 of 450 GB/s) at large messages (NVIDIA nccl-tests
# results quoted in stas00/ml-engineering network/README.md). PCIe paths through the host
# bridge reach less; partial NVLink meshes (V100 hybrid cube-mesh) in between.
INTRA_NODE_EFFICIENCY = {
    "nvswitch": 0.80, "xgmi": 0.70, "ici": 0.80, "neuronlink": 0.70, "nvlink": 0.70,
    "roce": 0.70, "pcie": 0.60, "single": 1.0,
}
# Inter-node bus bandwidth as a fraction of the instance's collective network line rate.
# RDMA fabrics (InfiniBand NDR/HDR, EFA with libfabric/aws-ofi-nccl, RoCE) reach 0.75–0.9 in
# nccl-tests; TCP-based GPUDirect-TCPX less; plain Ethernet without RDMA much less (kernel TCP
# stack, one socket per ring). Assumptions until a multi-node probe measures them.
INTER_NODE_EFFICIENCY = {
    "infiniband": 0.85, "roce": 0.80, "efa": 0.75, "gpudirect_tcpx": 0.70, "ethernet": 0.40,
}
# GPUs one NVLink switch domain joins, where it spans more than one instance: a GB200 NVL72
# rack joins 72 GPUs (18 compute trays of 4) through its NVLink switch trays (NVIDIA GB200
# NVL72 specification, nvidia.com/en-us/data-center/gb200-nvl72/; AWS p6e-gb200 UltraServers,
# Azure ND GB200 v6 and GCP A4X sell 4-GPU slices of such racks). An accelerator not listed
# has a domain of one node. Collectives whose members share a domain run over NVLink.
NVLINK_DOMAIN_GPUS = {"GB200-186GB": 72}
# A topology or fabric the tables do not know (a new catalog value) is costed as the slowest
# known kind of link: PCIe through the host bridge, plain Ethernet without RDMA.
FALLBACK_TOPOLOGY, FALLBACK_FABRIC = "pcie", "ethernet"
# Spot interruptions per instance-hour when an offer has none of its own: each cloud's own
# default, named once in the cloud registry.
SPOT_INTERRUPTIONS_PER_HOUR = {name: cloud.spot_interruptions_per_hour
                               for name, cloud in CLOUDS.items()}


@record
class Assumptions:
    # -- compute (physics) -----------------------------------------------------------------
    matmul_fraction: Mapping[str, float] = _table(MAMF_FRACTION)
    default_matmul_fraction: float = DEFAULT_MATMUL_FRACTION
    # fp8 GEMMs (Transformer Engine) reach a lower fraction of their 2x peak than bf16 does,
    # and add amax/cast kernels; relative factor applied on top of the bf16 fraction.
    fp8_relative_fraction: float = _fitted.FP8_RELATIVE_FRACTION
    # GEMM tile pipeline: each output tile runs K/64 main-loop steps plus ≈ 3 steps of
    # prologue/epilogue (CUTLASS/cuBLAS multistage pipelines are 3–4 deep), so short K (small
    # hidden sizes per TP shard) do not fill the GPU. Normalised to 1 at the MAMF shape K≈4096.
    gemm_tile_k: int = 64
    gemm_tile_overhead_steps: float = 3.0
    # Attention kernels' published share of peak (ATTENTION_FRACTION), and a fitted multiplier
    # on it for what a training step achieves (masking, ALiBi/rotary, head dims, GQA).
    attention_fraction: Mapping[str, float] = _table(ATTENTION_FRACTION)
    attention_efficiency: float = _fitted.ATTENTION_EFFICIENCY
    # Share of a MoE layer's compute under which its expert-parallel all-to-all (token
    # dispatch and combine) hides: Megatron's overlap of one micro-batch's all-to-all with
    # another's compute, DeepEP, DualPipe. Fitted on measured MoE throughput.
    ep_comm_overlap: float = _fitted.EP_COMM_OVERLAP
    # GPU time per MoE layer and micro-batch that does not scale with its tokens: the host
    # waits for the router's per-expert token counts to size the dispatch (a device-to-host
    # synchronisation that drains the launch queue) and launches the router, permutation and
    # grouped-GEMM kernels. Fitted on measured MoE throughput, as ep_comm_overlap.
    moe_overhead_s_per_layer: float = _fitted.MOE_OVERHEAD_S_PER_LAYER
    # Spread of log(measured / modelled) throughput of MoE workloads: the MoE fit's held-out
    # residuals (wider than the dense profiles'; an MoE estimate's range uses the wider).
    moe_throughput_log_sigma: float = _fitted.MOE_THROUGHPUT_LOG_SIGMA
    # Attention kernels are slower on short sequences (fewer blocks per head to pipeline):
    # rate ∝ 1 / (1 + s₀/s). The FA3 paper's FlashAttention-2 H100 figures give combined
    # fwd+bwd rates of 235, 281, 308, 325, 329 TFLOP/s at 512, 1k, 2k, 4k, 8k tokens, which
    # s₀ ≈ 210 tokens reproduces within 4%; the fractions above are the long-sequence values.
    attention_ramp_tokens: float = 210.0
    # Causal masking lets FlashAttention skip ≈ half the score blocks.
    causal_fraction: float = 0.5
    # Achievable HBM bandwidth for elementwise kernels (STREAM-like copies reach 85–91% of the
    # datasheet; e.g. 90.6% measured on H100 NVL in a public ceiling probe).
    memory_bandwidth_efficiency: float = 0.85
    # Selective recomputation (Korthikanti et al. 2022, arXiv:2205.05198 §5) keeps the layer's
    # GEMM outputs and redoes the cheap elementwise work it dropped from memory — the
    # activation function (and the attention core, counted with attention) — in the backward
    # pass: this share of one forward pass's elementwise bytes. The activation function moves
    # 3F of the 14h + 3F bytes per token, 0.36 at F = 8/3·h; fused SwiGLU kernels move less.
    # An assumption (neither fitted nor measured), bounded by that count.
    selective_recompute_elementwise_share: float = 0.3
    # Eager PyTorch issues one op in ≈ 4.2 µs from Python; a transformer block runs ≈ 20
    # kernels forward and ≈ 40 backward: the GPU idles when kernels are shorter than that.
    kernel_launch_s: float = 4.2e-6
    kernels_per_layer: int = 60
    # -- software layer, per framework profile (fitted; see _fitted and benchmarks/) -------
    # GEMMs inside a training step reach this fraction of the achievable (MAMF) matmul rate:
    # real shapes, sustained clocks under a full step's power draw, framework GEMM choices.
    gemm_efficiency: Mapping[str, float] = _table(_fitted.GEMM_EFFICIENCY)
    # Non-matmul kernels (norms, activation, rotary, residuals, loss, casts) move this many
    # times the bytes a fully fused implementation would: kernel fusion of the stack.
    elementwise_factor: Mapping[str, float] = _table(_fitted.ELEMENTWISE_FACTOR)
    # Share of overlappable communication (gradient reduction, ZeRO/FSDP gathers, context-
    # parallel ring exchange) the framework hides under compute.
    comm_overlap: Mapping[str, float] = _table(_fitted.COMM_OVERLAP)
    # Share of tensor-parallel communication hidden under GEMMs (Megatron/TE's tp-comm-
    # overlap; 0 = none).
    tp_comm_overlap: Mapping[str, float] = _table(_fitted.TP_COMM_OVERLAP)
    # Fixed host-side time per micro-batch per layer (Python dispatch, hooks, framework
    # bookkeeping) that is not hidden behind GPU work.
    host_overhead_s_per_layer: Mapping[str, float] = _table(_fitted.HOST_OVERHEAD_S_PER_LAYER)
    # Spread of log(measured / modelled) step throughput under each profile: leave-one-
    # source-out residuals of the fit (a profile with no calibration data adds the spread
    # between profiles). The P10–P90 range of an estimate comes from these.
    throughput_log_sigma: Mapping[str, float] = _table(_fitted.THROUGHPUT_LOG_SIGMA)
    # -- communication (physics) -----------------------------------------------------------
    intra_node_efficiency: Mapping[str, float] = _table(INTRA_NODE_EFFICIENCY)
    inter_node_efficiency: Mapping[str, float] = _table(INTER_NODE_EFFICIENCY)
    nvlink_domain_gpus: Mapping[str, float] = _table(NVLINK_DOMAIN_GPUS)
    intra_node_latency_s: float = 10e-6  # nccl-tests small-message latency on NVLink
    # One network hop of a NCCL ring/tree step across nodes: a few µs of wire and NIC latency
    # plus NCCL's per-step protocol overhead on RDMA fabrics (IB/RoCE/EFA); TCP-based paths
    # (GPUDirect-TCPX, plain Ethernet) pay the kernel network stack as well.
    inter_node_latency_s: float = 10e-6
    inter_node_latency_tcp_s: float = 30e-6
    # Gradients are reduced in buckets (PyTorch DDP's default bucket_cap_mb = 25).
    grad_bucket_bytes: float = 25 * 2**20
    # While NCCL overlaps with compute it occupies SMs (one CTA per channel; 16–32 channels on
    # 108–132-SM GPUs by default) and HBM bandwidth: compute runs this much slower meanwhile.
    overlap_compute_slowdown: float = 0.15
    # Synchronous steps wait for the slowest GPU. GPUs of one model differ by a few percent in
    # sustained speed (Sinha et al., "Not All GPUs Are Created Equal", SC'22); with a
    # coefficient of variation cv the slowest of n is ≈ 1 + cv·√(2·ln n) times the mean.
    gpu_speed_cv: float = 0.02
    # bf16 gradient reduction, as the measured recipes run it: NeMo's performance scripts set
    # grad_reduce_in_fp32=False (scripts/performance/helpers.py), FSDP MixedPrecision a bf16
    # reduce_dtype. Megatron-LM's default and NeMo's default plugin reduce in fp32: 4, which on
    # megatron also holds the gradients in fp32 (``FrameworkProfile.grads_in_reduce_dtype``).
    grad_reduce_bytes: int = 2
    # -- memory ------------------------------------------------------------------------------
    runtime_reserve_gib: float = 2.5  # CUDA context (~0.5–1 GiB) + NCCL buffers (~1–2 GiB)
    usable_memory_fraction: float = 0.95  # caching-allocator fragmentation
    logits_bytes: int = 4  # fp32 softmax/cross-entropy buffer over the vocabulary
    # -- operations: training time → calendar time --------------------------------------------
    failure_rate_per_gpu_hour: float = _fitted.FAILURE_RATE_PER_GPU_HOUR
    restart_minutes: float = _fitted.RESTART_MINUTES
    checkpoint_write_gb_per_s_per_node: float = 2.0  # to a parallel FS / object store
    checkpoint_read_gb_per_s_per_node: float = 4.0
    # Share of calendar time spent on periodic evaluation, data-pipeline stalls and other
    # operational losses not modelled as failures (loss spikes and rollbacks, maintenance,
    # slow nodes swapped out), from published effective-training-time reports.
    evaluation_fraction: float = _fitted.EVALUATION_FRACTION
    operational_loss_fraction: float = _fitted.OPERATIONAL_LOSS_FRACTION
    # Spread of log(calendar / modelled) from the operations data: widens the wall-clock
    # range beyond the throughput range.
    operations_log_sigma: float = _fitted.OPERATIONS_LOG_SIGMA
    # -- spot ---------------------------------------------------------------------------------
    # Interruptions per instance-hour when the catalog has no rate for an offer, per cloud:
    # each cloud's default from the cloud registry (catalog.CLOUDS, with its source). They
    # are assumptions, not measurements: AWS and Azure publish only coarse monthly buckets,
    # far below what large GPU instances see; GCP's old preemptible VMs lived at most 24 h.
    spot_interruptions_per_hour: Mapping[str, float] = _table(SPOT_INTERRUPTIONS_PER_HOUR)
    spot_restart_minutes: float = 30.0  # re-acquire capacity, re-launch, reload
    # Names the user overrode (so an estimate can say when an override had no effect).
    overridden: tuple[str, ...] = ()

    def software(self, framework: str) -> SoftwareConstants:
        """The fitted software-layer constants of one framework profile."""
        return SoftwareConstants(
            gemm_efficiency=self.gemm_efficiency[framework],
            elementwise_factor=self.elementwise_factor[framework],
            comm_overlap=self.comm_overlap[framework],
            tp_comm_overlap=self.tp_comm_overlap[framework],
            host_overhead_s_per_layer=self.host_overhead_s_per_layer[framework])

    def with_overrides(self, **values: float) -> Assumptions:
        """A copy with ``name=value`` (scalars) or ``"table.entry"=value`` (table entries)."""
        return _with_overrides(self, values)


@record
class SoftwareConstants:
    gemm_efficiency: float
    elementwise_factor: float
    comm_overlap: float
    tp_comm_overlap: float
    host_overhead_s_per_layer: float


# Allowed range per constant (inclusive); anything outside is a typo or a unit mistake.
# Fractions live in [0.01, 1] (the lowest default is 0.18: an efficiency of 5e-324 was
# accepted and made every figure NaN or a 300-digit number); factors and times have generous
# physical bounds.
_FRACTIONS = {"matmul_fraction", "default_matmul_fraction", "fp8_relative_fraction",
              "attention_fraction", "causal_fraction", "memory_bandwidth_efficiency",
              "gemm_efficiency", "intra_node_efficiency", "inter_node_efficiency",
              "usable_memory_fraction"}
_SHARES = {"comm_overlap", "tp_comm_overlap", "ep_comm_overlap", "overlap_compute_slowdown",
           "selective_recompute_elementwise_share",
           "evaluation_fraction", "operational_loss_fraction"}  # [0, 1)
_BOUNDS = {
    "gemm_tile_k": (1, 4096), "gemm_tile_overhead_steps": (0, 100),
    "kernel_launch_s": (0, 1e-2), "kernels_per_layer": (0, 10_000),
    "elementwise_factor": (0.1, 100), "attention_efficiency": (0.05, 2.0),
    "attention_ramp_tokens": (0, 1e6), "host_overhead_s_per_layer": (0, 1.0),
    "throughput_log_sigma": (0, 3), "operations_log_sigma": (0, 3),
    "moe_throughput_log_sigma": (0, 3),
    "intra_node_latency_s": (0, 1e-2), "inter_node_latency_s": (0, 1e-2),
    "inter_node_latency_tcp_s": (0, 1e-2), "grad_bucket_bytes": (2**10, 2**34),
    "moe_overhead_s_per_layer": (0, 1.0), "gpu_speed_cv": (0, 0.5),
    "nvlink_domain_gpus": (1, 1_000_000),
    "grad_reduce_bytes": (1, 8), "runtime_reserve_gib": (0, 1024),
    "logits_bytes": (0, 16), "failure_rate_per_gpu_hour": (0, 1.0),
    "restart_minutes": (0, 7 * 24 * 60), "checkpoint_write_gb_per_s_per_node": (1e-3, 1e4),
    "checkpoint_read_gb_per_s_per_node": (1e-3, 1e4),
    "spot_interruptions_per_hour": (0, 10), "spot_restart_minutes": (0, 7 * 24 * 60),
}
_INTEGER = {"nvlink_domain_gpus", "gemm_tile_k", "kernels_per_layer", "grad_reduce_bytes",
            "logits_bytes"}


MIN_FRACTION = 0.01


def _bounds(name: str) -> tuple[float, float]:
    """(low, high), both allowed."""
    if name in _FRACTIONS:
        return MIN_FRACTION, 1.0
    if name in _SHARES:
        return 0.0, 0.999
    return _BOUNDS[name]




def describe_assumptions(a: Assumptions | None = None) -> list[dict]:
    """Every overridable constant: name (as --assume takes it), value, unit, what and source."""
    a = a or Assumptions()
    out = []
    for name in assumption_names(a):
        field_name, _, entry = name.partition(".")
        value = getattr(a, field_name)[entry] if entry else getattr(a, field_name)
        unit, doc = DOCS[field_name]
        out.append({"name": name, "value": value, "unit": unit, "about": doc,
                    "overridden": name in a.overridden})
    return out


def overrides_note(a: Assumptions) -> str | None:
    """One line naming each constant ``assume`` set, with its value and the default it
    replaced; None when none was set."""
    if not a.overridden:
        return None
    default, parts = Assumptions(), []
    for name in a.overridden:
        field_name, _, entry = name.partition(".")
        now, was = getattr(a, field_name), getattr(default, field_name)
        if entry:  # a table entry (a whole table cannot be set)
            now, was = now[entry], was.get(entry)
        # a spot rate is the fallback for offers that publish none: an offer's own rate wins
        only = (f"; for {entry} spot offers without a published rate" if
                field_name == "spot_interruptions_per_hour" else "")
        parts.append(f"{name} = {now:g}" + (f" (default {was:g}{only})" if isinstance(
            was, int | float) and not isinstance(was, bool) else ""))
    return "set with `assume`: " + "; ".join(parts)


def assumption_names(a: Assumptions | None = None) -> list[str]:
    """Every name ``--assume`` accepts: scalars, and ``table.entry`` for each table entry."""
    a = a or Assumptions()
    names = []
    for f in dataclasses.fields(a):
        if f.name == "overridden":
            continue
        value = getattr(a, f.name)
        if isinstance(value, Mapping):
            names.extend(f"{f.name}.{k}" for k in value)
        else:
            names.append(f.name)
    return names


def _exact(x: float) -> str:
    """A bound as a value one can pass back: 17,179,869,184, not 1.71799e+10 (which is below
    it); the shortest repr for a fraction."""
    if float(x).is_integer() and abs(x) < 1e16:
        return f"{int(x):,}"
    return repr(float(x))


def _with_overrides(a: Assumptions, values: Mapping[str, object]) -> Assumptions:
    scalars: dict[str, object] = {}
    tables: dict[str, dict] = {}
    fields = {f.name for f in dataclasses.fields(a)} - {"overridden"}
    for key, value in values.items():
        name, _, entry = key.partition(".")
        if name not in fields:
            raise UnknownNameError("assumption", key, assumption_names(a), field="assume",
                                   hint="`gpuplan estimate --list-assumptions` lists every name")
        current = getattr(a, name)
        if isinstance(current, Mapping) and not entry:
            raise PlannerError(
                f"assumption {name!r} is a table; override one entry. To fix: e.g. `assume` "
                f"{name}.{next(iter(current))}=… (entries: {', '.join(current)})",
                field="assume", value=key)
        if not isinstance(current, Mapping) and entry:
            raise PlannerError(f"assumption {name!r} is a single number, not a table. To fix: "
                               f"`assume` {name}=…", field="assume", value=key)
        if entry and entry not in current:
            raise UnknownNameError(f"{name} entry", entry, current, field="assume",
                                   hint=f"use one of {', '.join(current)}")
        if (isinstance(value, bool) or not isinstance(value, int | float)
                or not math.isfinite(value)):
            now = current[entry] if entry else current  # a valid example: the value in force
            raise PlannerError(f"assumption {key}={value!r} must be a finite number. To fix: "
                               f"e.g. `assume` {key}={now:g}", field="assume", value=key)
        low, high = _bounds(name)
        if not low <= value <= high:
            raise PlannerError(f"assumption {key}={_exact(value)} is outside "
                               f"[{_exact(low)}, {_exact(high)}]. To fix: pass a value in that "
                               "range", field="assume", value=key)
        if name in _INTEGER:
            if value != int(value):
                raise PlannerError(f"assumption {key} must be a whole number, got {value:g}. "
                                   f"To fix: e.g. `assume` {key}={int(value)}",
                                   field="assume", value=key)
            value = int(value)
        if entry:
            tables.setdefault(name, dict(current))[entry] = float(value)
        else:
            scalars[name] = value
    changes = {**scalars, **{k: MappingProxyType(v) for k, v in tables.items()}}
    # Each share is checked alone above; these two are taken from the same calendar time, so
    # together they must leave some of it (0.5 + 0.5 gave "the fastest takes inf h").
    lost = {k: scalars.get(k, getattr(a, k))
            for k in ("evaluation_fraction", "operational_loss_fraction")}
    if sum(lost.values()) > _bounds("evaluation_fraction")[1]:
        key = next(k for k in reversed(list(values)) if k in lost)
        raise PlannerError(
            "assumptions evaluation_fraction + operational_loss_fraction = "
            f"{' + '.join(f'{v:g}' for v in lost.values())} leave no calendar time for "
            f"training (together at most {_bounds('evaluation_fraction')[1]:g}). To fix: lower "
            "one of them", field="assume", value=key)
    return dataclasses.replace(a, **changes,
                               overridden=tuple(dict.fromkeys((*a.overridden, *values))))


def attention_key(architecture: str, framework: str, attention: str = "flash") -> str:
    """The ATTENTION_FRACTION entry for a GPU architecture, framework and attention kind."""
    arch = architecture.lower()
    generation = "hopper" if ("hopper" in arch or "blackwell" in arch) else "other"
    if attention == "triton":
        return f"triton/{generation}"
    kernel = FRAMEWORK_ATTENTION_KERNEL[framework] if generation == "hopper" else "fa2"
    return f"{kernel}/{generation}"


def gpu_family(architecture: str, form_factor: str) -> str:
    """The MAMF family key for an accelerator's architecture string."""
    arch = architecture.lower()
    if "ga100" in arch:
        return "ampere-ga100-pcie" if "pcie" in form_factor.lower() else "ampere-ga100-sxm"
    for needle, family in (("hopper", "hopper"), ("blackwell", "blackwell"),
                           ("cdna 2", "cdna2"), ("cdna 3", "cdna3")):
        if needle in arch:
            return family
    return arch.split(" ")[0] or "unknown"
