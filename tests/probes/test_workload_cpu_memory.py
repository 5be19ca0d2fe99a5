"""On CPU the workload probe refuses layers that cannot fit in the machine's memory before
building any: a DeepSeek-V3 layer (every expert) grew past 11 GB of a laptop's memory with
nothing said (found by a CLI fuzzer)."""

from __future__ import annotations

import os

import pytest

from probes import WorkloadConfig

TINY = {"hidden": 64, "heads": 4, "kv_heads": 2, "ffn_hidden": 96, "seq_len": 32,
        "micro_batch": 2, "device": "cpu", "steps": 2, "warmup_steps": 1}
DEEPSEEK_V3 = {"hidden": 7168, "heads": 128, "kv_heads": 128, "head_dim": 192,
               "ffn_hidden": 2048, "seq_len": 4096, "experts": 256, "experts_per_token": 8,
               "shared_experts": 1, "device": "cpu"}


def _machine_gib(monkeypatch, gib: int) -> None:
    page = 4096
    real = os.sysconf
    monkeypatch.setattr(os, "sysconf", lambda name: page if name == "SC_PAGE_SIZE" else
                        gib * 2**30 // page if name == "SC_PHYS_PAGES" else real(name))


def test_a_layer_too_large_for_the_machine_is_refused_before_it_is_built(tmp_path,
                                                                          monkeypatch):
    pytest.importorskip("torch")
    from probes import run_workload_probe

    _machine_gib(monkeypatch, 24)
    report = run_workload_probe(WorkloadConfig(**DEEPSEEK_V3), out=tmp_path / "w.json")
    assert report.workload.status != "measured"
    (error,) = report.errors
    assert "need 448 GiB" in error.message and "24 GiB of memory" in error.message
    assert "To fix: probe it on a GPU node" in error.message
    assert report.duration_seconds < 30  # refused, not built


def test_fewer_layers_are_suggested_when_one_fits(monkeypatch):
    pytest.importorskip("torch")
    from probes._workload import _check_cpu_memory, layer_params

    one_gib = layer_params(WorkloadConfig(**TINY)) * 20 / 2**30
    assert one_gib < 0.01
    _machine_gib(monkeypatch, 1)
    _check_cpu_memory(WorkloadConfig(**TINY))  # two tiny layers fit: nothing said
    big = {**TINY, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672}
    _machine_gib(monkeypatch, 12)  # one such layer needs 16 GiB of state: not even one fits
    with pytest.raises(RuntimeError, match="To fix: probe it on a GPU node"):
        _check_cpu_memory(WorkloadConfig(**big))
    _machine_gib(monkeypatch, 24)  # one fits in 70% of 24 GiB, the default two do not
    with pytest.raises(RuntimeError, match="To fix: --build-layers 1"):
        _check_cpu_memory(WorkloadConfig(**big))
