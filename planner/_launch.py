"""Launch files: SkyPilot and dstack task YAML and torchrun command lines, for the probes and for
a recommended training plan.

Pure functions over data: they return file texts and the commands to run, and write nothing (the
CLI writes the files, atomically). No orchestrator is imported or needed: the files are plain
YAML made with ``yaml.SafeDumper`` from dicts built in a fixed key order.

Where each field comes from (checked against the orchestrators' own loaders in tests/launch):

- SkyPilot task YAML — https://docs.skypilot.co/en/latest/reference/yaml-spec.html:
  ``name``, ``num_nodes``, ``resources`` {``infra`` (cloud/region), ``instance_type``,
  ``accelerators`` (NAME:COUNT), ``use_spot``, ``network_tier: best``}, ``envs``,
  ``file_mounts`` (``REMOTE_PATH: LOCAL_PATH`` copies a local directory to every node; a
  bucket ``source`` with ``mode: MOUNT``, docs …/reference/storage.html), ``setup``, ``run``.
  ``sky launch -i MINUTES --down`` tears the cluster down after that many idle minutes. The
  distributed variables ``SKYPILOT_NODE_RANK``, ``SKYPILOT_NODE_IPS``
  (head node first), ``SKYPILOT_NUM_NODES``, ``SKYPILOT_NUM_GPUS_PER_NODE`` are documented in
  …/running-jobs/distributed-jobs.html. Files come back with ``scp``/``rsync`` using the
  cluster name as the SSH host (…/examples/syncing-code-artifacts.html).
- dstack task — https://dstack.ai/docs/concepts/tasks/ and …/reference/dstack.yml/task/:
  ``type: task``, ``name``, ``nodes``, ``python``, ``env`` (list of ``K=V``; a bare ``K`` is
  taken from the caller's environment), ``commands``, ``resources`` {``gpu: NAME[:MEM]:COUNT``,
  ``shm_size``}, ``backends``, ``regions``, ``instance_types``, ``spot_policy``
  (spot/on-demand/auto), ``fleets``, ``max_duration``, ``retry``, ``files`` (``LOCAL:PATH``
  uploads a local file or directory; a relative PATH lands under the run's working
  directory — dstack's core/models/files.py FilePathMapping). System variables
  ``DSTACK_MASTER_NODE_IP``, ``DSTACK_NODE_RANK``, ``DSTACK_NODES_NUM``,
  ``DSTACK_GPUS_PER_NODE`` (same page). Distributed tasks need a fleet with
  ``placement: cluster`` (…/concepts/fleets/, which also enables EFA/GPUDirect/InfiniBand);
  ``dstack attach``/``apply`` adds the run name as an SSH host, so ``scp RUN:path .`` works.

The probes reach the nodes from *this* machine, not from a package index (gpuplan is not
published): the task copies the local ``probes`` package (torch is its only dependency) with the
orchestrator's own file upload, installs torch only where the image lacks it, and runs
``python -m probes`` with that copy on PYTHONPATH. ``probe_run_cost`` prices the run from the
catalog before anything is launched.

Errors::

    GpuplanError (catalog)
    └── LaunchError   bad target, node count, bucket URI, or an accelerator no launcher covers
"""

from __future__ import annotations

import difflib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePath

from catalog import GpuplanError

TARGETS: tuple[str, ...] = ("skypilot", "dstack")  # orchestrators with task files
EMIT_TARGETS: tuple[str, ...] = (*TARGETS, "torchrun")  # what `plan --emit` writes
MASTER_PORT = 29500  # torchrun's default rendezvous port
# torch for nodes whose image has none: PyPI's Linux wheels are CUDA builds
TORCH_SPEC = "torch>=2.3"
SKY_SRC = "~/gpuplan-src"  # where SkyPilot copies the local probes package on every node
DSTACK_SRC = "gpuplan-src"  # the same for dstack, under the run's working directory
MAX_NODES = 1024  # far above any probe run; a typo such as 10**26 nodes is refused
IDLE_MINUTES = 30  # SkyPilot without a bucket: torn down after this long idle (time to scp)
TRAIN_SCRIPT = "YOUR_TRAIN_SCRIPT.py"
REPLACE_SCRIPT = "# ← replace with your training script"
REPORT_DIR = "$HOME/gpuplan-probes"  # where rank 0 writes report.json on the head node
HOLD_SECONDS = 1800  # dstack without a bucket: the head job waits this long for your scp
BUCKET_MOUNT = "/gpuplan-reports"  # SkyPilot mounts the bucket here (file_mounts, MOUNT)

# Catalog accelerator -> (SkyPilot name, dstack name). SkyPilot's from `sky show-gpus -a`
# (docs.skypilot.co/en/stable/compute/gpus.html); dstack's are gpuhunt's known GPU names with
# the memory where one name has two sizes (dstack.ai/docs/concepts/tasks/#resources). None: that
# orchestrator has no name for it (SkyPilot then relies on `instance_type` alone).
ACCELERATOR_NAMES: dict[str, tuple[str | None, str | None]] = {
    "A10": ("A10", "A10"),
    "A10G": ("A10G", "A10G"),
    "A100-PCIe-80GB": ("A100-80GB", "A100:80GB"),
    "A100-SXM4-40GB": ("A100", "A100:40GB"),
    "A100-SXM4-80GB": ("A100-80GB", "A100:80GB"),
    "B200-SXM-180GB": ("B200", "B200"),
    "GB200-186GB": (None, "GB200"),
    "H100-NVL-94GB": (None, "H100NVL"),
    "H100-PCIe-80GB": (None, "H100:80GB"),
    "H100-SXM5-80GB": ("H100", "H100:80GB"),
    "H200-SXM-141GB": ("H200", "H200"),
    "L4": ("L4", "L4"),
    "L40S": ("L40S", "L40S"),
    "MI250X": (None, "MI250X"),
    "MI300X": ("MI300X", "MI300X"),
    "P100": ("P100", "P100"),
    "T4": ("T4", "T4"),
    "V100-SXM2-16GB": ("V100", "V100:16GB"),
    "V100-SXM2-32GB": ("V100-32GB", "V100:32GB"),
}
# Instance types whose SkyPilot accelerator name differs from the table's (sky show-gpus -a).
SKYPILOT_INSTANCE_ACCELERATORS: dict[tuple[str, str], str] = {
    ("gcp", "a3-megagpu-8g"): "H100-MEGA",
}


class LaunchError(GpuplanError):
    pass


def _choose(kind: str, value: str, allowed: tuple[str, ...]) -> str:
    if value in allowed:
        return value
    close = difflib.get_close_matches(value, allowed, n=1, cutoff=0.5)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    raise LaunchError(f"unknown {kind} {value!r}.{hint} To fix: use one of {', '.join(allowed)}")


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchSpec:
    """What to provision: ``nodes`` instances of one type, each with ``gpus_per_node``."""

    cloud: str
    instance_type: str
    accelerator: str  # catalog canonical name
    gpus_per_node: int
    nodes: int
    region: str | None = None
    spot: bool = False
    name: str = "gpuplan"

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_NODES:
            raise LaunchError(f"--nodes must be between 1 and {MAX_NODES}, got {self.nodes}. "
                              "To fix: pass --nodes 1 or more (2 or more also measure the fabric)")
        if self.accelerator not in ACCELERATOR_NAMES:
            raise LaunchError(
                f"{self.instance_type} has {self.accelerator}, which the SkyPilot/dstack/torchrun "
                "launch files do not cover (they run CUDA/ROCm GPUs). To fix: choose a GPU "
                "instance, e.g. `gpuplan offers --gpu H100`")

    @property
    def real_instance_type(self) -> bool:
        """False for the catalog's synthetic GCP names such as ``n1+t4x1`` (GPUs attached)."""
        return "+" not in self.instance_type


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchFile:
    path: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeRunCost:
    """What a probe run costs before it is launched: ``nodes`` instances at the catalog's
    price for ``expected_minutes`` (and at most for ``max_minutes``, the task's own limit)."""

    instance_type: str
    nodes: int
    usd_per_hour: float  # per instance
    price_source: str  # cloud, region, pricing and the catalog's date
    expected_minutes: float
    expected_breakdown: str
    max_minutes: float | None  # None: until you stop it
    max_reason: str

    @property
    def usd_expected(self) -> float:
        return self.usd_per_hour * self.nodes * self.expected_minutes / 60

    @property
    def usd_max(self) -> float | None:
        return None if self.max_minutes is None else \
            self.usd_per_hour * self.nodes * self.max_minutes / 60

    def line(self) -> str:
        most = (f"at most ${self.usd_max:,.2f} ({self.max_reason})" if self.usd_max is not None
                else f"more if left running ({self.max_reason})")
        return (f"Cost before launch: {self.nodes} x {self.instance_type} at "
                f"${self.usd_per_hour:,.2f}/h ({self.price_source}) x ~"
                f"{self.expected_minutes:.0f} min ({self.expected_breakdown}) = "
                f"~${self.usd_expected:,.2f}; {most}.")


@dataclass(frozen=True, slots=True, kw_only=True)
class LaunchBundle:
    """The files to write (dstack: the fleet first) and the commands to run, in order."""

    target: str
    files: tuple[LaunchFile, ...]
    commands: tuple[str, ...]


def run_name(prefix: str, instance_type: str, nodes: int) -> str:
    """A cluster/run name both orchestrators accept: ``^[a-z][a-z0-9-]{0,39}$``."""
    slug = re.sub(r"[^a-z0-9]+", "-", instance_type.lower()).strip("-")
    suffix = f"-{nodes}n"
    room = 40 - len(prefix) - 1 - len(suffix)
    return f"{prefix}-{slug[:room].rstrip('-')}{suffix}"


def spec_for_instance(catalog, instance: str, nodes: int, *, region: str | None = None,
                      spot: bool = False, cloud: str | None = None,
                      prefix: str = "gpuplan-probes") -> LaunchSpec:
    """Look ``instance`` up in the catalog (UnknownNameError with close matches if absent)."""
    from catalog import UnknownNameError

    it = catalog.instance_type(instance, cloud)
    if region is not None:
        known = {o.region for o in catalog.offers
                 if (o.cloud, o.instance_type) == (it.cloud, it.name)}
        if known and region not in known:
            raise UnknownNameError(f"region for {it.name}", region, known)
    return LaunchSpec(cloud=it.cloud, instance_type=it.name, accelerator=it.accelerator,
                      gpus_per_node=it.gpu_count, nodes=nodes, region=region, spot=spot,
                      name=run_name(prefix, it.name, nodes))


def spec_for_recommendation(rec: dict | None) -> LaunchSpec:
    if not rec:
        raise LaunchError("no plan to launch: nothing met the constraints. To fix: relax "
                          "--deadline/--budget, then use --emit")
    nodes = int(rec["nodes"])
    return LaunchSpec(cloud=rec["cloud"], instance_type=rec["instance_type"],
                      accelerator=rec["accelerator"], gpus_per_node=int(rec["gpus"]) // nodes,
                      nodes=nodes, region=rec.get("region"), spot=rec.get("pricing") == "spot",
                      name=run_name("gpuplan-train", rec["instance_type"], nodes))


def torchrun_command(*, nodes: int, gpus_per_node: int, node_rank: str, master_addr: str,
                     program: str, port: int = MASTER_PORT) -> str:
    """torchrun for ``nodes`` × ``gpus_per_node`` with a static rendezvous on node 0.

    ``program`` is ``-m MODULE …`` or ``SCRIPT.py …``; one node uses ``--standalone``.
    """
    if nodes == 1:
        return f"torchrun --standalone --nnodes 1 --nproc-per-node {gpus_per_node} {program}"
    return (f"torchrun --nnodes {nodes} --nproc-per-node {gpus_per_node} "
            f"--node-rank {node_rank} --master-addr {master_addr} --master-port {port} "
            f"{program}")


# -- YAML ------------------------------------------------------------------------------------
def dump_yaml(data: dict, header: tuple[str, ...] = ()) -> str:
    """Plain YAML in the dicts' own key order; multi-line strings as literal blocks."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value: str):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return "".join(f"# {line}\n".replace("# \n", "#\n") for line in header) + body


def _skypilot_resources(spec: LaunchSpec) -> dict:
    name = SKYPILOT_INSTANCE_ACCELERATORS.get((spec.cloud, spec.instance_type),
                                              ACCELERATOR_NAMES[spec.accelerator][0])
    if name is None and not spec.real_instance_type:
        raise LaunchError(f"SkyPilot has no accelerator name for {spec.accelerator}. To fix: "
                          "use --target dstack")
    res: dict = {"infra": f"{spec.cloud}/{spec.region}" if spec.region else spec.cloud}
    if spec.real_instance_type:
        res["instance_type"] = spec.instance_type  # the exact machine the plan costed
    if name is not None:
        res["accelerators"] = f"{name}:{spec.gpus_per_node}"
    res["use_spot"] = spec.spot
    if spec.nodes > 1:
        res["network_tier"] = "best"  # EFA / GPUDirect / InfiniBand where SkyPilot can
    return res


def _dstack_profile(spec: LaunchSpec) -> dict:
    gpu = ACCELERATOR_NAMES[spec.accelerator][1]
    if gpu is None:
        raise LaunchError(f"dstack has no GPU name for {spec.accelerator}. To fix: use "
                          "--target skypilot")
    out: dict = {"resources": {"gpu": f"{gpu}:{spec.gpus_per_node}", "shm_size": "16GB"},
                 "backends": [spec.cloud]}
    if spec.region:
        out["regions"] = [spec.region]
    if spec.real_instance_type:
        out["instance_types"] = [spec.instance_type]
    out["spot_policy"] = "spot" if spec.spot else "on-demand"
    return out


def _dstack_fleet(spec: LaunchSpec, idle: str) -> dict:
    return {"type": "fleet", "name": spec.name, "nodes": spec.nodes,
            "placement": "cluster",  # interconnected nodes, fast fabric (fleets docs)
            **_dstack_profile(spec), "idle_duration": idle}


def fleet_path(task_path: str) -> str:
    """``probes.dstack.yml`` → ``probes-fleet.dstack.yml`` (dstack wants *.dstack.yml)."""
    p = PurePath(task_path)
    name = p.name
    stem, ext = ((name[: -len(".dstack.yml")], ".dstack.yml") if name.endswith(".dstack.yml")
                 else (p.stem, p.suffix))
    return str(p.with_name(f"{stem}-fleet{ext}"))


def default_path(target: str, what: str) -> str:
    return {"skypilot": f"gpuplan-{what}.sky.yaml", "dstack": f"gpuplan-{what}.dstack.yml",
            "torchrun": f"gpuplan-{what}.sh"}[target]


# -- buckets ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Bucket:
    scheme: str  # s3 or gs
    bucket: str
    prefix: str  # "" or "a/b"

    def object_uri(self, name: str) -> str:
        return f"{self.scheme}://{self.bucket}/" + (f"{self.prefix}/" if self.prefix else "") + name

    def copy_command(self, src: str, dst: str) -> str:
        # The task file runs this in a shell on the nodes: every argument is quoted, so a
        # prefix can never become a command.
        tool = "aws s3 cp" if self.scheme == "s3" else "gsutil cp"
        return f"{tool} {shlex.quote(src)} {shlex.quote(dst)}"


# Object keys: letters, digits and the characters S3 and GCS document as safe in key names.
_PREFIX = re.compile(r"[A-Za-z0-9!_.*'()/-]{0,512}")


def parse_bucket(uri: str) -> Bucket:
    m = re.fullmatch(r"(s3|gs)://([a-z0-9][a-z0-9._-]{1,254})(?:/(.*))?", uri.strip())
    if not m or not _PREFIX.fullmatch(m.group(3) or ""):
        raise LaunchError(f"bad bucket URI {uri!r}. To fix: pass s3://BUCKET[/PREFIX] or "
                          "gs://BUCKET[/PREFIX] with a prefix of letters, digits and "
                          "!_.*'()/- only")
    return Bucket(m.group(1), m.group(2), (m.group(3) or "").strip("/"))


# -- probes ----------------------------------------------------------------------------------
# Minutes billed for a probe run, per node (all nodes run at once). Provisioning: SkyPilot and
# dstack report 2-10 min for a GPU VM to boot and join; setup: copying ~100 KB of probes and,
# on an image without torch, a ~2.5 GB CUDA wheel (2-5 min); probes: a full run on one 8-GPU
# node is ~2-2.5 min (budget in probes/_runner.py); copy-back and tear-down ~2 min.
EXPECTED_MINUTES: tuple[tuple[str, float], ...] = (
    ("provisioning", 5.0), ("setup", 5.0), ("probes", 3.0), ("copy-back and tear-down", 2.0))
DSTACK_MAX_DURATION_MINUTES = 120


def probes_source_dir() -> Path:
    """The local ``probes`` package this gpuplan runs: what the task copies to the nodes."""
    import probes

    return Path(probes.__file__).resolve().parent


def _probe_script(spec: LaunchSpec, rank: str, addr: str, save: str, src: str) -> str:
    # GPUPLAN_PROBE_ARGS: extra `python -m probes` options (e.g. --quick) without editing
    torchrun = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                                node_rank=rank, master_addr=addr,
                                program="-m probes --out report.json ${GPUPLAN_PROBE_ARGS:-}")
    return "\n".join([
        f'export PYTHONPATH="{src}${{PYTHONPATH:+:$PYTHONPATH}}"',
        f'mkdir -p "{REPORT_DIR}" && cd "{REPORT_DIR}"',
        "status=0",
        f"{torchrun} || status=$?",  # exit 1: report written, a probe failed (docs/probes.md)
        f'if [ "{rank}" = "0" ] && [ -f report.json ]; then',
        f"  {save}",
        "fi",
        'exit "$status"',
    ]) + "\n"


def _setup(install: str | None) -> str:
    """Install torch only where the image has none, or the user's own pip spec."""
    if install:
        return f"pip install {shlex.quote(install)}"
    return (f"python3 -c 'import torch' 2>/dev/null || "
            f"python3 -m pip install {shlex.quote(TORCH_SPEC)}")


def probe_run_cost(catalog, spec: LaunchSpec, target: str) -> ProbeRunCost | None:
    """The run's price from the catalog (the region asked for, else the cheapest priced one);
    None when the catalog has no usable price for the instance."""
    pricing = "spot" if spec.spot else "on_demand"
    offers = [o for o in catalog.offers
              if (o.cloud, o.instance_type, o.pricing) == (spec.cloud, spec.instance_type,
                                                          pricing)
              and o.price_usable and (spec.region is None or o.region == spec.region)]
    if not offers:
        return None
    best = min(offers, key=lambda o: (o.usd_per_hour, o.region))
    where = best.region if spec.region else f"{best.region}, the cheapest region priced"
    expected = sum(m for _, m in EXPECTED_MINUTES)
    breakdown = " + ".join(f"{what} {m:g}" for what, m in EXPECTED_MINUTES)
    if target == "dstack":
        most, why = DSTACK_MAX_DURATION_MINUTES, f"the task's max_duration, " \
            f"{DSTACK_MAX_DURATION_MINUTES // 60} h"
    else:
        most, why = expected + IDLE_MINUTES, f"auto-down after {IDLE_MINUTES} idle minutes"
    return ProbeRunCost(instance_type=spec.instance_type, nodes=spec.nodes,
                        usd_per_hour=best.usd_per_hour,
                        price_source=f"{spec.cloud} {where}, {pricing.replace('_', '-')}, "
                                     f"catalog {best.as_of}",
                        expected_minutes=expected, expected_breakdown=breakdown,
                        max_minutes=most, max_reason=why)


def probes_launch(spec: LaunchSpec, target: str, *, task_path: str, install: str | None = None,
                  bucket: str | None = None, source_dir: str | Path | None = None) -> LaunchBundle:
    """A task that copies the local probes to every node, runs them there under torchrun and
    brings report.json back. ``install``: a pip spec to install instead of copying (a git URL
    or a wheel of gpuplan); ``source_dir``: the probes package to copy (default: this one)."""
    target = _choose("launch target", target, TARGETS)
    b = parse_bucket(bucket) if bucket else None
    src = str(Path(source_dir) if source_dir else probes_source_dir())
    report = f"{spec.name}.json"
    header = (f"gpuplan probes: {spec.nodes} x {spec.instance_type} ({spec.cloud}"
              f"{' ' + spec.region if spec.region else ''}, "
              f"{'spot' if spec.spot else 'on-demand'}), {spec.gpus_per_node} GPUs per node.",
              "Generated by `gpuplan launch probes`; launch with the commands it printed.",
              "The probes are copied from this machine: " + (install or src))
    ingest = "gpuplan probe ingest report.json"
    if target == "skypilot":
        if b:
            dst = f"{BUCKET_MOUNT}/{b.prefix + '/' if b.prefix else ''}{report}"
            save = f'mkdir -p "$(dirname {dst})" && cp report.json {dst}'
        else:
            save = "echo \"report: $PWD/report.json\""
        task: dict = {"name": spec.name, "num_nodes": spec.nodes,
                      "resources": _skypilot_resources(spec)}
        mounts: dict = {} if install else {f"{SKY_SRC}/probes": src}
        if b:
            mounts[BUCKET_MOUNT] = {"source": f"{b.scheme}://{b.bucket}", "mode": "MOUNT"}
        if mounts:
            task["file_mounts"] = mounts
        task["setup"] = _setup(install) + "\n"
        task["run"] = ('MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n'
                       + _probe_script(spec, "$SKYPILOT_NODE_RANK", "$MASTER_ADDR", save,
                                       SKY_SRC.replace("~", "$HOME")))
        fetch = (b.copy_command(b.object_uri(report), "report.json") if b
                 else f"scp {spec.name}:~/gpuplan-probes/report.json report.json")
        commands = ((f"sky launch -c {spec.name} --down {task_path}", fetch) if b else
                    (f"sky launch -c {spec.name} -i {IDLE_MINUTES} --down {task_path}", fetch,
                     f"sky down {spec.name}"))
        return LaunchBundle(target=target, commands=(*commands, ingest),
                            files=(LaunchFile(path=task_path, text=dump_yaml(task, header)),))
    # dstack
    env: list[str] = []
    setup = [_setup(install)]
    if b and b.scheme == "s3":
        env += ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"]  # passed from your shell
        setup.append("pip install awscli")
    elif b:
        setup.append("pip install gsutil")  # uses the VM's service account on GCP
    save = (b.copy_command("report.json", b.object_uri(report)) if b else
            f'echo "report ready: scp {spec.name}:~/gpuplan-probes/report.json ."; '
            f"sleep ${{GPUPLAN_HOLD_SECONDS:-{HOLD_SECONDS}}}")
    task = {"type": "task", "name": spec.name, "nodes": spec.nodes, "python": "3.11"}
    if not install:
        task["files"] = [f"{src}:{DSTACK_SRC}/probes"]
    if env:
        task["env"] = env
    task.update({"commands": [*setup, _probe_script(spec, "$DSTACK_NODE_RANK",
                                                    "$DSTACK_MASTER_NODE_IP", save,
                                                    f"$PWD/{DSTACK_SRC}")],
                 **_dstack_profile(spec),
                 "max_duration": f"{DSTACK_MAX_DURATION_MINUTES // 60}h"})
    files = [LaunchFile(path=task_path, text=dump_yaml(task, header))]
    commands = [f"dstack apply -f {task_path}"]
    if spec.nodes > 1:
        task["fleets"] = [spec.name]
        files = [LaunchFile(path=fleet_path(task_path),
                            text=dump_yaml(_dstack_fleet(spec, "10m"), header)),
                 LaunchFile(path=task_path, text=dump_yaml(task, header))]
        commands.insert(0, f"dstack apply -f {fleet_path(task_path)}")
    if b:
        commands.append(b.copy_command(b.object_uri(report), "report.json"))
    else:
        commands += [f"scp {spec.name}:~/gpuplan-probes/report.json report.json  "
                     f"# while the run is attached, within {HOLD_SECONDS // 60} min",
                     f"dstack stop {spec.name}"]
    if spec.nodes > 1:
        commands.append(f"dstack fleet delete {spec.name}")
    return LaunchBundle(target=target, files=tuple(files), commands=(*commands, ingest))


# -- training (plan --emit) ------------------------------------------------------------------
def plan_env(plan: dict, workload=None, tokens_per_step: int | None = None) -> dict[str, str]:
    """The plan as GPUPLAN_* variables (strings, as both orchestrators want them).
    ``tokens_per_step``: the global batch the estimate used (the default rule's value when the
    user gave none)."""
    env = {"GPUPLAN_TP": plan["tp"], "GPUPLAN_PP": plan["pp"], "GPUPLAN_DP": plan["dp"],
           "GPUPLAN_CP": plan.get("cp", 1), "GPUPLAN_VP": plan.get("virtual_stages", 1),
           "GPUPLAN_ZERO_STAGE": plan["zero_stage"], "GPUPLAN_MICRO_BATCH": plan["micro_batch"],
           "GPUPLAN_GRAD_ACCUM": plan["grad_accumulation"],
           "GPUPLAN_RECOMPUTE": plan["recompute"]}
    if plan.get("ep"):
        env["GPUPLAN_EP"] = plan["ep"]
    if workload is not None:
        batch = workload.global_batch_tokens or tokens_per_step
        env.update({"GPUPLAN_SEQ_LEN": workload.seq_len, "GPUPLAN_PRECISION": workload.precision,
                    "GPUPLAN_FRAMEWORK": workload.framework})
        if batch:
            env["GPUPLAN_GLOBAL_BATCH_TOKENS"] = int(batch)
    return {k: str(v) for k, v in env.items()}


def plan_args(plan: dict) -> str:
    """The same plan as flags for the training script."""
    flags = [("--tp", plan["tp"]), ("--pp", plan["pp"]), ("--dp", plan["dp"]),
             ("--zero-stage", plan["zero_stage"]), ("--micro-batch", plan["micro_batch"]),
             ("--grad-accum", plan["grad_accumulation"]), ("--recompute", plan["recompute"])]
    return " ".join(f"{k} {v}" for k, v in flags)


def training_launch(rec: dict, target: str, *, task_path: str, workload=None,
                    script: str = TRAIN_SCRIPT) -> LaunchBundle:
    """The recommended cluster and parallel plan as a task file or a torchrun script."""
    target = _choose("--emit target", target, EMIT_TARGETS)
    spec = spec_for_recommendation(rec)
    plan = rec["plan"]
    env = plan_env(plan, workload, rec.get("tokens_per_step"))
    what = f"{workload.arch.name or 'model'}, {workload.tokens:.3g} tokens" if workload else ""
    header = (f"gpuplan plan{' for ' + what if what else ''}: {spec.nodes} x "
              f"{spec.instance_type} ({spec.cloud} {spec.region or ''}, "
              f"{rec.get('pricing', 'on_demand')}), {spec.nodes * spec.gpus_per_node} GPUs; "
              f"plan {plan_args(plan)}.",
              f"Estimated {rec.get('wall_clock_hours', 0):,.1f} h, "
              f"${rec.get('total_cost_usd', 0):,.0f}. The training script is yours: "
              f"replace {script}.")
    program = f"{script} {plan_args(plan)}  {REPLACE_SCRIPT}"
    if target == "torchrun":
        body = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                                node_rank='"${NODE_RANK:?set NODE_RANK to 0..' +
                                f'{spec.nodes - 1}' + '}"',
                                master_addr='"${MASTER_ADDR:?set MASTER_ADDR to node 0}"',
                                program=program)
        lines = ["#!/usr/bin/env bash", *(f"# {h}" for h in header)]
        if spec.nodes > 1:
            lines.append(f"# Run on each of the {spec.nodes} nodes with NODE_RANK and "
                         "MASTER_ADDR (node 0's private IP) set.")
        lines += ["set -euo pipefail", *(f"export {k}={shlex.quote(v)}" for k, v in env.items()),
                  body]
        return LaunchBundle(target=target, files=(LaunchFile(path=task_path,
                                                             text="\n".join(lines) + "\n"),),
                            commands=(f"bash {task_path}",))
    setup = ("pip install torch  # ← replace with your setup "
             "(e.g. pip install -r requirements.txt)\n")
    if target == "skypilot":
        run = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                               node_rank="$SKYPILOT_NODE_RANK", master_addr="$MASTER_ADDR",
                               program=program)
        task = {"name": spec.name, "num_nodes": spec.nodes,
                "resources": _skypilot_resources(spec), "envs": env, "setup": setup,
                "run": 'MASTER_ADDR=$(echo "$SKYPILOT_NODE_IPS" | head -n1)\n' + run + "\n"}
        launch = (f"sky jobs launch -n {spec.name} {task_path}  # spot: managed job, recovers "
                  "from preemption" if spec.spot else f"sky launch -c {spec.name} {task_path}")
        return LaunchBundle(target=target, commands=(launch,),
                            files=(LaunchFile(path=task_path, text=dump_yaml(task, header)),))
    run = torchrun_command(nodes=spec.nodes, gpus_per_node=spec.gpus_per_node,
                           node_rank="$DSTACK_NODE_RANK", master_addr="$DSTACK_MASTER_NODE_IP",
                           program=program)
    task = {"type": "task", "name": spec.name, "nodes": spec.nodes, "python": "3.11",
            "env": [f"{k}={v}" for k, v in env.items()], "commands": [setup.rstrip("\n"), run],
            **_dstack_profile(spec)}
    if spec.spot:
        task["retry"] = {"on_events": ["interruption", "no-capacity"], "duration": "1d"}
    files = [LaunchFile(path=task_path, text="")]
    commands = [f"dstack apply -f {task_path}"]
    if spec.nodes > 1:
        task["fleets"] = [spec.name]
        files.insert(0, LaunchFile(path=fleet_path(task_path),
                                   text=dump_yaml(_dstack_fleet(spec, "30m"), header)))
        commands.insert(0, f"dstack apply -f {fleet_path(task_path)}")
    files[-1] = LaunchFile(path=task_path, text=dump_yaml(task, header))
    return LaunchBundle(target=target, files=tuple(files), commands=tuple(commands))


__all__ = ["ACCELERATOR_NAMES", "EMIT_TARGETS", "MASTER_PORT", "TARGETS", "TORCH_SPEC",
           "TRAIN_SCRIPT", "LaunchBundle", "LaunchError", "LaunchFile", "LaunchSpec",
           "ProbeRunCost", "parse_bucket", "plan_env", "probe_run_cost", "probes_launch",
           "probes_source_dir", "spec_for_instance", "spec_for_recommendation",
           "torchrun_command", "training_launch"]
