"""Every constant of the performance model, with where its value comes from.

``Assumptions`` is frozen; override any field with ``dataclasses.replace`` (the CLI's
``--assume name=value``), and probe calibration replaces the achievable matmul throughput and
bus bandwidths per accelerator/instance (see ``_calibration``). There is no single
"utilisation" knob: time comes from FLOPs, bytes and link speeds, each with its own constant.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ._errors import PlannerError

# Achievable dense bf16 matmul as a fraction of datasheet peak, per GPU architecture: the
# "maximum achievable matmul FLOPS" (MAMF) measured with mamf-finder.py and published in
# stas00/ml-engineering compute/accelerator/README.md (MAMF comparison table):
# A100 SXM 267.9/312 = 0.859, A100 PCIe 256.4/312 = 0.822, H100 SXM 792.1/989 = 0.801,
# GH200 821/989 = 0.830, MI250X 147/191.5 = 0.767 (per GCD), MI300X 781.9/1300 = 0.601,
# B200 1745/2250 = 0.776. Architectures without a published MAMF use DEFAULT (stated in the
# estimate's assumptions so users know to run `gpuplan probe run`).
MAMF_FRACTION = {
    "ampere-ga100-sxm": 0.859,
    "ampere-ga100-pcie": 0.822,
    "hopper": 0.801,
    "blackwell": 0.776,
    "cdna2": 0.767,
    "cdna3": 0.601,
}
DEFAULT_MATMUL_FRACTION = 0.70  # no published measurement: a conservative default

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
GEMM_TILE_M, GEMM_TILE_N = 128, 256  # cuBLAS/CUTLASS large-GEMM tile for 16-bit inputs

# Intra-node all-reduce bus bandwidth as a fraction of the per-direction link bandwidth.
# nccl-tests all_reduce_perf on 8-GPU NVSwitch boards reaches ≈ 0.78 (DGX A100: ~235 of
# 300 GB/s) to ≈ 0.81 (DGX H100: ~365 of 450 GB/s) at large messages (NVIDIA nccl-tests
# results quoted in stas00/ml-engineering network/README.md). PCIe paths through the host
# bridge reach less; partial NVLink meshes (V100 hybrid cube-mesh) in between.
INTRA_NODE_EFFICIENCY = {
    "nvswitch": 0.80, "xgmi": 0.70, "ici": 0.80, "neuronlink": 0.70, "nvlink": 0.70,
    "roce": 0.70, "pcie": 0.60, "single": 1.0,
}
# Inter-node bus bandwidth as a fraction of the instance's collective network line rate.
# RDMA fabrics (InfiniBand NDR/HDR, EFA with libfabric/aws-ofi-nccl, RoCE) reach 0.75–0.9 in
# nccl-tests; TCP-based GPUDirect-TCPX less; plain Ethernet without RDMA much less (kernel TCP
# stack, one socket per ring). Assumptions until a multi-node probe measures them.
INTER_NODE_EFFICIENCY = {
    "infiniband": 0.85, "roce": 0.80, "efa": 0.75, "gpudirect_tcpx": 0.70, "ethernet": 0.40,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Assumptions:
    # -- compute ------------------------------------------------------------------------
    matmul_fraction: dict = field(default_factory=lambda: dict(MAMF_FRACTION))
    default_matmul_fraction: float = DEFAULT_MATMUL_FRACTION
    # fp8 GEMMs (Transformer Engine) reach a lower fraction of their 2x peak than bf16 does,
    # and add amax/cast kernels; relative factor applied on top of the bf16 fraction.
    fp8_relative_fraction: float = 0.80
    # GEMM tile pipeline: each output tile runs K/64 main-loop steps plus ≈ 3 steps of
    # prologue/epilogue (CUTLASS/cuBLAS multistage pipelines are 3–4 deep), so short K (small
    # hidden sizes per TP shard) do not fill the GPU. Normalised to 1 at the MAMF shape K≈4096.
    gemm_tile_k: int = 64
    gemm_tile_overhead_steps: float = 3.0
    # FlashAttention-2/3 reach ~50–75% of peak (fwd) and less in bwd (arXiv:2307.08691 §4,
    # arXiv:2407.08608 §4): average over fwd+bwd.
    attention_efficiency: float = 0.60
    # Causal masking lets FlashAttention skip ≈ half the score blocks.
    causal_fraction: float = 0.5
    # Achievable HBM bandwidth for elementwise kernels (STREAM-like copies reach 85–91% of the
    # datasheet; e.g. 90.6% measured on H100 NVL in a public ceiling probe).
    memory_bandwidth_efficiency: float = 0.85
    # Eager PyTorch issues one op in ≈ 4.2 µs from Python; a transformer block runs ≈ 20
    # kernels forward and ≈ 40 backward: the GPU idles when kernels are shorter than that.
    kernel_launch_s: float = 4.2e-6
    kernels_per_layer: int = 60
    # -- communication ------------------------------------------------------------------
    intra_node_efficiency: dict = field(default_factory=lambda: dict(INTRA_NODE_EFFICIENCY))
    inter_node_efficiency: dict = field(default_factory=lambda: dict(INTER_NODE_EFFICIENCY))
    intra_node_latency_s: float = 10e-6  # nccl-tests small-message latency on NVLink
    # One network hop of a NCCL ring/tree step across nodes: a few µs of wire and NIC latency
    # plus NCCL's per-step protocol overhead on RDMA fabrics (IB/RoCE/EFA); TCP-based paths
    # (GPUDirect-TCPX, plain Ethernet) pay the kernel network stack as well.
    inter_node_latency_s: float = 10e-6
    inter_node_latency_tcp_s: float = 30e-6
    # Gradients are reduced in buckets (PyTorch DDP's default bucket_cap_mb = 25).
    grad_bucket_bytes: float = 25 * 2**20
    # Gradient reduction overlaps with the backward pass of the last micro-batch (bucketed
    # all-reduce, DDP/Megatron); this fraction of that window hides communication.
    dp_overlap: float = 0.90
    # FSDP/ZeRO-3 parameter all-gathers are prefetched under the previous layer's compute.
    zero3_overlap: float = 0.90
    # While NCCL overlaps with compute it occupies SMs (one CTA per channel; 16–32 channels on
    # 108–132-SM GPUs by default) and HBM bandwidth: compute runs this much slower meanwhile.
    overlap_compute_slowdown: float = 0.15
    # Synchronous steps wait for the slowest GPU. GPUs of one model differ by a few percent in
    # sustained speed (Sinha et al., "Not All GPUs Are Created Equal", SC'22); with a
    # coefficient of variation cv the slowest of n is ≈ 1 + cv·√(2·ln n) times the mean.
    gpu_speed_cv: float = 0.02
    grad_reduce_bytes: int = 2  # bf16 gradient reduction (FSDP MixedPrecision reduce_dtype)
    # -- memory -------------------------------------------------------------------------
    runtime_reserve_gib: float = 2.5  # CUDA context (~0.5–1 GiB) + NCCL buffers (~1–2 GiB)
    usable_memory_fraction: float = 0.95  # caching-allocator fragmentation
    logits_bytes: int = 4  # fp32 softmax/cross-entropy buffer over the vocabulary
    # -- goodput ------------------------------------------------------------------------
    # Llama 3 405B: 419 unexpected interruptions in 54 days on 16,384 H100s
    # (arXiv:2407.21783 §3.3.4) → 419 / (54·24·16384) ≈ 1.97e-5 failures per GPU-hour.
    failure_rate_per_gpu_hour: float = 1.97e-5
    restart_minutes: float = 15.0  # detect, reschedule, reload: an assumption, overridable
    checkpoint_write_gb_per_s_per_node: float = 2.0  # to a parallel FS / object store
    checkpoint_read_gb_per_s_per_node: float = 4.0
    # -- spot ---------------------------------------------------------------------------
    # Interruptions per instance-hour when the catalog has no rate for an offer. Assumptions,
    # not measurements: AWS and Azure publish only coarse monthly buckets (AWS Spot Instance
    # Advisor: "<5%" … ">20%" of instances per month), far below what large GPU instances see
    # in practice, so the defaults are one interruption per ~100 instance-hours; GCP's old
    # preemptible VMs lived at most 24 h, the bound used for GCP Spot. Override per cloud.
    spot_interruptions_per_hour_aws: float = 0.01
    spot_interruptions_per_hour_gcp: float = 1 / 24
    spot_interruptions_per_hour_azure: float = 0.01
    spot_restart_minutes: float = 30.0  # re-acquire capacity, re-launch, reload

    def with_overrides(self, **values: float) -> Assumptions:
        names = {f.name for f in dataclasses.fields(self)}
        for key, value in values.items():
            if key not in names:
                import difflib

                close = difflib.get_close_matches(key, sorted(names), n=3)
                hint = f" Did you mean {', '.join(close)}?" if close else ""
                raise PlannerError(f"unknown assumption {key!r}.{hint} To fix: use one of "
                                   f"{', '.join(sorted(names))}")
            if isinstance(getattr(self, key), dict):
                raise PlannerError(f"assumption {key!r} is a table; override it per entry is "
                                   "not supported. To fix: calibrate with a probe report")
            if not isinstance(value, int | float) or value < 0:
                raise PlannerError(f"assumption {key}={value!r} must be a non-negative number")
        return dataclasses.replace(self, **values)


def gpu_family(architecture: str, form_factor: str) -> str:
    """The MAMF family key for an accelerator's architecture string."""
    arch = architecture.lower()
    if "ga100" in arch:
        return "ampere-ga100-pcie" if "pcie" in form_factor.lower() else "ampere-ga100-sxm"
    for needle, family in (("hopper", "hopper"), ("blackwell", "blackwell"),
                           ("cdna 2", "cdna2"), ("cdna 3", "cdna3")):
        if needle in arch:
            return family
    return arch.split(" ")[0] or "unknown"
