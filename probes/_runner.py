"""Run the probes in order, each isolated, and write one report from rank 0.

Under torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE set) every rank runs every probe
on its own GPU at the same time, so matmul and memory see the power and thermals of a busy node;
the report holds rank 0's figures (its errors too). The process group (NCCL on CUDA, gloo on
CPU) is initialised only when WORLD_SIZE > 1, with ``timeout_seconds`` so a missing peer fails
with a message instead of hanging. A probe that raises is recorded in ``errors`` (type and
message) and the next one runs.

Default sizes and time budget of a full run on one 8 x H100 SXM node (all ranks in parallel):

- start-up: import torch, CUDA context, process group: ~10-20 s.
- environment: nvidia-smi and the metadata service (4 requests x 0.3 s at worst): ~1 s.
- matmul: 5 dtypes x 5 shapes (1024^3, 2048^3, 4096^3, 8192^3, 16384x8192x8192; the large ones
  are where cuBLAS reaches its peak). Per (dtype, shape): buffer set-up, 5 + 5 warm-up calls
  (the second five size the repeats), then 5 repeats of ~0.1 s each -> ~0.7 s; the slowest
  case, fp32 without TF32 (~50 TFLOP/s) at 16384x8192x8192 (2.2 TFLOP), is ~45 ms per call,
  so 10 + 5 calls, ~0.7 s. Total ~20 s.
- memory: device copy of 1 GiB (well past the 50 MiB L2), H2D/D2H of 256 MiB pinned and
  pageable, 5 repeats of ~50 ms each plus pinned allocation: ~5 s.
- collectives: 3 ops x 11 sizes (1 KiB ... 1 GiB, x4); 5+20 iterations up to 64 MiB, 2+10
  above. A 1 GiB all_reduce at ~480 GB/s busbw takes ~4 ms, so all sizes of one op are
  ~0.1 s of transfer; with NCCL communicator set-up ~5-10 s on one node. Across nodes the world
  scope adds the same again at network speed: ~10-20 s.
- Total: ~45-60 s on one node, well under the 3 minute target.

``quick`` uses 2 matmul shapes, shorter repeats, a quarter of the memory sizes and 6 collective
sizes: ~20 s on a GPU node after start-up, a few seconds on CPU.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from probes._schema import (
    SCHEMA_VERSION,
    ProbeFailure,
    ProbeReport,
    ProbeSetupError,
    write_report_atomic,
)

PROBE_NAMES: tuple[str, ...] = ("environment", "matmul", "memory", "collectives")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeConfig:
    """What to run. ``None`` sizes mean the defaults for the device and mode."""

    quick: bool = False
    device: str = "auto"  # auto | cpu | cuda
    timeout_seconds: float = 120.0
    probes: tuple[str, ...] = PROBE_NAMES
    dtypes: tuple[str, ...] | None = None
    matmul_shapes: tuple[tuple[int, int, int], ...] | None = None
    collective_sizes_bytes: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        unknown = [p for p in self.probes if p not in PROBE_NAMES]
        if unknown:
            raise ValueError(f"unknown probe(s) {unknown}; known: {', '.join(PROBE_NAMES)}")
        if self.timeout_seconds <= 0:
            raise ValueError("timeout_seconds must be > 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class Topology:
    """This process's place in a torchrun job (ranks are contiguous per node)."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int

    def __post_init__(self) -> None:
        if not (0 <= self.rank < self.world_size and 0 <= self.local_rank
                and 1 <= self.local_world_size <= self.world_size):
            raise ValueError(f"inconsistent ranks {self}")

    @property
    def node_count(self) -> int:
        return max(1, self.world_size // self.local_world_size)


@dataclass(slots=True, kw_only=True)
class _Context:
    config: ProbeConfig
    device: Any  # torch.device
    topo: Topology
    failures: list[ProbeFailure] = field(default_factory=list)


def _tool_version() -> str:
    try:
        return importlib.metadata.version("gpuplan")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def topology_from_env(environ: Mapping[str, str] | None = None) -> Topology:
    """Ranks from torchrun's environment; a plain run is rank 0 of 1."""
    env = os.environ if environ is None else environ
    try:
        world = int(env.get("WORLD_SIZE", "1"))
        return Topology(rank=int(env.get("RANK", "0")), world_size=world,
                        local_rank=int(env.get("LOCAL_RANK", "0")),
                        local_world_size=int(env.get("LOCAL_WORLD_SIZE", str(world))))
    except ValueError as exc:
        raise ProbeSetupError(f"bad torchrun environment ({exc}). To fix: launch with torchrun "
                              "or unset RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE.") from exc


def _environment(ctx: _Context) -> Any:
    from probes import _environment

    return _environment.collect_environment(
        device_type=ctx.device.type, world_size=ctx.topo.world_size,
        local_world_size=ctx.topo.local_world_size, query_metadata=ctx.topo.rank == 0)


def _matmul(ctx: _Context) -> Any:
    from probes import _matmul

    q, gpu = ctx.config.quick, ctx.device.type == "cuda"
    shapes = ctx.config.matmul_shapes or (
        (_matmul.GPU_SHAPES_QUICK if q else _matmul.GPU_SHAPES) if gpu
        else (_matmul.CPU_SHAPES_QUICK if q else _matmul.CPU_SHAPES))
    return _matmul.run_matmul_probe(
        ctx.device, shapes=shapes, dtypes=ctx.config.dtypes or _matmul.DTYPES,
        warmup_iters=2 if q else 5, repeats=3 if q else 5,
        target_seconds_per_repeat=0.02 if q else 0.1,
        dtype_budget_seconds=10.0 if q else 60.0)


def _memory(ctx: _Context) -> Any:
    from probes import _memory

    q = ctx.config.quick
    return _memory.run_memory_probe(ctx.device, quick=q, repeats=3 if q else 5,
                                    target_seconds_per_repeat=0.01 if q else 0.05)


def _collectives(ctx: _Context) -> Any:
    from probes import _collectives

    q, gpu = ctx.config.quick, ctx.device.type == "cuda"
    sizes = ctx.config.collective_sizes_bytes or (
        (_collectives.GPU_SIZES_QUICK if q else _collectives.GPU_SIZES) if gpu
        else (_collectives.CPU_SIZES_QUICK if q else _collectives.CPU_SIZES))
    _barrier(ctx)
    return _collectives.run_collectives_probe(ctx.device, ctx.topo, sizes=sizes, quick=q,
                                              timeout_seconds=ctx.config.timeout_seconds)


# The one list of probes: report field name -> function building that section.
_PROBES: dict[str, Callable[[_Context], Any]] = {
    "environment": _environment, "matmul": _matmul, "memory": _memory,
    "collectives": _collectives,
}


def _barrier(ctx: _Context) -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        if ctx.device.type == "cuda":
            dist.barrier(device_ids=[ctx.device.index])
        else:
            dist.barrier()


def _init_process_group(topo: Topology, device: Any, timeout_seconds: float) -> bool:
    import torch.distributed as dist

    if topo.world_size < 2 or dist.is_initialized():
        return False
    backend = "nccl" if device.type == "cuda" else "gloo"
    try:
        dist.init_process_group(backend=backend,
                                timeout=dt.timedelta(seconds=timeout_seconds))
    except (RuntimeError, ValueError, TimeoutError) as exc:
        first = (str(exc).splitlines()[0] if str(exc) else type(exc).__name__).rstrip(". ")
        raise ProbeSetupError(
            f"cannot start the {backend} process group for rank {topo.rank} of "
            f"{topo.world_size} within {timeout_seconds:g} s: {first}. To fix: run the same "
            "torchrun command on every node with a reachable --rdzv-endpoint, or raise "
            "--timeout-s.") from exc
    return True


def run_probes(config: ProbeConfig | None = None, *,
               out: str | os.PathLike[str] | None = None) -> ProbeReport:
    """Run the selected probes; rank 0 writes ``out`` (if given) atomically.

    Raises probes.ProbeSetupError when the run cannot start (no CUDA for --device cuda, a
    process group that does not form). Every rank returns its own report.
    """
    from probes._timing import resolve_device

    config = config or ProbeConfig()
    started = time.perf_counter()
    created_utc = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    topo = topology_from_env()
    device = resolve_device(config.device, local_rank=topo.local_rank)
    created_group = _init_process_group(topo, device, config.timeout_seconds)
    ctx = _Context(config=config, device=device, topo=topo)
    sections: dict[str, Any] = {}
    try:
        for name in config.probes:
            try:
                sections[name] = _PROBES[name](ctx)
            except Exception as exc:  # one probe's failure must not stop the others
                text = str(exc).strip().splitlines()
                ctx.failures.append(ProbeFailure(probe=name, error_type=type(exc).__name__,
                                                 message=text[0] if text else "",
                                                 rank=topo.rank))
    finally:
        if created_group:
            _shutdown(ctx)
    report = ProbeReport(
        schema_version=SCHEMA_VERSION, tool_version=_tool_version(), created_utc=created_utc,
        quick=config.quick, duration_seconds=time.perf_counter() - started,
        errors=tuple(ctx.failures), **sections)
    if out is not None and topo.rank == 0:
        write_report_atomic(report, Path(out))
    return report


def _shutdown(ctx: _Context) -> None:
    import torch.distributed as dist

    try:
        _barrier(ctx)
    except Exception as exc:  # a peer died or timed out: say so, still tear down
        ctx.failures.append(ProbeFailure(probe="shutdown", error_type=type(exc).__name__,
                                         message=str(exc).strip().split("\n")[0],
                                         rank=ctx.topo.rank))
    finally:
        dist.destroy_process_group()
