"""Accelerators and instance networking from the reference's datasheet and network tables.

Accelerators: each ``accelerator_specs.csv`` row under a canonical name with aliases, with the
corrections below; plus devices the clouds sell that have no datasheet row (memory as the cloud
reports it, every peak unknown — never guessed).

Networking: ``instance_network.csv`` rows are free text ("ENA Ethernet (no EFA)", "NVLink 2,
not NVSwitch"). A word only counts when it is *affirmed*: "no EFA", "not NVSwitch", "no
InfiniBand", "NVSwitch not stated in docs" and "EFA support unverified" do not make a fabric or
a topology (they once did: p3.16xlarge and p3dn came out NVSwitch, p3.16xlarge EFA, and four
Azure NC A100/H100 sizes InfiniBand).
"""

from __future__ import annotations

import re
from pathlib import Path

from .._records import Accelerator, InstanceType
from ._common import num, read_rows
from ._planning import with_planning_facts

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
    "B200-SXM-180GB": ("tflops_tf32",), "GB200-186GB": ("memory_gib",),
}

# Datasheet corrections. The reference's B200/GB200 FP32/FP64 figures are NVIDIA's launch
# figures (GTC 2024); NVIDIA's current HGX B200 and GB200 NVL72 specification tables give
# HGX B200: FP32 75, FP64/FP64 Tensor Core 37; GB200 NVL72: FP32 80, FP64 40 TFLOPS per GPU
# (nvidia.com/en-us/data-center/hgx/ and /gb200-nvl72/, "Individual Blackwell GPU
# Specifications"; reproduced e.g. at zdszero.github.io/Computer/Artificial_Intelligence/
# Hardware.html). The launch figures were 7-12 % higher.
CORRECTIONS = {
    "B200-SXM-180GB": {"tflops_fp32": 75.0, "tflops_fp64": 37.0},
    "GB200-186GB": {"tflops_fp32": 80.0, "tflops_fp64": 40.0},
}
CORRECTION_NOTE = ("FP32/FP64 from NVIDIA's current HGX B200 / GB200 NVL72 specification "
                   "tables (launch figures were 7-12 % higher)")

EXTRA_SOURCE = ("no datasheet row in the shared reference; memory per device as the cloud "
                "reports it")
# Sold in the reference's price tables but without a datasheet row: memory per device from the
# clouds where given; every peak unknown (None), never guessed.
EXTRA_ACCELERATORS = [
    # name, vendor, architecture, aliases, memory_gib (cloud-reported, per device)
    ("K80", "NVIDIA", "Kepler (GK210)", ("Tesla K80", "NVIDIA Tesla K80", "NVIDIA K80"), 12.0),
    ("M60", "NVIDIA", "Maxwell (GM204)", ("Tesla M60", "NVIDIA Tesla M60", "NVIDIA M60"), 8.0),
    ("GRID-K520", "NVIDIA", "Kepler (GK104)", ("NVIDIA GRID K520", "K520"), 4.0),
    ("P100", "NVIDIA", "Pascal (GP100)", ("Tesla P100",), 16.0),
    ("P4", "NVIDIA", "Pascal (GP104)", ("Tesla P4",), 8.0),
    ("T4g", "NVIDIA", "Turing (TU104, AWS Graviton host)", ("NVIDIA T4G Tensor Core",), 16.0),
    ("Radeon-Pro-V520", "AMD", "RDNA (Navi 12)", ("Radeon Pro V520",), 8.0),
    ("Radeon-Instinct-MI25", "AMD", "Vega 10", ("Radeon MI25", "MI25"), None),
    ("Inferentia1", "AWS", "NeuronCore-v1", ("Inferentia", "inf1"), 8.0),
    ("Qualcomm-AI100", "Qualcomm", "Cloud AI 100", ("Qualcomm AI100", "AI100"), 16.0),
    ("FPGA-VU9P", "AMD Xilinx", "Virtex UltraScale+ VU9P", ("Virtex UltraScale (VU9P)",), None),
    ("FPGA-VU47P", "AMD Xilinx", "Virtex UltraScale+ VU47P", ("Virtex UltraScale+ (VU47P)",),
     None),
    ("TPU-v2", "Google", "TPU v2", ("tpu-v2",), None),
    ("TPU-v3", "Google", "TPU v3", ("tpu-v3",), None),
    # AWS p6-b300: 2,100 GiB of GPU memory over 8 GPUs (reference aws_prices_2025-11-30.csv).
    ("B300-SXM", "NVIDIA", "Blackwell Ultra", ("B300", "NVIDIA B300"), 262.5),
    # AWS g7e: NVIDIA RTX PRO 6000 Blackwell Server Edition, 96 GB GDDR7 (nvidia.com product
    # page; reference aws_on_demand_2026-01-21.csv names the GPU).
    ("RTX-PRO-6000-Blackwell", "NVIDIA", "Blackwell (GB202)",
     ("RTX PRO 6000", "NVIDIA RTX PRO 6000 Blackwell"), 96.0),
]

# Azure NCv3 carries V100 *PCIe* cards, not the SXM2 boards of NDv2 (Azure NCv3-series page:
# "NVIDIA Tesla V100 GPUs"; the sizes have no NVLink). Datasheet: NVIDIA Tesla V100 datasheet
# (images.nvidia.com/content/technologies/volta/pdf/tesla-volta-v100-datasheet-letter-fnl-
# web.pdf), V100 PCIe column: FP64 7, FP32 14, Tensor 112 TFLOPS, 16 GB HBM2 at 900 GB/s,
# PCIe 32 GB/s, 250 W.
V100_PCIE = Accelerator(
    name="V100-PCIe-16GB", vendor="NVIDIA", architecture="Volta (GV100)", form_factor="PCIe",
    memory_gib=16.0, memory_bandwidth_gb_per_s=900.0, tflops_fp64=7.0, tflops_fp32=14.0,
    tflops_fp16=112.0, intra_node_link="PCIe Gen3 x16 (no NVLink)",
    intra_node_gb_per_s_per_gpu=32.0, tdp_w=250.0,
    aliases=("V100-PCIe", "Tesla V100 PCIe", "V100-PCIE-16GB"),
    source="NVIDIA Tesla V100 datasheet (V100 PCIe column)",
    notes="tensor-core FP16 is the mixed-precision peak; no BF16 on Volta")

PCIE_ONLY = {"T4", "T4g", "A10", "A10G", "L4", "L40S", "K80", "M60", "GRID-K520", "P100", "P4",
             "Radeon-Pro-V520", "Radeon-Instinct-MI25", "Qualcomm-AI100", "FPGA-VU9P",
             "FPGA-VU47P", "A100-PCIe-80GB", "H100-PCIe-80GB", "H100-NVL-94GB",
             "V100-PCIe-16GB", "RTX-PRO-6000-Blackwell", "Inferentia1"}
EXTRA_NETWORK = {  # (cloud, type) → (topology, inter_node_gbps, fabric, note)
    ("gcp", "a2-megagpu-16g"): ("nvswitch", 100.0, "ethernet", "A2 series total (GCP docs)"),
    ("gcp", "a3-edgegpu-8g"): ("nvswitch", 800.0, "gpudirect_tcpx",
                               "reference conflict: 600 (overview table) vs up to 800 (newer)"),
}


def build_accelerators(reference: Path) -> tuple[list[Accelerator], dict[str, str]]:
    out, ref_to_canon = [], {}
    for r in read_rows(reference, "accelerator_specs.csv"):
        canon, aliases = SPEC_NAMES[r["name"]]
        ref_to_canon[r["name"]] = canon
        fix = CORRECTIONS.get(canon, {})
        out.append(Accelerator(
            name=canon, vendor=r["vendor"], architecture=r["architecture"],
            form_factor=r["form_factor"], memory_gib=num(r["memory_gib"]),
            memory_bandwidth_gb_per_s=num(r["memory_bandwidth_gbps"]),
            tflops_fp64=fix.get("tflops_fp64", num(r["fp64_tflops"])),
            tflops_fp32=fix.get("tflops_fp32", num(r["fp32_tflops"])),
            tflops_tf32=num(r["tf32_tflops"]), tflops_bf16=num(r["bf16_tflops"]),
            tflops_fp16=num(r["fp16_tflops"]), tflops_fp8=num(r["fp8_tflops"]),
            tops_int8=num(r["int8_tops"]), intra_node_link=r["intra_node_link"],
            intra_node_gb_per_s_per_gpu=num(r["intra_node_bandwidth_gbps_per_gpu"]),
            tdp_w=num(r["tdp_w"]), aliases=tuple(a for a in aliases if a != canon),
            unverified=UNVERIFIED.get(canon, ()),
            source=r["source"] + ("; " + CORRECTION_NOTE if fix else ""),
            notes=(r["notes"] + (f" Corrected: {CORRECTION_NOTE}." if fix else "")).strip(),
        ))
    for name, vendor, arch, aliases, mem in EXTRA_ACCELERATORS:
        out.append(Accelerator(
            name=name, vendor=vendor, architecture=arch, form_factor="", memory_gib=mem,
            memory_bandwidth_gb_per_s=None, aliases=aliases, unverified=("no datasheet",),
            source=EXTRA_SOURCE, notes="performance peaks unknown: not usable for estimates",
        ))
    out.append(V100_PCIE)
    return sorted((with_planning_facts(a) for a in out), key=lambda a: a.name), ref_to_canon


# -- networking --------------------------------------------------------------------------------
# Phrases that deny or doubt what follows or precedes them. Removed before matching, so only
# affirmed words count.
_NEGATED = re.compile(
    r"\b(?:no|not|without)\s+(?:EFA|NVSwitch|NVLink|InfiniBand|RDMA|RoCE)\b"
    r"|\b(?:EFA|NVSwitch|NVLink|InfiniBand)\b[^;,()]*?\b(?:not stated|unverified|not "
    r"confirmed)\b", re.IGNORECASE)


def affirmed(text: str) -> str:
    """``text`` with every negated or unconfirmed mention removed."""
    return _NEGATED.sub(" ", text)


def fabric_of(text: str) -> str:
    text = affirmed(text)
    for needle, fabric in (("InfiniBand", "infiniband"), ("EFA", "efa"),
                           ("TCPX", "gpudirect_tcpx"), ("RoCE", "roce"), ("MRDMA", "roce")):
        if re.search(rf"\b{needle}", text):
            return fabric
    return "ethernet"


def topology_of(text: str) -> tuple[str, bool]:
    """(topology, unverified) from a free-text intra-node description."""
    unverified = bool(re.search(r"not stated|unverified", text, re.IGNORECASE))
    text = affirmed(text)
    for needle, topo in (("single", "single"), ("NVLink pairs", "nvlink"),
                         ("NVSwitch", "nvswitch"), ("NVLink 5", "nvswitch"),
                         ("NVLink 900", "nvswitch"), ("NeuronLink", "neuronlink"),
                         ("ICI", "ici"), ("Infinity Fabric", "xgmi"), ("RoCE", "roce"),
                         ("PCIe", "pcie")):
        if needle in text:
            return topo, unverified
    if re.search(r"NVLink [34]\.0", text):
        # Azure ND A100 v4 / H100 v5: the docs say "NVLink 3.0/4.0" without naming NVSwitch;
        # those sizes are 8-GPU HGX baseboards, whose NVLink runs through NVSwitch.
        return "nvswitch", True
    if "unverified" in text:
        return "pcie", True
    raise ValueError(f"cannot classify topology {text!r}")


def read_network(reference: Path, ref_to_canon: dict[str, str]) -> dict[tuple[str, str], dict]:
    table = {}
    for r in read_rows(reference, "instance_network.csv"):
        if r["instance_type"].startswith("TPU "):
            continue  # descriptive host rows, not rentable type names
        topology, topo_unverified = topology_of(r["intra_node_topology"])
        table[(r["cloud"], r["instance_type"])] = {
            "accelerator": ref_to_canon[r["accelerator"]], "gpus": int(r["gpus"]),
            "topology": topology, "inter_node_gbps": num(r["inter_node_gbps"]),
            "fabric": fabric_of(r["fabric"]), "rdma": r["gpudirect_rdma"].split(" ")[0],
            "source": r["source"],
            "unverified": topo_unverified or "unverified" in r["notes"].lower(),
            "notes": f"{r['intra_node_topology']}; {r['fabric']}. {r['notes']}".strip(),
        }
    return table


def derived_topology(accelerator: str, gpus: int) -> str:
    if gpus == 1:
        return "single"
    if accelerator in PCIE_ONLY:
        return "pcie"
    if accelerator.startswith(("Trainium", "Inferentia")):
        return "neuronlink"
    if accelerator.startswith("TPU"):
        return "ici"
    if accelerator.startswith("Gaudi"):
        return "roce"
    if accelerator.startswith("V100"):
        return "nvlink"
    return "nvswitch"  # A100/H100/H200/B200 HGX boards, including GCP's 1/2/4-GPU slices


def make_instance(cloud: str, name: str, accelerator: str, gpus: int, vcpus, mem, gpu_mem,
                  network: dict, *, flags: tuple[str, ...] = (), notes: str = "",
                  inter_node_gbps: float | None = None, network_note: str = "") -> InstanceType:
    net = network.get((cloud, name)) or network.get((cloud, name.removesuffix("-nolssd")))
    if net is not None:
        return InstanceType(
            cloud=cloud, name=name, accelerator=accelerator, gpu_count=gpus, vcpus=vcpus,
            memory_gib=mem, gpu_memory_gib=gpu_mem, intra_node_topology=net["topology"],
            intra_node_gb_per_s_per_gpu=None, inter_node_gbps=net["inter_node_gbps"],
            fabric=net["fabric"], gpudirect_rdma=net["rdma"], network_source=net["source"],
            flags=tuple(sorted({*flags, *(("network_unverified",) if net["unverified"]
                                          else ())})),
            notes="; ".join(x for x in (notes, net["notes"]) if x),
        )
    topo, gbps, fabric, note = EXTRA_NETWORK.get(
        (cloud, name.removesuffix("-nolssd")),
        (derived_topology(accelerator, gpus), inter_node_gbps, "ethernet",
         network_note or "inter-node bandwidth not in the reference: single-node only until "
                         "refreshed"),
    )
    return InstanceType(
        cloud=cloud, name=name, accelerator=accelerator, gpu_count=gpus, vcpus=vcpus,
        memory_gib=mem, gpu_memory_gib=gpu_mem, intra_node_topology=topo,
        intra_node_gb_per_s_per_gpu=None, inter_node_gbps=gbps, fabric=fabric,
        network_source="derived by tools/build_snapshot.py from GPU count and model",
        flags=tuple(sorted({*flags, "network_unverified"})),
        notes="; ".join(x for x in (notes, note) if x),
    )


def unpriced_instances(network) -> list[InstanceType]:
    """Types the clouds sell that no price table has (trn2, p6e-gb200, A4X, ND H200 v5 …):
    they exist, with no offer — never shown as free."""
    return [make_instance(cloud, name, net["accelerator"], net["gpus"], None, None, None,
                          network, notes="no price in the snapshot: refresh or add an override")
            for (cloud, name), net in sorted(network.items())]
