"""`gpuplan probe run|ingest|show`: measure, store, and list what calibrates the model."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import CliExit, console, print_json, probe_app


@probe_app.command("run", context_settings={"allow_extra_args": True,
                                            "ignore_unknown_options": True})
def run_cmd(ctx: typer.Context) -> None:
    """Run the probe suite on this machine (needs torch: pip install 'gpuplan[probes]').

    Options are those of `python -m probes --help`: --quick, --out FILE, --device,
    --timeout-s, --sizes, --shapes, --dtypes, --probes. Several nodes: run
    `torchrun --nnodes N --nproc-per-node G -m probes --out report.json` on each.
    """
    from probes.cli import main as probes_main

    code = probes_main(list(ctx.args))
    if code:
        raise CliExit(code)


@probe_app.command("ingest")
def ingest_cmd(
    reports: Annotated[list[str], typer.Argument(help="Probe report JSON files.")],
    accelerator: Annotated[str | None, typer.Option(
        "--accelerator", help="Catalog accelerator the report measured, when the GPU name "
        "alone does not say (e.g. H100-SXM5-80GB).")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Store probe reports; `estimate` and `plan` then use what they measured."""
    from catalog import load_catalog
    from planner._probe_store import db_path, ingest

    cat = load_catalog()
    stored = [ingest(path, cat, accelerator=accelerator) for path in reports]
    if json_out:
        print_json([s.as_dict() for s in stored])
        return
    out = console()
    for s in stored:
        what = ", ".join(f"{k} {v:.1f}" for k, v in s.measurements.get("matmul_tflops",
                                                                        {}).items())
        use = ("calibrates " + s.accelerator) if s.device_type == "cuda" and s.accelerator \
            else f"stored only ({s.device_type} run: it does not calibrate a GPU)"
        out.print(f"report {s.id}: {s.gpu_model or s.device_type} x{s.gpu_count or 0}"
                  f"{' on ' + s.instance_type if s.instance_type else ''}; matmul TFLOP/s "
                  f"{what or '—'}; {use}")
    out.print(f"database: {db_path()}")


@probe_app.command("show")
def show_cmd(
    report_id: Annotated[int | None, typer.Argument(help="Show one report in full.")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List ingested probe reports and the measurements the planner uses."""
    from planner._probe_store import get_report, list_reports, report_json

    if report_id is not None:
        if json_out:
            print_json(report_json(report_id))
        else:
            print_json(get_report(report_id).as_dict())
        return
    reports = list_reports()
    if json_out:
        print_json([r.as_dict() for r in reports])
        return
    out = console()
    if not reports:
        out.print("no probe reports ingested. Run `gpuplan probe run --out report.json` on a "
                  "rented instance, then `gpuplan probe ingest report.json`.")
        return
    from rich.table import Table

    t = Table()
    for col in ("id", "created", "accelerator", "GPUs", "nodes", "instance", "bf16 TF/s",
                "intra busbw GB/s", "world busbw GB/s"):
        t.add_column(col)
    for r in reports:
        m = r.measurements

        def fmt(v):
            return "—" if v is None else f"{v:.1f}"

        t.add_row(str(r.id), r.created_utc[:19], r.accelerator or r.device_type,
                  str(r.gpu_count or 0), str(r.node_count or 1), r.instance_type or "—",
                  fmt(m.get("matmul_tflops", {}).get("bf16")),
                  fmt(m.get("busbw_intra_gb_per_s", {}).get("all_reduce")),
                  fmt(m.get("busbw_world_gb_per_s", {}).get("all_reduce")))
    out.print(t)
