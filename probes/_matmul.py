"""Achievable matmul TFLOP/s per dtype: a MAMF-style sweep over training-like shapes.

The statistic the planner's defaults come from is Stas Bekman's "Maximum Achievable Matmul
FLOPS" (mamf-finder.py, github.com/stas00/ml-engineering, compute/accelerator/benchmarks): many
(M, N, K) shapes, each timed after warm-up with the GPU's clocks settled, and the maximum over
shapes reported. This probe measures the same statistic so the two can be compared:

1. Warm-up (probes._warmup): one large shape runs back to back until its throughput stops
   changing, so every shape after it is timed at sustained clocks, not boost clocks on a cold
   GPU. mamf-finder.py warms up for a fixed 30 s; here it stops once settled (at least
   ``min_seconds``). The first and last windows are recorded as burst and sustained TFLOP/s.
2. Shapes: M = tokens of a micro-batch, N x K = the weight of a transformer layer (the
   Llama-3 8B and 70B projections, see GPU_SHAPES), in both weight layouts (schema LAYOUTS:
   "nt" is how torch.nn.Linear stores weights and how mamf-finder.py lays out B).
3. Each point: ``sets`` independent (A, B, C) triples from torch.randn (never zeros), with
   ``sets * bytes_per_set > cache_bytes`` (the GPU's L2 from device properties, else 50 MiB),
   so consecutive calls rotate through memory that cannot sit in cache (mamf-finder.py zeroes a
   256 MB buffer between calls for the same reason); ``warmup_iters`` calls, as many again to
   size the repeats, then ``repeats`` blocks of back-to-back calls (CUDA events /
   perf_counter). seconds_median is the median per-call time over repeats; tflops =
   2*M*N*K / seconds_median / 1e12; tflops_p10/p90 over repeats.
4. Per dtype: best_tflops = max over points (the MAMF statistic), median_tflops = median over
   points (what an average layer gets).

Dtypes: fp32 (TF32 off, precision "highest"), tf32 (fp32 tensors, TF32 on; CUDA only), bf16,
fp16, fp8_e4m3 and fp8_e4m3_fast (torch._scaled_mm, e4m3 A and B, unit scales, bf16 output;
``use_fast_accum`` False, as mamf-finder.py calls it, or True). fp8 runs the "nt" layout only:
_scaled_mm needs B column-major. Each fp8 mode is checked against bf16 on the same inputs:
the fp8-quantised A and B are multiplied in bf16, and the relative Frobenius error of the fp8
result must stay under FP8_MAX_REL_ERROR. The TF32 settings found at start are recorded and
restored. A dtype the device cannot run is recorded as skipped with the reason; one that
raises is recorded as failed with the error.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

import torch

# the check's limit and accumulation names live with the check that re-derives them
from probes._figures import FP8_MAX_REL_ERROR
from probes._schema import MATMUL_DTYPES, MatmulDtype, MatmulPoint, MatmulSection
from probes._stats import median, percentile
from probes._timing import adaptive_iters, time_block, time_repeats, timing_name

DTYPES = MATMUL_DTYPES
Shape = tuple[int, int, int]

# (M, N, K): M = 8192 tokens per micro-batch (one 8K sequence or two 4K ones; 16384 for a
# larger batch); N x K = Llama-3 8B (hidden 4096, FFN 14336, fused QKV 4096 + 2*8*128 = 6144)
# and 70B (hidden 8192, FFN 28672, QKV 8192 + 2*8*128 = 10240) projections.
GPU_SHAPES: tuple[Shape, ...] = (
    (8192, 6144, 4096), (8192, 4096, 4096), (8192, 14336, 4096), (8192, 4096, 14336),
    (8192, 10240, 8192), (8192, 8192, 8192), (8192, 28672, 8192), (8192, 8192, 28672),
    (16384, 8192, 8192))
GPU_SHAPES_QUICK: tuple[Shape, ...] = ((8192, 8192, 8192), (8192, 14336, 4096))
FP32_SHAPES = 2  # fp32/tf32 (not what training runs): only the first shapes of the sweep
CPU_SHAPES: tuple[Shape, ...] = ((256, 256, 256), (512, 512, 512))
CPU_SHAPES_QUICK: tuple[Shape, ...] = ((256, 256, 256),)
FP8_CHECK_SHAPE_GPU: Shape = (4096, 4096, 4096)
FP8_CHECK_SHAPE_CPU: Shape = (128, 128, 256)
# An fp8 result is "garbage" when it is off the bf16 product of the same inputs by more than
# this (relative Frobenius norm). Both are rounded to bf16 (~0.3% together); fast
# accumulation on Hopper keeps ~14 mantissa bits in the tensor core (DeepSeek-V3 report,
# arXiv:2412.19437 sec. 3.3.2, up to ~2% on single elements at K = 4096); a wrong kernel,
# layout or scale is off by tens of percent.

ASSUMED_CACHE_BYTES = 50 * 2**20
MAX_SETS = 128
FLOP_CONVENTION = "2*M*N*K floating-point operations per matmul of MxK by KxN"

_TORCH_DTYPES = {"fp32": "float32", "tf32": "float32", "bf16": "bfloat16", "fp16": "float16",
                 "fp8_e4m3": "float8_e4m3fn", "fp8_e4m3_fast": "float8_e4m3fn"}
FP8 = ("fp8_e4m3", "fp8_e4m3_fast")


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


def _fp8_runs_here(device: torch.device) -> str | None:
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no torch._scaled_mm / float8_e4m3fn"
    if device.type == "cuda":
        cap = torch.cuda.get_device_capability(device)
        if cap < (8, 9):
            return f"fp8 needs CUDA capability >= 8.9; this GPU is {cap[0]}.{cap[1]}"
        return None
    try:  # newer torch builds implement _scaled_mm on CPU; older ones raise
        _scaled(torch.ones(16, 16).to(torch.float8_e4m3fn),
                torch.ones(16, 16).to(torch.float8_e4m3fn).t(), fast=False)
    except (RuntimeError, NotImplementedError) as exc:
        return f"torch._scaled_mm does not run on this CPU build ({type(exc).__name__})"
    return None


def skip_reason(dtype: str, device: torch.device) -> str | None:
    """Why ``dtype`` cannot be measured on ``device``, or None if it can."""
    if dtype not in DTYPES:
        return f"unknown dtype {dtype!r}; known: {', '.join(DTYPES)}"
    if dtype in FP8:
        return _fp8_runs_here(device)
    if device.type != "cuda":
        if dtype == "tf32":
            return "TF32 is a CUDA tensor-core mode; it does not exist on CPU"
        return None
    if dtype == "bf16" and not torch.cuda.is_bf16_supported():
        return "this GPU does not support bfloat16"
    return None


def _scaled(a: torch.Tensor, b: torch.Tensor, *, fast: bool,
            out: torch.Tensor | None = None) -> torch.Tensor:
    one = torch.ones((), device=a.device, dtype=torch.float32)
    # keywords: torch 2.3 had scale_a/scale_b after bias; 2.4+ has them second
    kwargs = {"out": out} if out is not None else {}
    return torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16,
                            use_fast_accum=fast, **kwargs)


def _make_call(dtype: str, shape: Shape, sets: int, device: torch.device,
               layout: str = "nn") -> Callable[[int], object]:
    m, n, k = shape
    if dtype in FP8:
        fp8, fast = torch.float8_e4m3fn, dtype == "fp8_e4m3_fast"
        a = [torch.randn(m, k, device=device).to(fp8) for _ in range(sets)]
        # _scaled_mm wants B column-major: the transpose of a row-major N x K tensor ("nt")
        b = [torch.randn(n, k, device=device).to(fp8).t() for _ in range(sets)]
        c = [torch.empty(m, n, device=device, dtype=torch.bfloat16) for _ in range(sets)]

        def call_fp8(i: int) -> object:
            j = i % sets
            return _scaled(a[j], b[j], fast=fast, out=c[j])
        return call_fp8
    dt = getattr(torch, _TORCH_DTYPES[dtype])
    a = [torch.randn(m, k, device=device, dtype=dt) for _ in range(sets)]
    if layout == "nt":
        b = [torch.randn(n, k, device=device, dtype=dt).t() for _ in range(sets)]
    else:
        b = [torch.randn(k, n, device=device, dtype=dt) for _ in range(sets)]
    c = [torch.empty(m, n, device=device, dtype=dt) for _ in range(sets)]

    def call(i: int) -> object:
        j = i % sets
        return torch.matmul(a[j], b[j], out=c[j])
    return call


def _bytes_per_set(dtype: str, shape: Shape) -> int:
    m, n, k = shape
    in_size = 1 if dtype in FP8 else getattr(torch, _TORCH_DTYPES[dtype]).itemsize
    out_size = 2 if dtype in FP8 else in_size
    return (m * k + k * n) * in_size + m * n * out_size


def time_matmul(dtype: str, shape: Shape, device: torch.device, *, warmup_iters: int,
                repeats: int, target_seconds: float, cache: int,
                layout: str = "nn") -> MatmulPoint:
    """Time one dtype at one shape and layout (TF32 must already be set as the dtype needs)."""
    sets = buffer_sets(_bytes_per_set(dtype, shape), cache)
    call = _make_call(dtype, shape, sets, device, layout)
    time_block(call, iters=max(1, warmup_iters), device=device)  # kernel choice
    estimate = time_block(call, iters=max(1, warmup_iters), device=device)
    iters = adaptive_iters(estimate, target_seconds)
    per_call = time_repeats(call, iters=iters, repeats=repeats, device=device)
    m, n, k = shape
    flop = 2.0 * m * n * k
    seconds = median(per_call)
    return MatmulPoint(dtype=dtype, m=m, n=n, k=k, layout=layout, seconds_median=seconds,
                       tflops=flop / seconds / 1e12,
                       tflops_p10=flop / percentile(per_call, 90) / 1e12,
                       tflops_p90=flop / percentile(per_call, 10) / 1e12)


def fp8_check(device: torch.device, *, fast: bool, shape: Shape) -> float:
    """Relative Frobenius error of the fp8 product against bf16 on the same fp8 inputs."""
    m, n, k = shape
    gen = torch.Generator(device=device).manual_seed(0)
    a = torch.randn(m, k, device=device, generator=gen).to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device=device, generator=gen).to(torch.float8_e4m3fn).t()
    got = _scaled(a, b, fast=fast).float()
    # every e4m3 value is exact in bf16, so this is the same product at bf16 precision
    ref = torch.matmul(a.to(torch.bfloat16), b.to(torch.bfloat16)).float()
    return float(torch.linalg.vector_norm(got - ref) / torch.linalg.vector_norm(ref))


def _set_tf32(enabled: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled
    torch.set_float32_matmul_precision("high" if enabled else "highest")


def run_matmul_probe(device: torch.device, *, shapes: Sequence[Shape], dtypes: Sequence[str],
                     warmup_iters: int = 5, repeats: int = 5,
                     target_seconds_per_repeat: float = 0.1,
                     dtype_budget_seconds: float = 60.0,
                     layouts: Sequence[str] = ("nn",), sweep: str = "custom",
                     warmup=None) -> MatmulSection:
    """Sweep ``shapes`` x ``layouts`` for each of ``dtypes``. A dtype that takes longer than
    ``dtype_budget_seconds`` stops before its next shape (noted in its reason). ``warmup``
    (a probes._warmup.Settled, or None) is recorded in the section."""
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
            todo = shapes[:FP32_SHAPES] if dtype in ("fp32", "tf32") and sweep == "default" \
                else shapes
            summary, found = _sweep_dtype(
                dtype, todo, ("nt",) if dtype in FP8 else tuple(layouts), device,
                warmup_iters=warmup_iters, repeats=repeats, target=target_seconds_per_repeat,
                cache=cache, budget=dtype_budget_seconds)
            summaries.append(summary)
            points.extend(found)
    finally:
        (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32) = saved[:2]
        torch.set_float32_matmul_precision(saved[2])
    extra = {} if warmup is None else warmup.as_fields()
    return MatmulSection(
        device=str(device), timing=timing_name(device), flop_convention=FLOP_CONVENTION,
        warmup_iters=warmup_iters, repeats=repeats,
        target_seconds_per_repeat=target_seconds_per_repeat, cache_bytes=cache,
        cache_bytes_source=cache_source, tf32_matmul_allowed=saved[0],
        cudnn_tf32_allowed=saved[1], float32_matmul_precision=saved[2],
        dtypes=tuple(summaries), points=tuple(points), sweep=sweep, layouts=tuple(layouts),
        **extra)


def _name(shape: Shape, layout: str) -> str:
    return "x".join(map(str, shape)) + f"/{layout}"


def _sweep_dtype(dtype: str, shapes: Sequence[Shape], layouts: Sequence[str],
                 device: torch.device, *, warmup_iters: int, repeats: int, target: float,
                 cache: int, budget: float) -> tuple[MatmulDtype, list[MatmulPoint]]:
    points: list[MatmulPoint] = []
    notes: list[str] = []
    todo = [(s, lay) for s in shapes for lay in layouts]
    t0 = time.perf_counter()
    for i, (shape, layout) in enumerate(todo):
        if time.perf_counter() - t0 > budget:
            notes.append(f"stopped after {budget:g} s budget; not measured: "
                         + ", ".join(_name(s, lay) for s, lay in todo[i:]))
            break
        try:
            points.append(time_matmul(dtype, shape, device, warmup_iters=warmup_iters,
                                      repeats=repeats, target_seconds=target, cache=cache,
                                      layout=layout))
        except torch.cuda.OutOfMemoryError:
            notes.append(f"out of memory at {_name(shape, layout)}")
        except (RuntimeError, NotImplementedError) as exc:
            if points:
                notes.append(f"{_name(shape, layout)}: {type(exc).__name__}: {exc}")
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
    fields: dict = {}
    if dtype in FP8:
        fast = dtype == "fp8_e4m3_fast"
        shape = FP8_CHECK_SHAPE_GPU if device.type == "cuda" else FP8_CHECK_SHAPE_CPU
        error = fp8_check(device, fast=fast, shape=shape)
        fields = {"accumulation": "fast" if fast else "split (full precision)",
                  "check_reference": "bf16 matmul of the same fp8 inputs at "
                                     + "x".join(map(str, shape)),
                  "check_rel_error": error, "check_max_rel_error": FP8_MAX_REL_ERROR,
                  "check_passed": error <= FP8_MAX_REL_ERROR}
        notes.insert(0, "torch._scaled_mm, unit scales, bf16 output, nt layout, "
                        f"use_fast_accum={fast}")
    return MatmulDtype(dtype=dtype, status="measured", reason="; ".join(notes) or None,
                       best_tflops=best.tflops, best_shape=(best.m, best.n, best.k),
                       best_layout=best.layout,
                       median_tflops=median([p.tflops for p in points]),
                       points_measured=len(points), **fields), points
