"""Probe reports built from the probe schema's own records, for tests of what reads them (the
planner's ingest and calibration rules, the CLI, the app's Probes page). Shape: what
`python -m probes` (schema 2) writes on p5.48xlarge nodes — a full, non-quick run with every
rank gathered — trimmed to what the readers use. The numbers are plausible for H100 SXM, not
measured. Keyword arguments change one fact at a time (quick mode, fewer GPUs, several nodes,
the network NCCL used, an impossible figure)."""

from __future__ import annotations

import dataclasses
import json

from probes import SCHEMA_VERSION, ProbeReport, report_to_json
from probes._gather import rank_result, with_spreads
from probes._nccl_log import is_rdma
from probes._schema import (
    BandwidthPoint,
    CollectivePoint,
    CollectiveSeries,
    CollectivesSection,
    Environment,
    GpuTelemetry,
    MatmulDtype,
    MatmulPoint,
    MatmulSection,
    MemorySection,
    NamedValue,
    ProbeFailure,
    RankResult,
    WorkloadSection,
    WorkloadSplit,
)
from probes._stats import spread

BUSBW_TO_ALGBW = 1.75  # all-reduce over 8 ranks: busbw = algbw · 2(n−1)/n


def _series(scope: str, n: int, busbw_by_size, transport: str, net: str | None):
    factor = 2 * (n - 1) / n
    return CollectiveSeries(
        op="all_reduce", scope=scope, group_size=n, status="measured",
        implementation="torch.distributed.all_reduce", transport=transport, net=net,
        rdma=None if net is None else is_rdma(net), transport_source="NCCL_DEBUG log",
        points=tuple(CollectivePoint(size_bytes=s, seconds_median=s / (bw * 1e9) * factor,
                                     algbw_gb_per_s=bw / factor, busbw_gb_per_s=bw,
                                     busbw_p10_gb_per_s=bw * 0.97, busbw_p90_gb_per_s=bw * 1.01,
                                     iterations=10)
                     for s, bw in busbw_by_size))


def p5_environment(*, device_type: str = "cuda",
                   gpu_model: str | None = "NVIDIA H100 80GB HBM3", **env_changes) -> Environment:
    """One p5.48xlarge node (8 x H100 SXM) as the environment probe records it."""
    cuda = device_type == "cuda"
    env = Environment(
        hostname="node-0", cpu_count=192, platform="Linux-x86_64", python_version="3.11.7",
        torch_version="2.5.1+cu124", cuda_version="12.4", nccl_version="2.21.5",
        driver_version="550.54.15", device_type=device_type, gpu_model=gpu_model,
        gpu_count=8 if cuda else 0, gpu_memory_bytes=85_520_809_984,
        compute_capability="9.0", sm_clock_mhz=1980, sm_clock_max_mhz=1980,
        memory_clock_mhz=2619, memory_clock_max_mhz=2619, cloud="aws",
        instance_type="p5.48xlarge", region="us-east-1", zone="us-east-1a", world_size=8,
        local_world_size=8, node_count=1,
        idle=GpuTelemetry(sampled="idle", power_limit_w=700.0, power_default_limit_w=700.0,
                          mig_mode="Disabled", ecc_mode="Enabled") if cuda else None,
        gpu_count_smi=8 if cuda else None, nccl_env=(("NCCL_DEBUG", "INFO"),))
    return dataclasses.replace(env, **env_changes)


def h100_report(*, bf16_tflops: float = 650.0, fp16_tflops: float | None = None,
                device_type: str = "cuda", gpu_model: str | None = "NVIDIA H100 80GB HBM3",
                created_utc: str = "2026-01-31T12:00:00Z",
                busbw_by_size: tuple[tuple[int, float], ...] = ((2**30, 481.8),),
                quick: bool = False, copy_gb_per_s: float = 2982.6,
                fp8_tflops: float | None = None, fp8_rel_error: float = 0.004,
                world_busbw_by_size: tuple[tuple[int, float], ...] = ((2**30, 370.0),),
                net: str = "IB", schema_version: int = SCHEMA_VERSION,
                **env_changes) -> ProbeReport:
    """A p5.48xlarge report: matmul at ``bf16_tflops`` (and ``fp16_tflops``, ``fp8_tflops``)
    on every GPU, a device copy, an intra-node all-reduce with ``busbw_by_size`` (bytes ->
    GB/s) and, with ``node_count`` > 1, a world all-reduce over ``net``.
    ``device_type="cpu"`` gives the report a CPU run writes; ``world_size=2,
    local_world_size=2`` a run on 2 of the node's 8 GPUs."""
    cuda = device_type == "cuda"
    env = p5_environment(device_type=device_type, gpu_model=gpu_model, **env_changes)
    measured = [("bf16", bf16_tflops)] + ([("fp16", fp16_tflops)] if fp16_tflops else []) \
        + ([("fp8_e4m3", fp8_tflops)] if fp8_tflops else [])
    device = "cuda:0" if cuda else "cpu"

    def point(dtype: str, tflops: float) -> MatmulPoint:
        return MatmulPoint(dtype=dtype, m=8192, n=8192, k=8192, layout="nt",
                           # an impossible 1e308 TFLOP/s would underflow to 0 s: keep it > 0
                           seconds_median=max(2 * 8192**3 / (tflops * 1e12), 1e-300),
                           tflops=tflops,
                           tflops_p10=tflops * 0.99, tflops_p90=tflops * 1.005)

    def summary(dtype: str, tflops: float) -> MatmulDtype:
        fp8 = dtype.startswith("fp8")
        return MatmulDtype(
            dtype=dtype, status="measured", best_tflops=tflops, best_shape=(8192, 8192, 8192),
            best_layout="nt", median_tflops=tflops * 0.95, points_measured=18,
            accumulation="split (full precision)" if fp8 else None,
            check_reference="bf16 matmul of the same fp8 inputs at 4096x4096x4096"
            if fp8 else None,
            check_rel_error=fp8_rel_error if fp8 else None,
            check_max_rel_error=0.05 if fp8 else None,
            check_passed=fp8_rel_error <= 0.05 if fp8 else None)

    skipped = tuple(MatmulDtype(dtype=d, status="skipped", reason="not selected")
                    for d in ("fp8_e4m3",) if not fp8_tflops)
    matmul = MatmulSection(
        device=device, timing="cuda_events", flop_convention="2*M*N*K", warmup_iters=5,
        repeats=10, target_seconds_per_repeat=0.05, cache_bytes=52_428_800,
        cache_bytes_source="device_properties", tf32_matmul_allowed=False,
        cudnn_tf32_allowed=True, float32_matmul_precision="highest",
        dtypes=(*(summary(d, t) for d, t in measured), *skipped),
        points=tuple(point(d, t) for d, t in measured), sweep="default", layouts=("nn", "nt"),
        warmup_dtype="bf16", warmup_shape=(8192, 28672, 8192), warmup_seconds=21.0,
        warmup_settled=True, burst_tflops=bf16_tflops * 1.03, sustained_tflops=bf16_tflops)
    memory = MemorySection(device=device, timing="cuda_events", byte_convention="2*N", points=(
        BandwidthPoint(name="device_copy", status="measured", size_bytes=2**30,
                       counted_bytes=2**31, seconds_median=2**31 / (copy_gb_per_s * 1e9),
                       gb_per_s=copy_gb_per_s, gb_per_s_p10=copy_gb_per_s * 0.99,
                       gb_per_s_p90=copy_gb_per_s * 1.005),))
    local = env.local_world_size
    series = [_series("intra_node", local, busbw_by_size, "NVLS+P2P/CUMEM", None)] \
        if local > 1 else []
    if env.node_count > 1:
        series.append(_series("world", env.world_size, world_busbw_by_size,
                              f"NET/{net}/GDRDMA+P2P/CUMEM", net))
    collectives = CollectivesSection(
        backend="nccl" if cuda else "gloo", status="measured", world_size=env.world_size,
        local_world_size=local, node_count=env.node_count, timeout_seconds=120.0,
        timing="cuda_events", series=tuple(series)) if env.world_size > 1 else \
        CollectivesSection(backend=None, status="skipped", reason="world size 1")
    ranks = tuple(
        rank_result(rank=r, local_rank=r % local, hostname=f"node-{r // local}",
                    device=f"cuda:{r % local}" if cuda else "cpu",
                    gpu_name=gpu_model if cuda else None, gpu_uuid=None, matmul=matmul,
                    memory=memory)
        for r in range(env.world_size))
    matmul, memory = with_spreads(matmul, memory, ranks)
    return ProbeReport(schema_version=schema_version, tool_version="0.1.0",
                       created_utc=created_utc, quick=quick, duration_seconds=131.5,
                       environment=env, matmul=matmul, memory=memory, collectives=collectives,
                       ranks=ranks)


# Llama-3 8B's layer (hidden 4096, 32 heads, 8 KV heads, SwiGLU FFN 14336) at 8,192 tokens,
# the shape `gpuplan probe workload --model llama3-8b` runs. The planner models it at about
# 25 ms forward + backward on one H100 SXM under the fsdp profile and its FLOPs take 12.5 ms
# at the datasheet peak, so the default 30 ms is a plausible eager-PyTorch measurement.
LLAMA3_8B_LAYER = {"hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
                   "ffn_hidden": 14336, "gated": True, "seq_len": 8192, "micro_batch": 1,
                   "precision": "bf16", "recompute": "none"}


def h100_workload_report(*, layer_ms: float = 30.0, activation_mib: float | None = 1400.0,
                         framework: str = "fsdp", quick: bool = False, tp: int = 1,
                         status: str = "measured", rank_ms: tuple[float, ...] | None = None,
                         failed_rank: int | None = None,
                         created_utc: str = "2026-02-01T12:00:00Z", shape: dict | None = None,
                         **env_changes) -> ProbeReport:
    """What `torchrun --nproc-per-node 8 -m probes workload --model llama3-8b` writes on a
    p5.48xlarge: a full node, every rank timing ``layer_ms`` per layer (or ``rank_ms`` per
    rank) with ``activation_mib`` of activations per layer. ``shape`` changes the layer
    (keys of LLAMA3_8B_LAYER, experts...); ``failed_rank`` makes that rank's probe fail."""
    env = p5_environment(**env_changes)
    layer = {**LLAMA3_8B_LAYER, **(shape or {})}
    n = env.world_size
    per_rank = rank_ms or (layer_ms,) * n
    layers = 4
    act = None if activation_mib is None else activation_mib * 2**20
    ranks = tuple(RankResult(
        rank=r, local_rank=r % env.local_world_size, hostname="node-0", device=f"cuda:{r}",
        gpu_name=env.gpu_model,
        workload=() if r == failed_rank else (
            NamedValue(name="layer_fwd_bwd_seconds", value=ms / 1e3),
            NamedValue(name="layer_step_seconds", value=ms * 1.1 / 1e3),
            *((NamedValue(name="layer_activation_bytes", value=act),) if act else ())))
        for r, ms in zip(range(n), per_rank, strict=True))
    seconds = [v.value for r in ranks for v in r.workload if v.name == "layer_fwd_bwd_seconds"]
    measured = status == "measured"
    section = WorkloadSection(
        status=status, reason=None if measured else "CUDA out of memory", model="llama3-8b",
        framework=framework, precision_requested=layer["precision"], model_layers=32,
        layers=layers, layers_rule=f"{layers} layer(s): ... fit in 70% of the free memory",
        tp=tp, dp=n // tp, device="cuda", timing="cuda_events", attention_backend="flash",
        optimizer="AdamW (fused) on fp32 master weights", warmup_steps=2 if quick else 5,
        steps=5 if quick else 30, quick=quick,
        step_seconds=layers * per_rank[0] * 1.1 / 1e3 if measured else None,
        fwd_bwd_seconds=layers * per_rank[0] / 1e3 if measured else None,
        layer_fwd_bwd_seconds=per_rank[0] / 1e3 if measured else None,
        layer_fwd_bwd_seconds_p10=per_rank[0] * 0.99 / 1e3 if measured else None,
        layer_fwd_bwd_seconds_p90=per_rank[0] * 1.02 / 1e3 if measured else None,
        layer_step_seconds=per_rank[0] * 1.1 / 1e3 if measured else None,
        layer_activation_bytes=act if measured else None,
        layer_saved_bytes=act * 0.95 if measured and act else None,
        split=WorkloadSplit(source="torch.profiler: ...", matmul_seconds=per_rank[0] * 0.6e-3,
                            attention_seconds=per_rank[0] * 0.25e-3,
                            other_seconds=per_rank[0] * 0.15e-3,
                            optimizer_seconds=per_rank[0] * 0.1e-3) if measured else None,
        across_ranks=spread(seconds, [r.rank for r in ranks if r.workload]) if seconds
        else None, **layer)
    errors = () if failed_rank is None and measured else (ProbeFailure(
        probe="workload", error_type="OutOfMemoryError", message="CUDA out of memory",
        rank=failed_rank or 0),)
    return ProbeReport(schema_version=SCHEMA_VERSION, tool_version="0.1.0",
                       created_utc=created_utc, quick=quick, duration_seconds=75.0,
                       environment=env, workload=section, errors=errors, ranks=ranks)


# What a report refused as edited says (probes/_consistency.py), pinned as the user reads it.
EDITED = "the report was edited. To fix: re-run the probes"


def by_kind(report) -> dict:
    """A report's figures keyed by (kind, name), as the calibration rules see them."""
    from probes import report_figures

    return {(f.kind, f.name): f for f in report_figures(report)}


def report_data_with(report, path, value) -> dict:
    """``report``'s JSON, decoded, with the field at ``path`` set to ``value`` (which need not
    be valid): ``path`` as keys and list indexes, ("ranks", 0, "rank"), or dotted,
    "ranks.0.rank"."""
    data = json.loads(report_to_json(report))
    keys = ([int(k) if k.isdigit() else k for k in path.split(".")] if isinstance(path, str)
            else list(path))
    *parents, last = keys
    node = data
    for key in parents:
        node = node[key]
    node[last] = value
    return data


def unknown_gpu_data(report, **environment) -> dict:
    """``report``'s JSON, decoded, as a GPU the catalog does not know ("Foo GPU", in the
    environment and on every rank) with no instance type or cloud to tell it by; further
    ``environment`` fields set as given."""
    data = json.loads(report_to_json(report))
    data["environment"].update(gpu_model="Foo GPU", instance_type=None, cloud=None,
                               **environment)
    for r in data["ranks"]:
        r["gpu_name"] = "Foo GPU"
    return data
