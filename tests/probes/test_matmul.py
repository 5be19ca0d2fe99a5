"""The matmul probe measures what a plain GEMM loop measures, and skips what CPUs lack."""

from __future__ import annotations

import statistics
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from probes import _matmul  # noqa: E402

CPU = torch.device("cpu")
SHAPE = (512, 512, 512)


def plain_fp32_gemm_tflops(n: int, iters: int = 40) -> float:
    """Reference: one pair of random matrices, a timed loop, no rotation, no adaptivity."""
    a, b = torch.randn(n, n), torch.randn(n, n)
    for _ in range(5):
        a @ b
    t0 = time.perf_counter()
    for _ in range(iters):
        a @ b
    return 2 * n**3 / ((time.perf_counter() - t0) / iters) / 1e12


def test_fp32_agrees_with_plain_gemm_within_20_percent(single_thread):
    probe, reference = [], []
    for _ in range(5):  # interleaved, so a busy neighbour slows both alike
        reference.append(plain_fp32_gemm_tflops(SHAPE[0]))
        section = _matmul.run_matmul_probe(CPU, shapes=(SHAPE,), dtypes=("fp32",),
                                           warmup_iters=3, repeats=3,
                                           target_seconds_per_repeat=0.03)
        probe.append(section.dtypes[0].best_tflops)
    ratio = statistics.median(probe) / statistics.median(reference)
    assert 0.8 <= ratio <= 1.2, (probe, reference)


def test_tflops_is_two_mnk_over_time():
    section = _matmul.run_matmul_probe(CPU, shapes=((64, 32, 16),), dtypes=("fp32",),
                                       warmup_iters=1, repeats=1,
                                       target_seconds_per_repeat=0.001)
    (point,) = section.points
    assert (point.m, point.n, point.k) == (64, 32, 16)
    assert point.tflops == pytest.approx(2 * 64 * 32 * 16 / point.seconds_median / 1e12)
    assert section.dtypes[0].best_shape == (64, 32, 16)
    assert section.timing == "perf_counter"


def test_best_is_the_fastest_shape_of_the_table():
    section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32), (128, 128, 128)),
                                       dtypes=("fp32",), warmup_iters=1, repeats=1,
                                       target_seconds_per_repeat=0.002)
    best = max(section.points, key=lambda p: p.tflops)
    assert section.dtypes[0].best_tflops == best.tflops
    assert section.dtypes[0].best_shape == (best.m, best.n, best.k)


def test_cpu_skips_tf32_and_fp8_with_reasons():
    section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=_matmul.DTYPES,
                                       warmup_iters=1, repeats=1,
                                       target_seconds_per_repeat=0.001)
    by_name = {d.dtype: d for d in section.dtypes}
    assert by_name["tf32"].status == "skipped" and "CPU" in by_name["tf32"].reason
    assert by_name["fp8_e4m3"].status == "skipped" and "8.9" in by_name["fp8_e4m3"].reason
    assert by_name["fp32"].status == "measured"
    assert {p.dtype for p in section.points} <= {"fp32", "bf16", "fp16"}


def test_tf32_settings_are_recorded_and_restored():
    before = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    torch.set_float32_matmul_precision("medium")
    try:
        section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=("fp32",),
                                           warmup_iters=1, repeats=1,
                                           target_seconds_per_repeat=0.001)
        assert section.float32_matmul_precision == "medium"
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before[1])


def test_a_failing_dtype_is_recorded_not_raised(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("addmm_impl_cpu_ not implemented for 'Half'")

    monkeypatch.setattr(_matmul, "time_matmul", broken)
    section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=("fp16",))
    (dtype,) = section.dtypes
    assert dtype.status == "failed" and "not implemented" in dtype.reason


def test_inputs_are_random_not_zero():
    call = _matmul._make_call("fp32", (8, 8, 8), 2, CPU)
    out = call(0)
    assert torch.count_nonzero(out) > 0


@given(per_set=st.integers(1, 2**34), cache=st.integers(1, 2**30))
def test_rotating_buffers_exceed_the_cache(per_set, cache):
    sets = _matmul.buffer_sets(per_set, cache)
    assert sets >= 2
    assert sets * per_set > cache or sets == _matmul.MAX_SETS
