"""Applying a price overrides file (``_overrides``: its format and parsing) to the catalog's
offers: discounts scale the prices they match, private rates replace an offer's price or add an
offer; an entry that matches nothing is an error naming the closest names, one that looks
like a mistake a note (``_override_checks``). A file applied to
a catalog with overrides is applied with those, as entries of one file (``layered``,
``_override_layers``)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
from collections.abc import Iterable, Mapping, Sequence

from ._errors import OverrideError
from ._override_checks import (
    Notes,
    OverrideNote,
    explain_no_match,
    other_cloud,
    region_error,
    say_if_unsold,
    say_of_discount,
    say_of_rate,
    unknown,
)
from ._override_layers import refuse_twins
from ._overrides import Discount, Overrides, PrivateRate, _fail
from ._records import (
    MIN_OFFER_USD_PER_HOUR,
    PRICE_UNUSABLE_FLAGS,
    RESERVED_MODELS,
    InstanceType,
    Offer,
    RecordError,
)

# -- applying ------------------------------------------------------------------------------------

def _in_catalog_spelling(overrides: Overrides, instance_types: Mapping[tuple[str, str],
                                                                         InstanceType],
                         offers: tuple[Offer, ...]) -> Overrides:
    """Each entry's instance type and region as the catalog spells them, matched as the
    filters match names (trimmed, any case where one name matches so): `P5.48XLARGE` in an
    overrides file matched no offer beside `offers --instance P5.48XLARGE` taking it."""
    from ._names_match import fold_index, match_name

    types = fold_index({n for _, n in instance_types})
    regions = fold_index({o.region for o in offers})

    def spelt(name: str | None, folded) -> str | None:  # noqa: ANN001
        found = None if name is None else match_name(name, folded)
        return found if isinstance(found, str) else name  # unknown: refused below, as given

    def respelt(entry):  # noqa: ANN001, ANN202 - a PrivateRate or a Discount
        name, region = spelt(entry.instance_type, types), spelt(entry.region, regions)
        if (name, region) == (entry.instance_type, entry.region):
            return entry  # as spelt already: a copy of each of 4,762 entries took 0.1 s
        return dataclasses.replace(entry, instance_type=name, region=region)

    return dataclasses.replace(overrides, prices=tuple(map(respelt, overrides.prices)),
                               discounts=tuple(map(respelt, overrides.discounts)))


def layered(catalog, overrides: Overrides,
            today: _dt.date) -> tuple[tuple[Offer, ...], tuple, tuple[OverrideNote, ...]]:
    """The offers of ``catalog`` (a ``Catalog``) with ``overrides`` applied as one more layer,
    the layers to keep (the catalog without overrides, then each (overrides, day)) and what
    applying ``overrides`` noted (``_override_checks``; an earlier layer's were noted then)."""
    base, earlier = (catalog._layers[0], catalog._layers[1:]) if catalog._layers else (
        catalog, ())
    notes: list[OverrideNote] = []
    offers = apply_overrides(base.offers, base._types, overrides, today, earlier=earlier,
                             previous=catalog.offers if earlier else None, notes=notes)
    return offers, (base, *earlier, (overrides, today)), tuple(notes)


class _Sold:
    """What the checks and notes of the entries look up in the list-priced offers, gathered in
    one pass over them (each rate scanned all ~14,000 offers three times)."""

    def __init__(self, offers: Iterable[Offer]) -> None:
        self.regions: dict[str, set[str]] = {}  # cloud → regions
        self.sold_in: dict[tuple[str, str], set[str]] = {}  # (cloud, type) → regions
        self.models: dict[str, set[str]] = {}  # cloud → pricing models
        self.classes: dict[tuple, set[tuple[str, str]]] = {}  # a term → (class, upfront) sold
        for o in offers:
            self.regions.setdefault(o.cloud, set()).add(o.region)
            self.sold_in.setdefault((o.cloud, o.instance_type), set()).add(o.region)
            self.models.setdefault(o.cloud, set()).add(o.pricing)
            if o.offering_class:
                self.classes.setdefault((o.cloud, o.instance_type, o.region, o.pricing),
                                        set()).add((o.offering_class, o.upfront))


class _DiscountIndex:
    """The discounts that can match an offer, found by its instance type, the prefixes of its
    name (a family) and its cloud, then checked with ``Discount.matches``: ``matching`` gives
    the positions ``Discount.matches`` would accept, in order. Comparing every offer with every
    discount was 58 million calls for a file of 4,762 discounts: every command took 60 s."""

    def __init__(self, discounts: Sequence[Discount]) -> None:
        self.discounts = discounts
        # each discount in one bucket: (its narrowest name, its region or None)
        self.by_type: dict[tuple[str, str | None], list[int]] = {}
        self.by_family: dict[tuple[str, str | None], list[int]] = {}
        self.by_cloud: dict[tuple[str | None, str | None], list[int]] = {}
        for i, d in enumerate(discounts):
            if d.instance_type is not None:
                self.by_type.setdefault((d.instance_type, d.region), []).append(i)
            elif d.family is not None:
                self.by_family.setdefault((d.family, d.region), []).append(i)
            else:  # a cloud's (a discount names one of cloud, family, instance type)
                self.by_cloud.setdefault((d.cloud, d.region), []).append(i)
        self.lengths = sorted({len(f) for f, _ in self.by_family})

    def matching(self, offer: Offer) -> list[int]:
        name, region, cloud = offer.instance_type, offer.region, offer.cloud
        found: list[int] = []
        for bucket, key in ((self.by_type, name), (self.by_cloud, cloud),
                            (self.by_cloud, None)):
            found += bucket.get((key, region), ())
            found += bucket.get((key, None), ())
        for n in self.lengths:
            if n > len(name):
                break
            found += self.by_family.get((name[:n], region), ())
            found += self.by_family.get((name[:n], None), ())
        found.sort()  # file order: of equally specific discounts, the first wins
        discounts = self.discounts
        return [i for i in found if discounts[i].matches(offer)]


def apply_overrides(offers: tuple[Offer, ...], instance_types: Mapping[tuple[str, str],
                                                                        InstanceType],
                    overrides: Overrides, today: _dt.date, *,
                    earlier: Sequence[tuple[Overrides, _dt.date]] = (),
                    previous: tuple[Offer, ...] | None = None,
                    notes: list[OverrideNote] | None = None) -> tuple[Offer, ...]:
    """Return new offers with discounts and private rates applied (the input is not changed).

    ``offers`` are list prices; ``earlier`` the layers (overrides, the day they were applied)
    already applied to these same offers, first first (``_override_layers``): every layer is
    applied to list prices, as the entries of one file are. ``previous``: what ``earlier``
    made of ``offers`` (those first, in order), kept where no discount of ``overrides``
    matches. Raises OverrideError for an entry of ``overrides`` that matches nothing, naming
    the closest names; what looks like a mistake in it is warned of and added to ``notes``.
    """
    layers = [(_in_catalog_spelling(o, instance_types, offers), day)
              for o, day in (*earlier, (overrides, today))]
    overrides = layers[-1][0]
    sold, said = _Sold(offers), Notes()
    _check_rates(overrides, instance_types, sold)  # the earlier layers were checked so
    discounts = [(d, o.path) for o, _ in layers for d in o.discounts]
    first_new = len(discounts) - len(overrides.discounts)  # this layer's discounts from here
    index = _DiscountIndex([d for d, _ in discounts])
    matching = [index.matching(o) for o in offers]  # one pass, for the checks and the prices
    hits = _check_discounts(overrides, offers, matching, first_new)
    refuse_twins([o for o, _ in layers])
    specificity = [d.specificity for d, _ in discounts]
    won: list[set[tuple[str, str]]] = [set() for _ in hits]  # types each one of this layer priced
    out = []
    for i, offer in enumerate(offers):
        found = matching[i]
        if previous is not None and not (found and found[-1] >= first_new):
            # as the earlier layers priced it (a rate of theirs is set again below): pricing
            # again the ~12,000 offers an aws and a gcp discount match took ~1 s per layer
            out.append(previous[i])
            continue
        if found and offer.usd_per_hour is not None:
            # the most specific of every layer's discounts, of the list price (never one on
            # another); of equally specific ones the first
            k = max(found, key=specificity.__getitem__)
            if k >= first_new:
                won[k - first_new].add((offer.cloud, offer.instance_type))
            offer = _discounted(offer, *discounts[k], offers)
        out.append(offer)
    for d, types in zip(overrides.discounts, won, strict=True):
        say_of_discount(said, overrides.path, d, types, instance_types)
    index_of = {o.key: i for i, o in enumerate(out)}
    by_key = {o.key: o for o in offers}
    for layer, day in layers:  # rates are final prices: no discount of any layer scales one
        for rate in layer.prices:  # an earlier layer's notes were said when it was applied
            _apply_rate(out, index_of, by_key, sold, instance_types, layer.path, rate, day,
                        said=said if layer is overrides else None)
    kept = said.close()
    if notes is not None:
        notes.extend(kept)
    return tuple(out)


def _discounted(offer: Offer, best: Discount, source: str, offers) -> Offer:
    factor = 1 - best.percent / 100
    if offer.usd_per_hour * factor < MIN_OFFER_USD_PER_HOUR:
        raise _too_deep(source, best, offer, offers)
    return _checked(source, best.where, dataclasses.replace, offer,
                    usd_per_hour=_scaled(offer.usd_per_hour, factor),
                    usd_per_hour_zone_median=_scaled(offer.usd_per_hour_zone_median, factor),
                    usd_per_hour_zone_mean=_scaled(offer.usd_per_hour_zone_mean, factor),
                    usd_per_hour_zone_max=_scaled(offer.usd_per_hour_zone_max, factor),
                    source=f"{offer.source}; -{best.percent:g}% (overrides: {source} "
                           f"{best.where})",
                    flags=tuple(sorted({*offer.flags, "overridden"})))


def _check_rates(overrides: Overrides, instance_types: Mapping[tuple[str, str], InstanceType],
                 sold: _Sold) -> None:
    """Every rate names an instance type and a region of its cloud, and a reserved term's
    class where the catalog sells it in classes; else one error naming the closest names."""
    source = overrides.path
    for rate in overrides.prices:
        if (rate.cloud, rate.instance_type) not in instance_types:
            elsewhere = sorted(c for c, n in instance_types if n == rate.instance_type)
            if elsewhere:
                raise other_cloud(source, rate.where, rate.instance_type, rate.cloud, elsewhere)
            known = [n for c, n in instance_types if c == rate.cloud]
            raise unknown(source, rate.where, "instance type", rate.instance_type, known)
        if rate.region not in sold.regions.get(rate.cloud, ()):
            raise region_error(source, rate.where, rate.region, rate.cloud, sold.regions)
        _refuse_unclassified(source, rate, sold)


def _check_discounts(overrides: Overrides, offers: tuple[Offer, ...],
                     matching: Sequence[Sequence[int]], first_new: int) -> list[list[int]]:
    """The offers (positions) each discount of ``overrides`` matches, given the discounts each
    offer matches (``matching``; this layer's from ``first_new``): one with a price for each,
    else one error naming the closest names."""
    hits: list[list[int]] = [[] for _ in overrides.discounts]
    for i, found in enumerate(matching):
        for k in found:
            if k >= first_new:
                hits[k - first_new].append(i)
    source = overrides.path
    for d, hit in zip(overrides.discounts, hits, strict=True):
        if not hit:
            raise explain_no_match(source, d, offers)
        if all(offers[i].usd_per_hour is None for i in hit):  # it would change nothing
            first, n = offers[hit[0]], len(hit)
            raise OverrideError(
                f"{source}: {d.where}: the {n:,} offer{'s' if n > 1 else ''} it matches "
                f"{'have' if n > 1 else 'has'} no price to discount (e.g. "
                f"{first.instance_type} {first.region} {first.pricing}). To "
                "fix: give your rate under prices: (cloud, instance_type, region, pricing, "
                f"usd_per_hour), or remove {d.where}")
    return hits


def _apply_rate(out: list[Offer], index: dict, by_key: Mapping, sold: _Sold,
                instance_types: Mapping[tuple[str, str], InstanceType], source: str,
                rate: PrivateRate, today: _dt.date, *, said: Notes | None) -> None:
    """``rate`` in ``out``: replacing the offer it names (keeping what a rate does not give),
    else added; ``said``: the notes to add its own to (far from the list price, a pricing
    model or region not sold in), None for none (an earlier layer's, said when applied)."""
    # the catalog's own record bounds (a rate below $0.000001/h) as this entry's error
    new = _checked(source, rate.where, Offer, cloud=rate.cloud,
                   instance_type=rate.instance_type, region=rate.region,
                   pricing=rate.pricing, usd_per_hour=rate.usd_per_hour, as_of=today,
                   offering_class=rate.offering_class, upfront=rate.upfront,
                   source=f"overrides: {source} {rate.where}", flags=("overridden",))
    old = by_key.get(new.key)
    if old is not None:  # keep what the rate does not replace; a private rate is trusted
        if old.usd_per_hour and said is not None:
            say_of_rate(said, source, rate, old.usd_per_hour,
                        instance_types[(rate.cloud, rate.instance_type)].gpu_count)
        new = dataclasses.replace(
            new, zone=old.zone, zone_count=old.zone_count,
            interruption_rate_per_hour=old.interruption_rate_per_hour,
            interruption_bucket=old.interruption_bucket,
            flags=tuple(sorted({*old.flags, "overridden"} - PRICE_UNUSABLE_FLAGS)))
    if new.key in index:
        out[index[new.key]] = new
    else:
        if said is not None:
            say_if_unsold(said, source, rate, sold.sold_in, sold.models, sold.classes)
        index[new.key] = len(out)
        out.append(new)


def _refuse_unclassified(source: str, rate: PrivateRate, sold: _Sold) -> None:
    """A reserved rate without offering_class and upfront, where the catalog sells that term
    in classes (AWS: standard/convertible × no/partial/all upfront): it replaced none of them
    and was added beside them as another, unclassified offer — not what "the rate I hold"
    means."""
    if rate.pricing not in RESERVED_MODELS or rate.offering_class or rate.upfront:
        return
    classes = sorted(sold.classes.get((rate.cloud, rate.instance_type, rate.region,
                                       rate.pricing), ()))
    if classes:
        c, u = classes[0]
        raise _fail(source, rate.where,
                    f"{rate.instance_type} {rate.pricing} in {rate.region} is sold as "
                    f"{', '.join(f'{a}/{b}' for a, b in classes)} (offering_class/upfront); "
                    "without them this rate would be one more, unclassified offer beside "
                    "those, replacing none",
                    f"add the term you hold, e.g. offering_class: {c}, upfront: {u}")


def _too_deep(source: str, d: Discount, offer: Offer, offers) -> OverrideError:
    """A discount that would price an offer below what any offer can hold, with the largest
    percent that keeps every offer it matches priced (their cheapest price decides)."""
    cheapest = min(o.usd_per_hour for o in offers
                   if d.matches(o) and o.usd_per_hour is not None)
    most = math.floor(100 * (1 - MIN_OFFER_USD_PER_HOUR / cheapest) * 1e4) / 1e4
    return OverrideError(
        f"{source}: {d.where}: percent {d.percent!r} would price {offer.cloud}/"
        f"{offer.instance_type}/{offer.region}/{offer.pricing} (${offer.usd_per_hour:,.4g}/h) "
        f"below ${MIN_OFFER_USD_PER_HOUR:g}/h, the least any offer can cost. To fix: a percent "
        f"of at most {most:g} for what {d.where} matches")


def _checked(source: str, where: str, make, /, *args, **kwargs) -> Offer:
    """``make(*args, **kwargs)``, an offer the catalog cannot hold (a 99.99 % discount of a
    $0.05/h price) reported as the error of the entry at ``where``."""
    try:
        return make(*args, **kwargs)
    except RecordError as exc:
        raise OverrideError(f"{source}: {where}: {exc}. To fix: correct {where}") from None


def _scaled(value: float | None, factor: float) -> float | None:
    if value is None:
        return None
    scaled = value * factor
    return round(scaled, 6) or scaled  # never round a tiny price to $0


__all__ = ["apply_overrides", "layered"]
