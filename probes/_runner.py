"""Run the probes in order, each isolated, gather every rank's figures, and write one report.

Under torchrun (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE set) every rank runs every probe
on its own GPU at the same time, so matmul and memory see the power and thermals of a busy node.
At the end every rank's summary and errors are gathered to rank 0 (probes._gather), which
writes the report: its own detailed points plus every GPU's figures and their spread. The
process group (NCCL on CUDA, gloo on CPU) is initialised only when WORLD_SIZE > 1, with
``timeout_seconds`` so a missing peer fails with a message instead of hanging; on CUDA the NCCL
INFO log is routed to a file first (probes._nccl_log) so the report can say which transport
each collective used. A probe that raises is recorded in ``errors`` and the next one runs.

Default time budget of a full run on one 8 x H100/H200 node (all ranks in parallel):

- start-up: import torch, CUDA context, process group: ~10-20 s.
- environment: nvidia-smi twice and the metadata service (4 requests x 0.3 s at worst): ~2 s.
- matmul: clock-settling warm-up 15-45 s (probes._warmup); then per point (shape x layout)
  buffer set-up, 5 + 5 warm-up calls, 10 repeats of ~50 ms: ~0.7 s. bf16 and fp16 sweep 9
  shapes x 2 layouts (~13 s each), the two fp8 modes 9 shapes in one layout (~7 s each, plus
  a 4096^3 accuracy check), fp32 and tf32 2 shapes x 2 layouts (~3 s each; fp32 without TF32
  at ~50 TFLOP/s is ~25 ms per 8192^3 call). Total ~60-90 s.
- memory: copy of 1 GiB and triad of 3 x 1 GiB, 10 repeats of ~50 ms each; H2D/D2H of
  256 MiB pinned and pageable plus pinned allocation: ~8 s.
- collectives: 3 ops x 11 sizes (1 KiB ... 1 GiB, x4); 5+20 iterations up to 64 MiB, 2+10
  above; NCCL communicator set-up ~5-10 s on one node; across nodes the world scope adds the
  same again at network speed: ~15-30 s.
- gather: one all_gather_object of a few KB per rank: < 1 s.
- Total: ~2-2.5 minutes on one node.

``quick`` uses 2 matmul shapes in one layout, a 3-10 s warm-up, 3 repeats, a quarter of the
memory sizes and 6 collective sizes: ~40 s on a GPU node after start-up, a few seconds on CPU.
Quick reports are for checking the set-up; the planner never calibrates from them.
"""

from __future__ import annotations

import datetime as dt
import difflib
import importlib.metadata
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from probes._fit import progress
from probes._report_io import check_report_path
from probes._rescue import write_or_rescue
from probes._schema import SCHEMA_VERSION, ProbeFailure, ProbeReport, ProbeSetupError
from probes._topology import Topology, topology_from_env

if TYPE_CHECKING:
    from probes._nccl_log import LogCapture

PROBE_NAMES: tuple[str, ...] = ("environment", "matmul", "memory", "collectives")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeConfig:
    """What to run. ``None`` sizes mean the defaults for the device and mode."""

    quick: bool = False
    device: str = "auto"  # auto | cpu | cuda
    timeout_seconds: float = 120.0
    probes: tuple[str, ...] = PROBE_NAMES  # the environment runs always (_with_environment)
    dtypes: tuple[str, ...] | None = None
    matmul_shapes: tuple[tuple[int, int, int], ...] | None = None
    collective_sizes_bytes: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        # The API's own checks (the command line's bounds are in probes.cli.check_args): what
        # would fail minutes into a run, or never end, fails here.
        unknown = [p for p in self.probes if p not in PROBE_NAMES]
        if unknown or not self.probes:
            close = difflib.get_close_matches(str(unknown[0]), PROBE_NAMES, n=3) \
                if unknown else []
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"unknown probe(s) {unknown or '(none)'}{hint}; known: "
                             f"{', '.join(PROBE_NAMES)}")
        if isinstance(self.timeout_seconds, bool) or not isinstance(
                self.timeout_seconds, int | float) or not (
                math.isfinite(self.timeout_seconds) and self.timeout_seconds > 0):
            raise ValueError(f"timeout_seconds must be a finite number > 0, got "
                             f"{self.timeout_seconds!r}")
        for name, values in (("collective_sizes_bytes", self.collective_sizes_bytes),
                             ("matmul_shapes", self.matmul_shapes)):
            flat = [] if values is None else [
                v for item in values for v in (item if isinstance(item, tuple) else (item,))]
            if values is not None and (not values or not all(
                    isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in flat)):
                raise ValueError(f"{name} must hold whole numbers > 0, got {values!r}")


@dataclass(slots=True, kw_only=True)
class _Context:
    config: ProbeConfig
    device: Any  # torch.device
    topo: Topology
    failures: list[ProbeFailure] = field(default_factory=list)
    nccl_log: LogCapture | None = None
    nccl_env: tuple[tuple[str, str], ...] = ()


def _tool_version() -> str:
    try:
        return importlib.metadata.version("gpuplan")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def _environment(ctx: _Context) -> Any:
    from probes import _environment
    from probes._timing import smi_gpu_id

    return _environment.collect_environment(
        device_type=ctx.device.type, world_size=ctx.topo.world_size,
        local_world_size=ctx.topo.local_world_size, query_metadata=ctx.topo.rank == 0,
        gpu_id=smi_gpu_id(ctx.device), nccl_env=ctx.nccl_env)


def _warm_up(ctx: _Context, dtypes: tuple[str, ...], shapes: tuple) -> Any:
    """Settle the clocks on the largest shape, in bf16 if asked for, else the first runnable
    dtype (tf32 needs settings the sweep sets itself)."""
    from probes import _matmul, _warmup
    from probes._smi import gpu_telemetry
    from probes._timing import smi_gpu_id

    device = ctx.device
    order = sorted(dtypes, key=lambda d: d != "bf16")  # bf16 first when it is asked for
    runnable = [d for d in order if _matmul.skip_reason(d, device) is None and d != "tf32"]
    if not runnable:
        return None
    dtype = runnable[0]
    shape = max(shapes, key=lambda s: s[0] * s[1] * s[2])
    cache, _ = _matmul.cache_bytes(device)
    sets = _matmul.buffer_sets(_matmul._bytes_per_set(dtype, shape), cache)
    call = _matmul._make_call(dtype, shape, sets, device, "nt")
    if device.type != "cuda":
        lo, hi, window = _warmup.CPU_WARMUP_QUICK if ctx.config.quick else _warmup.CPU_WARMUP
    else:
        lo, hi, window = _warmup.GPU_WARMUP_QUICK if ctx.config.quick else _warmup.GPU_WARMUP
    gpu = smi_gpu_id(device)
    sample = (lambda: gpu_telemetry(gpu, sampled="under_load")) if device.type == "cuda" \
        else None
    settled = _warmup.settle(call, 2.0 * shape[0] * shape[1] * shape[2], device, dtype=dtype,
                             shape=shape, min_seconds=lo, max_seconds=hi,
                             window_seconds=window, sample=sample)
    del call
    if device.type == "cuda":
        import torch

        torch.cuda.empty_cache()
    return settled


def _matmul(ctx: _Context) -> Any:
    from probes import _matmul
    from probes._schema import LAYOUTS

    q, gpu = ctx.config.quick, ctx.device.type == "cuda"
    custom = ctx.config.matmul_shapes is not None
    shapes = ctx.config.matmul_shapes or (
        (_matmul.GPU_SHAPES_QUICK if q else _matmul.GPU_SHAPES) if gpu
        else (_matmul.CPU_SHAPES_QUICK if q else _matmul.CPU_SHAPES))
    dtypes = ctx.config.dtypes or _matmul.DTYPES
    settled = _warm_up(ctx, dtypes, shapes)
    return _matmul.run_matmul_probe(
        ctx.device, shapes=shapes, dtypes=dtypes,
        warmup_iters=2 if q else 5, repeats=3 if q else 10,
        target_seconds_per_repeat=0.02 if q else 0.05,
        dtype_budget_seconds=10.0 if q else 60.0,
        layouts=("nt",) if q else LAYOUTS, sweep="custom" if custom else "default",
        warmup=settled)


def _memory(ctx: _Context) -> Any:
    from probes import _memory

    q = ctx.config.quick
    return _memory.run_memory_probe(ctx.device, quick=q, repeats=3 if q else 10,
                                    target_seconds_per_repeat=0.01 if q else 0.05)


def _collectives(ctx: _Context) -> Any:
    from probes import _collectives

    q, gpu = ctx.config.quick, ctx.device.type == "cuda"
    sizes = ctx.config.collective_sizes_bytes or (
        (_collectives.GPU_SIZES_QUICK if q else _collectives.GPU_SIZES) if gpu
        else (_collectives.CPU_SIZES_QUICK if q else _collectives.CPU_SIZES))
    _barrier(ctx)
    return _collectives.run_collectives_probe(ctx.device, ctx.topo, sizes=sizes, quick=q,
                                              timeout_seconds=ctx.config.timeout_seconds,
                                              nccl_log=ctx.nccl_log)


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
    # OverflowError: timedelta of a timeout beyond its range (1e300 s), from the API.
    except (RuntimeError, ValueError, TimeoutError, OverflowError) as exc:
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
    process group that does not form), a ReportWriteError (a ProbesError) when ``out`` cannot
    be written, before anything is measured. Every rank returns a report; rank 0's holds every
    rank's figures and errors.
    """
    from probes._environment import recorded_env
    from probes._timing import resolve_device

    config = config or ProbeConfig()
    started = time.perf_counter()
    created_utc = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    topo = topology_from_env()
    if out is not None and topo.rank == 0:
        # A report path that cannot be written fails now, not after minutes of measuring
        # (ReportWriteError); write_report_atomic checks again when it writes.
        check_report_path(out)
    device = resolve_device(config.device, local_rank=topo.local_rank)
    ctx = _Context(config=config, device=device, topo=topo, nccl_env=recorded_env())
    if device.type == "cuda" and topo.world_size > 1 and "collectives" in config.probes:
        from probes._nccl_log import start_capture

        ctx.nccl_log = start_capture()  # before NCCL reads its environment
    try:
        created_group = _init_process_group(topo, device, config.timeout_seconds)
        sections: dict[str, Any] = {}
        try:
            started = time.perf_counter()
            for name in _with_environment(config.probes):
                progress(name, rank=topo.rank, started=started)
                try:
                    sections[name] = _PROBES[name](ctx)
                except Exception as exc:  # one probe's failure must not stop the others
                    text = str(exc).strip().splitlines()
                    ctx.failures.append(ProbeFailure(probe=name, error_type=type(exc).__name__,
                                                     message=text[0] if text else "",
                                                     rank=topo.rank))
            progress("gathering every rank's figures", rank=topo.rank, started=started)
            ranks, errors = _gather(ctx, sections)
        finally:
            if created_group:
                _shutdown(ctx)
    finally:
        if ctx.nccl_log is not None:
            ctx.nccl_log.cleanup()
    from probes._gather import with_spreads

    if ranks:
        sections["matmul"], sections["memory"] = with_spreads(
            sections.get("matmul"), sections.get("memory"), ranks)
    sections = {k: v for k, v in sections.items() if v is not None}
    report = ProbeReport(
        schema_version=SCHEMA_VERSION, tool_version=_tool_version(), created_utc=created_utc,
        quick=config.quick, duration_seconds=time.perf_counter() - started,
        errors=errors, ranks=ranks, **sections)
    if out is not None and topo.rank == 0:
        write_or_rescue(report, Path(out))  # a full disk now must not lose the run
    return report


def _with_environment(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` with the environment first, whatever --probes chose: a report without it
    can never calibrate (what it measured is unknown), and it costs ~2 s of a run."""
    return ("environment", *(n for n in names if n != "environment"))


def _gather(ctx: _Context, sections: dict[str, Any]) -> tuple[tuple, tuple]:
    """(every rank's RankResult, every rank's failures), on every rank."""
    import socket

    import torch.distributed as dist

    from probes._gather import merge_failures, rank_result

    gpu_name = gpu_uuid = None
    if ctx.device.type == "cuda":
        import torch

        props = torch.cuda.get_device_properties(ctx.device)
        gpu_name, gpu_uuid = props.name, str(getattr(props, "uuid", "") or "") or None
    mine = rank_result(rank=ctx.topo.rank, local_rank=ctx.topo.local_rank,
                       hostname=socket.gethostname(), device=str(ctx.device),
                       gpu_name=gpu_name, gpu_uuid=gpu_uuid, matmul=sections.get("matmul"),
                       memory=sections.get("memory"))
    parts: list[Any] = [(mine, tuple(ctx.failures))]
    if dist.is_initialized() and ctx.topo.world_size > 1:
        parts = [None] * ctx.topo.world_size
        try:
            dist.all_gather_object(parts, (mine, tuple(ctx.failures)))
        except Exception as exc:  # a peer died: keep what this rank has, say so
            text = str(exc).strip().splitlines()
            ctx.failures.append(ProbeFailure(
                probe="gather", error_type=type(exc).__name__, rank=ctx.topo.rank,
                message=(text[0] if text else "") + " (only this rank's figures are kept)"))
            parts = [(mine, tuple(ctx.failures))]
    parts = [p for p in parts if p is not None]
    ranks = tuple(sorted((p[0] for p in parts), key=lambda r: r.rank))
    return ranks, merge_failures([p[1] for p in parts])


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
