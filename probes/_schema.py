"""The probe report: a versioned JSON document, and the records it is read into.

This module never imports torch: `gpuplan probe ingest` reads reports on machines without it.

Units are in the field names:

- ``tflops``: TFLOP/s, 10**12 floating-point operations per second (a multiply-add counts 2).
- ``gb_per_s``: decimal gigabytes per second, 10**9 bytes/s (not GiB/s).
- ``bytes``: bytes; ``seconds``: seconds; ``mhz``: MHz; ``w``: watts; ``c``: degrees Celsius.
- ``p10``/``p50``/``p90``: the 10th/50th/90th percentiles (linear interpolation) of a figure,
  in the figure's unit: over repeats within one GPU, or over GPUs in ``across_ranks``.

Versioning: ``schema_version`` is an int. Adding an optional field keeps the version (readers
ignore fields they do not know); renaming, removing or changing the meaning of a field bumps it,
and `parse_report` lists the versions it supports.

- Version 1: matmul ``best_tflops`` is the fastest of five square shapes timed in short bursts
  (seconds of warm-up), one weight layout; fp8 with fast accumulation only; rank 0's figures.
- Version 2: matmul is a MAMF-style sweep of training-like shapes in both weight
  layouts after a clock-settling warm-up (``best_tflops`` = max over shapes, ``median_tflops``
  = median over shapes); fp8 in both accumulation modes, checked against bf16; triad next to
  copy; every rank's figures gathered (``ranks``, ``across_ranks``); percentiles per figure;
  telemetry under load; the NCCL transport per collective.
- Version 3 (this one): adds the optional ``workload`` section (`python -m probes workload`:
  the user's transformer layers timed forward + backward + AdamW, probes._workload) and
  ``ranks[].workload``. Versions 1 and 2 read unchanged (no workload section); the hardware
  sections mean what they meant in version 2. The bump makes an older gpuplan say "upgrade"
  instead of silently reading a workload report as one that measured nothing.

Version 1 files still parse (the new fields take their defaults) so that `gpuplan probe show`
can list them; the planner refuses to calibrate from them and says why (probes._figures).
Reading and writing the JSON is probes._report_io.

The exceptions are in ``probes._errors``, the shared checks in ``probes._spread`` and the
workload section in ``probes._workload_schema``, the GPU telemetry (and its bounds) in
``probes._telemetry``; re-exported, every record is reachable here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from probes._errors import ProbesError, ProbeSetupError, ReportError
from probes._spread import (
    MAX_COUNT,
    MAX_SECONDS,
    STATUSES,
    Spread,
    Status,
    check_count,
    check_name,
    check_non_negative,
    check_positive,
    check_shape,
    check_status,
    check_timestamp,
)
from probes._telemetry import MAX_MEMORY_CLOCK_MHZ, MAX_SM_CLOCK_MHZ, GpuTelemetry, check_clocks
from probes._workload_schema import WorkloadSection, WorkloadSplit

SCHEMA_VERSION = 3
SUPPORTED_SCHEMA_VERSIONS: tuple[int, ...] = (1, 2, 3)

# Matmul dtype names, in sweep order: fp32 with TF32 off, tf32, bf16, fp16, fp8 (e4m3) with
# the default (split, full-precision) accumulation as mamf-finder.py runs it, and fp8 with
# cuBLASLt's fast accumulation (use_fast_accum=True).
MATMUL_DTYPES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3", "fp8_e4m3_fast")

# Weight layouts of C[M,N] = A[M,K] @ B: "nn" B is a row-major K x N tensor; "nt" B is the
# transpose of a row-major N x K tensor, the way torch.nn.Linear stores its weight (y = x W^T)
# and the way mamf-finder.py lays out B.
LAYOUTS: tuple[str, ...] = ("nn", "nt")
# A whole run: the hardware probes take ~2.5 min and the workload probe minutes
# (docs/probes.md); a week is far beyond any run's settings, and 1e300 s is a damaged file
MAX_RUN_SECONDS = 7 * MAX_SECONDS

@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeFailure:
    """A probe that raised: the others still ran. ``rank`` is the process that saw it."""

    probe: str
    error_type: str
    message: str
    rank: int = 0

    def __post_init__(self) -> None:
        check_count("error", low=0, high=MAX_COUNT - 1, rank=self.rank)


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Where the report was measured. ``None`` means "not available on this machine"."""

    hostname: str
    cpu_count: int
    platform: str
    python_version: str
    torch_version: str | None
    cuda_version: str | None
    nccl_version: str | None
    driver_version: str | None
    device_type: str  # "cuda" or "cpu": what the probes ran on
    gpu_model: str | None
    gpu_count: int  # GPUs visible on this node
    gpu_memory_bytes: int | None
    compute_capability: str | None  # e.g. "9.0"
    sm_clock_mhz: int | None  # idle, before the probes; under load: ranks[].under_load
    sm_clock_max_mhz: int | None
    memory_clock_mhz: int | None
    memory_clock_max_mhz: int | None
    cloud: str | None  # "aws", "gcp" or "azure", from the metadata service
    instance_type: str | None
    region: str | None
    zone: str | None
    world_size: int
    local_world_size: int
    node_count: int
    # v2: rank 0's GPU before the probes (power limit, MIG, ECC), and the NCCL_*/FI_* variables
    # the processes saw (NCCL reads its settings from the environment).
    idle: GpuTelemetry | None = None
    gpu_count_smi: int | None = None  # GPUs nvidia-smi lists, whatever CUDA_VISIBLE_DEVICES hides
    nccl_env: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        check_count("environment", world_size=self.world_size, cpu_count=self.cpu_count)
        check_count("environment", high=self.world_size, node_count=self.node_count,
                    local_world_size=self.local_world_size)
        # a CPU run counts 0 GPUs; a CUDA run at least the one it ran on
        check_count("environment", low=1 if self.device_type == "cuda" else 0,
                    gpu_count=self.gpu_count)
        check_count("environment", low=0, gpu_count_smi=self.gpu_count_smi)
        check_positive("environment", gpu_memory_bytes=self.gpu_memory_bytes)
        check_clocks("environment", MAX_SM_CLOCK_MHZ, sm_clock_mhz=self.sm_clock_mhz,
                     sm_clock_max_mhz=self.sm_clock_max_mhz)
        check_clocks("environment", MAX_MEMORY_CLOCK_MHZ, memory_clock_mhz=self.memory_clock_mhz,
                     memory_clock_max_mhz=self.memory_clock_max_mhz)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulPoint:
    """One timed shape: C[M,N] = A[M,K] @ B; tflops = 2*M*N*K / seconds_median / 1e12.

    ``tflops_p10``/``tflops_p90`` are over the repeats (each repeat a block of back-to-back
    calls), so they show how steady the GPU held that shape.
    """

    dtype: str
    m: int
    n: int
    k: int
    seconds_median: float  # per matmul, median over repeats
    tflops: float
    layout: str = "nn"  # see LAYOUTS
    tflops_p10: float | None = None
    tflops_p90: float | None = None

    def __post_init__(self) -> None:
        check_positive("matmul point", m=self.m, n=self.n, k=self.k,
                        seconds_median=self.seconds_median, tflops=self.tflops,
                        tflops_p10=self.tflops_p10, tflops_p90=self.tflops_p90)
        if self.layout not in LAYOUTS:
            raise ValueError(f"matmul point: layout must be one of {LAYOUTS}")


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulDtype:
    """One dtype over the sweep: the best shape (max over shapes, the MAMF statistic), the
    median over shapes, the spread over GPUs, and for fp8 the check against bf16."""

    dtype: str  # see MATMUL_DTYPES
    status: Status
    reason: str | None = None  # for skipped/failed, or a note (e.g. shapes left out)
    best_tflops: float | None = None  # max over the measured points (shapes x layouts)
    best_shape: tuple[int, int, int] | None = None  # (M, N, K)
    best_layout: str | None = None
    median_tflops: float | None = None  # median over the measured points
    points_measured: int = 0
    across_ranks: Spread | None = None  # each rank's best_tflops
    accumulation: str | None = None  # fp8: "split (full precision)" or "fast"
    # fp8: the same fp8 inputs multiplied in bf16; rel_error = ||C - C_bf16||_F / ||C_bf16||_F
    check_reference: str | None = None
    check_rel_error: float | None = None
    check_max_rel_error: float | None = None
    check_passed: bool | None = None

    def __post_init__(self) -> None:
        check_name("matmul dtype", self.dtype, MATMUL_DTYPES)  # first: the messages name it
        check_status(self.status, self.reason, f"matmul {self.dtype}")
        if self.status == "measured" and (self.best_tflops is None or self.best_shape is None):
            raise ValueError(f"matmul {self.dtype}: measured needs best_tflops and best_shape")
        check_positive(f"matmul {self.dtype}", best_tflops=self.best_tflops,
                        median_tflops=self.median_tflops,
                        across_ranks_min=self.across_ranks and self.across_ranks.min)
        check_shape(f"matmul {self.dtype}.best_shape", self.best_shape)
        if self.check_rel_error is not None and not (math.isfinite(self.check_rel_error)
                                                     and self.check_rel_error >= 0):
            raise ValueError(f"matmul {self.dtype}: check_rel_error must be finite and >= 0")
        check_non_negative(f"matmul {self.dtype}", check_max_rel_error=self.check_max_rel_error)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulSection:
    """Matmul throughput. fp32 runs with TF32 off, tf32 with it on; settings are restored.

    Before the sweep one shape runs back to back until its throughput stops changing
    (``warmup_*``): ``burst_tflops`` is the first window, ``sustained_tflops`` the last.
    """

    device: str
    timing: str  # "cuda_events" or "perf_counter"
    flop_convention: str
    warmup_iters: int
    repeats: int
    target_seconds_per_repeat: float
    cache_bytes: int  # L2 size the buffer rotation has to exceed
    cache_bytes_source: str  # "device_properties" or "assumed"
    tf32_matmul_allowed: bool  # settings found at start (torch.backends.cuda.matmul.allow_tf32)
    cudnn_tf32_allowed: bool  # torch.backends.cudnn.allow_tf32
    float32_matmul_precision: str  # torch.get_float32_matmul_precision()
    dtypes: tuple[MatmulDtype, ...]
    points: tuple[MatmulPoint, ...]
    sweep: str = "default"  # "default" (the built-in shapes) or "custom" (--shapes)
    layouts: tuple[str, ...] = ("nn",)
    warmup_dtype: str | None = None
    warmup_shape: tuple[int, int, int] | None = None
    warmup_seconds: float | None = None
    warmup_settled: bool | None = None  # False: the time limit ended it before it settled
    burst_tflops: float | None = None
    sustained_tflops: float | None = None
    under_load: GpuTelemetry | None = None  # this rank's GPU during the last warm-up window

    def __post_init__(self) -> None:
        check_count("matmul", repeats=self.repeats)
        check_positive("matmul", target_seconds_per_repeat=self.target_seconds_per_repeat,
                        burst_tflops=self.burst_tflops, sustained_tflops=self.sustained_tflops)
        check_non_negative("matmul", warmup_seconds=self.warmup_seconds)
        check_shape("matmul.warmup_shape", self.warmup_shape)
        if self.warmup_seconds is not None and not (self.warmup_dtype and self.warmup_shape):
            raise ValueError("matmul: a warm-up ran (warmup_seconds is set) but warmup_dtype "
                             f"({self.warmup_dtype!r}) or warmup_shape is missing")


@dataclass(frozen=True, slots=True, kw_only=True)
class BandwidthPoint:
    """One bandwidth measurement: gb_per_s = counted_bytes / seconds_median / 1e9."""

    # device_copy, device_triad, host_copy, host_triad, h2d_pinned, h2d_pageable, d2h_pinned,
    # d2h_pageable
    name: str
    status: Status
    reason: str | None = None
    size_bytes: int | None = None  # N, the bytes of one buffer
    counted_bytes: int | None = None  # bytes credited per operation (see byte_convention)
    seconds_median: float | None = None
    gb_per_s: float | None = None
    gb_per_s_p10: float | None = None  # over repeats
    gb_per_s_p90: float | None = None
    across_ranks: Spread | None = None  # each rank's gb_per_s

    def __post_init__(self) -> None:
        check_status(self.status, self.reason, f"memory {self.name}")
        if self.status == "measured" and self.gb_per_s is None:
            raise ValueError(f"memory {self.name}: measured needs gb_per_s")
        check_positive(f"memory {self.name}", size_bytes=self.size_bytes,
                        counted_bytes=self.counted_bytes,
                        seconds_median=self.seconds_median, gb_per_s=self.gb_per_s,
                        gb_per_s_p10=self.gb_per_s_p10, gb_per_s_p90=self.gb_per_s_p90,
                        across_ranks_min=self.across_ranks and self.across_ranks.min)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySection:
    device: str
    timing: str
    byte_convention: str
    points: tuple[BandwidthPoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectivePoint:
    """One message size, nccl-tests conventions (PERFORMANCE.md).

    size_bytes: all_reduce, the buffer; all_gather, the gathered output (n x per-rank input);
    reduce_scatter, the input (n x per-rank output). algbw = size_bytes / seconds_median;
    busbw = algbw * 2(n-1)/n for all_reduce, algbw * (n-1)/n for the other two.
    seconds_median: each iteration's time is the slowest rank's; the median over iterations.
    busbw_p10/p90: the same over iterations (p10 is the slower tail).
    """

    size_bytes: int
    seconds_median: float
    algbw_gb_per_s: float
    busbw_gb_per_s: float
    busbw_p10_gb_per_s: float | None = None
    busbw_p90_gb_per_s: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        check_positive("collective point", size_bytes=self.size_bytes,
                        iterations=self.iterations, seconds_median=self.seconds_median,
                        algbw_gb_per_s=self.algbw_gb_per_s)
        for name in ("busbw_gb_per_s", "busbw_p10_gb_per_s", "busbw_p90_gb_per_s"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value >= 0):
                raise ValueError(f"collective point: {name} must be finite and >= 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectiveSeries:
    """One collective over a group of ranks, over message sizes.

    ``transport``: how the group's communicator moved data, from NCCL's own log (e.g.
    "P2P/CUMEM", "NVLS", "SHM", "NET/IB/GDRDMA", "NET/Socket"), "+"-joined when several;
    ``net``: the network NCCL used ("IB", "AWS Libfabric", "Socket", ...; None within a node);
    ``rdma``: True when the network is one the planner counts as the fabric (probes._figures),
    False for plain TCP sockets, None when unknown.
    """

    op: str  # all_reduce, all_gather, reduce_scatter
    scope: str  # "intra_node" (each node's local ranks, all nodes at once) or "world"
    group_size: int
    status: Status
    reason: str | None = None
    implementation: str | None = None  # the torch.distributed function used
    emulated: bool = False  # True only if built from another collective
    dtype: str = "float32"
    points: tuple[CollectivePoint, ...] = ()
    transport: str | None = None
    net: str | None = None
    rdma: bool | None = None
    net_plugin: str | None = None  # NCCL's net plugin: "internal", "aws-ofi-nccl 1.13.2", ...
    transport_source: str | None = None  # "NCCL_DEBUG log", "gloo", or why it is unknown

    def __post_init__(self) -> None:
        check_status(self.status, self.reason, f"collective {self.op}/{self.scope}")
        check_count(f"collective {self.op}/{self.scope}", group_size=self.group_size)


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectivesSection:
    backend: str | None  # "nccl" or "gloo"
    status: Status
    reason: str | None = None
    world_size: int = 1
    local_world_size: int = 1
    node_count: int = 1
    timeout_seconds: float = 0.0
    timing: str = ""
    series: tuple[CollectiveSeries, ...] = ()

    def __post_init__(self) -> None:
        check_status(self.status, self.reason, "collectives")
        check_count("collectives", world_size=self.world_size)
        check_count("collectives", high=self.world_size, node_count=self.node_count,
                    local_world_size=self.local_world_size)
        check_non_negative("collectives", timeout_seconds=self.timeout_seconds)
        for s in self.series:  # a group is some of the world's ranks
            check_count(f"collective {s.op}/{s.scope}", high=self.world_size,
                        group_size=s.group_size)


@dataclass(frozen=True, slots=True, kw_only=True)
class NamedValue:
    name: str
    value: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RankResult:
    """What one rank (one GPU) measured, gathered to rank 0 at the end of the run."""

    rank: int
    local_rank: int
    hostname: str
    device: str  # e.g. "cuda:3"
    gpu_name: str | None = None
    gpu_uuid: str | None = None
    under_load: GpuTelemetry | None = None
    matmul_best_tflops: tuple[NamedValue, ...] = ()  # dtype -> max over the sweep
    memory_gb_per_s: tuple[NamedValue, ...] = ()  # bandwidth point name -> GB/s
    # v3: the workload probe's per-rank figures: layer_fwd_bwd_seconds, layer_step_seconds,
    # layer_activation_bytes, peak_memory_bytes (names as in WorkloadSection)
    workload: tuple[NamedValue, ...] = ()

    def __post_init__(self) -> None:
        check_count("rank", low=0, high=MAX_COUNT - 1, rank=self.rank)  # not "rank -3.rank"
        check_count(f"rank {self.rank}", low=0, high=MAX_COUNT - 1, local_rank=self.local_rank)
        # What a rank measured: throughputs and times > 0 (only measured values are kept),
        # saved bytes >= 0; layer_activation_bytes is the allocator's difference across the
        # forward, left alone as in WorkloadSection.
        for nv in (*self.matmul_best_tflops, *self.memory_gb_per_s, *self.workload):
            zero_ok = nv.name == "layer_saved_bytes"
            if nv.name != "layer_activation_bytes" and not (
                    math.isfinite(nv.value) and (nv.value > 0 or zero_ok and nv.value == 0)):
                raise ValueError(f"rank {self.rank}: {nv.name} must be a finite number "
                                 f"{'>=' if zero_ok else '>'} 0, got {nv.value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeReport:
    """Everything one probe run measured. A section is None when that probe failed or was
    not selected; its failure, if any, is in ``errors`` (from every rank).

    Sections hold rank 0's detailed points; ``ranks`` holds every rank's summary, and the
    ``across_ranks`` spreads in the sections are computed from it.
    """

    schema_version: int
    tool_version: str
    created_utc: str  # ISO 8601 in UTC, e.g. "2025-01-31T12:00:00Z" (others converted)
    quick: bool
    duration_seconds: float
    environment: Environment | None = None
    matmul: MatmulSection | None = None
    memory: MemorySection | None = None
    collectives: CollectivesSection | None = None
    errors: tuple[ProbeFailure, ...] = ()
    ranks: tuple[RankResult, ...] = ()
    workload: WorkloadSection | None = None  # v3

    def __post_init__(self) -> None:
        object.__setattr__(self, "created_utc", check_timestamp("created_utc", self.created_utc))
        check_non_negative("report", duration_seconds=self.duration_seconds)
        if self.duration_seconds > MAX_RUN_SECONDS:
            raise ValueError(f"report.duration_seconds must be at most {MAX_RUN_SECONDS:,.0f} "
                             f"seconds (a week; a probe run takes minutes), got "
                             f"{self.duration_seconds:g}")


__all__ = [
    "LAYOUTS", "MATMUL_DTYPES", "SCHEMA_VERSION", "STATUSES", "SUPPORTED_SCHEMA_VERSIONS",
    "BandwidthPoint", "CollectivePoint", "CollectiveSeries", "CollectivesSection",
    "Environment", "GpuTelemetry", "MatmulDtype", "MatmulPoint", "MatmulSection",
    "MemorySection", "NamedValue", "ProbeFailure", "ProbeReport", "ProbeSetupError",
    "ProbesError", "RankResult", "ReportError", "Spread", "Status", "WorkloadSection",
    "WorkloadSplit",
]
