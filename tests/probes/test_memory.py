"""Copy bandwidth on CPU: the 2*N convention, and honest skips for host<->device."""

from __future__ import annotations

import statistics
import time

import pytest

torch = pytest.importorskip("torch")

from probes import _memory  # noqa: E402

CPU = torch.device("cpu")
N = 8 << 20


def plain_copy_gb_per_s(n: int, iters: int = 20) -> float:
    src, dst = torch.randint(0, 256, (n,), dtype=torch.uint8), torch.empty(n, dtype=torch.uint8)
    dst.copy_(src)
    t0 = time.perf_counter()
    for _ in range(iters):
        dst.copy_(src)
    return 2 * n / ((time.perf_counter() - t0) / iters) / 1e9  # read + write, as STREAM Copy


def test_host_copy_agrees_with_a_plain_copy_loop(single_thread):
    probe, reference = [], []
    for _ in range(5):
        reference.append(plain_copy_gb_per_s(N))
        section = _memory.run_memory_probe(CPU, repeats=3, target_seconds_per_repeat=0.02,
                                           copy_bytes=N)
        (host,) = [p for p in section.points if p.name == "host_copy"]
        probe.append(host.gb_per_s)
    ratio = statistics.median(probe) / statistics.median(reference)
    assert 0.7 <= ratio <= 1.3, (probe, reference)


def test_byte_convention_and_skips_on_cpu():
    section = _memory.run_memory_probe(CPU, quick=True, repeats=1,
                                       target_seconds_per_repeat=0.001, copy_bytes=1 << 20)
    by_name = {p.name: p for p in section.points}
    host = by_name["host_copy"]
    assert host.status == "measured"
    assert host.counted_bytes == 2 * host.size_bytes == 2 << 20
    assert host.gb_per_s == pytest.approx(host.counted_bytes / host.seconds_median / 1e9)
    assert "2*N" in section.byte_convention
    for name in ("device_copy", "h2d_pinned", "h2d_pageable", "d2h_pinned", "d2h_pageable"):
        assert by_name[name].status == "skipped" and by_name[name].reason
