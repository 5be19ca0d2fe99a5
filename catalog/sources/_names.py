"""Cloud-specific accelerator names → the catalog's canonical names.

The catalog's own aliases (``Catalog.resolve_accelerator``) come first; this table adds what
only one cloud calls a device, and memory-based disambiguation where one name covers two
parts (AWS says "A100" for both the 40 GB and 80 GB SXM4 boards; "V100" for 16 and 32 GB).
A name that still does not resolve becomes a minimal accelerator record marked
"no datasheet", so a new GPU shows up in the catalog instead of being dropped.
"""

from __future__ import annotations

import re

from .._errors import UnknownNameError
from .._records import Accelerator

# (cloud, name as the cloud spells it, lowercase) → canonical name or, for names that need
# memory to decide, a tuple of (max GiB, canonical) checked in order.
_BY_MEMORY = tuple[tuple[float, str], ...]
CLOUD_NAMES: dict[tuple[str, str], str | _BY_MEMORY] = {
    # AWS DescribeInstanceTypes GpuInfo.Gpus[].Name / NeuronInfo / InferenceAcceleratorInfo
    ("aws", "a100"): ((48, "A100-SXM4-40GB"), (1e9, "A100-SXM4-80GB")),
    ("aws", "v100"): ((20, "V100-SXM2-16GB"), (1e9, "V100-SXM2-32GB")),
    ("aws", "h100"): "H100-SXM5-80GB",
    ("aws", "h200"): "H200-SXM-141GB",
    ("aws", "b200"): "B200-SXM-180GB",
    ("aws", "gaudi hl-205"): "Gaudi-HL-205",
    ("aws", "trainium"): "Trainium1",
    ("aws", "inferentia"): "Inferentia1",
    ("aws", "qualcomm ai100"): "Qualcomm-AI100",
    # GCP acceleratorTypes names (compute.googleapis.com), see cloud.google.com/compute/docs/gpus
    ("gcp", "nvidia-tesla-a100"): "A100-SXM4-40GB",
    ("gcp", "nvidia-a100-80gb"): "A100-SXM4-80GB",
    ("gcp", "nvidia-h100-80gb"): "H100-SXM5-80GB",
    ("gcp", "nvidia-h100-mega-80gb"): "H100-SXM5-80GB",
    ("gcp", "nvidia-h200-141gb"): "H200-SXM-141GB",
    ("gcp", "nvidia-b200"): "B200-SXM-180GB",
    ("gcp", "nvidia-gb200"): "GB200-186GB",
    ("gcp", "nvidia-l4"): "L4",
    ("gcp", "nvidia-tesla-t4"): "T4",
    ("gcp", "nvidia-tesla-v100"): "V100-SXM2-16GB",
    ("gcp", "nvidia-tesla-p100"): "P100",
    ("gcp", "nvidia-tesla-p4"): "P4",
    ("gcp", "nvidia-tesla-k80"): "K80",
}

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

# Azure sizes retired by Azure (learn.microsoft.com/azure/virtual-machines/sizes/retirement/
# retired-sizes-list): the K80 NC and M60 NV series and their _Promo twins, retired in 2023.
AZURE_RETIRED = re.compile(r"^Standard_N[CV]\d+r?(_Promo)?$")

# GCP accelerator types that are not GPUs one can rent for training (virtual workstations).
GCP_SKIP_SUFFIXES = ("-vws",)


def canonical_name(resolve, cloud: str, raw: str, memory_gib: float | None = None) -> str | None:
    """The canonical name for ``raw`` on ``cloud``, or None when nothing matches.

    ``resolve`` is ``Catalog.resolve_accelerator`` (raises UnknownNameError when unknown).
    """
    entry = CLOUD_NAMES.get((cloud, raw.strip().lower()))
    if isinstance(entry, tuple):
        if memory_gib is None:
            return entry[0][1]
        return next(name for limit, name in entry if memory_gib <= limit)
    if isinstance(entry, str):
        return entry
    try:
        return resolve(raw)
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
        name = canonical_name(self._reference.resolve_accelerator, self.cloud, raw, memory_gib)
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
