"""The workload probe under `torchrun --standalone --nproc_per_node=2` on CPU (gloo): a tensor-
parallel dense layer and a data-parallel MoE layer, every rank's figures gathered into rank 0's
report. Each run is a few seconds of start-up and a few tiny steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from probes import load_report, parse_report, report_to_json

pytest.importorskip("torch")

TINY = ["--device", "cpu", "--hidden", "64", "--heads", "4", "--kv-heads", "2", "--seq-len",
        "32", "--steps", "2", "--warmup-steps", "1"]


def _torchrun(tmp_path, *argv):
    env = dict(os.environ, GPUPLAN_NO_METADATA="1", OMP_NUM_THREADS="1")
    for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                 "MASTER_PORT"):
        env.pop(name, None)
    out = tmp_path / "w.json"
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
           "--nproc_per_node=2", "-m", "probes", "workload", *TINY, *argv, "--out", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)
    if proc.returncode and "report written to" in proc.stdout and "(SIGABRT)" in proc.stderr:
        # CPU gloo aborted a rank as the interpreter tore torch down, after the report was
        # written (5 of 118 loaded runs); the workers now leave without that teardown
        # (probes/__main__.py ``_leave``: 0 of 80). Kept: one more run, not a pass on its own
        out.unlink(missing_ok=True)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env,
                              cwd=tmp_path)
    # the ranks' own lines come first in stderr, torchrun's summary of the failure last
    assert proc.returncode == 0, (proc.stdout[-2000:] + proc.stderr[:2000] + "\n…\n"
                                  + proc.stderr[-1000:])
    report = load_report(out)
    assert parse_report(json.loads(report_to_json(report))) == report
    return report, proc.stdout


def _per_rank(report, name):
    return [next(v.value for v in r.workload if v.name == name) for r in report.ranks]


def test_a_tensor_parallel_dense_layer_over_two_gloo_processes(tmp_path):
    report, stdout = _torchrun(tmp_path, "--ffn-hidden", "128", "--micro-batch", "2",
                               "--tp", "2")
    w, env = report.workload, report.environment
    assert (env.world_size, env.local_world_size) == (2, 2) and report.errors == ()
    assert (w.status, w.tp, w.dp, w.experts) == ("measured", 2, 1, 0)
    assert (w.heads, w.kv_heads, w.ffn_hidden) == (4, 2, 128)  # the model's, not the shard's
    assert any("tensor parallel over 2 GPUs" in n for n in w.notes)
    assert w.grad_reduce_seconds is None  # one replica: nothing to reduce
    assert w.split.communication_seconds > 0  # the all-reduces of the column/row split
    assert [r.rank for r in report.ranks] == [0, 1]
    times = _per_rank(report, "layer_fwd_bwd_seconds")
    assert w.across_ranks.n == 2 and w.across_ranks.min == min(times)
    assert "over 2 ranks" in stdout and "communication" in stdout


def test_a_data_parallel_moe_layer_over_two_gloo_processes(tmp_path):
    report, _ = _torchrun(tmp_path, "--ffn-hidden", "48", "--experts", "4",
                          "--experts-per-token", "2", "--recompute", "selective",
                          "--no-profile")
    w = report.workload
    assert (w.status, w.tp, w.dp, w.experts, w.recompute) == ("measured", 1, 2, 4, "selective")
    assert w.grad_reduce_seconds > 0  # the gradients of both replicas are all-reduced
    assert w.step_seconds >= w.fwd_bwd_seconds + w.grad_reduce_seconds
    assert len(report.ranks) == 2 and all(v > 0 for v in _per_rank(report, "layer_saved_bytes"))
