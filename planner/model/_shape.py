"""One transformer layer's shape, as the workload probe runs it and the calibration keys it.

``shape_of`` gives a workload's layer; ``shape_distance`` says how far apart two shapes are
(the calibration's lookup, ``_calibration.Calibration.workload``): d = √(log2(T_a/T_b)² +
log2(h_a/h_b)² + log2(s_a/s_b)² + r²) over tokens per micro-batch, hidden and sequence, and r
= RECOMPUTE_STEP per step of recomputation (none → selective → full), for shapes of one family
(``comparable``).
Nothing here reads files or prints.
"""

from __future__ import annotations

import math

from catalog import record

from ._workload import Workload

MAX_WORKLOAD_DISTANCE = 1.0  # a factor of 2 in tokens per micro-batch, hidden or sequence
# Recomputation as a distance: a measured stack's speed relative to the model transfers to the
# other settings of the same shape (the model adds the recomputed work); a ratio kept only for
# the setting measured made it look slower than its unmeasured neighbours (measuring "none" at
# 1.20x the model switched plans to "selective", and with that transferred, to "full"). Half a
# step each, so none and full are as far apart as a doubled micro-batch: all three settings of
# the measured shape are within MAX_WORKLOAD_DISTANCE, and the range narrows less the farther.
RECOMPUTE_LEVEL = {"none": 0, "selective": 1, "full": 2}
RECOMPUTE_STEP = 0.5
FFN_RATIO_TOLERANCE = 0.05  # ffn/hidden of "the same family of shapes", relative


@record
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



def comparable(a: WorkloadShape, b: WorkloadShape) -> bool:
    """Same family of shapes: equal precision, FFN kind, experts, head dim and grouped-query
    ratio, and the same FFN/hidden ratio within FFN_RATIO_TOLERANCE (recomputation is a
    distance, ``shape_distance``)."""
    same = (a.precision == b.precision and a.gated == b.gated
            and (a.experts, a.experts_per_token, a.shared_experts)
            == (b.experts, b.experts_per_token, b.shared_experts)
            and a.head_dim == b.head_dim and a.heads * b.kv_heads == b.heads * a.kv_heads)
    ra, rb = a.ffn_hidden / a.hidden, b.ffn_hidden / b.hidden
    return same and abs(ra - rb) <= FFN_RATIO_TOLERANCE * rb


def _size_terms(a: WorkloadShape, b: WorkloadShape) -> tuple[float, ...]:
    """log2 of the layer sizes' ratios: hidden, sequence, and the heads and FFN width per
    hidden (equal within a family up to FFN_RATIO_TOLERANCE and head counts)."""
    return (math.log2(a.hidden / b.hidden), math.log2(a.seq_len / b.seq_len),
            math.log2(a.heads * b.hidden / (b.heads * a.hidden)),
            math.log2(a.ffn_hidden * b.hidden / (b.ffn_hidden * a.hidden)))


def size_distance(a: WorkloadShape, b: WorkloadShape) -> float | None:
    """How far apart two layers' sizes are (``_size_terms``), leaving out micro-batch and
    recomputation — what the rows of one cluster's plan grid differ by; None when the shapes
    are not `comparable`. It decides whether a measurement transfers (≤ MAX_WORKLOAD_DISTANCE):
    a ratio that reached some rows of a grid and not others made the unmeasured rows look
    faster and the search chose them (a stack measured 1.2x slower at micro-batch 1 was
    planned at micro-batch 4 "at 1.07x", and likewise from a layer of half the hidden size)."""
    if not comparable(a, b):
        return None
    return math.sqrt(sum(t * t for t in _size_terms(a, b)))


def shape_distance(a: WorkloadShape, b: WorkloadShape) -> float | None:
    """How far apart two shapes are; None when they are not `comparable`.

    d = √(log2(T_a/T_b)² + log2(h_a/h_b)² + log2(s_a/s_b)² + r² + …), T tokens per
    micro-batch, h hidden, s sequence length, r = 0.5 per step of recomputation between them,
    and the heads and FFN width per hidden (``_size_terms``): 1.0 is a factor of two in one of
    them (a doubled micro-batch, or hidden size, or half the heads) or none vs full, √2 a
    doubled sequence at the same micro-batch, 0.5 none vs selective. 0 only for equal shapes.
    """
    if not comparable(a, b):
        return None
    if a == b:
        return 0.0
    terms = (math.log2(a.tokens / b.tokens), *_size_terms(a, b),
             RECOMPUTE_STEP * (RECOMPUTE_LEVEL[a.recompute] - RECOMPUTE_LEVEL[b.recompute]))
    return math.sqrt(sum(t * t for t in terms)) or 1e-9  # other fields equal: still not 0

