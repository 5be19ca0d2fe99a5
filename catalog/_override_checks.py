"""What applying a price overrides file says about its entries (``_override_apply`` applies
them): an entry that matches nothing is an error naming the closest names, or the cloud the
name belongs to; an entry that is taken but looks like a mistake is a note (``OverrideNote``),
warned as a ``CatalogNotice`` when the file is applied and kept on the catalog
(``Catalog.override_notes``), so a plan's notes and a team report say it too, not stderr alone.

Notes on a rate (against the list price of the offer it replaces): far below the list price
(cents for dollars), about the list price ÷ the instance's GPUs (a per-GPU price: a rate is per
instance-hour), far above it (a monthly figure); one that adds an offer under a pricing model
or in a region the catalog does not sell the type in. On a discount: a percent under 1 (a
fraction: 0.1 for 10 %), and a family that, as the name prefix it is, also matched another
family (``g5`` matched the Graviton ``g5g``, a T4G, beside the A10G ``g5``).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping

from ._errors import CatalogNotice, OverrideError, UnknownNameError
from ._overrides import _MATCH_KEYS, Discount, PrivateRate
from ._record import record
from ._records import InstanceType, Offer


@record
class OverrideNote:
    """One note about an entry of an overrides file: ``text`` as said ("FILE: prices[1]: …"),
    ``source`` the file (``Overrides.path``), ``where`` the entry ("prices[1]"; "" for a
    note of several)."""

    text: str
    source: str
    where: str

    def about(self, offer: Offer) -> bool:
        """Whether ``offer`` is priced by this note's entry (its ``source`` names the entry:
        "overrides: FILE prices[1]" for a rate, "…; -10% (overrides: FILE discounts[2])")."""
        ref = f"overrides: {self.source} {self.where}"
        return bool(self.where) and (offer.source.endswith(ref) or f"({ref})" in offer.source)


# Notes of one kind said one by one; past them, one note says how many more (a file of 5,000
# rates $5/h each said 1,800 lines "… is 8× its listed $0.62/h")
MAX_SAID = 10


class Notes:
    """What applying one layer notes, warned as it is said: at most ``MAX_SAID`` of a kind,
    then, from ``close``, one note of how many more there were and where."""

    def __init__(self) -> None:
        self.said: list[OverrideNote] = []
        self._count: dict[str, int] = {}
        self._more: dict[tuple[str, str], list[str]] = {}  # (source, kind) → entries unsaid

    def say(self, source: str, where: str, text: str, *, kind: str) -> None:
        """Warn of ``text`` about entry ``where`` of ``source``; ``kind``: what a note saying
        how many more of them there were calls them ("rates far below their list price")."""
        if self._count.get(kind, 0) >= MAX_SAID:
            self._more.setdefault((source, kind), []).append(where)
            return
        self._count[kind] = self._count.get(kind, 0) + 1
        self._keep(OverrideNote(text=f"{source}: {where}: {text}", source=source, where=where))

    def _keep(self, note: OverrideNote) -> None:
        self.said.append(note)
        warnings.warn(CatalogNotice(note.text), stacklevel=4)

    def close(self) -> tuple[OverrideNote, ...]:
        """Every note said, with one for each kind said ``MAX_SAID`` times and more."""
        for (source, kind), more in self._more.items():
            shown = ", ".join(more[:5]) + (f" and {len(more) - 5:,} more" if len(more) > 5
                                           else "")
            self._keep(OverrideNote(
                text=f"{source}: {len(more):,} more {kind} than the {MAX_SAID} said: {shown}",
                source=source, where=""))
        self._more.clear()
        return tuple(self.said)


# -- entries that match nothing --------------------------------------------------------------

def unknown(source: str, where: str, kind: str, name: str, known: Iterable[str]) -> OverrideError:
    close = UnknownNameError(kind, name, known).suggestions
    hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return OverrideError(f"{source}: {where}: {kind} {name!r} matches nothing in the catalog."
                         f"{hint} To fix: correct {where} (`gpuplan offers` lists what the "
                         "catalog has)")


def other_cloud(source: str, where: str, name: str, cloud: str | None,
                elsewhere: list[str]) -> OverrideError:
    """The instance type exists, on another cloud than ``where`` names."""
    return OverrideError(f"{source}: {where}: instance type {name!r} is on "
                         f"{' and '.join(elsewhere)}, not {cloud}. To fix: set cloud: "
                         f"{elsewhere[0]} in {where}, or name an instance type of {cloud}")


def owned_elsewhere(source: str, where: str, kind: str, name: str, cloud: str,
                    owners: list[str]) -> OverrideError:
    """A region or family of another cloud than ``where`` names, in the words of `offers
    --cloud aws --region us-central1` ("region 'us-central1' is gcp's, not …"): it was told
    "matches nothing … Did you mean 'eu-central-1'"."""
    return OverrideError(f"{source}: {where}: {kind} {name!r} is {'/'.join(owners)}'s, not "
                         f"{cloud}'s. To fix: set cloud: {owners[0]} in {where}, or name a "
                         f"{kind} of {cloud}")


def region_error(source: str, where: str, region: str, cloud: str | None,
                 regions_by_cloud: Mapping[str, set[str]]) -> OverrideError:
    owners = sorted(c for c, regions in regions_by_cloud.items() if region in regions)
    if owners and cloud is not None:
        return owned_elsewhere(source, where, "region", region, cloud, owners)
    known = regions_by_cloud.get(cloud, set()) if cloud is not None else set().union(
        *regions_by_cloud.values())
    return unknown(source, where, "region", region, known)


def _families(names: Iterable[str]) -> set[str]:
    out = set()
    for n in names:
        out.add(n.split(".", 1)[0])  # aws: p5.48xlarge → p5
        parts = n.split("-")
        out.update("-".join(parts[:i]) for i in range(1, len(parts)))  # a3-highgpu-8g → a3
    return out


def explain_no_match(source: str, d: Discount, offers: tuple[Offer, ...]) -> OverrideError:
    pool = [o for o in offers if d.cloud is None or o.cloud == d.cloud]
    names = {o.instance_type for o in pool}
    if d.instance_type is not None and d.instance_type not in names:
        elsewhere = sorted({o.cloud for o in offers if o.instance_type == d.instance_type})
        if elsewhere:
            return other_cloud(source, d.where, d.instance_type, d.cloud, elsewhere)
        return unknown(source, d.where, "instance type", d.instance_type, names)
    if d.family is not None and not any(n.startswith(d.family) for n in names):
        owners = sorted({o.cloud for o in offers if o.instance_type.startswith(d.family)})
        if owners and d.cloud is not None:
            return owned_elsewhere(source, d.where, "family", d.family, d.cloud, owners)
        return unknown(source, d.where, "family", d.family, _families(names))
    regions = {o.region for o in pool}
    if d.region is not None and d.region not in regions:
        by_cloud: dict[str, set[str]] = {}
        for o in offers:
            by_cloud.setdefault(o.cloud, set()).add(o.region)
        return region_error(source, d.where, d.region, d.cloud, by_cloud)
    what = ", ".join(f"{k}={getattr(d, k)}" for k in _MATCH_KEYS if getattr(d, k) is not None)
    spot = " (without pricing, a discount leaves spot prices alone)" if d.pricing is None else ""
    return OverrideError(f"{source}: {d.where}: no offer has {what}{spot}. To fix: correct or "
                         f"remove {d.where}")


# -- notes on a discount -----------------------------------------------------------------------

_SEPARATORS = ".-_+"  # between the parts of a name: p5.48xlarge, a3-highgpu-8g, n1+t4x1


def say_of_discount(notes: Notes, source: str, d: Discount, priced: Iterable[tuple[str, str]],
                    instance_types: Mapping[tuple[str, str], InstanceType]) -> None:
    """The notes of a discount that priced offers of the instance types ``priced`` ((cloud,
    name)): where a more specific discount won (p5e's beside p5's), it took nothing off."""
    if d.percent < 1:
        notes.say(source, d.where, f"percent {d.percent:g} takes {d.percent:g}% off; if it is a "
                  f"fraction ({d.percent:g} for {d.percent * 100:g}%), write percent: "
                  f"{d.percent * 100:g}", kind="discounts of less than 1 percent")
    if d.family is None:
        return
    whole: dict[str, set[str]] = {}  # family as named → its accelerators
    longer: dict[str, set[str]] = {}  # families the prefix ran into (g5 → g5g)
    sep = ""
    for key in sorted(set(priced)):
        name, n = key[1], len(d.family)
        acc = instance_types[key].accelerator if key in instance_types else "?"
        if len(name) == n or name[n] in _SEPARATORS:
            whole.setdefault(d.family, set()).add(acc)
            sep = sep or name[n:n + 1]
        else:
            family = d.family + re.match(rf"[^{re.escape(_SEPARATORS)}]*", name[n:]).group()
            longer.setdefault(family, set()).add(acc)
    if not whole or not longer:  # a family as named, or a prefix meant as one ("p4": p4d, p4de)
        return
    said = ", ".join(f"{f} ({'/'.join(sorted(a))})" for f, a in sorted(longer.items()))
    notes.say(source, d.where,
              f"family {d.family!r} matches {d.family} ({'/'.join(sorted(whole[d.family]))}) "
              f"and, as the name prefix a family is, {said} too: {d.percent:g}% off all of "
              f"them. To discount {d.family} alone, write family: '{d.family}{sep}'",
              kind="families that also match longer families")


# -- notes on a rate ---------------------------------------------------------------------------

# A private rate this many times below the same offer's list price is more likely a typo (cents
# for dollars, a per-GPU or per-month figure) than a deal: list spot runs at most ~90% off, a
# negotiated discount far less. Said, not refused (a rate is the user's to give): a $0.000001/h
# rate for a $55/h p5.48xlarge costed a 47,885 GPU-hour team plan at $0.60 without a word.
FAR_BELOW_LIST = 50
# ... and this many times above it: no private deal costs more than the list; a monthly figure
# (730 h) is above the file's bound, a typo of cents (100×) or a per-year-of-GPUs one is not
FAR_ABOVE_LIST = 5
# A rate within this share of the list price ÷ the instance's GPUs reads as a per-GPU price
# ($6.88 for a $55.04/h 8-GPU p5.48xlarge): the rate is per instance-hour
PER_GPU_WITHIN = 0.15


def say_of_rate(notes: Notes, source: str, rate: PrivateRate, listed: float,
                gpus: int) -> None:
    """A rate far from the list price (``listed``) of the offer it replaces; ``gpus`` its
    instance's."""
    usd, shown = rate.usd_per_hour, f"${rate.usd_per_hour:,.6g}/h"
    what = f"{shown} for {rate.instance_type} {rate.region} {rate.pricing}"
    per_gpu = listed / gpus
    if gpus > 1 and rate.pricing != "spot" and abs(usd - per_gpu) <= PER_GPU_WITHIN * per_gpu:
        notes.say(source, rate.where,
                  f"{what} is about its listed ${listed:,.2f}/h ÷ {gpus} GPUs "
                  f"(${per_gpu:,.2f}): it looks like a per-GPU price, but usd_per_hour is per "
                  f"instance-hour ({gpus} × ${usd:,.6g} = ${gpus * usd:,.6g}); plans use it as "
                  f"given. If it is per GPU, write usd_per_hour: {gpus * usd:.6g} in "
                  f"{rate.where}", kind="rates near a per-GPU share of their list price")
    elif usd * FAR_BELOW_LIST < listed:
        notes.say(source, rate.where,
                  f"{what} is {listed / usd:,.0f}× below its listed ${listed:,.2f}/h; plans "
                  "use it. If it is a typo (cents for dollars, a per-GPU or monthly figure), "
                  f"correct {rate.where}", kind="rates far below their list price")
    elif usd > FAR_ABOVE_LIST * listed:
        notes.say(source, rate.where,
                  f"{what} is {usd / listed:,.0f}× its listed ${listed:,.2f}/h; plans use it. "
                  f"If it is a typo (a monthly figure, cents for dollars), correct "
                  f"{rate.where}", kind="rates far above their list price")


# The pricing model a cloud calls by another name: a 1-year GCP commitment written reserved_1y
_SAME_TERM = {"reserved_1y": "committed_1y", "reserved_3y": "committed_3y",
              "committed_1y": "reserved_1y", "committed_3y": "reserved_3y"}


def say_if_unsold(notes: Notes, source: str, rate: PrivateRate,
                  sold_in: Mapping[tuple[str, str], set[str]],
                  models: Mapping[str, set[str]],
                  classes: Mapping[tuple, set[tuple[str, str]]] | None = None) -> None:
    """A rate that adds an offer: under a pricing model the catalog sells nothing of on
    that cloud (Azure capacity_block, GCP reserved_1y where GCP says committed_1y), in a
    region where the catalog sells the type at no price (a deal the public lists lack, or a
    region typed wrong), or in a reserved class the catalog sells the term in none of (standard
    /none beside standard/all and /partial); ``sold_in``: (cloud, type) → regions, ``models``:
    cloud → models, ``classes``: (cloud, type, region, pricing) → (class, upfront) sold."""
    _say_if_unclassed(notes, source, rate, (classes or {}).get(
        (rate.cloud, rate.instance_type, rate.region, rate.pricing), set()))
    sold = models.get(rate.cloud, set())
    if rate.pricing not in sold:
        meant = _SAME_TERM.get(rate.pricing)
        said = (f"If you meant {meant}, correct {rate.where}" if meant in sold else
                f"If it is a typo, correct {rate.where}")
        notes.say(source, rate.where,
                  f"the catalog has no {rate.pricing} offer of {rate.cloud} (its {rate.cloud} "
                  f"offers are {', '.join(sorted(sold)) or 'none'}): your rate adds "
                  f"{rate.instance_type} {rate.region} {rate.pricing} as a new offer. {said}",
                  kind="rates adding an offer under a pricing model their cloud has none of")
    regions = sorted(sold_in.get((rate.cloud, rate.instance_type), ()))
    if rate.region in regions:
        return
    shown = ", ".join(regions[:6]) + (f" and {len(regions) - 6} more" if len(regions) > 6
                                      else "")
    notes.say(source, rate.where,
              f"the catalog sells {rate.instance_type} in {shown or 'no region'}, not "
              f"{rate.region}: your rate adds it there as a new offer. If {rate.region} is a "
              f"typo, correct {rate.where}",
              kind="rates adding an offer in a region the catalog sells their type nowhere in")


def _say_if_unclassed(notes: Notes, source: str, rate: PrivateRate,
                      sold: set[tuple[str, str]]) -> None:
    """A reserved rate whose class and upfront option the catalog sells that term in none of:
    a typo'd class would add an offer silently, beside the one meant."""
    if not sold or not rate.offering_class or (rate.offering_class, rate.upfront) in sold:
        return
    notes.say(source, rate.where,
              f"the catalog sells {rate.instance_type} {rate.region} {rate.pricing} as "
              f"{', '.join(f'{c}/{u}' for c, u in sorted(sold))} (offering_class/upfront), "
              f"not {rate.offering_class}/{rate.upfront or '-'}: your rate adds it as a new "
              f"offer. If it is a typo, correct {rate.where}",
              kind="rates adding an offer in a reserved class their term is not sold in")


__all__ = ["Notes", "OverrideNote"]
