"""`plan --emit` tester findings: a SkyPilot cluster that is not a managed spot job tears
itself down after training (it kept billing ~$4,443/h), uneven pipeline stages are stated in
the files, regions priced the same are all listed, and a failed write names the user's file."""

from __future__ import annotations

import math
import resource

import pytest
import yaml
from launch_helpers import run

from catalog import load_catalog
from planner.launch import training_launch

CAT = load_catalog("packaged")
PLAN = {"tp": 8, "pp": 1, "dp": 2, "zero_stage": 1, "micro_batch": 2,
        "recompute": "selective", "grad_accumulation": 16}


def rec(pricing="on_demand", *, regions=None, pp=1, region="us-east-1"):
    r = {"cloud": "aws", "region": region, "instance_type": "p5.48xlarge", "nodes": 2,
         "gpus": 16, "pricing": pricing, "accelerator": "H100-SXM5-80GB",
         "plan": dict(PLAN, pp=pp, dp=2 // pp if pp <= 2 else 1)}
    if regions is not None:
        r["regions"] = regions
    return r


def docs(bundle):
    return [yaml.safe_load(f.text) for f in bundle.files]


# -- 1. teardown --------------------------------------------------------------------------
@pytest.mark.parametrize("pricing", ["on_demand", "reserved_1yr", "capacity_block"])
def test_a_skypilot_training_cluster_is_torn_down_after_it_goes_idle(pricing):
    b = training_launch(rec(pricing), "skypilot", task_path="t.sky.yaml", catalog=CAT)
    (task,) = docs(b)
    assert task["resources"]["autostop"] == {"idle_minutes": 30, "down": True}
    name = task["name"]
    assert b.commands[0].startswith(f"sky launch -c {name} -i 30 --down t.sky.yaml")
    assert b.commands[-1].startswith(f"sky down {name}")


def test_a_spot_plan_stays_a_managed_job_without_autostop():
    b = training_launch(rec("spot"), "skypilot", task_path="s.sky.yaml", catalog=CAT)
    (task,) = docs(b)
    assert "autostop" not in task["resources"]
    assert len(b.commands) == 1 and b.commands[0].startswith("sky jobs launch -n ")


def test_plan_prints_the_autodown_launch(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    out_file = tmp_path / "p2.yaml"
    code, out, err = run(capsys, "plan", "--model", "llama3-70b", "--tokens", "2T",
                         "--deadline", "45d", "--pricing", "on_demand", "--emit", "skypilot",
                         "--emit-out", str(out_file))
    assert code == 0, err
    launch = next(line for line in out.splitlines() if "sky launch -c " in line)
    assert f"-i 30 --down {out_file}" in launch
    assert "sky down gpuplan-train-" in out
    assert yaml.safe_load(out_file.read_text())["resources"]["autostop"]["down"] is True


# -- 2. uneven pipeline stages ------------------------------------------------------------
def test_stage_layers_agree_with_the_model():
    """The launch split's fullest stage is the model's own layers per stage (evaluate's
    ``layers_per_stage``), and the stages hold every layer."""
    import numpy as np

    from planner import WorkloadSpec, build_workload
    from planner.launch._spec import stage_layers
    from planner.model import Assumptions, ModelScalars, evaluate

    ms = ModelScalars.of(build_workload(WorkloadSpec(model="deepseek-v3", tokens="1T")))
    assert ms.L == 61
    for pp in (2, 3, 4, 8, 16, 61):
        one = {k: np.array([v]) for k, v in dict(
            tp=1, pp=pp, dp=8, mb=1, rc=0, zero=1, gpus_per_node=8, matmul_tflops=700.0,
            attention_tflops=400.0, hbm_gb_per_s=3000.0, memory_gib=80.0,
            intra_busbw_gb_per_s=300.0, nic_gb_per_s_per_gpu=50.0).items()}
        model = int(evaluate(ms, Assumptions(), **one)["layers_per_stage"][0])
        split = stage_layers(61, pp)
        if split is None:
            assert 61 % pp == 0 or pp == 1
            continue
        assert max(split) == model == math.ceil(61 / pp)
        assert sum(split) == 61 and len(split) == pp and min(split) >= 1
    assert stage_layers(61, 8) == (8,) * 7 + (5,)
    assert stage_layers(12, 8) == (2,) * 4 + (1,) * 4  # 7 x 2 would be 14 > 12
    assert stage_layers(80, 4) is None and stage_layers(61, 1) is None


@pytest.mark.parametrize("target", ["torchrun", "skypilot", "dstack"])
def test_uneven_stages_are_said_in_the_files(capsys, tmp_path, monkeypatch, target):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    out_file = tmp_path / ("d.sh" if target == "torchrun" else f"d.{target}.yml")
    code, _, err = run(capsys, "plan", "--model", "deepseek-v3", "--tokens", "1T",
                       "--deadline", "60d", "--pricing", "on_demand", "--pp", "8",
                       "--emit", target, "--emit-out", str(out_file))
    assert code == 0, err
    text = out_file.read_text()
    assert "# Pipeline stages are uneven: 61 layers over 8 stages — the first 7 hold 8 " \
           "layers each, the last holds 5" in text
    for k, v in (("GPUPLAN_LAYERS_PER_STAGE", "8"), ("GPUPLAN_LAST_STAGE_LAYERS", "5"),
                 ("GPUPLAN_STAGE_LAYERS", "8,8,8,8,8,8,8,5")):
        assert (f"export {k}={v}\n" in text if target == "torchrun" else
                f"{k}: '{v}'" in text or f"{k}={v}" in text or f"{k}: {v}" in text), k


def test_even_stages_add_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    out_file = tmp_path / "e.sh"
    code, _, err = run(capsys, "plan", "--model", "llama3-70b", "--tokens", "2T",
                       "--deadline", "45d", "--pp", "4", "--emit", "torchrun",
                       "--emit-out", str(out_file))
    assert code == 0, err
    text = out_file.read_text()
    assert "GPUPLAN_PP=4" in text and "_STAGE_LAYERS" not in text and "uneven" not in text


# -- 3. regions priced the same -----------------------------------------------------------
SAME = ["us-east-1", "us-east-1-atl-1", "us-east-2", "us-west-2"]


def test_regions_priced_the_same_are_all_listed():
    d = training_launch(rec(regions=SAME), "dstack", task_path="r.dstack.yml", catalog=CAT)
    assert all(doc["regions"] == ["us-east-1", "us-east-2", "us-west-2"] for doc in docs(d))
    s = training_launch(rec("spot", regions=SAME), "skypilot", task_path="r.sky.yaml",
                        catalog=CAT)
    (task,) = docs(s)
    assert "infra" not in task["resources"]
    assert task["resources"]["any_of"] == [{"infra": "aws/us-east-1"},
                                           {"infra": "aws/us-east-2"},
                                           {"infra": "aws/us-west-2"}]
    assert "us-east-1, us-east-2 or us-west-2 at the same price" in s.files[0].text


@pytest.mark.parametrize("pricing", ["reserved_1yr", "capacity_block"])
def test_a_reservation_stays_in_its_one_region(pricing):
    d = training_launch(rec(pricing, regions=SAME), "dstack", task_path="r.dstack.yml",
                        catalog=CAT)
    assert all(doc["regions"] == ["us-east-1"] for doc in docs(d))
    s = training_launch(rec(pricing, regions=SAME), "skypilot", task_path="r.sky.yaml",
                        catalog=CAT)
    assert docs(s)[0]["resources"]["infra"] == "aws/us-east-1"


def test_one_region_keeps_infra():
    s = training_launch(rec(regions=["us-east-1"]), "skypilot", task_path="o.sky.yaml",
                        catalog=CAT)
    res = docs(s)[0]["resources"]
    assert res["infra"] == "aws/us-east-1" and "any_of" not in res


def test_a_zone_recommended_lists_its_parent_then_the_equal_regions():
    d = training_launch(rec(region="us-east-1-atl-1", regions=["us-east-1-atl-1", "us-west-2"]),
                        "dstack", task_path="z.dstack.yml", catalog=CAT)
    assert all(doc["regions"] == ["us-east-1", "us-west-2"] for doc in docs(d))
    assert any("parent region us-east-1" in n for n in d.notes)


# -- 4. a failed write names the target -------------------------------------------------
def test_a_write_over_the_file_size_limit_names_the_task_file(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "2026-12-01")
    target = tmp_path / "r.dstack.yml"
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    import signal

    old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, hard))
    try:
        code, _, err = run(capsys, "plan", "--model", "llama3-8b", "--tokens", "1T",
                           "--deadline", "14d", "--emit", "dstack", "--emit-out", str(target))
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, old)
    assert code != 0
    line = next(x for x in err.splitlines() if x.startswith("error: "))
    assert f"task file {target}: cannot write it" in line, line
    assert ".new" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []
