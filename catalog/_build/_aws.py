"""AWS offers and instance types from the three AWS reference tables, newest first.

Per (instance type, region) and pricing model, the newest file that gives a price wins and the
offer keeps that file's date and source:

- ``aws_on_demand_2026-01-21.csv``: on-demand and 1-year standard No Upfront reserved;
- ``aws_prices_2025-11-30.csv``: on-demand, spot (the cheapest zone, the zones' average and
  dearest kept beside it; where a row gives only the average, that average, and the offer's
  source says so), the Spot Instance Advisor interruption bucket, and the 12 reserved terms
  (amortised $/h);
- ``aws_accelerator_vms.csv`` (skypilot v7, ~2025-03): per-zone on-demand and spot, for what
  the newer files lack (dl1, f1, f2, p5e, trn1 in two regions).

Every region code is its own region: Local Zones, Wavelength Zones and GovCloud included.
Fractional-GPU types (g6f, gr6f: 1/8 to 1/2 of an L4... reported as "NVIDIA L40" with a count
below 1) are left out: a fraction of a GPU is not a training target. Instance specs come from
the 2025-11-30 table, else the v7 table, else the 2026 table's GPU count; the accelerator is
chosen by instance family (``FAMILY_ACCELERATOR``), not by the files' GPU names, which
disagree (trn1 appears as "AWS Inferentia", g5g as "ARM Mali-G78MP12").
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .._anomalies import add_flag
from .._clouds import aws_bucket_rate
from .._records import InstanceType, Offer
from ..sources._names import AWS_FAMILY_ACCELERATOR as FAMILY_ACCELERATOR
from ._common import REFERENCE_FILES, RefFile, gpuinfo_memory_gib, num, read_rows
from ._specs import make_instance

F2026 = REFERENCE_FILES["aws_on_demand_2026-01-21.csv"]
F2025 = REFERENCE_FILES["aws_prices_2025-11-30.csv"]
FV7 = REFERENCE_FILES["aws_accelerator_vms.csv"]
FCB = REFERENCE_FILES["aws_capacity_blocks"]

# AWS cut on-demand prices of these in June 2025; a price for them from an older table is
# the pre-cut list price (reference README, "Known price changes").
PRE_CUT = {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"}
CAPACITY_BLOCKS = [  # (instance, region, usd/h) — reference README, Capacity Blocks
    ("p5.48xlarge", "us-east-1", 39.33), ("p5.48xlarge", "us-east-2", 39.33),
    ("p5e.48xlarge", "us-east-2", 43.26),
    ("p4d.24xlarge", "us-east-2", 14.75), ("p4d.24xlarge", "us-west-2", 14.75),
    ("trn1.32xlarge", "ap-southeast-4", 15.49),
]
RESERVED_COLUMNS = [  # column → (pricing, offering class, upfront)
    (f"reserved_{term}_{cls}_{pay}_upfront", f"reserved_{term}", cls, pay)
    for term in ("1y", "3y") for cls in ("standard", "convertible")
    for pay in ("no", "partial", "all")
]
UPFRONT = {"no": "none", "partial": "partial", "all": "all"}
# A spot offer priced at the 2025-11-30 table's average over the region's zones, where that
# row gives no minimum (the offer's usual price: the cheapest zone). Every such average is a
# whole percentage below on-demand (14 of the 122 exactly 90%), as the Spot Instance Advisor's
# savings figure is: an estimate, not an observed price — the source says so, as a refresh's
# advisor-priced offers do.
SPOT_AVERAGE_SOURCE = (f"{F2025.source} (spot: the row's average over the region's zones, "
                       "given with no minimum; a whole percentage below on-demand, as the Spot "
                       "Instance Advisor's savings estimate)")
_ACC_MEMORY_GIB = {"K80": 12.0}  # per GPU (one GK210 die); see the p2 correction below


@dataclass
class Result:
    instance_types: list[InstanceType] = field(default_factory=list)
    offers: list[Offer] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)


def family(name: str) -> str:
    return name.split(".", 1)[0]


def _offer(ref: RefFile, name: str, region: str, pricing: str, usd: float | None,
           **extra) -> Offer:
    flags = tuple(extra.pop("flags", ()))
    source = extra.pop("source", ref.source)
    if usd is None:  # the source lists the row without this price
        flags = (*flags, "price_unknown")
    elif usd <= 0:  # $0: a placeholder, never a free instance
        flags, usd = (*flags, "placeholder_price"), None
    return Offer(cloud="aws", instance_type=name, region=region, pricing=pricing,
                 usd_per_hour=None if usd is None else round(usd, 6), as_of=ref.as_of,
                 as_of_approximate=ref.approximate, source=source,
                 flags=tuple(sorted(set(flags))), **extra)


def build(reference: Path, network) -> Result:
    new = read_rows(reference, F2026.name)
    mid = read_rows(reference, F2025.name)
    old = read_rows(reference, FV7.name)
    result = Result()
    fractional = {r["instance_type"] for r in (*new, *mid) if float(r["gpu_count"]) < 1}
    result.skipped |= {f"{n} (fractional GPU)" for n in fractional}
    specs: dict[str, dict] = {}
    for r in old:
        specs.setdefault(r["InstanceType"], {
            "gpus": int(float(r["AcceleratorCount"])), "vcpus": int(float(r["vCPUs"])),
            "memory_gib": num(r["MemoryGiB"]), "gpu_memory_gib": gpuinfo_memory_gib(r["GpuInfo"]),
            "net": None})
    for r in new:
        if r["instance_type"] not in fractional:
            specs.setdefault(r["instance_type"], {
                "gpus": int(r["gpu_count"]), "vcpus": None, "memory_gib": None,
                "gpu_memory_gib": None, "net": None})
    for r in mid:
        if r["instance_type"] in fractional:
            continue
        gpus = int(r["gpu_count"])
        specs[r["instance_type"]] = {
            "gpus": gpus, "vcpus": int(r["vcpus"]), "memory_gib": num(r["memory_gib"]),
            "gpu_memory_gib": round(float(r["gpu_memory_gib_total"]) / gpus, 3),
            "net": r["network_performance"]}
    memory = {a: m for a, m in _ACC_MEMORY_GIB.items()}
    for name in sorted(specs):
        s = specs[name]
        acc = FAMILY_ACCELERATOR[family(name)]
        flags, count_note = (), ""
        total = (s["gpu_memory_gib"] or 0) * s["gpus"]
        per_device = memory.get(acc)
        if per_device and total and abs(total / s["gpus"] - per_device) > 0.08 * per_device \
                and abs(total / per_device - round(total / per_device)) < 1e-6:
            # The price table counts K80 *boards* (two GPUs, 24 GiB each) for p2.8xlarge and
            # p2.16xlarge; AWS counts GPUs: 8 and 16 of 12 GiB (aws.amazon.com/ec2/instance-
            # types/p2).
            count_note = (f"the price table lists {s['gpus']} GPUs of {total / s['gpus']:g} "
                          f"GiB; the instance has {round(total / per_device)} of {per_device:g}")
            s = {**s, "gpus": round(total / per_device), "gpu_memory_gib": per_device}
            flags = ("gpu_count_corrected",)
        # The price table's network figure is the instance's general networking, not what
        # collectives can count on: the curated instance_network.csv alone sets
        # inter_node_gbps; other types stay single-node until a refresh or that table says.
        note = (f"network (price table): {s['net']}; inter-node bandwidth for collectives "
                "not in the reference: single-node only until refreshed" if s["net"] else "")
        result.instance_types.append(make_instance(
            "aws", name, acc, s["gpus"], s["vcpus"], s["memory_gib"], s["gpu_memory_gib"],
            network, network_note=note, flags=flags, notes=count_note))
    offers: dict[tuple, Offer] = {}

    def put(o: Offer) -> None:
        offers.setdefault(o.key, o)  # newest file first: the first price given wins

    for r in new:
        name, region = r["instance_type"], r["region"]
        if name in fractional:
            continue
        put(_offer(F2026, name, region, "on_demand", num(r["usd_per_hour_on_demand"])))
        if num(r["reserved_1y_standard_no_upfront"]):
            put(_offer(F2026, name, region, "reserved_1y",
                       num(r["reserved_1y_standard_no_upfront"]), offering_class="standard",
                       upfront="none"))
    for r in mid:
        name, region = r["instance_type"], r["region"]
        if name in fractional:
            continue
        put(_offer(F2025, name, region, "on_demand", num(r["usd_per_hour_on_demand"])))
        for column, pricing, cls, pay in RESERVED_COLUMNS:
            if num(r[column]):
                put(_offer(F2025, name, region, pricing, num(r[column]), offering_class=cls,
                           upfront=UPFRONT[pay]))
        bucket = r["spot_interruption_frequency"]
        advisor = {"interruption_bucket": bucket,
                   "interruption_rate_per_hour": aws_bucket_rate(bucket)}
        spot, mean = num(r["usd_per_hour_spot_min"]), num(r["usd_per_hour_spot_avg"])
        if spot:
            put(_offer(F2025, name, region, "spot", spot, usd_per_hour_zone_mean=mean,
                       usd_per_hour_zone_max=num(r["usd_per_hour_spot_max"]), **advisor))
        elif mean:
            # 122 rows give only the average: still the newest spot price and bucket, where
            # skipping the row let the v7 table's ~2025-03 price (and no bucket) stand in.
            # The source says the price is an average, as a refresh's Advisor estimate does.
            put(_offer(F2025, name, region, "spot", mean, usd_per_hour_zone_mean=mean,
                       source=SPOT_AVERAGE_SOURCE, **advisor))
    for o in _from_v7(old):
        put(o)
    for name, region, price in CAPACITY_BLOCKS:
        o = _offer(FCB, name, region, "capacity_block", price)
        put(add_flag(o, "expired", "Capacity Block rate for the period that ended 2025-01-01; "
                                   "Capacity Block prices move with supply and demand"))
    for o in offers.values():
        if o.pricing == "on_demand" and o.instance_type in PRE_CUT and o.source == FV7.source:
            o = add_flag(o, "pre_cut_list_price", "price from before AWS's June 2025 cut")
        result.offers.append(o)
    return result


def _from_v7(rows: list[dict[str, str]]) -> list[Offer]:
    """Per-zone v7 rows → one on-demand and one spot offer per (type, region)."""
    od: dict[tuple[str, str], set] = defaultdict(set)
    zones: dict[tuple[str, str], set[str]] = defaultdict(set)
    spot: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for r in rows:
        key = (r["InstanceType"], r["Region"])
        od[key].add(num(r["Price"]))
        zones[key].add(r["AvailabilityZone"])
        if r["SpotPrice"]:  # p4de's duplicate rows: only one of the pair carries spot
            spot[key][r["AvailabilityZone"]] = float(r["SpotPrice"])
    out = []
    for (name, region), prices in sorted(od.items()):
        if len(prices) != 1:
            raise ValueError(f"aws {name} {region}: on-demand differs by zone: {prices}")
        out.append(_offer(FV7, name, region, "on_demand", prices.pop(),
                          zone_count=len(zones[(name, region)])))
        by_zone = spot[(name, region)]
        if by_zone:
            zone = min(by_zone, key=lambda z: (by_zone[z], z))
            out.append(_offer(FV7, name, region, "spot", by_zone[zone], zone=zone,
                              zone_count=len(by_zone),
                              usd_per_hour_zone_median=round(
                                  statistics.median(by_zone.values()), 6)))
    return out
