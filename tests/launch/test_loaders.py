"""The orchestrators' own loaders accept the generated files, where their packages are
installed (neither is a dependency of gpuplan; each test is skipped without its package)."""

from __future__ import annotations

import pytest
import yaml

from catalog import load_catalog
from planner.launch import probes_launch, spec_for_instance, training_launch

CAT = load_catalog("packaged")  # the launch names of its accelerators

REC = {"cloud": "aws", "region": "us-east-1", "instance_type": "p5.48xlarge", "nodes": 2,
       "gpus": 16, "pricing": "spot", "accelerator": "H100-SXM5-80GB",
       "plan": {"tp": 8, "pp": 1, "dp": 2, "zero_stage": 1, "micro_batch": 2,
                "recompute": "selective", "grad_accumulation": 16}}


def bundles(cat, target):
    yield probes_launch(spec_for_instance(cat, "p5.48xlarge", 2, region="us-east-1"), target,
                        task_path=f"p.{target}.yml", bucket="s3://my-bucket/x")
    yield probes_launch(spec_for_instance(cat, "n1+t4x4", 1, spot=True), target,
                        task_path=f"q.{target}.yml")
    yield training_launch(REC, target, catalog=CAT, task_path=f"t.{target}.yml")


def test_dstack_parser_accepts_tasks_and_fleets(cat):
    # dstack's own configuration models (pydantic), as `dstack apply -f` parses a file.
    conf = pytest.importorskip("dstack._internal.core.models.configurations",
                               reason="dstack is not installed (pip install dstack)")
    seen = set()
    for bundle in bundles(cat, "dstack"):
        for f in bundle.files:
            parsed = conf.parse_apply_configuration(yaml.safe_load(f.text))
            seen.add(parsed.type)
            if parsed.type == "task":
                conf.parse_run_configuration(yaml.safe_load(f.text))
            else:
                assert parsed.placement.value == "cluster"
    assert seen == {"task", "fleet"}


def test_skypilot_loader_accepts_tasks(cat, tmp_path):
    sky = pytest.importorskip("sky", reason="skypilot is not installed (pip install skypilot)")
    from sky.utils import common_utils, resources_utils, schemas

    for bundle in bundles(cat, "skypilot"):
        (f,) = bundle.files
        config = yaml.safe_load(f.text)
        # The first step of sky.Task.from_yaml: the task JSON schema (offline).
        common_utils.validate_schema(config, schemas.get_task_schema(), "Invalid task YAML: ")
        tier = config["resources"].get("network_tier")
        if tier:
            resources_utils.NetworkTier(tier)  # the schema only says "string"
        path = tmp_path / "task.yaml"
        path.write_text(f.text, encoding="utf-8")
        try:
            task = sky.Task.from_yaml(str(path))
        except Exception as exc:  # its instance catalog is fetched over the network
            if "connection" in type(exc).__name__.lower() or "catalog" in str(exc).lower():
                pytest.skip(f"sky.Task.from_yaml needs SkyPilot's online catalog: {exc!s:.80}")
            raise
        assert task.num_nodes == config["num_nodes"]
