"""Fixtures for the app's tests: the app's path, fresh Streamlit caches, and a probe report.

The probe report is built from the probe schema's own records and serialised with
``probes.report_to_json``, so it has exactly the shape `python -m probes` writes on a GPU
instance (one p5.48xlarge node; bf16/fp16 matmul, a device copy, an intra-node all-reduce
over three message sizes). The numbers are plausible for an H100 SXM, not measured.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"


@pytest.fixture(autouse=True)
def _app_environment(monkeypatch):
    """Pages import ``app_pages`` from the checkout (streamlit run puts it on sys.path), and
    every test starts with empty st.cache_data caches."""
    import streamlit as st

    monkeypatch.syspath_prepend(str(ROOT))
    st.cache_data.clear()
    yield
    st.cache_data.clear()


def probe_report_json(*, bf16_tflops: float = 700.0, device_type: str = "cuda") -> bytes:
    from probes import SCHEMA_VERSION, ProbeReport, report_to_json
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

    env = Environment(
        hostname="node-0", cpu_count=192, platform="Linux-x86_64", python_version="3.11.7",
        torch_version="2.5.1+cu124", cuda_version="12.4", nccl_version="2.21.5",
        driver_version="550.54.15", device_type=device_type, gpu_model="NVIDIA H100 80GB HBM3",
        gpu_count=8, gpu_memory_bytes=85_520_809_984, compute_capability="9.0",
        sm_clock_mhz=1980, sm_clock_max_mhz=1980, memory_clock_mhz=2619,
        memory_clock_max_mhz=2619, cloud="aws", instance_type="p5.48xlarge",
        region="us-east-1", zone="us-east-1a", world_size=8, local_world_size=8, node_count=1)

    def point(dtype: str, tflops: float) -> MatmulPoint:
        return MatmulPoint(dtype=dtype, m=8192, n=8192, k=8192,
                           seconds_median=2 * 8192**3 / (tflops * 1e12), tflops=tflops)

    matmul = MatmulSection(
        device="cuda:0", timing="cuda_events", flop_convention="2*M*N*K", warmup_iters=5,
        repeats=5, target_seconds_per_repeat=0.1, cache_bytes=52_428_800,
        cache_bytes_source="device_properties", tf32_matmul_allowed=False,
        cudnn_tf32_allowed=True, float32_matmul_precision="highest",
        dtypes=(MatmulDtype(dtype="bf16", status="measured", best_tflops=bf16_tflops,
                            best_shape=(8192, 8192, 8192)),
                MatmulDtype(dtype="fp16", status="measured", best_tflops=bf16_tflops * 1.01,
                            best_shape=(8192, 8192, 8192)),
                MatmulDtype(dtype="fp8_e4m3", status="skipped", reason="not selected")),
        points=(point("bf16", bf16_tflops), point("fp16", bf16_tflops * 1.01)))
    memory = MemorySection(device="cuda:0", timing="cuda_events", byte_convention="2*N", points=(
        BandwidthPoint(name="device_copy", status="measured", size_bytes=2**30,
                       counted_bytes=2**31, seconds_median=0.00072, gb_per_s=2982.6),))
    sizes = ((2**20, 95.0), (2**26, 402.0), (2**30, 481.8))
    collectives = CollectivesSection(
        backend="nccl", status="measured", world_size=8, local_world_size=8, node_count=1,
        timeout_seconds=120.0, timing="cuda_events", series=(
            CollectiveSeries(op="all_reduce", scope="intra_node", group_size=8,
                             status="measured", implementation="torch.distributed.all_reduce",
                             points=tuple(CollectivePoint(
                                 size_bytes=s, seconds_median=s / (bw * 1e9) * 1.75,
                                 algbw_gb_per_s=bw / 1.75, busbw_gb_per_s=bw)
                                 for s, bw in sizes)),))
    report = ProbeReport(schema_version=SCHEMA_VERSION, tool_version="0.1.0",
                         created_utc="2026-01-31T12:00:00Z", quick=True, duration_seconds=61.5,
                         environment=env, matmul=matmul, memory=memory,
                         collectives=collectives)
    return report_to_json(report).encode("utf-8")


@pytest.fixture
def probe_report() -> bytes:
    return probe_report_json()

