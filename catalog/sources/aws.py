"""AWS: instance specs from EC2, prices from the Price List API and the spot price history.

Reads (all read-only, see docs/refresh.md for the IAM actions):

- ``ec2.describe_regions`` — which regions exist (the ``regions`` argument is matched to them);
- per region, concurrently: ``describe_instance_types`` (paginated; kept when ``GpuInfo``,
  ``NeuronInfo`` or ``InferenceAcceleratorInfo`` is present; fractional GPUs — GpuPartitionSize
  < 1 — are left out), ``describe_instance_type_offerings`` (availability-zone level: where
  each type exists) and ``describe_spot_price_history`` from now (the newest price per zone;
  the offer keeps the cheapest zone and the median across zones);
- ``pricing.get_products`` in us-east-1, one query per instance type with the filters
  operatingSystem=Linux, tenancy=Shared, preInstalledSw=NA, capacitystatus=Used. Terms are
  recognised by their termAttributes, never by offer-term codes: ``OnDemand`` → on_demand;
  ``Reserved`` with OfferingClass=standard and LeaseContractLength 1yr/3yr → reserved_1y /
  reserved_3y, using **standard No Upfront** (its hourly rate); where a type has no No Upfront
  term, Partial then All Upfront, amortised (upfront fee / hours in the term + hourly rate).
  Price List rows priced $0.00 (AWS's placeholder for a SKU that is not sold) are skipped.

Network: ``inter_node_gbps`` is the sum of the network cards' BaselineBandwidthInGbps (falling
back to each card's, then the instance's, NetworkPerformance text); fabric is ``efa`` when
EfaSupported, else ``ethernet``. The API says nothing about intra-node topology: it comes
from the reference catalog's row for the same type, else from the accelerator's link
(``guess_topology``).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .._records import InstanceType, Offer
from ._common import (
    CloudData,
    Progress,
    SourceUnavailable,
    flag_spot_above_on_demand,
    guess_topology,
    median_and_min,
    no_progress,
    parse_gbps,
    run_per_region,
    today,
)
from ._names import AcceleratorMap, memory_agrees

CLOUD = "aws"
PRICING_REGION = "us-east-1"  # the Price List API's endpoint (also ap-south-1, eu-central-1)
HOURS = {"1yr": 8760.0, "3yr": 26280.0}
RESERVED = {"1yr": "reserved_1y", "3yr": "reserved_3y"}
PURCHASE_PREFERENCE = ("No Upfront", "Partial Upfront", "All Upfront")
LINUX_SPOT = ("Linux/UNIX", "Linux/UNIX (Amazon VPC)")
PRICE_FILTERS = {"operatingSystem": "Linux", "tenancy": "Shared", "preInstalledSw": "NA",
                 "capacitystatus": "Used"}
NO_CREDENTIALS = ("no AWS credentials found. To fix: set AWS_ACCESS_KEY_ID/AWS_PROFILE or run "
                  "`aws configure`")


class AwsSource:
    """``fetch`` builds AWS's instance types and offers; see the module docstring."""

    cloud = CLOUD

    def __init__(self, *, reference, session: Any = None, pricing_client: Any = None,
                 max_workers: int = 8, max_attempts: int = 8) -> None:
        self.reference = reference
        self._session = session
        self._pricing = pricing_client
        self.max_workers = max_workers
        self.max_attempts = max_attempts

    # -- the protocol ---------------------------------------------------------------------
    def fetch(self, regions: Sequence[str] | None, progress: Progress | None = None) -> CloudData:
        import boto3
        from botocore.config import Config

        report = progress or no_progress
        session = self._session or boto3.Session()
        if session.get_credentials() is None:
            raise SourceUnavailable(CLOUD, NO_CREDENTIALS)
        config = Config(retries={"mode": "adaptive", "max_attempts": self.max_attempts},
                        connect_timeout=10, read_timeout=60)
        with _unavailable_on_connection_errors():
            ec2 = session.client("ec2", region_name=session.region_name or PRICING_REGION,
                                 config=config)
            known = sorted(r["RegionName"] for r in ec2.describe_regions()["Regions"])
        wanted = [r for r in known if regions is None or r in set(regions)]
        clients = {r: session.client("ec2", region_name=r, config=config) for r in wanted}
        scans = run_per_region(CLOUD, wanted, lambda r: _scan_region(clients[r]), progress,
                               self.max_workers)
        raw_types: dict[str, dict] = {}
        for scan in scans.values():
            raw_types.update(scan["types"])
        pricing = self._pricing or session.client("pricing", region_name=PRICING_REGION,
                                                  config=config)
        names = sorted(raw_types)
        prices = run_per_region(CLOUD, names, lambda t: _list_prices(pricing, t), None,
                                self.max_workers, what="price list for")
        report(CLOUD, "pricing", len(names), len(names))
        accelerators = AcceleratorMap(CLOUD, self.reference)
        warnings: list[str] = []
        types = {}
        for name in names:
            record = self._instance_type(raw_types[name], accelerators, warnings)
            if record is not None:
                types[name] = record
        as_of = today()
        offers = _offers(types, scans, prices, as_of, source_label(as_of))
        used = {o.instance_type for o in offers}
        return CloudData(
            cloud=CLOUD, instance_types=tuple(types[n] for n in sorted(used)),
            offers=flag_spot_above_on_demand(offers), as_of=as_of, source=source_label(as_of),
            accelerators=tuple(a for a in accelerators.new
                               if any(types[n].accelerator == a.name for n in used)),
            regions=tuple(wanted), warnings=tuple(warnings))

    # -- specs ----------------------------------------------------------------------------
    def _instance_type(self, raw: dict, accelerators: AcceleratorMap,
                       warnings: list[str]) -> InstanceType | None:
        name = raw["InstanceType"]
        device = _device(raw)
        if device is None:
            return None
        acc = accelerators.lookup(device["name"], vendor=device["vendor"],
                                  memory_gib=device["memory_gib"], source="DescribeInstanceTypes")
        memory = device["memory_gib"]
        if not memory_agrees(acc.memory_gib, memory):
            total = device["total_gib"]
            per = total / device["count"] if total else None
            memory = per if memory_agrees(acc.memory_gib, per) else acc.memory_gib
            warnings.append(f"aws {name}: reported {device['memory_gib']:g} GiB per "
                            f"{acc.name}; using {memory:g}")
        net = raw.get("NetworkInfo", {})
        cards = net.get("NetworkCards") or []
        card_gbps = [c.get("BaselineBandwidthInGbps") or c.get("PeakBandwidthInGbps")
                     or parse_gbps(c.get("NetworkPerformance", "")) for c in cards]
        gbps = (sum(g for g in card_gbps if g) if cards and all(card_gbps)
                else parse_gbps(net.get("NetworkPerformance", "")))
        ref = _reference_type(self.reference, name)
        return InstanceType(
            cloud=CLOUD, name=name, accelerator=acc.name, gpu_count=device["count"],
            vcpus=raw.get("VCpuInfo", {}).get("DefaultVCpus"),
            memory_gib=(raw.get("MemoryInfo", {}).get("SizeInMiB") or 0) / 1024 or None,
            gpu_memory_gib=memory,
            intra_node_topology=(ref.intra_node_topology if ref and ref.gpu_count ==
                                 device["count"] else guess_topology(acc, device["count"])),
            intra_node_gb_per_s_per_gpu=ref.intra_node_gb_per_s_per_gpu if ref else None,
            inter_node_gbps=gbps or None,
            fabric="efa" if net.get("EfaSupported") else "ethernet",
            gpudirect_rdma=ref.gpudirect_rdma if ref else "unverified",
            network_source="ec2:DescribeInstanceTypes NetworkInfo (sum of network cards' "
                           "baseline Gbps; EfaSupported)",
            notes="from EC2 DescribeInstanceTypes" + (
                f"; EFA interfaces: {net['EfaInfo'].get('MaximumEfaInterfaces')}"
                if net.get("EfaInfo") else ""),
        )


def source_label(as_of: _dt.date) -> str:
    return f"AWS EC2 + Price List APIs (gpuplan catalog refresh {as_of.isoformat()})"


class _unavailable_on_connection_errors:
    """Turn 'cannot start at all' failures into SourceUnavailable (one line, with the fix)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None:
            return False
        from botocore.exceptions import (
            ClientError,
            ConnectTimeoutError,
            EndpointConnectionError,
            NoCredentialsError,
        )

        if isinstance(exc, NoCredentialsError):
            raise SourceUnavailable(CLOUD, NO_CREDENTIALS) from None
        if isinstance(exc, EndpointConnectionError | ConnectTimeoutError):
            raise SourceUnavailable(CLOUD, f"cannot reach AWS ({exc}). To fix: check your "
                                    "network or proxy settings and retry") from None
        if isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in (
                "AuthFailure", "UnrecognizedClientException", "InvalidClientTokenId",
                "ExpiredToken", "RequestExpired", "UnauthorizedOperation"):
            raise SourceUnavailable(CLOUD, f"AWS rejected the credentials ({exc}). To fix: "
                                    "set AWS_ACCESS_KEY_ID/AWS_PROFILE or run `aws configure`"
                                    ) from None
        return False


def _reference_type(reference, name: str) -> InstanceType | None:
    try:
        return reference.instance_type_by_key(CLOUD, name)
    except KeyError:
        return None


def _device(raw: dict) -> dict | None:
    """The accelerator an EC2 instance type carries, from whichever info block it has."""
    gpu = raw.get("GpuInfo")
    if gpu and gpu.get("Gpus"):
        g = gpu["Gpus"][0]
        if float(g.get("GpuPartitionSize", 1.0)) < 1.0:
            return None  # a fraction of a GPU (g6f): not a training target
        return {"name": g["Name"], "vendor": g.get("Manufacturer", ""), "count": g["Count"],
                "memory_gib": g.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                "total_gib": (gpu.get("TotalGpuMemoryInMiB") or 0) / 1024 or None}
    neuron = raw.get("NeuronInfo")
    if neuron and neuron.get("NeuronDevices"):
        d = neuron["NeuronDevices"][0]
        return {"name": d["Name"], "vendor": "AWS", "count": d["Count"],
                "memory_gib": d.get("MemoryInfo", {}).get("SizeInMiB", 0) / 1024 or None,
                "total_gib": (neuron.get("TotalNeuronDeviceMemoryInMiB") or 0) / 1024 or None}
    inference = raw.get("InferenceAcceleratorInfo")
    if inference and inference.get("Accelerators"):
        d = inference["Accelerators"][0]
        return {"name": d["Name"], "vendor": d.get("Manufacturer", ""), "count": d["Count"],
                "memory_gib": (d.get("MemoryInfo") or {}).get("SizeInMiB", 0) / 1024 or None,
                "total_gib": None}
    return None


def _scan_region(ec2) -> dict:
    """One region: its accelerated instance types, their zones and current spot prices."""
    zones: dict[str, list[str]] = {}
    for page in ec2.get_paginator("describe_instance_type_offerings").paginate(
            LocationType="availability-zone"):
        for o in page["InstanceTypeOfferings"]:
            zones.setdefault(o["InstanceType"], []).append(o["Location"])
    types: dict[str, dict] = {}
    for page in ec2.get_paginator("describe_instance_types").paginate():
        for t in page["InstanceTypes"]:
            if t["InstanceType"] in zones and _device(t) is not None:
                types[t["InstanceType"]] = t
    spot: dict[str, dict[str, tuple[_dt.datetime, float]]] = {}
    names = sorted(types)
    for i in range(0, len(names), 100):
        pages = ec2.get_paginator("describe_spot_price_history").paginate(
            InstanceTypes=names[i:i + 100], ProductDescriptions=["Linux/UNIX"],
            StartTime=_dt.datetime.now(_dt.UTC))
        for page in pages:
            for p in page["SpotPriceHistory"]:
                if p.get("ProductDescription") not in LINUX_SPOT:
                    continue
                price, when = float(p["SpotPrice"]), p["Timestamp"]
                per_zone = spot.setdefault(p["InstanceType"], {})
                seen = per_zone.get(p["AvailabilityZone"])
                if price > 0 and (seen is None or when > seen[0]):
                    per_zone[p["AvailabilityZone"]] = (when, price)
    return {"types": types, "zones": {t: sorted(zones[t]) for t in types},
            "spot": {t: {z: v[1] for z, v in s.items()} for t, s in spot.items()}}


def _list_prices(pricing, instance_type: str) -> dict[tuple[str, str], float]:
    """{(region, pricing model): USD per hour} for one instance type, from the Price List."""
    filters = [{"Type": "TERM_MATCH", "Field": k, "Value": v}
               for k, v in {"instanceType": instance_type, **PRICE_FILTERS}.items()]
    out: dict[tuple[str, str], float] = {}
    for page in pricing.get_paginator("get_products").paginate(
            ServiceCode="AmazonEC2", Filters=filters, FormatVersion="aws_v1", MaxResults=100):
        for item in page["PriceList"]:
            product = json.loads(item) if isinstance(item, str) else item
            out.update(parse_product(product))
    return out


def parse_product(product: dict) -> dict[tuple[str, str], float]:
    """One Price List product → {(region, pricing model): USD per hour}."""
    attrs = product.get("product", {}).get("attributes", {})
    region = attrs.get("regionCode")
    if not region or attrs.get("marketoption", "OnDemand") != "OnDemand":
        return {}
    out: dict[tuple[str, str], float] = {}
    for term in product.get("terms", {}).get("OnDemand", {}).values():
        hourly = _dimension(term, "Hrs")
        if hourly:
            out[(region, "on_demand")] = hourly
    best: dict[str, tuple[int, float]] = {}
    for term in product.get("terms", {}).get("Reserved", {}).values():
        ta = term.get("termAttributes", {})
        length, option = ta.get("LeaseContractLength"), ta.get("PurchaseOption")
        if (ta.get("OfferingClass") != "standard" or length not in HOURS
                or option not in PURCHASE_PREFERENCE):
            continue
        rank = PURCHASE_PREFERENCE.index(option)
        effective = (_dimension(term, "Hrs") or 0.0) + (_dimension(term, "Quantity") or 0.0) / \
            HOURS[length]
        if effective > 0 and (length not in best or rank < best[length][0]):
            best[length] = (rank, effective)
    for length, (_, price) in best.items():
        out[(region, RESERVED[length])] = price
    return out


def _dimension(term: dict, unit: str) -> float | None:
    for dim in term.get("priceDimensions", {}).values():
        if dim.get("unit") == unit:
            return float(dim.get("pricePerUnit", {}).get("USD", 0)) or None
    return None


def _offers(types: dict[str, InstanceType], scans: dict[str, dict],
            prices: dict[str, dict[tuple[str, str], float]], as_of: _dt.date,
            source: str) -> list[Offer]:
    offers: list[Offer] = []
    base = Offer(cloud=CLOUD, instance_type="-", region="-", pricing="on_demand",
                 usd_per_hour=1.0, as_of=as_of, source=source)
    for region in sorted(scans):
        scan = scans[region]
        for name in sorted(set(types) & set(scan["zones"])):
            zone_count = len(scan["zones"][name])
            for (price_region, model), usd in sorted(prices.get(name, {}).items()):
                if price_region == region:
                    offers.append(replace(base, instance_type=name, region=region,
                                          pricing=model, usd_per_hour=round(usd, 6),
                                          zone_count=zone_count))
            by_zone = scan["spot"].get(name)
            if by_zone:
                zone, cheapest, median = median_and_min(by_zone)
                offers.append(replace(base, instance_type=name, region=region, pricing="spot",
                                      usd_per_hour=round(cheapest, 6),
                                      usd_per_hour_zone_median=round(median, 6), zone=zone,
                                      zone_count=len(by_zone)))
    return offers
