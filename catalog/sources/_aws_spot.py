"""AWS spot: the public Spot Instance Advisor data, and spot price history when credentials allow.

Spot Instance Advisor (no credentials; the data behind aws.amazon.com/ec2/spot/instance-advisor)::

    GET https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json
      {"global_rate": "<10%",
       "instance_types": {"p5.48xlarge": {"emr": false, "cores": 192, "ram_gb": 2048.0}, …},
       "ranges": [{"index": 0, "label": "<5%", "dots": 0, "max": 5},
                  {"index": 1, "label": "5-10%", "dots": 1, "max": 11}, …
                  {"index": 4, "label": ">20%", "dots": 4, "max": 100}],
       "spot_advisor": {"us-east-1": {"Linux": {"p5.48xlarge": {"s": 57, "r": 1}, …},
                                      "Windows": {…}}, …}}

``r`` indexes ``ranges`` (the monthly interruption-frequency bucket; ``catalog._clouds``
turns it into an hourly rate) and ``s`` is the saving against on-demand in percent, "calculated
over the last 30 days … averaged across Availability Zones" (advisor page). Without
credentials the spot price is derived from it: on-demand × (1 − s/100), a 30-day average
across zones, said so in the offer's source. With credentials (boto3 and an AWS identity),
``ec2:DescribeSpotPriceHistory`` gives the current price per zone instead: the offer keeps the
cheapest zone, with the median across zones.
"""

from __future__ import annotations

import datetime as _dt
import statistics
from collections.abc import Sequence
from typing import Any

ADVISOR_URL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"
LINUX_SPOT = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")


def parse_advisor(data: Any) -> dict[tuple[str, str], tuple[str, int]]:
    """{(region, instance type): (bucket label, savings %)} for Linux, from the advisor JSON.

    The shape is checked, and a shape it does not know raises ValueError (the caller then
    goes without the advisor): ``spot_advisor.<region>`` a list, or a range's ``index`` a
    list, stopped the whole AWS refresh with an AttributeError or a TypeError. An entry that
    is no object, or an ``r`` that indexes no range, is one type without a bucket instead."""
    if not isinstance(data, dict):
        raise ValueError("Spot Instance Advisor data is not a JSON object")
    ranges, by_region = data.get("ranges", []), data.get("spot_advisor") or {}
    if not isinstance(ranges, list) or not isinstance(by_region, dict):
        raise ValueError("Spot Instance Advisor data: \"ranges\" is not a list or "
                         "\"spot_advisor\" not an object")
    labels: dict[int, str] = {}
    for i, r in enumerate(ranges):
        index, label = (r.get("index"), r.get("label")) if isinstance(r, dict) else (None, None)
        if not (_is_int(index) and isinstance(label, str)):
            raise ValueError(f"Spot Instance Advisor data: ranges[{i}] is not "
                             "{\"index\": <integer>, \"label\": <text>}")
        labels[index] = label
    out = {}
    for region, by_os in by_region.items():
        linux = by_os.get("Linux") if isinstance(by_os, dict) else by_os
        if not isinstance(linux, dict | None):
            raise ValueError(f"Spot Instance Advisor data: spot_advisor[{region[:30]!r}] is "
                             "not {\"Linux\": {<instance type>: …}}")
        for name, entry in (linux or {}).items():
            if not isinstance(entry, dict):
                continue
            bucket = entry.get("r")
            label = labels.get(bucket, "") if _is_int(bucket) else ""
            savings = entry.get("s")
            if isinstance(savings, int | float) and not isinstance(savings, bool) \
                    and 0 <= savings < 100:
                out[(region, name)] = (label, int(savings))
            elif label:
                out[(region, name)] = (label, -1)  # a bucket but no saving figure
    return out


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def spot_history(session, region: str, names: Sequence[str], config: Any) -> dict[str, dict]:
    """{instance type: {zone: USD/h}}: the newest Linux spot price per zone, now."""
    ec2 = session.client("ec2", region_name=region, config=config)
    newest: dict[str, dict[str, tuple[_dt.datetime, float]]] = {}
    for i in range(0, len(names), 100):
        pages = ec2.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=list(names[i:i + 100]), ProductDescriptions=["Linux/UNIX"],
            StartTime=_dt.datetime.now(_dt.UTC))
        for page in pages:
            for p in page["SpotPriceHistory"]:
                if p.get("ProductDescription") not in LINUX_SPOT:
                    continue
                price, when = float(p["SpotPrice"]), p["Timestamp"]
                per_zone = newest.setdefault(p["InstanceType"], {})
                seen = per_zone.get(p["AvailabilityZone"])
                if price > 0 and (seen is None or when > seen[0]):
                    per_zone[p["AvailabilityZone"]] = (when, price)
    return {t: {z: v[1] for z, v in zones.items()} for t, zones in newest.items()}


def cheapest_and_median(by_zone: dict[str, float]) -> tuple[str, float, float]:
    zone = min(by_zone, key=lambda z: (by_zone[z], z))
    return zone, by_zone[zone], float(statistics.median(by_zone.values()))
