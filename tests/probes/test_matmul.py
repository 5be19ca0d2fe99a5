"""The matmul probe: the MAMF-style statistics (max and median over shapes and layouts), the
FLOP arithmetic, the warm-up, fp8's check against bf16, and honest skips.

Speed on a shared 2-core CI box is noise, so no test here asserts a speed. The arithmetic is
checked exactly against a fake clock; agreement with a plain GEMM loop is checked against a
reference measured in the same loop, interleaved, with a bound wide enough that only a
broken probe (rotating the wrong buffers, a wrong FLOP count) can miss it.
"""

from __future__ import annotations

import statistics
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

from probes import _matmul, _timing, _warmup  # noqa: E402

CPU = torch.device("cpu")


class FakeClock:
    """perf_counter that advances ``step`` seconds per matmul call, and not otherwise."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        return self.now

    def tick(self, *args, **kwargs):
        self.now += self.step
        return None


def test_tflops_is_exactly_two_mnk_over_the_timed_seconds(monkeypatch):
    clock = FakeClock(step=0.004)
    monkeypatch.setattr(_timing.time, "perf_counter", clock)
    monkeypatch.setattr(_matmul, "_make_call", lambda *a, **k: clock.tick)
    point = _matmul.time_matmul("fp32", (64, 32, 16), CPU, warmup_iters=1, repeats=3,
                                target_seconds=0.01, cache=1 << 20, layout="nt")
    assert point.seconds_median == pytest.approx(0.004)
    assert point.tflops == pytest.approx(2 * 64 * 32 * 16 / 0.004 / 1e12)
    assert point.tflops_p10 == pytest.approx(point.tflops) == pytest.approx(point.tflops_p90)
    assert (point.m, point.n, point.k, point.layout) == (64, 32, 16, "nt")


def test_probe_and_a_plain_gemm_loop_agree_in_the_same_loop(single_thread):
    def plain(n: int, iters: int = 20) -> float:
        a, b = torch.randn(n, n), torch.randn(n, n)
        a @ b
        t0 = time.perf_counter()
        for _ in range(iters):
            a @ b
        return 2 * n**3 / ((time.perf_counter() - t0) / iters) / 1e12

    ratios = []
    for _ in range(5):  # interleaved, so a busy neighbour slows both alike
        ref = plain(256)
        section = _matmul.run_matmul_probe(CPU, shapes=((256, 256, 256),), dtypes=("fp32",),
                                           warmup_iters=2, repeats=3,
                                           target_seconds_per_repeat=0.01)
        ratios.append(section.dtypes[0].best_tflops / ref)
    assert 1 / 3 <= statistics.median(ratios) <= 3, ratios


def test_best_is_the_max_and_median_the_median_over_shapes_and_layouts():
    shapes = ((32, 32, 32), (64, 64, 64), (96, 64, 32))
    section = _matmul.run_matmul_probe(CPU, shapes=shapes, dtypes=("fp32",), warmup_iters=1,
                                       repeats=1, target_seconds_per_repeat=0.001,
                                       layouts=("nn", "nt"))
    (d,) = section.dtypes
    points = [p for p in section.points if p.dtype == "fp32"]
    assert {(p.m, p.n, p.k, p.layout) for p in points} == {(*s, lay) for s in shapes
                                                          for lay in ("nn", "nt")}
    best = max(points, key=lambda p: p.tflops)
    assert d.best_tflops == best.tflops and d.best_shape == (best.m, best.n, best.k)
    assert d.best_layout == best.layout and d.points_measured == 6
    assert d.median_tflops == pytest.approx(statistics.median(p.tflops for p in points))
    assert section.layouts == ("nn", "nt") and section.sweep == "custom"


def test_the_nt_layout_is_the_transpose_of_a_row_major_weight():
    call = _matmul._make_call("fp32", (8, 6, 4), 2, CPU, "nt")
    out = call(0)
    assert out.shape == (8, 6) and torch.count_nonzero(out) > 0  # random, never zeros


def test_fp8_modes_are_checked_against_bf16_on_the_same_inputs():
    if _matmul.skip_reason("fp8_e4m3", CPU) is not None:
        pytest.skip(_matmul.skip_reason("fp8_e4m3", CPU))
    section = _matmul.run_matmul_probe(CPU, shapes=((64, 64, 64),),
                                       dtypes=("fp8_e4m3", "fp8_e4m3_fast"), warmup_iters=1,
                                       repeats=1, target_seconds_per_repeat=0.001,
                                       layouts=("nn", "nt"))
    by = {d.dtype: d for d in section.dtypes}
    assert by["fp8_e4m3"].accumulation.startswith("split") and by["fp8_e4m3_fast"].accumulation \
        == "fast"
    for d in by.values():
        assert d.status == "measured" and d.check_passed is True
        assert 0 <= d.check_rel_error <= d.check_max_rel_error == _matmul.FP8_MAX_REL_ERROR
        assert "bf16" in d.check_reference
    assert {p.layout for p in section.points} == {"nt"}  # _scaled_mm wants B column-major
    error = _matmul.fp8_check(CPU, fast=False, shape=(32, 32, 64))
    assert error < 0.05


def test_a_wrong_fp8_result_fails_the_check(monkeypatch):
    if _matmul.skip_reason("fp8_e4m3", CPU) is not None:
        pytest.skip(_matmul.skip_reason("fp8_e4m3", CPU))
    real = _matmul._scaled
    monkeypatch.setattr(_matmul, "_scaled", lambda a, b, **kw: real(a, b, **kw) * 2)
    assert _matmul.fp8_check(CPU, fast=True, shape=(32, 32, 64)) == pytest.approx(1.0, rel=0.02)


def test_cpu_skips_tf32_with_a_reason():
    section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=("fp32", "tf32"),
                                       warmup_iters=1, repeats=1,
                                       target_seconds_per_repeat=0.001)
    by_name = {d.dtype: d for d in section.dtypes}
    assert by_name["tf32"].status == "skipped" and "CPU" in by_name["tf32"].reason
    assert by_name["fp32"].status == "measured"


def test_tf32_settings_are_recorded_and_restored():
    before = torch.get_float32_matmul_precision()
    torch.set_float32_matmul_precision("medium")
    try:
        section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=("fp32",),
                                           warmup_iters=1, repeats=1,
                                           target_seconds_per_repeat=0.001)
        assert section.float32_matmul_precision == "medium"
        assert torch.get_float32_matmul_precision() == "medium"
    finally:
        torch.set_float32_matmul_precision(before)


def test_a_failing_dtype_is_recorded_not_raised(monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("addmm_impl_cpu_ not implemented for 'Half'")

    monkeypatch.setattr(_matmul, "time_matmul", broken)
    section = _matmul.run_matmul_probe(CPU, shapes=((32, 32, 32),), dtypes=("fp16",))
    (dtype,) = section.dtypes
    assert dtype.status == "failed" and "not implemented" in dtype.reason


def test_the_warm_up_stops_once_three_windows_agree(monkeypatch):
    clock = FakeClock(step=0.01)  # every call takes exactly 10 ms: settled at once
    monkeypatch.setattr(_timing.time, "perf_counter", clock)
    monkeypatch.setattr(_warmup.time, "perf_counter", clock)
    sampled = []
    done = _warmup.settle(clock.tick, 2e9, CPU, dtype="fp32", shape=(1000, 1000, 1000),
                          min_seconds=0.2, max_seconds=5.0, window_seconds=0.05,
                          sample=lambda: sampled.append(1))
    assert done.settled and 0.2 <= done.seconds < 1.0
    assert done.burst_tflops == pytest.approx(0.2) == pytest.approx(done.sustained_tflops)
    assert sampled == [1]  # telemetry is read once, during the last window
    fields = done.as_fields()
    assert fields["warmup_shape"] == (1000, 1000, 1000) and fields["warmup_settled"] is True


def test_a_warm_up_that_never_settles_stops_at_its_limit(monkeypatch):
    clock = FakeClock(step=0.01)
    slower = iter(range(1, 10_000))

    def drifting(*args):  # each call 1% slower than the last: never three equal windows
        clock.now += 0.01 * (1.01 ** next(slower))

    monkeypatch.setattr(_timing.time, "perf_counter", clock)
    monkeypatch.setattr(_warmup.time, "perf_counter", clock)
    done = _warmup.settle(drifting, 2e9, CPU, dtype="fp32", shape=(1, 1, 1), min_seconds=0.1,
                          max_seconds=0.5, window_seconds=0.05)
    assert not done.settled and done.seconds >= 0.5
    assert done.sustained_tflops < done.burst_tflops


@given(per_set=st.integers(1, 2**34), cache=st.integers(1, 2**30))
def test_rotating_buffers_exceed_the_cache(per_set, cache):
    sets = _matmul.buffer_sets(per_set, cache)
    assert sets >= 2
    assert sets * per_set > cache or sets == _matmul.MAX_SETS


def test_the_default_gpu_sweep_covers_training_shapes_in_both_layouts():
    shapes = _matmul.GPU_SHAPES
    assert len(shapes) >= 8 and len(set(shapes)) == len(shapes)
    assert {m for m, _, _ in shapes} <= {8192, 16384}
    assert (8192, 14336, 4096) in shapes and (8192, 4096, 14336) in shapes  # Llama-3 8B MLP
