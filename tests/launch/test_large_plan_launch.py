"""A plan of more than 1,024 nodes gets its launch files: `plan --emit` of a 1,248-node plan
(llama3-405b within 16,384 GPUs) was refused with "--nodes must be between 1 and 1024", a
flag the user never passed. Probe bundles keep their own 1,024-node limit."""

from __future__ import annotations

import pytest

import catalog
from planner.cli import main
from planner.launch import MAX_NODES, LaunchError, spec_for_instance


@pytest.fixture(scope="module")
def cat():
    return catalog.load_catalog("packaged")


def test_a_launch_spec_takes_a_plan_s_node_count(cat):
    assert spec_for_instance(cat, "p6-b200.48xlarge", 1248).nodes == 1248
    with pytest.raises(LaunchError, match="between 1 and 65,536, got 65,537"):
        spec_for_instance(cat, "p6-b200.48xlarge", 65_537)


def test_a_probe_bundle_keeps_its_limit(capsys):
    code = main(["launch", "probes", "--instance", "p5.48xlarge", "--target", "skypilot",
                 "--nodes", str(MAX_NODES + 1)])
    assert code == 2 and f"between 1 and {MAX_NODES:,}" in capsys.readouterr().err


def test_plan_emits_a_large_plan(tmp_path, capsys):
    out = tmp_path / "sky.yaml"
    code = main(["plan", "--model", "llama3-405b", "--max-gpus", "16384", "--deadline", "60d",
                 "--gpu", "B200", "--emit", "skypilot", "--emit-out", str(out)])
    assert code == 0, capsys.readouterr().err
    nodes = int(next(line.split(":")[1] for line in out.read_text().splitlines()
                     if line.startswith("num_nodes:")))
    assert nodes > 1024
