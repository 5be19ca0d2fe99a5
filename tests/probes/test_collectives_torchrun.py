"""A real two-process gloo run under torchrun, and the nccl-tests bandwidth arithmetic."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from probes import load_report, parse_report, report_to_json

pytest.importorskip("torch")

from probes._collectives import bus_bandwidth  # noqa: E402


def _env() -> dict[str, str]:
    env = dict(os.environ, GPUPLAN_NO_METADATA="1", OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"):
        env.pop(name, None)
    return env


def test_two_process_gloo_run_measures_all_three_collectives(tmp_path):
    out = tmp_path / "r.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "probes", "--quick", "--device", "cpu", "--shapes", "128",
           "--dtypes", "fp32", "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env(),
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = load_report(out)
    assert parse_report(json.loads(report_to_json(report))) == report
    assert report.errors == ()
    assert report.environment.world_size == 2 and report.environment.node_count == 1
    col = report.collectives
    assert (col.backend, col.status, col.world_size) == ("gloo", "measured", 2)
    intra = {s.op: s for s in col.series if s.scope == "intra_node"}
    assert set(intra) == {"all_reduce", "all_gather", "reduce_scatter"}
    for op, series in intra.items():
        assert series.group_size == 2
        if op == "reduce_scatter" and series.status == "skipped":
            assert "not supported" in series.reason  # honest, never emulated
            continue
        assert series.status == "measured" and not series.emulated
        assert series.implementation.startswith("torch.distributed.")
        assert [p.size_bytes for p in series.points] == [1024, 32 * 1024, 1024 * 1024]
        for p in series.points:
            assert p.busbw_gb_per_s > 0
            assert p.algbw_gb_per_s == pytest.approx(p.size_bytes / p.seconds_median / 1e9)
            factor = 1.0 if op == "all_reduce" else 0.5  # 2(n-1)/n and (n-1)/n at n=2
            assert p.busbw_gb_per_s == pytest.approx(p.algbw_gb_per_s * factor)
    world = [s for s in col.series if s.scope == "world"]
    assert world and all(s.status == "skipped" and "single node" in s.reason for s in world)
    assert "busbw" in proc.stdout  # rank 0 printed the summary


def test_missing_peer_fails_cleanly_within_the_timeout(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = _env() | {"RANK": "0", "WORLD_SIZE": "2", "LOCAL_RANK": "0",
                    "LOCAL_WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                    "MASTER_PORT": str(port)}
    cmd = [sys.executable, "-m", "probes", "--quick", "--device", "cpu", "--timeout-s", "2",
           "--out", str(tmp_path / "r.json")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2
    assert "process group" in proc.stdout and "To fix:" in proc.stdout
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("op, n, expected", [("all_reduce", 8, 175.0), ("all_gather", 8, 87.5),
                                              ("reduce_scatter", 8, 87.5),
                                              ("all_reduce", 2, 100.0)])
def test_bus_bandwidth_follows_nccl_tests(op, n, expected):
    assert bus_bandwidth(op, 100.0, n) == pytest.approx(expected)


@pytest.fixture
def one_rank_gloo(tmp_path):
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0,
                            world_size=1)
    yield dist
    dist.destroy_process_group()


def _unsupported(*args, **kwargs):
    raise RuntimeError("ProcessGroupGloo does not support reduce_scatter")


def test_fallbacks_are_named_and_missing_ops_skipped_not_emulated(one_rank_gloo, monkeypatch):
    import torch

    from probes import _collectives

    dist = one_rank_gloo
    monkeypatch.setattr(dist, "all_gather_single", _unsupported, raising=False)
    monkeypatch.setattr(dist, "all_gather_into_tensor", _unsupported)
    gather = _collectives._series("all_gather", "world", 1, [4096], torch.device("cpu"),
                                  None, quick=True)
    assert gather.status == "measured"
    assert gather.implementation == "torch.distributed.all_gather"

    monkeypatch.setattr(dist, "reduce_scatter_single", _unsupported, raising=False)
    monkeypatch.setattr(dist, "reduce_scatter_tensor", _unsupported)
    monkeypatch.setattr(dist, "reduce_scatter", _unsupported)
    scatter = _collectives._series("reduce_scatter", "world", 1, [4096], torch.device("cpu"),
                                   None, quick=True)
    assert scatter.status == "skipped" and not scatter.emulated
    assert "not supported by this backend" in scatter.reason and not scatter.points


def test_a_real_failure_is_not_mistaken_for_a_missing_op(one_rank_gloo, monkeypatch):
    import torch

    from probes import _collectives

    def timeout(*args, **kwargs):
        raise RuntimeError("Timed out waiting 120000ms for recv operation to complete")

    monkeypatch.setattr(one_rank_gloo, "all_reduce", timeout)
    with pytest.raises(RuntimeError, match="Timed out"):
        _collectives._series("all_reduce", "world", 1, [4096], torch.device("cpu"), None,
                             quick=True)
