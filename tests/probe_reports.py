"""Probe reports built from the probe schema's own records, for tests of what reads them (the
planner's ingest, the app's Probes page). Shape: what `python -m probes` writes on one
p5.48xlarge node, trimmed to what the readers use."""

from __future__ import annotations

import dataclasses

from probes import SCHEMA_VERSION, ProbeReport
from probes._schema import (
    BandwidthPoint,
    CollectivePoint,
    CollectiveSeries,
    CollectivesSection,
    Environment,
    MatmulDtype,
    MatmulPoint,
    MatmulSection,
    MemorySection,
)

BUSBW_TO_ALGBW = 1.75  # all-reduce over 8 ranks: busbw = algbw · 2(n−1)/n


def h100_report(*, bf16_tflops: float = 650.0, fp16_tflops: float | None = None,
                device_type: str = "cuda", gpu_model: str | None = "NVIDIA H100 80GB HBM3",
                created_utc: str = "2026-01-31T12:00:00Z",
                busbw_by_size: tuple[tuple[int, float], ...] = ((2**30, 481.8),),
                **env_changes) -> ProbeReport:
    """A one-node p5.48xlarge report: matmul measured at ``bf16_tflops`` (and ``fp16_tflops``),
    a device copy and an intra-node all-reduce with ``busbw_by_size`` (bytes → GB/s).
    ``device_type="cpu"`` gives the report a CPU run writes."""
    env = Environment(
        hostname="node-0", cpu_count=192, platform="Linux-x86_64", python_version="3.11.7",
        torch_version="2.5.1+cu124", cuda_version="12.4", nccl_version="2.21.5",
        driver_version="550.54.15", device_type=device_type, gpu_model=gpu_model,
        gpu_count=8 if device_type == "cuda" else 0, gpu_memory_bytes=85_520_809_984,
        compute_capability="9.0", sm_clock_mhz=1980, sm_clock_max_mhz=1980,
        memory_clock_mhz=2619, memory_clock_max_mhz=2619, cloud="aws",
        instance_type="p5.48xlarge", region="us-east-1", zone="us-east-1a", world_size=8,
        local_world_size=8, node_count=1)
    env = dataclasses.replace(env, **env_changes)
    measured = [("bf16", bf16_tflops)] + ([("fp16", fp16_tflops)] if fp16_tflops else [])

    def point(dtype: str, tflops: float) -> MatmulPoint:
        return MatmulPoint(dtype=dtype, m=8192, n=8192, k=8192,
                           seconds_median=2 * 8192**3 / (tflops * 1e12), tflops=tflops)

    matmul = MatmulSection(
        device="cuda:0", timing="cuda_events", flop_convention="2*M*N*K", warmup_iters=5,
        repeats=5, target_seconds_per_repeat=0.1, cache_bytes=52_428_800,
        cache_bytes_source="device_properties", tf32_matmul_allowed=False,
        cudnn_tf32_allowed=True, float32_matmul_precision="highest",
        dtypes=(*(MatmulDtype(dtype=d, status="measured", best_tflops=t,
                              best_shape=(8192, 8192, 8192)) for d, t in measured),
                MatmulDtype(dtype="fp8_e4m3", status="skipped", reason="not selected")),
        points=tuple(point(d, t) for d, t in measured))
    memory = MemorySection(device="cuda:0", timing="cuda_events", byte_convention="2*N", points=(
        BandwidthPoint(name="device_copy", status="measured", size_bytes=2**30,
                       counted_bytes=2**31, seconds_median=0.00072, gb_per_s=2982.6),))
    collectives = CollectivesSection(
        backend="nccl", status="measured", world_size=8, local_world_size=8, node_count=1,
        timeout_seconds=120.0, timing="cuda_events", series=(
            CollectiveSeries(op="all_reduce", scope="intra_node", group_size=8,
                             status="measured", implementation="torch.distributed.all_reduce",
                             points=tuple(CollectivePoint(
                                 size_bytes=s, seconds_median=s / (bw * 1e9) * BUSBW_TO_ALGBW,
                                 algbw_gb_per_s=bw / BUSBW_TO_ALGBW, busbw_gb_per_s=bw)
                                 for s, bw in busbw_by_size)),))
    return ProbeReport(schema_version=SCHEMA_VERSION, tool_version="0.1.0",
                       created_utc=created_utc, quick=True, duration_seconds=61.5,
                       environment=env, matmul=matmul, memory=memory, collectives=collectives)
