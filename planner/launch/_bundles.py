"""What `gpuplan launch probes` and `gpuplan plan --emit` write: the bundle of files and
commands for one target, and what a probe run costs before it is launched (from the catalog).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from catalog import CLOUDS

from ..model import ParallelPlan, format_count, format_hours, format_usd
from . import _dstack, _skypilot
from ._probes import EXPECTED_MINUTES, ProbeRunCost, parse_bucket, probes_source_dir
from ._spec import (
    EMIT_TARGETS,
    REPLACE_SCRIPT,
    TARGETS,
    TRAIN_SCRIPT,
    LaunchBundle,
    LaunchSpec,
    NoTargetName,
    choose,
    no_launch_name,
    plan_args,
    plan_env,
    spec_for_recommendation,
    stage_note,
)
from ._torchrun import training_script

# The training task's setup: the user's own (the files cannot know their environment).
TRAIN_SETUP = ("pip install torch  # ← replace with your setup "
               "(e.g. pip install -r requirements.txt)\n")


# What a reservation or commitment needs before the launch: the files launch on-demand
# instances (SkyPilot use_spot false, dstack spot_policy on-demand), which the cloud bills at
# the reserved price only when the reservation exists (reserved instances, committed use
# discounts apply to matching on-demand usage) or the instances are placed into it (a capacity
# block is a targeted reservation: without it the job runs at on-demand prices or finds no
# capacity — the plan's price would be fiction).
CAPACITY_BLOCK_PLACEHOLDER = "YOUR_CAPACITY_BLOCK_ID"
_COMMITMENT = {"reserved": "reserved instances (or a Savings Plan)",
               "committed": "the committed use discount"}


def _pricing_notes(pricing: str, target: str, cloud: str) -> tuple[str, ...]:
    """What the user must do for a plan priced as ``pricing`` (none for on-demand or spot)."""
    if pricing in ("on_demand", "spot"):
        return ()
    if pricing == "capacity_block":
        first = (f"The plan is priced as an {cloud.upper()} capacity block: buy the block "
                 "first (its ID is cr-…); the instances must be launched into it, else they run "
                 "at on-demand prices or find no capacity.")
        how = {"skypilot": "SkyPilot takes the block from ~/.sky/config.yaml, not from the "
                           "task: add `aws: {specific_reservations: [cr-…]}` there before "
                           "`sky launch` (docs.skypilot.co reservations guide).",
               "dstack": f"Replace {CAPACITY_BLOCK_PLACEHOLDER} (`reservation:`, in the fleet "
                         "file where there is one) with the block's ID before `dstack apply`.",
               "torchrun": "Start the nodes in the capacity block (its reservation ID, in its "
                           "Availability Zone and time window), then run this script on each."}
        return (first, how[target])
    kind, _, term = pricing.partition("_")
    what = _COMMITMENT.get(kind, f"the {kind} pricing")
    return (f"The plan is priced as {pricing}: buy the reservation / commitment first — "
            f"{what} for {term} — the cloud applies it to matching on-demand usage, which this "
            "file launches; without it you pay on-demand prices.",)


def _zone_notes(spec: LaunchSpec) -> tuple[str, ...]:
    if not spec.zone:
        return ()
    kind = ("Local Zone" if CLOUDS[spec.cloud].region_kind(spec.zone) == "local_zone"
            else "Wavelength Zone")
    return (f"{spec.zone} is an {spec.cloud.upper()} {kind}: SkyPilot and dstack take regions, "
            f"so this file names its parent region {spec.region}, where prices and capacity "
            f"can differ; to run in {spec.zone} itself, launch there with AWS's own tools.",)


def _where(spec: LaunchSpec) -> str:
    """The place the catalog priced: a zone the file writes as its parent region says so."""
    where = f"{spec.zone}, launched as {spec.region}" if spec.zone else spec.region or ""
    if spec.other_regions:  # the plan priced these the same: the files launch in any
        *some, last = spec.other_regions
        where += f"{''.join(f', {r}' for r in some)} or {last} at the same price"
    return where


def probe_run_cost(catalog, spec: LaunchSpec, target: str, *,
                   bucket: bool = False) -> ProbeRunCost | None:
    """The run's price from the catalog (the region asked for, else the cheapest priced one);
    None when the catalog has no usable price for the instance. ``bucket``: the report goes
    to a bucket, so SkyPilot tears the cluster down when the job ends (no idle wait for
    `scp`: ``probes_launch``)."""
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
    if target == "dstack":  # the run, then the idle time before its instances are released
        most = _dstack.DSTACK_MAX_DURATION_MINUTES + _dstack.PROBE_IDLE_MINUTES
        why = (f"the task's max_duration, {_dstack.DSTACK_MAX_DURATION_MINUTES // 60} h, then "
               f"{_dstack.PROBE_IDLE_MINUTES} idle minutes before dstack releases the instances")
    elif bucket:
        most, why = expected, "torn down when the probe job ends (`sky launch --down`)"
    else:
        most = expected + _skypilot.IDLE_MINUTES
        why = f"auto-down after {_skypilot.IDLE_MINUTES} idle minutes"
    return ProbeRunCost(instance_type=spec.instance_type, nodes=spec.nodes,
                        usd_per_hour=best.usd_per_hour,
                        price_source=f"{spec.cloud} {where}, {pricing.replace('_', '-')}, "
                                     # an overridden price is the user's, not the catalog's
                                     + (best.source if "overridden" in best.flags
                                        else f"catalog {best.as_of}"),
                        expected_minutes=expected, expected_breakdown=breakdown,
                        max_minutes=most, max_reason=why)


def _gpus(n: int) -> str:
    """"1 GPU", "8 GPUs" (a one-GPU plan's launch file said "1 GPUs")."""
    return f"{n:,} GPU{'' if n == 1 else 's'}"


def probes_launch(spec: LaunchSpec, target: str, *, task_path: str, install: str | None = None,
                  bucket: str | None = None, source_dir: str | Path | None = None,
                  aws_session_token: bool = False) -> LaunchBundle:
    """A task that copies the local probes to every node, runs them there under torchrun and
    brings report.json back. ``install``: a pip spec to install instead of copying (a URL the
    node can fetch: the CLI refuses a local file, which is never uploaded); ``source_dir``:
    the probes package to copy (default: this one); ``aws_session_token``: an s3 bucket's
    dstack task passes AWS_SESSION_TOKEN from the shell too (temporary credentials)."""
    target = choose("launch target", target, TARGETS)
    b = parse_bucket(bucket) if bucket else None
    src = str(Path(source_dir) if source_dir else probes_source_dir())
    notes = _zone_notes(spec)
    header = (f"gpuplan probes: {spec.nodes} x {spec.instance_type} ({spec.cloud}"
              f"{' ' + _where(spec) if spec.region else ''}, "
              f"{'spot' if spec.spot else 'on-demand'}), {_gpus(spec.gpus_per_node)} per node.",
              "Generated by `gpuplan launch probes`; launch with the commands it printed.",
              f"The probes are installed on every node with pip: {install}" if install else
              f"The probes are copied from this machine: {src}", *notes)
    if target == "skypilot":  # SkyPilot uploads the local AWS credentials itself
        bundle = _skypilot.probes_task(spec, task_path=task_path, header=header,
                                       install=install, bucket=b, src=src)
    else:
        bundle = _dstack.probes_task(spec, task_path=task_path, header=header, install=install,
                                     bucket=b, src=src, aws_session_token=aws_session_token)
    return replace(bundle, notes=notes)


def training_launch(rec: dict, target: str, *, task_path: str, catalog, workload=None,
                    script: str = TRAIN_SCRIPT) -> LaunchBundle:
    """The recommended cluster and parallel plan (a candidate's JSON) as a task file or a
    torchrun script; ``catalog`` names the accelerator for the orchestrators."""
    target = choose("--emit target", target, EMIT_TARGETS)
    spec = spec_for_recommendation(rec, catalog)
    plan = rec["plan"]
    env = plan_env(plan, workload, rec.get("tokens_per_step"))
    what = f"{workload.arch.name or 'model'}, {format_count(workload.tokens)} tokens" \
        if workload else ""
    pricing = rec.get("pricing", "on_demand")
    # a torchrun script names no region: the zone is only where the plan was priced
    notes = (*_pricing_notes(pricing, target, spec.cloud),
             *(_zone_notes(spec) if target != "torchrun" else ()))
    where = spec.zone if target == "torchrun" and spec.zone else _where(spec)
    header = (f"gpuplan plan{' for ' + what if what else ''}: {spec.nodes} x "
              f"{spec.instance_type} ({spec.cloud} {where}, "
              f"{pricing}), {_gpus(spec.nodes * spec.gpus_per_node)}; "
              f"plan {ParallelPlan.from_dict(plan)}.",
              f"Estimated {format_hours(rec.get('wall_clock_hours', 0))}, "
              f"{format_usd(rec.get('total_cost_usd', 0))}. The training script is yours: "
              f"replace {script}.",
              *((line,) if workload is not None and (line := stage_note(
                  workload.arch.layers, int(plan["pp"]))) else ()), *notes)
    program = f"{script} {plan_args(plan)}  {REPLACE_SCRIPT}"
    try:
        if target == "torchrun":
            bundle = training_script(spec, task_path=task_path, header=header, env=env,
                                     program=program)
        elif target == "skypilot":
            bundle = _skypilot.training_task(spec, task_path=task_path, header=header, env=env,
                                             setup_line=TRAIN_SETUP, program=program)
        else:
            bundle = _dstack.training_task(
                spec, task_path=task_path, header=header, env=env, setup_line=TRAIN_SETUP,
                program=program, reservation=CAPACITY_BLOCK_PLACEHOLDER
                if pricing == "capacity_block" else None)
    except NoTargetName as exc:  # the fix in `plan`'s words: --emit, not --target
        raise no_launch_name(exc.spec, exc.target, option="--emit") from None
    return replace(bundle, notes=notes)
