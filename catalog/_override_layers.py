"""Price overrides in layers: an overrides file (``--overrides`` or ``GPUPLAN_OVERRIDES``),
then a team file's inline ``overrides:`` block, applied to one catalog as one file's entries.

Each layer is applied to the list prices, never to what an earlier layer made of them, so the
rules of one file hold across files: a discount takes a list price (the most specific
discount of every layer wins, as within a file), a rate is a final price that no discount of any
layer scales, and an entry that says again what an earlier one said (a discount of the same
scope, a rate for the same offer) is refused naming both places. Layered on each other, an aws
10 % in both files priced 19 % off, and a team's 10 % cut a rate held at $5.00/h to $4.50/h.
The docs say of layers only that the file is applied first (docs/team.md); nothing says a
later layer replaces an earlier one, so a second say on one scope is ambiguous, as in a file.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._errors import OverrideError
from ._overrides import _MATCH_KEYS, Discount, Overrides, PrivateRate, _fail, same_value


def _scope(d: Discount) -> tuple:
    return tuple(getattr(d, k) for k in _MATCH_KEYS)


def _offer(r: PrivateRate) -> tuple:
    return r.cloud, r.instance_type, r.region, r.pricing, r.offering_class, r.upfront


def _scope_words(d: Discount) -> str:
    return ", ".join(f"{k} {getattr(d, k)}" for k in _MATCH_KEYS if getattr(d, k) is not None)


def _offer_words(r: PrivateRate) -> str:
    return " ".join(v for v in _offer(r) if v)


def refuse_twins(layers: Sequence[Overrides]) -> None:
    """Refuse a discount of the same scope, or a rate for the same offer, as an entry before
    it, in its own layer or an earlier one. ``layers`` are spelt as the catalog spells names
    (``P5.48XLARGE`` and ``p5.48xlarge`` are one scope), first layer first."""
    for entries, key, words, what, doubt in (
            (lambda o: o.discounts, _scope, _scope_words, "scope", "which percent applies"),
            (lambda o: o.prices, _offer, _offer_words, "offer", "which price applies")):
        seen: dict[tuple, tuple[int, Overrides, object]] = {}
        for i, layer in enumerate(layers):
            for entry in entries(layer):
                found = seen.get(key(entry))
                if found is None:
                    seen[key(entry)] = (i, layer, entry)
                    continue
                j, first, twin = found
                if j == i and same_value(twin, entry):  # as parse_overrides says it
                    raise _fail(layer.path, entry.where, f"the same {what} ({words(entry)}) "
                                f"as {twin.where}, at the same value: listed twice",
                                f"remove {entry.where}")
                if j == i:  # as parse_overrides says it (it compares names as written)
                    raise _fail(layer.path, entry.where, f"the same {what} as {twin.where}, "
                                f"so {doubt} is ambiguous", f"keep one of {twin.where} and "
                                f"{entry.where}")
                raise OverrideError(
                    f"{layer.path}: {entry.where}: the same {what} ({words(entry)}) as "
                    f"{first.path}: {twin.where}, so {doubt} is ambiguous. To fix: keep one of "
                    f"them: remove {entry.where} from {layer.path}, or {twin.where} from "
                    f"{first.path}.")


__all__ = ["refuse_twins"]
