"""Why no offer matches a set of filters: the one diagnosis behind `gpuplan offers`' note and
the planner's "no offer matches" error.

``why_no_offers`` answers, first that holds: a pricing model asked for that the catalog holds
no offer of; accelerators asked for that no offer has (an instance type may list them, never
priced: MI300X); else which filter the user set, left out alone, would let offers through, with
how many. It names filters by their ``select_offers`` keyword ('gpus', 'clouds', …, and
'exclude'): each caller spells them its own way (``--cloud`` for `offers`, `clouds` for the
planner's errors, which the CLI then writes as flags). It queries the catalog a few times, so
it is meant for the error path only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from ._load import Catalog

SHOWN_TYPES = 5  # instance types named in the "no price" clause, then "…"

@dataclass(frozen=True, slots=True)
class LeftOut:
    """Offers that match once one filter is left out (the others kept)."""

    filter: str  # the select_offers keyword, or 'exclude'
    offers: int
    # for 'include_flagged' only: the flags those offers carry, most common first
    flags: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class NoOffers:
    """Why no offer matches (one of its parts is set, or none when no reason was found)."""

    absent_pricing: str = ""  # a clause: pricing models the catalog holds no offer of
    unpriced: tuple[str, ...] = ()  # the accelerators asked for, which no offer has
    listed: tuple[tuple[str, str], ...] = ()  # (cloud, instance type) that have them
    some_unpriced: bool = False  # offers of them exist, none with a price
    left_out: tuple[LeftOut, ...] = ()

    def unpriced_clause(self) -> str:
        """"the catalog has no price for MI300X: it lists 1 instance type with it (azure …)
        but no offer" (no fix: the caller names where a rate is given)."""
        names = ", ".join(self.unpriced)
        if not self.listed:
            return f"the catalog has no price for {names}: no instance type has it"
        n = len(self.listed)
        shown = ", ".join(f"{cloud} {name}" for cloud, name in self.listed[:SHOWN_TYPES])
        return (f"the catalog has no price for {names}: it lists {n} instance "
                f"type{'s' if n != 1 else ''} with {'it' if len(self.unpriced) == 1 else 'them'}"
                f" ({shown}{', …' if n > SHOWN_TYPES else ''}) but no "
                f"{'offer with a price' if self.some_unpriced else 'offer'}")

    def without(self, name: Callable[[str], str]) -> str:
        """"without --cloud: 4,794 offers; without --pricing: 2,599 offers", each filter
        spelt by ``name``."""
        return "; ".join(f"without {name(k.filter)}: {k.offers:,} "
                         f"offer{'s' if k.offers != 1 else ''}" for k in self.left_out)


def why_no_offers(catalog: Catalog, filters: Mapping[str, object], given: Sequence[str], *,
                  left_out: Mapping[str, object] | None = None, **fixed) -> NoOffers:
    """Why no offer of ``catalog`` matches ``filters`` (``select_offers`` keywords, plus
    'exclude': instance types, clouds or regions whose offers are left out). ``given``: the
    filters the user set, in the order to report them (only those are left out in turn);
    ``left_out``: what such a filter is when left out (else an empty list, which matches all;
    a flag that is no list says its own, e.g. ``include_flagged``: True);
    ``fixed``: further ``select_offers`` arguments, kept as they are."""
    from ._query import absent_pricing, select_offers

    if absent := absent_pricing(catalog, filters.get("pricing") or ()):
        return NoOffers(absent_pricing=absent)
    # (accelerators the caller filters on by default, not asked for, are not named)
    unpriced = _unpriced(catalog, filters.get("gpus") or () if "gpus" in given else (), fixed)
    if unpriced is not None:
        return unpriced
    found = []
    for key in given:
        kept = {**filters, key: (left_out or {}).get(key, ())}
        exclude = set(kept.pop("exclude", ()))
        rows = [r for r in select_offers(catalog, **kept, **fixed)
                if not (exclude and {r.offer.instance_type, r.offer.cloud, r.offer.region}
                        & exclude)]
        if rows:
            flags = (Counter(f for r in rows for f in r.offer.unusable_flags).most_common()
                     if key == "include_flagged" else ())
            found.append(LeftOut(key, len(rows), tuple(flags)))
    return NoOffers(left_out=tuple(found))


def _unpriced(catalog: Catalog, gpus: Collection[str], fixed: Mapping) -> NoOffers | None:
    """The asked-for accelerators when no offer of any of them is left whatever else is
    asked ("without --gpu: 14,532 offers" said nothing of why: MI300X is listed, never
    priced); None when some offer has one."""
    from ._query import select_offers

    priced_only = fixed.get("include_unpriced", True) is False
    if not gpus or select_offers(catalog, gpus=gpus, include_unpriced=not priced_only):
        return None
    accs = {catalog.resolve_accelerator(g) for g in gpus}
    types = [t for t in catalog.instance_types if t.accelerator in accs]
    some = priced_only and bool(select_offers(catalog, gpus=gpus))
    return NoOffers(unpriced=tuple(sorted(accs)), listed=tuple((t.cloud, t.name) for t in types),
                    some_unpriced=some)
