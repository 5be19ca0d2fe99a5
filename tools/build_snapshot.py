#!/usr/bin/env python3
"""Build the embedded catalog snapshot (catalog/data/) from the shared reference tables.

    python tools/build_snapshot.py [--reference ../shared/reference] [--out catalog/data]

Deterministic and re-runnable: the same reference gives byte-identical files (rows sorted,
no timestamps). The product never reads the reference at run time; this script copies what it
needs into the project's own format. Every judgement the reference README asks for is made
here, in one place, and recorded on the rows as flags:

- AWS rows are per zone: on-demand is one price per region; spot is kept as the cheapest zone
  and the median across zones. p4de rows appear twice per zone (two GpuInfo names) — merged.
- GCP machine rows are host-only (vCPU + RAM): a GPU machine's price is host + its GPUs in the
  same zone. a3-ultragpu (H200) has no GPU price in the snapshot → ``price_unknown``; the host
  price is never shown as the machine's price. N1-attached GPUs (T4, V100, P100, P4) have no N1
  host price here → ``host_price_missing``. TPU slices are whole-slice prices.
- Suspect or stale prices are kept and flagged (GCP H100 in us-central1/us-west1; AWS P4/P5
  on-demand before the June 2025 cuts; spot ≥ on-demand; Azure ND H100 v5's 12 GPUs and
  spot = on-demand).
"""

from __future__ import annotations

import argparse
import ast
import csv
import datetime as dt
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog._csvio import (  # noqa: E402
    ACCELERATORS,
    INSTANCE_TYPES,
    OFFERS,
    write_table,
    write_text_atomic,
)
from catalog._records import Accelerator, InstanceType, Offer  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Dating the snapshot (reference README, "How old they are"). Approximate by nature: say so.
AS_OF = {
    "aws": (dt.date(2025, 3, 1), "early 2025: has p5en (GA Dec 2024), lacks p6-b200 (May 2025), "
            "p5 at the pre-June-2025 price"),
    "gcp": (dt.date(2025, 1, 1), "late 2024 / early 2025: a3-ultragpu machines but no H200 "
            "GPU prices, no A4"),
    "azure": (dt.date(2024, 3, 1), "early 2024: ND H100 v5 but not ND H200 v5 or ND MI300X v5"),
}
SOURCES = {
    "aws": "skypilot-catalog catalogs/v7/aws/vms.csv@27f67dd4e1bc (public list prices)",
    "gcp": "skypilot-catalog catalogs/v7/gcp/vms.csv@6f65ab58724c (public list prices)",
    "azure": "skypilot-catalog catalogs/v6/azure/vms.csv@098741e70562 (public list prices)",
}
CAPACITY_BLOCK_SOURCE = ("AWS EC2 Capacity Blocks for ML pricing page, effective rates for the "
                         "period ending 2025-01-01 (via the shared reference README)")
CAPACITY_BLOCKS = [  # (instance, region, usd/h)
    ("p5.48xlarge", "us-east-1", 39.33), ("p5.48xlarge", "us-east-2", 39.33),
    ("p5e.48xlarge", "us-east-2", 43.26),
    ("p4d.24xlarge", "us-east-2", 14.75), ("p4d.24xlarge", "us-west-2", 14.75),
    ("trn1.32xlarge", "ap-southeast-4", 15.49),
]

# ---------------------------------------------------------------------------------------------
# Accelerators. Reference rows get canonical names and aliases; accelerators that clouds sell
# but the reference has no datasheet row for are kept with what the cloud itself reports.
SPEC_NAMES = {  # reference name → (canonical name, aliases)
    "V100-SXM2-16GB": ("V100-SXM2-16GB", ("V100", "V100-16GB", "Tesla V100")),
    "V100-SXM2-32GB": ("V100-SXM2-32GB", ("V100-32GB",)),
    "T4": ("T4", ("Tesla T4",)),
    "A10": ("A10", ("NVIDIA A10",)),
    "A10G (AWS g5)": ("A10G", ("NVIDIA A10G",)),
    "L4": ("L4", ("NVIDIA L4",)),
    "L40S": ("L40S", ("NVIDIA L40S",)),
    "A100-SXM4-40GB": ("A100-SXM4-40GB", ("A100", "A100-40GB", "NVIDIA A100-SXM4-40GB")),
    "A100-SXM4-80GB": ("A100-SXM4-80GB", ("A100-80GB", "NVIDIA A100-SXM4-80GB")),
    "A100-PCIe-80GB": ("A100-PCIe-80GB", ("NVIDIA A100 80GB PCIe",)),
    "H100-SXM5-80GB": ("H100-SXM5-80GB", ("H100", "H100-80GB", "H100-SXM", "H100-MEGA",
                                          "NVIDIA H100 80GB HBM3")),
    "H100-PCIe-80GB": ("H100-PCIe-80GB", ("H100-PCIe", "NVIDIA H100 PCIe")),
    "H100-NVL-94GB": ("H100-NVL-94GB", ("H100-NVL", "NVIDIA H100 NVL")),
    "H800-SXM5-80GB": ("H800-SXM5-80GB", ("H800", "NVIDIA H800")),
    "H200-SXM-141GB": ("H200-SXM-141GB", ("H200", "H200-141GB", "NVIDIA H200")),
    "B200 (HGX, per GPU)": ("B200-SXM-180GB", ("B200", "NVIDIA B200")),
    "GB200 (per B200 GPU, NVL72)": ("GB200-186GB", ("GB200",)),
    "MI250X (per OAM package; 2 GCDs)": ("MI250X", ("AMD Instinct MI250X",)),
    "MI300X": ("MI300X", ("AMD Instinct MI300X",)),
    "AWS Trainium (Trn1, per chip)": ("Trainium1", ("Trainium", "trn1")),
    "AWS Trainium2 (per chip)": ("Trainium2", ("trn2",)),
    "AWS Inferentia2 (per chip)": ("Inferentia2", ("inf2",)),
    "Habana Gaudi HL-205 (AWS dl1)": ("Gaudi-HL-205", ("Gaudi", "Gaudi HL-205", "Gaudi1")),
    "Habana Gaudi2 (HL-225H)": ("Gaudi2", ("HL-225H",)),
    "Google TPU v4 (per chip)": ("TPU-v4", ("tpu-v4", "TPUv4")),
    "Google TPU v5e (per chip)": ("TPU-v5e", ("tpu-v5litepod", "v5e", "TPUv5e")),
    "Google TPU v5p (per chip)": ("TPU-v5p", ("tpu-v5p", "v5p", "TPUv5p")),
    "Google TPU v6e Trillium (per chip)": ("TPU-v6e", ("tpu-v6e", "Trillium", "v6e")),
}

# Fields the reference (SPECS.md, "Values I could not confirm") marks unverified.
UNVERIFIED = {
    "A10G": ("all compute peaks", "tdp_w"),
    "H100-NVL-94GB": ("tflops_fp64", "tflops_fp32", "tflops_tf32", "tflops_fp8", "tops_int8",
                      "tdp_w", "intra_node_gb_per_s_per_gpu"),
    "H800-SXM5-80GB": ("tflops_fp64", "tflops_fp32", "tflops_tf32", "tops_int8", "tdp_w",
                       "tflops_bf16", "memory_bandwidth_gb_per_s"),
    "H200-SXM-141GB": ("tflops_fp64",),
    "V100-SXM2-16GB": ("memory_bandwidth_gb_per_s", "tdp_w"),
    "V100-SXM2-32GB": ("memory_bandwidth_gb_per_s", "tdp_w"),
    "T4": ("memory_bandwidth_gb_per_s", "tdp_w"),
    "A10": ("tdp_w",),
    "A100-PCIe-80GB": ("tdp_w",),
    "MI250X": ("tdp_w", "intra_node_gb_per_s_per_gpu", "tflops_fp64", "tflops_fp32"),
    "Gaudi-HL-205": ("all compute peaks", "memory_bandwidth_gb_per_s", "tdp_w"),
    "Gaudi2": ("tflops_bf16", "tflops_fp8", "intra_node_gb_per_s_per_gpu", "tdp_w"),
    "Trainium1": ("tdp_w",), "Trainium2": ("tdp_w",), "Inferentia2": ("tdp_w",),
    "TPU-v4": ("tdp_w", "intra_node_gb_per_s_per_gpu"), "TPU-v5e": ("tdp_w",),
    "TPU-v5p": ("tdp_w",), "TPU-v6e": ("tdp_w",),
    "B200-SXM-180GB": ("tflops_tf32",), "GB200-186GB": ("memory_gib", "tflops_fp32"),
}

# Sold in the reference's price tables but without a datasheet row: memory per device from the
# clouds' own GpuInfo where given; everything else unknown (None), never guessed.
EXTRA_ACCELERATORS = [
    # name, vendor, architecture, aliases, memory_gib (cloud-reported, per device)
    ("K80", "NVIDIA", "Kepler (GK210)", ("Tesla K80",), None),
    ("M60", "NVIDIA", "Maxwell (GM204)", ("Tesla M60",), None),
    ("P100", "NVIDIA", "Pascal (GP100)", ("Tesla P100",), 16.0),
    ("P4", "NVIDIA", "Pascal (GP104)", ("Tesla P4",), 8.0),
    ("T4g", "NVIDIA", "Turing (TU104, AWS Graviton host)", (), 16.0),
    ("Radeon-Pro-V520", "AMD", "RDNA (Navi 12)", ("Radeon Pro V520",), 8.0),
    ("Radeon-Instinct-MI25", "AMD", "Vega 10", ("Radeon MI25", "MI25"), None),
    ("Inferentia1", "AWS", "NeuronCore-v1", ("Inferentia", "inf1"), None),
    ("Qualcomm-AI100", "Qualcomm", "Cloud AI 100", ("Qualcomm AI100", "AI100"), None),
    ("FPGA-VU9P", "AMD Xilinx", "Virtex UltraScale+ VU9P", ("Virtex UltraScale (VU9P)",), None),
    ("FPGA-VU47P", "AMD Xilinx", "Virtex UltraScale+ VU47P", ("Virtex UltraScale+ (VU47P)",),
     None),
    ("TPU-v2", "Google", "TPU v2", ("tpu-v2",), None),
    ("TPU-v3", "Google", "TPU v3", ("tpu-v3",), None),
]
EXTRA_SOURCE = ("no datasheet row in the shared reference; memory per device as the cloud's "
                "DescribeInstanceTypes / machine-type GpuInfo reports it")

# Cloud accelerator names → canonical, where the plain alias table is not enough.
AWS_ACCEL = {"V100": "V100-SXM2-16GB", "V100-32GB": "V100-SXM2-32GB", "A100": "A100-SXM4-40GB",
             "A100-80GB": "A100-SXM4-80GB", "H100": "H100-SXM5-80GB", "H200": "H200-SXM-141GB",
             "A10G": "A10G", "L4": "L4", "L40S": "L40S", "T4": "T4", "T4g": "T4g",
             "Trainium": "Trainium1", "Inferentia": "Inferentia1", "Inferentia2": "Inferentia2",
             "Gaudi HL-205": "Gaudi-HL-205", "Qualcomm AI100": "Qualcomm-AI100",
             "Radeon Pro V520": "Radeon-Pro-V520", "Virtex UltraScale (VU9P)": "FPGA-VU9P",
             "Virtex UltraScale+ (VU47P)": "FPGA-VU47P"}
AZURE_ACCEL = {  # by instance type first (the same name means different SKUs), then by name
    "Standard_NC24ads_A100_v4": "A100-PCIe-80GB", "Standard_NC48ads_A100_v4": "A100-PCIe-80GB",
    "Standard_NC96ads_A100_v4": "A100-PCIe-80GB", "Standard_ND96amsr_A100_v4": "A100-SXM4-80GB",
    "Standard_NC40ads_H100_v5": "H100-NVL-94GB", "Standard_NC80adis_H100_v5": "H100-NVL-94GB",
    "V100": "V100-SXM2-16GB", "V100-32GB": "V100-SXM2-32GB", "A100": "A100-SXM4-40GB",
    "H100": "H100-SXM5-80GB", "T4": "T4", "A10": "A10", "K80": "K80", "M60": "M60",
    "Radeon MI25": "Radeon-Instinct-MI25",
}
GCP_ACCEL = {"A100": "A100-SXM4-40GB", "A100-80GB": "A100-SXM4-80GB", "H100": "H100-SXM5-80GB",
             "H100-MEGA": "H100-SXM5-80GB", "H200": "H200-SXM-141GB", "L4": "L4", "T4": "T4",
             "V100": "V100-SXM2-16GB", "P100": "P100", "P4": "P4"}

# GCP machine type → (GPU price-row name, GPUs). The reference README gives the mapping.
def gcp_machine_gpus(machine: str) -> tuple[str, int] | None:
    base = machine.removesuffix("-nolssd")
    if base.startswith("a2-highgpu-") or base.startswith("a2-megagpu-"):
        return "A100", int(base.rsplit("-", 1)[1].rstrip("g"))
    if base.startswith("a2-ultragpu-"):
        return "A100-80GB", int(base.rsplit("-", 1)[1].rstrip("g"))
    if base.startswith("a3-highgpu-") or base == "a3-edgegpu-8g":
        return "H100", int(base.rsplit("-", 1)[1].rstrip("g"))
    if base == "a3-megagpu-8g":
        return "H100-MEGA", 8
    if base == "a3-ultragpu-8g":
        return "H200", 8
    if base.startswith("g2-standard-"):
        size = int(base.rsplit("-", 1)[1])
        return "L4", {24: 2, 48: 4, 96: 8}.get(size, 1)
    return None


# ---------------------------------------------------------------------------------------------
# Networking. instance_network.csv covers the main training shapes; the rest get a topology
# derived from GPU count and accelerator, and an unknown (empty) inter-node bandwidth, which the
# planner reads as "single node only".
PCIE_ONLY = {"T4", "T4g", "A10", "A10G", "L4", "L40S", "K80", "M60", "P100", "P4",
             "Radeon-Pro-V520", "Radeon-Instinct-MI25", "Qualcomm-AI100", "FPGA-VU9P",
             "FPGA-VU47P", "A100-PCIe-80GB", "H100-PCIe-80GB", "H100-NVL-94GB"}
EXTRA_NETWORK = {  # (cloud, type) → (topology, inter_node_gbps, fabric, note)
    ("gcp", "a2-megagpu-16g"): ("nvswitch", 100.0, "ethernet", "A2 series total (GCP docs)"),
    ("gcp", "a3-edgegpu-8g"): ("nvswitch", 800.0, "gpudirect_tcpx",
                               "reference conflict: 600 (overview table) vs up to 800 (newer)"),
}


def fabric_of(text: str) -> str:
    if "unverified" in text and "EFA" in text and "+ EFA" not in text:
        return "ethernet"
    for needle, fabric in (("InfiniBand", "infiniband"), ("EFA", "efa"), ("TCPX", "gpudirect_tcpx"),
                           ("RoCE", "roce"), ("MRDMA", "roce")):
        if needle in text:
            return fabric
    return "ethernet"


def topology_of(text: str) -> str:
    for needle, topo in (("single", "single"), ("NVSwitch", "nvswitch"), ("NVLink 5", "nvswitch"),
                         ("NVLink 900", "nvswitch"), ("NeuronLink", "neuronlink"),
                         ("ICI", "ici"), ("Infinity Fabric", "xgmi"), ("NVLink pairs", "nvlink"),
                         ("RoCE", "roce"), ("PCIe", "pcie"), ("unverified", "pcie")):
        if needle in text:
            return topo
    raise ValueError(f"cannot classify topology {text!r}")


def derived_topology(accelerator: str, gpus: int, cloud: str, name: str) -> str:
    if gpus == 1:
        return "single"
    if accelerator in PCIE_ONLY or (cloud == "azure" and accelerator.startswith("V100")
                                    and "ND40" not in name):
        return "pcie"  # Azure NCv3 carries V100 PCIe cards
    if accelerator.startswith(("Trainium", "Inferentia")):
        return "neuronlink"
    if accelerator.startswith("TPU"):
        return "ici"
    if accelerator.startswith("Gaudi"):
        return "roce"
    if accelerator.startswith("V100"):
        return "nvlink"
    return "nvswitch"  # A100/H100/H200 HGX boards, including GCP's 1/2/4-GPU slices of them


# ---------------------------------------------------------------------------------------------
def num(text: str) -> float | None:
    text = (text or "").strip()
    return float(text) if text else None


def median(values: list[float]) -> float:
    return round(statistics.median(values), 6)


def gpu_mem_gib(gpuinfo: str) -> float | None:
    if not gpuinfo or not gpuinfo.startswith("{"):
        return None
    info = ast.literal_eval(gpuinfo)
    mib = info["Gpus"][0].get("MemoryInfo", {}).get("SizeInMiB")
    return round(mib / 1024, 3) if mib else None


def build_accelerators(ref: Path) -> tuple[list[Accelerator], dict[str, str]]:
    rows = list(csv.DictReader(open(ref / "accelerator_specs.csv", encoding="utf-8")))
    out, ref_to_canon = [], {}
    for r in rows:
        canon, aliases = SPEC_NAMES[r["name"]]
        ref_to_canon[r["name"]] = canon
        out.append(Accelerator(
            name=canon, vendor=r["vendor"], architecture=r["architecture"],
            form_factor=r["form_factor"], memory_gib=num(r["memory_gib"]),
            memory_bandwidth_gb_per_s=num(r["memory_bandwidth_gbps"]),
            tflops_fp64=num(r["fp64_tflops"]), tflops_fp32=num(r["fp32_tflops"]),
            tflops_tf32=num(r["tf32_tflops"]), tflops_bf16=num(r["bf16_tflops"]),
            tflops_fp16=num(r["fp16_tflops"]), tflops_fp8=num(r["fp8_tflops"]),
            tops_int8=num(r["int8_tops"]), intra_node_link=r["intra_node_link"],
            intra_node_gb_per_s_per_gpu=num(r["intra_node_bandwidth_gbps_per_gpu"]),
            tdp_w=num(r["tdp_w"]), aliases=tuple(a for a in aliases if a != canon),
            unverified=UNVERIFIED.get(canon, ()), source=r["source"], notes=r["notes"],
        ))
    for name, vendor, arch, aliases, mem in EXTRA_ACCELERATORS:
        out.append(Accelerator(
            name=name, vendor=vendor, architecture=arch, form_factor="", memory_gib=mem,
            memory_bandwidth_gb_per_s=None, aliases=aliases, unverified=("no datasheet",),
            source=EXTRA_SOURCE, notes="performance peaks unknown: not usable for estimates",
        ))
    return sorted(out, key=lambda a: a.name), ref_to_canon


def read_network(ref: Path, ref_to_canon: dict[str, str]) -> dict[tuple[str, str], dict]:
    table = {}
    for r in csv.DictReader(open(ref / "instance_network.csv", encoding="utf-8")):
        if r["instance_type"].startswith("TPU "):
            continue  # descriptive host rows, not rentable type names
        table[(r["cloud"], r["instance_type"])] = {
            "accelerator": ref_to_canon[r["accelerator"]], "gpus": int(r["gpus"]),
            "topology": topology_of(r["intra_node_topology"]),
            "inter_node_gbps": num(r["inter_node_gbps"]), "fabric": fabric_of(r["fabric"]),
            "rdma": r["gpudirect_rdma"].split(" ")[0], "source": r["source"],
            "unverified": "unverified" in (r["intra_node_topology"] + r["notes"]).lower(),
            "notes": f"{r['intra_node_topology']}; {r['fabric']}. {r['notes']}".strip(),
        }
    return table


def make_instance(cloud: str, name: str, accelerator: str, gpus: int, vcpus, mem, gpu_mem,
                  network: dict, extra_flags: tuple[str, ...] = (),
                  notes: str = "") -> InstanceType:
    net = network.get((cloud, name)) or network.get((cloud, name.removesuffix("-nolssd")))
    if net is not None:
        return InstanceType(
            cloud=cloud, name=name, accelerator=accelerator, gpu_count=gpus, vcpus=vcpus,
            memory_gib=mem, gpu_memory_gib=gpu_mem, intra_node_topology=net["topology"],
            intra_node_gb_per_s_per_gpu=None, inter_node_gbps=net["inter_node_gbps"],
            fabric=net["fabric"], gpudirect_rdma=net["rdma"], network_source=net["source"],
            flags=tuple(sorted({*extra_flags, *(("network_unverified",) if net["unverified"]
                                                 else ())})),
            notes="; ".join(x for x in (notes, net["notes"]) if x),
        )
    topo, gbps, fabric, note = EXTRA_NETWORK.get(
        (cloud, name.removesuffix("-nolssd")),
        (derived_topology(accelerator, gpus, cloud, name), None, "ethernet",
         "inter-node bandwidth not in the reference: single-node only until refreshed"),
    )
    return InstanceType(
        cloud=cloud, name=name, accelerator=accelerator, gpu_count=gpus, vcpus=vcpus,
        memory_gib=mem, gpu_memory_gib=gpu_mem, intra_node_topology=topo,
        intra_node_gb_per_s_per_gpu=None, inter_node_gbps=gbps, fabric=fabric,
        network_source="derived by tools/build_snapshot.py from GPU count and model",
        flags=tuple(sorted({*extra_flags, "network_unverified"})),
        notes="; ".join(x for x in (notes, note) if x),
    )


def spot_offer(cloud, itype, region, zone_prices: dict[str, float], od: float | None, flags=()):
    zone = min(zone_prices, key=lambda z: (zone_prices[z], z))
    price = zone_prices[zone]
    f = set(flags)
    if od is not None and price >= od:
        f.add("spot_not_below_on_demand")
    return Offer(cloud=cloud, instance_type=itype, region=region, pricing="spot",
                 usd_per_hour=round(price, 6),
                 usd_per_hour_zone_median=median(list(zone_prices.values())), zone=zone,
                 zone_count=len(zone_prices), as_of=AS_OF[cloud][0], source=SOURCES[cloud],
                 flags=tuple(sorted(f)))


def on_demand_offer(cloud, itype, region, price, zones: int, flags=()):
    if price is None:
        flags = (*flags, "price_unknown")
    return Offer(cloud=cloud, instance_type=itype, region=region, pricing="on_demand",
                 usd_per_hour=None if price is None else round(price, 6), zone_count=zones,
                 as_of=AS_OF[cloud][0], source=SOURCES[cloud], flags=tuple(sorted(set(flags))))


AWS_PRE_CUT = {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5en.48xlarge"}


def build_aws(ref: Path, network) -> tuple[list[InstanceType], list[Offer]]:
    by_type: dict[str, dict] = {}
    od: dict[tuple[str, str], set[float]] = defaultdict(set)
    spot: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    zones: dict[tuple[str, str], set[str]] = defaultdict(set)
    for r in csv.DictReader(open(ref / "aws_accelerator_vms.csv", encoding="utf-8")):
        name = r["InstanceType"]
        by_type.setdefault(name, r)
        key = (name, r["Region"])
        od[key].add(num(r["Price"]))  # None: the source lists no on-demand price here
        zones[key].add(r["AvailabilityZone"])
        if r["SpotPrice"]:  # p4de's duplicate rows: only one of the pair carries spot
            spot[key][r["AvailabilityZone"]] = float(r["SpotPrice"])
    instances = []
    for name, r in sorted(by_type.items()):
        acc = AWS_ACCEL[r["AcceleratorName"]]
        instances.append(make_instance("aws", name, acc, int(float(r["AcceleratorCount"])),
                                       int(float(r["vCPUs"])), num(r["MemoryGiB"]),
                                       gpu_mem_gib(r["GpuInfo"]), network))
    offers = []
    for (name, region), prices in sorted(od.items()):
        if len(prices) != 1:
            raise ValueError(f"aws {name} {region}: on-demand differs by zone: {prices}")
        price = prices.pop()
        flags = ("pre_cut_list_price",) if name in AWS_PRE_CUT else ()
        if price is None:
            flags = ("price_unknown",)
        offers.append(on_demand_offer("aws", name, region, price, len(zones[(name, region)]),
                                      flags))
        if spot[(name, region)]:
            offers.append(spot_offer("aws", name, region, spot[(name, region)], price))
    for name, region, price in CAPACITY_BLOCKS:
        offers.append(Offer(cloud="aws", instance_type=name, region=region,
                            pricing="capacity_block", usd_per_hour=price,
                            as_of=dt.date(2024, 12, 31), source=CAPACITY_BLOCK_SOURCE))
    return instances, offers


GCP_SUSPECT = {("H100", "us-central1"), ("H100", "us-west1")}


def tpu_chips(slice_name: str) -> tuple[str, int]:
    """tpu-v5p-8 → (TPU-v5p, 4): v2/v3/v4/v5p names count TensorCores (2 per chip);
    v5litepod and v6e names count chips."""
    _, gen, size = slice_name.rsplit("-", 2)
    chips = int(size) if gen in ("v5litepod", "v6e") else max(1, int(size) // 2)
    return {"v5litepod": "TPU-v5e"}.get(gen, f"TPU-{gen}"), chips


def build_gcp(ref: Path, network) -> tuple[list[InstanceType], list[Offer]]:
    hosts: dict[str, dict] = {}
    host_price: dict[tuple[str, str], tuple[float, float | None]] = {}  # (machine, zone)
    gpu_price: dict[tuple[str, int, str], tuple[float, float | None]] = {}  # (gpu, n, zone)
    gpu_mem: dict[str, float] = {}
    region_of: dict[str, str] = {}
    seen = set()
    for r in csv.DictReader(open(ref / "gcp_accelerator_vms.csv", encoding="utf-8")):
        row_key = tuple(r.values())
        if row_key in seen:
            continue  # the source duplicates many TPU lines exactly
        seen.add(row_key)
        zone = r["AvailabilityZone"]
        region_of[zone] = r["Region"]
        prices = (float(r["Price"]), num(r["SpotPrice"]))
        if r["InstanceType"]:
            hosts.setdefault(r["InstanceType"], r)
            host_price[(r["InstanceType"], zone)] = prices
        else:
            gpu_price[(r["AcceleratorName"], int(r["AcceleratorCount"]), zone)] = prices
            mem = gpu_mem_gib(r["GpuInfo"])
            if mem:
                gpu_mem[r["AcceleratorName"]] = mem
    instances, priced = [], defaultdict(lambda: {"od": [], "spot": {}, "flags": set()})
    for machine, r in sorted(hosts.items()):
        gpu, count = gcp_machine_gpus(machine)
        acc = GCP_ACCEL[gpu]
        instances.append(make_instance("gcp", machine, acc, count, int(float(r["vCPUs"])),
                                       num(r["MemoryGiB"]), gpu_mem.get(gpu), network,
                                       notes=f"price = host (vCPU+RAM) + {count}x {gpu} GPU"))
        for (m, zone), (h_od, h_spot) in host_price.items():
            if m != machine:
                continue
            slot = priced[(machine, region_of[zone])]
            g = gpu_price.get((gpu, count, zone))
            if g is None:
                slot["flags"].add("price_unknown")
                slot["od"].append(None)
                continue
            slot["od"].append(h_od + g[0])
            if h_spot is not None and g[1] is not None:
                slot["spot"][zone] = h_spot + g[1]
            if (gpu, region_of[zone]) in GCP_SUSPECT:
                slot["flags"].add("suspect_price")
    # N1-attached GPUs and TPU slices: the accelerator rows are the whole offer.
    attach = defaultdict(lambda: {"od": [], "spot": {}, "flags": set()})
    for (gpu, count, zone), (p_od, p_spot) in gpu_price.items():
        if gpu.startswith("tpu-"):
            name, flags = gpu, set()
        elif gpu in ("T4", "V100", "P100", "P4"):
            name, flags = f"n1+{gpu.lower()}x{count}", {"host_price_missing"}
        else:
            continue  # priced as part of an a2/a3/g2 machine above
        slot = attach[(name, region_of[zone])]
        slot["od"].append(p_od)
        slot["flags"] |= flags
        slot["key"] = (gpu, count)
        if p_spot is not None:
            slot["spot"][zone] = p_spot
    known = {i.name for i in instances}
    for (name, _region), slot in sorted(attach.items()):
        if name in known:
            continue
        known.add(name)
        gpu, count = slot["key"]
        if gpu.startswith("tpu-"):
            acc, chips = tpu_chips(gpu)
            instances.append(make_instance("gcp", name, acc, chips, None, None, None, network,
                                           notes="TPU slice; price is the whole slice"))
        else:
            instances.append(make_instance("gcp", name, GCP_ACCEL[gpu], count, None, None,
                                           gpu_mem.get(gpu), network,
                                           notes=f"{count}x {gpu} attached to an N1 VM of your "
                                                 "choice; N1 host price not in the snapshot"))
    offers = []
    for (name, region), slot in sorted({**priced, **attach}.items()):
        flags = set(slot["flags"])
        ods = slot["od"]
        price = None if None in ods else min(ods)
        if price is not None and len(set(ods)) != 1:
            raise ValueError(f"gcp {name} {region}: on-demand differs by zone")
        offers.append(on_demand_offer("gcp", name, region, price, len(ods), flags))
        if price is None:
            offers.append(Offer(cloud="gcp", instance_type=name, region=region, pricing="spot",
                                usd_per_hour=None, zone_count=len(ods), as_of=AS_OF["gcp"][0],
                                source=SOURCES["gcp"], flags=tuple(sorted(flags))))
        elif slot["spot"]:
            offers.append(spot_offer("gcp", name, region, slot["spot"], price, flags))
    return instances, offers


def build_azure(ref: Path, network) -> tuple[list[InstanceType], list[Offer]]:
    instances, offers, seen = [], [], set()
    rows = sorted(csv.DictReader(open(ref / "azure_accelerator_vms.csv", encoding="utf-8")),
                  key=lambda r: (r["InstanceType"], r["Region"]))
    for r in rows:
        name = r["InstanceType"]
        acc = AZURE_ACCEL.get(name) or AZURE_ACCEL[r["AcceleratorName"]]
        gpus, inst_flags, notes = int(r["AcceleratorCount"]), (), ""
        if name == "Standard_ND96isr_H100_v5" and gpus == 12:
            gpus, inst_flags = 8, ("gpu_count_corrected",)
            notes = "source lists 12 GPUs; the VM has 8 (Azure ND H100 v5 docs)"
        if name not in seen:
            seen.add(name)
            instances.append(make_instance("azure", name, acc, gpus, int(float(r["vCPUs"])),
                                           num(r["MemoryGiB"]), None, network, inst_flags, notes))
        od = num(r["Price"])
        offers.append(on_demand_offer("azure", name, r["Region"], od, 0,
                                      () if od is not None else ("price_unknown",)))
        sp = num(r["SpotPrice"])
        if sp is not None:
            flags = ()
            if name == "Standard_ND96isr_H100_v5" and sp == od:
                flags = ("no_spot_offer",)
            offers.append(spot_offer("azure", name, r["Region"], {"": sp}, od, flags))
    return instances, offers


def unpriced_instances(network, have: set[tuple[str, str]]) -> list[InstanceType]:
    """Types the clouds sell that the price tables lack (p6-b200, trn2, A4, ND H200 v5 …)."""
    out = []
    for (cloud, name), net in sorted(network.items()):
        if (cloud, name) not in have:
            out.append(make_instance(cloud, name, net["accelerator"], net["gpus"], None, None,
                                     None, network, notes="no price in the snapshot: refresh "
                                     "or add an override"))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, default=ROOT.parent / "shared" / "reference")
    parser.add_argument("--out", type=Path, default=ROOT / "catalog" / "data")
    args = parser.parse_args(argv)
    accelerators, ref_to_canon = build_accelerators(args.reference)
    network = read_network(args.reference, ref_to_canon)
    instances, offers = [], []
    for build in (build_aws, build_gcp, build_azure):
        i, o = build(args.reference, network)
        instances += i
        offers += o
    instances += unpriced_instances(network, {i.key for i in instances})
    instances.sort(key=lambda i: i.key)
    offers.sort(key=lambda o: o.key)
    keys = [o.key for o in offers]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate offer keys")
    write_table(args.out / "accelerators.csv", accelerators, ACCELERATORS)
    write_table(args.out / "instance_types.csv", instances, INSTANCE_TYPES)
    write_table(args.out / "offers.csv", offers, OFFERS)
    meta = {
        "name": "packaged",
        "source": "public list prices compiled in skypilot-catalog (see per-cloud sources), "
                  "datasheet specs and cloud network docs (shared reference, SPECS.md)",
        "clouds": {c: {"as_of": d.isoformat(), "approximate": True, "basis": why,
                       "source": SOURCES[c]} for c, (d, why) in AS_OF.items()},
        "built_by": "tools/build_snapshot.py",
    }
    write_text_atomic(args.out / "meta.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(f"wrote {len(accelerators)} accelerators, {len(instances)} instance types, "
          f"{len(offers)} offers to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
