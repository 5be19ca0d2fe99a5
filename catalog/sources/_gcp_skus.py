"""GCP Cloud Billing catalog SKUs → unit prices, for VMs, GPUs and TPU slices.

A SKU (``services/<id>/skus``, REST or SDK) has a ``description``, a ``category``
(``resourceFamily``, ``resourceGroup``, ``usageType``), ``serviceRegions`` and
``pricingInfo[0].pricingExpression.tieredRates[].unitPrice`` ({units, nanos}). Rules:

- The pricing model is ``usageType``: OnDemand → on_demand, Preemptible → spot, Commit1Yr /
  Commit3Yr → committed_1y / committed_3y — **except** that a description saying "Preemptible"
  is spot whatever its usageType: Google tags the spot SKUs of A4 GPU slices ("Spot Preemptible
  A4 Nvidia B200 (1 gpu slice) running in Americas") and of TPUs OnDemand (gpuhunt
  providers/gcp.py and skypilot-catalog fetch_gcp.py both read spot from the description).
- The description's core — without the usage prefix ("Spot Preemptible ", "Preemptible ",
  "Commitment v1: ") and the location suffix (" running in …", " attached to …", " in … for
  1 Year") — is matched exactly against the names below.
- GPU names as Google writes them (public SKU lists quoted in gpuhunt, skypilot-catalog and
  price-feed projects): "Nvidia H100 80GB GPU", "Nvidia H100 80GB Mega GPU" / "… Plus GPU",
  "H200 141GB GPU" (no "Nvidia"), "A4 Nvidia B200 (1 gpu slice)" — the A4 slice is the whole
  VM's price per GPU (vCPUs and memory included: A4 has no separate core or RAM SKU).
- TPUs (resourceGroup "TPU"; v2/v3/v4 in the Cloud TPU service E000-3F24-B8AA, v5e/v5p/v6e in
  Compute Engine's 6F81-5844-456A): the version is the token after "Tpu" ("Tpu-v4",
  "TpuV5p"), "Pod" marks a pod price. Units, as both projects above read them: v2/v3/v4 SKUs
  price one 8-core device (4 chips), v5e/v5p/v6e SKUs one chip.
- Prices are USD (the API's default currency). A SKU priced in another currency or below zero
  is left out with a warning, and what it would price is unpriced as for a missing SKU; two
  SKUs with the same description core, pricing model and region must agree on the price
  (docs/refresh.md: duplicate records fail the refresh — taking the first priced an A3 at
  20.23 $/h instead of 43.07).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ._common import RefreshError

COMPUTE_SERVICE = "services/6F81-5844-456A"
TPU_SERVICE = "services/E000-3F24-B8AA"
USAGE = {"OnDemand": "on_demand", "Preemptible": "spot", "Commit1Yr": "committed_1y",
         "Commit3Yr": "committed_3y"}
# Machine-type prefix → the series label in SKU descriptions ("A3Plus Instance Ram ...").
SERIES = {"a2-": "A2", "a3-highgpu": "A3", "a3-edgegpu": "A3", "a3-megagpu": "A3Plus",
          "a3-ultragpu": "A3Ultra", "a4-highgpu": "A4", "a4x-": "A4X", "g2-": "G2", "g4-": "G4"}
# Series whose GPU SKU is the whole VM's price per GPU (no core or RAM SKU).
BUNDLED_SERIES = {"A4", "A4X"}
# Accelerator type → the SKU descriptions (core part) that price one such GPU.
GPU_SKUS = {
    "nvidia-tesla-a100": ("Nvidia Tesla A100 GPU",),
    "nvidia-a100-80gb": ("Nvidia Tesla A100 80GB GPU", "Nvidia A100 80GB GPU"),
    "nvidia-h100-80gb": ("Nvidia H100 80GB GPU",),
    "nvidia-h100-mega-80gb": ("Nvidia H100 80GB Mega GPU", "Nvidia H100 Mega 80GB GPU",
                              "Nvidia H100 80GB Plus GPU"),
    "nvidia-h200-141gb": ("H200 141GB GPU", "Nvidia H200 141GB GPU"),
    "nvidia-b200": ("A4 Nvidia B200 (1 gpu slice)", "Nvidia B200 (1 gpu slice)"),
    "nvidia-gb200": ("A4X Nvidia GB200 (1 gpu slice)", "Nvidia GB200 GPU"),
    "nvidia-l4": ("Nvidia L4 GPU",),
    "nvidia-tesla-t4": ("Nvidia Tesla T4 GPU",),
    "nvidia-tesla-v100": ("Nvidia Tesla V100 GPU",),
    "nvidia-tesla-p100": ("Nvidia Tesla P100 GPU",),
    "nvidia-tesla-p4": ("Nvidia Tesla P4 GPU",),
}
# The reference catalog's GPU machine types → their accelerator type, for the API-key mode
# (no Compute API to ask): cloud.google.com/compute/docs/gpus.
MACHINE_ACCELERATOR = {"a2-highgpu": "nvidia-tesla-a100", "a2-megagpu": "nvidia-tesla-a100",
                       "a2-ultragpu": "nvidia-a100-80gb", "a3-highgpu": "nvidia-h100-80gb",
                       "a3-edgegpu": "nvidia-h100-80gb", "a3-megagpu": "nvidia-h100-mega-80gb",
                       "a3-ultragpu": "nvidia-h200-141gb", "a4-highgpu": "nvidia-b200",
                       "a4x-highgpu": "nvidia-gb200", "g2-standard": "nvidia-l4"}
TPU_CHIPS_PER_SKU_UNIT = {"v2": 4, "v3": 4, "v4": 4, "v5litepod": 1, "v5p": 1, "v6e": 1}

_PREFIX = re.compile(r"^(?:Spot Preemptible |Preemptible |Commitment v\d+: |Commitment: )")
_SUFFIX = re.compile(r"\s+(?:attached to|running in|in)\s.*$")
_TPU = re.compile(r"\bTpu[-\w]*", re.IGNORECASE)
_TPU_VERSION = re.compile(r"v\d+[a-z]*")


def core_description(description: str) -> str:
    return _SUFFIX.sub("", _PREFIX.sub("", description.strip()))


def sku_dict(sku: Any) -> dict:
    """A SKU as the REST API's JSON (camelCase), from either REST JSON or an SDK message."""
    if isinstance(sku, dict):
        return sku
    cat = sku.category
    rates = [{"unitPrice": {"units": int(r.unit_price.units), "nanos": int(r.unit_price.nanos),
                            "currencyCode": r.unit_price.currency_code}}
             for info in sku.pricing_info for r in info.pricing_expression.tiered_rates]
    return {"skuId": sku.sku_id, "description": sku.description,
            "serviceRegions": list(sku.service_regions),
            "category": {"resourceFamily": cat.resource_family,
                         "resourceGroup": cat.resource_group, "usageType": cat.usage_type},
            "pricingInfo": [{"pricingExpression": {"tieredRates": rates}}]}


def unit_price(sku: dict) -> tuple[float | None, str | None]:
    """(USD per unit, None) from the first tier above 0 (a first tier of 0 is a free
    allowance); (None, why) when the SKU's only prices are in another currency or negative;
    (None, None) when it has no price (all tiers 0)."""
    why = None
    for info in sku.get("pricingInfo") or []:
        for rate in (info.get("pricingExpression") or {}).get("tieredRates") or []:
            price = rate.get("unitPrice") or {}
            currency = price.get("currencyCode") or "USD"  # the API's default; the SDK's ""
            if currency != "USD":  # EUR prices were once stored as dollars
                why = why or f"price in {currency}, not USD"
                continue
            value = int(price.get("units") or 0) + int(price.get("nanos") or 0) / 1e9
            if value > 0:
                return value, None
            if value < 0:
                why = "negative price"
    return None, why


def pricing_model(sku: dict) -> str | None:
    model = USAGE.get((sku.get("category") or {}).get("usageType", ""))
    if model is not None and "Preemptible" in sku.get("description", ""):
        return "spot"
    return model


def tpu_version(description: str) -> str | None:
    match = _TPU.search(description)
    if not match:
        return None
    version = _TPU_VERSION.search(match.group().lower())
    if not version:
        return None
    return "v5litepod" if version.group() == "v5e" else version.group()


class SkuPrices:
    """Unit prices by (description core, pricing model, region), and TPU unit prices by
    (version, pod?, pricing model, region); what was left out, and why."""

    def __init__(self) -> None:
        self.compute: dict[tuple[str, str, str], float] = {}
        self.tpu: dict[tuple[str, bool, str, str], float] = {}
        self.listed: dict[str, list[int]] = {}  # service → [SKUs, SKUs priced from]
        # (description core, model, region) → (price, SKU id): a second SKU must agree
        self._priced_by: dict[tuple[str, str, str], tuple[float, str]] = {}
        self._left_out: dict[str, list[str]] = {}  # why → the SKUs left out for it
        self._why: dict[tuple[str, str, str], str] = {}  # a key with no price → why

    def add(self, skus: Iterable[Any], service: str = "") -> int:
        """Adds the SKUs' prices (of ``service``, for messages); returns how many SKUs
        there were."""
        tally = self.listed.setdefault(service, [0, 0])
        before = tally[0]
        for raw in skus:
            tally[0] += 1
            sku = sku_dict(raw)
            cat = sku.get("category") or {}
            model = pricing_model(sku)
            if model is None or cat.get("resourceFamily") != "Compute":
                continue
            description = sku.get("description", "")
            group = cat.get("resourceGroup")
            version = tpu_version(description) if group == "TPU" else None
            if version is None and group not in ("CPU", "RAM", "GPU", "N1Standard"):
                continue
            core, regions = core_description(description), sku.get("serviceRegions") or []
            price, why = unit_price(sku)
            if why is not None:
                self._leave_out(sku, why, core, model, regions)
                continue
            if price is None:
                continue
            tally[1] += 1
            for region in regions:
                self._check_duplicate(sku, (core, model, region), price)
                if version is not None:
                    self.tpu.setdefault((version, "Pod" in description, model, region), price)
                else:
                    self.compute.setdefault((core, model, region), price)
        return tally[0] - before

    def _check_duplicate(self, sku: dict, key: tuple[str, str, str], price: float) -> None:
        first = self._priced_by.setdefault(key, (price, _sku_id(sku)))
        if first[0] != price:
            core, model, region = key
            raise RefreshError(f"gcp: two SKUs price {core!r} ({model}, {region}) differently: "
                               f"{first[1]} at {first[0]} and {_sku_id(sku)} at {price} "
                               "USD per unit. To fix: retry later (the catalog may be "
                               "mid-update), or leave gcp out with --cloud")

    def _leave_out(self, sku: dict, why: str, core: str, model: str, regions) -> None:
        self._left_out.setdefault(why, []).append(_sku_id(sku))
        for region in regions:
            self._why.setdefault((core, model, region), why)

    def why_missing(self, keys: Iterable[str], model: str, region: str) -> str:
        """Why none of ``keys`` has a price: a SKU left out, or none found."""
        return next((f"left out ({self._why[(k, model, region)]})" for k in keys
                     if (k, model, region) in self._why), "not found")

    def warnings(self) -> list[str]:
        out = []
        for why, skus in self._left_out.items():
            out.append(f"gcp: {len(skus):,} SKU{'s' if len(skus) > 1 else ''} left out "
                       f"({why}): {', '.join(skus[:5])}{' …' if len(skus) > 5 else ''}; "
                       "what they price has no price from this refresh")
        return out

    def check_usable(self) -> None:
        """RefreshError when a service's SKUs gave no price at all (all in EUR, say): every
        offer they price would be unpriced, and --prune would remove them."""
        for service, (listed, priced) in self.listed.items():
            if listed and not priced:
                left = "; ".join(f"{len(s):,} left out ({why})"
                                 for why, s in self._left_out.items())
                raise RefreshError(f"gcp: none of the billing API's {listed:,} SKUs for "
                                   f"{service} has a price gpuplan can use"
                                   f"{f': {left}' if left else ''}. To fix: retry later, "
                                   "or leave gcp out with --cloud")

    def price(self, keys: Iterable[str], model: str, region: str) -> float | None:
        return next((self.compute[(k, model, region)] for k in keys
                     if (k, model, region) in self.compute), None)

    def tpu_slice(self, version: str, cores_or_chips: int, chips: int, model: str,
                  region: str) -> float | None:
        """USD per hour for a whole slice of ``chips`` chips (see the unit rules above)."""
        pod = version == "v4" or (version in ("v2", "v3") and cores_or_chips > 8)
        unit = self.tpu.get((version, pod, model, region))
        per_unit = TPU_CHIPS_PER_SKU_UNIT.get(version)
        if unit is None or per_unit is None:
            return None
        return unit * chips / per_unit

    def regions(self) -> set[str]:
        return {k[2] for k in self.compute} | {k[3] for k in self.tpu}


def _sku_id(sku: dict) -> str:
    """The SKU's id ("H100-0001-0001"), for messages; its description when it has none."""
    name = sku.get("skuId") or str(sku.get("name") or "").rpartition("/")[2]
    return str(name or repr(sku.get("description", "?")))


def host_keys(series: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return ((f"{series} Instance Core", f"{series} Cpu", f"{series} Core"),
            (f"{series} Instance Ram", f"{series} Ram"))


def series_of(machine: str) -> str | None:
    return next((label for prefix, label in SERIES.items() if machine.startswith(prefix)),
                None)
