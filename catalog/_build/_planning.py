"""The planning facts of each accelerator: what the performance model, the launch files and the
cloud sources need to know about a device beyond its datasheet — every value with its source.

They become columns of ``accelerators.csv`` (``Accelerator.sm_count`` …), so the model, the
launchers and a refresh read one table instead of side tables of their own.

    SM_COUNT              streaming multiprocessors / compute units (GEMM wave quantization)
    REFERENCE_NODES       the vendor's usual node, for an accelerator given without an instance
    pcie_link_gb_per_s    the host PCIe link, both directions (``_records``: the rule)
    STAND_IN              16-bit peaks and achievable rates where no datasheet publishes one
    LAUNCH_NAMES          what SkyPilot and dstack call the device
    CLOUD_NAMES           what the clouds' APIs call it
    INFERENCE_ONLY        devices their vendor's software does not train on
"""

from __future__ import annotations

import dataclasses

from .._records import PCIE_SOURCE, Accelerator, pcie_link_gb_per_s

# Streaming multiprocessors (NVIDIA) / compute units (AMD) per device, from the vendors'
# architecture whitepapers (A100: 108 SMs; H100 SXM5: 132, PCIe: 114; H200: 132; B200: 148 per
# GPU; L40S: 142; L4: 58; A10: 72; A10G: 80; T4: 40; V100: 80; MI300X: 304 CUs; MI250X: 220 per
# package). GEMM output tiles are spread over them in waves; a partial last wave idles SMs.
SM_COUNT = {
    "A100-SXM4-40GB": 108, "A100-SXM4-80GB": 108, "A100-PCIe-80GB": 108,
    "H100-SXM5-80GB": 132, "H100-PCIe-80GB": 114, "H100-NVL-94GB": 132, "H800-SXM5-80GB": 132,
    "H200-SXM-141GB": 132, "B200-SXM-180GB": 148, "GB200-186GB": 148, "L40S": 142, "L4": 58,
    "A10": 72, "A10G": 80, "T4": 40, "V100-SXM2-16GB": 80, "V100-SXM2-32GB": 80,
    "MI300X": 304, "MI250X": 220,
}
SM_SOURCE = ("SMs/CUs: the vendor's architecture whitepaper (NVIDIA A100/H100/Blackwell/Ada/"
             "Ampere/Turing/Volta, AMD CDNA 2/3)")

# Reference nodes per accelerator: (GPUs per node, topology, inter-node Gbps, fabric, why).
REFERENCE_NODES = {
    "V100-SXM2-16GB": (8, "nvlink", 100, "infiniband", "DGX-1 V100: hybrid cube-mesh NVLink 2, "
                       "EDR InfiniBand 100 Gb/s"),
    "V100-SXM2-32GB": (8, "nvlink", 100, "infiniband", "DGX-1/Azure NDv2: NVLink 2, EDR IB"),
    "A100-SXM4-40GB": (8, "nvswitch", 1600, "infiniband", "DGX A100: NVSwitch, 8x200 Gb/s HDR"),
    "A100-SXM4-80GB": (8, "nvswitch", 1600, "infiniband", "DGX A100 80GB: NVSwitch, 8x200 HDR"),
    "H100-SXM5-80GB": (8, "nvswitch", 3200, "infiniband", "DGX H100: NVSwitch, 8x400 Gb/s NDR"),
    "H800-SXM5-80GB": (8, "nvswitch", 3200, "infiniband", "HGX H800: NVSwitch (400 GB/s "
                       "NVLink), 8x400 Gb/s IB as in DeepSeek-V3's cluster (arXiv:2412.19437)"),
    "H200-SXM-141GB": (8, "nvswitch", 3200, "infiniband", "HGX H200: NVSwitch, 8x400 Gb/s NDR"),
    "B200-SXM-180GB": (8, "nvswitch", 3200, "infiniband", "DGX B200: NVLink 5 NVSwitch, "
                       "8x400 Gb/s"),
    "MI300X": (8, "xgmi", 3200, "infiniband", "8x MI300X OAM, Infinity Fabric, 8x400 Gb/s "
               "(as Azure ND MI300X v5)"),
    "MI250X": (4, "xgmi", 800, "roce", "4x MI250X per node, Slingshot-class 4x200 Gb/s "
               "(Frontier-like)"),
}

# A10G: AWS and NVIDIA publish no tensor peak (reference SPECS.md). A community benchmark
# measured ≈69.5 TFLOP/s bf16 matmul (zzc0721/torch-performance-test-data issue #126); the A10
# datasheet's 125 TFLOP/s is the nearest published peak, used for MFU.
STAND_IN = {"A10G": (125.0, 69.5)}  # (peak stand-in, achievable matmul), 16-bit TFLOP/s
STAND_IN_SOURCE = ("16-bit stand-in: the A10 datasheet's 125 TFLOP/s peak (no A10G peak is "
                   "published) and a community benchmark's 69.5 TFLOP/s bf16 matmul "
                   "(zzc0721/torch-performance-test-data #126)")

# Catalog accelerator -> (SkyPilot name, dstack name). SkyPilot's from `sky show-gpus -a`
# (docs.skypilot.co/en/stable/compute/gpus.html); dstack's are gpuhunt's known GPU names with
# the memory where one name has two sizes (dstack.ai/docs/concepts/tasks/#resources). "": that
# orchestrator has no name for it (SkyPilot then relies on `instance_type` alone).
LAUNCH_NAMES: dict[str, tuple[str, str]] = {
    "A10": ("A10", "A10"),
    "A10G": ("A10G", "A10G"),
    "A100-PCIe-80GB": ("A100-80GB", "A100:80GB"),
    "A100-SXM4-40GB": ("A100", "A100:40GB"),
    "A100-SXM4-80GB": ("A100-80GB", "A100:80GB"),
    "B200-SXM-180GB": ("B200", "B200"),
    "GB200-186GB": ("", "GB200"),
    "H100-NVL-94GB": ("", "H100NVL"),
    "H100-PCIe-80GB": ("", "H100:80GB"),
    "H100-SXM5-80GB": ("H100", "H100:80GB"),
    "H200-SXM-141GB": ("H200", "H200"),
    "L4": ("L4", "L4"),
    "L40S": ("L40S", "L40S"),
    "MI250X": ("", "MI250X"),
    "MI300X": ("MI300X", "MI300X"),
    "P100": ("P100", "P100"),
    "T4": ("T4", "T4"),
    "V100-SXM2-16GB": ("V100", "V100:16GB"),
    "V100-SXM2-32GB": ("V100-32GB", "V100:32GB"),
}
LAUNCH_SOURCE = ("launch names: `sky show-gpus -a` (docs.skypilot.co/en/stable/compute/"
                 "gpus.html) and gpuhunt's GPU names (dstack.ai/docs/concepts/tasks/#resources)")

# The device names the clouds' APIs use, lowercase: AWS DescribeInstanceTypes GpuInfo.Gpus[].Name
# / NeuronInfo / InferenceAcceleratorInfo; GCP acceleratorTypes (compute.googleapis.com, see
# cloud.google.com/compute/docs/gpus). One name on two devices ("a100", "v100" on AWS) is told
# apart by the memory the cloud reports (``catalog.sources._names.canonical_name``).
CLOUD_NAMES: dict[str, tuple[str, ...]] = {
    "A100-SXM4-40GB": ("aws:a100", "gcp:nvidia-tesla-a100"),
    "A100-SXM4-80GB": ("aws:a100", "gcp:nvidia-a100-80gb"),
    "V100-SXM2-16GB": ("aws:v100", "gcp:nvidia-tesla-v100"),
    "V100-SXM2-32GB": ("aws:v100",),
    "H100-SXM5-80GB": ("aws:h100", "gcp:nvidia-h100-80gb", "gcp:nvidia-h100-mega-80gb"),
    "H200-SXM-141GB": ("aws:h200", "gcp:nvidia-h200-141gb"),
    "B200-SXM-180GB": ("aws:b200", "gcp:nvidia-b200"),
    "GB200-186GB": ("gcp:nvidia-gb200",),
    "Gaudi-HL-205": ("aws:gaudi hl-205",),
    "Trainium1": ("aws:trainium",),
    "Inferentia1": ("aws:inferentia",),
    "Qualcomm-AI100": ("aws:qualcomm ai100",),
    "L4": ("gcp:nvidia-l4",),
    "T4": ("gcp:nvidia-tesla-t4",),
    "P100": ("gcp:nvidia-tesla-p100",),
    "P4": ("gcp:nvidia-tesla-p4",),
    "K80": ("gcp:nvidia-tesla-k80",),
}
CLOUD_NAMES_SOURCE = ("cloud names: AWS DescribeInstanceTypes, GCP acceleratorTypes "
                      "(cloud.google.com/compute/docs/gpus)")


# Accelerators no vendor training stack runs on: AWS Neuron trains on Trainium only ("PyTorch
# NeuronX for training on Trn1 and Trn2; for inference on Inf2, Trn1 and Trn2"; Inf1 has the
# inference-only torch-neuron), and Qualcomm's Cloud AI 100 SDK compiles models for inference.
INFERENCE_ONLY = frozenset({"Inferentia1", "Inferentia2", "Qualcomm-AI100"})
INFERENCE_ONLY_SOURCE = ("inference only: AWS Neuron docs (awsdocs-neuron.readthedocs-hosted.com"
                         ", neuron-intro/pytorch-setup: training on Trn1/Trn2, inference on "
                         "Inf1/Inf2) and Qualcomm Cloud AI 100 (an inference accelerator)")


def with_planning_facts(acc: Accelerator) -> Accelerator:
    """``acc`` with its planning facts and the sources of those it has."""
    facts: dict = {"pcie_gb_per_s_per_gpu": pcie_link_gb_per_s(acc.intra_node_link)}
    sources = [PCIE_SOURCE]
    if acc.name in SM_COUNT:
        facts["sm_count"] = SM_COUNT[acc.name]
        sources.insert(0, SM_SOURCE)
    if acc.name in REFERENCE_NODES:
        per_node, topo, gbps, fabric, why = REFERENCE_NODES[acc.name]
        facts |= {"reference_gpus_per_node": per_node, "reference_topology": topo,
                  "reference_inter_node_gbps": gbps, "reference_fabric": fabric,
                  "reference_node_source": why}
    if acc.name in STAND_IN:
        peak, achievable = STAND_IN[acc.name]
        facts |= {"peak_stand_in_tflops": peak, "achievable_matmul_tflops": achievable}
        sources.append(STAND_IN_SOURCE)
    if acc.name in LAUNCH_NAMES:
        facts["skypilot_name"], facts["dstack_name"] = LAUNCH_NAMES[acc.name]
        sources.append(LAUNCH_SOURCE)
    if acc.name in CLOUD_NAMES:
        facts["cloud_names"] = CLOUD_NAMES[acc.name]
        sources.append(CLOUD_NAMES_SOURCE)
    if acc.name in INFERENCE_ONLY:
        facts["inference_only"] = True
        sources.append(INFERENCE_ONLY_SOURCE)
    return dataclasses.replace(acc, **facts, planning_source="; ".join(sources))
