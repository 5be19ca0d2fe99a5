"""GCP: prices from the Cloud Billing catalog, with an API key or with credentials.

Two ways in, both reading the Compute Engine (``services/6F81-5844-456A``) and Cloud TPU
(``services/E000-3F24-B8AA``) SKU lists (``_gcp_skus`` has the matching rules, ``_gcp_pages``
the checks on a list read over HTTPS):

- **API key** (``GOOGLE_CLOUD_API_KEY``, or ``api_key=``; any project's key with the Cloud
  Billing API enabled): the SKU lists over plain HTTPS, no SDK. The machine types, their zones
  and the TPU slices are those the active catalog already knows (the Billing API does not list
  machine types); new machine types need the credentials way.
- **Credentials** (application-default credentials and a project; ``google-cloud-compute`` and
  ``google-cloud-billing``): ``machineTypes.aggregatedList`` and
  ``acceleratorTypes.aggregatedList`` say which GPU machine types exist in which zones, and
  the SKU lists price them.

A machine's price is built, never guessed: its series' vCPU SKU × vCPUs + RAM SKU × GiB + GPU
SKU × GPU count, each matched exactly in the machine's region; A4/A4X have no core or RAM
SKU — their "(1 gpu slice)" SKU is the whole VM per GPU. If the GPU SKU is missing, on-demand
and spot offers get ``usd_per_hour=None`` and ``price_unknown`` — never a host-only price;
committed offers are written only when every part is priced. GPUs attached to N1 VMs (T4,
V100, P100, P4) become ``n1+<gpu>x<count>`` priced for the GPUs alone, flagged
``host_price_missing``. TPU slices (``tpu-<version>-<size>``) are priced from the TPU SKUs in
the regions where the catalog already lists that slice (the Billing API does not say where a
slice can be created). Spot interruption rates: GCP publishes none; the cloud default applies.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from .._clouds import CLOUDS
from .._records import InstanceType, Offer
from ._common import (
    CloudData,
    Progress,
    SourceUnavailable,
    guess_topology,
    no_progress,
    today,
)
from ._gcp_pages import API_KEY_ENV, no_skus, rest_skus
from ._gcp_skus import (
    BUNDLED_SERIES,
    COMPUTE_SERVICE,
    GPU_SKUS,
    MACHINE_ACCELERATOR,
    TPU_SERVICE,
    USAGE,
    SkuPrices,
    core_description,
    host_keys,
    series_of,
)
from ._names import GCP_SKIP_SUFFIXES, AcceleratorMap

CLOUD = "gcp"
BILLING_URL = "https://cloudbilling.googleapis.com"
NO_CREDENTIALS = (f"no Google Cloud credentials or API key. To fix: set {API_KEY_ENV} to an "
                  "API key of a project with the Cloud Billing API enabled (prices only), or "
                  "run `gcloud auth application-default login` / set "
                  "GOOGLE_APPLICATION_CREDENTIALS (prices and machine types)")
__all__ = ["BILLING_URL", "GcpSource", "core_description"]


class GcpSource:
    """``fetch`` builds GCP's GPU machine types, TPU slices and offers; see the module
    docstring. Tests point ``billing_url`` / ``client_options`` at a local server."""

    cloud = CLOUD

    def __init__(self, *, reference, credentials: Any = None, project: str | None = None,
                 api_key: str | None = None, client_options: Any = None,
                 billing_client_options: Any = None, billing_url: str = BILLING_URL,
                 transport: str = "rest", timeout_s: float = 120.0) -> None:
        self.reference = reference
        self._credentials, self._project = credentials, project
        self._api_key = api_key
        self._client_options = client_options
        self._billing_options = billing_client_options or client_options
        self.billing_url = billing_url.rstrip("/")
        self.transport, self.timeout_s = transport, timeout_s

    def fetch(self, regions: Sequence[str] | None, progress: Progress | None = None) -> CloudData:
        api_key = self._api_key or os.environ.get(API_KEY_ENV)
        if self._credentials is None and api_key:
            return self._fetch_with_key(api_key, regions, progress or no_progress)
        return self._fetch_with_credentials(regions, progress or no_progress)

    # -- API key: SKUs over HTTPS, machine types from the catalog --------------------------
    def _fetch_with_key(self, key: str, regions, report: Progress) -> CloudData:
        prices = SkuPrices()
        for i, service in enumerate((COMPUTE_SERVICE, TPU_SERVICE)):
            prices.add(rest_skus(self.billing_url, service, key, timeout_s=self.timeout_s,
                                 first=i == 0), service)
            report(CLOUD, f"prices ({service})", i + 1, 2)
        prices.check_usable()
        builder = _Builder(self.reference, prices, set(regions) if regions else None)
        for t in self.reference.instance_types:
            if t.cloud != CLOUD:
                continue
            where = builder.known_regions(t.name)
            if t.name.startswith("tpu-"):
                builder.tpu(t, where)
            elif t.name.startswith("n1+"):
                acc_type = _attached_type(t.name)
                if acc_type:
                    builder.attached_type(t, acc_type, where)
            else:
                acc_type = MACHINE_ACCELERATOR.get(_machine_family(t.name))
                if acc_type:
                    builder.priced_machine(t, acc_type, where)
        return builder.result("GCP Cloud Billing catalog (API key) + machine types from the "
                              "catalog")

    # -- credentials: Compute API + Billing SDK ---------------------------------------------
    def _fetch_with_credentials(self, regions, report: Progress) -> CloudData:
        try:
            from google.cloud import billing_v1, compute_v1
        except ImportError:
            raise SourceUnavailable(CLOUD, "google-cloud-compute/-billing are not installed. "
                                    f"To fix: {CLOUDS['gcp'].install_hint}, or set "
                                    f"{API_KEY_ENV} (prices with no SDK)") from None
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
            report(CLOUD, "machine types", 1, 4)
            acc_client = compute_v1.AcceleratorTypesClient(client_options=self._client_options,
                                                           **common)
            attachable: dict[str, tuple[int, list[str]]] = {}
            for zone, scoped in acc_client.aggregated_list(
                    request={"project": project}, timeout=self.timeout_s):
                for at in scoped.accelerator_types:
                    cards, zs = attachable.get(at.name, (0, []))
                    attachable[at.name] = (max(cards, at.maximum_cards_per_instance),
                                           [*zs, zone.split("/")[-1]])
            report(CLOUD, "accelerator types", 2, 4)
            billing = billing_v1.CloudCatalogClient(client_options=self._billing_options,
                                                    **common)
            prices = SkuPrices()
            for i, service in enumerate((COMPUTE_SERVICE, TPU_SERVICE)):
                if not prices.add(billing.list_skus(parent=service, timeout=self.timeout_s),
                                  service):
                    raise no_skus(service, "retry, or check that the project has the Cloud "
                                  "Billing API enabled")
                report(CLOUD, f"prices ({service})", 3 + i, 4)
        prices.check_usable()
        bundled = {a.guest_accelerator_type for mt in specs.values() for a in mt.accelerators}
        builder = _Builder(self.reference, prices, set(regions) if regions else None)
        for name in sorted(specs):
            builder.machine(specs[name], _zone_counts(zones_by_type[name]))
        for acc_name in sorted(set(attachable) - bundled):
            if not acc_name.endswith(GCP_SKIP_SUFFIXES) and acc_name.startswith("nvidia-"):
                cards, zones = attachable[acc_name]
                builder.attached(acc_name, cards, _zone_counts(zones))
        for t in self.reference.instance_types:
            if t.cloud == CLOUD and t.name.startswith("tpu-"):
                builder.tpu(t, builder.known_regions(t.name))
        return builder.result("GCP Compute Engine + Cloud Billing catalog APIs")

    def _auth(self) -> tuple[Any, str]:
        credentials, project = self._credentials, self._project
        if credentials is None:
            _check_credentials_file(os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"))
            import google.auth
            from google.auth.exceptions import DefaultCredentialsError

            try:
                credentials, found = google.auth.default(
                    scopes=["https://www.googleapis.com/auth/cloud-platform"])
            except DefaultCredentialsError as exc:
                raise SourceUnavailable(CLOUD, _credentials_message(exc)) from None
            project = project or os.environ.get("GOOGLE_CLOUD_PROJECT") or found
        if not project:
            raise SourceUnavailable(CLOUD, "no Google Cloud project. To fix: set "
                                    "GOOGLE_CLOUD_PROJECT or run `gcloud config set project "
                                    f"PROJECT_ID`, or set {API_KEY_ENV} instead")
        return credentials, project


def _credentials_message(exc: Exception) -> str:
    """NO_CREDENTIALS when there are none; when GOOGLE_APPLICATION_CREDENTIALS names a file
    google-auth could not use, its reason ("… is not a valid json file", "missing fields
    client_email, token_uri"): "no credentials" sent users to set the variable they had set."""
    path = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    if not path:
        return NO_CREDENTIALS
    from .._errors import quoted

    # its args may be (what failed, the cause): said as text, not as a tuple's repr
    reason = " ".join("; ".join(str(a).rstrip(". ") for a in exc.args).split())
    if len(reason) > 200:
        reason = reason[:200] + "…"
    return (f"GOOGLE_APPLICATION_CREDENTIALS={quoted(path)} is not a credentials file "
            f"google-auth can use ({reason}). To fix: point it at a service-account key JSON "
            "or the file `gcloud auth application-default login` writes, or unset it and set "
            f"{API_KEY_ENV} (prices only)")


MAX_CREDENTIALS_BYTES = 1 * 2**20  # a service-account key is ~2.3 KB


def _check_credentials_file(path: str | None) -> None:
    """The file GOOGLE_APPLICATION_CREDENTIALS names, by gpuplan's file rules, before
    google-auth reads it without bounds (/dev/zero grew to 3.5 GB; a named pipe hung)."""
    if not path:
        return
    from .._errors import CatalogFileError, without_fix
    from .._files import read_user_text

    try:
        read_user_text(path, what="GOOGLE_APPLICATION_CREDENTIALS",
                       max_bytes=MAX_CREDENTIALS_BYTES)
    except CatalogFileError as exc:
        raise SourceUnavailable(CLOUD, without_fix(exc) + ". To fix: "
                                "point GOOGLE_APPLICATION_CREDENTIALS at your key file (JSON), "
                                f"or unset it and set {API_KEY_ENV}") from None


def _zone_counts(zones: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for zone in zones:
        region = zone.rsplit("-", 1)[0]
        counts[region] = counts.get(region, 0) + 1
    return counts


def _machine_family(name: str) -> str:
    return name.removesuffix("-nolssd").rsplit("-", 1)[0]


def _attached_type(name: str) -> str | None:
    match = re.fullmatch(r"n1\+([a-z0-9]+)x\d+", name)
    if not match:
        return None
    gpu = match.group(1)
    return f"nvidia-tesla-{gpu}" if f"nvidia-tesla-{gpu}" in GPU_SKUS else None


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


class _Builder:
    """Turns machine shapes and SKU prices into instance types and offers."""

    def __init__(self, reference, prices: SkuPrices, wanted: set[str] | None) -> None:
        self.reference, self.prices, self.wanted = reference, prices, wanted
        self.accelerators = AcceleratorMap(CLOUD, reference)
        self.types: dict[str, InstanceType] = {}
        self.offers: list[Offer] = []
        self.regions: set[str] = set()
        self.warnings: list[str] = []
        self.as_of = today()
        self.base = Offer(cloud=CLOUD, instance_type="-", region="-", pricing="on_demand",
                          usd_per_hour=1.0, as_of=self.as_of, source="-")
        self.source = ""

    def known_regions(self, name: str) -> dict[str, int]:
        """{region: zones} where the catalog already lists ``name`` (its availability)."""
        out: dict[str, int] = {}
        for o in self.reference.offers:
            if o.cloud == CLOUD and o.instance_type == name:
                out[o.region] = max(out.get(o.region, 0), o.zone_count or 0)
        return out

    def _ref(self, name: str) -> InstanceType | None:
        try:
            return self.reference.instance_type_by_key(CLOUD, name)
        except KeyError:
            return None

    def _record(self, name, acc, count, vcpus, memory_gib, notes) -> InstanceType:
        ref = self._ref(name)
        same = ref is not None and ref.gpu_count == count
        return InstanceType(
            cloud=CLOUD, name=name, accelerator=acc.name, gpu_count=count, vcpus=vcpus,
            memory_gib=memory_gib, gpu_memory_gib=acc.memory_gib,
            intra_node_topology=(ref.intra_node_topology if same
                                 else guess_topology(acc, count)),
            intra_node_gb_per_s_per_gpu=ref.intra_node_gb_per_s_per_gpu if same else None,
            inter_node_gbps=ref.inter_node_gbps if same else None,
            fabric=ref.fabric if same else "ethernet",
            gpudirect_rdma=ref.gpudirect_rdma if same else "unverified",
            network_source=ref.network_source if same else "not in the GCP API",
            flags=ref.flags if same else ("network_unverified",), notes=notes)

    def _where(self, zone_counts: dict[str, int]):
        for region, zones in sorted(zone_counts.items()):
            if self.wanted is None or region in self.wanted:
                self.regions.add(region)
                yield region, zones

    # -- machines --------------------------------------------------------------------------
    def machine(self, mt, zone_counts: dict[str, int]) -> None:
        """A machine type from the Compute API."""
        acc_type = mt.accelerators[0].guest_accelerator_type
        count = int(mt.accelerators[0].guest_accelerator_count)
        acc = self.accelerators.lookup(acc_type, vendor="NVIDIA", source="machineTypes")
        series = series_of(mt.name)
        memory_gib = mt.memory_mb / 1024
        notes = (f"price = {count}x {acc_type} GPU slice SKU (vCPUs and memory included)"
                 if series in BUNDLED_SERIES else
                 f"price = {series or '?'} vCPU + RAM SKUs + {count}x {acc_type} GPU SKU")
        self.types[mt.name] = self._record(mt.name, acc, count, mt.guest_cpus, memory_gib,
                                           notes)
        self._price_machine(mt.name, acc_type, count, mt.guest_cpus, memory_gib, series,
                            zone_counts)

    def priced_machine(self, t: InstanceType, acc_type: str, zone_counts) -> None:
        """A machine type the catalog already knows (API-key mode)."""
        series = series_of(t.name)
        if series not in BUNDLED_SERIES and (t.vcpus is None or t.memory_gib is None):
            return
        self.types[t.name] = t
        self._price_machine(t.name, acc_type, t.gpu_count, t.vcpus or 0, t.memory_gib or 0.0,
                            series, zone_counts)

    def _price_machine(self, name, acc_type, count, vcpus, memory_gib, series,
                       zone_counts) -> None:
        cpu_keys, ram_keys = host_keys(series or "?")
        gpu_keys = GPU_SKUS.get(acc_type, ())
        for region, zones in self._where(zone_counts):
            for model in USAGE.values():
                gpu = self.prices.price(gpu_keys, model, region)
                if series in BUNDLED_SERIES:
                    host: float | None = 0.0  # the GPU slice SKU includes the VM
                else:
                    cpu = self.prices.price(cpu_keys, model, region)
                    ram = self.prices.price(ram_keys, model, region)
                    host = None if cpu is None or ram is None else cpu * vcpus + ram * memory_gib
                if host is not None and gpu is not None:
                    self._offer(name, region, model, round(host + gpu * count, 6), zones)
                elif model in ("on_demand", "spot") and (host or gpu is not None):
                    self._offer(name, region, model, None, zones, ("price_unknown",))
                    part, keys = (("GPU", gpu_keys) if gpu is None else
                                  ("host", (*cpu_keys, *ram_keys)))
                    # "not found" sent users looking for a SKU that was there, but negative
                    why = self.prices.why_missing(keys, model, region)
                    self.warnings.append(f"gcp {name} {region} {model}: {part} SKU {why}")

    def attached(self, acc_type: str, max_cards: int, zone_counts) -> None:
        """GPUs one attaches to an N1 VM, from the Compute API's accelerator types."""
        acc = self.accelerators.lookup(acc_type, vendor="NVIDIA", source="acceleratorTypes")
        short = acc_type.removeprefix("nvidia-").removeprefix("tesla-")
        for n in (1, 2, 4, 8):
            if n > max_cards:
                continue
            name = f"n1+{short}x{n}"
            self.types[name] = self._record(
                name, acc, n, None, None,
                f"{n}x {acc_type} attached to an N1 VM of your choice; price is the GPUs' only")
            self._price_attached(name, acc_type, n, zone_counts)

    def attached_type(self, t: InstanceType, acc_type: str, zone_counts) -> None:
        self.types[t.name] = t
        self._price_attached(t.name, acc_type, t.gpu_count, zone_counts)

    def _price_attached(self, name, acc_type, n, zone_counts) -> None:
        for region, zones in self._where(zone_counts):
            for model in USAGE.values():
                gpu = self.prices.price(GPU_SKUS.get(acc_type, ()), model, region)
                if gpu is not None:
                    self._offer(name, region, model, round(gpu * n, 6), zones,
                                ("host_price_missing",))

    def tpu(self, t: InstanceType, zone_counts) -> None:
        """A TPU slice the catalog knows (tpu-<version>-<size>), priced where it is listed."""
        match = re.fullmatch(r"tpu-(v\w+?)-(\d+)", t.name)
        if not match:
            return
        version, size = match.group(1), int(match.group(2))
        priced = False
        for region, zones in self._where(zone_counts):
            for model in USAGE.values():
                usd = self.prices.tpu_slice(version, size, t.gpu_count, model, region)
                if usd is not None:
                    self._offer(t.name, region, model, round(usd, 6), zones)
                    priced = True
        if priced:
            self.types[t.name] = t

    def _offer(self, name, region, model, usd, zone_count, flags=()) -> None:
        self.offers.append(replace(self.base, instance_type=name, region=region, pricing=model,
                                   usd_per_hour=usd, zone_count=zone_count,
                                   flags=tuple(flags)))

    def result(self, source: str) -> CloudData:
        label = f"{source} (gpuplan catalog refresh {self.as_of.isoformat()})"
        offers = tuple(replace(o, source=label) for o in self.offers)
        used = {o.instance_type for o in offers}
        return CloudData(cloud=CLOUD, instance_types=tuple(self.types[n] for n in
                                                           sorted(self.types) if n in used),
                         offers=offers, as_of=self.as_of, source=label,
                         accelerators=self.accelerators.new,
                         regions=tuple(sorted(self.regions)),
                         covered_pricing=tuple(USAGE.values()),
                         warnings=(*self.prices.warnings(), *self.warnings))
