"""Warm the GPU until its clocks settle, and read its telemetry while it is loaded.

A GPU at rest boosts; under sustained matmul load it settles at the clock its power limit and
cooling allow, a few percent lower (the "burst vs sustained" gap). Training runs at the
settled clock, and so does the statistic the planner's defaults come from (mamf-finder.py warms
up for 30 s before timing), so the probe times every shape after the warm-up:

1. Two calls pick the kernel; then windows of ``window_seconds`` of back-to-back calls, each
   giving one TFLOP/s figure. The first is ``burst_tflops``.
2. It stops when it has run at least ``min_seconds`` and the last three windows agree within
   ``tolerance`` (settled), or at ``max_seconds`` (not settled: recorded as such).
3. One more window runs while a background thread asks nvidia-smi for this GPU's clocks,
   power and temperature (probes._smi): the telemetry "under load". Its TFLOP/s is
   ``sustained_tflops``.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import torch

from probes._schema import GpuTelemetry
from probes._timing import adaptive_iters, time_block

# Seconds: (min, max, window). GPU values follow mamf-finder.py's 30 s warm-up as the usual
# length; quick mode accepts a shorter, possibly unsettled warm-up (quick never calibrates).
GPU_WARMUP = (15.0, 45.0, 1.0)
GPU_WARMUP_QUICK = (3.0, 10.0, 0.5)
CPU_WARMUP = (0.05, 0.5, 0.02)  # CPUs have no boost-to-sustained drop worth waiting for
CPU_WARMUP_QUICK = (0.02, 0.2, 0.01)
TOLERANCE = 0.01


@dataclass(frozen=True, slots=True, kw_only=True)
class Settled:
    dtype: str
    shape: tuple[int, int, int]
    seconds: float
    settled: bool
    burst_tflops: float
    sustained_tflops: float
    under_load: GpuTelemetry | None

    def as_fields(self) -> dict:
        """The MatmulSection fields this fills."""
        return {"warmup_dtype": self.dtype, "warmup_shape": self.shape,
                "warmup_seconds": self.seconds, "warmup_settled": self.settled,
                "burst_tflops": self.burst_tflops, "sustained_tflops": self.sustained_tflops,
                "under_load": self.under_load}


def _agree(windows: list[float], tolerance: float) -> bool:
    last = windows[-3:]
    return len(last) == 3 and (max(last) - min(last)) <= tolerance * max(last)


def settle(call: Callable[[int], object], flop_per_call: float, device: torch.device, *,
           dtype: str, shape: tuple[int, int, int], min_seconds: float, max_seconds: float,
           window_seconds: float, tolerance: float = TOLERANCE,
           sample: Callable[[], GpuTelemetry | None] | None = None) -> Settled:
    """Run ``call`` until its throughput settles; see the module docstring."""
    time_block(call, iters=2, device=device)  # kernel choice, allocator
    per_call = time_block(call, iters=2, device=device)
    iters = adaptive_iters(per_call, window_seconds, hi=100_000)
    windows: list[float] = []
    t0 = time.perf_counter()
    settled = False
    while True:
        windows.append(flop_per_call / time_block(call, iters=iters, device=device) / 1e12)
        elapsed = time.perf_counter() - t0
        if elapsed >= min_seconds and _agree(windows, tolerance):
            settled = True
            break
        if elapsed >= max_seconds:
            break
    telemetry: list[GpuTelemetry | None] = [None]
    thread = None
    if sample is not None:
        thread = threading.Thread(target=lambda: telemetry.__setitem__(0, sample()),
                                  daemon=True)
        thread.start()
    sustained = flop_per_call / time_block(call, iters=iters, device=device) / 1e12
    if thread is not None:
        thread.join(timeout=15.0)
    return Settled(dtype=dtype, shape=shape, seconds=time.perf_counter() - t0,
                   settled=settled, burst_tflops=windows[0], sustained_tflops=sustained,
                   under_load=telemetry[0])
