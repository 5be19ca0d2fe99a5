"""`plan --emit` sweep: a plan priced as a reservation says what to buy (and dstack gets a
capacity block's `reservation:` placeholder), the no-GPU-name fix names `plan`'s --emit, and
an AWS Local Zone is written as its parent region with a note naming the zone."""

from __future__ import annotations

import pytest
import yaml

from catalog import load_catalog
from planner.cli._launch_cmds import _emit
from planner.launch import LaunchError, probes_launch, spec_for_instance, training_launch

CAT = load_catalog("packaged")
PLAN = {"tp": 8, "pp": 1, "dp": 2, "zero_stage": 1, "micro_batch": 2,
        "recompute": "selective", "grad_accumulation": 16}


def rec(pricing="on_demand", *, region="us-east-1", nodes=2, instance="p5.48xlarge",
        accelerator="H100-SXM5-80GB", cloud="aws", gpus=16):
    return {"cloud": cloud, "region": region, "instance_type": instance, "nodes": nodes,
            "gpus": gpus, "pricing": pricing, "accelerator": accelerator, "plan": PLAN}


def docs(bundle):
    return [yaml.safe_load(f.text) for f in bundle.files]


@pytest.mark.parametrize("target", ["skypilot", "dstack", "torchrun"])
def test_capacity_block_says_how_to_use_the_block(target):
    b = training_launch(rec("capacity_block"), target, task_path=f"cb.{target}", catalog=CAT)
    assert b.notes and "capacity block" in b.notes[0]
    for f in b.files:  # the file says it too
        assert "buy the block first" in f.text
    if target == "skypilot":
        (task,) = docs(b)  # still parses; no guessed key: SkyPilot reads reservations from
        assert "specific_reservations" in b.notes[1]  # ~/.sky/config.yaml
        assert "config" not in task and "reservation" not in str(task["resources"])
    elif target == "dstack":
        fleet, task = docs(b)
        assert fleet["reservation"] == "YOUR_CAPACITY_BLOCK_ID"
        assert "reservation" not in task  # the fleet provisions the instances
    one = training_launch(rec("capacity_block", nodes=1, gpus=8), "dstack",
                          task_path="one.dstack.yml", catalog=CAT)
    assert docs(one)[0]["reservation"] == "YOUR_CAPACITY_BLOCK_ID"


@pytest.mark.parametrize("pricing", ["reserved_1y", "committed_3y"])
def test_commitment_says_buy_it_first(pricing):
    b = training_launch(rec(pricing), "skypilot", task_path="r.sky.yaml", catalog=CAT)
    assert any("buy the reservation / commitment first" in n for n in b.notes)
    assert "buy the reservation / commitment first" in b.files[0].text
    assert "reservation" not in docs(b)[0]["resources"]


@pytest.mark.parametrize("pricing", ["on_demand", "spot"])
def test_on_demand_and_spot_have_no_notes(pricing):
    b = training_launch(rec(pricing), "dstack", task_path="x.dstack.yml", catalog=CAT)
    assert b.notes == () and all("reservation" not in d for d in docs(b))


def test_notes_are_printed_before_the_commands(capsys, tmp_path):
    b = training_launch(rec("capacity_block"), "skypilot",
                        task_path=str(tmp_path / "cb.sky.yaml"), catalog=CAT)
    _emit(b, False, option="--emit-out")
    out = capsys.readouterr().out
    assert "note: The plan is priced as an AWS capacity block" in out
    assert out.index("note:") < out.index("Then run:")


def test_no_gpu_name_fix_names_plans_own_option():
    r = rec(instance="Standard_NC6s_v3", accelerator="V100-PCIe-16GB", cloud="azure",
            region="eastus", nodes=1, gpus=1)
    with pytest.raises(LaunchError) as exc:
        training_launch(r, "dstack", task_path="b.dstack.yml", catalog=CAT)
    assert "--emit skypilot or --emit torchrun" in str(exc.value)
    assert "--target" not in str(exc.value)
    # `launch probes` keeps its own option
    spec = spec_for_instance(CAT, "Standard_NC6s_v3", 1, cloud="azure")
    with pytest.raises(LaunchError, match="use --target skypilot"):
        probes_launch(spec, "dstack", task_path="p.dstack.yml")


def test_local_zone_is_written_as_its_parent_region():
    spec = spec_for_instance(CAT, "p5.48xlarge", 1, region="us-east-1-atl-1")
    assert (spec.region, spec.zone) == ("us-east-1", "us-east-1-atl-1")
    sky = probes_launch(spec, "skypilot", task_path="p.sky.yaml")
    assert docs(sky)[0]["resources"]["infra"] == "aws/us-east-1"
    assert "us-east-1-atl-1" in sky.notes[0] and "Local Zone" in sky.notes[0]
    assert "us-east-1-atl-1" in sky.files[0].text  # the header names the zone
    b = training_launch(rec(region="us-east-1-atl-1"), "dstack", task_path="z.dstack.yml",
                        catalog=CAT)
    assert all(d["regions"] == ["us-east-1"] for d in docs(b))
    assert any("parent region us-east-1" in n for n in b.notes)
    t = training_launch(rec(region="us-east-1-atl-1"), "torchrun", task_path="z.sh",
                        catalog=CAT)
    assert t.notes == () and "us-east-1-atl-1" in t.files[0].text


def test_regions_stay_as_they_are():
    spec = spec_for_instance(CAT, "p5.48xlarge", 1, region="us-gov-west-1")
    assert (spec.region, spec.zone) == ("us-gov-west-1", None)
