"""The catalog's three record types: what an accelerator is, what an instance holds, what it costs.

Flat, frozen records with the unit in every numeric field's name (gpuhunt's ``CatalogItem`` is
the model). Invariants are checked in ``__post_init__`` so a record that exists is a valid one;
parsing and error reporting for files live in ``_csvio``.

Units:
- ``*_gib``: binary gigabytes (2**30 bytes), as vendors' HBM sizes effectively are.
- ``*_gb_per_s``: decimal gigabytes per second (10**9 bytes/s) — memory and intra-node links.
- ``*_gbps``: decimal gigabits per second — network fabrics, as clouds state them.
- ``*_tflops``: dense (not 2:4 sparse) peak tera floating-point operations per second.
- ``usd_per_hour``: US dollars per instance-hour.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field

CLOUDS: tuple[str, ...] = ("aws", "gcp", "azure")

# One definition of the pricing models; everything else (CLI choices, CSV validation) reads it.
PRICING_MODELS: tuple[str, ...] = (
    "on_demand",
    "spot",
    "reserved_1y",
    "reserved_3y",
    "committed_1y",
    "committed_3y",
    "capacity_block",
)

DTYPES: tuple[str, ...] = ("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8")

# Intra-node topologies, from best to worst for collectives.
TOPOLOGIES: tuple[str, ...] = (
    "nvswitch",  # all-to-all NVLink through NVSwitch: every GPU at full link bandwidth
    "xgmi",  # AMD Infinity Fabric, fully connected
    "ici",  # TPU inter-chip interconnect
    "neuronlink",  # AWS Trainium/Inferentia chip-to-chip
    "nvlink",  # NVLink between pairs or a partial mesh, no switch
    "roce",  # Gaudi: on-chip RoCE ports used for scale-up
    "pcie",  # GPUs talk through the PCIe host bridge
    "single",  # one accelerator: no intra-node communication
)

FABRICS: tuple[str, ...] = (
    "infiniband",
    "efa",
    "roce",
    "gpudirect_tcpx",
    "ethernet",
)

# Offer flags. A flag in PRICE_UNUSABLE_FLAGS means the price must not be used to cost a plan.
OFFER_FLAGS: dict[str, str] = {
    "price_unknown": "no price for this machine in the snapshot (host-only price withheld)",
    "host_price_missing": "price is the accelerators' only; the host VM price is not included",
    "suspect_price": "price disagrees with the cloud's published pricing; verify before use",
    "pre_cut_list_price": "list price from before a known price cut; refresh or override",
    "spot_not_below_on_demand": "spot price is not below on-demand",
    "no_spot_offer": "source listed spot equal to on-demand: no real spot offer",
    "overridden": "price replaced or discounted by your overrides file",
    "gpu_count_corrected": "the source's GPU count was wrong and was corrected",
}
PRICE_UNUSABLE_FLAGS: frozenset[str] = frozenset(
    {"price_unknown", "host_price_missing", "no_spot_offer"})


class RecordError(ValueError):
    """A record violates an invariant; the message says which field and why."""


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise RecordError(message)


@dataclass(frozen=True, slots=True, kw_only=True)
class Accelerator:
    """One accelerator model (per GPU / per chip), with datasheet facts.

    ``None`` means unknown or unsupported; ``unverified`` names fields whose value the sources
    could not confirm (kept visible to users, never silently trusted).
    """

    name: str
    vendor: str
    architecture: str
    form_factor: str
    memory_gib: float | None
    memory_bandwidth_gb_per_s: float | None
    tflops_fp64: float | None = None
    tflops_fp32: float | None = None
    tflops_tf32: float | None = None
    tflops_bf16: float | None = None
    tflops_fp16: float | None = None
    tflops_fp8: float | None = None
    tops_int8: float | None = None
    intra_node_link: str = ""
    intra_node_gb_per_s_per_gpu: float | None = None  # total bidirectional, as vendors state it
    tdp_w: float | None = None
    aliases: tuple[str, ...] = ()
    unverified: tuple[str, ...] = ()
    source: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        _require(bool(self.name.strip()), "accelerator name is empty")
        for fname in (
            "memory_gib",
            "memory_bandwidth_gb_per_s",
            "tflops_fp64",
            "tflops_fp32",
            "tflops_tf32",
            "tflops_bf16",
            "tflops_fp16",
            "tflops_fp8",
            "tops_int8",
            "intra_node_gb_per_s_per_gpu",
            "tdp_w",
        ):
            value = getattr(self, fname)
            _require(
                value is None or value > 0,
                f"accelerator {self.name}: {fname} must be positive or empty, got {value}",
            )

    def peak_tflops(self, dtype: str) -> float | None:
        """Dense datasheet peak for ``dtype`` (one of DTYPES), or None if unknown."""
        _require(dtype in DTYPES, f"unknown dtype {dtype!r}; expected one of {DTYPES}")
        return getattr(self, "tops_int8" if dtype == "int8" else f"tflops_{dtype}")


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceType:
    """One rentable machine shape of one cloud."""

    cloud: str
    name: str
    accelerator: str  # canonical Accelerator.name
    gpu_count: int  # accelerators (GPUs, chips) per instance
    vcpus: int | None
    memory_gib: float | None  # host RAM
    gpu_memory_gib: float | None  # per accelerator, as the cloud reports it
    intra_node_topology: str  # one of TOPOLOGIES
    intra_node_gb_per_s_per_gpu: float | None  # None: use the accelerator's link figure
    inter_node_gbps: float | None  # network usable by collectives, per instance
    fabric: str  # one of FABRICS
    gpudirect_rdma: str = "unverified"  # yes / no / unverified
    network_source: str = ""
    flags: tuple[str, ...] = ()  # e.g. "network_unverified"
    notes: str = ""

    def __post_init__(self) -> None:
        _require(self.cloud in CLOUDS, f"instance {self.name}: unknown cloud {self.cloud!r}")
        _require(bool(self.name.strip()), "instance type name is empty")
        _require(self.gpu_count >= 1, f"instance {self.name}: gpu_count must be >= 1")
        _require(
            self.intra_node_topology in TOPOLOGIES,
            f"instance {self.name}: intra_node_topology {self.intra_node_topology!r} "
            f"is not one of {TOPOLOGIES}",
        )
        _require(
            self.fabric in FABRICS,
            f"instance {self.name}: fabric {self.fabric!r} is not one of {FABRICS}",
        )
        for fname in ("memory_gib", "gpu_memory_gib", "inter_node_gbps",
                      "intra_node_gb_per_s_per_gpu"):
            value = getattr(self, fname)
            _require(value is None or value > 0,
                     f"instance {self.name}: {fname} must be positive or empty, got {value}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.cloud, self.name)


@dataclass(frozen=True, slots=True, kw_only=True)
class Offer:
    """A price for one instance type in one region under one pricing model.

    ``usd_per_hour`` is the price per instance-hour used for planning. For spot, which differs
    by zone, it is the cheapest zone (``zone`` names it) and ``usd_per_hour_zone_median`` keeps
    the median across the region's ``zone_count`` zones.
    """

    cloud: str
    instance_type: str
    region: str
    pricing: str  # one of PRICING_MODELS
    usd_per_hour: float | None  # None only with a PRICE_UNUSABLE flag
    usd_per_hour_zone_median: float | None = None
    zone: str = ""
    zone_count: int = 0
    interruption_rate_per_hour: float | None = None  # spot only; None: the cloud's default
    as_of: _dt.date
    source: str
    flags: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        where = f"offer {self.cloud}/{self.instance_type}/{self.region}/{self.pricing}"
        _require(self.cloud in CLOUDS, f"{where}: unknown cloud {self.cloud!r}")
        _require(self.pricing in PRICING_MODELS,
                 f"{where}: pricing must be one of {PRICING_MODELS}")
        _require(bool(self.region.strip()), f"{where}: region is empty")
        _require(bool(self.source.strip()), f"{where}: source is empty")
        unknown = [f for f in self.flags if f not in OFFER_FLAGS]
        _require(not unknown, f"{where}: unknown flags {unknown}")
        if self.usd_per_hour is None:
            _require(bool(PRICE_UNUSABLE_FLAGS & set(self.flags)),
                     f"{where}: a missing price needs one of the flags "
                     f"{sorted(PRICE_UNUSABLE_FLAGS)}")
        else:
            _require(self.usd_per_hour > 0, f"{where}: usd_per_hour must be > 0, "
                     f"got {self.usd_per_hour}")
        _require(self.interruption_rate_per_hour is None or self.interruption_rate_per_hour >= 0,
                 f"{where}: interruption_rate_per_hour must be >= 0")

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.cloud, self.instance_type, self.region, self.pricing)

    @property
    def price_usable(self) -> bool:
        """Whether this price may be used to cost a plan."""
        return self.usd_per_hour is not None and not (PRICE_UNUSABLE_FLAGS & set(self.flags))
