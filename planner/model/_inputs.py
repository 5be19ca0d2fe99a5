"""What the vectorised model needs of one cluster: achievable matmul and attention rates,
memory and its bandwidth, the links' bus bandwidths and hop latency, each with the reason for
its value (datasheet × published fraction, or a probe's measurement from the calibration).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog import (
    MAX_GPU_MEMORY_GIB,  # memory per accelerator: one bound for both layers
    record,
)

from ._arrays import distinct
from ._assumptions import (
    FALLBACK_FABRIC,
    FALLBACK_TOPOLOGY,
    Assumptions,
    attention_key,
    gpu_family,
)
from ._calibration import NO_CALIBRATION, Calibration
from ._errors import HardwareError
from ._hardware import Cluster
from ._workload import Workload

if TYPE_CHECKING:
    from collections.abc import Sequence

    import numpy as np

HALF_DTYPES = ("bf16", "fp16")  # what a published stand-in or achievable rate is measured in
INSTANCE, GPU = "`instance`", "`gpu`"  # the inputs that name a cluster's accelerator


@record
class ClusterInputs:
    """Per-cluster numbers the vectorised model needs, with the reason for each."""

    matmul_tflops: float
    attention_tflops: float
    peak_tflops: float  # datasheet dense peak of the matmul dtype, for MFU
    hbm_gb_per_s: float
    memory_gib: float
    intra_busbw_gb_per_s: float
    nic_gb_per_s_per_gpu: float
    sm_count: float  # nan when unknown: no wave quantization
    hop_latency_s: float  # one inter-node step of a NCCL ring/tree
    nvlink_domain_gpus: float  # GPUs joined by NVLink (a node, or a GB200 NVL72 rack)
    notes: tuple[str, ...]
    calibrated: tuple[str, ...] = ()  # measured figures used instead of datasheet defaults
    hbm_note: str = ""  # the bandwidth elementwise kernels get, as the assumptions say it


def matmul_dtype(precision: str) -> str:
    return {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8"}[precision]


def inference_only_message(names: Sequence[str], option: str) -> str:
    """Why ``names`` (inference-only accelerators: ``Accelerator.inference_only``) get no
    training estimate, and what to pick instead (``option``: how the caller spells --gpu, or
    "`instance`" when the user named an instance type: the examples are then instances)."""
    what = ("an inference accelerator: its vendor's software does not train models"
            if len(names) == 1 else
            "inference accelerators: their vendors' software does not train models")
    instead = (f"an instance type of a training accelerator with {option}, e.g. trn1.32xlarge "
               "(Trainium1) or trn2.48xlarge (Trainium2) on AWS, or a GPU instance"
               if option == INSTANCE else
               f"a training accelerator with {option}, e.g. Trainium1 or Trainium2 on AWS, or "
               "a GPU")
    return (f"{', '.join(names)}: {what} (AWS Neuron trains on Trainium only; Qualcomm's "
            f"Cloud AI 100 SDK runs inference). To fix: choose {instead}")


def hardware_option(cluster: Cluster) -> str:
    """The input that chose ``cluster``'s accelerator, for a hint to change it: `instance`
    for an instance type's cluster, `gpu` for a reference node (a hint that said `gpu` to a
    user who gave `instance` named an option they had not used)."""
    return INSTANCE if cluster.instance_type else GPU


def dtype_peak(acc, dtype: str) -> float | None:
    """The dense peak the model times ``dtype`` GEMMs against: the datasheet's, else for a
    16-bit type the catalog's stand-in. Never the stand-in for fp8: a chip with no published
    peak (A10G) has no fp8 units either, and fp8 training on it was timed at its 16-bit rate."""
    return acc.peak_tflops(dtype) or (acc.peak_stand_in_tflops if dtype in HALF_DTYPES
                                      else None)


def fp8_gains(acc) -> bool:
    """Whether fp8 GEMMs outrun 16-bit ones on ``acc``: its fp8 peak is above its bf16 peak.
    ``fp8_relative_fraction`` (fitted where fp8 doubles the peak) applies only there; on a
    chip whose fp8 peak is its bf16 one (TPU v5p, Trainium1) it made fp8 training 20% slower
    than bf16, a ranking no one would act on."""
    fp8, bf16 = dtype_peak(acc, "fp8"), dtype_peak(acc, "bf16")
    return bool(fp8 and bf16 and fp8 > bf16)


def can_time(acc, precision: str) -> bool:
    """Whether the model has what it needs to time ``precision`` training on ``acc``."""
    if acc.inference_only:
        return False
    half = "fp16" if precision == "fp16" else "bf16"
    peaks = (dtype_peak(acc, matmul_dtype(precision)), dtype_peak(acc, half))
    return all(peaks) and bool(acc.memory_gib) and bool(acc.memory_bandwidth_gb_per_s)


def nvlink_domain(A: Assumptions, accelerator: str, gpus_per_node: int,
                  gpus: float = math.inf) -> float:
    """GPUs one NVLink domain joins: the accelerator's rack (``nvlink_domain_gpus``, a GB200
    NVL72's 72) or else the node, capped by the ``gpus`` a cluster has — the domain that
    bounds tensor parallelism and decides which collectives run over NVLink."""
    return max(gpus_per_node, min(A.nvlink_domain_gpus.get(accelerator, gpus_per_node), gpus))


def cluster_inputs(cluster: Cluster, workload: Workload, A: Assumptions,
                   cal: Calibration = NO_CALIBRATION, *,
                   memory_gib: float | None = None) -> ClusterInputs:
    acc = cluster.accelerator
    option = hardware_option(cluster)
    if acc.inference_only:
        raise HardwareError(inference_only_message([acc.name], option))
    dtype = matmul_dtype(workload.precision)
    half = "fp16" if workload.precision == "fp16" else "bf16"
    notes = []
    peak, half_peak = dtype_peak(acc, dtype), dtype_peak(acc, half)
    if not half_peak or not peak:
        missing = dtype if not peak else half
        raise HardwareError(
            f"{acc.name} has no {missing} peak in the catalog, so {workload.precision} "
            f"training cannot be modelled on it. To fix: choose `precision` "
            f"{'fp16' if acc.tflops_fp16 else 'bf16'}, or another {option}"
            if (acc.tflops_fp16 or acc.tflops_bf16 or acc.peak_stand_in_tflops) else
            # no probe advice: a measured matmul rate replaces a datasheet figure, but the
            # model still needs the peak (for MFU and attention) before it reads any
            f"{acc.name} has no published tensor peaks, so no training on it can be "
            f"modelled. To fix: pick another {option}")
    fam = gpu_family(acc.architecture, acc.form_factor)
    if acc.achievable_matmul_tflops and dtype in HALF_DTYPES:
        default_matmul = acc.achievable_matmul_tflops
        default_note = (f"matmul {dtype}: {default_matmul} TFLOP/s from a published "
                        f"benchmark of {acc.name} (unverified; no datasheet peak exists); MFU "
                        f"against the stand-in peak {acc.peak_stand_in_tflops:g}")
    else:
        frac = A.matmul_fraction.get(fam, A.default_matmul_fraction)
        if dtype == "fp8" and fp8_gains(acc):
            frac *= A.fp8_relative_fraction
        elif dtype == "fp8":
            notes.append(f"fp8: {acc.name}'s fp8 peak is its {half} peak ({peak:g} TFLOP/s): "
                         f"fp8 GEMMs gain nothing on it and are timed as {half} ones")
        default_matmul = peak * frac
        src = ("published MAMF for " + fam if fam in A.matmul_fraction
               else "default_matmul_fraction: no published measurement for this family")
        if f"matmul_fraction.{fam}" in A.overridden or (
                fam not in A.matmul_fraction and "default_matmul_fraction" in A.overridden):
            src = "set with `assume`"  # not the published figure it replaced
        default_note = (f"matmul {dtype}: {peak:g} TFLOP/s peak × {frac:.3f} = "
                        f"{default_matmul:.1f} TFLOP/s achievable ({src})")
    calibrated = []
    measured = cal.matmul(acc.name, dtype)
    if measured:
        matmul = measured.value
        calibrated.append(f"matmul {dtype}: measured {matmul:.1f} TFLOP/s instead of the "
                          f"datasheet default {default_matmul:.1f} ({measured.source})")
    else:
        matmul = default_matmul
        notes.append(default_note)
    hbm = acc.memory_bandwidth_gb_per_s
    hbm_m = cal.hbm(acc.name)
    if hbm_m and hbm:
        # a measured copy bandwidth is already "achievable": undo the default efficiency
        calibrated.append(f"HBM copy: measured {hbm_m.value:.0f} GB/s instead of "
                          f"{hbm:g} × {A.memory_bandwidth_efficiency} = "
                          f"{hbm * A.memory_bandwidth_efficiency:.0f} ({hbm_m.source})")
        hbm = hbm_m.value / A.memory_bandwidth_efficiency
        # hbm × efficiency is the measured copy again; printing hbm itself would show a
        # "bandwidth" above the datasheet's (4,985 GB/s for an H200 copying at 4,238)
        hbm_note = (f"HBM {hbm_m.value:.0f} GB/s (the measured copy) for elementwise kernels "
                    "and the optimizer step")
    if not hbm:
        raise HardwareError(f"{acc.name} has no memory bandwidth in the catalog. To fix: "
                            f"pick another {option}")
    if not hbm_m:
        hbm_note = (f"HBM {hbm:g} GB/s × {A.memory_bandwidth_efficiency} for elementwise "
                    "kernels and the optimizer step")
    if memory_gib is not None and (isinstance(memory_gib, bool) or not isinstance(
            memory_gib, int | float) or not 0 < memory_gib <= MAX_GPU_MEMORY_GIB):
        raise HardwareError(f"`memory_gib` (memory per GPU) must be a number above 0 and at most "
                            f"{MAX_GPU_MEMORY_GIB:,} GiB, got {memory_gib!r}. To fix: pass the "
                            "GiB per GPU the cloud reports, or None for the datasheet's",
                            field="memory_gib", value=memory_gib)
    mem = memory_gib or acc.memory_gib
    if not mem:
        raise HardwareError(f"{acc.name} has no memory size in the catalog. To fix: pick "
                            f"another {option}")
    eff = A.intra_node_efficiency.get(cluster.topology,
                                      A.intra_node_efficiency[FALLBACK_TOPOLOGY])
    default_intra = cluster.intra_node_gb_per_s_per_gpu / 2 * eff
    intra_m = cal.intra(cluster.instance_type, acc.name, cluster.gpus_per_node)
    if intra_m:
        intra = intra_m.value
        calibrated.append(f"intra-node busbw: measured {intra:.0f} GB/s instead of "
                          f"{default_intra:.0f} ({intra_m.source})")
    else:
        intra = default_intra
        notes.append(f"intra-node busbw: {cluster.intra_node_gb_per_s_per_gpu:g}/2 GB/s per "
                     f"direction × {eff} ({cluster.topology}) = {intra:.0f} GB/s")
    nic = default_nic(cluster, A)
    inter_m = cal.inter(cluster.instance_type, cluster.nodes) if cluster.nodes > 1 else None
    if inter_m:
        calibrated.append(f"inter-node busbw at {cluster.nodes} nodes: measured "
                          f"{inter_m.value:.0f} GB/s instead of {nic * cluster.gpus_per_node:.0f}"
                          f" ({inter_m.source})")
        nic = inter_m.value / cluster.gpus_per_node
    elif cluster.inter_node_gbps and cluster.nodes > 1:
        e = A.inter_node_efficiency.get(cluster.fabric, A.inter_node_efficiency[FALLBACK_FABRIC])
        notes.append(f"inter-node: {cluster.inter_node_gbps:g} Gb/s {cluster.fabric} × {e}"
                     f" = {nic * cluster.gpus_per_node:.0f} GB/s per node")
    domain = nvlink_domain(A, acc.name, cluster.gpus_per_node, cluster.gpus)
    if domain > cluster.gpus_per_node:
        notes.append(f"NVLink domain {domain:g} GPUs ({acc.name} racks; nvlink_domain_gpus): "
                     "collectives among GPUs inside it run over NVLink, not the NIC")
    notes.extend(calibrated)
    akey = attention_key(acc.architecture, workload.framework, workload.attention)
    ramp = (1 + A.attention_ramp_tokens / 8192) / (1 + A.attention_ramp_tokens
                                                    / workload.seq_len)
    # no kernel outruns the peak: overrides (fraction 1 × efficiency 2) gave an MFU of 1.09
    attn = min(half_peak * A.attention_fraction[akey] * A.attention_efficiency * ramp,
               half_peak)
    if workload.attention != "unfused":
        notes.append(f"attention kernel {akey}: {half_peak:g} TFLOP/s × "
                     f"{A.attention_fraction[akey]} (published fwd+bwd share) × "
                     f"{A.attention_efficiency:.2f} (fitted) × {ramp:.2f} (sequence "
                     f"{workload.seq_len}) = {attn:.0f} TFLOP/s"
                     + (" (capped at the peak)" if attn == half_peak else "")
                     + _no_flash_kernel(acc))
    return ClusterInputs(
        matmul_tflops=matmul, attention_tflops=attn, peak_tflops=peak,
        hbm_gb_per_s=hbm, memory_gib=mem, intra_busbw_gb_per_s=intra,
        nic_gb_per_s_per_gpu=nic,
        sm_count=float(acc.sm_count) if acc.sm_count else math.nan,
        hop_latency_s=getattr(A, hop_latency_name(cluster.fabric)),
        nvlink_domain_gpus=float(domain), notes=tuple(notes), calibrated=tuple(calibrated),
        hbm_note=hbm_note)


def hop_latency_name(fabric: str) -> str:
    """The constant a network hop's latency is read from: TCP fabrics (plain Ethernet,
    GPUDirect-TCPX) are slower per hop than RDMA ones (also what ``_unused`` says an override
    of the other one does not reach)."""
    return ("inter_node_latency_tcp_s" if fabric in ("ethernet", "gpudirect_tcpx")
            else "inter_node_latency_s")


def default_nic(cluster: Cluster, A: Assumptions) -> float:
    """Inter-node bus bandwidth per GPU (GB/s) from the catalog's line rate and the fabric's
    efficiency; 0 when the instance has no collective network."""
    if not cluster.inter_node_gbps:
        return 0.0
    eff = A.inter_node_efficiency.get(cluster.fabric, A.inter_node_efficiency[FALLBACK_FABRIC])
    return cluster.inter_node_gbps / 8 * eff / cluster.gpus_per_node


def nic_by_nodes(cluster: Cluster, ci: ClusterInputs, cal: Calibration,
                 nodes: np.ndarray) -> np.ndarray | None:
    """Per-GPU inter-node bus bandwidth for each node count: the probe's measurement at that
    count (interpolated between measured counts) where there is one, else the default.
    None when nothing is measured for this instance type."""
    import numpy as np

    if cal.empty or not cluster.instance_type:
        return None
    out = np.full(len(nodes), ci.nic_gb_per_s_per_gpu, dtype=np.float64)
    hit = False
    for n in distinct(nodes):
        m = cal.inter(cluster.instance_type, int(n)) if n > 1 else None
        if m:
            out[nodes == n] = m.value / cluster.gpus_per_node
            hit = True
    return out if hit else None


# NVIDIA generations before Ampere: FlashAttention-2 and PyTorch SDPA's flash backend need
# sm80+, Transformer Engine's fused attention too (Megatron falls back to unfused attention).
_BEFORE_AMPERE = ("volta", "turing", "pascal", "maxwell", "kepler")


def _no_flash_kernel(acc) -> str:
    """What the flash rate stands for on a GPU no FlashAttention kernel runs on: the A100
    FlashAttention-2 share (a V100 llama3-8b estimate gave 52% MFU, where Megatron-LM reached
    30% of V100 peak: arXiv:1909.08053, 15.1 PFLOP/s on 512 GPUs), said so, with the override
    that times the unfused path."""
    if not acc.architecture.lower().startswith(_BEFORE_AMPERE):
        return ""
    return (f" — {acc.name} has no FlashAttention kernel (FlashAttention-2, SDPA's flash "
            "backend and Transformer Engine's fused attention need Ampere or newer): this "
            "rate is likely optimistic; `attention` unfused times the unfused path Megatron "
            "runs there")
