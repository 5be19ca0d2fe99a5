"""Memory bandwidth on CPU: STREAM's byte conventions for copy (2*N) and triad (3*N), honest
skips for host<->device, and agreement with a plain copy loop timed in the same loop."""

from __future__ import annotations

import statistics
import time

import pytest

torch = pytest.importorskip("torch")

from probes import _memory  # noqa: E402

CPU = torch.device("cpu")
N = 4 << 20


def test_host_copy_agrees_with_a_plain_copy_loop_in_the_same_loop(single_thread):
    def plain(n: int, iters: int = 10) -> float:
        src = torch.randint(0, 256, (n,), dtype=torch.uint8)
        dst = torch.empty(n, dtype=torch.uint8)
        dst.copy_(src)
        t0 = time.perf_counter()
        for _ in range(iters):
            dst.copy_(src)
        return 2 * n / ((time.perf_counter() - t0) / iters) / 1e9  # read + write, STREAM Copy

    ratios = []
    for _ in range(5):  # interleaved: a busy neighbour slows both alike
        ref = plain(N)
        section = _memory.run_memory_probe(CPU, repeats=3, target_seconds_per_repeat=0.01,
                                           copy_bytes=N)
        (host,) = [p for p in section.points if p.name == "host_copy"]
        ratios.append(host.gb_per_s / ref)
    # only a wrong byte count (x2) or timing the wrong thing misses this
    assert 0.5 <= statistics.median(ratios) <= 2.0, ratios


def test_byte_conventions_percentiles_and_skips_on_cpu():
    section = _memory.run_memory_probe(CPU, quick=True, repeats=3,
                                       target_seconds_per_repeat=0.001, copy_bytes=1 << 20)
    by_name = {p.name: p for p in section.points}
    copy, triad = by_name["host_copy"], by_name["host_triad"]
    assert copy.status == triad.status == "measured"
    assert copy.counted_bytes == 2 * copy.size_bytes == 2 << 20
    assert triad.counted_bytes == 3 * triad.size_bytes == 3 << 20
    for p in (copy, triad):
        assert p.gb_per_s == pytest.approx(p.counted_bytes / p.seconds_median / 1e9)
        assert p.gb_per_s_p10 <= p.gb_per_s <= p.gb_per_s_p90
    assert "2*N" in section.byte_convention and "3*N" in section.byte_convention
    for name in ("device_copy", "device_triad", "h2d_pinned", "h2d_pageable", "d2h_pinned",
                 "d2h_pageable"):
        assert by_name[name].status == "skipped" and by_name[name].reason


def test_triad_computes_a_plus_s_times_c(monkeypatch):
    seen = {}
    real_add = torch.add

    def spy(b, c, alpha, out):
        seen["alpha"] = alpha
        result = real_add(b, c, alpha=alpha, out=out)
        seen["ok"] = bool(torch.allclose(out, b + alpha * c, atol=1e-5))
        return result

    monkeypatch.setattr(_memory.torch, "add", spy)
    _memory._triad("host_triad", 1 << 16, CPU, repeats=1, target=0.001)
    assert seen == {"alpha": _memory.TRIAD_SCALAR, "ok": True}


def test_percentiles_come_from_the_repeats(monkeypatch):
    times = iter([0.002, 0.001, 0.002, 0.004])  # warm-up, then three repeats
    monkeypatch.setattr(_memory, "time_block", lambda op, iters, device: next(times))
    monkeypatch.setattr(_memory, "time_repeats",
                        lambda op, iters, repeats, device: [next(times) for _ in range(3)])
    p = _memory._measure("host_copy", lambda i: None, 1000, 2000, CPU, repeats=3, target=0.01)
    assert p.seconds_median == 0.002 and p.gb_per_s == pytest.approx(2000 / 0.002 / 1e9)
    assert p.gb_per_s_p10 == pytest.approx(2000 / 0.0036 / 1e9)  # 90th pct of the seconds
    assert p.gb_per_s_p90 == pytest.approx(2000 / 0.0012 / 1e9)
