"""What is being trained: a transformer's shape, how many tokens, and how.

A ``Workload`` is either given by architecture (presets, a Hugging Face ``config.json``, or
explicit sizes) or inferred from parameter counts; the inference is deterministic and stated in
``Workload.inferred`` so the user sees the shape the estimate assumed.

Parameter counts (per layer, no biases, as Llama/Mistral/Qwen/GPT-NeoX-style blocks):
    attention  = h·(a·d) [Q] + 2·h·(a_kv·d) [K, V] + (a·d)·h [O]        (d = head dim)
    dense MLP  = m·h·F, m = 3 for gated (SwiGLU/GeGLU), 2 otherwise
    MoE MLP    = (E + S)·m·h·F_e + h·E [router];  active: (k + S)·m·h·F_e + h·E
    norms      = 2·h
    embedding  = V·h, plus V·h for an untied output head

Attention reach (``Architecture.attention_share``): a causal layer's query at position q
(0-based) of an s-token sequence attends to q + 1 keys, (s + 1)/2 on average. A sliding window
of w tokens (a query sees itself and the w − 1 keys before it: transformers'
``sliding_window_overlay``, kv > q − w) caps that at min(q + 1, w), and a chunk of c tokens
(Llama 4: queries see their own chunk up to themselves) makes it (q mod c) + 1. Their means are
``window_keys_per_query`` and ``chunk_keys_per_query``; the share is their layer-weighted mean
over (s + 1)/2, exactly 1 for a model without windows or chunks.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import field, replace

from catalog import close_matches, record

from ._errors import WorkloadError
from ._units import COUNT_LIMITS

PRECISIONS = ("bf16", "fp16", "fp8")
OPTIMIZERS = ("adamw", "sgd", "adafactor")
RECOMPUTE = ("auto", "none", "selective", "full")
FINETUNE = ("none", "full", "lora")  # none: pre-training; full/lora: fine-tuning
# The training stack: which framework runs the job (its profile in ``_software``) and which
# attention kernel it uses.
FRAMEWORKS = ("megatron", "fsdp", "deepspeed", "hf")
ATTENTION = ("flash", "triton", "unfused")
ZERO_STAGES = (0, 1, 2, 3)
# The defaults of how a workload trains: one home for `Workload` and `WorkloadSpec`.
DEFAULT_PRECISION, DEFAULT_OPTIMIZER, DEFAULT_RECOMPUTE = "bf16", "adamw", "auto"
DEFAULT_FINETUNE, DEFAULT_LORA_RANK = "none", 16
DEFAULT_FRAMEWORK, DEFAULT_ATTENTION = "megatron", "flash"


@record
class PlanPins:
    """Parallel-plan choices the user fixed (``None``: searched).

    tp/pp/cp: tensor, pipeline and context parallel degrees; vp: virtual pipeline stages per
    GPU (interleaved 1F1B); ep: expert parallel degree of a mixture of experts (GPUs its
    routed experts are spread over; it folds over data-parallel ranks, then tensor-parallel
    ones, as Megatron-Core's MoE parallel folding); zero: ZeRO/FSDP stage (0 plain data
    parallel, 1 sharded optimizer — Megatron's distributed optimizer, 2 + sharded gradients —
    FSDP SHARD_GRAD_OP, 3 + sharded weights — FSDP FULL_SHARD); micro_batch: sequences per
    micro-batch per data-parallel rank.
    """

    tp: int | None = None
    pp: int | None = None
    cp: int | None = None
    vp: int | None = None
    zero: int | None = None
    micro_batch: int | None = None
    ep: int | None = None

    def __post_init__(self) -> None:
        for name in ("tp", "pp", "cp", "vp", "zero", "ep", "micro_batch"):
            v = getattr(self, name)  # numpy's integers are taken, as plain ints
            if isinstance(v, numbers.Integral) and not isinstance(v, bool | int):
                object.__setattr__(self, name, int(v))
        for name in ("tp", "pp", "cp", "vp", "ep", "micro_batch"):
            v, top = getattr(self, name), PIN_LIMITS[name]
            if v is not None and (_not_whole(v) or not 1 <= v <= top):
                raise WorkloadError(f"`{name}` must be a whole number from 1 to {top:,}, got "
                                    f"{v!r}. To fix: pass e.g. `{name}` 1 or leave it to the "
                                    "search", field=name, value=v)
        if self.zero is not None and (_not_whole(self.zero) or self.zero not in ZERO_STAGES):
            raise WorkloadError(f"`zero` must be one of 0, 1, 2, 3, got {self.zero!r}. To fix: "
                                "pass 0 (plain data parallel), 1 (sharded optimizer), 2 (+ "
                                "gradients) or 3 (+ weights, FSDP FULL_SHARD)",
                                field="zero", value=self.zero)

    def as_dict(self) -> dict[str, int]:
        """The pinned values only."""
        return {k: getattr(self, k) for k in ("tp", "pp", "cp", "vp", "ep", "zero",
                                              "micro_batch") if getattr(self, k) is not None}

    @property
    def any(self) -> bool:
        return bool(self.as_dict())


def _not_whole(v) -> bool:
    """Not a plain whole number (a bool, a float or a string is not one)."""
    return isinstance(v, bool) or not isinstance(v, int)


# Upper bounds on architecture sizes: an order of magnitude above the largest published models
# (Llama 3 405B: 126 layers, hidden 16,384, 128 heads, FFN 53,248; vocabularies ≤ 256K).
ARCH_LIMITS = {"layers": 10_000, "hidden": 1_048_576, "heads": 65_536, "kv_heads": 65_536,
               "ffn_hidden": 4_194_304, "vocab": 16_777_216}

# The optional sizes (0: not used, or derived): the same order-of-magnitude margins.
OPTIONAL_ARCH_LIMITS = {"head_dim": 65_536, "experts": 65_536, "experts_per_token": 65_536,
                        "shared_experts": 65_536, "moe_ffn_hidden": ARCH_LIMITS["ffn_hidden"],
                        "dense_layers": ARCH_LIMITS["layers"], "attention_params_per_layer": 10**13,
                        # windows as configs give them (Phi-3 128K: 262,144; Qwen2: 131,072)
                        "window_tokens": 100_000_000, "windowed_layers": ARCH_LIMITS["layers"],
                        "chunk_tokens": 100_000_000, "chunked_layers": ARCH_LIMITS["layers"]}
# The longest sequence an estimate models: 16M tokens (published long-context training tops
# out around 1M; beyond this a value is a typo).
MAX_SEQ_LEN = 16 * 2**20
MAX_TOKENS = COUNT_LIMITS["tokens"][0]  # parse_count's limit for `tokens`

# The largest pins worth checking further: a parallel degree cannot exceed the largest
# cluster (MAX_CLUSTER_GPUS in _hardware), virtual stages the largest layer count, and a
# micro-batch of more sequences than this fits no GPU. Above these, the grid's int64
# arithmetic would overflow.
PIN_LIMITS = {"tp": 131_072, "pp": 131_072, "cp": 131_072, "ep": 131_072,
              "vp": ARCH_LIMITS["layers"], "micro_batch": 65_536}
MAX_LORA_RANK = 65_536


@record
class Architecture:
    """A decoder-only transformer. MoE when ``experts`` > 0."""

    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int  # dense FFN width (or each expert's width when moe_ffn_hidden is 0)
    vocab: int
    gated_ffn: bool = True
    tied_embeddings: bool = False
    head_dim: int = 0  # 0: hidden // heads
    experts: int = 0
    experts_per_token: int = 0
    shared_experts: int = 0
    moe_ffn_hidden: int = 0  # 0: ffn_hidden
    # layers with a dense FFN in an MoE model: DeepSeek's leading ones, Llama 4 Maverick's every
    # other one; only their count is modelled
    dense_layers: int = 0
    dense_interleaved: bool = False  # they sit between the MoE layers (Llama 4), not first
    attention_params_per_layer: int = 0  # 0: computed (set for MLA-style attention)
    # sliding-window attention: windowed_layers of the layers see at most window_tokens keys
    # (themselves and the window_tokens − 1 before); chunked attention (Llama 4): chunked_layers
    # see their own chunk_tokens-token chunk up to themselves. The rest attend causally to all.
    window_tokens: int = 0
    windowed_layers: int = 0
    chunk_tokens: int = 0
    chunked_layers: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        for limits, low in ((ARCH_LIMITS, 1), (OPTIONAL_ARCH_LIMITS, 0)):
            for f, top in limits.items():
                v = getattr(self, f)
                if _not_whole(v) or not low <= v <= top:
                    raise WorkloadError(
                        f"{f} must be a whole number between 1 and {top:,}, got {v!r}. To fix: "
                        f"pass a sensible `{f}`" if low else
                        f"{f} must be a whole number from 0 to {top:,}, got {v!r}. To fix: "
                        f"pass a sensible `{f}` (0: not used)", field=f, value=v)
        # each head is hidden / heads wide without a head_dim: a remainder was timed as heads
        # of 153 for 768 / 5 (transformers refuses such a model), and hidden < heads as 0
        if not self.head_dim and self.hidden % self.heads:
            raise WorkloadError(f"hidden ({self.hidden:,}) is not a multiple of heads "
                                f"({self.heads:,}): each head is hidden / heads wide. To fix: "
                                "correct `hidden` or `heads`, or give `head_dim`",
                                field="hidden", value=self.hidden)
        if self.heads % self.kv_heads:
            raise WorkloadError(f"heads ({self.heads}) must be a multiple of kv_heads "
                                f"({self.kv_heads}). To fix: correct `kv_heads`",
                                field="kv_heads", value=self.kv_heads)
        k, e = self.experts_per_token, self.experts  # without experts (dense) k was ignored
        if not 0 < k <= e if e else k:
            raise WorkloadError(f"experts_per_token must be between 1 and experts ({e}), got "
                                f"{k!r}. To fix: correct `experts_per_token`" if e else
                                f"`experts_per_token` {k} needs `experts`: a model with 0 experts "
                                "is dense. To fix: give `experts` (more than `experts_per_token`), "
                                "or `experts_per_token` 0", field="experts_per_token", value=k)
        if self.dense_layers > self.layers:
            # the leading dense layers are some of the layers, not more of them
            raise WorkloadError(f"dense_layers ({self.dense_layers}) cannot exceed layers "
                                f"({self.layers}). To fix: give `layers` at least "
                                f"{self.dense_layers}, or fewer dense layers",
                                field="dense_layers", value=self.dense_layers)
        for size, count in (("window_tokens", "windowed_layers"),
                            ("chunk_tokens", "chunked_layers")):
            if bool(getattr(self, size)) != bool(getattr(self, count)):
                raise WorkloadError(f"{size} ({getattr(self, size)}) and {count} "
                                    f"({getattr(self, count)}) go together: a window needs the "
                                    f"layers it applies to. To fix: give both, or neither",
                                    field=count, value=getattr(self, count))
        if self.windowed_layers + self.chunked_layers > self.layers:
            raise WorkloadError(f"windowed_layers ({self.windowed_layers}) and chunked_layers "
                                f"({self.chunked_layers}) are some of the {self.layers} layers, "
                                "not more of them. To fix: give fewer",
                                field="windowed_layers", value=self.windowed_layers)

    @property
    def is_moe(self) -> bool:
        return self.experts > 0

    @property
    def d_head(self) -> int:
        return self.head_dim or self.hidden // self.heads

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated_ffn else 2

    @property
    def expert_ffn(self) -> int:
        return self.moe_ffn_hidden or self.ffn_hidden

    @property
    def moe_layers(self) -> int:
        return self.layers - self.dense_layers if self.is_moe else 0

    def attention_params(self) -> int:
        if self.attention_params_per_layer:
            return self.attention_params_per_layer
        h, d = self.hidden, self.d_head
        return h * self.heads * d * 2 + 2 * h * self.kv_heads * d

    def expert_params(self) -> int:
        """One expert's (or one dense FFN's) parameters."""
        return self.mlp_matrices * self.hidden * self.expert_ffn

    def dense_mlp_params(self) -> int:
        return self.mlp_matrices * self.hidden * self.ffn_hidden

    def embedding_params(self) -> int:
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    def layer_params_total(self) -> float:
        """All transformer-block parameters (every expert counted)."""
        attn = self.attention_params() + 2 * self.hidden
        dense = self.layers - self.moe_layers
        moe = self.moe_layers * ((self.experts + self.shared_experts) * self.expert_params()
                                 + self.hidden * self.experts)
        return self.layers * attn + dense * self.dense_mlp_params() + moe

    def layer_params_active(self) -> float:
        """Block parameters one token passes through (k routed + shared experts)."""
        attn = self.attention_params() + 2 * self.hidden
        dense = self.layers - self.moe_layers
        moe = self.moe_layers * ((self.experts_per_token + self.shared_experts)
                                 * self.expert_params() + self.hidden * self.experts)
        return self.layers * attn + dense * self.dense_mlp_params() + moe

    def expert_params_total(self) -> float:
        """Routed-expert parameters (the part expert parallelism shards)."""
        return self.moe_layers * self.experts * self.expert_params()

    def params_total(self) -> float:
        return self.layer_params_total() + self.embedding_params()

    def params_active(self) -> float:
        return self.layer_params_active() + self.embedding_params()

    def attention_share(self, seq_len: int) -> float:
        """Keys a query attends to, averaged over positions and layers, as a share of full
        causal attention's (s + 1)/2: exactly 1 without windows or chunks."""
        if not (self.windowed_layers or self.chunked_layers):
            return 1.0
        full = (seq_len + 1) / 2
        keys = (self.layers - self.windowed_layers - self.chunked_layers) * full
        if self.windowed_layers:
            keys += self.windowed_layers * window_keys_per_query(seq_len, self.window_tokens)
        if self.chunked_layers:
            keys += self.chunked_layers * chunk_keys_per_query(seq_len, self.chunk_tokens)
        return keys / (self.layers * full)


def window_keys_per_query(seq_len: int, window: int) -> float:
    """Mean keys per query of a causal layer whose queries see at most ``window`` keys.

    Query q (0-based) sees min(q + 1, w) keys. For w ≤ s the first w queries see 1, 2, …, w
    (w(w + 1)/2 in all) and the other s − w see w each: s·w − w(w − 1)/2, a mean of
    w − w(w − 1)/(2s) — (s + 1)/2, full causal, at w = s. A window of s or more is full causal."""
    s, w = seq_len, min(window, seq_len)
    return w - w * (w - 1) / (2 * s)


def chunk_keys_per_query(seq_len: int, chunk: int) -> float:
    """Mean keys per query of chunked causal attention: query q sees its chunk's keys up to
    itself, (q mod c) + 1. With s = n·c + r, n full chunks give n·c(c + 1)/2 and the last r
    queries r(r + 1)/2; a chunk of s or more is full causal, (s + 1)/2."""
    s, c = seq_len, min(chunk, seq_len)
    n, r = divmod(s, c)
    return (n * c * (c + 1) / 2 + r * (r + 1) / 2) / s


@record
class Workload:
    arch: Architecture
    tokens: float
    seq_len: int
    global_batch_tokens: int | None = None  # None: default_batch_sequences per cluster size
    precision: str = DEFAULT_PRECISION
    optimizer: str = DEFAULT_OPTIMIZER
    recompute: str = DEFAULT_RECOMPUTE
    finetune: str = DEFAULT_FINETUNE
    lora_rank: int = DEFAULT_LORA_RANK
    framework: str = DEFAULT_FRAMEWORK
    attention: str = DEFAULT_ATTENTION
    pins: PlanPins = field(default_factory=PlanPins)
    inferred: tuple[str, ...] = field(default=())  # statements about what was assumed
    # what the user must be warned of (sizes given beside `params` that make a model of
    # another size): an estimate's warnings, not notes among its assumptions
    warnings: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if not (isinstance(self.tokens, int | float) and not isinstance(self.tokens, bool)
                and math.isfinite(self.tokens) and 0 < self.tokens <= MAX_TOKENS):
            raise WorkloadError(f"tokens must be positive and at most {MAX_TOKENS:.0e}, got "
                                f"{self.tokens!r}. To fix: pass `tokens` like 2T, 300B or 2e12",
                                field="tokens", value=self.tokens)
        if not isinstance(self.arch, Architecture):
            raise WorkloadError(f"`arch` must be an Architecture, got {self.arch!r}. To fix: "
                                "build the workload with build_workload", field="arch",
                                value=self.arch)
        if not isinstance(self.pins, PlanPins):
            raise WorkloadError(f"`pins` must be a PlanPins, got {self.pins!r}. To fix: pass "
                                "e.g. PlanPins(tp=8), or PlanPins() for none", field="pins",
                                value=self.pins)
        if _not_whole(self.seq_len) or not 1 <= self.seq_len <= MAX_SEQ_LEN:
            raise WorkloadError(f"`seq_len` must be a whole number from 1 to {MAX_SEQ_LEN:,}, "
                                f"got {self.seq_len!r}. To fix: pass e.g. `seq_len` 4096",
                                field="seq_len", value=self.seq_len)
        g = self.global_batch_tokens
        if g is not None and (_not_whole(g) or g < self.seq_len):
            raise WorkloadError((f"`global_batch_tokens` must be a whole number, got {g!r}. To "
                                 "fix: pass e.g. 4M") if _not_whole(g) else
                                (f"`global_batch_tokens` ({g}) must be at least one sequence "
                                 f"({self.seq_len}). To fix: raise it"),
                                field="global_batch_tokens", value=g)
        for value, allowed, name in ((self.precision, PRECISIONS, "precision"),
                                     (self.optimizer, OPTIMIZERS, "optimizer"),
                                     (self.recompute, RECOMPUTE, "recompute"),
                                     (self.finetune, FINETUNE, "finetune"),
                                     (self.framework, FRAMEWORKS, "framework"),
                                     (self.attention, ATTENTION, "attention")):
            if value not in allowed:  # "megatronn", "bf61": the names it is close to
                close = "".join(f" Did you mean {c!r}?" for c in close_matches(value, allowed)[:1])
                raise WorkloadError(f"`{name}` {value!r} is not one of {', '.join(allowed)}."
                                    f"{close} To fix: pass one of them", field=name, value=value)
        rank = self.lora_rank  # checked even without LoRA: -1 is never a rank
        top = min(MAX_LORA_RANK, self.arch.hidden) if self.finetune == "lora" else MAX_LORA_RANK
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 < rank <= top:
            within = (f"the hidden size ({self.arch.hidden})" if top == self.arch.hidden
                      else f"{top:,}")
            raise WorkloadError(f"`lora_rank` must be between 1 and {within}, got {rank!r}. "
                                "To fix: pass e.g. `lora_rank` 16", field="lora_rank", value=rank)

    @property
    def recompute_limited(self) -> bool:
        """Whether recomputation is held below full (`recompute` none or selective): only then
        can asking for full recomputation save memory ("auto" already tries it)."""
        return self.recompute in ("none", "selective")

    def sequences_per_step(self, gpus: int) -> int:
        """Sequences per optimizer step on ``gpus`` accelerators (the default rule when the
        user gave no global batch)."""
        if self.global_batch_tokens is not None:
            return max(1, self.global_batch_tokens // self.seq_len)
        return default_batch_sequences(params=self.arch.params_active(), seq_len=self.seq_len,
                                       gpus=gpus, finetune=self.finetune != "none")

    def with_tokens(self, tokens: float) -> Workload:
        return replace(self, tokens=tokens)


# Pre-training batch by model size: GPT-3's table (Brown et al. 2020, arXiv:2005.14165,
# Table 2.1: 125M–760M "0.5M" tokens, 1.3B–2.7B "1M", 6.7B–13B "2M", 175B "3.2M" — 256, 512,
# 1,024 and 1,536 sequences of 2,048), interpolated log-log between its rows, flat beyond.
_GPT3_BATCH = ((125e6, 256 * 2048), (760e6, 256 * 2048), (1.3e9, 512 * 2048),
               (2.7e9, 512 * 2048), (6.7e9, 1024 * 2048), (13e9, 1024 * 2048),
               (175e9, 1536 * 2048))
# Cluster floor: Llama 3 405B kept one 8,192-token sequence per 8-GPU tensor-parallel group
# (16M tokens on 8K and 16K H100s, arXiv:2407.21783 Table 4), so every pipeline gets as many
# micro-batches as it has stages; a smaller batch leaves most of each step as bubble.
GPUS_PER_SEQUENCE = 8
# Fine-tuning: Llama 2's supervised fine-tuning used 64 sequences of 4,096 tokens per step
# (arXiv:2307.09288 §3.1); the sequence length is capped at the model's context.
FINETUNE_BATCH_SEQUENCES = 64
FINETUNE_SEQ_LEN = 4096


def pretraining_batch_tokens(params: float) -> float:
    """GPT-3's batch-size-by-model-size table, interpolated in log space."""
    pts = _GPT3_BATCH
    if params <= pts[0][0]:
        return pts[0][1]
    for (n0, b0), (n1, b1) in zip(pts, pts[1:], strict=False):
        if params <= n1:
            w = math.log(params / n0) / math.log(n1 / n0)
            return math.exp(math.log(b0) + w * math.log(b1 / b0))
    return pts[-1][1]


def default_batch_sequences(*, params: float, seq_len: int, gpus: int, finetune: bool) -> int:
    """The global batch (sequences per step) when the user gives none."""
    if finetune:
        return FINETUNE_BATCH_SEQUENCES
    by_size = math.ceil(pretraining_batch_tokens(params) / seq_len)
    return max(1, by_size, math.ceil(gpus / GPUS_PER_SEQUENCE))


def default_batch_note(*, params: float, seq_len: int, finetune: bool) -> str:
    if finetune:
        return (f"global batch {FINETUNE_BATCH_SEQUENCES} sequences (fine-tuning default, as "
                "Llama 2's supervised fine-tuning; `global_batch_tokens` to change)")
    tokens = pretraining_batch_tokens(params)
    return (f"global batch ≈ {tokens / 1e6:.2g}M tokens by model size (GPT-3 Table 2.1), raised "
            f"to at least one sequence per {GPUS_PER_SEQUENCE} GPUs on large clusters (as "
            "Llama 3 405B); `global_batch_tokens` to change")


def attention_note(arch: Architecture, seq: int, attention: str) -> str:
    """How far the queries of a model with sliding windows or chunks reach at ``seq``
    tokens (``Architecture.attention_share``), and what the kernel makes of it."""
    def layers(n: int) -> str:
        return (("the one layer" if n == 1 else f"all {n} layers") if n == arch.layers
                else f"{n} of {arch.layers} layers")

    said = " and ".join(
        [f"a {arch.window_tokens:,}-token sliding window on {layers(arch.windowed_layers)}"]
        * bool(arch.windowed_layers)
        + [f"{arch.chunk_tokens:,}-token chunks on {layers(arch.chunked_layers)}"]
        * bool(arch.chunked_layers))
    share, full = arch.attention_share(seq), (seq + 1) / 2
    if share > 1 - 1e-12:
        return f"attention: {said}, which cover the whole {seq:,}-token sequence: no effect"
    keys = f"{share * full:,.0f}"  # three significant digits: a 1-token window is not × 0.000
    factor = f"{share:.{max(3, 2 - math.floor(math.log10(share)))}f}"
    return (f"attention: {said}: at {seq:,} tokens a query attends to {keys} "
            f"key{'' if keys == '1' else 's'} on average, not {full:,.1f}; the "
            + (f"attention FLOPs, timed and in the model FLOPs, × {factor}"
               if attention == "flash" else
               f"model FLOPs' attention × {factor}, but the {attention} kernel computes the "
               "masked scores too: it is timed as without the window"))
