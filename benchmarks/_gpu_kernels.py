"""The GPU measurements of ``gpu_check.py``, written without the probe's code (its own
shapes, buffers, timers and FLOP counts, so a bug in the probe cannot hide in the reference):
MAMF-lite, triad, burst vs sustained, fp8 accuracy and timer agreement (checks 3-7 of
gpu_check's docstring). Each imports torch when called; on CPU the timers are the wall clock.
"""

from __future__ import annotations

import functools
import time


# -- timing helpers of this script (not the probe's) --------------------------------------------
def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def _events_ms(fn, device: str) -> float:
    """One call timed with CUDA events (wall clock on CPU), in ms."""
    import torch

    if device != "cuda":
        t0 = time.perf_counter()
        fn()
        return (time.perf_counter() - t0) * 1e3
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end)


# -- 3. MAMF-lite ---------------------------------------------------------------------------
def mamf_lite(device: str, shapes, *, warmup_s: float, iters: int) -> dict:
    import torch

    flush = torch.empty(256 * 2**20 // 4, dtype=torch.int32, device=device)
    results = {}
    end = time.monotonic() + warmup_s
    a0 = torch.randn(shapes[0][0], shapes[0][2], dtype=torch.bfloat16, device=device)
    b0 = torch.randn(shapes[0][1], shapes[0][2], dtype=torch.bfloat16, device=device)
    while time.monotonic() < end:  # clocks settle before any shape is timed
        torch.mm(a0, b0.t())
        _sync(device)
    del a0, b0
    for m, n, k in shapes:
        a = torch.randn(m, k, dtype=torch.bfloat16, device=device)
        b = torch.randn(n, k, dtype=torch.bfloat16, device=device)  # the weight, row-major
        c = torch.empty(m, n, dtype=torch.bfloat16, device=device)
        c_rand = torch.randn(m, n, dtype=torch.bfloat16, device=device)
        flop = 2 * a.shape[0] * a.shape[1] * b.shape[0]
        call = functools.partial(torch.mm, a, b.t(), out=c)  # C = A @ B^T, a Linear layer
        times = []
        for i in range(iters + iters // 2):
            flush.zero_()  # evict L2 between iterations
            c.copy_(c_rand)
            ms = _events_ms(call, device)
            if i >= iters // 2:
                times.append(ms)
        times.sort()
        results[f"{m}x{n}x{k}"] = flop / (times[len(times) // 2] / 1e3) / 1e12
        del a, b, c, c_rand, call
    return results


# -- 4. triad --------------------------------------------------------------------------------
def triad_gb_per_s(device: str, n_bytes: int, iters: int) -> tuple[float, str]:
    import torch

    n = n_bytes // 4
    b, c = torch.randn(n, device=device), torch.randn(n, device=device)
    a = torch.empty(n, device=device)
    kernel, how = None, "torch.add (Triton not available)"
    if device == "cuda":
        try:
            kernel, how = _triton_triad(), "Triton kernel"
        except Exception as exc:  # noqa: BLE001 - any Triton problem: fall back, and say so
            how = f"torch.add (Triton failed: {type(exc).__name__})"

    def run():
        if kernel is not None:
            kernel(a, b, c, 3.0)
        else:
            torch.add(b, c, alpha=3.0, out=a)

    run()
    _sync(device)
    if not torch.allclose(a[:1000], b[:1000] + 3.0 * c[:1000], atol=1e-5):
        raise RuntimeError("triad computed the wrong result")
    ms = sorted(_events_ms(run, device) for _ in range(iters))[iters // 2]
    return 3 * n * 4 / (ms / 1e3) / 1e9, how


def _triton_triad():
    import triton
    import triton.language as tl

    @triton.jit
    def _kernel(a_ptr, b_ptr, c_ptr, s, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        b = tl.load(b_ptr + offs, mask=mask)
        c = tl.load(c_ptr + offs, mask=mask)
        tl.store(a_ptr + offs, b + s * c, mask=mask)

    def launch(a, b, c, s):
        n = a.numel()
        _kernel[(triton.cdiv(n, 4096),)](a, b, c, s, n, BLOCK=4096)

    return launch


# -- 5-7. burst vs sustained, fp8, timers ---------------------------------------------------
def burst_sustained(device: str, size: int, *, idle_s: float, run_s: float) -> tuple[float,
                                                                                    float]:
    import torch

    a = torch.randn(size, size, dtype=torch.bfloat16, device=device)
    b = torch.randn(size, size, dtype=torch.bfloat16, device=device)
    flop = 2 * size**3
    _sync(device)
    time.sleep(idle_s)

    def window(seconds: float) -> float:
        count, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(4):
                torch.mm(a, b)
            _sync(device)
            count += 4
        return flop * count / (time.perf_counter() - t0) / 1e12

    burst = window(min(0.5, run_s / 10))
    window(run_s)
    return burst, window(min(1.0, run_s / 5))


def fp8_error(device: str, size: int, fast: bool) -> float:
    import torch

    gen = torch.Generator(device=device).manual_seed(1)
    a = torch.randn(size, size, device=device, generator=gen) * 3
    b = torch.randn(size, size, device=device, generator=gen) * 0.5
    sa, sb = a.abs().max() / 448, b.abs().max() / 448  # e4m3's largest normal is 448
    a8, b8 = (a / sa).to(torch.float8_e4m3fn), (b / sb).to(torch.float8_e4m3fn)
    out = torch._scaled_mm(a8, b8.t(), scale_a=sa.float(), scale_b=sb.float(),
                           out_dtype=torch.bfloat16, use_fast_accum=fast).float()
    ref = (a8.float() * sa) @ (b8.float() * sb).t()
    return float((out - ref).norm() / ref.norm())


def fp8_unavailable(device: str) -> str | None:
    import torch

    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no fp8 matmul"
    if device == "cuda":
        cap = torch.cuda.get_device_capability(0)
        return None if cap >= (8, 9) else f"fp8 needs compute capability 8.9, this is {cap}"
    try:
        fp8_error(device, 16, False)
    except (RuntimeError, NotImplementedError) as exc:
        return f"torch._scaled_mm does not run on this CPU build ({type(exc).__name__})"
    return None


def timer_agreement(device: str, size: int, count: int) -> tuple[float, float]:
    import torch

    a = torch.randn(size, size, dtype=torch.bfloat16, device=device)
    b = torch.randn(size, size, dtype=torch.bfloat16, device=device)
    torch.mm(a, b)
    _sync(device)
    t0 = time.perf_counter()
    events = _events_ms(lambda: [torch.mm(a, b) for _ in range(count)], device)
    _sync(device)
    return events, (time.perf_counter() - t0) * 1e3
