"""AWS: prices from the public bulk Price List files — no credentials needed.

``fetch`` reads (see ``_aws_bulk`` and ``_aws_spot`` for the file shapes):

1. ``region_index.json`` — every region code AWS prices, Local Zones, Wavelength Zones and
   GovCloud included (each becomes a region of its own in the catalog; a code that is no
   region name is left out, with a warning);
2. per wanted region, concurrently, that region's EC2 price file as CSV (streamed): on-demand
   and all twelve reserved terms (1 / 3 years × standard / convertible × No / Partial / All
   Upfront, amortised to USD per hour over the term), and the instance specs it states
   (vCPUs, memory, GPU count and memory). Its "Publication Date" dates those offers;
3. the Spot Instance Advisor data: the monthly interruption bucket per (region, type) and its
   saving against on-demand (an answer that cannot be read, or of another shape, is a warning:
   spot is kept from the catalog and left out of what --prune covers);
4. spot prices: with credentials (boto3 installed and an AWS identity), DescribeSpotPriceHistory
   per region, the cheapest zone and the median across zones; without, on-demand × (1 − the
   advisor's 30-day saving), said so in the source. Either way the bucket comes along, with
   ``interruption_rate_per_hour`` derived from it (``catalog._clouds.aws_bucket_rate``).

What the price files cannot say comes from the active catalog's row for the same instance type
(intra-node topology, the network collectives can use, EFA): new types get a topology from
their accelerator and no inter-node bandwidth (single-node) until someone states it. The GPU
model comes from the instance family (``_names.AWS_FAMILY_ACCELERATOR``); a family not in that
table is reported as a warning and left out, and fractional-GPU types (g6f) are left out.
"""

from __future__ import annotations

import http.client
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

from .._clouds import CLOUDS, aws_bucket_rate
from .._errors import without_fix
from .._records import InstanceType, Offer
from .._refresh_checks import shown_names, spared_by_prune
from ._aws_bulk import (
    PRICING_BASE_URL,
    REGION_INDEX_PATH,
    RegionPrices,
    TypeSpec,
    parse_price_file,
    region_index,
)
from ._aws_spot import ADVISOR_URL, cheapest_and_median, parse_advisor, spot_history
from ._common import (
    CloudData,
    Progress,
    RefreshError,
    SourceUnavailable,
    guess_topology,
    no_progress,
    run_per_region,
    today,
)
from ._http import get_json, iter_lines
from ._names import AWS_FAMILY_ACCELERATOR, AcceleratorMap, aws_family, memory_agrees

CLOUD = "aws"
ON_DEMAND_AND_RESERVED = ("on_demand", "reserved_1y", "reserved_3y")


class AwsSource:
    """``fetch`` builds AWS's accelerated instance types and offers; see the module docstring.

    ``base_url`` and ``advisor_url`` point at the public files (tests point them at a local
    server); ``session`` is a boto3 Session for spot price history (None: boto3's default, if
    boto3 is installed and finds credentials; ``spot_from_ec2=False`` never uses it).
    """

    cloud = CLOUD

    def __init__(self, *, reference, base_url: str = PRICING_BASE_URL,
                 advisor_url: str = ADVISOR_URL, session: Any = None,
                 spot_from_ec2: bool | None = None, max_workers: int = 4,
                 timeout_s: float = 120.0) -> None:
        self.reference = reference
        self.base_url, self.advisor_url = base_url.rstrip("/"), advisor_url
        self._session = session
        self.spot_from_ec2 = spot_from_ec2
        self.max_workers, self.timeout_s = max_workers, timeout_s

    def fetch(self, regions: Sequence[str] | None, progress: Progress | None = None) -> CloudData:
        report = progress or no_progress
        index = get_json(self.base_url + REGION_INDEX_PATH, cloud=CLOUD, first=True,
                         timeout_s=self.timeout_s)
        try:
            urls, rejected = region_index(index, self.base_url)
        except ValueError as exc:
            raise RefreshError(f"aws: {exc}. To fix: retry later, or leave aws out with "
                               "--cloud") from None
        if not urls:  # {"us-east-1": null} is a region without its price file, not none
            listed = len(index["regions"]) - len(rejected)
            raise RefreshError(
                "aws: the Price List region index lists " + (
                    f"{listed:,} region{'s' if listed > 1 else ''} but no price file "
                    "(currentVersionUrl) for any: another format or a broken answer"
                    if listed else "no regions") + ". To fix: retry later, or leave aws out "
                "with --cloud")
        wanted = sorted(r for r in urls if regions is None or r in set(regions))
        files = run_per_region(CLOUD, wanted, lambda r: self._region(r, urls[r]), progress,
                               self.max_workers, what="price file for")
        warnings: list[str] = []
        if rejected:
            warnings.append(f"aws: the Price List region index names {len(rejected):,} "
                            f"region{'s' if len(rejected) > 1 else ''} that "
                            f"{'are' if len(rejected) > 1 else 'is'} no region name, left out: "
                            f"{shown_names(rejected)}")
        advisor = self._advisor(warnings)
        report(CLOUD, "spot", 0, 1)
        ec2_spot = self._ec2_spot(files, warnings)
        report(CLOUD, "spot", 1, 1)
        accelerators = AcceleratorMap(CLOUD, self.reference)
        types, skipped = self._instance_types(files, accelerators, warnings)
        unknown = sorted({n for f in files.values() for n in f.unknown_accelerated if n})
        if unknown:
            warnings.append(f"aws: accelerated instance types of families gpuplan has no "
                            f"accelerator for, left out: {', '.join(unknown[:10])}"
                            f"{' …' if len(unknown) > 10 else ''}. To fix: add the family to "
                            "catalog/sources/_names.py AWS_FAMILY_ACCELERATOR")
        kept = _left_out_warnings(files, warnings)
        offers = self._offers(files, types, advisor, ec2_spot)
        covered = ON_DEMAND_AND_RESERVED + (("spot",) if advisor or ec2_spot else ())
        used = {o.instance_type for o in offers}
        stamp = max((f.published for f in files.values() if f.published), default=today())
        return CloudData(
            cloud=CLOUD, instance_types=tuple(types[n] for n in sorted(types) if n in used),
            offers=tuple(offers), as_of=stamp, source=price_list_label(files),
            accelerators=tuple(a for a in accelerators.new
                               if any(t.accelerator == a.name for t in types.values())),
            regions=tuple(r for r in wanted if r not in kept), covered_pricing=covered,
            warnings=tuple(warnings) + tuple(f"aws: {s}" for s in sorted(skipped)))

    # -- fetching --------------------------------------------------------------------------
    def _region(self, region: str, url: str) -> RegionPrices:
        return parse_price_file(iter_lines(url, cloud=CLOUD, timeout_s=self.timeout_s), region)

    def _advisor(self, warnings: list[str]) -> dict[tuple[str, str], tuple[str, int]]:
        """The advisor's buckets and savings, or {} with a warning: spot comes second, so a
        bad advisor answer leaves spot as it was instead of failing the on-demand prices."""
        try:
            return parse_advisor(get_json(self.advisor_url, cloud=CLOUD,
                                          timeout_s=self.timeout_s))
        # What a bad answer raises, and nothing else (a bug still fails the refresh): the
        # download's own errors (RefreshError, SourceUnavailable), a connection reset
        # mid-body (OSError), a cut or corrupt gzip stream (EOFError, zlib.error), a cut
        # chunked body (HTTPException), and parse_advisor's ValueError for a shape it does
        # not know — TypeError, AttributeError and KeyError only if its checks missed one.
        except (RefreshError, SourceUnavailable, OSError, EOFError, zlib.error,
                http.client.HTTPException, ValueError, TypeError, AttributeError,
                KeyError) as exc:
            said = without_fix(exc) if isinstance(exc, RefreshError | SourceUnavailable) \
                else f"{type(exc).__name__}: {exc}"
            warnings.append(f"aws: Spot Instance Advisor data unavailable ({said[:200]}); spot "
                            "buckets and advisor-derived spot prices kept from the catalog")
            return {}

    def _ec2_spot(self, files: dict[str, RegionPrices],
                  warnings: list[str]) -> dict[str, dict[str, dict[str, float]]]:
        """{region: {type: {zone: USD/h}}} when boto3 and credentials allow, else {}."""
        if self.spot_from_ec2 is False:
            return {}
        try:
            import boto3
            from botocore.config import Config
            from botocore.exceptions import BotoCoreError, ClientError
        except ImportError:
            if self.spot_from_ec2:
                warnings.append("aws: boto3 is not installed: spot prices from the Spot "
                                f"Instance Advisor instead. To fix: {CLOUDS['aws'].install_hint}")
            return {}
        session = self._session or boto3.Session()
        if session.get_credentials() is None:
            return {}
        config = Config(retries={"mode": "adaptive", "max_attempts": 8}, connect_timeout=10,
                        read_timeout=60)
        regular = [r for r, f in files.items() if f.specs and "-" in r and
                   r.count("-") == 2]  # spot history exists for regions, not Local Zones
        try:
            return run_per_region(
                CLOUD, regular, lambda r: spot_history(session, r, sorted(files[r].specs),
                                                       config), None, self.max_workers,
                what="spot price history for")
        except (RefreshError, BotoCoreError, ClientError) as exc:
            warnings.append(f"aws: spot price history unavailable ({str(exc)[:160]}); spot "
                            "prices from the Spot Instance Advisor instead")
            return {}

    # -- building records ---------------------------------------------------------------------
    def _instance_types(self, files, accelerators: AcceleratorMap,
                        warnings) -> tuple[dict[str, InstanceType], set[str]]:
        specs: dict[str, TypeSpec] = {}
        for f in files.values():
            for name, spec in f.specs.items():
                specs.setdefault(name, spec)
        types, skipped = {}, set()
        for name, spec in sorted(specs.items()):
            try:
                gpus = float(spec.gpus) if spec.gpus else 0.0
            except ValueError:
                gpus = 0.0
            if gpus and gpus < 1:
                skipped.add(f"{name} skipped: a fraction of a GPU ({spec.gpus})")
                continue
            record = self._instance_type(name, spec, int(gpus), accelerators, warnings)
            if record is not None:
                types[name] = record
        return types, skipped

    def _instance_type(self, name: str, spec: TypeSpec, gpus: int,
                       accelerators: AcceleratorMap, warnings: list[str]) -> InstanceType | None:
        try:
            ref = self.reference.instance_type_by_key(CLOUD, name)
        except KeyError:
            ref = None
        acc_name = AWS_FAMILY_ACCELERATOR.get(aws_family(name))
        if acc_name is None:
            warnings.append(f"aws {name}: family not in gpuplan's accelerator table; skipped")
            return None
        acc = accelerators.lookup(acc_name, vendor="", source="AWS Price List family")
        count = gpus or (ref.gpu_count if ref else 0)
        if count < 1:
            warnings.append(f"aws {name}: the price file gives no accelerator count; skipped")
            return None
        per_gpu = spec.gpu_memory_gib / count if spec.gpu_memory_gib else None
        if not memory_agrees(acc.memory_gib, per_gpu):
            per_gpu = ref.gpu_memory_gib if ref else acc.memory_gib
        same_shape = ref is not None and ref.gpu_count == count
        return InstanceType(
            cloud=CLOUD, name=name, accelerator=acc.name, gpu_count=count, vcpus=spec.vcpus,
            memory_gib=spec.memory_gib, gpu_memory_gib=per_gpu,
            intra_node_topology=(ref.intra_node_topology if same_shape
                                 else guess_topology(acc, count)),
            intra_node_gb_per_s_per_gpu=ref.intra_node_gb_per_s_per_gpu if same_shape else None,
            inter_node_gbps=ref.inter_node_gbps if same_shape else None,
            fabric=ref.fabric if same_shape else "ethernet",
            gpudirect_rdma=ref.gpudirect_rdma if same_shape else "unverified",
            network_source=ref.network_source if same_shape else "not in the AWS Price List",
            flags=ref.flags if same_shape else ("network_unverified",),
            notes=(ref.notes if same_shape else "from the AWS Price List") +
                  (f"; network (price list): {spec.network}" if spec.network else ""))

    def _offers(self, files, types, advisor, ec2_spot) -> list[Offer]:
        offers: list[Offer] = []
        fetched = today()
        for region in sorted(files):
            f = files[region]
            as_of = f.published or fetched
            label = price_list_label({region: f})
            on_demand: dict[str, float] = {}
            for (name, pricing, cls, upfront), usd in sorted(f.prices.items()):
                if name not in types:
                    continue
                if pricing == "on_demand":
                    on_demand[name] = usd
                offers.append(Offer(cloud=CLOUD, instance_type=name, region=region,
                                    pricing=pricing, usd_per_hour=round(usd, 6),
                                    offering_class=cls, upfront=upfront, as_of=as_of,
                                    source=label))
            for name in sorted(set(types) & set(f.specs)):
                spot = self._spot_offer(region, name, on_demand.get(name), advisor,
                                        ec2_spot.get(region, {}).get(name), fetched)
                if spot is not None:
                    offers.append(spot)
        return offers

    @staticmethod
    def _spot_offer(region, name, on_demand, advisor, by_zone, fetched) -> Offer | None:
        bucket, savings = advisor.get((region, name), ("", -1))
        common = {"cloud": CLOUD, "instance_type": name, "region": region, "pricing": "spot",
                  "interruption_bucket": bucket, "as_of": fetched,
                  "interruption_rate_per_hour": aws_bucket_rate(bucket) if bucket else None}
        if by_zone:
            zone, cheapest, median = cheapest_and_median(by_zone)
            return Offer(usd_per_hour=round(cheapest, 6), zone=zone, zone_count=len(by_zone),
                         usd_per_hour_zone_median=round(median, 6),
                         source="AWS EC2 DescribeSpotPriceHistory (newest price per zone) + "
                                "Spot Instance Advisor bucket", **common)
        if on_demand and savings >= 0:
            usd = round(on_demand * (1 - savings / 100), 6)
            return Offer(usd_per_hour=usd, usd_per_hour_zone_mean=usd,
                         source=f"AWS Spot Instance Advisor: {savings}% below on-demand "
                                "(average over the last 30 days and across zones)", **common)
        return None


def _left_out_warnings(files: dict[str, RegionPrices], warnings: list[str]) -> list[str]:
    """Say how many price lines were left out (unreadable, another currency than USD), first
    among ``warnings``: the refresh quotes a cloud's first warning when it priced nothing.
    Returns the regions they were in, which --prune leaves alone: the offer of such a line is
    not gone, and which offer an unreadable line was is not known."""
    kept = sorted(r for r, f in files.items() if f.unreadable or f.other_currency)
    prune = spared_by_prune(kept)
    if currencies := sum((f.other_currency for f in files.values()), Counter()):
        lines = sum(currencies.values())
        named = ", ".join(f"{c[:12]!r}: {n:,}" for c, n in currencies.most_common(3))
        warnings.insert(0, f"aws: {lines:,} price line{'s' if lines > 1 else ''} of "
                           f"accelerated instance types in a currency other than USD ({named}) "
                           f"left out; those offers keep the catalog's price and date{prune}")
    unreadable = {r: f.unreadable for r, f in files.items() if f.unreadable}
    if unreadable:
        lines = sum(len(v) for v in unreadable.values())
        region, said = next(iter(unreadable.items()))
        warnings.insert(0, f"aws: {lines:,} price line{'s' if lines > 1 else ''} of "
                           f"accelerated instance types could not be read ({region}: {said[0]}"
                           f"{' …' if lines > 1 else ''}); those offers keep the catalog's "
                           f"price and date{prune}")
    return kept


def price_list_label(files: dict[str, RegionPrices]) -> str:
    versions = sorted({f.version for f in files.values() if f.version})
    published = sorted({f.published.isoformat() for f in files.values() if f.published})
    return ("AWS Price List bulk file AmazonEC2"
            + (f" {versions[-1]}" if versions else "")
            + (f" (published {published[-1]})" if published else ""))
