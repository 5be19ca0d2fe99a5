"""What the workload probe runs: one transformer layer's shape and how to time it (torch-free).

The shape is the whole model's (``tp`` = 1); with ``tp`` > 1 every GPU builds one
tensor-parallel shard of each layer (heads, KV heads and FFN width divided by ``tp``), and the
remaining GPUs of the run (``dp`` = world size / ``tp``) are data-parallel replicas.
`gpuplan probe workload` fills it from ``--model/--config/--params`` like `estimate`;
``python -m probes workload`` takes the same shape as explicit options (probes.cli).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8")
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")
# SDPA backends, in the order "auto" tries them (torch.nn.attention.SDPBackend names).
ATTENTION_BACKENDS: tuple[str, ...] = ("flash", "cudnn", "efficient", "math")
FRAMEWORKS: tuple[str, ...] = ("megatron", "fsdp", "deepspeed", "hf")  # the planner's profiles
DEFAULT_STEPS, DEFAULT_WARMUP_STEPS = 30, 5  # "a few dozen steps after warm-up"
QUICK_STEPS, QUICK_WARMUP_STEPS = 5, 2
CPU_LAYERS = 2  # on CPU a couple of layers show the per-layer time; more only take longer
MAX_GPU_LAYERS = 16  # per-layer time stops changing after a few layers
GPU_MEMORY_FILL = 0.7  # auto layer count: this share of the GPU's free memory

# The most each count of a workload run may be: the options of `python -m probes workload`
# (and so `gpuplan probe workload`) are refused above these before anything is built, and a
# report's workload section is read only within them. The shape's bounds are the planner's
# (planner.model: ARCH_LIMITS, MAX_SEQ_LEN, the micro-batch pin), written again because a
# node runs the probes without the planner; the run's are far above what a measurement
# needs, and keep a mistyped number from building layers or stepping until memory or
# patience runs out.
LIMITS: dict[str, int] = {
    "layers": 10_000,  # the model's layer count (Llama 3 405B: 126)
    "hidden": 1_048_576, "head_dim": 1_048_576, "heads": 65_536, "kv_heads": 65_536,
    "ffn_hidden": 4_194_304, "seq_len": 16 * 2**20, "micro_batch": 65_536,
    "experts": 65_536, "experts_per_token": 65_536, "shared_experts": 65_536,
    "tp": 1_024,  # GPUs of one layer's shards: an NVLink domain has at most 72
    # layers built on each GPU: the automatic choice stops at MAX_GPU_LAYERS (per-layer
    # time settles after a few), and no GPU holds 128 layers of a model worth probing
    "build_layers": 128,
    "steps": 10_000,  # timed steps (default 30): the median settles within dozens
    "warmup_steps": 1_000,  # default 5: the clocks and allocator settle within a few
}


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadConfig:
    """One workload probe run. ``layers=None``: as many as fill the GPU (probes._workload)."""

    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int  # dense FFN width, or each expert's width when ``experts`` > 0
    seq_len: int
    head_dim: int = 0  # 0: hidden // heads
    gated: bool = True
    micro_batch: int = 1
    precision: str = "bf16"
    recompute: str = "none"
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    model: str = "custom"
    model_layers: int = 0  # the model's layer count (0: unknown, taken as ``layers``)
    framework: str = "megatron"
    layers: int | None = None
    tp: int = 1
    steps: int | None = None
    warmup_steps: int | None = None
    quick: bool = False
    device: str = "auto"
    attention: str = "auto"  # auto or one of ATTENTION_BACKENDS
    profile: bool = True
    timeout_seconds: float = 120.0
    seed: int = 0

    def __post_init__(self) -> None:
        counts = {"hidden": 1, "heads": 1, "kv_heads": 1, "ffn_hidden": 1, "seq_len": 1,
                  "micro_batch": 1, "tp": 1, "head_dim": 0, "experts": 0,
                  "experts_per_token": 0, "shared_experts": 0, "model_layers": 0,
                  "layers": 1, "steps": 1, "warmup_steps": 0}
        for name, low in counts.items():
            value = getattr(self, name)
            if value is None and name in ("layers", "steps", "warmup_steps"):
                continue  # chosen by the run
            high = LIMITS[{"layers": "build_layers", "model_layers": "layers"}.get(name, name)]
            if isinstance(value, bool) or not isinstance(value, int) or \
                    not low <= value <= high:
                raise ValueError(f"{name} must be a whole number from {low} to {high:,}, got "
                                 f"{value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads ({self.heads}) must be a multiple of kv_heads "
                             f"({self.kv_heads})")
        if not self.head_dim and self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) is not a multiple of heads "
                             f"({self.heads}); give head_dim")
        if self.d_head % 2:  # rotary embeddings rotate pairs of dimensions (_workload_layers)
            raise ValueError(
                f"head_dim {self.d_head} must be even (rotary embeddings rotate pairs of "
                f"dimensions). To fix: give an even head_dim, or a hidden size that is a "
                f"multiple of 2 x heads (e.g. hidden {(self.d_head + 1) * self.heads} with "
                f"{self.heads} heads)")
        if self.shared_experts and not self.experts:  # they would run as a dense layer
            raise ValueError(
                f"shared_experts ({self.shared_experts}) are part of a mixture of experts, "
                "and this shape has no experts. To fix: give experts and experts_per_token "
                "too, or drop shared_experts")
        if self.heads % self.tp or self.kv_heads % self.tp or self.ffn_hidden % self.tp:
            raise ValueError(f"tp={self.tp} must divide heads ({self.heads}), kv_heads "
                             f"({self.kv_heads}) and ffn_hidden ({self.ffn_hidden})")
        if self.layers and self.model_layers and self.layers > self.model_layers:
            raise ValueError(f"build_layers ({self.layers}) is above the model's "
                             f"{self.model_layers} layers")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
        if self.recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}")
        if self.attention not in ("auto", *ATTENTION_BACKENDS):
            raise ValueError(f"attention must be auto or one of {', '.join(ATTENTION_BACKENDS)}")
        if self.experts and not 0 < self.experts_per_token <= self.experts:
            raise ValueError("experts_per_token must be between 1 and experts")
        if not (math.isfinite(self.timeout_seconds) and self.timeout_seconds > 0):
            raise ValueError(f"timeout_seconds must be a finite number > 0, got "
                             f"{self.timeout_seconds!r}")

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def run_precision(self) -> str:
        """What runs: fp8 asks run bf16 (plain PyTorch has no fp8 training path)."""
        return "bf16" if self.precision == "fp8" else self.precision

    @property
    def timed_steps(self) -> int:
        return self.steps or (QUICK_STEPS if self.quick else DEFAULT_STEPS)

    @property
    def warmup(self) -> int:
        if self.warmup_steps is not None:
            return self.warmup_steps
        return QUICK_WARMUP_STEPS if self.quick else DEFAULT_WARMUP_STEPS
