"""What the workload probe runs: one transformer layer's shape and how to time it (torch-free).

The shape is the whole model's (``tp`` = 1); with ``tp`` > 1 every GPU builds one
tensor-parallel shard of each layer (heads, KV heads and FFN width divided by ``tp``), and the
remaining GPUs of the run (``dp`` = world size / ``tp``) are data-parallel replicas.
`gpuplan probe workload` fills it from ``--model/--config/--params`` like `estimate`;
``python -m probes workload`` takes the same shape as explicit options (probes.cli).
"""

from __future__ import annotations

from dataclasses import dataclass

PRECISIONS: tuple[str, ...] = ("bf16", "fp16", "fp8")
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")
# SDPA backends, in the order "auto" tries them (torch.nn.attention.SDPBackend names).
ATTENTION_BACKENDS: tuple[str, ...] = ("flash", "cudnn", "efficient", "math")
DEFAULT_STEPS, DEFAULT_WARMUP_STEPS = 30, 5  # "a few dozen steps after warm-up"
QUICK_STEPS, QUICK_WARMUP_STEPS = 5, 2
CPU_LAYERS = 2  # on CPU a couple of layers show the per-layer time; more only take longer
MAX_GPU_LAYERS = 16  # per-layer time stops changing after a few layers
GPU_MEMORY_FILL = 0.7  # auto layer count: this share of the GPU's free memory


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
        for name in ("hidden", "heads", "kv_heads", "ffn_hidden", "seq_len", "micro_batch",
                     "tp"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads ({self.heads}) must be a multiple of kv_heads "
                             f"({self.kv_heads})")
        if not self.head_dim and self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) is not a multiple of heads "
                             f"({self.heads}); give head_dim")
        if self.heads % self.tp or self.kv_heads % self.tp or self.ffn_hidden % self.tp:
            raise ValueError(f"tp={self.tp} must divide heads ({self.heads}), kv_heads "
                             f"({self.kv_heads}) and ffn_hidden ({self.ffn_hidden})")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}")
        if self.recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}")
        if self.attention not in ("auto", *ATTENTION_BACKENDS):
            raise ValueError(f"attention must be auto or one of {', '.join(ATTENTION_BACKENDS)}")
        if self.experts and not 0 < self.experts_per_token <= self.experts:
            raise ValueError("experts_per_token must be between 1 and experts")
        if self.layers is not None and self.layers < 1:
            raise ValueError("layers must be >= 1")
        if self.steps is not None and self.steps < 1:
            raise ValueError("steps must be >= 1")
        if self.warmup_steps is not None and self.warmup_steps < 0:
            raise ValueError("warmup_steps must be >= 0")
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be > 0")

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
