"""dstack task (and fleet) YAML, for the probes and for a training plan.

Fields (https://dstack.ai/docs/concepts/tasks/ and …/reference/dstack.yml/task/, checked
against dstack's own models in tests/launch): ``type: task``, ``name``, ``nodes``, ``python``,
``env`` (list of ``K=V``; a bare ``K`` is taken from the caller's environment), ``commands``,
``resources`` {``gpu: NAME[:MEM]:COUNT``, ``shm_size``}, ``backends``, ``regions``,
``instance_types``, ``spot_policy`` (spot/on-demand/auto), ``fleets``, ``max_duration``,
``retry``, ``files`` (``LOCAL:PATH`` uploads a local file or directory, ``{local_path: LOCAL,
path: PATH}`` where LOCAL has a ':'; a relative PATH lands under the run's working directory
— dstack's core/models/files.py FilePathMapping). System
variables ``DSTACK_MASTER_NODE_IP``, ``DSTACK_NODE_RANK``, ``DSTACK_NODES_NUM``,
``DSTACK_GPUS_PER_NODE`` (same page). Distributed tasks need a fleet with ``placement:
cluster`` (…/concepts/fleets/, which also enables EFA/GPUDirect/InfiniBand); ``dstack
attach``/``apply`` adds the run name as an SSH host, so ``scp RUN:path .`` works.
"""

from __future__ import annotations

from pathlib import PurePath

from catalog import shell_word

from ._probes import INGEST, Bucket, probe_script, setup
from ._spec import (
    LaunchBundle,
    LaunchError,
    LaunchFile,
    LaunchSpec,
    dump_yaml,
    no_launch_name,
)
from ._torchrun import torchrun_command

DSTACK_SRC = "gpuplan-src"  # where the probes package lands, under the run's working directory
HOLD_SECONDS = 1800  # without a bucket: the head job waits this long for your scp
DSTACK_MAX_DURATION_MINUTES = 120  # a probe run's max_duration
PROBE_IDLE_MINUTES = 10  # a probe fleet's idle_duration: long enough to fetch the report
PROBE_FLEET_IDLE = f"{PROBE_IDLE_MINUTES}m"
TRAIN_FLEET_IDLE = "30m"  # a training fleet's: time to relaunch after a failure


def profile(spec: LaunchSpec) -> dict:
    gpu = spec.dstack_gpu
    if not gpu:
        raise no_launch_name(spec, "dstack")
    out: dict = {"resources": {"gpu": f"{gpu}:{spec.gpus_per_node}", "shm_size": "16GB"},
                 "backends": [spec.cloud]}
    if spec.region:  # every region the plan priced the same: dstack takes the cheapest offer
        out["regions"] = list(spec.launch_regions)
    if spec.real_instance_type:
        out["instance_types"] = [spec.instance_type]
    out["spot_policy"] = "spot" if spec.spot else "on-demand"
    return out


def fleet(spec: LaunchSpec, idle: str) -> dict:
    # nodes.min 0: since dstack 0.19.27 (dstackai/dstack#3047) a fleet keeps nodes.min
    # instances for ever, idle_duration releasing only those above it — `nodes: N` billed N
    # instances until `dstack fleet delete`. target N provisions them; max N caps the fleet.
    return {"type": "fleet", "name": spec.name,
            "nodes": {"min": 0, "target": spec.nodes, "max": spec.nodes},
            "placement": "cluster",  # interconnected nodes, fast fabric (fleets docs)
            **profile(spec), "idle_duration": idle}


def fleet_path(task_path: str) -> str:
    """``probes.dstack.yml`` → ``probes-fleet.dstack.yml`` (dstack wants *.dstack.yml)."""
    p = PurePath(task_path)
    name = p.name
    if not name:  # ".", "/", "./": with_name raised ValueError, a traceback
        raise LaunchError(f"task file {task_path}: names a directory. To fix: give a file name "
                          "inside it, e.g. " + str(p / "task.dstack.yml"))
    stem, ext = ((name[: -len(".dstack.yml")], ".dstack.yml") if name.endswith(".dstack.yml")
                 else (p.stem, p.suffix))
    return str(p.with_name(f"{stem}-fleet{ext}"))


def probes_task(spec: LaunchSpec, *, task_path: str, header: tuple[str, ...],
                install: str | None, bucket: Bucket | None, src: str,
                aws_session_token: bool = False) -> LaunchBundle:
    """The probes on every node (a fleet first for several); report.json copied to the
    bucket, or held for your scp. ``aws_session_token``: the shell's credentials are
    temporary (SSO, an assumed role), so the task asks for AWS_SESSION_TOKEN too."""
    b, report = bucket, f"{spec.name}.json"
    env: list[str] = []
    steps = [setup(install)]
    if b and b.scheme == "s3":
        # passed from your shell: dstack requires every variable listed without a value, so
        # the session token only where the shell has one (temporary keys fail without it)
        env += ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
                *(["AWS_SESSION_TOKEN"] if aws_session_token else [])]
        steps.append("pip install awscli")
    elif b:
        if spec.cloud != "gcp":  # gsutil on the node has only a GCP VM's service account:
            # elsewhere the copy failed after the run was paid for
            raise LaunchError(f"--bucket {b.scheme}://{b.bucket}: a dstack task copies to GCS "
                              f"with the VM's service account, which {spec.cloud} nodes do not "
                              "have. To fix: use an s3:// bucket (the task passes your shell's "
                              "AWS keys), or --target skypilot (which mounts the bucket with "
                              "this machine's credentials)")
        steps.append("pip install gsutil")  # uses the VM's service account on GCP
    save = (b.copy_command("report.json", b.object_uri(report)) if b else
            f'echo "report ready: scp {spec.name}:~/gpuplan-probes/report.json ."; '
            f"sleep ${{GPUPLAN_HOLD_SECONDS:-{HOLD_SECONDS}}}")
    task: dict = {"type": "task", "name": spec.name, "nodes": spec.nodes, "python": "3.11"}
    if not install:
        # dstack splits "LOCAL:PATH" at every ':' (invalid file path mapping for a checkout
        # under "we:ird/"): such a path goes in the mapping form
        task["files"] = [{"local_path": src, "path": f"{DSTACK_SRC}/probes"} if ":" in src
                         else f"{src}:{DSTACK_SRC}/probes"]
    if env:
        task["env"] = env
    task.update({"commands": [*steps, probe_script(spec, "$DSTACK_NODE_RANK",
                                                   "$DSTACK_MASTER_NODE_IP", save,
                                                   f"$PWD/{DSTACK_SRC}",
                                                   copy_to=b.object_uri(report) if b
                                                   else None)],
                 **profile(spec),
                 "max_duration": f"{DSTACK_MAX_DURATION_MINUTES // 60}h"})
    if spec.nodes == 1:  # the instance dstack provisions for a lone task is released after
        # this idle time (a fleet of several has its own): the cost bound counts it
        task["idle_duration"] = PROBE_FLEET_IDLE
    files = [LaunchFile(path=task_path, text=dump_yaml(task, header))]
    commands = [f"dstack apply -f {shell_word(task_path)}"]
    if spec.nodes > 1:
        task["fleets"] = [spec.name]
        files = [LaunchFile(path=fleet_path(task_path),
                            text=dump_yaml(fleet(spec, PROBE_FLEET_IDLE), header)),
                 LaunchFile(path=task_path, text=dump_yaml(task, header))]
        commands.insert(0, f"dstack apply -f {shell_word(fleet_path(task_path))}")
    if b:
        commands.append(b.copy_command(b.object_uri(report), "report.json"))
    else:
        commands += [f"scp {spec.name}:~/gpuplan-probes/report.json report.json  "
                     f"# while the run is attached, within {HOLD_SECONDS // 60} min",
                     f"dstack stop {spec.name}"]
    if spec.nodes > 1:
        commands.append(f"dstack fleet delete {spec.name}")
    return LaunchBundle(target="dstack", files=tuple(files), commands=(*commands, INGEST))


def training_task(spec: LaunchSpec, *, task_path: str, header: tuple[str, ...],
                  env: dict[str, str], setup_line: str, program: str,
                  reservation: str | None = None) -> LaunchBundle:
    """The training plan as a task (a fleet first for several nodes); spot runs retry on
    interruption. ``reservation``: dstack's ``reservation`` (an AWS Capacity Reservation or
    Capacity Block ID) on whatever provisions the instances: the fleet, else the task."""
    run = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                           node_rank="$DSTACK_NODE_RANK", master_addr="$DSTACK_MASTER_NODE_IP",
                           program=program)
    task = {"type": "task", "name": spec.name, "nodes": spec.nodes, "python": "3.11",
            "env": [f"{k}={v}" for k, v in env.items()],
            "commands": [setup_line.rstrip("\n"), run], **profile(spec)}
    if spec.spot:
        task["retry"] = {"on_events": ["interruption", "no-capacity"], "duration": "1d"}
    files = [LaunchFile(path=task_path, text="")]
    commands = [f"dstack apply -f {shell_word(task_path)}"]
    if reservation and spec.nodes == 1:
        task["reservation"] = reservation
    if spec.nodes > 1:
        task["fleets"] = [spec.name]
        fleet_conf = fleet(spec, TRAIN_FLEET_IDLE)
        if reservation:
            fleet_conf["reservation"] = reservation
        files.insert(0, LaunchFile(path=fleet_path(task_path),
                                   text=dump_yaml(fleet_conf, header)))
        commands.insert(0, f"dstack apply -f {shell_word(fleet_path(task_path))}")
    files[-1] = LaunchFile(path=task_path, text=dump_yaml(task, header))
    return LaunchBundle(target="dstack", files=tuple(files), commands=tuple(commands))
