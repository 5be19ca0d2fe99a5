"""Copy bandwidth: device-local, host-local, and host<->device with pinned and pageable memory.

Byte counting (stated in the report as ``byte_convention``):

- device_copy / host_copy: ``dst.copy_(src)`` of N bytes is credited 2*N bytes (N read plus
  N written), as STREAM Copy counts. Tools that credit N bytes per copy show half this figure.
- h2d_* / d2h_*: one transfer of N bytes is credited N bytes.

gb_per_s = counted_bytes / seconds_median / 1e9 (decimal GB). Buffers hold random bytes and
are at least several times the L2 size. Each repeat times a block of back-to-back copies with
CUDA events (perf_counter on CPU); the median over repeats is kept. On a machine without CUDA,
host_copy is measured and the device/transfer entries are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from probes._schema import BandwidthPoint, MemorySection
from probes._timing import adaptive_iters, median, time_block, timing_name

BYTE_CONVENTION = ("device_copy and host_copy: 2*N bytes credited per copy of N bytes "
                   "(read N + write N, as STREAM Copy); h2d/d2h: N bytes per transfer of "
                   "N bytes; gb_per_s is 10**9 bytes per second")

# Sizes (bytes) per mode; see probes._runner for the time budget.
GPU_COPY_BYTES = 1 << 30
GPU_TRANSFER_BYTES = 256 << 20
CPU_COPY_BYTES = 64 << 20
QUICK_DIVISOR = 4

_NO_CUDA = "no CUDA device: host<->device transfers need a GPU"


def _random_bytes(n: int, device: torch.device, *, pin: bool = False) -> torch.Tensor:
    t = torch.randint(0, 256, (n,), dtype=torch.uint8, device=device)
    return t.pin_memory() if pin else t


def _measure(name: str, copy: Callable[[int], object], size: int, counted: int,
             device: torch.device, *, repeats: int, target: float) -> BandwidthPoint:
    warm = time_block(copy, iters=2, device=device)
    iters = adaptive_iters(warm, target, hi=200)
    seconds = median([time_block(copy, iters=iters, device=device) for _ in range(repeats)])
    return BandwidthPoint(name=name, status="measured", size_bytes=size, counted_bytes=counted,
                          seconds_median=seconds, gb_per_s=counted / seconds / 1e9)


def _guarded(name: str, fn: Callable[[], BandwidthPoint]) -> BandwidthPoint:
    try:
        return fn()
    except (RuntimeError, MemoryError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else ""
        return BandwidthPoint(name=name, status="failed", reason=f"{type(exc).__name__}: {first}")


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
        src, dst = _random_bytes(n, cpu), torch.empty(n, dtype=torch.uint8)
        points.append(_guarded("host_copy", lambda: _measure(
            "host_copy", lambda i: dst.copy_(src), n, 2 * n, cpu, **kw)))
        points.append(BandwidthPoint(name="device_copy", status="skipped",
                                     reason="no CUDA device; see host_copy"))
        for name in ("h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable"):
            points.append(BandwidthPoint(name=name, status="skipped", reason=_NO_CUDA))
        return MemorySection(device=str(device), timing=timing_name(device),
                             byte_convention=BYTE_CONVENTION, points=tuple(points))

    def device_copy() -> BandwidthPoint:
        n = copy_bytes or GPU_COPY_BYTES // div
        src, dst = _random_bytes(n, device), torch.empty(n, dtype=torch.uint8, device=device)
        return _measure("device_copy", lambda i: dst.copy_(src), n, 2 * n, device, **kw)

    points.append(_guarded("device_copy", device_copy))
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
