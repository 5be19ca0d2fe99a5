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
import math
from collections.abc import Iterable
from dataclasses import field

from ._clouds import CLOUDS
from ._record import record

# One definition of the pricing models; everything else (CLI choices, CSV validation) reads it.
# A commitment's term is part of its price: a 1-year reservation bills all 8,760 hours whether
# the capacity is used or not. AWS and GCP both count a year as 365 days (8,760 h), three years
# as 26,280 h (AWS reserved-instance pricing page: "1 year = 8,760 hours"; the reference
# README). Capacity Blocks are bought in whole days (docs.aws.amazon.com/AWSEC2/latest/
# UserGuide/ec2-capacity-blocks.html: 1-14 days in 1-day steps): the shortest term is 24 h.
PRICING_TERM_HOURS: dict[str, float | None] = {
    "on_demand": None,
    "spot": None,
    "reserved_1y": 8760.0,
    "reserved_3y": 26280.0,
    "committed_1y": 8760.0,
    "committed_3y": 26280.0,
    "capacity_block": 24.0,
}
PRICING_MODELS: tuple[str, ...] = tuple(PRICING_TERM_HOURS)


def canonical_pricing(name: str) -> str:
    """A pricing model as people write it ('On-Demand', 'SPOT', 'reserved 1y') in the
    catalog's spelling ('on_demand', 'spot', 'reserved_1y'); whether it exists is the
    caller's check (an unknown name keeps its close-match message)."""
    return "_".join(name.strip().lower().replace("-", " ").split()) or name.strip()

RESERVED_MODELS: tuple[str, ...] = ("reserved_1y", "reserved_3y")
OFFERING_CLASSES: tuple[str, ...] = ("standard", "convertible")  # AWS RI offering classes
UPFRONT_OPTIONS: tuple[str, ...] = ("none", "partial", "all")  # No/Partial/All Upfront

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

# Offer flags: why a price must not be trusted. Every flag except those in INFORMATIONAL_FLAGS
# makes ``Offer.price_usable`` False, so the planner never costs a plan with it unless asked.
OFFER_FLAGS: dict[str, str] = {
    "price_unknown": "no price for this machine in the snapshot (host-only price withheld)",
    "host_price_missing": "price is the accelerators' only; the host VM price is not included",
    "suspect_price": "price disagrees with the cloud's published pricing; verify before use",
    "pre_cut_list_price": "list price from before a known price cut; refresh or override",
    "spot_not_below_on_demand": "spot price is not below on-demand",
    "spot_discount_below_documented": "spot is a larger fraction of on-demand than the cloud's "
                                      "documented spot discounts allow",
    "price_outlier": "per-accelerator price far from the same instance type's price in the "
                     "cloud's other regions (robust z-score beyond 3.5)",
    "price_above_ceiling": "per-GPU price above any plausible list price",
    "placeholder_price": "the source's placeholder, not a price (700 $/slice-hour TPU, host "
                         "price 0, $0)",
    "no_spot_offer": "source listed spot equal to on-demand: no real spot offer",
    "expired": "a dated rate whose validity period has ended",
    "retired": "the cloud has retired this instance type",
    "overridden": "price replaced or discounted by your overrides file",
    "gpu_count_corrected": "the source's GPU count was wrong and was corrected",
}
INFORMATIONAL_FLAGS: frozenset[str] = frozenset({"overridden", "gpu_count_corrected"})
PRICE_UNUSABLE_FLAGS: frozenset[str] = frozenset(OFFER_FLAGS) - INFORMATIONAL_FLAGS


def split_flags(flags: Iterable[str]) -> tuple[list[str], list[str]]:
    """(the flags that keep a price out of plans, those that only inform:
    ``INFORMATIONAL_FLAGS``) among ``flags``, each distinct and sorted: how `gpuplan offers`
    and the app's Catalog page explain the flags of the offers they show."""
    used = sorted(set(flags))
    return ([f for f in used if f not in INFORMATIONAL_FLAGS],
            [f for f in used if f in INFORMATIONAL_FLAGS])

# A price of None needs one of these: they say why there is no number.
NO_PRICE_FLAGS: frozenset[str] = frozenset(
    {"price_unknown", "host_price_missing", "no_spot_offer", "placeholder_price"})


# The host PCIe link of a x16 slot, both directions (PCI-SIG: 8 GT/s per lane for Gen3, 16 GT/s
# for Gen4, 128b/130b encoding): Gen3 x16 ≈ 32 GB/s, Gen4 x16 ≈ 64 GB/s. A device whose
# datasheet link does not say Gen3 is taken as Gen4: the Gen5 hosts of H100 PCIe/NVL and
# Blackwell reach 128 GB/s, which the planner does not assume until a probe measures the node.
PCIE_GEN3_X16_GB_PER_S, PCIE_GEN4_X16_GB_PER_S = 32.0, 64.0
PCIE_SOURCE = ("PCIe: x16 both directions, Gen3 32 GB/s else Gen4 64 GB/s (PCI-SIG); Gen5 "
               "hosts are not assumed faster until a probe measures them")


def pcie_link_gb_per_s(intra_node_link: str) -> float:
    """The host PCIe link (GB/s, both directions) of a device whose datasheet link reads
    ``intra_node_link`` (the rule above)."""
    return PCIE_GEN3_X16_GB_PER_S if "Gen3" in intra_node_link else PCIE_GEN4_X16_GB_PER_S


# Bounds that no real record reaches, so that a unit error or a placeholder in a catalog file is
# refused when it is read (the anomaly rules flag subtler cases when a catalog is built):
# instance prices from $0.000001/h (list prices start near $0.05/h; an API's test double
# answers $0.00001) to $100,000/h (the dearest is ~142 $/h); memory per accelerator up to
# 2,048 GiB (the largest today is 288 GB); any other rate or size (TFLOP/s, GB/s, W, GiB of
# host RAM) up to 10^7.
MIN_OFFER_USD_PER_HOUR = 1e-6
MAX_OFFER_USD_PER_HOUR = 1e5
MAX_GPU_MEMORY_GIB = 2048
MAX_SPEC_VALUE = 1e7
MAX_ZONES = 1000
MAX_GPUS_PER_INSTANCE = 65_536  # GPU instances hold up to 16; a TPU v5p pod slice 8,960 chips


def _short(value) -> str:
    """A value as a message quotes it: a 5,000-digit number is not echoed whole."""
    text = repr(value)
    return text if len(text) <= 24 else f"{text[:20]}… ({len(text)} characters)"


class RecordError(ValueError):
    """A record violates an invariant; the message says which field and why."""


def _require(ok: bool, message) -> None:
    """RecordError(``message``) unless ``ok``; a callable message is built only then (a
    catalog load checks every field of ~15,000 records)."""
    if not ok:
        raise RecordError(message() if callable(message) else message)


@record
class Accelerator:
    """One accelerator model (per GPU / per chip), with datasheet facts and planning facts.

    ``None`` means unknown or unsupported; ``unverified`` names fields whose value the sources
    could not confirm (kept visible to users, never silently trusted).

    Planning facts (every one sourced in ``planning_source``; empty when unknown):
    ``sm_count`` streaming multiprocessors (NVIDIA) or compute units (AMD), over which GEMM
    tiles run in waves; ``pcie_gb_per_s_per_gpu`` the host PCIe link, both directions, used
    when GPUs talk through the host bridge; ``reference_*`` the vendor's usual node (GPUs per
    node, topology, inter-node line rate and fabric, and where that comes from) for an
    accelerator given without an instance type; ``peak_stand_in_tflops`` a 16-bit peak to use
    when the datasheet publishes none and ``achievable_matmul_tflops`` a published measured
    16-bit matmul rate; ``skypilot_name`` / ``dstack_name`` what the orchestrators call it;
    ``cloud_names`` what the clouds' APIs call it (``cloud:name``); ``inference_only`` a
    device its vendor's software does not train on (AWS Inferentia, Qualcomm Cloud AI 100).
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
    sm_count: int | None = None
    pcie_gb_per_s_per_gpu: float | None = None
    reference_gpus_per_node: int | None = None
    reference_topology: str = ""  # one of TOPOLOGIES, or "" when no reference node
    reference_inter_node_gbps: int | None = None  # whole Gb/s, as network ports are rated
    reference_fabric: str = ""  # one of FABRICS, or ""
    reference_node_source: str = ""
    peak_stand_in_tflops: float | None = None
    achievable_matmul_tflops: float | None = None
    skypilot_name: str = ""
    dstack_name: str = ""
    cloud_names: tuple[str, ...] = ()  # "cloud:name as the cloud's API spells it"
    inference_only: bool = False
    planning_source: str = ""

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
            "sm_count",
            "pcie_gb_per_s_per_gpu",
            "reference_gpus_per_node",
            "reference_inter_node_gbps",
            "peak_stand_in_tflops",
            "achievable_matmul_tflops",
        ):
            value = getattr(self, fname)
            top = MAX_GPU_MEMORY_GIB if fname == "memory_gib" else MAX_SPEC_VALUE
            if not (value is None or 0 < value <= top):  # the message only when needed
                raise RecordError(f"accelerator {self.name}: {fname} must be positive (at most "
                                  f"{top:,g}) or empty, got {_short(value)}")
        _require(self.reference_topology in ("", *TOPOLOGIES),
                 f"accelerator {self.name}: reference_topology {self.reference_topology!r} is "
                 f"not one of {TOPOLOGIES}")
        _require(self.reference_fabric in ("", *FABRICS),
                 f"accelerator {self.name}: reference_fabric {self.reference_fabric!r} is not "
                 f"one of {FABRICS}")
        _require(all(c.partition(":")[0] in CLOUDS and c.partition(":")[2]
                     for c in self.cloud_names),
                 f"accelerator {self.name}: cloud_names must read cloud:name, got "
                 f"{self.cloud_names}")

    def peak_tflops(self, dtype: str) -> float | None:
        """Dense datasheet peak for ``dtype`` (one of DTYPES), or None if unknown."""
        _require(dtype in DTYPES, f"unknown dtype {dtype!r}; expected one of {DTYPES}")
        return getattr(self, "tops_int8" if dtype == "int8" else f"tflops_{dtype}")


@record
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
        _require(1 <= self.gpu_count <= MAX_GPUS_PER_INSTANCE,
                 lambda: f"instance {self.name}: gpu_count must be from 1 to "
                 f"{MAX_GPUS_PER_INSTANCE}, got {_short(self.gpu_count)}")
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
            top = MAX_GPU_MEMORY_GIB if fname == "gpu_memory_gib" else MAX_SPEC_VALUE
            if not (value is None or 0 < value <= top):
                raise RecordError(f"instance {self.name}: {fname} must be positive (at most "
                                  f"{top:,g}) or empty, got {_short(value)}")

    @property
    def key(self) -> tuple[str, str]:
        return (self.cloud, self.name)


@record
class Offer:
    """A price for one instance type in one region under one pricing model.

    ``usd_per_hour`` is the price per instance-hour used for planning. For spot, which differs
    by zone, it is the cheapest zone (``zone`` names it when known); ``usd_per_hour_zone_median``,
    ``_mean`` and ``_max`` describe the spread over the region's ``zone_count`` zones where the
    source gives them.

    Commitments (``reserved_*``, ``committed_*``, ``capacity_block``) carry ``term_hours``, the
    hours the commitment bills whatever is used (filled in from the pricing model), and their
    ``usd_per_hour`` is the *amortised* effective rate: (upfront fee + hourly fee × term) /
    term. AWS reservations also name their ``offering_class`` (standard / convertible) and
    ``upfront`` payment option (none / partial / all); each combination is an offer of its own.

    ``as_of`` is the date the price was observed, with ``as_of_approximate`` True when the
    source is undated and the date was inferred; ``source`` names where it came from.
    ``interruption_rate_per_hour`` (spot only) is the expected interruptions per
    instance-hour when the cloud publishes a figure, derived from ``interruption_bucket``
    (the AWS Spot Instance Advisor's monthly bucket, e.g. "<5%"); None means "use the cloud's
    default" (``CLOUDS[cloud].spot_interruptions_per_hour``). ``flags`` say why a price must
    not be trusted (``OFFER_FLAGS``), and ``flag_reasons`` give the specifics.
    """

    cloud: str
    instance_type: str
    region: str
    pricing: str  # one of PRICING_MODELS
    usd_per_hour: float | None  # None only with a NO_PRICE flag
    usd_per_hour_zone_median: float | None = None
    usd_per_hour_zone_mean: float | None = None
    usd_per_hour_zone_max: float | None = None
    zone: str = ""
    zone_count: int = 0
    term_hours: float | None = None  # filled from PRICING_TERM_HOURS when not given
    offering_class: str = ""  # reserved_* on AWS: one of OFFERING_CLASSES
    upfront: str = ""  # reserved_* on AWS: one of UPFRONT_OPTIONS
    interruption_rate_per_hour: float | None = None  # spot only; None: the cloud's default
    interruption_bucket: str = ""  # spot only: the cloud's published bucket, as published
    as_of: _dt.date
    as_of_approximate: bool = False
    source: str
    flags: tuple[str, ...] = field(default=())
    flag_reasons: str = ""  # "flag: why; flag: why" for the flags above

    def __post_init__(self) -> None:
        where = f"offer {self.cloud}/{self.instance_type}/{self.region}/{self.pricing}"
        _require(self.cloud in CLOUDS, f"{where}: unknown cloud {self.cloud!r}")
        _require(self.pricing in PRICING_MODELS,
                 f"{where}: pricing must be one of {PRICING_MODELS}")
        _require(bool(self.instance_type.strip()), f"{where}: instance type is empty")
        _require(bool(self.region.strip()), f"{where}: region is empty")
        _require(bool(self.source.strip()), f"{where}: source is empty")
        unknown = [f for f in self.flags if f not in OFFER_FLAGS]
        _require(not unknown, f"{where}: unknown flags {unknown}")
        if self.usd_per_hour is None:
            _require(bool(NO_PRICE_FLAGS & set(self.flags)),
                     f"{where}: a missing price needs one of the flags {sorted(NO_PRICE_FLAGS)}")
        else:
            _require(MIN_OFFER_USD_PER_HOUR <= self.usd_per_hour <= MAX_OFFER_USD_PER_HOUR,
                     lambda: f"{where}: usd_per_hour must be from {MIN_OFFER_USD_PER_HOUR:g} to "
                     f"{MAX_OFFER_USD_PER_HOUR:,g}, got {_short(self.usd_per_hour)}")
        for name in ("usd_per_hour_zone_median", "usd_per_hour_zone_mean",
                     "usd_per_hour_zone_max"):
            value = getattr(self, name)
            if not (value is None or MIN_OFFER_USD_PER_HOUR <= value <= MAX_OFFER_USD_PER_HOUR):
                raise RecordError(f"{where}: {name} must be from {MIN_OFFER_USD_PER_HOUR:g} to "
                                  f"{MAX_OFFER_USD_PER_HOUR:,g} or empty, got {_short(value)}")
        _require(0 <= self.zone_count <= MAX_ZONES,
                 lambda: f"{where}: zone_count must be from 0 to {MAX_ZONES}, got "
                 f"{_short(self.zone_count)}")
        term = PRICING_TERM_HOURS[self.pricing]
        if self.term_hours is None:
            object.__setattr__(self, "term_hours", term)
        elif term is None:
            raise RecordError(f"{where}: term_hours is only for commitments, got "
                              f"{self.term_hours}")
        else:
            _require(math.isfinite(self.term_hours) and self.term_hours > 0,
                     f"{where}: term_hours must be > 0, got {self.term_hours}")
        reserved = self.pricing in RESERVED_MODELS
        _require(self.offering_class in (*OFFERING_CLASSES, "") and
                 (reserved or not self.offering_class),
                 f"{where}: offering_class {self.offering_class!r} must be one of "
                 f"{OFFERING_CLASSES} and only on reserved_* offers")
        _require(self.upfront in (*UPFRONT_OPTIONS, "") and (reserved or not self.upfront),
                 f"{where}: upfront {self.upfront!r} must be one of {UPFRONT_OPTIONS} and "
                 "only on reserved_* offers")
        spot = self.pricing == "spot"
        rate = self.interruption_rate_per_hour
        _require(rate is None or (spot and math.isfinite(rate) and rate >= 0),
                 f"{where}: interruption_rate_per_hour must be >= 0 and only on spot offers")
        _require(spot or not self.interruption_bucket,
                 f"{where}: interruption_bucket is only for spot offers")

    @property
    def option(self) -> str:
        """What tells apart several offers of one pricing model: 'standard/none' for an AWS
        standard No Upfront reservation; '' for every other offer."""
        if not (self.offering_class or self.upfront):
            return ""
        return f"{self.offering_class or '-'}/{self.upfront or '-'}"

    @property
    def key(self) -> tuple[str, ...]:
        """(cloud, instance type, region, pricing model), unique in a catalog — with the
        ``option`` appended for the offers that have one (AWS reservations: several offers
        share a pricing model), so every other offer keeps its four-part key."""
        base = (self.cloud, self.instance_type, self.region, self.pricing)
        option = self.option
        return (*base, option) if option else base

    @property
    def price_usable(self) -> bool:
        """Whether this price may be used to cost a plan: known, and no flag against it."""
        return self.usd_per_hour is not None and not (PRICE_UNUSABLE_FLAGS & set(self.flags))

    @property
    def unusable_flags(self) -> tuple[str, ...]:
        return tuple(f for f in self.flags if f in PRICE_UNUSABLE_FLAGS)
