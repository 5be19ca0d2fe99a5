"""A transformer's shape from its parameter counts alone: a plausible Llama-style
architecture (``infer_architecture``), deterministic and stated in the workload's notes so the
user sees the shape the estimate assumed. Parameter counts as ``_workload`` defines them.
"""

from __future__ import annotations

import math

from ._errors import WorkloadError
from ._shown import format_count
from ._workload import ARCH_LIMITS, Architecture

DEFAULT_VOCAB = 32000  # Llama 2 / Mistral vocabulary, for shapes inferred from a count
ASPECT_HIDDEN_PER_LAYER = 128  # GPT-3 175B (12288/96) and Llama 7B (4096/32) both ≈ 128
HEAD_DIM = 128


def _round_to(x: float, multiple: int) -> int:
    return max(multiple, int(round(x / multiple)) * multiple)


# an inferred shape's total (and active) count within a factor of the one given: dense shapes
# land within 4%; MoE ones within 2% for most published models (GLM-4.5-Air 2.6%) and up to
# ~5% for many narrow experts over many layers (one width step is then several percent);
# beyond 10% the experts would be almost weightless (active 99.9% of total with 256 experts)
INFERRED_SIZE_TOLERANCE = 1.10


# an inferred expert's FFN width is a multiple of 64 (experts are narrow: 768, 1408, 2048), of
# 16 below 512, where one step of 64 would be more than an eighth of it
EXPERT_FFN_MULTIPLE, NARROW_EXPERT_MULTIPLE, NARROW_EXPERT_BELOW = 64, 16, 512


def _miss(arch: Architecture, params_total: float, params_active: float | None) -> float:
    """How far ``arch`` is from the counts: the worse |log ratio| of total and (for a mixture
    of experts) active parameters."""
    miss = abs(math.log(arch.params_total() / params_total))
    if params_active is not None:
        miss = max(miss, abs(math.log(arch.params_active() / params_active)))
    return miss


def _closest_moe(shape, hidden: int, layers_exact: float, expert_share: float,
                 params_total: float, params_active: float) -> Architecture:
    """The MoE shape nearest to both counts: the layer count rounded either way, the expert
    FFN width rounded either way (``EXPERT_FFN_MULTIPLE``), keeping the shape whose worse
    relative miss (total or active) is the smaller. One rounding of a narrow expert (a few
    hundred wide) to 128, as before, missed Qwen3-30B-A3B's total by 10%."""
    best = None
    for layers in {max(1, math.floor(layers_exact)), max(1, math.ceil(layers_exact))}:
        width = expert_share / layers / (3 * hidden)
        step = EXPERT_FFN_MULTIPLE if width >= NARROW_EXPERT_BELOW else NARROW_EXPERT_MULTIPLE
        for ffn in {max(step, m * step) for m in (math.floor(width / step),
                                                  math.ceil(width / step))}:
            arch = shape(hidden, layers, ffn)
            miss = _miss(arch, params_total, params_active)
            if best is None or miss < best[0]:
                best = (miss, arch)
    return best[1]


def infer_architecture(params_total: float, params_active: float | None = None, *,
                       vocab: int = DEFAULT_VOCAB, experts: int = 8,
                       experts_per_token: int = 2) -> tuple[Architecture, tuple[str, ...]]:
    """A plausible Llama-style shape with ``params_total`` parameters (and ``params_active``
    for MoE), from the aspect ratio hidden ≈ 128·layers and a gated FFN of width 8/3·hidden.

    Dense block ≈ 12·h² parameters (4h² attention + 3·h·(8/3)h MLP), so with L = h/128:
    N ≈ 12·h³/128 + 2·V·h; solved for h by bisection, then rounded to hardware-friendly sizes.
    """
    if not params_total or params_total <= 0 or not math.isfinite(params_total):
        raise WorkloadError(f"`params` must be positive, got {params_total!r}. To fix: pass "
                            "e.g. `params` 7B")
    moe = params_active is not None and params_active < params_total
    if params_active is not None and params_active > params_total:
        raise WorkloadError("`active_params` cannot exceed `params`. To fix: swap or correct "
                            "them")
    experts_share = 0.0
    if moe and experts <= experts_per_token:
        raise WorkloadError(f"`experts` ({experts}) must exceed `experts_per_token` "
                            f"({experts_per_token}) for a mixture of experts. To fix: raise "
                            "`experts` or lower `experts_per_token`")
    if moe and params_active / params_total <= experts_per_token / experts:
        raise WorkloadError(
            f"`active_params` is {params_active / params_total:.1%} of `params`, but top-"
            f"{experts_per_token} of {experts} experts needs more than "
            f"{experts_per_token / experts:.1%} active (attention and embeddings are always "
            "active). To fix: raise "
            "`active_params`, or set `experts`/`experts_per_token` to match the model")
    if moe:
        # total = A + E·x and active = A + k·x, x = one expert's parameters summed over layers
        experts_share = (params_total - params_active) / (experts - experts_per_token)
    target = params_total - (experts * experts_share if moe else 0.0)  # attention + embeddings

    def shape(hidden: int, layers: int, ffn: int) -> Architecture:
        heads = max(1, hidden // HEAD_DIM)
        kv = max(1, heads // 8) if hidden >= 4096 and heads % 8 == 0 else heads
        return Architecture(layers=layers, hidden=hidden, heads=heads, kv_heads=kv,
                            ffn_hidden=ffn, vocab=vocab, experts=experts if moe else 0,
                            experts_per_token=experts_per_token if moe else 0,
                            name=name)

    # what plans and launch headers call it ("gpuplan plan for inferred, 300B tokens" named
    # no model): the size given, and that its shape was inferred from it
    name = (f"{format_count(params_total)} model ("
            + (f"{format_count(params_active)} active, " if moe else "") + "inferred shape)")

    best = None
    # Hardware-friendly widths: multiples of 128 when small, of 1024 from 4096 up.
    widths = [*range(128, 2048, 128), *range(2048, 4096, 256), *range(4096, 32768 + 1, 1024)]
    for hidden in widths:
        dense_ffn = _round_to(8 / 3 * hidden, 256)
        one = shape(hidden, 1, dense_ffn)
        per_layer = one.layer_params_total() - (
            experts * one.expert_params() + hidden * experts if moe else 0)
        layers_exact = (target - one.embedding_params()) / per_layer
        if layers_exact < 1:
            break
        score = abs(math.log(hidden / layers_exact / ASPECT_HIDDEN_PER_LAYER))
        if best is None or score < best[0]:
            best = (score, hidden, layers_exact, dense_ffn)
    if best is None:
        # the vocabulary is the caller's (`vocab`): the default's 32000 was blamed for a 1
        smallest = shape(widths[0], 1, _round_to(8 / 3 * widths[0], 256)).params_total()
        raise WorkloadError(f"`params` {params_total:g} is too small for a transformer with a "
                            f"{vocab:,}-token vocabulary"
                            + ("" if moe else f": the smallest shape (1 layer, hidden "
                               f"{widths[0]}) has {format_count(smallest)} parameters")
                            + ". To fix: pass a larger count or `config`", field="params",
                            value=params_total)
    _, hidden, layers_exact, ffn = best
    if round(layers_exact) > ARCH_LIMITS["layers"]:
        # the widest shape still needs more layers than an Architecture takes: its error
        # blamed `layers`, which the user did not give (nor can: the inference runs first)
        what = "active_params" if moe else "params"
        raise WorkloadError(
            f"no Llama-style shape of hidden size up to {widths[-1]:,} has about "
            f"{params_total / 1e9:,.0f}B parameters"
            + (f" ({params_active / 1e9:,.0f}B active, {experts} experts top-"
               f"{experts_per_token})" if moe else "")
            + f" within {ARCH_LIMITS['layers']:,} layers: it would need "
            f"{round(layers_exact):,}. To fix: lower `{what}`, or give the architecture with "
            "`config`", field=what)
    if moe:
        arch = _closest_moe(shape, hidden, layers_exact, experts_share, params_total,
                            params_active)
    else:
        arch = shape(hidden, max(1, round(layers_exact)), ffn)
    layers, ffn = arch.layers, arch.ffn_hidden
    total, active = arch.params_total(), arch.params_active()
    if _miss(arch, params_total, params_active if moe else None) > math.log(
            INFERRED_SIZE_TOLERANCE):
        # e.g. so many experts that even the narrowest expert and the router overshoot the
        # count: say so rather than plan a model of another size
        wanted = f"{params_total / 1e9:.3g}B parameters" + (
            f" ({params_active / 1e9:.3g}B active)" if moe else "")
        nearest = f"{total / 1e9:.3g}B" + (f" ({active / 1e9:.3g}B active)" if moe else "")
        raise WorkloadError(
            f"no Llama-style shape with {experts if moe else 0} experts"
            + (f" (top-{experts_per_token})" if moe else "") + f" has about {wanted}; the "
            f"nearest has {nearest}. To fix: correct `params`/`active_params`, use fewer "
            "`experts`, or give the architecture with `config`",
            field="experts" if moe else "params")
    heads, kv_heads = arch.heads, arch.kv_heads
    notes = (f"architecture inferred from parameter count: {layers} layers, hidden {hidden}, "
             f"{heads} heads ({kv_heads} KV), gated FFN {ffn}, vocab {vocab}"
             + (f", {experts} experts top-{experts_per_token}" if moe else "")
             + f" → {total / 1e9:.2f}B total"
             + (f", {active / 1e9:.2f}B active" if moe else ""),)
    return arch, notes
