"""GCP: machine and accelerator types from Compute Engine, prices from the Cloud Billing catalog.

Reads ``machineTypes.aggregatedList`` and ``acceleratorTypes.aggregatedList`` (every zone in
one paged call each) and ``services/6F81-5844-456A/skus`` (Compute Engine's public SKU list).

A machine's price is built, never guessed: its series' vCPU SKU × vCPUs + its RAM SKU × GiB +
its GPU SKU × GPU count, each matched **exactly** on the SKU's description (after removing the
usage-type prefix — "Spot Preemptible ", "Preemptible ", "Commitment v1: " — and the location
suffix — " running in …", " attached to …", " in … for 1 Year"), on ``category.usageType``
(OnDemand → on_demand, Preemptible → spot, Commit1Yr → committed_1y, Commit3Yr → committed_3y)
and on ``serviceRegions`` containing the machine's region. Unit prices are
``pricingInfo[0].pricingExpression.tieredRates[0].unitPrice`` (units + nanos / 1e9).

If the host SKUs are found but the GPU SKU is not, the on-demand and spot offers are written
with ``usd_per_hour=None`` and the ``price_unknown`` flag — never a host-only price. Committed
offers are written only when every part is priced. GPUs attached to N1 VMs (T4, V100, P100, P4)
become ``n1+<gpu>x<count>`` types priced for the GPUs alone, flagged ``host_price_missing``,
as in the packaged snapshot. The API has no network bandwidth: it comes from the reference
catalog's row for the same machine type (else the type is flagged ``network_unverified``).
"""

from __future__ import annotations

import os
import re
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
    no_progress,
    today,
)
from ._names import GCP_SKIP_SUFFIXES, AcceleratorMap

CLOUD = "gcp"
COMPUTE_SERVICE = "services/6F81-5844-456A"
USAGE = {"OnDemand": "on_demand", "Preemptible": "spot", "Commit1Yr": "committed_1y",
         "Commit3Yr": "committed_3y"}
# Machine-type prefix → the series label in SKU descriptions ("A3Plus Instance Ram ...").
SERIES = {"a2-": "A2", "a3-highgpu": "A3", "a3-edgegpu": "A3", "a3-megagpu": "A3Plus",
          "a3-ultragpu": "A3Ultra", "a4-highgpu": "A4", "a4x-": "A4X", "g2-": "G2", "g4-": "G4"}
# Accelerator type → the SKU descriptions (core part) that price one such GPU.
GPU_SKUS = {
    "nvidia-tesla-a100": ("Nvidia Tesla A100 GPU",),
    "nvidia-a100-80gb": ("Nvidia Tesla A100 80GB GPU", "Nvidia A100 80GB GPU"),
    "nvidia-h100-80gb": ("Nvidia H100 80GB GPU",),
    "nvidia-h100-mega-80gb": ("Nvidia H100 80GB Mega GPU", "Nvidia H100 Mega 80GB GPU",
                              "Nvidia H100 80GB Plus GPU"),
    "nvidia-h200-141gb": ("Nvidia H200 141GB GPU",),
    "nvidia-b200": ("Nvidia B200 (1 gpu slice)", "Nvidia B200 GPU"),
    "nvidia-gb200": ("Nvidia GB200 GPU",),
    "nvidia-l4": ("Nvidia L4 GPU",),
    "nvidia-tesla-t4": ("Nvidia Tesla T4 GPU",),
    "nvidia-tesla-v100": ("Nvidia Tesla V100 GPU",),
    "nvidia-tesla-p100": ("Nvidia Tesla P100 GPU",),
    "nvidia-tesla-p4": ("Nvidia Tesla P4 GPU",),
}
_PREFIX = re.compile(r"^(?:Spot Preemptible |Preemptible |Commitment v\d+: |Commitment: )")
_SUFFIX = re.compile(r"\s+(?:attached to|running in|in)\s.*$")
_HOST = re.compile(r"^(?P<series>\S+) (?:Instance )?(?P<kind>Core|Cpu|Ram)$")
NO_CREDENTIALS = ("no Google Cloud credentials. To fix: run `gcloud auth application-default "
                  "login` or set GOOGLE_APPLICATION_CREDENTIALS")


def core_description(description: str) -> str:
    return _SUFFIX.sub("", _PREFIX.sub("", description.strip()))


class GcpSource:
    """``fetch`` builds GCP's GPU machine types and offers; see the module docstring."""

    cloud = CLOUD

    def __init__(self, *, reference, credentials: Any = None, project: str | None = None,
                 client_options: Any = None, billing_client_options: Any = None,
                 transport: str = "rest", timeout_s: float = 120.0) -> None:
        self.reference = reference
        self._credentials, self._project = credentials, project
        self._client_options = client_options
        self._billing_options = billing_client_options or client_options
        self.transport, self.timeout_s = transport, timeout_s

    def fetch(self, regions: Sequence[str] | None, progress: Progress | None = None) -> CloudData:
        from google.cloud import billing_v1, compute_v1

        report = progress or no_progress
        credentials, project = self._auth()
        common = {"credentials": credentials, "transport": self.transport}
        with _unavailable_on_connection_errors():
            machines = compute_v1.MachineTypesClient(client_options=self._client_options,
                                                     **common)
            zones_by_type: dict[str, list[str]] = {}
            specs: dict[str, Any] = {}
            for zone, scoped in machines.aggregated_list(
                    request={"project": project}, timeout=self.timeout_s):
                for mt in scoped.machine_types:
                    if mt.accelerators:
                        specs.setdefault(mt.name, mt)
                        zones_by_type.setdefault(mt.name, []).append(zone.split("/")[-1])
            report(CLOUD, "machine types", 1, 3)
            acc_client = compute_v1.AcceleratorTypesClient(client_options=self._client_options,
                                                           **common)
            attachable: dict[str, tuple[int, list[str]]] = {}
            for zone, scoped in acc_client.aggregated_list(
                    request={"project": project}, timeout=self.timeout_s):
                for at in scoped.accelerator_types:
                    cards, zs = attachable.get(at.name, (0, []))
                    attachable[at.name] = (max(cards, at.maximum_cards_per_instance),
                                           [*zs, zone.split("/")[-1]])
            report(CLOUD, "accelerator types", 2, 3)
            billing = billing_v1.CloudCatalogClient(client_options=self._billing_options,
                                                    **common)
            prices = _sku_prices(billing.list_skus(parent=COMPUTE_SERVICE,
                                                   timeout=self.timeout_s))
            report(CLOUD, "prices", 3, 3)
        bundled = {a.guest_accelerator_type for mt in specs.values() for a in mt.accelerators}
        wanted = set(regions) if regions is not None else None
        as_of = today()
        builder = _Builder(self.reference, prices, wanted, as_of)
        for name in sorted(specs):
            builder.machine(specs[name], zones_by_type[name])
        for acc_name in sorted(set(attachable) - bundled):
            if not acc_name.endswith(GCP_SKIP_SUFFIXES) and acc_name.startswith("nvidia-"):
                builder.attached(acc_name, *attachable[acc_name])
        return CloudData(cloud=CLOUD, instance_types=tuple(builder.types.values()),
                         offers=flag_spot_above_on_demand(builder.offers), as_of=as_of,
                         source=source_label(as_of), accelerators=builder.accelerators.new,
                         regions=tuple(sorted(builder.regions)),
                         warnings=tuple(builder.warnings))

    def _auth(self) -> tuple[Any, str]:
        credentials, project = self._credentials, self._project
        if credentials is None:
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                credentials, found = google.auth.default(
                    scopes=["https://www.googleapis.com/auth/cloud-platform"])
            except DefaultCredentialsError:
                raise SourceUnavailable(CLOUD, NO_CREDENTIALS) from None
            project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or found
        if not project:
            raise SourceUnavailable(CLOUD, "no Google Cloud project. To fix: set "
                                    "GOOGLE_CLOUD_PROJECT or run `gcloud config set project "
                                    "PROJECT_ID`")
        return credentials, project


def source_label(as_of) -> str:
    return (f"GCP Compute Engine + Cloud Billing catalog APIs (gpuplan catalog refresh "
            f"{as_of.isoformat()})")


class _unavailable_on_connection_errors:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> bool:
        if exc is None:
            return False
        import requests
        from google.api_core import exceptions as gexc
        from google.auth.exceptions import GoogleAuthError, TransportError

        if isinstance(exc, requests.ConnectionError | TransportError | gexc.RetryError):
            raise SourceUnavailable(CLOUD, f"cannot reach Google Cloud ({type(exc).__name__}). "
                                    "To fix: check your network or proxy and retry") from None
        if isinstance(exc, gexc.Unauthenticated | GoogleAuthError):
            raise SourceUnavailable(CLOUD, NO_CREDENTIALS) from None
        if isinstance(exc, gexc.PermissionDenied):
            raise SourceUnavailable(CLOUD, f"permission denied ({exc.message}). To fix: enable "
                                    "the Cloud Billing and Compute Engine APIs and grant "
                                    "compute.machineTypes.list") from None
        return False


def _unit_price(sku) -> float | None:
    for info in sku.pricing_info:
        for rate in info.pricing_expression.tiered_rates:
            price = int(rate.unit_price.units) + rate.unit_price.nanos / 1e9
            if price > 0:
                return price
    return None


def _sku_prices(skus) -> dict[tuple[str, str, str], float]:
    """{(core description, pricing model, region): USD per unit-hour} for compute SKUs."""
    out: dict[tuple[str, str, str], float] = {}
    for sku in skus:
        cat = sku.category
        model = USAGE.get(cat.usage_type)
        if model is None or cat.resource_family != "Compute" or cat.resource_group not in (
                "CPU", "RAM", "GPU", "N1Standard"):
            continue
        price = _unit_price(sku)
        if price is None:
            continue
        core = core_description(sku.description)
        for region in sku.service_regions:
            out.setdefault((core, model, region), price)
    return out


def _host_keys(series: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ((f"{series} Instance Core", f"{series} Cpu", f"{series} Core"),
            (f"{series} Instance Ram", f"{series} Ram"))


class _Builder:
    def __init__(self, reference, prices, wanted, as_of) -> None:
        self.reference, self.prices, self.wanted = reference, prices, wanted
        self.accelerators = AcceleratorMap(CLOUD, reference)
        self.types: dict[str, InstanceType] = {}
        self.offers: list[Offer] = []
        self.regions: set[str] = set()
        self.warnings: list[str] = []
        self.base = Offer(cloud=CLOUD, instance_type="-", region="-", pricing="on_demand",
                          usd_per_hour=1.0, as_of=as_of, source=source_label(as_of))

    def _price(self, keys: Sequence[str], model: str, region: str) -> float | None:
        return next((self.prices[(k, model, region)] for k in keys
                     if (k, model, region) in self.prices), None)

    def _by_region(self, zones: list[str]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for zone in zones:
            region = zone.rsplit("-", 1)[0]
            if self.wanted is None or region in self.wanted:
                counts[region] = counts.get(region, 0) + 1
        return counts

    def _record(self, name, acc, count, vcpus, memory_gib, notes) -> InstanceType:
        try:
            ref = self.reference.instance_type_by_key(CLOUD, name)
        except KeyError:
            ref = None
        return InstanceType(
            cloud=CLOUD, name=name, accelerator=acc.name, gpu_count=count, vcpus=vcpus,
            memory_gib=memory_gib, gpu_memory_gib=acc.memory_gib,
            intra_node_topology=(ref.intra_node_topology if ref and ref.gpu_count == count
                                 else guess_topology(acc, count)),
            intra_node_gb_per_s_per_gpu=ref.intra_node_gb_per_s_per_gpu if ref else None,
            inter_node_gbps=ref.inter_node_gbps if ref else None,
            fabric=ref.fabric if ref else "ethernet",
            gpudirect_rdma=ref.gpudirect_rdma if ref else "unverified",
            network_source=ref.network_source if ref else "not in the GCP API",
            flags=ref.flags if ref else ("network_unverified",), notes=notes)

    def machine(self, mt, zones: list[str]) -> None:
        acc_type = mt.accelerators[0].guest_accelerator_type
        count = int(mt.accelerators[0].guest_accelerator_count)
        acc = self.accelerators.lookup(acc_type, vendor="NVIDIA", source="machineTypes")
        series = next((label for prefix, label in SERIES.items()
                       if mt.name.startswith(prefix)), None)
        memory_gib = mt.memory_mb / 1024
        self.types[mt.name] = self._record(
            mt.name, acc, count, mt.guest_cpus, memory_gib,
            f"price = {series or '?'} vCPU + RAM SKUs + {count}x {acc_type} GPU SKU")
        cpu_keys, ram_keys = _host_keys(series or "?")
        for region, zone_count in sorted(self._by_region(zones).items()):
            self.regions.add(region)
            for model in USAGE.values():
                cpu = self._price(cpu_keys, model, region)
                ram = self._price(ram_keys, model, region)
                gpu = self._price(GPU_SKUS.get(acc_type, ()), model, region)
                if cpu is not None and ram is not None and gpu is not None:
                    usd = cpu * mt.guest_cpus + ram * memory_gib + gpu * count
                    self._offer(mt.name, region, model, round(usd, 6), zone_count)
                elif model in ("on_demand", "spot") and (cpu is not None or gpu is not None):
                    self._offer(mt.name, region, model, None, zone_count, ("price_unknown",))
                    self.warnings.append(f"gcp {mt.name} {region} {model}: "
                                         f"{'GPU' if gpu is None else 'host'} SKU not found")

    def attached(self, acc_type: str, max_cards: int, zones: list[str]) -> None:
        acc = self.accelerators.lookup(acc_type, vendor="NVIDIA", source="acceleratorTypes")
        short = acc_type.removeprefix("nvidia-").removeprefix("tesla-")
        counts = [n for n in (1, 2, 4, 8) if n <= max_cards]
        for n in counts:
            name = f"n1+{short}x{n}"
            self.types[name] = self._record(
                name, acc, n, None, None,
                f"{n}x {acc_type} attached to an N1 VM of your choice; price is the GPUs' only")
            for region, zone_count in sorted(self._by_region(zones).items()):
                self.regions.add(region)
                for model in USAGE.values():
                    gpu = self._price(GPU_SKUS.get(acc_type, ()), model, region)
                    if gpu is not None:
                        self._offer(name, region, model, round(gpu * n, 6), zone_count,
                                    ("host_price_missing",))

    def _offer(self, name, region, model, usd, zone_count, flags=()) -> None:
        spot = model == "spot"
        self.offers.append(replace(self.base, instance_type=name, region=region, pricing=model,
                                   usd_per_hour=usd, zone_count=zone_count, flags=flags,
                                   usd_per_hour_zone_median=usd if spot else None))
