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

Shapes (``WorkloadShape``) and how far apart they are live in ``_shape``. Nothing here reads
files or prints.
"""

from __future__ import annotations

import dataclasses
import math

from catalog import record

from ._assumptions import Assumptions
from ._calibration import NO_CALIBRATION, Calibration
from ._hardware import Cluster, pcie_link
from ._inputs import cluster_inputs
from ._perf import RECOMPUTE_CODES, evaluate
from ._scalars import ModelScalars
from ._shape import WorkloadShape
from ._workload import Architecture, Workload


def layer_flops(shape: WorkloadShape) -> float:
    """Model FLOPs of one layer, forward + backward (module docstring)."""
    T, h, d = shape.tokens, shape.hidden, shape.head_dim
    a, a_kv = shape.heads, shape.kv_heads
    m = 3 if shape.gated else 2
    f_act = ((shape.experts_per_token + shape.shared_experts) * shape.ffn_hidden
             if shape.experts else shape.ffn_hidden)
    gemm = h * (a + 2 * a_kv) * d + a * d * h + m * h * f_act + h * shape.experts
    return 3 * 2.0 * T * gemm + 3 * 0.5 * 4.0 * T * shape.seq_len * a * d



@record
class LayerHardware:
    """What the model needs of one GPU (the rates `estimate` would use), with their source."""

    matmul_tflops: float  # achievable dense matmul of the training precision
    attention_tflops: float  # the attention kernel's achieved rate
    hbm_gb_per_s: float  # datasheet memory bandwidth (the model applies its efficiency)
    memory_gib: float
    peak_tflops: float  # datasheet dense peak: the bound no measurement can beat
    sm_count: float | None = None  # None: no wave quantization
    notes: tuple[str, ...] = ()


@record
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
                 A: Assumptions | None = None,
                 calibration: Calibration | None = None) -> LayerHardware:
    """The rates `estimate` uses for ``accelerator`` (a catalog Accelerator) on one GPU: the
    datasheet × published fractions, or the probes' measured figures in ``calibration``."""
    A = A or Assumptions()
    cluster = Cluster(accelerator=accelerator, gpus_per_node=1, nodes=1, topology="single",
                      intra_node_gb_per_s_per_gpu=accelerator.intra_node_gb_per_s_per_gpu
                      or pcie_link(accelerator), inter_node_gbps=None, fabric="none")
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
