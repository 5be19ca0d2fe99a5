"""Achievable matmul TFLOP/s per dtype over a shape sweep.

For each dtype and shape (M, N, K) the probe times C = A @ B with A: MxK, B: KxN:

1. Buffers: ``sets`` independent (A, B, C) triples from torch.randn (never zeros), with
   ``sets * bytes_per_set > cache_bytes`` (the GPU's L2 from device properties, else 50 MiB), so
   consecutive calls rotate through memory that cannot all sit in cache.
2. Warm-up: ``warmup_iters`` calls (cuBLAS picks its kernel, clocks ramp), then as many again
   whose mean time sets ``iters`` so one repeat lasts about ``target_seconds_per_repeat``.
3. ``repeats`` repeats of ``iters`` calls, timed as a block (CUDA events / perf_counter);
   seconds_median is the median of the per-call times over repeats.
4. tflops = 2*M*N*K / seconds_median / 1e12.

Dtypes: fp32 (TF32 off, float32 matmul precision "highest"), tf32 (fp32 tensors, TF32 on,
precision "high"; CUDA only), bf16, fp16, fp8_e4m3 (torch._scaled_mm, e4m3 A and B, unit
scales, bf16 output, fast accumulation; CUDA capability >= 8.9 only). The TF32 settings found at
start are recorded and restored. A dtype the device cannot run is recorded as skipped with the
reason; one that raises is recorded as failed with the error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch

from probes._schema import MATMUL_DTYPES, MatmulDtype, MatmulPoint, MatmulSection
from probes._timing import adaptive_iters, median, time_block, timing_name

DTYPES = MATMUL_DTYPES
Shape = tuple[int, int, int]

# Default sweeps (see probes._runner for the time budget).
GPU_SHAPES: tuple[Shape, ...] = ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096),
                                 (8192, 8192, 8192), (16384, 8192, 8192))
GPU_SHAPES_QUICK: tuple[Shape, ...] = ((4096, 4096, 4096), (8192, 8192, 8192))
CPU_SHAPES: tuple[Shape, ...] = ((256, 256, 256), (512, 512, 512), (1024, 1024, 1024))
CPU_SHAPES_QUICK: tuple[Shape, ...] = ((256, 256, 256), (512, 512, 512))

ASSUMED_CACHE_BYTES = 50 * 2**20
MAX_SETS = 128
FLOP_CONVENTION = "2*M*N*K floating-point operations per matmul of MxK by KxN"

_TORCH_DTYPES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16",
                 "fp8_e4m3": "float8_e4m3fn"}


def cache_bytes(device: torch.device) -> tuple[int, str]:
    """(bytes, source): the L2 size the rotating buffers must exceed."""
    if device.type == "cuda":
        size = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        if size:
            return int(size), "device_properties"
    return ASSUMED_CACHE_BYTES, "assumed"


def buffer_sets(bytes_per_set: int, cache: int) -> int:
    """Smallest number of buffer sets (at least 2) whose total exceeds ``cache`` bytes."""
    return max(2, min(MAX_SETS, cache // max(1, bytes_per_set) + 1))


def skip_reason(dtype: str, device: torch.device) -> str | None:
    """Why ``dtype`` cannot be measured on ``device``, or None if it can."""
    if dtype not in DTYPES:
        return f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}"
    if device.type != "cuda":
        if dtype == "tf32":
            return "TF32 is a CUDA tensor-core mode; it does not exist on CPU"
        if dtype == "fp8_e4m3":
            return "fp8 matmul (torch._scaled_mm) needs a CUDA device with capability >= 8.9"
        return None
    if dtype == "fp8_e4m3":
        cap = torch.cuda.get_device_capability(device)
        if cap < (8, 9):
            return f"fp8 needs CUDA capability >= 8.9; this GPU is {cap[0]}.{cap[1]}"
        if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return f"torch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    if dtype == "bf16" and not torch.cuda.is_bf16_supported():
        return "this GPU does not support bfloat16"
    return None


def _make_call(dtype: str, shape: Shape, sets: int,
               device: torch.device) -> Callable[[int], object]:
    m, n, k = shape
    if dtype == "fp8_e4m3":
        fp8 = torch.float8_e4m3fn
        a = [torch.randn(m, k, device=device).to(fp8) for _ in range(sets)]
        # _scaled_mm wants B column-major: the transpose of a row-major N x K tensor.
        b = [torch.randn(n, k, device=device).to(fp8).t() for _ in range(sets)]
        one = torch.ones((), device=device, dtype=torch.float32)

        def call_fp8(i: int) -> object:
            j = i % sets
            # keywords: torch 2.3 had scale_a/scale_b after bias; 2.4+ has them second
            return torch._scaled_mm(a[j], b[j], scale_a=one, scale_b=one,
                                    out_dtype=torch.bfloat16, use_fast_accum=True)
        return call_fp8
    dt = getattr(torch, _TORCH_DTYPES[dtype])
    a = [torch.randn(m, k, device=device, dtype=dt) for _ in range(sets)]
    b = [torch.randn(k, n, device=device, dtype=dt) for _ in range(sets)]
    c = [torch.empty(m, n, device=device, dtype=dt) for _ in range(sets)]

    def call(i: int) -> object:
        j = i % sets
        return torch.matmul(a[j], b[j], out=c[j])
    return call


def _bytes_per_set(dtype: str, shape: Shape) -> int:
    m, n, k = shape
    in_size = getattr(torch, _TORCH_DTYPES[dtype]).itemsize if dtype != "fp8_e4m3" else 1
    out_size = 2 if dtype == "fp8_e4m3" else in_size
    return (m * k + k * n) * in_size + m * n * out_size


def time_matmul(dtype: str, shape: Shape, device: torch.device, *, warmup_iters: int,
                repeats: int, target_seconds: float, cache: int) -> MatmulPoint:
    """Time one dtype at one shape (TF32 must already be set as the dtype needs)."""
    sets = buffer_sets(_bytes_per_set(dtype, shape), cache)
    call = _make_call(dtype, shape, sets, device)
    time_block(call, iters=max(1, warmup_iters), device=device)  # kernel choice, clocks
    estimate = time_block(call, iters=max(1, warmup_iters), device=device)
    iters = adaptive_iters(estimate, target_seconds)
    per_call = median([time_block(call, iters=iters, device=device) for _ in range(repeats)])
    m, n, k = shape
    return MatmulPoint(dtype=dtype, m=m, n=n, k=k, seconds_median=per_call,
                       tflops=2.0 * m * n * k / per_call / 1e12)


def _set_tf32(enabled: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def run_matmul_probe(device: torch.device, *, shapes: Sequence[Shape], dtypes: Sequence[str],
                     warmup_iters: int = 5, repeats: int = 5,
                     target_seconds_per_repeat: float = 0.1,
                     dtype_budget_seconds: float = 60.0) -> MatmulSection:
    """Sweep ``shapes`` for each of ``dtypes``. A dtype that takes longer than
    ``dtype_budget_seconds`` stops before its next shape (noted in its reason)."""
    cache, cache_source = cache_bytes(device)
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32,
             torch.get_float32_matmul_precision())
    summaries: list[MatmulDtype] = []
    points: list[MatmulPoint] = []
    try:
        for dtype in dtypes:
            reason = skip_reason(dtype, device)
            if reason is not None:
                summaries.append(MatmulDtype(dtype=dtype, status="skipped", reason=reason))
                continue
            _set_tf32(dtype == "tf32")
            summary, found = _sweep_dtype(dtype, shapes, device, warmup_iters=warmup_iters,
                                          repeats=repeats, target=target_seconds_per_repeat,
                                          cache=cache, budget=dtype_budget_seconds)
            summaries.append(summary)
            points.extend(found)
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) = saved[:2]
        torch.set_float32_matmul_precision(saved[2])
    return MatmulSection(
        device=str(device), timing=timing_name(device), flop_convention=FLOP_CONVENTION,
        warmup_iters=warmup_iters, repeats=repeats,
        target_seconds_per_repeat=target_seconds_per_repeat, cache_bytes=cache,
        cache_bytes_source=cache_source, tf32_matmul_allowed=saved[0],
        cudnn_tf32_allowed=saved[1], float32_matmul_precision=saved[2],
        dtypes=tuple(summaries), points=tuple(points))


def _sweep_dtype(dtype: str, shapes: Sequence[Shape], device: torch.device, *,
                 warmup_iters: int, repeats: int, target: float, cache: int,
                 budget: float) -> tuple[MatmulDtype, list[MatmulPoint]]:
    points: list[MatmulPoint] = []
    notes: list[str] = []
    t0 = time.perf_counter()
    for i, shape in enumerate(shapes):
        if time.perf_counter() - t0 > budget:
            notes.append(f"stopped after {budget:g} s budget; not measured: "
                         + ", ".join("x".join(map(str, s)) for s in shapes[i:]))
            break
        try:
            points.append(time_matmul(dtype, shape, device, warmup_iters=warmup_iters,
                                      repeats=repeats, target_seconds=target, cache=cache))
        except torch.cuda.OutOfMemoryError:
            notes.append(f"out of memory at {'x'.join(map(str, shape))}")
            torch.cuda.empty_cache()
        except (RuntimeError, NotImplementedError) as exc:
            if points:
                notes.append(f"{'x'.join(map(str, shape))}: {type(exc).__name__}: {exc}")
                continue
            msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return MatmulDtype(dtype=dtype, status="failed", reason=msg), points
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()
    if not points:
        return MatmulDtype(dtype=dtype, status="failed",
                           reason="; ".join(notes) or "no shape measured"), points
    best = max(points, key=lambda p: p.tflops)
    if dtype == "fp8_e4m3":
        notes.insert(0, "torch._scaled_mm, unit scales, bf16 output, use_fast_accum=True")
    return MatmulDtype(dtype=dtype, status="measured", reason="; ".join(notes) or None,
                       best_tflops=best.tflops, best_shape=(best.m, best.n, best.k)), points
