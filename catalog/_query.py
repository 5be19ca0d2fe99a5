"""Joined, filtered and sorted views of the catalog for people and programs.

``select_offers`` is what `gpuplan offers` and the app's Catalog page show; it validates every
filter against the catalog so a typo gets "did you mean" rather than an empty table. A region
filter matches whole region codes: ``us-east-1`` never includes the Local Zone
``us-east-1-atl-1`` (its own region, priced on its own). Region and instance type names are
trimmed and matched in any case where one name matches so (``check_names``), and the rows
spell them as the catalog does.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ._aliases import check_names
from ._clouds import CLOUDS
from ._errors import GpuplanError, UnknownNameError
from ._files import shown_number
from ._load import Catalog
from ._record import record
from ._records import (
    OFFER_FLAGS,
    PRICING_MODELS,
    Accelerator,
    InstanceType,
    Offer,
    canonical_pricing,
)

SORT_KEYS = ("price", "gpu_price", "pflop_price")


@record
class OfferRow:
    """One offer joined with its instance type and accelerator."""

    offer: Offer
    instance: InstanceType
    accelerator: Accelerator

    @property
    def flags(self) -> tuple[str, ...]:
        """The offer's flags and those its instance type carries for every offer of it: a
        catalog build sets ``gpu_count_corrected`` on the type (Azure's ND96isr_H100_v5
        listed with 12 GPUs, AWS's p2 with K80 boards), and no offer of the 14,493 said so."""
        extra = _type_flags(self.instance)
        return tuple(sorted({*self.offer.flags, *extra})) if extra else self.offer.flags

    @property
    def flag_reasons(self) -> str:
        """``Offer.flag_reasons`` and ``type_flag_reasons``."""
        return "; ".join(x for x in (self.offer.flag_reasons, self.type_flag_reasons) if x)

    @property
    def type_flag_reasons(self) -> str:
        """Why, for each flag of the instance type the offer lacks (one a newer build put on
        the offer has its reason there); "" for none."""
        return "; ".join(f"{f}: {_type_flag_reason(self.instance, f)}" for f in _type_flags(
            self.instance) if f not in self.offer.flags)

    @property
    def usd_per_gpu_hour(self) -> float | None:
        p = self.offer.usd_per_hour
        return None if p is None else p / self.instance.gpu_count

    @property
    def usd_per_bf16_pflop_hour(self) -> float | None:
        """Dollars per hour of one dense bf16 PFLOP/s of datasheet peak."""
        gpu = self.usd_per_gpu_hour
        peak = self.accelerator.tflops_bf16
        return None if gpu is None or not peak else gpu / (peak / 1000)

    def as_dict(self) -> dict:
        o, t, a = self.offer, self.instance, self.accelerator
        return {
            "cloud": o.cloud, "instance_type": o.instance_type, "region": o.region,
            "zone": o.zone or None, "accelerator": a.name, "gpu_count": t.gpu_count,
            "gpu_memory_gib": t.gpu_memory_gib or a.memory_gib, "vcpus": t.vcpus,
            "memory_gib": t.memory_gib, "pricing": o.pricing, "usd_per_hour": o.usd_per_hour,
            "usd_per_gpu_hour": _round(self.usd_per_gpu_hour),
            "usd_per_hour_zone_median": o.usd_per_hour_zone_median,
            "usd_per_hour_zone_mean": o.usd_per_hour_zone_mean,
            "usd_per_hour_zone_max": o.usd_per_hour_zone_max,
            "usd_per_bf16_pflop_hour": _round(self.usd_per_bf16_pflop_hour),
            "term_hours": o.term_hours, "offering_class": o.offering_class or None,
            "upfront": o.upfront or None,
            "interruption_rate_per_hour": o.interruption_rate_per_hour,
            "interruption_bucket": o.interruption_bucket or None,
            "region_kind": CLOUDS[o.cloud].region_kind(o.region),
            "inter_node_gbps": t.inter_node_gbps, "fabric": t.fabric,
            "intra_node_topology": t.intra_node_topology, "as_of": o.as_of.isoformat(),
            "as_of_approximate": o.as_of_approximate, "source": o.source,
            "price_usable": o.price_usable, "flags": list(self.flags),
            "flag_reasons": self.flag_reasons or None,
        }


def _type_flags(t: InstanceType) -> tuple[str, ...]:
    """The instance type's flags that are offer flags (``network_unverified`` is not one: it
    is about the type's network, which `offers` shows no column of)."""
    return tuple(f for f in t.flags if f in OFFER_FLAGS)


# the clause of an instance type's notes that says what the source counted: "source lists 12
# GPUs; the VM has 8 (…)", "the price table lists 8 GPUs of 24 GiB; the instance has 16 of 12"
_COUNT_NOTE = re.compile(r"[^;]*\blists [\d,]+ GPUs[^;]*(?:; the [\w -]+ has [^;]*)?")


def _type_flag_reason(t: InstanceType, flag: str) -> str:
    if flag == "gpu_count_corrected":
        found = _COUNT_NOTE.search(t.notes)
        return (found.group().strip() if found else
                f"the source's GPU count was corrected to {t.gpu_count}")
    return f"set on the instance type {t.name}"


def _round(x: float | None) -> float | None:
    """To 6 decimals (what a price needs); a rate that would read 0.0 there (a $1e-6/h
    private rate over 8 GPUs) to 6 significant digits instead: the catalog never says $0."""
    if x is None:
        return None
    return round(x, 6) if round(x, 6) or not x else float(f"{x:.6g}")


def _validated(catalog: Catalog, clouds, regions, pricing, gpus) -> tuple:
    clouds = check_names("cloud", clouds or (), CLOUDS, spell=lambda c: c.strip().lower(),
                         field="clouds")
    pricing = check_names("pricing model", pricing or (), PRICING_MODELS,
                          spell=canonical_pricing, field="pricing")
    if regions:  # (every offer's region read only when some are asked for), as it spells them
        regions = check_names("region", regions, catalog.regions(), hint="run `gpuplan offers "
                              "--json | jq '.[].region'` or see `gpuplan catalog info`",
                              field="regions")
    if clouds and regions:  # each name exists, but in no asked-for cloud: 0 offers, silently
        in_clouds = {r for c in clouds for r in catalog.regions(c)}
        for r in regions:
            if r not in in_clouds:
                owners = [c for c in CLOUDS if r in catalog.regions(c)]
                # fields, not flags: the CLI, the app and a team plan each name them theirs
                raise GpuplanError(f"region {r!r} is {'/'.join(owners)}'s, not in `clouds` "
                                   f"{','.join(clouds)}. To fix: add {owners[0]} to `clouds` "
                                   f"or drop {r} from `regions`", field="regions", value=r)
    try:
        accs = tuple(catalog.resolve_accelerator(g) for g in gpus or ())
    except GpuplanError as exc:  # named as the list it came from, as the others are
        exc.field = exc.field or "gpus"
        raise
    return clouds, tuple(regions or ()), pricing, accs


def _refuse_elsewhere(catalog: Catalog, names: Sequence[str], clouds: Sequence[str]) -> None:
    """Each instance type of ``names`` is one of ``clouds``', else the region's error."""
    for n in names:
        owners = sorted({t.cloud for t in catalog.instance_types if t.name == n})
        if not set(owners) & set(clouds):
            raise GpuplanError(f"instance type {n!r} is {'/'.join(owners)}'s, not in `clouds` "
                               f"{','.join(clouds)}. To fix: add {owners[0]} to `clouds` or "
                               f"drop {n} from `instance_types`", field="instance_types",
                               value=n)


MAX_PRICE_LIMIT_USD_PER_HOUR = 100_000.0  # no instance costs more; beyond it, a unit mistake
# a filter's floor of GPUs per instance: TPU pod slices reach 6,144 chips (tpu-v5p); as many
# as a plan may use at all (it was 1,024: no slice of 2,048 chips or more could be asked for)
MAX_MIN_GPUS = 65_536


def select_offers(catalog: Catalog, *, gpus: Sequence[str] = (), clouds: Sequence[str] = (),
                  regions: Sequence[str] = (), pricing: Sequence[str] = (),
                  min_gpus: int | None = None, max_price: float | None = None,
                  instance_types: Sequence[str] = (), sort: str = "price",
                  include_unpriced: bool = True, include_flagged: bool = True,
                  only_flagged: bool = False) -> list[OfferRow]:
    """Offers matching every given filter (an empty filter matches all), sorted by ``sort``.

    ``include_flagged=False`` leaves out offers whose price must not be used (``price_usable``
    False: flagged or unknown); ``only_flagged=True`` lists just those, each with its
    ``flags`` and ``flag_reasons``.
    """
    if sort not in SORT_KEYS:
        raise UnknownNameError("sort", sort, SORT_KEYS,
                               hint=f"use one of {', '.join(SORT_KEYS)}")
    if min_gpus is not None and (isinstance(min_gpus, bool) or not isinstance(min_gpus, int)
                                 or not 1 <= min_gpus <= MAX_MIN_GPUS):
        raise GpuplanError(f"--min-gpus must be a whole number from 1 to {MAX_MIN_GPUS:,}, got "
                           f"{min_gpus!r}. To fix: pass a GPU count")
    if max_price is not None and (isinstance(max_price, bool)
                                  or not isinstance(max_price, int | float)
                                  or not math.isfinite(max_price)
                                  or not 0 < max_price <= MAX_PRICE_LIMIT_USD_PER_HOUR):
        raise GpuplanError(f"--max-price must be a number above 0 and at most "
                           f"{MAX_PRICE_LIMIT_USD_PER_HOUR:,.0f} USD per instance-hour, got "
                           f"{shown_number(max_price)}. To fix: pass USD per instance-hour, "
                           "e.g. 40")
    if only_flagged and not include_flagged:
        raise GpuplanError("only_flagged and include_flagged=False exclude every offer. To "
                           "fix: pass one of them")
    clouds, regions, pricing, accs = _validated(catalog, clouds, regions, pricing, gpus)
    if instance_types:  # as the catalog spells them ('P5.48XLARGE' is its p5.48xlarge)
        instance_types = check_names("instance type", instance_types,
                                     {t.name for t in catalog.instance_types},
                                     hint="run `gpuplan offers` to list instance types",
                                     field="instance_types")
        if clouds:  # a type of another cloud: 0 offers, silently, as a region's was
            _refuse_elsewhere(catalog, instance_types, clouds)
    acc_by_name = {a.name: a for a in catalog.accelerators}
    types = {t.key: t for t in catalog.instance_types}
    kept_types = None  # what the instance type alone decides, before any offer is built
    if clouds or accs or instance_types or min_gpus:
        kept_types = {k for k, t in types.items()
                      if not ((clouds and t.cloud not in clouds)
                              or (accs and t.accelerator not in accs)
                              or (instance_types and t.name not in instance_types)
                              or (min_gpus and t.gpu_count < min_gpus))}
    rows = []
    # only the offers those filters, the pricing models and the price's presence keep are
    # built from the cache; the rest is checked here (the order of the rows is the sort's:
    # keys are unique)
    for o in catalog.offers_where(
            pricing=pricing or None, types=kept_types,
            priced_only=not include_unpriced or max_price is not None):
        t = types[(o.cloud, o.instance_type)]
        if regions and o.region not in regions:
            continue
        if (only_flagged and o.price_usable) or (not include_flagged and not o.price_usable):
            continue
        if max_price is not None and o.usd_per_hour > max_price:
            continue
        rows.append(OfferRow(offer=o, instance=t, accelerator=acc_by_name[t.accelerator]))

    value_of = {"price": lambda row: row.offer.usd_per_hour,  # only the sort's own figure:
                "gpu_price": lambda row: row.usd_per_gpu_hour,  # the plan sorts ~5,000 rows
                "pflop_price": lambda row: row.usd_per_bf16_pflop_hour}[sort]

    def key(row: OfferRow):
        value = value_of(row)
        return (math.inf if value is None else value, row.offer.key)

    return sorted(rows, key=key)


@record
class AcceleratorSummary:
    accelerator: Accelerator
    cheapest_on_demand_usd_per_gpu_hour: float | None
    cheapest_spot_usd_per_gpu_hour: float | None
    clouds: tuple[str, ...]
    instance_types: int
    cheapest_on_demand_flags: tuple[str, ...] = ()  # flags of the offer behind the price
    cheapest_spot_flags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # those that name it (``Catalog.aliases_of``)

    def as_dict(self) -> dict:
        a = self.accelerator
        return {
            "name": a.name, "vendor": a.vendor, "architecture": a.architecture,
            "aliases": list(self.aliases), "memory_gib": a.memory_gib,
            "memory_bandwidth_gb_per_s": a.memory_bandwidth_gb_per_s,
            **{f"tflops_{d}": getattr(a, f"tflops_{d}")
               for d in ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8")},
            "tops_int8": a.tops_int8, "intra_node_link": a.intra_node_link,
            "intra_node_gb_per_s_per_gpu": a.intra_node_gb_per_s_per_gpu, "tdp_w": a.tdp_w,
            "cheapest_on_demand_usd_per_gpu_hour": _round(self.cheapest_on_demand_usd_per_gpu_hour),
            "cheapest_spot_usd_per_gpu_hour": _round(self.cheapest_spot_usd_per_gpu_hour),
            "cheapest_on_demand_flags": list(self.cheapest_on_demand_flags),
            "cheapest_spot_flags": list(self.cheapest_spot_flags),
            "clouds": list(self.clouds), "instance_types": self.instance_types,
            "unverified": list(a.unverified), "source": a.source,
        }


def accelerator_summaries(catalog: Catalog) -> list[AcceleratorSummary]:
    """One row per accelerator: specs plus the cheapest usable price per GPU-hour."""
    types = {t.key: t for t in catalog.instance_types}
    best: dict[tuple[str, str], float] = {}
    best_flags: dict[tuple[str, str], tuple[str, ...]] = {}
    clouds: dict[str, set[str]] = {}
    counts: dict[str, int] = {}
    for t in catalog.instance_types:
        counts[t.accelerator] = counts.get(t.accelerator, 0) + 1
        clouds.setdefault(t.accelerator, set()).add(t.cloud)
    for o in catalog.offers:
        if not o.price_usable or o.pricing not in ("on_demand", "spot"):
            continue
        t = types[(o.cloud, o.instance_type)]
        per_gpu = o.usd_per_hour / t.gpu_count
        k = (t.accelerator, o.pricing)
        if per_gpu < best.get(k, math.inf):
            best[k], best_flags[k] = per_gpu, o.flags
    return [AcceleratorSummary(
        accelerator=a, cheapest_on_demand_usd_per_gpu_hour=best.get((a.name, "on_demand")),
        cheapest_spot_usd_per_gpu_hour=best.get((a.name, "spot")),
        clouds=tuple(sorted(clouds.get(a.name, ()))), instance_types=counts.get(a.name, 0),
        cheapest_on_demand_flags=best_flags.get((a.name, "on_demand"), ()),
        cheapest_spot_flags=best_flags.get((a.name, "spot"), ()),
        aliases=catalog.aliases_of(a),
    ) for a in catalog.accelerators]


def absent_pricing(catalog: Catalog, pricing: Sequence[str]) -> str | None:
    """When some asked-for pricing models have no priced offer in ``catalog`` at all, a clause
    saying so and where such prices come from (else None): "no offer matches" alone sent the
    user through every other filter for a pricing model the catalog does not hold."""
    pricing = check_names("pricing model", pricing or (), PRICING_MODELS,
                          spell=canonical_pricing)
    absent = [p for p in pricing if not any(o.usd_per_hour is not None
                                            for o in catalog.offers_priced_as((p,)))]
    if not absent:
        return None
    committed = any(p.startswith("committed") for p in absent)
    return (f"the catalog has no {', '.join(absent)} offers"
            + (" (GCP committed-use prices come with `gpuplan catalog refresh --cloud gcp`, "
               "which needs an API key)" if committed else "")
            + "; your own rates can be added with `overrides`")
