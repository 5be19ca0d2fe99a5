"""Sizes a user gives over a model's shape (`--layers`, `--hidden`, …, a team job's keys):
checked, applied with what they imply kept consistent (``overridden``), and warned of where
the shape they make is not a model's (``departure``, ``shape_warnings``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

from ._errors import WorkloadError
from ._hfkinds import implausible_attention
from ._inference import INFERRED_SIZE_TOLERANCE
from ._presets import rescaled_layers
from ._shown import format_params
from ._workload import Architecture

ARCH_FIELDS = ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab")


def _pairs(pairs) -> dict:
    """``arch_overrides`` as a dict: a sequence of (field, value) pairs, each field once."""
    fix = "To fix: pass pairs such as (('layers', 32), ('hidden', 4096))"
    if isinstance(pairs, str | bytes | Mapping) or not isinstance(pairs, tuple | list):
        raise WorkloadError(f"`arch_overrides` must be a sequence of (field, value) pairs, got "
                            f"{type(pairs).__name__}. {fix}", field="arch_overrides")
    values: dict = {}
    for pair in pairs:
        if not isinstance(pair, tuple | list) or len(pair) != 2 or not isinstance(pair[0], str):
            raise WorkloadError(f"`arch_overrides` holds {pair!r}, not a (field, value) pair. "
                                f"{fix}", field="arch_overrides")
        if pair[0] in values:
            raise WorkloadError(f"`arch_overrides` gives {pair[0]} twice ({values[pair[0]]!r} "
                                f"and {pair[1]!r}). To fix: give it once",
                                field="arch_overrides")
        values[pair[0]] = pair[1]
    return values


def checked_overrides(pairs) -> dict:
    """``arch_overrides`` (a sequence of (field, value) pairs) as a dict, if every field is a
    size that can be overridden, once, with a positive whole value."""
    values = _pairs(pairs)
    unknown = set(values) - set(ARCH_FIELDS)
    if unknown:
        raise WorkloadError(f"cannot override {', '.join(sorted(unknown))}. To fix: override "
                            f"only {', '.join(ARCH_FIELDS)}", field="arch_overrides")
    for k, v in values.items():
        if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
            raise WorkloadError(f"`{k}` must be a positive whole number, got {v!r}. To fix: "
                                f"pass e.g. `{k}` 32", field=k, value=v)
    return values


def overridden(arch: Architecture, values: dict) -> tuple[Architecture, list[str]]:
    """Apply size overrides (``checked_overrides``), deriving what the user did not give so
    the shape stays consistent: a new hidden size keeps the head dimension (heads follow) and
    the FFN ratio; new heads keep the grouped-query ratio (KV heads follow); new layers keep
    the share of windowed, chunked and interleaved dense ones (``rescaled_layers``)."""
    values, derived = dict(values), []
    if values.get("layers", arch.layers) != arch.layers:  # windows, chunks, dense layers
        counts, derived = rescaled_layers(arch, values["layers"])
        values.update(counts)
    if "hidden" in values and values["hidden"] != arch.hidden:
        if "ffn_hidden" not in values:
            values["ffn_hidden"] = max(1, round(arch.ffn_hidden * values["hidden"]
                                                / arch.hidden))
            derived.append(f"ffn_hidden={values['ffn_hidden']} (same FFN ratio)")
        if ("heads" not in values and not arch.head_dim
                and values["hidden"] % arch.d_head == 0):
            values["heads"] = values["hidden"] // arch.d_head
            derived.append(f"heads={values['heads']} (same head dimension {arch.d_head})")
    if "heads" in values and "kv_heads" not in values:
        group = arch.heads // arch.kv_heads
        kept = values["heads"] % group == 0
        kv = values["heads"] // group if kept else math.gcd(values["heads"], arch.kv_heads)
        if kv != arch.kv_heads:
            values["kv_heads"] = kv
            # "ratio kept" was said of 31 heads over 1 KV head (the model's ratio is 4)
            derived.append(f"kv_heads={kv} (grouped-query ratio {group} kept)" if kept else
                           f"kv_heads={kv} ({values['heads']} heads are no multiple of the "
                           f"model's grouped-query ratio {group}: the largest count dividing "
                           f"them and its {arch.kv_heads}; give kv_heads to choose)")
    heads = values.get("heads", arch.heads)
    hidden = values.get("hidden", arch.hidden)
    if not arch.head_dim and hidden % heads:
        # Keep the head dimension (attention width heads × d may then differ from hidden, as
        # in Gemma); hidden // heads would silently change every attention GEMM.
        values["head_dim"] = arch.d_head
        derived.append(f"head_dim={arch.d_head} (kept: {hidden} is not a multiple of {heads})")
    return replace(arch, **values), derived


def departure(arch: Architecture, overrides: dict, total: float,
               active: float | None) -> list[str]:
    """A warning when the sizes given beside `params` make a model of another size than it
    says (beyond INFERRED_SIZE_TOLERANCE, as close as an inferred shape must come): the run is
    modelled at the overridden shape's count, which must not be taken for `params`."""
    now_total, now_active = arch.params_total(), arch.params_active()
    off = [abs(math.log(now_total / total))]
    if active is not None and active < total:
        off.append(abs(math.log(now_active / active)))
    if max(off) <= math.log(INFERRED_SIZE_TOLERANCE):
        return []
    moe = len(off) > 1
    was = format_params(total) + (f" ({format_params(active)} active)" if moe else "")
    now = format_params(now_total) + (f" ({format_params(now_active)} active)" if moe else "")
    one = len(overrides) == 1
    return [f"{_said(overrides)} change{'s' if one else ''} the model from {was} parameters "
            f"(`params`{', `active_params`' if moe else ''}) to {now}: the run is modelled at "
            f"{now}. To fix: to model {format_params(total)}, leave "
            f"{'it' if one else 'them'} to be inferred from `params`, or set the "
            "other sizes so they add up to it"]


def _said(values: dict) -> str:
    """"`layers` 1", "`layers` 1 and `hidden` 64", "`a` 1, `b` 2 and `c` 3"."""
    given = [f"`{k}` {v}" for k, v in values.items()]
    return given[0] if len(given) == 1 else ", ".join(given[:-1]) + " and " + given[-1]


def shape_warnings(before: Architecture, after: Architecture, values: dict) -> list[str]:
    """A warning where the sizes given (``values``) make the attention of ``after`` a width no
    model has (``implausible_attention``) from ``before``'s that was not: `--hidden 7` kept
    llama3-8b's 32 heads × 128, an attention 585 × the hidden size, without a word, where a
    config.json of that shape is warned of (``_hfkinds.config_warnings``)."""
    width = implausible_attention(after)
    if width is None or implausible_attention(before) is not None:
        return []
    # the attention's sizes given (layers, FFN width and vocabulary do not move it)
    sizing = {k: v for k, v in values.items() if k in ("hidden", "heads", "kv_heads")} or values
    return [f"{_said(sizing)} make{'s' if len(sizing) == 1 else ''} the attention "
            f"{after.heads} heads × {after.d_head:,} = {after.heads * after.d_head:,} wide, "
            f"{width:.3g} × the hidden size {after.hidden:,} (real models: about 0.8 to 3.5), "
            f"and the model "
            f"{format_params(after.params_total())} parameters. To fix: give `heads` such that "
            f"`hidden` / `heads` is the head dimension meant (the model's: {before.d_head:,})"]
