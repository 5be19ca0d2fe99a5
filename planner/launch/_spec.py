"""What to launch: the instances (``LaunchSpec``), the files and commands a launch writes
(``LaunchBundle``), and what every target shares — run names, YAML, the plan as variables.

Pure functions over data: they return file texts and the commands to run, and write nothing
(the CLI writes the files, atomically). No orchestrator is imported or needed: the files are
plain YAML made with ``yaml.SafeDumper`` from dicts built in a fixed key order. The targets
live in ``_skypilot``, ``_dstack`` and ``_torchrun`` (each module's docstring says where each
field comes from); ``_bundles`` turns a spec into a bundle for a target.

Errors::

    GpuplanError (catalog)
    └── LaunchError   bad target, node count, bucket URI, or an accelerator no launcher covers
"""

from __future__ import annotations

import re

from catalog import CLOUDS, GpuplanError, UnknownNameError, check_names, record

from ..model import MAX_PLAN_GPUS

TARGETS: tuple[str, ...] = ("skypilot", "dstack")  # orchestrators with task files
EMIT_TARGETS: tuple[str, ...] = (*TARGETS, "torchrun")  # what `plan --emit` writes
MAX_NODES = 1024  # a probe bundle's nodes (`launch probes --nodes`): far above any probe run
# any launch file's nodes: the largest plan (`plan --emit`), one-GPU nodes at the search's GPU
# limit (1,024 refused a 1,248-node plan, naming a --nodes never passed); a typo such as 10**26
# nodes is refused
SPEC_MAX_NODES = MAX_PLAN_GPUS
TRAIN_SCRIPT = "YOUR_TRAIN_SCRIPT.py"
REPLACE_SCRIPT = "# ← replace with your training script"

class LaunchError(GpuplanError):
    pass


class NoTargetName(LaunchError):
    """One orchestrator has no name for the spec's accelerator (``no_launch_name``); ``spec``
    and ``target`` let a caller say the fix with its own option (`plan` has --emit)."""

    def __init__(self, message: str, *, spec: LaunchSpec, target: str) -> None:
        super().__init__(message)
        self.spec, self.target = spec, target


class NoLaunchFile(LaunchError):
    """The instance's accelerator is no GPU the launch files run (a TPU, a Trainium): `plan
    --emit` says to leave --emit out or plan on GPUs, `launch probes` to pick a GPU instance."""


def choose(kind: str, value: str, allowed: tuple[str, ...]) -> str:
    """``value`` when it is one of ``allowed``; else the one-line error with close matches."""
    if value in allowed:
        return value
    raise LaunchError(str(UnknownNameError(kind, value, allowed)))


@record
class LaunchSpec:
    """What to provision: ``nodes`` instances of one type, each with ``gpus_per_node``.

    ``skypilot_accelerator`` / ``dstack_gpu``: what each orchestrator calls the accelerator
    (the catalog's ``Accelerator.skypilot_name`` / ``dstack_name``; "" when it has no name).
    """

    cloud: str
    instance_type: str
    accelerator: str  # catalog canonical name
    gpus_per_node: int
    nodes: int
    skypilot_accelerator: str = ""
    dstack_gpu: str = ""
    # a CUDA or ROCm GPU (NVIDIA, AMD): torchrun runs on it, and SkyPilot takes its real
    # instance type, even where neither orchestrator has a name for it (V100-PCIe, B300)
    torch_gpu: bool = False
    region: str | None = None
    # the AWS Local or Wavelength Zone the catalog priced (``us-east-1-atl-1``): SkyPilot's
    # infra and dstack's regions take regions, so ``region`` is then the zone's parent region
    zone: str | None = None
    spot: bool = False
    name: str = "gpuplan"
    # the other regions the plan priced the same (a candidate's ``regions``), where the files
    # may launch too: on-demand and spot plans only, real regions only (``equal_regions``)
    other_regions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= SPEC_MAX_NODES:
            raise LaunchError(f"`nodes` must be between 1 and {SPEC_MAX_NODES:,}, got "
                              f"{self.nodes:,}. To fix: pass `nodes` 1 to {SPEC_MAX_NODES:,}",
                              field="nodes", value=self.nodes)
        if not (self.skypilot_accelerator or self.dstack_gpu or self.torch_gpu):
            raise NoLaunchFile(
                f"{self.instance_type} has {self.accelerator}, which the SkyPilot/dstack/torchrun "
                "launch files do not cover (they run CUDA/ROCm GPUs). To fix: choose a GPU "
                "instance, e.g. `gpuplan offers --gpu H100`")

    @property
    def launch_regions(self) -> tuple[str, ...]:
        """Every region the files may launch in, the recommended one first."""
        return (self.region, *self.other_regions) if self.region else ()

    @property
    def real_instance_type(self) -> bool:
        """False for the catalog's synthetic GCP names such as ``n1+t4x1`` (GPUs attached)."""
        return "+" not in self.instance_type


@record
class LaunchFile:
    path: str
    text: str


@record
class LaunchBundle:
    """The files to write (dstack: the fleet first) and the commands to run, in order."""

    target: str
    files: tuple[LaunchFile, ...]
    commands: tuple[str, ...]
    notes: tuple[str, ...] = ()  # what the user must do besides the commands (printed first)


def launch_region(cloud: str, region: str | None) -> tuple[str | None, str | None]:
    """(the region a launch file names, the zone it stands for or None): a Local or
    Wavelength Zone (``us-east-1-atl-1``) is written as its parent region, which is what
    SkyPilot (``infra``) and dstack (``regions``) take; the catalog knows the parent from the
    zone's code (catalog ``Cloud.parent_region``)."""
    if region is None or cloud not in CLOUDS:
        return region, None
    c = CLOUDS[cloud]
    if c.region_kind(region) not in ("local_zone", "wavelength_zone"):
        return region, None
    return c.parent_region(region), region


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
    it = catalog.instance_type(instance, cloud)
    if region is not None and region not in (regions := catalog.regions(it.cloud)):
        try:  # 'US-EAST-1' is us-east-1, as the filters take it; else the checks below say
            (region,) = check_names(f"{it.cloud} region", [region], regions)
        except UnknownNameError:
            pass
    if region is not None:
        known = {r for c, r, name in catalog.offer_places() if (c, name) == it.key}
        if not known:  # an instance type the catalog prices nowhere: its cloud's regions
            # (a region "eastus: x\n#…" or an AWS one for an Azure type went into the files)
            cloud_regions = set(catalog.regions(it.cloud))
            if region not in cloud_regions:
                raise UnknownNameError(f"{it.cloud} region", region, cloud_regions)
        elif region not in known:
            if region in catalog.regions(it.cloud):  # it said "unknown region" of a real one
                shown = sorted(known)
                raise GpuplanError(
                    f"{it.name} is not offered in {region} ({it.cloud}) in the catalog."
                    f" To fix: pin one of its regions ({', '.join(shown[:12])}"
                    f"{' …' if len(shown) > 12 else ''}) or leave the region out",
                    field="region", value=region)
            raise UnknownNameError(f"region for {it.name}", region, known)
    region, zone = launch_region(it.cloud, region)
    return LaunchSpec(cloud=it.cloud, instance_type=it.name, accelerator=it.accelerator,
                      gpus_per_node=it.gpu_count, nodes=nodes, region=region, zone=zone,
                      spot=spot,
                      name=run_name(prefix, it.name, nodes),
                      **_launch_names(catalog, it.accelerator))


def spec_for_recommendation(rec: dict | None, catalog) -> LaunchSpec:
    """The recommended cluster of a plan (a candidate's JSON) as a spec."""
    if not rec:
        raise LaunchError("no plan to launch: nothing met the constraints. To fix: relax "
                          "`deadline`/`budget`, then use `emit`")
    nodes = int(rec["nodes"])
    region, zone = launch_region(rec["cloud"], rec.get("region"))
    return LaunchSpec(cloud=rec["cloud"], instance_type=rec["instance_type"],
                      accelerator=rec["accelerator"], gpus_per_node=int(rec["gpus"]) // nodes,
                      nodes=nodes, region=region, zone=zone, spot=rec.get("pricing") == "spot",
                      name=run_name("gpuplan-train", rec["instance_type"], nodes),
                      other_regions=equal_regions(rec, region),
                      **_launch_names(catalog, rec["accelerator"]))


# Pricing whose price holds in any region the plan lists: a reservation, commitment or
# capacity block is bought in one region, and a launch elsewhere pays on-demand prices.
MULTI_REGION_PRICING = ("on_demand", "spot")


def equal_regions(rec: dict, region: str | None) -> tuple[str, ...]:
    """The regions besides ``region`` where the plan found the same offer at the same price
    (the candidate's ``regions``), for on-demand and spot plans: a Local or Wavelength Zone is
    left out (its parent region was not what was priced there)."""
    if region is None or rec.get("pricing", "on_demand") not in MULTI_REGION_PRICING:
        return ()
    out: list[str] = []
    for r in rec.get("regions") or ():
        if isinstance(r, str) and r != region and r not in out \
                and launch_region(rec["cloud"], r) == (r, None):
            out.append(r)
    return tuple(out)


def no_launch_name(spec: LaunchSpec, target: str, option: str = "--target") -> NoTargetName:
    """The error for a ``target`` with no name for ``spec``'s accelerator: use the other
    orchestrator where it has one, else why neither can run it (each said to use the other:
    GCP's n1+p4x1 went round in a circle). ``option``: the option that picks the target in
    the command that ran (`launch probes --target`, `plan --emit`, which also has torchrun:
    "use --target skypilot" named an option `plan` does not have)."""
    sky = (f"SkyPilot has no accelerator name for {spec.accelerator}"
           + ("" if spec.real_instance_type else f" and {spec.instance_type} is the catalog's "
              "name for a VM with GPUs attached, not an instance type it can request"))
    dstack = f"dstack has no GPU name for {spec.accelerator}"
    # `plan --emit torchrun` writes a script that needs no orchestrator's name for the GPU
    torchrun = f" or {option} torchrun" if option == "--emit" and spec.torch_gpu else ""
    if target == "skypilot" and spec.dstack_gpu:
        message = f"{sky}. To fix: use {option} dstack{torchrun}"
    elif target == "dstack" and (spec.skypilot_accelerator or spec.real_instance_type):
        message = f"{dstack}. To fix: use {option} skypilot{torchrun}"
    elif torchrun:
        message = (f"neither SkyPilot nor dstack can run {spec.instance_type}: {sky}, and "
                   f"{dstack}. To fix: use {option} torchrun (a script for each node), or "
                   f"plan on another GPU with --gpu")
    else:
        message = (f"neither SkyPilot nor dstack can run {spec.instance_type}: {sky}, and "
                   f"{dstack}. To fix: choose an instance with another GPU (`gpuplan offers "
                   f"--cloud {spec.cloud}` lists them)")
    return NoTargetName(message, spec=spec, target=target)


TORCH_GPU_VENDORS = ("NVIDIA", "AMD")  # CUDA and ROCm builds of torch (not "AMD Xilinx")


def _launch_names(catalog, accelerator: str) -> dict:
    acc = catalog.accelerator(accelerator)
    return {"skypilot_accelerator": acc.skypilot_name, "dstack_gpu": acc.dstack_name,
            "torch_gpu": acc.vendor in TORCH_GPU_VENDORS and not acc.inference_only}


# -- YAML ------------------------------------------------------------------------------------
def comment_lines(header: tuple[str, ...]) -> list[str]:
    """``header`` as comment lines, each item one line: a control character in user text (a
    model folder named "x\necho PWNED") must never end the comment and start code."""
    return [("# " + "".join(c if c.isprintable() else " " for c in line)).rstrip()
            for line in header]


# The first line of every file gpuplan writes for a launch (after a script's "#!" line), with a
# digest of the rest: the CLI replaces an existing file only when it carries this line and is
# unedited, so neither a file of the user's (`--out base.json`) nor their edits to a generated
# task (a setup of their own) are lost to a re-run. Launch files are YAML or bash, never JSON:
# a comment always fits.
GENERATED_MARK = "# generated by gpuplan"
_MARK_LINE = re.compile(re.escape(GENERATED_MARK) + r" \(sha256:([0-9a-f]{16})\);[^\n]*")


def _digest(body: str) -> str:
    import hashlib

    return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def mark_generated(text: str) -> str:
    """``text`` with the generated-by line first (second after a ``#!`` line)."""
    first, body = text.split("\n", 1) if text.startswith("#!") else ("", text)
    line = (f"{GENERATED_MARK} (sha256:{_digest(body)}); gpuplan replaces this file only "
            "while it is unedited\n")
    return f"{first}\n{line}{body}" if first else line + body


def generated_state(text: str) -> str | None:
    """"unedited" or "edited" for a file that ``mark_generated`` wrote, None for any other.
    The line may follow a script's ``#!`` and the ``# ---- NAME ----`` heading of a file
    saved from stdout (`launch probes --out -`, `plan --emit-out -`), each a comment line;
    the digest covers what follows it."""
    lines = text.split("\n", 3)
    for i in range(min(3, len(lines) - 1)):  # the mark, then a body
        if i and not lines[i - 1].startswith("#"):
            break
        if m := _MARK_LINE.fullmatch(lines[i]):
            body = text.split("\n", i + 1)[i + 1]
            return "unedited" if _digest(body) == m.group(1) else "edited"
    return None


def dump_yaml(data: dict, header: tuple[str, ...] = ()) -> str:
    """A launch file: the generated-by line, ``header`` as comments, then plain YAML in the
    dicts' own key order; multi-line strings as literal blocks."""
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper, value: str):
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    body = yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)
    return mark_generated("".join(f"{line}\n" for line in comment_lines(header)) + body)


def default_path(target: str, what: str) -> str:
    return {"skypilot": f"gpuplan-{what}.sky.yaml", "dstack": f"gpuplan-{what}.dstack.yml",
            "torchrun": f"gpuplan-{what}.sh"}[target]


# -- the plan, for a training script -------------------------------------------------------
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
    if workload is not None and (split := stage_layers(workload.arch.layers, plan["pp"])):
        # uneven pipeline stages: the script must split the layers as the estimate did
        if split == (split[0],) * (len(split) - 1) + (split[-1],):  # all but the last equal:
            env.update({"GPUPLAN_LAYERS_PER_STAGE": split[0],  # the pair says it whole
                        "GPUPLAN_LAST_STAGE_LAYERS": split[-1]})
        env.update({"GPUPLAN_STAGE_LAYERS": ",".join(map(str, split)),
                    "GPUPLAN_PIPELINE_LAYOUT": pipeline_layout(
                        split, int(plan.get("virtual_stages") or 1))})
    if workload is not None:
        # the plan's own batch (whole micro-batches per data-parallel rank), which the user's
        # request was rounded up to: the user's 2,998,272 beside dp·mb·ga·seq = 3,211,264
        # gave a script computing grad-accum from it 6.54
        batch = tokens_per_step or workload.global_batch_tokens
        env.update({"GPUPLAN_SEQ_LEN": workload.seq_len, "GPUPLAN_PRECISION": workload.precision,
                    "GPUPLAN_FRAMEWORK": workload.framework})
        if batch:
            env["GPUPLAN_GLOBAL_BATCH_TOKENS"] = int(batch)
    return {k: str(v) for k, v in env.items()}


def stage_layers(layers: int, pp: int) -> tuple[int, ...] | None:
    """The layers each of ``pp`` pipeline stages holds, first to last, where they are uneven
    (None where every stage holds the same, or there is no pipeline). The model times every
    stage at ⌈layers/pp⌉ layers, the fullest (planner/model/_perf.py and _memory.py:
    ``layers_stage = ceil(L / pp)``): the first stages hold that many and the last the rest —
    deepseek-v3's 61 layers over 8 stages are 7 × 8 and 5. Where that leaves the last stages
    nothing (12 layers over 8 stages: 7 × 2 = 14), the stages hold ⌈layers/pp⌉ or one fewer,
    the fuller first: no stage holds more than the model timed either way."""
    per = -(-layers // pp)  # ceil, in integers: the model's np.ceil(L / pp)
    if pp <= 1 or per * pp == layers:
        return None
    last = layers - per * (pp - 1)
    if last >= 1:
        return (per,) * (pp - 1) + (last,)
    full = layers - (per - 1) * pp  # stages with `per` layers, the rest one fewer
    return (per,) * full + (per - 1,) * (pp - full)


def pipeline_layout(split: tuple[int, ...], vp: int) -> str:
    """``split`` (each stage's layers) over ``vp`` virtual stages as Megatron-LM's
    ``--pipeline-model-parallel-layout`` writes it (docs.nvidia.com/megatron/parallelism-guide/
    pipeline-parallel-layout: stages split by "|", virtual rank 0 of every stage first, "E"
    the embedding, "t" a layer, "L" the loss): each stage's layers in ``vp`` chunks, the
    fuller first — deepseek-v3's last stage of 5 layers at vp 4 is 2, 1, 1, 1. Uneven stages
    with interleaving need it (every stage's layers divisible by vp is the uniform split's
    rule: 5 is not, by 4)."""
    chunks = [[n // vp + (i < n % vp) for i in range(vp)] for n in split]
    said = []
    for v in range(vp):
        for p, per_stage in enumerate(chunks):
            k = per_stage[v]
            said.append(",".join(x for x in ("E" if (v, p) == (0, 0) else "",
                                             f"t*{k}" if k > 1 else "t" * k,
                                             "L" if (v, p) == (vp - 1, len(split) - 1) else "")
                                 if x))
    return "|".join(said)


def stage_note(layers: int, pp: int) -> str | None:
    """One header line for uneven pipeline stages (``stage_layers``), else None."""
    split = stage_layers(layers, pp)
    if not split:
        return None
    full = split.count(split[0])
    rest = (f"the last holds {split[-1]}" if full == pp - 1 else
            f"the other {pp - full} hold {split[-1]} each")
    first = (f"the first holds {split[0]} layers" if full == 1 else
             f"the first {full} hold {split[0]} layers each")
    return (f"Pipeline stages are uneven: {layers} layers over {pp} stages — {first}, {rest} "
            "(GPUPLAN_STAGE_LAYERS; GPUPLAN_PIPELINE_LAYOUT in Megatron-LM's "
            "--pipeline-model-parallel-layout form, virtual stages included); the estimate "
            f"times every stage at {split[0]}.")


def plan_args(plan: dict) -> str:
    """The same plan as flags for the training script; context parallelism, virtual pipeline
    stages and expert parallelism only where the plan uses them (the estimate's speed
    depends on them, so a script that ignored them would not run the estimated plan)."""
    flags = [("--tp", plan["tp"]), ("--pp", plan["pp"]), ("--dp", plan["dp"])]
    flags += [(flag, plan[key]) for flag, key in (("--cp", "cp"), ("--vp", "virtual_stages"),
                                                  ("--ep", "ep")) if plan.get(key, 1) > 1]
    flags += [("--zero-stage", plan["zero_stage"]), ("--micro-batch", plan["micro_batch"]),
              ("--grad-accum", plan["grad_accumulation"]), ("--recompute", plan["recompute"])]
    return " ".join(f"{k} {v}" for k, v in flags)
