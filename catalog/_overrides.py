"""Price overrides: negotiated discounts and private rates, applied when the catalog loads.

File format (YAML)::

    discounts:              # percent off the list price; the most specific match wins
      - cloud: aws          # match on any of: cloud, family (name prefix, e.g. "p5"),
        percent: 10         #   instance_type, region, pricing (default: every pricing model
      - cloud: aws          #   except spot, whose prices are not negotiated)
        instance_type: p5.48xlarge
        percent: 25
    prices:                 # rates you hold: replace an offer's price or add a new offer
      - cloud: aws
        instance_type: p5.48xlarge
        region: us-east-1
        pricing: reserved_1y
        usd_per_hour: 55.0

Every overridden offer carries the flag ``overridden`` and names the file in its source, so
every table that shows a price shows that it is not a list price.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ._errors import OverrideError
from ._records import CLOUDS, PRICE_UNUSABLE_FLAGS, PRICING_MODELS, InstanceType, Offer

_MATCH_KEYS = ("cloud", "family", "instance_type", "region", "pricing")
# Specificity: an instance type beats a family beats a cloud; region and pricing break ties.
_WEIGHT = {"instance_type": 100, "family": 10, "cloud": 1, "region": 5, "pricing": 3}


@dataclass(frozen=True, slots=True, kw_only=True)
class Discount:
    percent: float
    cloud: str | None = None
    family: str | None = None
    instance_type: str | None = None
    region: str | None = None
    pricing: str | None = None

    def matches(self, offer: Offer) -> bool:
        if self.pricing is None and offer.pricing == "spot":
            return False
        return ((self.cloud is None or self.cloud == offer.cloud)
                and (self.family is None or offer.instance_type.startswith(self.family))
                and (self.instance_type is None or self.instance_type == offer.instance_type)
                and (self.region is None or self.region == offer.region)
                and (self.pricing is None or self.pricing == offer.pricing))

    @property
    def specificity(self) -> int:
        return sum(_WEIGHT[k] for k in _MATCH_KEYS if getattr(self, k) is not None)


@dataclass(frozen=True, slots=True, kw_only=True)
class PrivateRate:
    cloud: str
    instance_type: str
    region: str
    pricing: str
    usd_per_hour: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Overrides:
    path: str
    discounts: tuple[Discount, ...] = ()
    prices: tuple[PrivateRate, ...] = ()


def _fail(path: Path, where: str, problem: str) -> OverrideError:
    return OverrideError(f"{path}: {where}: {problem}. To fix: see the format in "
                         "`gpuplan offers --help` (--overrides) and correct the file")


def _check_common(path: Path, where: str, entry: dict, allowed: Iterable[str]) -> None:
    if not isinstance(entry, dict):
        raise _fail(path, where, "expected a mapping of fields")
    unknown = sorted(set(entry) - set(allowed))
    if unknown:
        raise _fail(path, where, f"unknown field(s) {unknown}; allowed: {sorted(allowed)}")
    if "cloud" in entry and entry["cloud"] not in CLOUDS:
        raise _fail(path, where, f"cloud {entry['cloud']!r} is not one of {list(CLOUDS)}")
    if "pricing" in entry and entry["pricing"] not in PRICING_MODELS:
        raise _fail(path, where, f"pricing {entry['pricing']!r} is not one of "
                                 f"{list(PRICING_MODELS)}")


def _number(path: Path, where: str, value: object, field: str, low: float, high: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high:
        raise _fail(path, where, f"{field} must be a number in ({low:g}, {high:g}], got {value!r}")
    return float(value)


def load_overrides(path: str | Path) -> Overrides:
    import yaml  # a core dependency, imported only when an overrides file is used

    path = Path(path).expanduser()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except OSError as exc:
        raise OverrideError(f"{path}: cannot read overrides file ({exc.strerror}). To fix: "
                            "check the path passed to --overrides") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f"line {mark.line + 1}" if mark else "YAML"
        raise _fail(path, at, f"invalid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict) or set(data) - {"discounts", "prices"}:
        raise _fail(path, "top level", "expected only the keys 'discounts' and 'prices'")
    discounts = []
    for i, entry in enumerate(data.get("discounts") or [], start=1):
        where = f"discounts[{i}]"
        _check_common(path, where, entry, (*_MATCH_KEYS, "percent"))
        if "percent" not in entry:
            raise _fail(path, where, "missing 'percent'")
        if not any(k in entry for k in ("cloud", "family", "instance_type")):
            raise _fail(path, where, "needs at least one of cloud, family, instance_type")
        pct = _number(path, where, entry["percent"], "percent", 0, 100)
        discounts.append(Discount(percent=pct, **{k: str(entry[k]) for k in _MATCH_KEYS
                                                  if k in entry}))
    prices = []
    for i, entry in enumerate(data.get("prices") or [], start=1):
        where = f"prices[{i}]"
        required = ("cloud", "instance_type", "region", "pricing", "usd_per_hour")
        _check_common(path, where, entry, required)
        missing = [k for k in required if k not in entry]
        if missing:
            raise _fail(path, where, f"missing {missing}")
        rate = _number(path, where, entry["usd_per_hour"], "usd_per_hour", 0, 1e6)
        prices.append(PrivateRate(usd_per_hour=rate, **{k: str(entry[k]) for k in required[:4]}))
    return Overrides(path=str(path), discounts=tuple(discounts), prices=tuple(prices))


def apply_overrides(offers: tuple[Offer, ...], instance_types: dict[tuple[str, str], InstanceType],
                    overrides: Overrides, today: _dt.date) -> tuple[Offer, ...]:
    """Return new offers with discounts and private rates applied (the input is not changed)."""
    source = f"overrides: {overrides.path}"
    for rate in overrides.prices:
        if (rate.cloud, rate.instance_type) not in instance_types:
            from ._errors import UnknownNameError

            raise UnknownNameError(
                "instance type", rate.instance_type,
                [n for c, n in instance_types if c == rate.cloud],
                hint=f"correct prices[] in {overrides.path}; `gpuplan offers --cloud "
                     f"{rate.cloud}` lists the types")
    by_key = {o.key: o for o in offers}
    out = []
    for offer in offers:
        best = max((d for d in overrides.discounts if d.matches(offer)),
                   key=lambda d: d.specificity, default=None)
        if best is not None and offer.usd_per_hour is not None:
            factor = 1 - best.percent / 100
            offer = dataclasses.replace(
                offer, usd_per_hour=round(offer.usd_per_hour * factor, 6),
                usd_per_hour_zone_median=(None if offer.usd_per_hour_zone_median is None else
                                          round(offer.usd_per_hour_zone_median * factor, 6)),
                source=f"{offer.source}; -{best.percent:g}% ({source})",
                flags=tuple(sorted({*offer.flags, "overridden"})))
        out.append(offer)
    index = {o.key: i for i, o in enumerate(out)}
    for rate in overrides.prices:
        key = (rate.cloud, rate.instance_type, rate.region, rate.pricing)
        flags = {"overridden"}
        if key in by_key:
            flags |= set(by_key[key].flags) - PRICE_UNUSABLE_FLAGS - {"pre_cut_list_price"}
        new = Offer(cloud=rate.cloud, instance_type=rate.instance_type, region=rate.region,
                    pricing=rate.pricing, usd_per_hour=rate.usd_per_hour, as_of=today,
                    source=source, flags=tuple(sorted(flags)))
        if key in index:
            out[index[key]] = new
        else:
            index[key] = len(out)
            out.append(new)
    return tuple(out)
