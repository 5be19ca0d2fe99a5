"""Device selection and timers shared by the probes (torch-only; imported lazily).

Timing rules: on CUDA, a pair of CUDA events brackets the work on the current stream and the
host waits on the end event; on CPU, time.perf_counter brackets the work (CPU torch ops are
synchronous). A repeat times ``iters`` back-to-back calls and reports seconds per call; the
probes take the median over repeats and its 10th/90th percentiles (probes._stats).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence

import torch

from probes._schema import ProbeSetupError


def resolve_device(requested: str, *, local_rank: int = 0) -> torch.device:
    """Map "auto" | "cpu" | "cuda" to a torch.device; CUDA uses GPU ``local_rank``."""
    if requested not in ("auto", "cpu", "cuda"):
        raise ProbeSetupError(f"unknown device {requested!r}. To fix: use auto, cpu or cuda.")
    if requested == "cpu" or (requested == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise ProbeSetupError(
            f"--device cuda was asked for, but torch {torch.__version__} sees no CUDA device "
            f"(built for CUDA {torch.version.cuda}). To fix: install a CUDA build of torch and "
            "check nvidia-smi, or use --device cpu.")
    count = torch.cuda.device_count()
    if local_rank >= count:
        raise ProbeSetupError(
            f"local rank {local_rank} has no GPU: this node shows {count}. "
            "To fix: set torchrun --nproc-per-node to at most the number of GPUs.")
    torch.cuda.set_device(local_rank)
    return torch.device("cuda", local_rank)


def timing_name(device: torch.device) -> str:
    return "cuda_events" if device.type == "cuda" else "perf_counter"


def time_block(fn: Callable[[int], object], *, iters: int, device: torch.device) -> float:
    """Seconds per call of ``fn(i)`` for i in range(iters), run back to back."""
    if device.type == "cuda":
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(iters):
            fn(i)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1e3 / iters
    t0 = time.perf_counter()
    for i in range(iters):
        fn(i)
    return (time.perf_counter() - t0) / iters


def time_repeats(fn: Callable[[int], object], *, iters: int, repeats: int,
                 device: torch.device) -> list[float]:
    """Seconds per call of each of ``repeats`` blocks of ``iters`` back-to-back calls."""
    return [time_block(fn, iters=iters, device=device) for _ in range(max(1, repeats))]


def smi_gpu_id(device: torch.device) -> str | None:
    """How nvidia-smi names this process's GPU: its UUID ("GPU-..."), which stays right when
    CUDA_VISIBLE_DEVICES reorders or hides GPUs; None off CUDA."""
    if device.type != "cuda":
        return None
    uuid = str(getattr(torch.cuda.get_device_properties(device), "uuid", "") or "")
    if uuid:
        return uuid if uuid.startswith(("GPU-", "MIG-")) else f"GPU-{uuid}"
    return str(device.index)


def time_each(fn: Callable[[int], object], *, iters: int, device: torch.device) -> list[float]:
    """Seconds of each call of ``fn(i)`` separately (events per call on CUDA)."""
    if device.type == "cuda":
        events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
                  for _ in range(iters)]
        for i, (start, end) in enumerate(events):
            start.record()
            fn(i)
            end.record()
        torch.cuda.synchronize(device)
        return [start.elapsed_time(end) / 1e3 for start, end in events]
    out = []
    for i in range(iters):
        t0 = time.perf_counter()
        fn(i)
        out.append(time.perf_counter() - t0)
    return out


def adaptive_iters(seconds_per_call: float, target_seconds: float, *, lo: int = 1,
                   hi: int = 1000) -> int:
    """How many calls make one repeat last about ``target_seconds``."""
    if seconds_per_call <= 0:
        return hi
    return max(lo, min(hi, round(target_seconds / seconds_per_call)))


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))
