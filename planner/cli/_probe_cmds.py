"""`gpuplan probe run|ingest|show`: measure, store, and list what calibrates the model (and
what does not, with why)."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

from typing import Annotated

import typer

from ..model import format_figure, reasons_by_figure
from ._app import CliExit, console, print_hanging, print_json
from ._flags import say_fields
from ._tables import ESSENTIAL, OPTIONAL, Column, Wide, one_line, print_table

MAX_REPORT_ID = 1_000_000_000


def report_id_of(given: int | str) -> int:
    """A report id as `probe show` (an int) or `probe remove` (the text typed) got it, within
    1 … MAX_REPORT_ID; else the one error both commands give."""
    if isinstance(given, int):
        value, shown = given, str(given)
    else:
        value = int(given) if given.isascii() and given.isdigit() and len(given) < 12 else 0
        shown = repr(given)
    if not 1 <= value <= MAX_REPORT_ID:
        from catalog import GpuplanError

        raise GpuplanError(f"a report id is a whole number from 1 to {MAX_REPORT_ID:,}, got "
                           f"{shown}. To fix: `gpuplan probe show` lists the ids")
    return value


def run_cmd(ctx: typer.Context) -> None:
    """Run the probe suite on this machine (needs torch: pip install 'torch>=2.3').

    Options are those of `python -m probes --help`: --quick, --out FILE, --device,
    --timeout-s (1 to 86,400 s), --sizes, --shapes, --dtypes, --probes. All GPUs of a node:
    `torchrun --standalone --nproc-per-node 8 -m probes --out report.json`; several nodes:
    `gpuplan launch probes` writes the task file.
    """
    from probes.cli import main as probes_main

    check_run_args(list(ctx.args))
    code = probes_main(list(ctx.args))
    if code:
        raise CliExit(code)


def parse_probe_args(parser, argv: list[str], *, command: str):
    """``argv`` parsed by one of the probes' own parsers, which check every value as they
    parse (bounds, names, a report path that cannot be created); their errors become this
    CLI's one-line error instead of argparse's exit. The fix points to this command's help
    (`gpuplan probe run --help`), which lists the options and bounds it passes on: "see
    `python -m probes --help`" named another program than the one typed."""
    from catalog import GpuplanError

    fix = f"To fix: see `gpuplan probe {command} --help`"
    theirs = str(getattr(parser, "fix", "") or "").rstrip(".")  # the probes' own, in their
    # messages ("unrecognized arguments: --bogus. To fix: see `python -m probes --help`")

    def error(message: str):  # argparse's own would print its usage and exit
        message = message.rstrip(".")
        message = message.replace(theirs, fix) if theirs else message
        raise GpuplanError(f"probe {command}: {message}"
                           + ("" if "To fix" in message else f". {fix}"))

    parser.error = error
    # argparse keeps the last of a repeated option (--steps 5 --steps 7 ran 7); every other
    # gpuplan option refuses a repeat
    given: dict[str, int] = {}
    for token in argv:
        name = token.split("=", 1)[0]
        action = parser._option_string_actions.get(name) if name.startswith("--") else None
        if action is not None and action.nargs != 0:
            key = action.dest
            given[key] = given.get(key, 0) + 1
            if given[key] == 2:
                error(f"{name} is given twice. To fix: give it once")
    try:
        return parser.parse_args(argv)
    except SystemExit as exc:  # -h: argparse printed its help
        raise typer.Exit(exc.code or 0) from None


def check_run_args(argv: list[str]) -> None:
    """Every `probe run` option checked before anything is measured, each error one line
    with its bound (``probes.cli.check_args``: a NaN timeout, a 10^15-byte buffer, a report
    path that cannot be created)."""
    from catalog import GpuplanError, check_output_path
    from probes.cli import build_parser

    args = parse_probe_args(build_parser(), argv, command="run")
    # gpuplan's rule for every --out (the probes alone would create missing folders): the
    # folder must exist, as for `gpuplan report --out`; said as the parser's errors are
    # ("probe run: …"), which a missing folder's had not been
    try:
        check_output_path(args.out, what="probe report (--out)")
    except GpuplanError as exc:
        raise GpuplanError(f"probe run: {str(exc).rstrip('.')}") from None


def _for_report(cal, report_id: int) -> tuple[list, list]:
    return ([n for n in cal.used() if report_id in n.report_ids],
            [n for n in cal.rejected() if report_id in n.report_ids])


def _with_calibration(stored, cal) -> dict:
    """A stored report as `probe show --json` prints it, with what it calibrates and what
    not (`probe ingest --json` adds what the ingest did: ``_ingested``)."""
    used, refused = _for_report(cal, stored.id)
    return {**stored.as_dict(), "used": [n.line() for n in used],
            "not_used": [n.line() for n in refused]}


def _ingested(stored, path: str, cal) -> dict:
    """A report as `probe ingest --json` prints it: ``ingest_status`` a fixed value and
    ``ingest_note`` the store's words (null for a new report: "already stored as report 1
    (same measurements); but this file says …" had been the status itself); ``source_path``
    the file this ingest read, ``stored_source_path`` the one it was stored from (another
    file for a copy of a stored run, whose path had stood in for the given one); with what it
    calibrates, or without ``cal`` (the database failed after it was stored) only the
    record."""
    from pathlib import Path

    data = _with_calibration(stored, cal) if cal is not None else stored.as_dict()
    note = None if stored.ingest_outcome == "stored" else say_fields(stored.ingest_status)
    return {**data, "source_path": str(Path(path).expanduser().resolve()),
            "stored_source_path": stored.source_path,
            "ingest_status": stored.ingest_outcome, "ingest_note": note}


def refusal_line(refused: list, total: int) -> str:
    """The one error for the files ``refused_reports`` refused among ``total`` given: each
    named as typed, with its reason, and (given several) that none of them was stored."""
    if total == 1:
        r = refused[0]
        return f"probe report {r.path}: {r.reason}. To fix: {r.fix}"
    by_fix: dict[str, list[str]] = {}
    for r in refused:
        by_fix.setdefault(r.fix, []).append(r.path)
    if len(by_fix) == 1:
        fix = refused[0].fix + (f" ({', '.join(by_fix[refused[0].fix])})"
                                if len(refused) > 1 else "")
    else:
        fix = "; ".join(f"for {', '.join(paths)}: {f}" for f, paths in by_fix.items())
    n = len(refused)
    return (f"{n} of {total} probe reports {'is' if n == 1 else 'are'} refused, so none was "
            f"stored: {'; '.join(f'{r.path}: {r.reason}' for r in refused)}. To fix: {fix}, "
            f"then ingest the {total} files again")


def _machine(s) -> str:
    """What a stored report ran on: "NVIDIA H100 80GB HBM3 x8", or for a run without a GPU
    "cpu (no GPU), 2 processes" (a CPU run counts no GPUs: "cpu x0" read as a broken report),
    or "unknown machine, 2 processes" for a report without an environment section (its
    device is unknown: "unknown (no GPU)" claimed a fact the report does not hold)."""
    if s.device_type == "cuda":
        return f"{s.gpu_model or 'GPU'} x{s.gpu_count or 0}"
    n = s.world_size or 1
    return f"{_device_words(s)}, {n} process{'es' if n > 1 else ''}"


def _device_words(s) -> str:
    """A stored report's device when it is not a GPU: "cpu (no GPU)", or "unknown machine"
    where the report has no environment section to say."""
    return "unknown machine" if s.device_type == "unknown" else f"{s.device_type} (no GPU)"


def _print_report(r, cal) -> None:
    """One stored report for people: where it was measured, every figure, and what the
    planner does with it (the JSON, for scripts, is --json)."""
    out = console(fit=True)
    where = " ".join(x for x in (r.cloud, r.region, r.instance_type) if x) or "-"
    gpus = (f"{r.node_count or 1} node(s) × {r.gpus_per_node or 0} of {r.gpu_count or 0} GPUs"
            if r.device_type == "cuda" else _device_words(r))
    for label, value in (
            ("report", f"{r.id} ({'quick' if r.quick else 'full'} run, schema "
                       f"{r.schema_version})"),
            ("measured", f"{r.created_utc[:19]} UTC; ingested {r.ingested_utc[:19]} UTC"),
            ("accelerator", f"{r.accelerator or '-'} (the GPU said: {r.gpu_model or '-'})"),
            ("on", f"{where}; {gpus}"), ("file", r.source_path or "-")):
        # wrapped under the value ("file ⏎/tmp/…" and "ingested ⏎2026-…" ran on at column 0)
        print_hanging(out, one_line(value), first=f"{label:<12} ", rest=" " * 13)
    out.print("Measured:", markup=False)
    for kind, figures in r.measurements.items():
        shown = ", ".join(f"{k} {format_figure(v) if isinstance(v, int | float) else v}"
                          for k, v in figures.items())
        print_hanging(out, one_line(f"{kind}: {shown}"))  # wrapped under itself
    _print_notes(out, *_for_report(cal, r.id), nothing=" nothing from this report")


def _print_notes(out, used, rejected, *, nothing: str) -> None:
    """What the planner uses, one line each ("Used by the planner:" + ``nothing`` when it
    uses none), then what it does not use, with why."""
    print_hanging(out, "Used by the planner:" + ("" if used else nothing), first="", rest="  ")
    for n in used:  # wrapped under itself: a continuation at column 0 read as another item
        print_hanging(out, one_line(say_fields(n.line())))
    if rejected:
        out.print("Not used:", markup=False)
        for n in rejected:
            print_hanging(out, one_line(say_fields(n.line())))


def _gpus_per_node(s) -> str:
    """The show table's "GPUs/node": processes per node / GPUs the node has; "-" for a run
    without a GPU (not "1/0")."""
    if s.device_type != "cuda":
        return "-"
    return f"{s.gpus_per_node or 0}/{s.gpu_count or 0}"


def ingest_cmd(
    reports: Annotated[list[str], typer.Argument(help="Probe report JSON files.")],
    accelerator: Annotated[str | None, typer.Option(
        "--accelerator", help="Catalog accelerator the report measured, when the GPU name "
        "alone does not say (e.g. H100-SXM5-80GB). Re-ingesting a stored report with another "
        "accelerator relabels it, where its own GPU name and instance allow.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print each stored report, with what "
                        "it calibrates and what it does not, as JSON.")] = False,
) -> None:
    """Store probe reports; `estimate` and `plan` then use what the calibration rules accept
    (full non-quick runs, figures within the datasheet's bounds, RDMA for the fabric). Every
    file is checked before any is stored: if one is refused, none is."""
    from catalog import load_catalog

    from ._values import not_empty

    not_empty("--accelerator", accelerator)
    if blank := [i for i, path in enumerate(reports, 1) if not path.strip()]:
        # it read "probe report : probe report: the path is empty"
        raise _refuse(f"the path is empty (report {blank[0]} of {len(reports)} given). To fix: "
                      "give the path of each probe report file, e.g. report.json", [], [],
                      json_out)
    cat = load_catalog()
    try:
        _ingest_all(reports, cat, accelerator, json_out)
    except KeyboardInterrupt:
        _say_what_was_stored(reports)
        raise


def _say_what_was_stored(reports: list[str]) -> None:
    """After a Ctrl-C: which of ``reports`` the database holds (read back, not assumed: an
    interrupt just after a commit said "interrupted" of a report it had kept)."""
    from planner.store import stored_ids

    try:
        found = stored_ids(reports)
    except Exception:  # noqa: BLE001 - the interrupt is the news; a failed check adds none
        return
    stored = ", ".join(f"{p} (report {found[p]})" for p in reports if p in found)
    missing = ", ".join(p for p in reports if p not in found)
    console(stderr=True, fit=True).print(
        "interrupted: " + (f"stored: {stored}" if stored else "no report was stored")
        + (f"; not stored: {missing}" if stored and missing else ""), markup=False)


def _refuse(line: str, errors: list, stored: list, json_out: bool):
    """The ingest's error; with --json, first its JSON object on stdout (``stored``: the
    reports this run stored before a store failure, [] when the checks refused a file), which
    had been nothing while stderr said "report 1 was stored"."""
    from catalog import GpuplanError

    if json_out:
        print_json({"error": line, "errors": [e.as_dict() for e in errors], "stored": stored})
    return GpuplanError(line)


def _ingest_all(reports: list[str], cat, accelerator, json_out: bool) -> None:
    from catalog import GpuplanError
    from planner.store import db_path, ingest, load_calibration

    from ._files import refused_from, refused_reports
    from ._flags import error_line

    # every file read and put through the store's checks first: one refused file stores none
    # (a missing schema_version had left the files before it stored, a bad JSON had not)
    if refused := refused_reports(reports, cat, accelerator):
        raise _refuse(refusal_line(refused, len(reports)), refused, [], json_out) from None
    stored: list = []
    for path in reports:  # one transaction per report: a store failure (a full disk, a lock)
        try:               # after some were stored says which
            stored.append(ingest(path, cat, accelerator=accelerator))
        except GpuplanError as exc:
            if not stored:
                raise _refuse(error_line(exc), [refused_from(path, exc)], [],
                              json_out) from None
            done = ", ".join(f"{p} (report {s.id})" for p, s in zip(reports, stored,
                                                                    strict=False))
            what, _, fix = error_line(exc).partition(" To fix: ")
            what = what.replace("nothing was changed", "this report was not stored")
            line = (f"{what.rstrip('. ')}. The reports before {path} were stored: {done}. To "
                    f"fix: {fix.rstrip('. ') + ', then ' if fix else ''}ingest {path} and the "
                    "reports after it again")
            try:
                cal = load_calibration(cat) if json_out else None
            except GpuplanError:  # the database that failed: the records alone
                cal = None
            raise _refuse(line, [refused_from(path, exc)],
                          [_ingested(s, p, cal) for p, s in zip(reports, stored, strict=False)],
                          json_out) from None
    cal = load_calibration(cat)
    if json_out:
        print_json([_ingested(s, p, cal) for p, s in zip(reports, stored, strict=True)])
        return
    out = console(fit=True)
    for s in stored:
        used, refused = _for_report(cal, s.id)
        if used:
            use = f"calibrates {s.accelerator} ({len(used)} figure{'' if len(used) == 1 else 's'})"
        else:  # "stored" only when this run stored it (else the status line says where)
            use = "stored; calibrates nothing" if s.ingest_outcome == "stored" else \
                "calibrates nothing"
        # a report's own text (GPU name, instance, error messages) may carry terminal control
        # sequences: shown as visible escapes, here and in the notes (print_hanging escapes)
        out.print(one_line(f"report {s.id}: {_machine(s)}"
                           f"{' on ' + s.instance_type if s.instance_type else ''}; {use}"),
                  markup=False)
        # the lines under it wrap under their text, not at column 0 (read as a new item)
        if s.ingest_outcome != "stored":
            print_hanging(out, say_fields(s.ingest_status))
        for n in used:  # each figure it counted (the matmul line alone under-said "4 figures")
            print_hanging(out, f"used: {say_fields(n.line())}")
        matmul = s.measurements.get("matmul_tflops", {})
        if not used and matmul:  # what it measured, for reference (a CPU run, a quick run)
            print_hanging(out, "measured matmul TFLOP/s: " + ", ".join(
                f"{k} {format_figure(v)}" for k, v in matmul.items()))
        for line in reasons_by_figure(refused):
            print_hanging(out, f"not used: {say_fields(line)}")
    out.print(f"database: {db_path()}", markup=False)


SHOW_COLUMNS = (
    Column("id", ESSENTIAL, align="right"), Column("created", OPTIONAL),
    Column("accelerator", ESSENTIAL), Column("GPUs/node", align="right"),
    Column("nodes", align="right"), Column("instance", ESSENTIAL), Column("quick"),
    Column("bf16 TF/s", align="right"), Column("copy GB/s", align="right"),
    Column("intra busbw", OPTIONAL, align="right"),
    Column("world busbw", OPTIONAL, align="right"), Column("used", align="right"),
)


def show_cmd(
    report_id: Annotated[int | None, typer.Argument(help="Show one report in full (its id "
                                                    "from the list): where it was measured, "
                                                    "every figure, and what the planner uses."
                                                    )] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON: the list with what each "
                        "report calibrates, or one report's file as ingested.")] = False,
    wide: Wide = False,
) -> None:
    """List ingested probe reports, the measurements the planner uses, and those it does not
    use, with why."""
    from catalog import check_directory_place
    from planner.store import db_path, get_report, list_reports, load_calibration, report_json

    # a mistaken GPUPLAN_HOME (a file, /dev/null) read as "no probe reports ingested", while
    # `probe ingest` said what was in the way
    check_directory_place(db_path().parent, what="probe database")
    if report_id is not None:
        report_id_of(report_id)
        stored = report_json(report_id)  # a damaged record is refused here, in both forms
        if json_out:
            print_json(stored)
        else:
            _print_report(get_report(report_id), load_calibration())
        return
    reports = list_reports()
    if not reports:
        if json_out:
            print_json([])
            return
        # wrapped under itself: rich's wrap left "(or " with a trailing space, the rest at 0
        print_hanging(console(fit=True), "no probe reports ingested. Run `gpuplan probe run "
                      "--out report.json` on a rented instance (or `gpuplan launch probes`), "
                      "then `gpuplan probe ingest report.json`.", first="", rest="  ")
        return
    cal = load_calibration()
    if json_out:
        print_json([_with_calibration(r, cal) for r in reports])
        return

    def row(r) -> tuple:
        m = r.measurements
        used, _ = _for_report(cal, r.id)
        # a report's own text on one line: a newline in its instance type drew "used:" lines
        return (r.id, one_line(r.created_utc[:19]), one_line(r.accelerator or r.device_type),
                _gpus_per_node(r), r.node_count or 1,
                one_line(r.instance_type or "-"), "yes" if r.quick else "no",
                format_figure(m.get("matmul_tflops", {}).get("bf16")),
                format_figure(m.get("device_copy_gb_per_s", {}).get("copy")),
                format_figure(m.get("busbw_intra_gb_per_s", {}).get("all_reduce")),
                format_figure(m.get("busbw_world_gb_per_s", {}).get("all_reduce")), len(used))

    print_table(SHOW_COLUMNS, [row(r) for r in reports], wide=wide)
    _print_notes(console(fit=True), cal.used(), cal.rejected(),
                 nothing=" nothing; estimates use datasheet x published fractions.")


def remove_cmd(
    report_ids: Annotated[list[str], typer.Argument(
        help="The ids of the reports to remove, as `gpuplan probe show` lists them.",
        show_default=False)],
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON: the removed reports "
                                                          "and how many remain.")] = False,
) -> None:
    """Remove ingested probe reports: estimates and plans stop using their measurements
    (a run on a throttled node, a report of the wrong machine). Every id must be stored, or
    nothing is removed; a removed report's id is not given to another."""
    from planner.store import remove_reports, report_count

    removed = remove_reports([report_id_of(text) for text in report_ids])
    left = report_count()  # parses none: a damaged report left behind is still counted
    if json_out:
        print_json({"removed": [r.as_dict() for r in removed], "reports_left": left})
        return
    out = console(fit=True)
    for r in removed:
        # the stored path and time escaped and zoned as `probe show` and ingest say them: a
        # newline in a file name split the line, and "measured 2026-01-31T12:00:00" had
        # dropped the Z that says UTC
        where = f", from {r.source_path}" if r.source_path else ""
        when = f"{r.created_utc[:19]} UTC" if r.created_utc else "?"
        what = r.accelerator or r.device_type or "unknown"
        print_hanging(out, one_line(f"removed probe report {r.id} ({what}, measured {when}"
                                    f"{where})"), first="", rest="  ")
    print_hanging(out, f"{left} report{'s' if left != 1 else ''} left: estimates and plans use "
                  "what they calibrate (`gpuplan probe show`)." if left else "no reports left: "
                  "estimates and plans use datasheet figures × published fractions.", first="",
                  rest="  ")
