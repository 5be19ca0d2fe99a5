"""GCP offers and instance types from the v8 (partial) and v7 tables: v8 where it has the row.

Both tables hold per-zone rows of two kinds: machine rows (a2/a3/a4/g2) priced for the host
only (vCPU + RAM), and accelerator rows (empty InstanceType) priced for N GPUs or a TPU slice.
A GPU machine's price in a zone is its host row + the row for its GPU model and count in the
same zone (reference README). Each part is taken from the newest table that has it, so a price
can combine a v8 host with a v7 GPU; it then carries the older date and names both tables.

Never a host-only price: a machine whose GPU row is missing gets ``price_unknown`` and no
number. N1-attached GPUs (T4, V100, P100, P4) have no N1 host price here: ``n1+<gpu>x<n>``
priced for the GPUs alone, flagged ``host_price_missing``. TPU rows are whole slices.

Kept as in the source and flagged, never silently used (reference README):
- the 700 $/h TPU v6e placeholder → ``placeholder_price``, no number;
- a4-highgpu-8g's host price 0.0 → ``placeholder_price``, no number;
- H100 GPU rows at 4.20076 $/GPU-h (v8) and v7's H100 in us-central1/us-west1 → ``suspect_price``;
- H100-MEGA, H200 and B200 at two very different price levels by region (v8) → ``suspect_price``;
- spot above on-demand → the anomaly rules;
- exact duplicate rows → dropped.
"""

from __future__ import annotations

from .._record import record
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from .._anomalies import TPU_PLACEHOLDER_USD_PER_HOUR
from .._records import InstanceType, Offer
from ._common import REFERENCE_FILES, RefFile, combined, gpuinfo_memory_gib, num, read_rows
from ._specs import make_instance

F8 = REFERENCE_FILES["gcp_accelerator_vms_v8_partial.csv"]
F7 = REFERENCE_FILES["gcp_accelerator_vms.csv"]

GCP_ACCEL = {"A100": "A100-SXM4-40GB", "A100-80GB": "A100-SXM4-80GB", "H100": "H100-SXM5-80GB",
             "H100-MEGA": "H100-SXM5-80GB", "H200": "H200-SXM-141GB", "L4": "L4", "T4": "T4",
             "V100": "V100-SXM2-16GB", "P100": "P100", "P4": "P4", "B200": "B200-SXM-180GB"}
N1_ATTACHED = ("T4", "V100", "P100", "P4")
V7_SUSPECT = {("H100", "us-central1"), ("H100", "us-west1")}  # reference README, GCP notes
V8_SUSPECT_PER_GPU = {"H100": 4.20076}  # "H100 at 4.20076 $/GPU-h in seven regions"
V8_TWO_LEVELS = ("H100-MEGA", "H200", "B200")  # "at two very different price levels"


@record(kw_only=False)
class Part:
    usd: float | None
    spot: float | None
    file: RefFile


@dataclass
class ZonePrice:
    """One machine's price in one zone. ``flags``/``reasons`` apply to both pricing models;
    ``placeholder`` names the columns ("usd", "spot") the source filled with a placeholder."""

    usd: float | None
    spot: float | None
    files: frozenset
    flags: dict = field(default_factory=dict)  # flag → reason
    placeholder: dict = field(default_factory=dict)  # "usd"/"spot" → reason

    def flag(self, flag: str, reason: str) -> None:
        self.flags.setdefault(flag, reason)


@dataclass
class Result:
    instance_types: list[InstanceType] = field(default_factory=list)
    offers: list[Offer] = field(default_factory=list)
    skipped: set[str] = field(default_factory=set)


def machine_gpus(machine: str) -> tuple[str, int] | None:
    """GCP machine type → (GPU price-row name, GPUs), per the reference README's mapping."""
    base = machine.removesuffix("-nolssd")
    size = base.rsplit("-", 1)[1]
    if base.startswith(("a2-highgpu-", "a2-megagpu-")):
        return "A100", int(size.rstrip("g"))
    if base.startswith("a2-ultragpu-"):
        return "A100-80GB", int(size.rstrip("g"))
    if base.startswith("a3-highgpu-") or base == "a3-edgegpu-8g":
        return "H100", int(size.rstrip("g"))
    if base == "a3-megagpu-8g":
        return "H100-MEGA", 8
    if base == "a3-ultragpu-8g":
        return "H200", 8
    if base == "a4-highgpu-8g":
        return "B200", 8
    if base.startswith("g2-standard-"):
        return "L4", {24: 2, 48: 4, 96: 8}.get(int(size), 1)
    return None


def tpu_chips(slice_name: str) -> tuple[str, int]:
    """tpu-v5p-8 → (TPU-v5p, 4): v2/v3/v4/v5p names count TensorCores (2 per chip);
    v5litepod and v6e names count chips (cloud.google.com/tpu/docs/v5e, /v6e)."""
    _, gen, size = slice_name.rsplit("-", 2)
    chips = int(size) if gen in ("v5litepod", "v6e") else max(1, int(size) // 2)
    return {"v5litepod": "TPU-v5e"}.get(gen, f"TPU-{gen}"), chips


def _read(reference: Path, ref: RefFile, hosts, gpus, host_specs, gpu_mem, region_of) -> None:
    seen = set()
    for r in read_rows(reference, ref.name):
        row = tuple(r.values())
        if row in seen:
            continue  # exact duplicate rows in the source
        seen.add(row)
        zone = r["AvailabilityZone"]
        region_of[zone] = r["Region"]
        part = Part(num(r["Price"]), num(r["SpotPrice"]), ref)
        if r["InstanceType"]:
            key: tuple = (r["InstanceType"], zone)
            table = hosts
            host_specs.setdefault(r["InstanceType"], (int(float(r["vCPUs"])),
                                                      num(r["MemoryGiB"])))
        else:
            key = (r["AcceleratorName"], int(r["AcceleratorCount"]), zone)
            table = gpus
            mem = gpuinfo_memory_gib(r["GpuInfo"])
            if mem:
                gpu_mem.setdefault(r["AcceleratorName"], mem)
        previous = table.get(key)
        if previous is not None and previous.file is ref and previous != part:
            raise ValueError(f"gcp {ref.name}: {key} has two different prices")
        table.setdefault(key, part)  # v8 is read first: it wins


def _suspect(zp: ZonePrice, gpu: str, count: int, region: str, part: Part) -> None:
    if part.file is F7 and (gpu, region) in V7_SUSPECT:
        zp.flag("suspect_price", f"{gpu} in {region} is about half of GCP's published A3 "
                                 "price elsewhere in the same table")
    if part.file is F8 and part.usd and gpu in V8_SUSPECT_PER_GPU and \
            round(part.usd / count, 5) == V8_SUSPECT_PER_GPU[gpu]:  # the source has 5 decimals
        zp.flag("suspect_price", f"{gpu} at {V8_SUSPECT_PER_GPU[gpu]} $/GPU-h against 9.80-"
                                 "12.74 in other regions of the same table")
    if part.file is F8 and gpu in V8_TWO_LEVELS:
        zp.flag("suspect_price", f"the source gives {gpu} at two very different price levels "
                                 "by region, so neither can be trusted")


def build(reference: Path, network) -> Result:
    hosts: dict[tuple, Part] = {}
    gpus: dict[tuple, Part] = {}
    host_specs: dict[str, tuple[int, float | None]] = {}
    gpu_mem: dict[str, float] = {}
    region_of: dict[str, str] = {}
    for ref in (F8, F7):
        _read(reference, ref, hosts, gpus, host_specs, gpu_mem, region_of)
    result = Result()
    per_region: dict[tuple[str, str], dict[str, ZonePrice]] = defaultdict(dict)
    for machine, (vcpus, mem) in sorted(host_specs.items()):
        gpu, count = machine_gpus(machine)
        result.instance_types.append(make_instance(
            "gcp", machine, GCP_ACCEL[gpu], count, vcpus, mem, gpu_mem.get(gpu), network,
            notes=f"price = host (vCPU+RAM) + {count}x {gpu} GPU"))
        for (m, zone), host in hosts.items():
            if m != machine:
                continue
            region = region_of[zone]
            part = gpus.get((gpu, count, zone))
            if part is None:
                zp = ZonePrice(None, None, frozenset({host.file}))
                zp.flag("price_unknown", f"no {count}x {gpu} GPU price in {zone}, the host "
                                         "price alone is not the machine's price")
            else:
                zp = _compose(host, part)
                _suspect(zp, gpu, count, region, part)
            per_region[(machine, region)][zone] = zp
    known = {t.name for t in result.instance_types}
    for (gpu, count, zone), part in sorted(gpus.items(), key=lambda kv: kv[0]):
        if gpu.startswith("tpu-"):
            name, (acc, chips) = gpu, tpu_chips(gpu)
        elif gpu in N1_ATTACHED:
            name, acc, chips = f"n1+{gpu.lower()}x{count}", GCP_ACCEL[gpu], count
        else:
            continue  # priced as part of an a2/a3/a4/g2 machine above
        zp = ZonePrice(part.usd, part.spot, frozenset({part.file}))
        for which in ("usd", "spot"):
            if getattr(zp, which) == TPU_PLACEHOLDER_USD_PER_HOUR and gpu.startswith("tpu-"):
                setattr(zp, which, None)
                zp.placeholder[which] = (f"the source's {TPU_PLACEHOLDER_USD_PER_HOUR:g} $/h "
                                         "TPU placeholder (no price found)")
        if gpu in N1_ATTACHED:
            zp.flag("host_price_missing", "GPUs only: the N1 host VM price is not in the "
                                          "reference")
        per_region[(name, region_of[zone])][zone] = zp
        if name not in known:
            known.add(name)
            note = ("TPU slice; price is the whole slice" if gpu.startswith("tpu-") else
                    f"{count}x {gpu} attached to an N1 VM of your choice; N1 host price not in "
                    "the snapshot")
            result.instance_types.append(make_instance(
                "gcp", name, acc, chips, None, None,
                None if gpu.startswith("tpu-") else gpu_mem.get(gpu), network, notes=note))
    for (name, region), zones in sorted(per_region.items()):
        result.offers += _region_offers(name, region, zones)
    return result


def _compose(host: Part, gpu: Part) -> ZonePrice:
    zp = ZonePrice(None, None, frozenset({host.file, gpu.file}))
    why = "the source's host price is 0.0: the machine's price is unknown"
    if host.usd == 0:
        zp.placeholder["usd"] = why
    elif host.usd is not None and gpu.usd is not None:
        zp.usd = host.usd + gpu.usd
    if host.spot == 0:
        zp.placeholder["spot"] = why
    elif host.spot is not None and gpu.spot is not None:
        zp.spot = host.spot + gpu.spot
    return zp


def _region_offers(name: str, region: str, all_zones: dict[str, ZonePrice]) -> list[Offer]:
    dated = {z: combined(zp.files)[0] for z, zp in all_zones.items()}
    out = []
    for pricing, column in (("on_demand", "usd"), ("spot", "spot")):
        # Where zones of one region come from tables of different dates, the newest zones speak
        # for the region (an older zone's price is not a second opinion, just an older one).
        # Only zones with a price speak for the price: a newer zone without one (v8's host row
        # for asia-southeast1-a, no A100 x1 row in either table) knows nothing newer, and it
        # hid the priced zones. Without any price, the newest zones say why.
        pool = [z for z, zp in all_zones.items() if getattr(zp, column) is not None] \
            or list(all_zones)
        newest = max(dated[z] for z in pool)
        zones = {z: all_zones[z] for z in pool if dated[z] == newest}
        as_of, approximate, source = combined(frozenset().union(*(zp.files for zp in
                                                                  zones.values())))
        common = {"cloud": "gcp", "instance_type": name, "region": region, "as_of": as_of,
                  "as_of_approximate": approximate, "source": source}
        priced = {z: getattr(zp, column) for z, zp in zones.items()
                  if getattr(zp, column) is not None}
        shared = {f: r for zp in zones.values() for f, r in zp.flags.items()}
        if not priced:
            flags = {f: r for f, r in shared.items()}
            holders = [zp.placeholder[column] for zp in zones.values()
                       if column in zp.placeholder]
            if holders:
                flags["placeholder_price"] = holders[0]
            elif pricing == "spot" and "price_unknown" not in flags:
                continue  # the source lists no spot price here: no spot offer
            else:
                flags.setdefault("price_unknown", "no price for this machine in the source")
            out.append(_offer(common, pricing, None, flags, zone_count=len(zones)))
            continue
        contributing = [zones[z] for z in priced]
        flags = {f: r for zp in contributing for f, r in zp.flags.items()
                 if f != "price_unknown"}
        if pricing == "on_demand":
            if len(set(priced.values())) > 1:
                raise ValueError(f"gcp {name} {region}: on-demand differs by zone: "
                                 f"{sorted(set(priced.values()))}")
            out.append(_offer(common, pricing, next(iter(priced.values())), flags,
                              zone_count=len(priced)))
        else:
            zone = min(priced, key=lambda z: (priced[z], z))
            out.append(_offer(common, pricing, priced[zone], flags, zone=zone,
                              zone_count=len(priced),
                              usd_per_hour_zone_median=round(
                                  statistics.median(priced.values()), 6)))
    return out


def _offer(common: dict, pricing: str, usd: float | None, flags: dict, **extra) -> Offer:
    return Offer(pricing=pricing, usd_per_hour=None if usd is None else round(usd, 6),
                 flags=tuple(sorted(flags)),
                 flag_reasons="; ".join(f"{f}: {flags[f]}" for f in sorted(flags)),
                 **common, **extra)
