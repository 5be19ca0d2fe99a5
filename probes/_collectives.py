"""all_reduce, all_gather and reduce_scatter bandwidth over message sizes.

Conventions follow nccl-tests (doc/PERFORMANCE.md), with float32 data as its default:

- size: all_reduce, the buffer; all_gather, the gathered output (n ranks x per-rank input);
  reduce_scatter, the input (n x per-rank output). Sizes are rounded down to a multiple of
  4*n bytes so each rank holds whole float32 elements.
- algbw = size / t.  busbw = algbw * 2(n-1)/n (all_reduce), algbw * (n-1)/n (the others).
- t: each iteration is timed on its own on every rank (CUDA events around the call,
  perf_counter on CPU); an iteration's time is the slowest rank's (all_reduce MAX over the
  world, element-wise over iterations), since a collective is done when its last rank is;
  seconds_median is the median over iterations, busbw_p10/p90 the same percentiles.

Scopes: "intra_node" runs each node's local ranks as one group (all nodes at the same time);
"world" runs all ranks. On one node the two are the same group, so only intra_node is measured.
The process group must already be initialised (probes._runner does it, with a timeout).
all_gather uses all_gather_single (all_gather_into_tensor before torch renamed it) and falls back
to the list all_gather; reduce_scatter uses reduce_scatter_single / reduce_scatter_tensor, then
the list reduce_scatter, and is recorded as skipped (never emulated) when the backend has
neither. The implementation used is recorded per series.

Transport: with NCCL, each rank reads its own NCCL INFO log (probes._nccl_log) and rank 0
merges them, so every series says which transport and network its communicator used (a
cross-node series over ``NET/Socket`` is plain TCP, not the fabric). With gloo the transport
is TCP by construction.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

import torch
import torch.distributed as dist

from probes import _nccl_log
from probes._consistency import BUS_FACTOR  # one home: the checks of a report use it too
from probes._schema import CollectivePoint, CollectiveSeries, CollectivesSection
from probes._stats import median, percentile
from probes._timing import time_each, timing_name
from probes._topology import Topology

OPS: tuple[str, ...] = ("all_reduce", "all_gather", "reduce_scatter")
GPU_SIZES: tuple[int, ...] = tuple(1024 * 4**i for i in range(11))  # 1 KiB ... 1 GiB, x4
GPU_SIZES_QUICK: tuple[int, ...] = tuple(1024 * 16**i for i in range(6))  # 1 KiB ... 1 GiB
CPU_SIZES: tuple[int, ...] = tuple(1024 * 4**i for i in range(6))  # 1 KiB ... 1 MiB
CPU_SIZES_QUICK: tuple[int, ...] = (1024, 32 * 1024, 1024 * 1024)
LARGE_BYTES = 64 << 20
_UNSUPPORTED = re.compile(r"not (yet )?(supported|implemented)|unsupported|does not support",
                          re.IGNORECASE)


def iterations(size_bytes: int, *, quick: bool) -> tuple[int, int]:
    """(warm-up, timed) iterations for one message size: fewer for large messages."""
    if quick:
        return (1, 5) if size_bytes > LARGE_BYTES else (2, 10)
    return (2, 10) if size_bytes > LARGE_BYTES else (5, 20)


def bus_bandwidth(op: str, algbw: float, n: int) -> float:
    return algbw * BUS_FACTOR[op](n)


def _op_call(op: str, size: int, n: int, device: torch.device,
             group: object) -> tuple[Callable[[int], object], str, int]:
    """(call, implementation name, actual size in bytes)."""
    elems = size // 4
    if op == "all_reduce":
        buf = torch.randn(elems, device=device)
        return (lambda i: dist.all_reduce(buf, group=group)), "all_reduce", elems * 4
    per_rank = elems // n
    small = torch.randn(per_rank, device=device)
    big = torch.randn(per_rank * n, device=device)
    actual = per_rank * n * 4
    if op == "all_gather":
        ag = getattr(dist, "all_gather_single", None)  # newer name, same arguments
        name = "all_gather_single" if ag else "all_gather_into_tensor"
        ag = ag or dist.all_gather_into_tensor
        chunks = list(big.chunk(n))
        candidates = [(name, lambda i: ag(big, small, group=group)),
                      ("all_gather", lambda i: dist.all_gather(chunks, small, group=group))]
    else:
        rs = getattr(dist, "reduce_scatter_single", None)
        name = "reduce_scatter_single" if rs else "reduce_scatter_tensor"
        rs = rs or dist.reduce_scatter_tensor
        chunks = list(big.chunk(n))
        candidates = [(name, lambda i: rs(small, big, group=group)),
                      ("reduce_scatter", lambda i: dist.reduce_scatter(small, chunks,
                                                                       group=group))]
    errors = []
    for impl, call in candidates:
        try:
            call(0)  # unsupported ops raise on every rank before any data moves
        except (RuntimeError, NotImplementedError, AttributeError) as exc:
            text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            if isinstance(exc, RuntimeError) and not _UNSUPPORTED.search(text):
                raise  # a real failure (timeout, peer gone), not a missing operation
            errors.append(f"{impl}: {text}")
            continue
        return call, impl, actual
    raise NotImplementedError("; ".join(errors))


def _time_size(op: str, size: int, n: int, device: torch.device, group: object, *,
               quick: bool) -> tuple[CollectivePoint | None, str]:
    call, impl, actual = _op_call(op, size, n, device, group)
    warmup, iters = iterations(actual, quick=quick)
    for i in range(warmup):
        call(i)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    mine = torch.tensor(time_each(call, iters=iters, device=device), dtype=torch.float64,
                        device=device)
    dist.all_reduce(mine, op=dist.ReduceOp.MAX)  # over the whole world, per iteration
    seconds = [float(x) for x in mine.tolist()]
    mid = median(seconds)
    algbw = actual / mid / 1e9
    factor = BUS_FACTOR[op](n)
    point = CollectivePoint(
        size_bytes=actual, seconds_median=mid, algbw_gb_per_s=algbw,
        busbw_gb_per_s=algbw * factor,
        busbw_p10_gb_per_s=actual / percentile(seconds, 90) / 1e9 * factor,
        busbw_p90_gb_per_s=actual / percentile(seconds, 10) / 1e9 * factor,
        iterations=iters)
    return point, impl


def _series(op: str, scope: str, n: int, sizes: Sequence[int], device: torch.device,
            group: object, *, quick: bool) -> CollectiveSeries:
    points: list[CollectivePoint] = []
    impl = None
    for size in sizes:
        if size // 4 // n < 1:
            continue  # smaller than one float32 per rank
        try:
            point, impl = _time_size(op, size, n, device, group, quick=quick)
        except NotImplementedError as exc:
            return CollectiveSeries(op=op, scope=scope, group_size=n, status="skipped",
                                    reason=f"not supported by this backend: {exc}")
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
        if point is not None and any(p.size_bytes == point.size_bytes for p in points):
            continue  # --sizes 1000,1002 round to one size: timed once in the report
        points.append(point)
    if not points:
        return CollectiveSeries(op=op, scope=scope, group_size=n, status="skipped",
                                reason="no message size holds one float32 per rank")
    return CollectiveSeries(op=op, scope=scope, group_size=n, status="measured",
                            implementation=f"torch.distributed.{impl}", points=tuple(points))


def _intra_node_group(topo: Topology) -> object:
    """This node's ranks as a group; every rank must call new_group for every node."""
    mine = None
    for node in range(topo.node_count):
        ranks = list(range(node * topo.local_world_size, (node + 1) * topo.local_world_size))
        group = dist.new_group(ranks=ranks)
        if topo.rank in ranks:
            mine = group
    return mine


def run_collectives_probe(device: torch.device, topo: Topology, *, sizes: Sequence[int],
                          quick: bool = False, ops: Sequence[str] = OPS,
                          timeout_seconds: float = 0.0,
                          nccl_log: _nccl_log.LogCapture | None = None) -> CollectivesSection:
    common = {"world_size": topo.world_size, "local_world_size": topo.local_world_size,
              "node_count": topo.node_count, "timeout_seconds": timeout_seconds,
              "timing": timing_name(device)}
    if topo.world_size < 2 or not dist.is_initialized():
        return CollectivesSection(
            backend=None, status="skipped", **common,
            reason="world size 1: run under torchrun with --nproc-per-node >= 2 (or several "
                   "nodes) to measure collectives")
    backend = str(dist.get_backend())
    scopes: list[tuple[str, int, object | None, str | None]] = []
    if topo.node_count == 1:
        scopes.append(("intra_node", topo.world_size, dist.group.WORLD, None))
        scopes.append(("world", topo.world_size, None,
                       "single node: the world group is the intra_node group"))
    else:
        if topo.world_size != topo.node_count * topo.local_world_size:
            intra = (None, "nodes run different numbers of ranks; intra-node groups unknown")
        elif topo.local_world_size < 2:
            intra = (None, "one rank per node: no intra-node collective")
        else:
            intra = (_intra_node_group(topo), None)
        scopes.append(("intra_node", topo.local_world_size, *intra))
        scopes.append(("world", topo.world_size, dist.group.WORLD, None))
    series: list[CollectiveSeries] = []
    for scope, n, group, reason in scopes:
        for op in ops:
            if reason is not None:
                series.append(CollectiveSeries(op=op, scope=scope, group_size=n,
                                               status="skipped", reason=reason))
                continue
            series.append(_series(op, scope, n, sizes, device, group, quick=quick))
    series = _with_transports(series, backend, nccl_log)
    return CollectivesSection(backend=backend, status="measured", series=tuple(series), **common)


def _with_transports(series: list[CollectiveSeries], backend: str,
                     capture: _nccl_log.LogCapture | None) -> list[CollectiveSeries]:
    """Each measured series with the transport its communicator used (every rank calls)."""
    if backend == "gloo":
        return [dataclasses.replace(s, transport="gloo/TCP", net="Socket", rdma=False,
                                    transport_source="gloo backend (TCP by construction)")
                if s.status == "measured" else s for s in series]
    if backend != "nccl":
        return series
    text = capture.read_own() if capture is not None else None
    mine = _nccl_log.parse(text) if text else {}
    parts: list[dict | None] = [None] * dist.get_world_size()
    dist.all_gather_object(parts, mine)
    comms = _nccl_log.merge([p for p in parts if p])
    why = ("NCCL log not captured: " + (capture.reason or "no log file was written")
           if capture is not None else "NCCL log not captured")
    out = []
    for s in series:
        ct = comms.get(s.group_size)
        if s.status != "measured":
            out.append(s)
        elif ct is None or not ct.transports:
            out.append(dataclasses.replace(s, transport_source=f"unknown: {why}"))
        else:
            net = "+".join(ct.nets) or None
            rdma = None if not ct.nets else all(_nccl_log.is_rdma(x) for x in ct.nets)
            out.append(dataclasses.replace(s, transport="+".join(ct.transports), net=net,
                                           rdma=rdma, net_plugin="+".join(ct.plugins) or None,
                                           transport_source="NCCL_DEBUG log"))
    return out
