"""The generated task files, run the way each orchestrator would run them on a node — on CPU.

For each target the test does what the orchestrator documents and nothing more: copy the
local probes to where the task's file upload puts them (SkyPilot ``file_mounts``, dstack
``files``), run ``setup``/``commands`` with bash and the orchestrator's variables
(SKYPILOT_NODE_RANK/SKYPILOT_NODE_IPS, DSTACK_NODE_RANK/DSTACK_MASTER_NODE_IP), from a
directory outside this checkout. Only two things are adapted to a CPU box, in the open:
``--nproc-per-node 8`` becomes 2 (gloo processes instead of GPUs) and GPUPLAN_PROBE_ARGS (the
task's own knob) asks for a quick CPU run. The report must come out where the printed commands
fetch it from, and ingest.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from launch_helpers import load

from planner.launch import probes_launch, spec_for_instance
from probes import load_report

pytest.importorskip("torch")

CPU_ARGS = "--device cpu --quick --shapes 64 --dtypes fp32 --sizes 1K,64K"


def _node_env(home: Path, **extra: str) -> dict[str, str]:
    # a fresh node: no torchrun variables, no PYTHONPATH, and bytecode written as usual
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR",
                        "MASTER_PORT", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
    bindir = str(Path(sys.executable).parent)  # python3 and torchrun of this environment
    return env | {"HOME": str(home), "PATH": f"{bindir}:{env.get('PATH', '')}",
                  "GPUPLAN_NO_METADATA": "1", "OMP_NUM_THREADS": "1",
                  "GPUPLAN_PROBE_ARGS": CPU_ARGS, **extra}


def _bash(script: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    script = script.replace("--nproc-per-node 8", "--nproc-per-node 2")
    return subprocess.run(["bash", "-c", script], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180)


def _copy(local: str, dest: Path) -> Path:
    # what the orchestrator's upload does; without bytecode, so a fresh __pycache__ afterwards
    # proves the node imported this copy, not the checkout
    shutil.copytree(local, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _ingests(report_path: Path, catalog) -> None:
    from planner.store import ingest

    report = load_report(report_path)
    assert report.environment.world_size == 2 and len(report.ranks) == 2
    assert report.collectives.status == "measured"
    assert ingest(report_path, catalog).ingest_status == "stored"


def test_skypilot_task_runs_on_a_node(cat, tmp_path):
    bundle = probes_launch(spec_for_instance(cat, "p5.48xlarge", 1), "skypilot",
                           task_path="p.sky.yaml")
    task = load(bundle.files[0].text)
    home = tmp_path / "home"
    ((remote, local),) = task["file_mounts"].items()
    copy = _copy(local, home / remote.removeprefix("~/"))
    env = _node_env(home, SKYPILOT_NODE_RANK="0", SKYPILOT_NODE_IPS="127.0.0.1\n",
                    SKYPILOT_NUM_NODES="1", SKYPILOT_NUM_GPUS_PER_NODE="2")
    node = tmp_path / "sky_workdir"
    node.mkdir()
    for script in (task["setup"], task["run"]):
        proc = _bash(script, env, node)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (copy / "__pycache__").is_dir()
    report = home / "gpuplan-probes" / "report.json"  # where the printed scp fetches it
    assert "~/gpuplan-probes/report.json" in bundle.commands[1]
    assert f"report: {report}" in proc.stdout
    _ingests(report, cat)


def test_dstack_task_runs_on_a_node(cat, tmp_path):
    bundle = probes_launch(spec_for_instance(cat, "p5.48xlarge", 1), "dstack",
                           task_path="p.dstack.yml")
    (task,) = (load(f.text) for f in bundle.files)
    work, home = tmp_path / "workflow", tmp_path / "home"
    work.mkdir()
    ((mapping,),) = (task["files"],)
    local, path = mapping.rsplit(":", 1)
    copy = _copy(local, work / path)  # a relative path lands in the working directory
    env = _node_env(home, DSTACK_NODE_RANK="0", DSTACK_MASTER_NODE_IP="127.0.0.1",
                    DSTACK_NODES_NUM="1", DSTACK_GPUS_PER_NODE="2", GPUPLAN_HOLD_SECONDS="0")
    for script in task["commands"]:
        proc = _bash(script, env, work)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert (copy / "__pycache__").is_dir()
    assert "report ready: scp gpuplan-probes-p5-48xlarge-1n:~/gpuplan-probes/report.json" \
        in proc.stdout
    _ingests(home / "gpuplan-probes" / "report.json", cat)
