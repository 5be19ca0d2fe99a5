"""Fixtures for the planner's tests: the packaged catalog, and probe reports built from the
probe schema's own records (the shape `python -m probes` writes, trimmed to what the planner
reads)."""

from __future__ import annotations

import dataclasses

import pytest

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


@pytest.fixture
def catalog():
    from catalog import load_catalog

    return load_catalog()


def h100_report(*, bf16_tflops: float = 650.0, device_type: str = "cuda",
                gpu_model: str | None = "NVIDIA H100 80GB HBM3",
                created_utc: str = "2026-01-31T12:00:00Z", **env_changes) -> ProbeReport:
    """A one-node p5.48xlarge report: bf16 matmul measured at ``bf16_tflops``, a device copy
    and an intra-node all-reduce. ``device_type="cpu"`` gives the report a CPU run writes."""
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
    seconds = 2 * 8192**3 / (bf16_tflops * 1e12)
    point = MatmulPoint(dtype="bf16", m=8192, n=8192, k=8192, seconds_median=seconds,
                        tflops=bf16_tflops)
    matmul = MatmulSection(
        device="cuda:0", timing="cuda_events", flop_convention="2*M*N*K", warmup_iters=5,
        repeats=5, target_seconds_per_repeat=0.1, cache_bytes=52_428_800,
        cache_bytes_source="device_properties", tf32_matmul_allowed=False,
        cudnn_tf32_allowed=True, float32_matmul_precision="highest",
        dtypes=(MatmulDtype(dtype="bf16", status="measured", best_tflops=bf16_tflops,
                            best_shape=(8192, 8192, 8192)),
                MatmulDtype(dtype="fp8_e4m3", status="skipped", reason="not selected")),
        points=(point,))
    memory = MemorySection(device="cuda:0", timing="cuda_events", byte_convention="2*N", points=(
        BandwidthPoint(name="device_copy", status="measured", size_bytes=2**30,
                       counted_bytes=2**31, seconds_median=0.00072, gb_per_s=2982.6),))
    collectives = CollectivesSection(
        backend="nccl", status="measured", world_size=8, local_world_size=8, node_count=1,
        timeout_seconds=120.0, timing="cuda_events", series=(
            CollectiveSeries(op="all_reduce", scope="intra_node", group_size=8,
                             status="measured", implementation="torch.distributed.all_reduce",
                             points=(CollectivePoint(size_bytes=2**30, seconds_median=0.0039,
                                                     algbw_gb_per_s=275.3,
                                                     busbw_gb_per_s=481.8),)),))
    return ProbeReport(schema_version=SCHEMA_VERSION, tool_version="0.1.0",
                       created_utc=created_utc, quick=True, duration_seconds=61.5,
                       environment=env, matmul=matmul, memory=memory, collectives=collectives)


@pytest.fixture
def make_report():
    return h100_report
