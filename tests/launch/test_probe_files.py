"""`launch probes` task files: the fields each orchestrator's documented schema needs, the local
probes shipped to the nodes (gpuplan is not on a package index), the torchrun line for
N nodes x G GPUs, and the run's cost from the catalog before launch."""

from __future__ import annotations

import pytest
from launch_helpers import load, torchrun_args

from catalog import GpuplanError, UnknownNameError
from planner.launch import (
    MASTER_PORT,
    LaunchError,
    fleet_path,
    parse_bucket,
    probe_run_cost,
    probes_launch,
    probes_source_dir,
    run_name,
    spec_for_instance,
    torchrun_command,
)

SETUP = "python3 -c 'import torch' 2>/dev/null || python3 -m pip install 'torch>=2.3'"


def sky(cat, instance="p5.48xlarge", nodes=2, **kw):
    spec = spec_for_instance(cat, instance, nodes, region=kw.pop("region", None),
                             spot=kw.pop("spot", False))
    bundle = probes_launch(spec, "skypilot", task_path="probes.sky.yaml", **kw)
    (f,) = bundle.files
    return spec, bundle, load(f.text)


def dstack(cat, instance="p5.48xlarge", nodes=2, **kw):
    spec = spec_for_instance(cat, instance, nodes, region=kw.pop("region", None),
                             spot=kw.pop("spot", False))
    bundle = probes_launch(spec, "dstack", task_path="probes.dstack.yml", **kw)
    return spec, bundle, [load(f.text) for f in bundle.files]


def test_skypilot_task_has_the_documented_fields(cat):
    _, bundle, task = sky(cat, region="us-east-1")
    # docs.skypilot.co/en/latest/reference/yaml-spec.html: name, num_nodes, resources
    # {infra, instance_type, accelerators NAME:COUNT, use_spot, network_tier}, envs, setup, run.
    assert task["name"] == "gpuplan-probes-p5-48xlarge-2n"
    assert task["num_nodes"] == 2
    assert task["resources"] == {"infra": "aws/us-east-1", "instance_type": "p5.48xlarge",
                                 "accelerators": "H100:8", "use_spot": False,
                                 "network_tier": "best"}
    # the local probes package goes to every node (file_mounts REMOTE: LOCAL); torch is
    # installed only where the image has none
    assert task["file_mounts"] == {"~/gpuplan-src/probes": str(probes_source_dir())}
    assert (probes_source_dir() / "__main__.py").exists()
    assert task["setup"].strip() == SETUP
    assert 'export PYTHONPATH="$HOME/gpuplan-src' in task["run"]
    # …/running-jobs/distributed-jobs.html: head node = first line of SKYPILOT_NODE_IPS.
    assert 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)' in task["run"]
    # -i 30 --down: torn down after 30 idle minutes, so a forgotten cluster stops costing
    assert bundle.commands[0] == ("sky launch -c gpuplan-probes-p5-48xlarge-2n -i 30 --down "
                                  "probes.sky.yaml")
    assert bundle.commands[-1] == "gpuplan probe ingest report.json"


def test_torchrun_for_n_nodes_by_g_gpus(cat):
    _, _, task = sky(cat, "p4d.24xlarge", nodes=4)
    args = torchrun_args(task["run"])
    assert args == {"--nnodes": "4", "--nproc-per-node": "8",
                    "--node-rank": "$SKYPILOT_NODE_RANK", "--master-addr": "$MASTER_ADDR",
                    "--master-port": str(MASTER_PORT), "-m": "probes"}
    # --device cuda: a node whose torch sees no GPU fails instead of reporting the CPU
    assert "-m probes --device cuda --out report.json ${GPUPLAN_PROBE_ARGS:-}" in task["run"]
    _, _, (_, dtask) = dstack(cat, "g6e.12xlarge", nodes=3)
    args = torchrun_args(dtask["commands"][-1])
    assert args["--nnodes"] == "3" and args["--nproc-per-node"] == "4"
    assert args["--node-rank"] == "$DSTACK_NODE_RANK"
    assert args["--master-addr"] == "$DSTACK_MASTER_NODE_IP"
    assert args["--master-port"] == "29500"


def test_one_node_uses_a_standalone_rendezvous_and_no_fabric(cat):
    _, _, task = sky(cat, "g5.48xlarge", nodes=1)
    assert torchrun_args(task["run"]) == {"--standalone": "", "--nnodes": "1",
                                          "--nproc-per-node": "8", "-m": "probes"}
    assert "network_tier" not in task["resources"]
    _, bundle, files = dstack(cat, "g5.48xlarge", nodes=1)
    assert len(files) == 1 and "fleets" not in files[0]  # no cluster fleet for one node
    # the instance dstack provisions for it is released after the idle time the bound counts
    assert files[0]["idle_duration"] == "10m"
    assert torchrun_command(nodes=1, gpus_per_node=2, node_rank="0", master_addr="h",
                            program="x.py") == \
        "torchrun --standalone --nnodes 1 --nproc-per-node 2 x.py"


def test_dstack_task_and_cluster_fleet(cat):
    _, bundle, (fleet, task) = dstack(cat, region="us-east-1", spot=True)
    # dstack.ai/docs/concepts/fleets/#cloud-placement: distributed tasks need `placement:
    # cluster`, which also sets up EFA on AWS.
    assert fleet["type"] == "fleet" and fleet["placement"] == "cluster"
    # min 0: dstack keeps nodes.min instances for ever (dstackai/dstack#3047); `nodes: 2` billed
    # both until `dstack fleet delete`, whatever idle_duration said
    assert fleet["nodes"] == {"min": 0, "target": 2, "max": 2}
    assert fleet["name"] == task["fleets"][0] and "idle_duration" not in task
    # dstack.ai/docs/concepts/tasks/: type task, nodes, commands, resources.gpu NAME:MEM:COUNT,
    # spot_policy, backends/regions/instance_types (…/reference/dstack.yml/task/).
    assert task["type"] == "task" and task["nodes"] == 2
    assert task["resources"]["gpu"] == "H100:80GB:8"
    assert task["spot_policy"] == fleet["spot_policy"] == "spot"
    assert task["backends"] == ["aws"] and task["regions"] == ["us-east-1"]
    assert task["instance_types"] == ["p5.48xlarge"]
    assert task["files"] == [f"{probes_source_dir()}:gpuplan-src/probes"]
    assert task["commands"][0] == SETUP
    assert 'export PYTHONPATH="$PWD/gpuplan-src' in task["commands"][-1]
    paths = [f.path for f in bundle.files]
    assert paths == ["probes-fleet.dstack.yml", "probes.dstack.yml"]
    assert bundle.commands[:2] == ("dstack apply -f probes-fleet.dstack.yml",
                                   "dstack apply -f probes.dstack.yml")
    assert any(c.startswith("scp gpuplan-probes-p5-48xlarge-2n:") for c in bundle.commands)


def test_bucket_copies_the_report(cat):
    _, bundle, task = sky(cat, bucket="s3://my-bucket/runs/a")
    # docs.skypilot.co/en/latest/reference/storage.html: file_mounts {path: {source, mode}}.
    assert task["file_mounts"] == {"~/gpuplan-src/probes": str(probes_source_dir()),
                                   "/gpuplan-reports": {"source": "s3://my-bucket",
                                                        "mode": "MOUNT"}}
    assert "/gpuplan-reports/runs/a/gpuplan-probes-p5-48xlarge-2n.json" in task["run"]
    assert "--down" in bundle.commands[0]
    assert bundle.commands[1] == ("aws s3 cp s3://my-bucket/runs/a/"
                                  "gpuplan-probes-p5-48xlarge-2n.json report.json")
    # gsutil on a dstack node has a GCP VM's service account only: a GCP instance
    _, bundle, (_, dtask) = dstack(cat, instance="a3-highgpu-8g", bucket="gs://my-b")
    assert "gsutil cp report.json gs://my-b/gpuplan-probes-a3-highgpu-8g-2n.json" in \
        dtask["commands"][-1]
    assert "gsutil cp gs://my-b/gpuplan-probes-a3-highgpu-8g-2n.json report.json" in \
        bundle.commands
    with pytest.raises(LaunchError, match="To fix"):
        parse_bucket("azure://x")


def test_an_install_spec_replaces_the_copy_and_torch_still_comes(cat):
    """`--install 'gpuplan @ git+…'` dropped the torch step: gpuplan has torch only in its
    probes extra, so the paid nodes had no torchrun."""
    spec = "gpuplan @ git+https://example.invalid/gpuplan.git"
    _, _, task = sky(cat, install=spec)
    # braced: a failed install fails the setup (`A && B || C` went on to C)
    assert task["setup"].strip() == f"python3 -m pip install '{spec}' && {{ {SETUP}; }}"
    assert "file_mounts" not in task
    _, _, (_, dtask) = dstack(cat, install=spec)
    assert "files" not in dtask
    assert dtask["commands"][0] == f"python3 -m pip install '{spec}' && {{ {SETUP}; }}"


def test_the_cost_is_catalog_price_times_nodes_times_expected_minutes(cat):
    spec = spec_for_instance(cat, "p5.48xlarge", 2, region="us-east-1")
    cost = probe_run_cost(cat, spec, "skypilot")
    (offer,) = [o for o in cat.offers if (o.instance_type, o.region, o.pricing) ==
                ("p5.48xlarge", "us-east-1", "on_demand") and o.price_usable]
    assert cost.usd_per_hour == offer.usd_per_hour and cost.expected_minutes == 15
    assert cost.usd_expected == pytest.approx(offer.usd_per_hour * 2 * 15 / 60)
    assert cost.usd_max == pytest.approx(offer.usd_per_hour * 2 * 45 / 60)  # + 30 idle min
    line = cost.line()
    assert line.startswith("Cost before launch: 2 x p5.48xlarge at $") and "us-east-1" in line
    assert f"~${cost.usd_expected:,.2f}" in line
    # max_duration 2 h, then the fleet's 10 idle minutes before its instances are released
    assert probe_run_cost(cat, spec, "dstack").max_minutes == 130
    # with a bucket `sky launch --down` has no -i 30: the cost line said "auto-down after 30
    # idle minutes" of a command that goes down when the job ends
    to_bucket = probe_run_cost(cat, spec, "skypilot", bucket=True)
    assert to_bucket.max_minutes == 15 and "when the probe job ends" in to_bucket.max_reason
    (launch, *_) = probes_launch(spec, "skypilot", task_path="t.yaml",
                                 bucket="s3://my-bucket/probes").commands
    assert "--down" in launch and " -i " not in launch
    anywhere = probe_run_cost(cat, spec_for_instance(cat, "p5.48xlarge", 1), "skypilot")
    assert "the cheapest region priced" in anywhere.price_source
    assert anywhere.usd_per_hour <= cost.usd_per_hour


def test_accelerator_names_and_synthetic_gcp_types(cat):
    _, _, task = sky(cat, "n1+t4x4", nodes=1)
    assert "instance_type" not in task["resources"]  # n1+t4x4 is the catalog's own name
    assert task["resources"]["accelerators"] == "T4:4"
    _, _, task = sky(cat, "a3-megagpu-8g")
    assert task["resources"]["accelerators"] == "H100-MEGA:8"
    _, _, (_, dtask) = dstack(cat, "a2-highgpu-8g")
    assert dtask["resources"]["gpu"] == "A100:40GB:8" and dtask["backends"] == ["gcp"]
    named = {a.name for a in cat.accelerators if a.skypilot_name or a.dstack_name}
    assert {"H100-SXM5-80GB", "A100-SXM4-40GB", "T4", "MI300X"} <= named  # catalog facts


def test_user_errors_are_one_line_with_a_fix(cat):
    with pytest.raises(UnknownNameError, match="Did you mean 'p5.48xlarge'"):
        spec_for_instance(cat, "p5.48xlarg", 1)
    with pytest.raises(LaunchError, match="between 1 and 65,536"):
        spec_for_instance(cat, "p5.48xlarge", 0)
    with pytest.raises(LaunchError, match="To fix"):
        spec_for_instance(cat, "p5.48xlarge", 10**26)
    with pytest.raises(UnknownNameError, match="region"):
        spec_for_instance(cat, "p5.48xlarge", 1, region="mars-north-1")
    with pytest.raises(LaunchError, match="do not cover"):
        spec_for_instance(cat, "trn1.32xlarge", 1)
    spec = spec_for_instance(cat, "p5.48xlarge", 1)
    with pytest.raises(LaunchError, match="Did you mean 'dstack'"):
        probes_launch(spec, "dstak", task_path="x.yml")
    assert issubclass(LaunchError, GpuplanError)


def test_output_is_deterministic_and_names_are_valid(cat):
    a = sky(cat)[1].files[0].text
    assert a == sky(cat)[1].files[0].text
    assert list(load(a)) == ["name", "num_nodes", "resources", "file_mounts", "setup", "run"]
    name = run_name("gpuplan-probes", "Standard_ND96isr_H100_v5", 16)
    assert len(name) <= 40 and name.endswith("-16n")
    assert fleet_path("out/x.yaml") == "out/x-fleet.yaml"


def test_a_gpu_no_orchestrator_names_is_launched_where_the_target_needs_no_name(cat):
    """p6-b300 (B300, no SkyPilot/dstack name) was refused as not a CUDA/ROCm GPU: SkyPilot
    takes the real instance type alone (torchrun, `plan --emit`, needs no name); dstack,
    which needs one, says so."""
    spec = spec_for_instance(cat, "p6-b300.48xlarge", 2)
    (f,) = probes_launch(spec, "skypilot", task_path="p.sky.yaml").files
    res = load(f.text)["resources"]
    assert res["instance_type"] == "p6-b300.48xlarge" and "accelerators" not in res
    with pytest.raises(LaunchError, match="dstack has no GPU name for B300-SXM. To fix: use "
                                          "--target skypilot"):
        probes_launch(spec, "dstack", task_path="p.dstack.yml")


@pytest.mark.parametrize("region", ["us-east-1", "eastus: x\n#$(id)"])
def test_a_region_is_checked_for_an_instance_type_priced_nowhere(cat, region):
    """Standard_ND96isr_H200_v5 has no offers in the catalog: its --region went into the files
    unchecked (an AWS region for an Azure type; a YAML-breaking one)."""
    assert not [o for o in cat.offers if o.instance_type == "Standard_ND96isr_H200_v5"]
    with pytest.raises(UnknownNameError, match="unknown azure region"):
        spec_for_instance(cat, "Standard_ND96isr_H200_v5", 1, region=region)
    assert spec_for_instance(cat, "Standard_ND96isr_H200_v5", 1, region="eastus").region == \
        "eastus"
