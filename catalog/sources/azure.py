"""Azure: prices from the public Retail Prices API, specs from Compute resource SKUs.

Prices need no credentials: ``GET https://prices.azure.com/api/retail/prices`` with
``$filter=serviceName eq 'Virtual Machines' and armSkuName eq '<size>'``, one query per GPU
size (concurrently), following ``NextPageLink`` until it is null, over the standard library's
HTTPS (``_http``: a base install refreshes them, no [azure] extra). Item rules:

- ``productName`` containing "Windows" → skipped (Linux prices only);
- ``type`` Consumption → ``on_demand``, or ``spot`` when meterName/skuName contains "Spot";
- "Low Priority" meters → **skipped** (Batch/legacy low-priority VMs are being retired in
  favour of Spot; they are not what a user rents as a spot VM);
- ``type`` Reservation with ``reservationTerm`` "1 Year" / "3 Years" → ``reserved_1y`` /
  ``reserved_3y``; ``unitPrice`` is for the whole term, so it is divided by 8,760 / 26,280 h;
- DevTestConsumption and anything else → skipped; several items for one (region, model) →
  the lowest; a $0 price → skipped (a placeholder).

An item of those that cannot be used is skipped, counted by why and said in one warning, and
its offer keeps the catalog's price (``--prune`` leaves its region alone): a price that is
no JSON number (``true`` is not $1.00/h), not finite or negative; a ``currencyCode`` other
than USD (or none); an ``armRegionName`` that is no region name (``_refresh_checks.
region_code``: surrounding spaces are stripped, control characters, commas, upper case and
the like refused). A page without ``Items`` (a changed schema) fails the refresh, and so does
an answer with no price item at all for any size: read as "Azure sells nothing", ``--prune``
removed every Azure offer. ``NextPageLink`` null or "" ends a size's pages.

Sizes Azure has retired (``_names.AZURE_RETIRED``: the K80/M60 NC and NV series) are never
asked for, nor are sizes that hold part of one GPU (``_names.AZURE_PARTIAL_GPU``: NV4as_v4 is
1/8 of an MI25, NV6ads_A10_v5 1/6 of an A10; counted as one GPU they priced it up to 8x too
cheap). Azure reservations have no offering class or upfront choice that changes the price
(monthly or upfront payment cost the same), so reserved offers carry neither. Azure publishes
no spot interruption rate through an API (only the portal's eviction-rate ranges): the cloud
default applies.

Specs come from ``resource_skus.list`` (vCPUs, MemoryGB, GPUs, RdmaEnabled, locations and
``NotAvailableForSubscription`` restrictions, which drop that region's offers) when Azure
credentials and AZURE_SUBSCRIPTION_ID are available; otherwise from the reference catalog's
Azure instance types, with a warning — prices are still refreshed. The GPU model is read from
the size name (``_names.AZURE_SIZE_PATTERNS``): resource SKUs do not name it.
"""

from __future__ import annotations

import logging
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urlencode, urlsplit

from .._clouds import CLOUDS
from .._records import InstanceType, Offer
from .._refresh_checks import region_code, shown_names, spared_by_prune
from ._common import (
    CloudData,
    Progress,
    RefreshError,
    guess_topology,
    run_per_region,
    today,
)
from ._http import get_json
from ._names import AZURE_PARTIAL_GPU, AZURE_RETIRED, azure_accelerator

CLOUD = "azure"
RETAIL_PRICES_URL = "https://prices.azure.com/api/retail/prices"
MANAGEMENT_URL = "https://management.azure.com"
MAX_PRICE_PAGES = 1000  # one VM size: a few pages of 100 prices (every region, pricing model)
TERM_HOURS = {"1 Year": ("reserved_1y", 8760.0), "3 Years": ("reserved_3y", 26280.0)}
SKU_HINT = ("Azure resource SKUs not listed ({why}); instance specs kept from the catalog. To "
            "fix: run `az login` or set AZURE_CLIENT_ID/AZURE_TENANT_ID/AZURE_CLIENT_SECRET "
            "and AZURE_SUBSCRIPTION_ID (prices still refreshed)")


class AzureSource:
    """``fetch`` builds Azure's GPU sizes and offers; see the module docstring."""

    cloud = CLOUD

    def __init__(self, *, reference, credential: Any = None, subscription_id: str | None = None,
                 base_url: str = MANAGEMENT_URL, prices_url: str = RETAIL_PRICES_URL,
                 client_kwargs: dict | None = None, max_workers: int = 8,
                 timeout_s: float = 30.0) -> None:
        self.reference = reference
        self._credential = credential
        self._subscription = subscription_id
        self.base_url, self.prices_url = base_url, prices_url
        self._client_kwargs = client_kwargs or {}
        self.max_workers, self.timeout_s = max_workers, timeout_s

    def fetch(self, regions: Sequence[str] | None, progress: Progress | None = None) -> CloudData:
        warnings: list[str] = []
        specs = self._listed_specs(warnings)
        if specs is None:
            specs = {t.name: _spec_from_reference(t) for t in self.reference.instance_types
                     if t.cloud == CLOUD}
        wanted = set(regions) if regions is not None else None
        names = sorted(n for n in specs
                       if n not in AZURE_PARTIAL_GPU and not AZURE_RETIRED.match(n))
        # the first size alone asks whether the API answers at all (SourceUnavailable at once
        # when it does not); every later request is retried, as one of any size's may need
        first = {names[0]: self._prices(names[0], wanted, first=True)} if names else {}
        fetched = first | run_per_region(CLOUD, names[1:], lambda n: self._prices(n, wanted),
                                         progress, self.max_workers, what="retail prices for")
        prices = {name: got for name, (got, _) in fetched.items()}
        tallies = {name: tally for name, (_, tally) in fetched.items()}
        if names and not sum(t.items for t in tallies.values()):
            # every page empty: an outage or a changed API, not "Azure sells nothing" —
            # which --prune read as every Azure offer gone
            raise RefreshError(f"azure: the Retail Prices API returned no prices for any of the "
                               f"{len(names)} VM sizes asked for; the catalog keeps its azure "
                               "offers. To fix: retry later, or leave azure out with --cloud")
        tainted = _skipped_warning(tallies, warnings)
        as_of = today()
        base = Offer(cloud=CLOUD, instance_type="-", region="-", pricing="on_demand",
                     usd_per_hour=1.0, as_of=as_of, source=source_label(as_of))
        types: list[InstanceType] = []
        offers: list[Offer] = []
        for name in names:
            spec = specs[name]
            record = self._instance_type(name, spec, warnings)
            if record is None or not prices[name]:
                continue
            types.append(record)
            for (region, model), usd in sorted(prices[name].items()):
                if region in spec.get("restricted", ()):
                    continue
                spot = model == "spot"
                offers.append(replace(base, instance_type=name, region=region, pricing=model,
                                      usd_per_hour=round(usd, 6), zone_count=1 if spot else 0,
                                      usd_per_hour_zone_median=round(usd, 6) if spot else None))
        return CloudData(cloud=CLOUD, instance_types=tuple(types),
                         offers=tuple(offers), as_of=as_of,
                         source=source_label(as_of),
                         # --prune: not where an item was skipped (that offer is not gone)
                         regions=() if "" in tainted else tuple(sorted(
                             {o.region for o in offers} - tainted)),
                         covered_pricing=("on_demand", "spot", "reserved_1y", "reserved_3y"),
                         warnings=tuple(warnings))

    # -- resource SKUs (needs credentials) --------------------------------------------------
    def _listed_specs(self, warnings: list[str]) -> dict[str, dict] | None:
        subscription = self._subscription or os.environ.get("AZURE_SUBSCRIPTION_ID")
        if not subscription:
            warnings.append(SKU_HINT.format(why="no AZURE_SUBSCRIPTION_ID"))
            return None
        try:
            from azure.core.exceptions import AzureError
            from azure.mgmt.compute import ComputeManagementClient
        except ImportError:
            warnings.append(SKU_HINT.format(why="azure-mgmt-compute is not installed: "
                                            + CLOUDS["azure"].install_hint))
            return None
        credential = self._credential
        # azure-identity logs each credential it tried (13 lines) at WARNING before raising;
        # the failure arrives as one warning line below, so its log is held back here
        logger = logging.getLogger("azure")
        level = logger.level
        logger.setLevel(logging.CRITICAL)
        try:
            if credential is None:
                from azure.identity import DefaultAzureCredential

                credential = DefaultAzureCredential(exclude_interactive_browser_credential=True)
            client = ComputeManagementClient(credential, subscription, base_url=self.base_url,
                                             **self._client_kwargs)
            # A plain-http base_url (a local endpoint) must be allowed to carry the token.
            extra = {"enforce_https": False} if self.base_url.startswith("http://") else {}
            specs: dict[str, dict] = {}
            for sku in client.resource_skus.list(**extra):
                if sku.resource_type == "virtualMachines":
                    _merge_sku(specs, sku)
            return specs
        except AzureError as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            warnings.append(SKU_HINT.format(why=first[:160]))
            return None
        finally:
            logger.setLevel(level)

    def _instance_type(self, name: str, spec: dict, warnings: list[str]) -> InstanceType | None:
        try:
            ref = self.reference.instance_type_by_key(CLOUD, name)
        except KeyError:
            ref = None
        acc_name = azure_accelerator(name) or (ref.accelerator if ref else None)
        acc = next((a for a in self.reference.accelerators if a.name == acc_name), None)
        if acc is None:
            warnings.append(f"azure {name}: GPU model not known from the size name; skipped")
            return None
        count = spec["gpus"]
        rdma = spec.get("rdma")
        return InstanceType(
            cloud=CLOUD, name=name, accelerator=acc.name, gpu_count=count,
            vcpus=spec.get("vcpus"), memory_gib=spec.get("memory_gib"),
            gpu_memory_gib=ref.gpu_memory_gib if ref else acc.memory_gib,
            intra_node_topology=(ref.intra_node_topology if ref and ref.gpu_count == count
                                 else guess_topology(acc, count)),
            intra_node_gb_per_s_per_gpu=ref.intra_node_gb_per_s_per_gpu if ref else None,
            inter_node_gbps=ref.inter_node_gbps if ref else None,
            fabric="infiniband" if rdma else (ref.fabric if ref else "ethernet"),
            gpudirect_rdma=ref.gpudirect_rdma if ref else ("yes" if rdma else "unverified"),
            network_source=ref.network_source if ref else "resource SKU RdmaEnabled",
            flags=ref.flags if ref else ("network_unverified",),
            notes=ref.notes if ref else "from Azure resource SKUs")

    # -- retail prices (public) -------------------------------------------------------------
    def _prices(self, sku_name: str, wanted, *, first: bool = False
                ) -> tuple[dict[tuple[str, str], float], _Tally]:
        """{(region, pricing model): USD per hour} of one VM size, and the count of its price
        items and of those skipped (``_Tally``)."""
        # the standard library's HTTPS (``_http``), as for AWS's public price files: a base
        # install refreshes Azure's public prices without the [azure] extra
        query = urlencode({"$filter": "serviceName eq 'Virtual Machines' and armSkuName "
                                      f"eq '{sku_name}'"})
        url: str | None = f"{self.prices_url}?{query}"
        out: dict[tuple[str, str], float] = {}
        tally = _Tally()
        seen: set[str] = set()
        while url:
            # a NextPageLink back to a page already read looped for ever (17,734 requests in
            # 20 s); one VM size has a few pages of prices, never thousands
            if url in seen or len(seen) >= MAX_PRICE_PAGES:
                raise RefreshError(f"azure: the Retail Prices API's pages for {sku_name} "
                                   + ("lead back to a page already read" if url in seen else
                                      f"go on past {MAX_PRICE_PAGES:,}")
                                   + ". To fix: retry later, or leave azure out with --cloud")
            page = get_json(url, cloud=CLOUD, timeout_s=self.timeout_s,
                            first=first and not seen)
            seen.add(url)
            if not isinstance(page, dict):
                raise _not_a_page(sku_name, f"a JSON {type(page).__name__}, not an object")
            if "Items" not in page:  # read as "no prices", --prune removed every offer
                keys = ", ".join(sorted(ascii(k)[1:-1][:30] for k in page)[:5]) or "none"
                raise _not_a_page(sku_name, f"no \"Items\"; its keys: {keys}. Has the API's "
                                            "schema changed?")
            items = page["Items"]
            if not isinstance(items, list):
                raise _not_a_page(sku_name, "Items is not a list")
            for item in items:
                tally.items += 1
                try:
                    parsed = parse_item(item)
                except UnusableItem as exc:
                    tally.skip(exc.kind, exc.detail, item)
                    continue
                except (TypeError, ValueError) as exc:
                    # a field of the wrong type (productName null, reservationTerm a list):
                    # counted and said, not a crash
                    tally.skip("unreadable", str(exc), item)
                    continue
                if parsed and (wanted is None or parsed[0] in wanted):
                    key = parsed[:2]
                    out[key] = min(out.get(key, parsed[2]), parsed[2])
            url = self._next(page.get("NextPageLink"), sku_name)
        return out, tally

    def _next(self, link, sku_name: str) -> str | None:
        """The next page's address: a link of the same service, or None at the end."""
        if link is None or link == "":  # the last page: Azure writes null, "" means the same
            return None
        if not isinstance(link, str):
            raise _not_a_page(sku_name, "NextPageLink is not a link")
        ours, theirs = urlsplit(self.prices_url), urlsplit(link)
        if _origin(theirs) != _origin(ours):  # Azure writes https://prices.azure.com:443/…
            raise _not_a_page(sku_name, f"NextPageLink leads away from {ours.netloc}")
        return link


def _origin(url) -> tuple:
    """(scheme, user info, host, port) as a browser compares them: case-blind, the default
    port the same as none."""
    try:
        port = url.port or {"https": 443, "http": 80}.get(url.scheme.lower())
    except ValueError:  # a port that is no number
        port = url.netloc
    return (url.scheme.lower(), url.username, (url.hostname or "").lower(), port)


def _not_a_page(sku_name: str, what: str) -> RefreshError:
    return RefreshError(f"azure: the Retail Prices API's answer for {sku_name} is not a page "
                        f"of prices ({what}). To fix: retry later, or leave azure out with "
                        "--cloud")


class UnusableItem(ValueError):
    """A price item gpuplan would use that it cannot: ``kind`` is "unreadable", "negative",
    "currency" or "region" (each counted and said in one warning), ``detail`` what it held."""

    def __init__(self, kind: str, detail: str) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def parse_item(item: dict) -> tuple[str, str, float] | None:
    """One Retail Prices item → (region, pricing model, USD per hour), or None when it is not
    a price gpuplan uses (Windows, Low Priority, DevTest, no region, a $0 placeholder).

    An item it would use but cannot raises ``UnusableItem`` (or TypeError / ValueError for a
    field of the wrong type): a price that is no JSON number (``true`` read as $1.00/h), not
    finite or negative; a currency other than USD (the API answers in USD unless asked
    otherwise); a region name outside ``region_code``'s pattern."""
    if not isinstance(item, dict):
        raise UnusableItem("unreadable", f"an item that is a JSON {type(item).__name__}")
    if item.get("serviceName") != "Virtual Machines" or "Windows" in item.get("productName", ""):
        return None
    meter = f"{item.get('meterName', '')} {item.get('skuName', '')}"
    kind = item.get("type")
    if "Low Priority" in meter:
        return None
    if kind == "Consumption":
        model, hours = ("spot" if "Spot" in meter else "on_demand"), 1.0
    elif kind == "Reservation" and item.get("reservationTerm") in TERM_HOURS:
        model, hours = TERM_HOURS[item["reservationTerm"]]
    else:
        return None
    currency = item.get("currencyCode")
    if currency != "USD":  # a missing code too: the same item, priced in what?
        raise UnusableItem("currency", currency if isinstance(currency, str) else "none")
    raw = item["unitPrice"] if item.get("unitPrice") is not None else item.get("retailPrice")
    if isinstance(raw, bool) or not isinstance(raw, int | float):  # float(True) is 1.0
        raise UnusableItem("unreadable", f"price {raw!r}"[:40])
    try:
        price = float(raw)
    except OverflowError:  # an integer of 400 digits
        raise UnusableItem("unreadable", "a price too large for a number") from None
    if not math.isfinite(price):
        raise UnusableItem("unreadable", f"price {price}")
    if price < 0:
        raise UnusableItem("negative", f"price {price}")
    name = item.get("armRegionName")
    if not name:
        return None
    region = region_code(name)
    if region is None:
        raise UnusableItem("region", name if isinstance(name, str) else repr(name))
    if price == 0:  # a placeholder, as AWS's $0.00 lines
        return None
    return region, model, price / hours


@dataclass(slots=True)
class _Tally:
    """One VM size's price items: how many came, and those skipped, by why."""

    items: int = 0
    skipped: Counter = field(default_factory=Counter)  # (kind, detail) → items
    # regions an item was skipped in ("" when its region cannot be read): --prune leaves them
    tainted: set[str] = field(default_factory=set)

    def skip(self, kind: str, detail: str, item) -> None:
        self.skipped[(kind, detail)] += 1
        if kind != "region":  # a name that is no region names no offer of the catalog
            name = item.get("armRegionName") if isinstance(item, dict) else None
            self.tainted.add(region_code(name) or "")


SKIP_WORDS = {"unreadable": "could not be read", "negative": "had a negative price",
              "currency": "had a currency other than USD", "region": "had no valid region name"}


def _skipped_warning(tallies: dict[str, _Tally], warnings: list[str]) -> set[str]:
    """Say, in one warning, how many price items were skipped and why; the regions they were
    in (``_Tally.tainted``), which --prune must leave alone."""
    total: Counter = Counter()
    for t in tallies.values():
        total.update(t.skipped)
    if not total:
        return set()
    parts = []
    for kind, words in SKIP_WORDS.items():
        found = {d: n for (k, d), n in total.items() if k == kind}
        if found:
            named = (f" ({shown_names(sorted(found))})" if kind in ("currency", "region")
                     else "")
            parts.append(f"{sum(found.values()):,} {words}{named}")
    sizes = sorted(n for n, t in tallies.items() if t.skipped)
    tainted = set().union(*(t.tainted for t in tallies.values()))
    prune = ("; --prune removes no azure offer this time" if "" in tainted
             else spared_by_prune(tainted))
    count = sum(total.values())
    # first: the refresh quotes a cloud's first warning when it priced nothing
    warnings.insert(0, f"azure: {count:,} price item{'s' if count > 1 else ''} skipped (for "
                    f"{', '.join(sizes[:3])}{'…' if len(sizes) > 3 else ''}): "
                    f"{', '.join(parts)}; those prices keep the catalog's{prune}")
    return tainted


def source_label(as_of) -> str:
    return f"Azure Retail Prices API + resource SKUs (gpuplan catalog refresh {as_of.isoformat()})"


def _spec_from_reference(t: InstanceType) -> dict:
    return {"gpus": t.gpu_count, "vcpus": t.vcpus, "memory_gib": t.memory_gib,
            "rdma": t.fabric == "infiniband" and t.gpudirect_rdma == "yes", "restricted": ()}


def _merge_sku(specs: dict[str, dict], sku) -> None:
    caps = {c.name: c.value for c in (sku.capabilities or [])}
    try:
        gpus = int(float(caps.get("GPUs", "0")))
    except ValueError:
        return
    if gpus < 1:
        return
    spec = specs.setdefault(sku.name, {
        "gpus": gpus, "vcpus": int(float(caps["vCPUs"])) if "vCPUs" in caps else None,
        "memory_gib": float(caps["MemoryGB"]) if "MemoryGB" in caps else None,
        "rdma": caps.get("RdmaEnabled", "False").lower() == "true",
        "locations": set(), "restricted": set()})
    spec["locations"].update(loc.lower() for loc in (sku.locations or []))
    for r in sku.restrictions or []:
        if r.type == "Location" and r.reason_code == "NotAvailableForSubscription":
            # azure-mgmt-compute >= 34 names the field values_property (values is a method)
            values = getattr(r, "values_property", None)
            if values is None or callable(values):
                values = r.get("values") if hasattr(r, "get") else getattr(r, "values", None)
            spec["restricted"].update(v.lower() for v in (values or []))
