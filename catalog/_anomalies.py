"""Price anomaly rules: flag what cannot be a real list price, before anything is costed with it.

The same rules run when the packaged snapshot is built and after every refresh, over the whole
merged catalog, so the flags always describe the prices as they now stand. ``flag_anomalies``
first removes the flags it owns (``ANOMALY_FLAGS``), then applies:

1. ``spot_not_below_on_demand`` — a spot price >= the on-demand price of the same instance
   type in the same region. Spot is spare capacity sold at a discount; at or above on-demand
   it is either wrong or pointless.
2. ``spot_discount_below_documented`` — spot / on-demand above the cloud's documented bound
   (``CLOUDS[c].spot_to_on_demand_max``; GCP documents 60-91 % discounts for Compute Engine
   Spot VMs, so spot may be at most 40 % of on-demand). The spot offer is flagged: the bound
   is a statement about the spot price, and a wrong on-demand price is the outlier rule's to
   find. TPU slices are not held to it: Cloud TPU publishes its own spot prices, outside the
   Compute Engine range.
3. ``price_outlier`` — the per-accelerator price of an instance type in one region is far from
   the same accelerator's price in that instance type in the cloud's other regions, under the
   same pricing model. (Instance types are not compared with each other: a g4dn.16xlarge
   carries one T4 and a host four times a g4dn.4xlarge's, so its per-GPU price is rightly
   higher.) Statistic: the modified z-score of Iglewicz and Hoaglin (1993), on log prices
   (regional price differences are ratios, not offsets)::

       z_i = (ln p_i − median(ln p)) / s,   s = max(1.4826 · MAD, LOG_SCALE_FLOOR),
       MAD = median(|ln p − median(ln p)|)

   (1.4826 = 1/0.6745 makes MAD estimate σ for normal data), flagged when |z_i| >
   ``OUTLIER_Z`` = 3.5, their recommended cut-off. The floor on s matters: clouds charge many
   regions exactly the same, so MAD is often ~0 and a 13 % regional premium would score z > 10.
   ``LOG_SCALE_FLOOR`` = 0.15 keeps every price within 0.59×-1.69× of the median unflagged —
   ordinary regional premiums (the reference's p5.48xlarge spans 55.04 in us-east-1 to 92.47
   in sa-east-1, 1.36× its median) — while a price at half the median (GCP's 4.20 $/GPU-h
   H100 rows, z ≈ -5) or a placeholder is flagged. Groups of fewer than ``MIN_GROUP`` prices
   are not tested: a median of three says little. Offers without a whole-machine price
   (host-only, placeholder) are left out, and so are spot prices flagged by rule 1 (at or
   above on-demand: no spot price, and they moved the spot median up).
4. ``price_above_ceiling`` — more than ``CEILING_USD_PER_GPU_HOUR`` per accelerator-hour.
5. ``placeholder_price`` — a value a price source uses for "unknown": GCP TPU slices at
   ``TPU_PLACEHOLDER_USD_PER_HOUR``. (Zero prices never become offers: sources and the
   snapshot builder turn them into ``usd_per_hour=None`` with this flag.)

Every flag comes with a reason in ``Offer.flag_reasons`` ("flag: why; flag: why").
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from ._clouds import CLOUDS
from ._records import InstanceType, Offer

OUTLIER_Z = 3.5  # Iglewicz & Hoaglin, "How to Detect and Handle Outliers" (ASQC, 1993), §3.2
MAD_TO_SIGMA = 1.4826  # 1/Φ⁻¹(0.75): makes MAD estimate a normal standard deviation
LOG_SCALE_FLOOR = 0.15  # in ln($): see the module docstring
MIN_GROUP = 5
# The dearest accelerator list price in the snapshot is p6-b300.48xlarge in us-west-2,
# 142.416 $/h for 8 B300 (17.8 $/GPU-h, reference aws_on_demand_2026-01-21.csv); 60 is more
# than three times that, so a per-accelerator price above it is a placeholder or a unit error.
CEILING_USD_PER_GPU_HOUR = 60.0
# skypilot-catalog writes 700 for a TPU v6e slice whose price it could not find
# (sky/catalog/data_fetchers/fetch_gcp.py: TPU_V6E_MAX_PRICE = 700, "set a higher price so the
# failover will go to the region with precise pricing info first").
TPU_PLACEHOLDER_USD_PER_HOUR = 700.0

ANOMALY_FLAGS: frozenset[str] = frozenset({
    "spot_not_below_on_demand", "spot_discount_below_documented", "price_outlier",
    "price_above_ceiling"})
# Offers whose price is not a whole machine's: kept out of the outlier reference groups.
# …and a "spot" price at or above on-demand, which is no spot price: AWS rows that cost
# exactly their on-demand rate made the p5.4xlarge spot median 8.26 $/GPU-h, so a real spot
# price of 2.37 scored z = -8.3 and was flagged an outlier
_NOT_COMPARABLE = frozenset({"host_price_missing", "price_unknown", "placeholder_price",
                             "spot_not_below_on_demand"})


def add_flag(offer: Offer, flag: str, reason: str) -> Offer:
    """``offer`` with ``flag`` (and its reason) added; unchanged if it already has the flag.

    Reasons are joined with "; ", so a reason itself never contains one.
    """
    reason = reason.replace(";", ",")
    if flag in offer.flags:
        return offer
    reasons = "; ".join(r for r in (offer.flag_reasons, f"{flag}: {reason}") if r)
    return dataclasses.replace(offer, flags=tuple(sorted({*offer.flags, flag})),
                               flag_reasons=reasons)


def remove_flags(offer: Offer, flags: Iterable[str]) -> Offer:
    drop = set(flags) & set(offer.flags)
    if not drop:
        return offer
    kept = [r for r in offer.flag_reasons.split("; ")
            if r and r.split(":", 1)[0] not in drop]
    return dataclasses.replace(offer, flags=tuple(f for f in offer.flags if f not in drop),
                               flag_reasons="; ".join(kept))


def flag_anomalies(offers: Sequence[Offer],
                   instance_types: Mapping[tuple[str, str], InstanceType]) -> tuple[Offer, ...]:
    """``offers`` with the anomaly flags recomputed (same order; the input is not changed)."""
    out = [remove_flags(o, ANOMALY_FLAGS) for o in offers]
    out = _spot_rules(out, instance_types)
    out = _ceiling_rule(out, instance_types)
    out = _outlier_rule(out, instance_types)
    return tuple(out)


def _spot_rules(offers: list[Offer], types) -> list[Offer]:
    # Prices <= 0 cannot pass Offer's own checks; one smuggled past them is the integrity
    # check's to reject, not a division by zero here.
    on_demand = {(o.cloud, o.instance_type, o.region): i for i, o in enumerate(offers)
                 if o.pricing == "on_demand" and o.usd_per_hour is not None
                 and o.usd_per_hour > 0}
    out = list(offers)
    for i, o in enumerate(offers):
        if o.pricing != "spot" or o.usd_per_hour is None or o.usd_per_hour <= 0:
            continue
        j = on_demand.get((o.cloud, o.instance_type, o.region))
        if j is None:
            continue
        base = offers[j].usd_per_hour
        ratio = o.usd_per_hour / base
        if ratio >= 1.0:
            out[i] = add_flag(out[i], "spot_not_below_on_demand",
                              f"spot {o.usd_per_hour:g} >= on-demand {base:g} $/h")
            continue
        bound = CLOUDS[o.cloud].spot_to_on_demand_max
        t = types.get((o.cloud, o.instance_type))
        if t is not None and t.accelerator.startswith("TPU"):
            bound = None
        if bound is not None and ratio > bound + 5e-4:  # sources round to 3-5 digits
            why = (f"spot {o.usd_per_hour:g} is {ratio:.0%} of on-demand {base:g} $/h, "
                   f"{CLOUDS[o.cloud].display_name} documents spot at most {bound:.0%}")
            out[i] = add_flag(out[i], "spot_discount_below_documented", why)
    return out


def _per_gpu(o: Offer, types: Mapping[tuple[str, str], InstanceType]) -> float | None:
    t = types.get((o.cloud, o.instance_type))
    if t is None or o.usd_per_hour is None:
        return None
    return o.usd_per_hour / t.gpu_count


def _ceiling_rule(offers: list[Offer], types) -> list[Offer]:
    out = []
    for o in offers:
        per_gpu = _per_gpu(o, types)
        if per_gpu is not None and per_gpu > CEILING_USD_PER_GPU_HOUR:
            o = add_flag(o, "price_above_ceiling",
                         f"{per_gpu:,.2f} $/accelerator-hour > {CEILING_USD_PER_GPU_HOUR:g}")
        out.append(o)
    return out


def median(values: Sequence[float]) -> float:
    # Not statistics.median: importing `statistics` costs more than `import catalog` should.
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2


def robust_z(values: Sequence[float], floor: float = LOG_SCALE_FLOOR) -> list[float]:
    """Robust z-scores of ``values`` around their median (see the module docstring)."""
    med = median(values)
    mad = median([abs(v - med) for v in values])
    scale = max(MAD_TO_SIGMA * mad, floor)
    return [(v - med) / scale for v in values]


def _outlier_rule(offers: list[Offer], types) -> list[Offer]:
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, o in enumerate(offers):
        t = types.get((o.cloud, o.instance_type))
        if (t is None or o.usd_per_hour is None or o.usd_per_hour <= 0
                or _NOT_COMPARABLE & set(o.flags)):
            continue
        groups[(o.cloud, o.instance_type, o.pricing, o.option)].append(i)
    out = list(offers)
    for (cloud, name, pricing, _), members in groups.items():
        if len(members) < MIN_GROUP:
            continue
        per_gpu = [_per_gpu(offers[i], types) for i in members]
        z = robust_z([math.log(p) for p in per_gpu])
        middle = median(per_gpu)
        for i, p, zi in zip(members, per_gpu, z, strict=True):
            if abs(zi) > OUTLIER_Z:
                out[i] = add_flag(out[i], "price_outlier",
                                  f"{p:,.3f} $/accelerator-hour is z={zi:+.1f} from the median "
                                  f"{middle:,.3f} of {name} {pricing} across {cloud} "
                                  f"regions (|z| > {OUTLIER_Z:g})")
    return out


__all__ = ["ANOMALY_FLAGS", "CEILING_USD_PER_GPU_HOUR", "LOG_SCALE_FLOOR", "OUTLIER_Z",
           "TPU_PLACEHOLDER_USD_PER_HOUR", "add_flag", "flag_anomalies", "remove_flags",
           "robust_z"]
