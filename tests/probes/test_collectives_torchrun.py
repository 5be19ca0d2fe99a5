"""Real two-process gloo runs under torchrun: every rank's figures and errors gathered to rank 0,
the collectives with their transport and percentiles; and the nccl-tests bandwidth
arithmetic."""

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


# Runs the probes under torchrun with rank 1's memory probe broken, to see that rank 0's report
# holds rank 1's figures and its error.
RANK1_FAILS = """
import os, sys
from probes import _memory
from probes.cli import main

if os.environ["RANK"] == "1":
    def broken(*args, **kwargs):
        raise RuntimeError("ECC error on rank 1")
    _memory.run_memory_probe = broken
sys.exit(main(sys.argv[1:]))
"""


def test_two_process_gloo_run_gathers_every_rank(tmp_path):
    out = tmp_path / "r.json"
    script = tmp_path / "run.py"
    script.write_text(RANK1_FAILS)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(script), "--quick", "--device", "cpu", "--shapes", "128", "--dtypes", "fp32",
           "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env(),
                          cwd=tmp_path)
    # exit 1: the report was written, a probe failed (on rank 1)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    report = load_report(out)
    assert parse_report(json.loads(report_to_json(report))) == report
    (error,) = report.errors
    assert (error.probe, error.rank, error.message) == ("memory", 1, "ECC error on rank 1")
    assert report.environment.world_size == 2 and report.environment.node_count == 1

    # every rank's figures, and their spread, are in rank 0's report
    assert [r.rank for r in report.ranks] == [0, 1]
    assert [v.name for v in report.ranks[1].matmul_best_tflops] == ["fp32"]
    assert report.ranks[1].memory_gb_per_s == ()  # its memory probe failed
    spread = report.matmul.dtypes[0].across_ranks
    assert spread.n == 2 and spread.min_rank in (0, 1)
    assert spread.min == min(r.matmul_best_tflops[0].value for r in report.ranks)
    assert report.memory.points[0].across_ranks.n == 1  # only rank 0 measured it

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
        assert (series.transport, series.net, series.rdma) == ("gloo/TCP", "Socket", False)
        assert [p.size_bytes for p in series.points] == [1024, 32 * 1024, 1024 * 1024]
        for p in series.points:
            assert p.busbw_gb_per_s > 0 and p.iterations == 10
            assert p.busbw_p10_gb_per_s <= p.busbw_gb_per_s <= p.busbw_p90_gb_per_s
            assert p.algbw_gb_per_s == pytest.approx(p.size_bytes / p.seconds_median / 1e9)
            factor = 1.0 if op == "all_reduce" else 0.5  # 2(n-1)/n and (n-1)/n at n=2
            assert p.busbw_gb_per_s == pytest.approx(p.algbw_gb_per_s * factor)
    world = [s for s in col.series if s.scope == "world"]
    assert world and all(s.status == "skipped" and "single node" in s.reason for s in world)
    assert "busbw" in proc.stdout and "error in memory (rank 1)" in proc.stdout


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
    assert proc.stdout == ""
    line = proc.stderr.strip()
    assert line.count("\n") == 0, proc.stderr
    assert line.startswith("error: cannot start the gloo process group for rank 0 of 2 within "
                           "2 s") and "To fix: run the same torchrun command" in line
    assert not (tmp_path / "r.json").exists()


# Rank 1 alone cannot start (as a rank beyond the node's GPUs): rank 0 waits for it in the
# process group, so only rank 1 can say why.
RANK1_HAS_NO_GPU = """
import os, sys
import probes._timing as timing
from probes import ProbeSetupError
from probes.cli import main

if os.environ["RANK"] == "1":
    def no_gpu(requested, *, local_rank=0):
        raise ProbeSetupError("local rank 1 has no GPU: this node shows 1. To fix: set "
                              "torchrun --nproc-per-node to at most the number of GPUs.")
    timing.resolve_device = no_gpu
sys.exit(main(sys.argv[1:]))
"""


def torchrun_error_lines(proc) -> list[str]:
    """The error lines of a torchrun run whose ranks all write to one log: on stderr, none on
    stdout (torchrun's own report of the failed ranks follows on stderr)."""
    assert "error:" not in proc.stdout and "To fix" not in proc.stdout, proc.stdout
    return [line for line in proc.stderr.splitlines() if line.startswith("error: ")]


def test_an_error_of_one_rank_under_torchrun_reaches_the_user_once(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(RANK1_HAS_NO_GPU)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           str(script), "--quick", "--device", "cpu", "--timeout-s", "60",
           "--out", str(tmp_path / "r.json")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=_env(),
                          cwd=tmp_path)
    assert proc.returncode != 0
    assert torchrun_error_lines(proc) == [
        "error: local rank 1 has no GPU: this node shows 1. To fix: set torchrun "
        "--nproc-per-node to at most the number of GPUs."], proc.stderr[-3000:]
    assert "exitcode  : 2" in proc.stderr  # rank 1's, in torchrun's report
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


class _FakeCapture:
    """A LogCapture whose file holds a trimmed NCCL log (tests/probes/fixtures)."""

    reason = None

    def __init__(self, name: str) -> None:
        from pathlib import Path

        self.text = (Path(__file__).parent / "fixtures" / name).read_text()

    def read_own(self) -> str:
        return self.text


def test_nccl_series_get_the_transport_of_their_communicator(one_rank_gloo):
    from probes import _collectives
    from probes._schema import CollectivePoint, CollectiveSeries

    point = CollectivePoint(size_bytes=2**30, seconds_median=0.005, algbw_gb_per_s=200.0,
                            busbw_gb_per_s=375.0)
    intra = CollectiveSeries(op="all_reduce", scope="intra_node", group_size=8,
                             status="measured", points=(point,))
    world = CollectiveSeries(op="all_reduce", scope="world", group_size=16, status="measured",
                             points=(point,))
    skipped = CollectiveSeries(op="all_gather", scope="world", group_size=16, status="skipped",
                               reason="x")
    ib = _collectives._with_transports([intra, world, skipped], "nccl",
                                       _FakeCapture("nccl_info_2node_ib.log"))
    assert (ib[0].transport, ib[0].net, ib[0].rdma) == ("NVLS+P2P/CUMEM", None, None)
    assert (ib[1].net, ib[1].rdma, ib[1].net_plugin) == ("IB", True, "internal")
    assert ib[1].transport == "NET/IB/GDRDMA+NVLS+P2P/CUMEM" and ib[2] == skipped
    tcp = _collectives._with_transports([world], "nccl",
                                        _FakeCapture("nccl_info_2node_socket.log"))
    assert (tcp[0].net, tcp[0].rdma) == ("Socket", False)
    unknown = _collectives._with_transports([world], "nccl", None)
    assert unknown[0].transport is None and unknown[0].transport_source.startswith("unknown")
