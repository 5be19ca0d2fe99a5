"""Why no offer matches a set of filters: the one diagnosis behind `gpuplan offers`' note and
the planner's "no offer matches" error.

``why_no_offers`` answers, first that holds: a pricing model asked for that the catalog holds
no offer of; accelerators asked for that no offer has (an instance type may list them, never
priced: MI300X); else which filter the user set, left out alone, would let offers through, with
how many. It names filters by their ``select_offers`` keyword ('gpus', 'clouds', …, and
'exclude'): each caller spells them its own way (``--cloud`` for `offers`, `clouds` for the
planner's errors, which the CLI then writes as flags). It queries the catalog a few times, so
it is meant for the error path only. ``unmatched_pricing``: the same diagnosis per pricing model
asked that has no offer while others have (the plan's note).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence

from ._load import Catalog
from ._record import record

SHOWN_TYPES = 5  # instance types named in the "no price" clause, then "…"

@record(kw_only=False)
class LeftOut:
    """Offers that match once one filter is left out (the others kept)."""

    filter: str  # the select_offers keyword, or 'exclude'
    offers: int
    # for 'include_flagged' only: the flags those offers carry, most common first
    flags: tuple[tuple[str, int], ...] = ()


@record(kw_only=False)
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


def unmatched_pricing(catalog: Catalog, filters: Mapping[str, object], given: Sequence[str],
                      present: Collection[str], *, name: Callable[[str], str],
                      left_out: Mapping[str, object] | None = None, **fixed) -> str:
    """Why the pricing models of ``filters['pricing']`` that no offer of ``present`` (the
    pricing models the caller's offers have) is priced as are missing, as one clause ("" for
    none): those the catalog holds no offer of, together (``absent_pricing``), then each other
    one: its matching offers' flagged prices, else the filters that, left out alone, let its
    offers through (``why_no_offers``'s arguments; ``name`` spells a filter): "no reserved_1y
    offer matches the other filters (without `clouds`: 120 offers)". A plan over committed_1y
    and on_demand used on_demand alone and said nothing of committed_1y."""
    from ._query import absent_pricing

    missing = [p for p in filters.get("pricing") or () if p not in present]
    absent = [p for p in missing if absent_pricing(catalog, (p,))]
    said = [absent_pricing(catalog, absent)] if absent else []
    # flagged prices left out are a filter too ("no capacity_block offer matches" where its
    # every offer is flagged expired), left out in turn as `offers` does
    usable = fixed.pop("include_flagged", True) is False
    given = [k for k in given if k != "pricing"] + (["include_flagged"] if usable else [])
    left_out = {**(left_out or {}), "include_flagged": True}
    for p in missing:
        if p in absent:
            continue
        why = why_no_offers(catalog, {**filters, "pricing": (p,), "include_flagged": not usable},
                            given, left_out=left_out, **fixed)
        flagged = [k for k in why.left_out if k.filter == "include_flagged"]
        others = NoOffers(left_out=tuple(k for k in why.left_out if k not in flagged))
        if flagged:
            n = flagged[0].offers
            said.append(f"the {n:,} {p} offer{'s' if n != 1 else ''} that match "
                        f"{'have flagged prices' if n != 1 else 'has a flagged price'} ("
                        + ", ".join(f for f, _ in flagged[0].flags) + ")")
        else:
            said.append(f"no {p} offer matches the other filters"
                        + (f" ({others.without(name)})" if others.left_out else ""))
    return "; ".join(said)
