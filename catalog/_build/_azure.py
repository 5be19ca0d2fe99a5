"""Azure offers and instance types from the v6 table (early 2024), minus retired sizes.

Corrections, each from the reference README or Azure's own documentation:
- the 14 K80/M60 sizes of the NC and NV series (and their _Promo twins) were retired in 2023
  (learn.microsoft.com/azure/virtual-machines/sizes/retirement/retired-sizes-list): dropped;
- NV4as_v4, NV8as_v4 and NV16as_v4 hold 1/8, 1/4 and 1/2 of one Radeon Instinct MI25 (the
  NVv4 size page's "Accelerators"), not the one GPU the table lists: dropped, as every size
  of ``_names.AZURE_PARTIAL_GPU`` and AWS's fractional types are (the table prices them
  linearly, so counted whole they made the MI25's GPU-hour 8x too cheap);
- NCv3 sizes carry V100 *PCIe* cards (no NVLink), not SXM2 boards;
- NC6s_v3, NC12s_v3 and NC24s_v3 were retired on 2025-09-30 (MicrosoftDocs/azure-docs
  articles/virtual-machines/ncv3-nc6s-nc12s-nc24s-retirement.md): kept, flagged ``retired``;
- Standard_ND96isr_H100_v5 lists 12 GPUs (the VM has 8) and a spot price equal to on-demand
  (no spot offer): count corrected, spot flagged ``no_spot_offer``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .._anomalies import add_flag
from .._records import InstanceType, Offer
from ..sources._names import AZURE_PARTIAL_GPU, AZURE_RETIRED
from ._common import REFERENCE_FILES, num, read_rows
from ._specs import make_instance

FILE = REFERENCE_FILES["azure_accelerator_vms.csv"]
RETIRED_2023 = AZURE_RETIRED  # NC6..NC24r (K80), NV6..NV24 (M60), and their _Promo twins
RETIRED_2025 = {"Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3"}
AZURE_ACCEL = {  # by instance type first (the same name means different SKUs), then by name
    "Standard_NC24ads_A100_v4": "A100-PCIe-80GB", "Standard_NC48ads_A100_v4": "A100-PCIe-80GB",
    "Standard_NC96ads_A100_v4": "A100-PCIe-80GB", "Standard_ND96amsr_A100_v4": "A100-SXM4-80GB",
    "Standard_NC40ads_H100_v5": "H100-NVL-94GB", "Standard_NC80adis_H100_v5": "H100-NVL-94GB",
    "V100": "V100-SXM2-16GB", "V100-32GB": "V100-SXM2-32GB", "A100": "A100-SXM4-40GB",
    "H100": "H100-SXM5-80GB", "T4": "T4", "A10": "A10", "M60": "M60",
    "Radeon MI25": "Radeon-Instinct-MI25",
}
NCV3 = re.compile(r"^Standard_NC\d+r?s_v3$")


@dataclass
class Result:
    instance_types: list[InstanceType] = field(default_factory=list)
    offers: list[Offer] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)


def accelerator(name: str, source_name: str) -> str:
    if NCV3.match(name):
        return "V100-PCIe-16GB"
    return AZURE_ACCEL.get(name) or AZURE_ACCEL[source_name]


def build(reference: Path, network) -> Result:
    result = Result()
    seen: set[str] = set()
    rows = sorted(read_rows(reference, FILE.name), key=lambda r: (r["InstanceType"], r["Region"]))
    common = {"cloud": "azure", "as_of": FILE.as_of, "as_of_approximate": FILE.approximate,
              "source": FILE.source}
    for r in rows:
        name = r["InstanceType"]
        if RETIRED_2023.match(name):
            result.skipped.add(f"{name} (retired 2023)")
            continue
        if name in AZURE_PARTIAL_GPU:
            result.skipped.add(f"{name} (fractional GPU: {AZURE_PARTIAL_GPU[name]})")
            continue
        gpus, inst_flags, notes = int(r["AcceleratorCount"]), (), ""
        if name == "Standard_ND96isr_H100_v5" and gpus == 12:
            gpus, inst_flags = 8, ("gpu_count_corrected",)
            notes = "source lists 12 GPUs; the VM has 8 (Azure ND H100 v5 docs)"
        if name not in seen:
            seen.add(name)
            result.instance_types.append(make_instance(
                "azure", name, accelerator(name, r["AcceleratorName"]), gpus,
                int(float(r["vCPUs"])), num(r["MemoryGiB"]), None, network, flags=inst_flags,
                notes=notes))
        od, sp = num(r["Price"]), num(r["SpotPrice"])
        offers = [Offer(instance_type=name, region=r["Region"], pricing="on_demand",
                        usd_per_hour=od, flags=() if od else ("price_unknown",), **common)]
        if sp is not None:
            spot = Offer(instance_type=name, region=r["Region"], pricing="spot",
                         usd_per_hour=sp, zone_count=1, usd_per_hour_zone_median=sp, **common)
            if name == "Standard_ND96isr_H100_v5" and sp == od:
                spot = add_flag(spot, "no_spot_offer", "the source lists spot equal to "
                                                       "on-demand: Azure sells no spot here")
            offers.append(spot)
        if name in RETIRED_2025:
            offers = [add_flag(o, "retired", "Azure retired this size on 2025-09-30")
                      for o in offers]
        result.offers += offers
    return result
