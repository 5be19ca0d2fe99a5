"""Cloud-specific accelerator names → the catalog's canonical names.

What a cloud's API calls a device is a column of the accelerator table
(``Accelerator.cloud_names``, "aws:h100"); the catalog's own aliases
(``Catalog.resolve_accelerator``) come next. One name on two parts (AWS says "A100" for both
the 40 GB and 80 GB SXM4 boards; "V100" for 16 and 32 GB) is told apart by the memory the cloud
reports. A name that still does not resolve becomes a minimal accelerator record marked
"no datasheet", so a new GPU shows up in the catalog instead of being dropped. Instance
families and size names (which name no device) map to accelerators here.
"""

from __future__ import annotations

import re

from .._errors import UnknownNameError
from .._records import PCIE_SOURCE, Accelerator, pcie_link_gb_per_s

# AWS instance family → accelerator. The bulk Price List gives a GPU *count* and memory but never
# the model, and the files built from it disagree on names (trn1 listed as "AWS Inferentia",
# g5g as "ARM Mali-G78MP12"), so the family decides (AWS accelerated-computing instance pages,
# aws.amazon.com/ec2/instance-types/#Accelerated_Computing).
AWS_FAMILY_ACCELERATOR: dict[str, str] = {
    "p2": "K80", "p3": "V100-SXM2-16GB", "p3dn": "V100-SXM2-32GB", "p4d": "A100-SXM4-40GB",
    "p4de": "A100-SXM4-80GB", "p5": "H100-SXM5-80GB", "p5e": "H200-SXM-141GB",
    "p5en": "H200-SXM-141GB", "p6-b200": "B200-SXM-180GB", "p6-b300": "B300-SXM",
    "p6e-gb200": "GB200-186GB", "g2": "GRID-K520", "g3": "M60", "g3s": "M60",
    "g4dn": "T4", "g4ad": "Radeon-Pro-V520", "g5": "A10G", "g5g": "T4g", "g6": "L4",
    "gr6": "L4", "g6f": "L4", "gr6f": "L4", "g6e": "L40S", "g7e": "RTX-PRO-6000-Blackwell",
    "inf1": "Inferentia1", "inf2": "Inferentia2", "trn1": "Trainium1", "trn1n": "Trainium1",
    "trn2": "Trainium2",
    "dl1": "Gaudi-HL-205", "dl2q": "Qualcomm-AI100", "f1": "FPGA-VU9P", "f2": "FPGA-VU47P",
}


def aws_family(instance_type: str) -> str:
    return instance_type.split(".", 1)[0]


# Azure resource SKUs do not name the GPU model: the size name does. First match wins.
AZURE_SIZE_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"_GB200_", "GB200-186GB"),
    (r"_H200_", "H200-SXM-141GB"),
    (r"_MI300X_", "MI300X"),
    (r"^Standard_ND\d+is?r_H100_", "H100-SXM5-80GB"),
    (r"^Standard_NC\d+ad[i]?s_H100_", "H100-NVL-94GB"),
    (r"^Standard_ND\d+amsr_A100_v4", "A100-SXM4-80GB"),
    (r"^Standard_ND\d+asr_v4", "A100-SXM4-40GB"),
    (r"^Standard_NC\d+ads_A100_v4", "A100-PCIe-80GB"),
    (r"_A10_v5", "A10"),
    (r"_T4_v3", "T4"),
    (r"^Standard_ND40rs_v2", "V100-SXM2-32GB"),
    (r"^Standard_NC\d+r?s_v3", "V100-PCIe-16GB"),  # NCv3: V100 PCIe cards, no NVLink
    (r"^Standard_NV\d+as_v4", "Radeon-Instinct-MI25"),
    (r"^Standard_NV\d+s_v3", "M60"),
    (r"^Standard_NV\d+(_Promo)?$", "M60"),
    (r"^Standard_NC\d+r?(_Promo)?$", "K80"),
    (r"^Standard_NC\d+s_v2", "P100"),
)

# Azure sizes that hold part of one GPU, with the part (each series' size page on
# learn.microsoft.com/azure/virtual-machines/sizes/gpu-accelerated/, "Accelerators": NVv4
# 1/8-1/2 of an MI25, NVadsA10_v5 1/6-1/2 of an A10, NVads_V710_v5 1/6-1/2 of a V710,
# NGads_V620_v1 1/4-1/2 of a V620). The price lists and resource SKUs count each as one GPU
# and price them linearly, so 1/8 of an MI25 read as a whole one made its GPU-hour 8x too
# cheap; like AWS's fractional types (g6f), they are left out: a part of a GPU is no
# training target. The same series' whole-GPU sizes (NV32as_v4, NV36ads_A10_v5, ...) stay.
AZURE_PARTIAL_GPU: dict[str, str] = {
    "Standard_NV4as_v4": "1/8", "Standard_NV8as_v4": "1/4", "Standard_NV16as_v4": "1/2",
    "Standard_NV6ads_A10_v5": "1/6", "Standard_NV12ads_A10_v5": "1/3",
    "Standard_NV18ads_A10_v5": "1/2",
    "Standard_NV4ads_V710_v5": "1/6", "Standard_NV8ads_V710_v5": "1/3",
    "Standard_NV12ads_V710_v5": "1/2",
    "Standard_NG8ads_V620_v1": "1/4", "Standard_NG16ads_V620_v1": "1/2",
}

# Azure sizes retired by Azure (learn.microsoft.com/azure/virtual-machines/sizes/retirement/
# retired-sizes-list): the K80 NC and M60 NV series and their _Promo twins, retired in 2023.
AZURE_RETIRED = re.compile(r"^Standard_N[CV]\d+r?(_Promo)?$")

# GCP accelerator types that are not GPUs one can rent for training (virtual workstations).
GCP_SKIP_SUFFIXES = ("-vws",)


def canonical_name(reference, cloud: str, raw: str,
                   memory_gib: float | None = None) -> str | None:
    """The canonical name for ``raw`` on ``cloud`` in the ``reference`` catalog, or None when
    nothing matches. Several devices of one cloud name: the smallest whose memory holds what
    the cloud reports (within MEMORY_TOLERANCE), else the largest."""
    key = f"{cloud}:{raw.strip().lower()}"
    named = sorted((a for a in reference.accelerators if key in a.cloud_names),
                   key=lambda a: (a.memory_gib or 0.0, a.name))
    if named:
        if memory_gib is None:
            return named[0].name
        return next((a.name for a in named
                     if (a.memory_gib or 0.0) * (1 + MEMORY_TOLERANCE) >= memory_gib),
                    named[-1].name)
    try:
        return reference.resolve_accelerator(raw, strict=True)
    except UnknownNameError:
        return None


def azure_accelerator(size_name: str) -> str | None:
    for pattern, name in AZURE_SIZE_PATTERNS:
        if re.search(pattern, size_name):
            return name
    return None


def minimal_accelerator(cloud: str, raw: str, vendor: str, memory_gib: float | None,
                        source: str) -> Accelerator:
    """A placeholder record for a device the catalog has no datasheet row for."""
    name = re.sub(r"[^A-Za-z0-9]+", "-", raw.strip()).strip("-")
    return Accelerator(
        name=name, vendor=vendor or "unknown", architecture="", form_factor="",
        memory_gib=memory_gib, memory_bandwidth_gb_per_s=None, aliases=(raw,) if raw != name
        else (), unverified=("no datasheet",), source=f"{cloud} API ({source})",
        notes="added by `gpuplan catalog refresh`; performance peaks unknown: not usable for "
              "estimates",
        pcie_gb_per_s_per_gpu=pcie_link_gb_per_s(""), planning_source=PCIE_SOURCE,
    )


MEMORY_TOLERANCE = 0.08  # clouds report MiB of usable memory: H200 141 GB → 140.4 GiB (AWS)


def memory_agrees(spec_gib: float | None, reported_gib: float | None) -> bool:
    if spec_gib is None or reported_gib is None:
        return True
    return abs(reported_gib - spec_gib) <= MEMORY_TOLERANCE * spec_gib


class AcceleratorMap:
    """Resolves one cloud's device names against a reference catalog, collecting the
    minimal records it had to invent for devices the catalog does not know."""

    def __init__(self, cloud: str, reference) -> None:
        self.cloud = cloud
        self._reference = reference
        self._by_name = {a.name: a for a in reference.accelerators}
        self._new: dict[str, Accelerator] = {}

    def lookup(self, raw: str, *, vendor: str = "", memory_gib: float | None = None,
               source: str = "") -> Accelerator:
        name = canonical_name(self._reference, self.cloud, raw, memory_gib)
        if name is not None and name in self._by_name:
            return self._by_name[name]
        record = minimal_accelerator(self.cloud, raw, vendor, memory_gib, source)
        existing = self._by_name.get(record.name) or self._new.get(record.name)
        if existing is not None:
            return existing
        self._new[record.name] = record
        return record

    def get(self, name: str) -> Accelerator | None:
        return self._by_name.get(name) or self._new.get(name)

    @property
    def new(self) -> tuple[Accelerator, ...]:
        return tuple(self._new[n] for n in sorted(self._new))
