"""The workload section of a probe report (schema 3): the user's transformer layers timed
forward + backward + AdamW on one node (``python -m probes workload``, ``probes._workload``)."""

from __future__ import annotations

from dataclasses import dataclass

from probes._spread import (
    Spread,
    Status,
    check_count,
    check_non_negative,
    check_positive,
    check_seconds,
    check_status,
)
from probes._workload_config import FRAMEWORKS, LIMITS, PRECISIONS, RECOMPUTE


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSplit:
    """Where one layer's forward + backward time went, in seconds per layer per step.

    ``source`` says how it was found: "torch.profiler: ..." (the shares of the profiled self
    time of the operators, applied to the timed forward + backward), or "not available: why".
    matmul: GEMM operators (aten::mm, addmm, _scaled_mm); attention: the attention core (the
    SDPA kernel, forward and backward, and batched matmuls of the math fallback);
    communication: collectives (the tensor-parallel all-reduces, and waiting for them); other:
    every other operator (norms, rotary, activation function, residuals, routing, copies) and
    host time. ``optimizer_seconds`` is timed on its own (not profiled), per layer.
    """

    source: str
    matmul_seconds: float | None = None
    attention_seconds: float | None = None
    other_seconds: float | None = None
    optimizer_seconds: float | None = None
    communication_seconds: float | None = None  # tensor-parallel all-reduces (tp > 1)

    def __post_init__(self) -> None:
        seconds = {"matmul_seconds": self.matmul_seconds,
                   "attention_seconds": self.attention_seconds,
                   "other_seconds": self.other_seconds,
                   "optimizer_seconds": self.optimizer_seconds,
                   "communication_seconds": self.communication_seconds}
        check_non_negative("workload.split", **seconds)
        check_seconds("workload.split", **seconds)


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadSection:
    """The workload probe: ``layers`` transformer layers of the user's model, built in plain
    PyTorch at its real shapes on every GPU, timed forward + backward + AdamW step.

    Shapes are the model's (``tp`` = 1) or one tensor-parallel shard's (heads, KV heads and FFN
    width divided by ``tp``; the fields hold the whole model's). Per-layer figures are the
    all-layer figures divided by ``layers``; medians over ``steps`` timed steps after
    ``warmup_steps``, with the 10th/90th percentiles over steps.

    Memory (bytes): ``static_memory_bytes`` is what the allocator held before the forward
    (weights, fp32 master weights and AdamW moments); ``layer_activation_bytes`` what the
    forward added (saved for backward) per layer; ``peak_memory_bytes`` the allocator's peak
    over a whole step. These three need a CUDA allocator (None on CPU). ``layer_saved_bytes``
    is the same activation figure counted on any device: the storages autograd saved for
    backward (torch.autograd.graph.saved_tensors_hooks, each storage once, parameters and
    buffers excluded) plus what activation checkpoints keep (their inputs), per layer.
    """

    status: Status
    reason: str | None = None
    model: str  # "llama3-8b", a config's own name ("tiny-llama"), "7B (inferred)", "custom"
    framework: str  # the planner's framework profile the measurement stands for
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn_hidden: int  # the dense FFN width, or each expert's width for MoE layers
    gated: bool
    seq_len: int
    micro_batch: int
    precision: str  # what ran: bf16 or fp16
    precision_requested: str  # fp8 runs bf16 GEMMs: plain PyTorch has no fp8 training path
    recompute: str  # none, selective (attention core + activation function) or full (layer)
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    model_layers: int  # the model's layer count
    layers: int  # built on each GPU
    layers_rule: str  # why that many
    tp: int = 1
    dp: int = 1
    device: str  # "cuda" or "cpu"
    timing: str  # "cuda_events" or "perf_counter"
    attention_backend: str | None = None  # the SDPA backend that ran: flash, efficient, cudnn,
    # math (None when the probe failed before choosing one)
    gqa: str = ""  # how K/V heads are shared
    moe_dispatch: str | None = None
    optimizer: str = ""
    warmup_steps: int = 0
    steps: int = 0
    quick: bool = False
    step_seconds: float | None = None  # forward + backward + gradient reduction + optimizer
    step_seconds_p10: float | None = None
    step_seconds_p90: float | None = None
    fwd_bwd_seconds: float | None = None  # all layers
    optimizer_seconds: float | None = None  # all layers
    grad_reduce_seconds: float | None = None  # data-parallel gradient all-reduce (dp > 1)
    layer_fwd_bwd_seconds: float | None = None
    layer_fwd_bwd_seconds_p10: float | None = None
    layer_fwd_bwd_seconds_p90: float | None = None
    layer_step_seconds: float | None = None  # step_seconds / layers
    tokens_per_second: float | None = None  # this GPU: micro_batch * seq_len / step_seconds
    static_memory_bytes: int | None = None
    peak_memory_bytes: int | None = None
    layer_activation_bytes: float | None = None
    layer_saved_bytes: float | None = None
    memory_note: str = ""
    split: WorkloadSplit | None = None
    across_ranks: Spread | None = None  # each rank's layer_fwd_bwd_seconds
    notes: tuple[str, ...] = ()

    def _check_shape(self) -> None:
        """What the run's own options allow (``WorkloadConfig``), for a failed run too: the
        planner builds this shape for every stored report, and one it cannot build would
        stop every plan that reads the store."""
        choices = (("precision", self.precision, ("bf16", "fp16")),  # fp8 runs bf16
                   ("precision_requested", self.precision_requested, PRECISIONS),
                   ("recompute", self.recompute, RECOMPUTE),
                   ("framework", self.framework, FRAMEWORKS))
        for name, value, allowed in choices:
            if value not in allowed:
                raise ValueError(f"workload.{name} must be one of {', '.join(allowed)}, got "
                                 f"{str(value)[:40]!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"workload.kv_heads {self.kv_heads} must divide heads "
                             f"{self.heads} (each KV head serves a whole group of heads)")
        if self.heads % self.tp or self.kv_heads % self.tp or self.ffn_hidden % self.tp:
            raise ValueError(f"workload.tp {self.tp} must divide heads {self.heads}, kv_heads "
                             f"{self.kv_heads} and ffn_hidden {self.ffn_hidden}")
        if self.experts_per_token > self.experts or (self.experts and not
                                                     self.experts_per_token):
            raise ValueError(f"workload.experts_per_token {self.experts_per_token} must be "
                             f"from 1 to experts {self.experts} (0 for a dense model)")
        if self.layers > self.model_layers:
            raise ValueError(f"workload.layers {self.layers} (built) is above the model's "
                             f"model_layers {self.model_layers}")

    def __post_init__(self) -> None:
        check_status(self.status, self.reason, "workload")
        # the bounds of the run's own options (LIMITS): a report holds what a run can do
        for name in ("hidden", "heads", "kv_heads", "head_dim", "ffn_hidden", "seq_len",
                     "micro_batch", "tp"):
            check_count("workload", high=LIMITS[name], **{name: getattr(self, name)})
        for name in ("experts", "experts_per_token", "shared_experts", "warmup_steps",
                     "steps"):
            check_count("workload", low=0, high=LIMITS[name], **{name: getattr(self, name)})
        check_count("workload", high=LIMITS["layers"], model_layers=self.model_layers)
        check_count("workload", high=LIMITS["build_layers"], layers=self.layers)
        check_count("workload", dp=self.dp)
        self._check_shape()
        if self.status == "measured" and self.layer_fwd_bwd_seconds is None:
            raise ValueError("workload: measured needs layer_fwd_bwd_seconds")
        check_positive("workload", step_seconds=self.step_seconds,
                        fwd_bwd_seconds=self.fwd_bwd_seconds,
                        layer_fwd_bwd_seconds=self.layer_fwd_bwd_seconds,
                        peak_memory_bytes=self.peak_memory_bytes,
                        across_ranks_min=self.across_ranks and self.across_ranks.min)
        # layer_activation_bytes is left alone: it is the allocator's difference across the
        # forward, which nothing guarantees is >= 0
        check_non_negative(
            "workload", step_seconds_p10=self.step_seconds_p10,
            step_seconds_p90=self.step_seconds_p90, optimizer_seconds=self.optimizer_seconds,
            grad_reduce_seconds=self.grad_reduce_seconds,
            layer_fwd_bwd_seconds_p10=self.layer_fwd_bwd_seconds_p10,
            layer_fwd_bwd_seconds_p90=self.layer_fwd_bwd_seconds_p90,
            layer_step_seconds=self.layer_step_seconds,
            tokens_per_second=self.tokens_per_second,
            static_memory_bytes=self.static_memory_bytes,
            layer_saved_bytes=self.layer_saved_bytes)
        check_seconds("workload", **{name: getattr(self, name) for name in (
            "step_seconds", "step_seconds_p10", "step_seconds_p90", "fwd_bwd_seconds",
            "layer_fwd_bwd_seconds", "layer_fwd_bwd_seconds_p10", "layer_fwd_bwd_seconds_p90",
            "layer_step_seconds", "optimizer_seconds", "grad_reduce_seconds")})
