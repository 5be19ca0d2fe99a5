"""Applying a price overrides file (``_overrides``: its format and parsing) to the catalog's
offers: discounts scale the prices they match, private rates replace an offer's price or add an
offer; an entry that matches nothing is an error naming the closest names. A file applied to
a catalog with overrides is applied with those, as entries of one file (``layered``,
``_override_layers``)."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence

from ._errors import CatalogNotice, OverrideError, UnknownNameError
from ._override_layers import refuse_twins
from ._overrides import _MATCH_KEYS, Discount, Overrides, PrivateRate, _fail
from ._records import (
    MIN_OFFER_USD_PER_HOUR,
    PRICE_UNUSABLE_FLAGS,
    RESERVED_MODELS,
    InstanceType,
    Offer,
    RecordError,
)

# -- applying ------------------------------------------------------------------------------------

def _unknown(source: str, where: str, kind: str, name: str, known: Iterable[str]) -> OverrideError:
    close = UnknownNameError(kind, name, known).suggestions
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return OverrideError(f"{source}: {where}: {kind} {name!r} matches nothing in the catalog."
                         f"{hint} To fix: correct {where} (`gpuplan offers` lists what the "
                         "catalog has)")


def _other_cloud(source: str, where: str, name: str, cloud: str | None,
                 elsewhere: list[str]) -> OverrideError:
    """The instance type exists, on another cloud than ``where`` names."""
    return OverrideError(f"{source}: {where}: instance type {name!r} is on "
                         f"{' and '.join(elsewhere)}, not {cloud}. To fix: set cloud: "
                         f"{elsewhere[0]} in {where}, or name an instance type of {cloud}")


def _families(names: Iterable[str]) -> set[str]:
    out = set()
    for n in names:
        out.add(n.split(".", 1)[0])  # aws: p5.48xlarge → p5
        parts = n.split("-")
        out.update("-".join(parts[:i]) for i in range(1, len(parts)))  # a3-highgpu-8g → a3
    return out


def _explain_no_match(source: str, d: Discount, offers: tuple[Offer, ...]) -> OverrideError:
    pool = [o for o in offers if d.cloud is None or o.cloud == d.cloud]
    names = {o.instance_type for o in pool}
    if d.instance_type is not None and d.instance_type not in names:
        elsewhere = sorted({o.cloud for o in offers if o.instance_type == d.instance_type})
        if elsewhere:
            return _other_cloud(source, d.where, d.instance_type, d.cloud, elsewhere)
        return _unknown(source, d.where, "instance type", d.instance_type, names)
    if d.family is not None and not any(n.startswith(d.family) for n in names):
        return _unknown(source, d.where, "family", d.family, _families(names))
    regions = {o.region for o in pool}
    if d.region is not None and d.region not in regions:
        return _unknown(source, d.where, "region", d.region, regions)
    what = ", ".join(f"{k}={getattr(d, k)}" for k in _MATCH_KEYS if getattr(d, k) is not None)
    spot = " (without pricing, a discount leaves spot prices alone)" if d.pricing is None else ""
    return OverrideError(f"{source}: {d.where}: no offer has {what}{spot}. To fix: correct or "
                         f"remove {d.where}")


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
        return dataclasses.replace(entry, instance_type=spelt(entry.instance_type, types),
                                   region=spelt(entry.region, regions))

    return dataclasses.replace(overrides, prices=tuple(map(respelt, overrides.prices)),
                               discounts=tuple(map(respelt, overrides.discounts)))


def layered(catalog, overrides: Overrides, today: _dt.date) -> tuple[tuple[Offer, ...], tuple]:
    """The offers of ``catalog`` (a ``Catalog``) with ``overrides`` applied as one more layer,
    and the layers to keep: the catalog without overrides, then each (overrides, day)."""
    base, earlier = (catalog._layers[0], catalog._layers[1:]) if catalog._layers else (
        catalog, ())
    offers = apply_overrides(base.offers, base._types, overrides, today, earlier=earlier,
                             previous=catalog.offers if earlier else None)
    return offers, (base, *earlier, (overrides, today))


def apply_overrides(offers: tuple[Offer, ...], instance_types: Mapping[tuple[str, str],
                                                                        InstanceType],
                    overrides: Overrides, today: _dt.date, *,
                    earlier: Sequence[tuple[Overrides, _dt.date]] = (),
                    previous: tuple[Offer, ...] | None = None) -> tuple[Offer, ...]:
    """Return new offers with discounts and private rates applied (the input is not changed).

    ``offers`` are list prices; ``earlier`` the layers (overrides, the day they were applied)
    already applied to these same offers, first first (``_override_layers``): every layer is
    applied to list prices, as the entries of one file are. ``previous``: what ``earlier``
    made of ``offers`` (those first, in order), kept where no discount of ``overrides``
    matches. Raises OverrideError for an entry of ``overrides`` that matches nothing, naming
    the closest names.
    """
    layers = [(_in_catalog_spelling(o, instance_types, offers), day)
              for o, day in (*earlier, (overrides, today))]
    overrides = layers[-1][0]
    _check_matches(overrides, instance_types, offers)  # the earlier layers were checked so
    refuse_twins([o for o, _ in layers])
    discounts = [(d, o.path) for o, _ in layers for d in o.discounts]
    by_key = {o.key: o for o in offers}
    out = []
    for i, offer in enumerate(offers):
        if previous is not None and not any(d.matches(offer) for d in overrides.discounts):
            # as the earlier layers priced it (a rate of theirs is set again below): pricing
            # again the ~12,000 offers an aws and a gcp discount match took ~1 s per layer
            out.append(previous[i])
            continue
        # the most specific of every layer's discounts, of the list price (never one on another)
        best, source = max(((d, s) for d, s in discounts if d.matches(offer)),
                           key=lambda pair: pair[0].specificity, default=(None, ""))
        if best is not None and offer.usd_per_hour is not None:
            factor = 1 - best.percent / 100
            if offer.usd_per_hour * factor < MIN_OFFER_USD_PER_HOUR:
                raise _too_deep(source, best, offer, offers)
            offer = _checked(source, best.where, dataclasses.replace, offer,
                             usd_per_hour=_scaled(offer.usd_per_hour, factor),
                             usd_per_hour_zone_median=_scaled(offer.usd_per_hour_zone_median,
                                                              factor),
                             usd_per_hour_zone_mean=_scaled(offer.usd_per_hour_zone_mean,
                                                            factor),
                             usd_per_hour_zone_max=_scaled(offer.usd_per_hour_zone_max, factor),
                             source=f"{offer.source}; -{best.percent:g}% (overrides: {source} "
                                    f"{best.where})",
                             flags=tuple(sorted({*offer.flags, "overridden"})))
        out.append(offer)
    index = {o.key: i for i, o in enumerate(out)}
    for layer, day in layers:  # rates are final prices: no discount of any layer scales one
        said = layer is overrides  # an earlier layer's notes were said when it was applied
        for rate in layer.prices:
            _apply_rate(out, index, by_key, offers, layer.path, rate, day, said=said)
    return tuple(out)


def _check_matches(overrides: Overrides, instance_types: Mapping[tuple[str, str], InstanceType],
                   offers: tuple[Offer, ...]) -> None:
    """Every entry matches an offer (a discount, one with a price), else one error naming the
    closest names."""
    source = overrides.path
    for rate in overrides.prices:
        if (rate.cloud, rate.instance_type) not in instance_types:
            elsewhere = sorted(c for c, n in instance_types if n == rate.instance_type)
            if elsewhere:
                raise _other_cloud(source, rate.where, rate.instance_type, rate.cloud, elsewhere)
            known = [n for c, n in instance_types if c == rate.cloud]
            raise _unknown(source, rate.where, "instance type", rate.instance_type, known)
        regions = {o.region for o in offers if o.cloud == rate.cloud}
        if rate.region not in regions:
            raise _unknown(source, rate.where, "region", rate.region, regions)
        _refuse_unclassified(source, rate, offers)
    for d in overrides.discounts:
        matched = [o for o in offers if d.matches(o)]
        if not matched:
            raise _explain_no_match(source, d, offers)
        if all(o.usd_per_hour is None for o in matched):  # the discount would change nothing
            raise OverrideError(
                f"{source}: {d.where}: the {len(matched):,} offer"
                f"{'s' if len(matched) > 1 else ''} it matches "
                f"{'have' if len(matched) > 1 else 'has'} no price to discount (e.g. "
                f"{matched[0].instance_type} {matched[0].region} {matched[0].pricing}). To "
                "fix: give your rate under prices: (cloud, instance_type, region, pricing, "
                f"usd_per_hour), or remove {d.where}")


def _apply_rate(out: list[Offer], index: dict, by_key: Mapping, offers: tuple[Offer, ...],
                source: str, rate: PrivateRate, today: _dt.date, *, said: bool) -> None:
    """``rate`` in ``out``: replacing the offer it names (keeping what a rate does not give),
    else added; ``said``: with its notes (far below the list price, a region not sold in)."""
    # the catalog's own record bounds (a rate below $0.000001/h) as this entry's error
    new = _checked(source, rate.where, Offer, cloud=rate.cloud,
                   instance_type=rate.instance_type, region=rate.region,
                   pricing=rate.pricing, usd_per_hour=rate.usd_per_hour, as_of=today,
                   offering_class=rate.offering_class, upfront=rate.upfront,
                   source=f"overrides: {source} {rate.where}", flags=("overridden",))
    old = by_key.get(new.key)
    if old is not None:  # keep what the rate does not replace; a private rate is trusted
        if old.usd_per_hour and said:
            _say_if_far_below(source, rate, old.usd_per_hour)
        new = dataclasses.replace(
            new, zone=old.zone, zone_count=old.zone_count,
            interruption_rate_per_hour=old.interruption_rate_per_hour,
            interruption_bucket=old.interruption_bucket,
            flags=tuple(sorted({*old.flags, "overridden"} - PRICE_UNUSABLE_FLAGS)))
    if new.key in index:
        out[index[new.key]] = new
    else:
        if said:
            _say_if_unsold(source, rate, offers)
        index[new.key] = len(out)
        out.append(new)


# A private rate this many times below the same offer's list price is more likely a typo (cents
# for dollars, a per-GPU or per-month figure) than a deal: list spot runs at most ~90% off, a
# negotiated discount far less. Said, not refused (a rate is the user's to give): a $0.000001/h
# rate for a $55/h p5.48xlarge costed a 47,885 GPU-hour team plan at $0.60 without a word.
FAR_BELOW_LIST = 50


def _say_if_far_below(source: str, rate: PrivateRate, listed: float) -> None:
    if rate.usd_per_hour * FAR_BELOW_LIST >= listed:
        return
    warnings.warn(CatalogNotice(
        f"{source}: {rate.where}: ${rate.usd_per_hour:,.6g}/h for {rate.instance_type} "
        f"{rate.region} {rate.pricing} is {listed / rate.usd_per_hour:,.0f}× below its listed "
        f"${listed:,.2f}/h; plans use it. If it is a typo (cents for dollars, a per-GPU or "
        f"monthly figure), correct {rate.where}"), stacklevel=5)


def _say_if_unsold(source: str, rate: PrivateRate, offers) -> None:
    """A rate in a region where the catalog sells the type at no price adds an offer there
    (a deal the public lists lack), but a region typed wrong does the same: said once."""
    sold = sorted({o.region for o in offers if (o.cloud, o.instance_type) == (rate.cloud,
                                                                          rate.instance_type)})
    if rate.region in sold:
        return
    shown = ", ".join(sold[:6]) + (f" and {len(sold) - 6} more" if len(sold) > 6 else "")
    warnings.warn(CatalogNotice(
        f"{source}: {rate.where}: the catalog sells {rate.instance_type} in "
        f"{shown or 'no region'}, not {rate.region}: your rate adds it there as a new offer. "
        f"If {rate.region} is a typo, correct {rate.where}"), stacklevel=5)


def _refuse_unclassified(source: str, rate: PrivateRate, offers) -> None:
    """A reserved rate without offering_class and upfront, where the catalog sells that term
    in classes (AWS: standard/convertible × no/partial/all upfront): it replaced none of them
    and was added beside them as another, unclassified offer — not what "the rate I hold"
    means."""
    if rate.pricing not in RESERVED_MODELS or rate.offering_class or rate.upfront:
        return
    sold = sorted({(o.offering_class, o.upfront) for o in offers
                   if (o.cloud, o.instance_type, o.region, o.pricing) == (
                       rate.cloud, rate.instance_type, rate.region, rate.pricing)
                   and o.offering_class})
    if sold:
        c, u = sold[0]
        raise _fail(source, rate.where,
                    f"{rate.instance_type} {rate.pricing} in {rate.region} is sold as "
                    f"{', '.join(f'{a}/{b}' for a, b in sold)} (offering_class/upfront); "
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
