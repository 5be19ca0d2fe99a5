"""`gpuplan launch probes` and `plan --emit`: task files for SkyPilot or dstack, or a torchrun
script, written atomically, followed by the exact commands to run.

Output goes through plain ``sys.stdout`` (never rich markup: ``[...]`` in a pip spec is not a
style). `launch probes` prints what the run will cost, from the catalog, before the commands.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from ._app import app

launch_app = typer.Typer(help="Task files for SkyPilot or dstack that provision instances and "
                         "run the probes (or a plan) under torchrun.", no_args_is_help=True)
app.add_typer(launch_app, name="launch")


def _emit(bundle, to_stdout: bool, after: tuple[str, ...] = (),
          before: tuple[str, ...] = ()) -> None:
    from catalog import write_text_atomic

    out = sys.stdout
    if to_stdout:
        for f in bundle.files:
            out.write(f"# ---- {f.path} ----\n{f.text}")
        out.write("# Save the file(s) above under the name(s) shown, then run:\n")
    else:
        for f in bundle.files:
            write_text_atomic(f.path, f.text)
            out.write(f"wrote {f.path}\n")
        out.write("Then run:\n")
    for line in before:
        out.write(f"{line}\n")
    for i, cmd in enumerate((*bundle.commands, *after), 1):
        out.write(f"  {i}. {cmd}\n")
    out.flush()


@launch_app.command("probes")
def probes_cmd(
    instance: Annotated[str, typer.Option("--instance", help="A catalog instance type, e.g. "
                        "p5.48xlarge.")],
    target: Annotated[str, typer.Option("--target", help="skypilot or dstack.")],
    nodes: Annotated[int, typer.Option("--nodes", help="Instances to measure together.")] = 1,
    region: Annotated[str | None, typer.Option("--region", help="Pin the region.")] = None,
    cloud: Annotated[str | None, typer.Option("--cloud", help="Disambiguate --instance.")]
    = None,
    spot: Annotated[bool, typer.Option("--spot", help="Spot instead of on-demand.")] = False,
    out: Annotated[str | None, typer.Option("--out", help="Task file to write (default "
                   "gpuplan-probes.sky.yaml / gpuplan-probes.dstack.yml; - for stdout).")]
    = None,
    bucket: Annotated[str | None, typer.Option("--bucket", help="s3://BUCKET[/PREFIX] or "
                      "gs://BUCKET[/PREFIX] to copy the report to (default: fetch it with "
                      "scp).")] = None,
    install: Annotated[str | None, typer.Option("--install", help="A pip spec to install on "
                       "each node instead of copying this machine's probes (a git URL or a "
                       "wheel of gpuplan).")] = None,
) -> None:
    """A task file that provisions NODES x INSTANCE, copies this machine's probes to them, runs
    the probe suite under torchrun on all of them, and brings report.json back for `gpuplan
    probe ingest`. Prints what the run costs (catalog price x nodes x expected minutes) first."""
    from catalog import load_catalog
    from planner._launch import (
        TARGETS,
        _choose,
        default_path,
        probe_run_cost,
        probes_launch,
        spec_for_instance,
    )

    target = _choose("launch target", target, TARGETS)
    cat = load_catalog()
    spec = spec_for_instance(cat, instance, nodes, region=region, spot=spot, cloud=cloud)
    to_stdout = out == "-"
    path = default_path(target, "probes") if out in (None, "-") else out
    bundle = probes_launch(spec, target, task_path=path, install=install, bucket=bucket)
    cost = probe_run_cost(cat, spec, target)
    line = cost.line() if cost else (f"Cost before launch: the catalog has no usable "
                                     f"{'spot' if spot else 'on-demand'} price for "
                                     f"{spec.instance_type}; check your cloud's pricing.")
    _emit(bundle, to_stdout, before=(line,),
          after=("gpuplan plan … (as before: it now uses the measurements)",))


def emit_for_plan(recommendation: dict | None, target: str, out_path: str | None,
                  workload=None) -> None:
    """`plan --emit TARGET [--emit-out FILE]`: the recommendation as a launch file."""
    from planner._launch import EMIT_TARGETS, _choose, default_path, training_launch

    target = _choose("--emit target", target, EMIT_TARGETS)
    path = out_path if out_path not in (None, "-") else default_path(target, "train")
    bundle = training_launch(recommendation, target, task_path=path, workload=workload)
    if out_path in (None, "-"):
        sys.stdout.write(f"\n# ---- launch file ({target}) ----\n")
    _emit(bundle, out_path in (None, "-"))
