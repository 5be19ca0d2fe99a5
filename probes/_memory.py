"""Memory bandwidth: copy and triad in device (or host) memory, and host<->device transfers.

Byte counting follows STREAM (McCalpin, www.cs.virginia.edu/stream/ref.html) and is stated in
the report as ``byte_convention``:

- device_copy / host_copy: ``dst.copy_(src)`` of N bytes is credited 2*N bytes (N read plus
  N written), as STREAM Copy counts. Tools that credit N bytes per copy show half this figure.
- device_triad / host_triad: ``a = b + s*c`` on float32 arrays of N bytes each, one fused
  kernel (``torch.add(b, c, alpha=s, out=a)``), credited 3*N bytes (two reads, one write), as
  STREAM Triad counts.
- h2d_* / d2h_*: one transfer of N bytes is credited N bytes.

gb_per_s = counted_bytes / seconds_median / 1e9 (decimal GB); gb_per_s_p10/p90 over repeats.
Buffers hold random values and are at least several times the L2 size. Each repeat times a
block of back-to-back operations with CUDA events (perf_counter on CPU); the median over repeats
is kept. On a machine without CUDA, host_copy and host_triad are measured and the
device/transfer entries are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from probes._schema import BandwidthPoint, MemorySection
from probes._stats import median, percentile
from probes._timing import adaptive_iters, time_block, time_repeats, timing_name

BYTE_CONVENTION = ("device_copy and host_copy: 2*N bytes credited per copy of N bytes "
                   "(read N + write N, as STREAM Copy); device_triad and host_triad: 3*N "
                   "bytes per a = b + s*c on arrays of N bytes (as STREAM Triad); h2d/d2h: "
                   "N bytes per transfer of N bytes; gb_per_s is 10**9 bytes per second")

# Sizes (bytes) per mode; see probes._runner for the time budget.
GPU_COPY_BYTES = 1 << 30
GPU_TRANSFER_BYTES = 256 << 20
CPU_COPY_BYTES = 64 << 20
QUICK_DIVISOR = 4
TRIAD_SCALAR = 3.0

_NO_CUDA = "no CUDA device: host<->device transfers need a GPU"


def _random_bytes(n: int, device: torch.device, *, pin: bool = False) -> torch.Tensor:
    t = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    return t.pin_memory() if pin else t


def _measure(name: str, op: Callable[[int], object], size: int, counted: int,
             device: torch.device, *, repeats: int, target: float) -> BandwidthPoint:
    warm = time_block(op, iters=2, device=device)
    iters = adaptive_iters(warm, target, hi=200)
    seconds = time_repeats(op, iters=iters, repeats=repeats, device=device)
    mid = median(seconds)
    return BandwidthPoint(name=name, status="measured", size_bytes=size, counted_bytes=counted,
                          seconds_median=mid, gb_per_s=counted / mid / 1e9,
                          gb_per_s_p10=counted / percentile(seconds, 90) / 1e9,
                          gb_per_s_p90=counted / percentile(seconds, 10) / 1e9)


def _guarded(name: str, fn: Callable[[], BandwidthPoint]) -> BandwidthPoint:
    try:
        return fn()
    except (RuntimeError, MemoryError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return BandwidthPoint(name=name, status="failed", reason=f"{type(exc).__name__}: {first}")


def _copy(name: str, n: int, device: torch.device, **kw) -> BandwidthPoint:
    src, dst = _random_bytes(n, device), torch.empty(n, dtype=torch.uint8, device=device)
    return _measure(name, lambda i: dst.copy_(src), n, 2 * n, device, **kw)


def _triad(name: str, n: int, device: torch.device, **kw) -> BandwidthPoint:
    elems = n // 4
    b, c = (torch.randn(elems, device=device) for _ in range(2))
    a = torch.empty(elems, device=device)
    size = elems * 4
    return _measure(name, lambda i: torch.add(b, c, alpha=TRIAD_SCALAR, out=a), size, 3 * size,
                    device, **kw)


def run_memory_probe(device: torch.device, *, quick: bool = False, repeats: int = 5,
                     target_seconds_per_repeat: float = 0.05,
                     copy_bytes: int | None = None,
                     transfer_bytes: int | None = None) -> MemorySection:
    points: list[BandwidthPoint] = []
    div = QUICK_DIVISOR if quick else 1
    kw = {"repeats": repeats, "target": target_seconds_per_repeat}
    cpu = torch.device("cpu")
    if device.type != "cuda":
        n = copy_bytes or CPU_COPY_BYTES // div
        points.append(_guarded("host_copy", lambda: _copy("host_copy", n, cpu, **kw)))
        points.append(_guarded("host_triad", lambda: _triad("host_triad", n, cpu, **kw)))
        for name in ("device_copy", "device_triad"):
            points.append(BandwidthPoint(name=name, status="skipped",
                                         reason="no CUDA device; see host_copy, host_triad"))
        for name in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable"):
            points.append(BandwidthPoint(name=name, status="skipped", reason=_NO_CUDA))
        return MemorySection(device=str(device), timing=timing_name(device),
                             byte_convention=BYTE_CONVENTION, points=tuple(points))
    n = copy_bytes or GPU_COPY_BYTES // div
    points.append(_guarded("device_copy", lambda: _copy("device_copy", n, device, **kw)))
    torch.cuda.empty_cache()
    points.append(_guarded("device_triad", lambda: _triad("device_triad", n, device, **kw)))
    torch.cuda.empty_cache()
    n = transfer_bytes or GPU_TRANSFER_BYTES // div
    for pinned in (True, False):
        suffix = "pinned" if pinned else "pageable"

        def h2d(pinned: bool = pinned, suffix: str = suffix) -> BandwidthPoint:
            host = _random_bytes(n, cpu, pin=pinned)
            dev = torch.empty(n, dtype=torch.uint8, device=device)
            return _measure(f"h2d_{suffix}", lambda i: dev.copy_(host, non_blocking=pinned),
                            n, n, device, **kw)

        def d2h(pinned: bool = pinned, suffix: str = suffix) -> BandwidthPoint:
            dev = _random_bytes(n, device)
            host = torch.empty(n, dtype=torch.uint8, pin_memory=pinned)
            return _measure(f"d2h_{suffix}", lambda i: host.copy_(dev, non_blocking=pinned),
                            n, n, device, **kw)

        points.append(_guarded(f"h2d_{suffix}", h2d))
        points.append(_guarded(f"d2h_{suffix}", d2h))
    torch.cuda.empty_cache()
    return MemorySection(device=str(device), timing=timing_name(device),
                         byte_convention=BYTE_CONVENTION, points=tuple(points))
