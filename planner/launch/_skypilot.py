"""SkyPilot task YAML, for the probes and for a training plan.

Fields (https://docs.skypilot.co/en/latest/reference/yaml-spec.html, checked against
SkyPilot's own loader in tests/launch): ``name``, ``num_nodes``, ``resources`` {``infra``
(cloud/region), ``instance_type``, ``accelerators`` (NAME:COUNT), ``use_spot``,
``network_tier: best``, ``autostop`` {``idle_minutes``, ``down``} (…/reference/auto-stop.html),
``any_of`` (alternatives, each overriding the rest)}, ``envs``, ``file_mounts``
(``REMOTE_PATH: LOCAL_PATH`` copies a local directory to every node; a bucket ``source`` with
``mode: MOUNT``, docs …/reference/storage.html), ``setup``, ``run``. ``sky launch -i MINUTES
--down`` tears the cluster down after that many idle minutes. The distributed variables
``SKYPILOT_NODE_RANK``, ``SKYPILOT_NODE_IPS`` (head node first), ``SKYPILOT_NUM_NODES``,
``SKYPILOT_NUM_GPUS_PER_NODE`` are documented in …/running-jobs/distributed-jobs.html. Files
come back with ``scp``/``rsync`` using the cluster name as the SSH host
(…/examples/syncing-code-artifacts.html).
"""

from __future__ import annotations

from catalog import shell_word

from ._probes import INGEST, Bucket, probe_script, setup
from ._spec import (
    LaunchBundle,
    LaunchFile,
    LaunchSpec,
    dump_yaml,
    no_launch_name,
)
from ._torchrun import torchrun_command

SKY_SRC = "~/gpuplan-src"  # where SkyPilot copies the local probes package on every node
IDLE_MINUTES = 30  # without a bucket: torn down after this long idle (time to scp)
# a training cluster (not spot): torn down after this long idle — time to relaunch after a
# failure, the same window as dstack's training fleet (_dstack.TRAIN_FLEET_IDLE)
TRAIN_IDLE_MINUTES = 30
BUCKET_MOUNT = "/gpuplan-reports"  # SkyPilot mounts the bucket here (file_mounts, MOUNT)
# Instance types whose SkyPilot accelerator name differs from the table's (sky show-gpus -a).
SKYPILOT_INSTANCE_ACCELERATORS: dict[tuple[str, str], str] = {
    ("gcp", "a3-megagpu-8g"): "H100-MEGA",
}


def resources(spec: LaunchSpec) -> dict:
    name = SKYPILOT_INSTANCE_ACCELERATORS.get((spec.cloud, spec.instance_type),
                                              spec.skypilot_accelerator)
    if not name and not spec.real_instance_type:
        raise no_launch_name(spec, "skypilot")
    res: dict = {"infra": f"{spec.cloud}/{spec.region}" if spec.region else spec.cloud}
    if spec.real_instance_type:
        res["instance_type"] = spec.instance_type  # the exact machine the plan costed
    if name:
        res["accelerators"] = f"{name}:{spec.gpus_per_node}"
    res["use_spot"] = spec.spot
    if spec.nodes > 1:
        res["network_tier"] = "best"  # EFA / GPUDirect / InfiniBand where SkyPilot can
    if len(spec.launch_regions) > 1:
        # regions priced the same: ``any_of`` lets SkyPilot take any of them (each item's
        # fields override the rest of ``resources``; yaml-spec.html "any_of", auto-failover.html)
        del res["infra"]
        res["any_of"] = [{"infra": f"{spec.cloud}/{r}"} for r in spec.launch_regions]
    return res


def probes_task(spec: LaunchSpec, *, task_path: str, header: tuple[str, ...],
                install: str | None, bucket: Bucket | None, src: str) -> LaunchBundle:
    """The probes on every node; report.json copied to the bucket or fetched with scp."""
    b, report = bucket, f"{spec.name}.json"
    if b:
        dst = f"{BUCKET_MOUNT}/{b.prefix + '/' if b.prefix else ''}{report}"
        save = f'mkdir -p "$(dirname {dst})" && cp report.json {dst}'
    else:
        save = "echo \"report: $PWD/report.json\""
    task: dict = {"name": spec.name, "num_nodes": spec.nodes, "resources": resources(spec)}
    mounts: dict = {} if install else {f"{SKY_SRC}/probes": src}
    if b:
        mounts[BUCKET_MOUNT] = {"source": f"{b.scheme}://{b.bucket}", "mode": "MOUNT"}
    if mounts:
        task["file_mounts"] = mounts
    task["setup"] = setup(install) + "\n"
    task["run"] = ('MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n'
                   + probe_script(spec, "$SKYPILOT_NODE_RANK", "$MASTER_ADDR", save,
                                  SKY_SRC.replace("~", "$HOME"),
                                  copy_to=b.object_uri(report) if b else None))
    fetch = (b.copy_command(b.object_uri(report), "report.json") if b
             else f"scp {spec.name}:~/gpuplan-probes/report.json report.json")
    task_arg = shell_word(task_path)
    commands = ((f"sky launch -c {spec.name} --down {task_arg}", fetch) if b else
                (f"sky launch -c {spec.name} -i {IDLE_MINUTES} --down {task_arg}", fetch,
                 f"sky down {spec.name}"))
    return LaunchBundle(target="skypilot", commands=(*commands, INGEST),
                        files=(LaunchFile(path=task_path, text=dump_yaml(task, header)),))


def training_task(spec: LaunchSpec, *, task_path: str, header: tuple[str, ...],
                  env: dict[str, str], setup_line: str, program: str) -> LaunchBundle:
    """The training plan as a task; spot runs as a managed job that recovers from
    preemption."""
    run = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                           node_rank="$SKYPILOT_NODE_RANK", master_addr="$MASTER_ADDR",
                           program=program)
    res = resources(spec)
    if not spec.spot:
        # A plain `sky launch` cluster bills until it is torn down: a 39-node p6-b200 plan
        # (~$4,400/h) kept billing after training. Autodown after TRAIN_IDLE_MINUTES idle
        # (no job, no SSH session) leaves time to relaunch after a failure, as dstack's
        # training fleet does (idle_duration 30m). In the file (resources.autostop, {idle_minutes,
        # down}: https://docs.skypilot.co/en/latest/reference/auto-stop.html and
        # …/reference/yaml-spec.html), so a launch without the printed flags is bounded too,
        # and as `-i … --down` in the printed command, as `launch probes` does. A managed
        # spot job's cluster is torn down by SkyPilot when the job ends: no autostop there.
        res["autostop"] = {"idle_minutes": TRAIN_IDLE_MINUTES, "down": True}
    task = {"name": spec.name, "num_nodes": spec.nodes, "resources": res,
            "envs": env, "setup": setup_line,
            "run": 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n' + run + "\n"}
    task_arg = shell_word(task_path)
    if spec.spot:
        commands: tuple[str, ...] = (f"sky jobs launch -n {spec.name} {task_arg}  # spot: "
                                     "managed job, recovers from preemption",)
    else:
        # --down deletes the nodes' disks with them: checkpoints belong in a bucket
        commands = (f"sky launch -c {spec.name} -i {TRAIN_IDLE_MINUTES} --down {task_arg}  "
                    f"# auto-down after {TRAIN_IDLE_MINUTES} idle minutes, disks and all: keep "
                    "checkpoints in a bucket",
                    f"sky down {spec.name}  # once training is over (this deletes the nodes' "
                    "disks: keep checkpoints in a bucket)")
    return LaunchBundle(target="skypilot", commands=commands,
                        files=(LaunchFile(path=task_path, text=dump_yaml(task, header)),))
