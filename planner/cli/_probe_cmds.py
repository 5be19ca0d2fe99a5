"""`gpuplan probe run|ingest|show`: measure, store, and list what calibrates the model (and
what does not, with why)."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import CliExit, console, print_json, probe_app


@probe_app.command("run", context_settings={"allow_extra_args": True,
                                            "ignore_unknown_options": True})
def run_cmd(ctx: typer.Context) -> None:
    """Run the probe suite on this machine (needs torch: pip install 'torch>=2.3').

    Options are those of `python -m probes --help`: --quick, --out FILE, --device,
    --timeout-s, --sizes, --shapes, --dtypes, --probes. All GPUs of a node:
    `torchrun --standalone --nproc-per-node 8 -m probes --out report.json`; several nodes:
    `gpuplan launch probes` writes the task file.
    """
    from probes.cli import main as probes_main

    code = probes_main(list(ctx.args))
    if code:
        raise CliExit(code)


def _num(v: float | None) -> str:
    """1 decimal for real figures; 3 significant digits for absurd ones (1e308 stays short)."""
    return "-" if v is None else (f"{v:,.1f}" if abs(v) < 1e6 else f"{v:.3g}")


def _for_report(cal, report_id: int) -> tuple[list, list]:
    return ([n for n in cal.used() if report_id in n.report_ids],
            [n for n in cal.rejected() if report_id in n.report_ids])


def _reasons(notes) -> list[str]:
    """One line per distinct reason, naming the figures it applies to."""
    by_reason: dict[str, list[str]] = {}
    for n in notes:
        by_reason.setdefault(n.reason, []).append(f"{n.kind} {n.key}")
    return [f"{', '.join(dict.fromkeys(what))}: {why}" for why, what in by_reason.items()]


def _with_calibration(stored, cal) -> dict:
    used, refused = _for_report(cal, stored.id)
    return {**stored.as_dict(), "ingest_status": stored.ingest_status,
            "used": [n.line() for n in used], "not_used": [n.line() for n in refused]}


@probe_app.command("ingest")
def ingest_cmd(
    reports: Annotated[list[str], typer.Argument(help="Probe report JSON files.")],
    accelerator: Annotated[str | None, typer.Option(
        "--accelerator", help="Catalog accelerator the report measured, when the GPU name "
        "alone does not say (e.g. H100-SXM5-80GB). Re-ingesting a stored report with another "
        "accelerator relabels it.")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """Store probe reports; `estimate` and `plan` then use what the calibration rules accept
    (full non-quick runs, figures within the datasheet's bounds, RDMA for the fabric)."""
    from catalog import load_catalog
    from planner._probe_store import db_path, ingest, load_calibration

    cat = load_catalog()
    stored = [ingest(path, cat, accelerator=accelerator) for path in reports]
    cal = load_calibration(cat)
    if json_out:
        print_json([_with_calibration(s, cal) for s in stored])
        return
    out = console()
    for s in stored:
        used, refused = _for_report(cal, s.id)
        what = ", ".join(f"{k} {_num(v)}" for k, v in s.measurements.get("matmul_tflops",
                                                                          {}).items())
        if used:
            use = f"calibrates {s.accelerator} ({len(used)} figure(s))"
        else:
            use = "stored; calibrates nothing"
        out.print(f"report {s.id}: {s.gpu_model or s.device_type} x{s.gpu_count or 0}"
                  f"{' on ' + s.instance_type if s.instance_type else ''}; matmul TFLOP/s "
                  f"{what or '-'}; {use}", markup=False, highlight=False)
        if s.ingest_status != "stored":
            out.print(f"  {s.ingest_status}", markup=False, highlight=False)
        for line in _reasons(refused):
            out.print(f"  not used: {line}", markup=False, highlight=False)
    out.print(f"database: {db_path()}", markup=False, highlight=False)


@probe_app.command("show")
def show_cmd(
    report_id: Annotated[int | None, typer.Argument(help="Show one report in full.")] = None,
    json_out: Annotated[bool, typer.Option("--json")] = False,
) -> None:
    """List ingested probe reports, the measurements the planner uses, and those it does not
    use, with why."""
    from planner._probe_store import get_report, list_reports, load_calibration, report_json

    if report_id is not None:
        if json_out:
            print_json(report_json(report_id))
        else:
            print_json(get_report(report_id).as_dict())
        return
    reports = list_reports()
    if not reports:
        if json_out:
            print_json([])
            return
        console().print("no probe reports ingested. Run `gpuplan probe run --out report.json` "
                        "on a rented instance (or `gpuplan launch probes`), then `gpuplan probe "
                        "ingest report.json`.", markup=False, highlight=False)
        return
    cal = load_calibration()
    if json_out:
        print_json([_with_calibration(r, cal) for r in reports])
        return
    from rich.table import Table

    out = console()
    t = Table()
    for col in ("id", "created", "accelerator", "GPUs/node", "nodes", "instance", "quick",
                "bf16 TF/s", "copy GB/s", "intra busbw", "world busbw", "used"):
        t.add_column(col)

    fmt = _num
    for r in reports:
        m = r.measurements
        used, _ = _for_report(cal, r.id)
        t.add_row(str(r.id), r.created_utc[:19], r.accelerator or r.device_type,
                  f"{r.gpus_per_node or 0}/{r.gpu_count or 0}", str(r.node_count or 1),
                  r.instance_type or "-", "yes" if r.quick else "no",
                  fmt(m.get("matmul_tflops", {}).get("bf16")),
                  fmt(m.get("device_copy_gb_per_s", {}).get("copy")),
                  fmt(m.get("busbw_intra_gb_per_s", {}).get("all_reduce")),
                  fmt(m.get("busbw_world_gb_per_s", {}).get("all_reduce")),
                  str(len(used)))
    out.print(t)
    out.print("Used by the planner:" if cal.used() else "Used by the planner: nothing; "
              "estimates use datasheet x published fractions.", markup=False, highlight=False)
    for n in cal.used():
        out.print(f"  {n.line()}", markup=False, highlight=False)
    if cal.rejected():
        out.print("Not used:", markup=False, highlight=False)
        for n in cal.rejected():
            out.print(f"  {n.line()}", markup=False, highlight=False)
