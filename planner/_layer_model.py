"""One transformer layer as the planner models it, next to what the workload probe measures.

The workload probe (`gpuplan probe workload`) times the user's layers forward + backward on
one GPU; this module gives the planner's own figures for the same layer so the two compare:
modelled time (forward + backward, and the optimizer step apart) and activation memory.

Reference configuration: one GPU, tp = pp = cp = dp = 1, ZeRO 0, one micro-batch of
``micro_batch`` sequences per step. `_perf.evaluate` prices whole models, so one layer is the
difference of a 2-layer and a 1-layer model of the same shape — the output head, the logits
and the embeddings cancel, and the straggler term is 0 on one GPU:

    t_layer   = step(L=2) − step(L=1), trainable fraction 0 (no optimizer step): fwd + bwd
                = compute (matmul + attention) + other (elementwise, launch and host time)
    t_opt     = the same difference with the optimizer step, minus t_layer
    act_layer = activations(L=2) − activations(L=1): bytes one layer keeps for backward

Model FLOPs of one layer, forward + backward (T = s·b tokens per micro-batch; `_perf`'s
convention, causal attention counted half)::

    3 · 2·T·[h·(a + 2·a_kv)·d + a·d·h + m·h·F_act + h·E]  +  3 · ½ · 4·T·s·a·d

with m = 3 gated / 2 not, F_act = F dense or (k + S)·F_e for MoE, E experts (the router).

Shapes compare by `shape_distance` (the calibration's lookup, planner/_calibration.py).
Nothing here reads files or prints.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ._assumptions import Assumptions
from ._workload import Architecture, Workload

MAX_WORKLOAD_DISTANCE = 1.0  # a factor of 2 in tokens per micro-batch, hidden or sequence
FFN_RATIO_TOLERANCE = 0.05  # ffn/hidden of "the same family of shapes", relative


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadShape:
    """One transformer layer's shape as the workload probe runs it: the calibration's key.

    ``ffn_hidden`` is the dense FFN width, or each expert's width for an MoE layer (then
    ``experts`` > 0, top-``experts_per_token``, ``shared_experts`` dense experts of that width).
    ``precision`` is what ran (bf16 or fp16); ``recompute`` is none, selective or full.
    """

    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int
    gated: bool
    seq_len: int
    micro_batch: int
    precision: str
    recompute: str
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0

    def __post_init__(self) -> None:
        for name in ("hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "seq_len",
                     "micro_batch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"workload shape: {name} must be a whole number >= 1, got "
                                 f"{value!r}")
        if self.heads % self.kv_heads:
            raise ValueError("workload shape: heads must be a multiple of kv_heads")
        if self.recompute not in ("none", "selective", "full"):
            raise ValueError(f"workload shape: recompute {self.recompute!r} is not none, "
                             "selective or full")
        if self.precision not in ("bf16", "fp16", "fp8"):
            raise ValueError(f"workload shape: precision {self.precision!r} is not bf16, fp16 "
                             "or fp8")

    @property
    def tokens(self) -> int:
        """Tokens per micro-batch, T = seq_len × micro_batch."""
        return self.seq_len * self.micro_batch

    @property
    def label(self) -> str:
        """A short, stable name: h4096 a32/8 d128 F14336g s8192 b1 bf16 rc:none [E8k2]."""
        moe = (f" E{self.experts}k{self.experts_per_token}"
               + (f"+{self.shared_experts}" if self.shared_experts else "")) \
            if self.experts else ""
        return (f"h{self.hidden} a{self.heads}/{self.kv_heads} d{self.head_dim} "
                f"F{self.ffn_hidden}{'g' if self.gated else ''} s{self.seq_len} "
                f"b{self.micro_batch} {self.precision} rc:{self.recompute}{moe}")


def shape_of(workload: Workload, *, micro_batch: int | None = None,
             recompute: str | None = None) -> WorkloadShape:
    """The layer shape of ``workload``: its MoE layer for a mixture of experts (leading dense
    layers, as DeepSeek's, are not the probed layer); ``micro_batch`` defaults to the pinned
    one, else 1; recompute "auto" becomes "none"."""
    a = workload.arch
    rc = recompute or workload.recompute
    return WorkloadShape(
        hidden=a.hidden, heads=a.heads, kv_heads=a.kv_heads, head_dim=a.d_head,
        ffn_hidden=a.expert_ffn if a.is_moe else a.ffn_hidden, gated=a.gated_ffn,
        seq_len=workload.seq_len,
        micro_batch=micro_batch or workload.pins.micro_batch or 1,
        precision=workload.precision, recompute="none" if rc == "auto" else rc,
        experts=a.experts, experts_per_token=a.experts_per_token,
        shared_experts=a.shared_experts)


def layer_flops(shape: WorkloadShape) -> float:
    """Model FLOPs of one layer, forward + backward (module docstring)."""
    T, h, d = shape.tokens, shape.hidden, shape.head_dim
    a, a_kv = shape.heads, shape.kv_heads
    m = 3 if shape.gated else 2
    f_act = ((shape.experts_per_token + shape.shared_experts) * shape.ffn_hidden
             if shape.experts else shape.ffn_hidden)
    gemm = h * (a + 2 * a_kv) * d + a * d * h + m * h * f_act + h * shape.experts
    return 3 * 2.0 * T * gemm + 3 * 0.5 * 4.0 * T * shape.seq_len * a * d


def comparable(a: WorkloadShape, b: WorkloadShape) -> bool:
    """Same family of shapes: equal precision, recomputation, FFN kind, experts, head dim and
    grouped-query ratio, and the same FFN/hidden ratio within FFN_RATIO_TOLERANCE."""
    same = (a.precision == b.precision and a.recompute == b.recompute and a.gated == b.gated
            and (a.experts, a.experts_per_token, a.shared_experts)
            == (b.experts, b.experts_per_token, b.shared_experts)
            and a.head_dim == b.head_dim and a.heads * b.kv_heads == b.heads * a.kv_heads)
    ra, rb = a.ffn_hidden / a.hidden, b.ffn_hidden / b.hidden
    return same and abs(ra - rb) <= FFN_RATIO_TOLERANCE * rb


def shape_distance(a: WorkloadShape, b: WorkloadShape) -> float | None:
    """How far apart two shapes are; None when they are not `comparable`.

    d = √(log2(T_a/T_b)² + log2(h_a/h_b)² + log2(s_a/s_b)²), T tokens per micro-batch, h
    hidden, s sequence length: 1.0 is a factor of two in one of them (a doubled micro-batch,
    or hidden size), √2 a doubled sequence at the same micro-batch. 0 only for equal shapes.
    """
    if not comparable(a, b):
        return None
    if a == b:
        return 0.0
    terms = (math.log2(a.tokens / b.tokens), math.log2(a.hidden / b.hidden),
             math.log2(a.seq_len / b.seq_len))
    return math.sqrt(sum(t * t for t in terms)) or 1e-9  # equal sizes, other heads: not 0


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerHardware:
    """What the model needs of one GPU (the rates `estimate` would use), with their source."""

    matmul_tflops: float  # achievable dense matmul of the training precision
    attention_tflops: float  # the attention kernel's achieved rate
    hbm_gb_per_s: float  # datasheet memory bandwidth (the model applies its efficiency)
    memory_gib: float
    peak_tflops: float  # datasheet dense peak: the bound no measurement can beat
    sm_count: float | None = None  # None: no wave quantization
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerModel:
    """The planner's figures for one layer, one micro-batch, one GPU (module docstring)."""

    layer_seconds: float  # forward + backward
    compute_seconds: float  # matmul + attention
    other_seconds: float  # elementwise, launch and host time
    optimizer_seconds: float  # the AdamW step of one layer's parameters
    activation_bytes: float  # kept for backward, one layer
    flops: float  # model FLOPs, forward + backward

    def __post_init__(self) -> None:
        if not (math.isfinite(self.layer_seconds) and self.layer_seconds > 0):
            raise ValueError(f"modelled layer time must be > 0, got {self.layer_seconds!r}")


def _workload(shape: WorkloadShape, *, layers: int, framework: str, attention: str
              ) -> Workload:
    arch = Architecture(
        layers=layers, hidden=shape.hidden, heads=shape.heads, kv_heads=shape.kv_heads,
        head_dim=shape.head_dim, ffn_hidden=shape.ffn_hidden, vocab=1, gated_ffn=shape.gated,
        experts=shape.experts, experts_per_token=shape.experts_per_token,
        shared_experts=shape.shared_experts, name="workload probe layer")
    return Workload(arch=arch, tokens=1e9, seq_len=shape.seq_len,
                    global_batch_tokens=shape.tokens, precision=shape.precision,
                    recompute=shape.recompute, framework=framework, attention=attention)


def model_attention(backend: str | None) -> str:
    """The model's attention kind for the SDPA backend the probe ran: the math backend
    materialises the scores (unfused); flash, cuDNN and memory-efficient kernels do not."""
    return "unfused" if backend == "math" else "flash"


def hardware_for(accelerator, shape: WorkloadShape, *, framework: str, attention: str,
                 A: Assumptions | None = None, calibration=None) -> LayerHardware:
    """The rates `estimate` uses for ``accelerator`` (a catalog Accelerator) on one GPU: the
    datasheet × published fractions, or the probes' measured figures in ``calibration``."""
    from ._calibration import NO_CALIBRATION
    from ._estimate import cluster_inputs
    from ._hardware import Cluster

    A = A or Assumptions()
    cluster = Cluster(accelerator=accelerator, gpus_per_node=1, nodes=1, topology="single",
                      intra_node_gb_per_s_per_gpu=accelerator.intra_node_gb_per_s_per_gpu
                      or 64.0, inter_node_gbps=None, fabric="none")
    ci = cluster_inputs(cluster, _workload(shape, layers=1, framework=framework,
                                           attention=attention), A,
                        calibration or NO_CALIBRATION)
    return LayerHardware(matmul_tflops=ci.matmul_tflops, attention_tflops=ci.attention_tflops,
                         hbm_gb_per_s=ci.hbm_gb_per_s, memory_gib=ci.memory_gib,
                         peak_tflops=ci.peak_tflops,
                         sm_count=None if math.isnan(ci.sm_count) else ci.sm_count,
                         notes=ci.notes)


def model_layer(shape: WorkloadShape, *, hardware: LayerHardware, framework: str,
                attention: str = "flash", A: Assumptions | None = None) -> LayerModel:
    """The planner's time and activation memory of one layer of ``shape`` (module docstring).
    Pure: the same inputs give the same figures."""
    import numpy as np

    from ._perf import RECOMPUTE_CODES, ModelScalars, evaluate

    A = A or Assumptions()

    def run(layers: int, trainable: float) -> dict:
        ms = ModelScalars.of(_workload(shape, layers=layers, framework=framework,
                                       attention=attention))
        ms = dataclasses.replace(ms, trainable_fraction=trainable)

        def one(x):
            return np.array([x], dtype=np.float64)

        res = evaluate(ms, A, tp=one(1), pp=one(1), dp=one(1), zero=one(0),
                       mb=one(shape.micro_batch), rc=one(RECOMPUTE_CODES[shape.recompute]),
                       gpus_per_node=one(1), matmul_tflops=one(hardware.matmul_tflops),
                       attention_tflops=one(hardware.attention_tflops),
                       hbm_gb_per_s=one(hardware.hbm_gb_per_s),
                       memory_gib=one(hardware.memory_gib), intra_busbw_gb_per_s=one(1.0),
                       nic_gb_per_s_per_gpu=one(0.0), cp=one(1), vp=one(1),
                       gbs=one(shape.micro_batch),
                       sm_count=None if hardware.sm_count is None else one(hardware.sm_count),
                       hop_latency_s=one(0.0))
        return {k: float(v[0]) for k, v in res.items()}

    one_l, two_l = run(1, 0.0), run(2, 0.0)
    one_o, two_o = run(1, 1.0), run(2, 1.0)
    layer = two_l["step_s"] - one_l["step_s"]
    return LayerModel(
        layer_seconds=layer, compute_seconds=two_l["compute_s"] - one_l["compute_s"],
        other_seconds=two_l["other_s"] - one_l["other_s"],
        optimizer_seconds=(two_o["step_s"] - one_o["step_s"]) - layer,
        activation_bytes=(two_l["memory_activations_gib"]
                          - one_l["memory_activations_gib"]) * 2**30,
        flops=layer_flops(shape))


def probe_options(shape: WorkloadShape, *, model_layers: int, framework: str,
                  model: str = "custom", tp: int = 1) -> tuple[str, ...]:
    """The `python -m probes workload` options that rebuild ``shape`` on a node where only the
    probes package is installed (what `gpuplan launch` copies)."""
    opts = ["--hidden", str(shape.hidden), "--heads", str(shape.heads), "--kv-heads",
            str(shape.kv_heads), "--head-dim", str(shape.head_dim), "--ffn-hidden",
            str(shape.ffn_hidden), "--gated" if shape.gated else "--no-gated", "--seq-len",
            str(shape.seq_len), "--micro-batch", str(shape.micro_batch), "--precision",
            shape.precision, "--recompute", shape.recompute, "--framework", framework,
            "--layers", str(model_layers), "--model-name", model]
    if shape.experts:
        opts += ["--experts", str(shape.experts), "--experts-per-token",
                 str(shape.experts_per_token)]
        if shape.shared_experts:
            opts += ["--shared-experts", str(shape.shared_experts)]
    if tp > 1:
        opts += ["--tp", str(tp)]
    return tuple(opts)


__all__ = ["MAX_WORKLOAD_DISTANCE", "LayerHardware", "LayerModel", "WorkloadShape",
           "comparable", "hardware_for", "layer_flops", "model_attention", "model_layer",
           "probe_options", "shape_distance", "shape_of"]
