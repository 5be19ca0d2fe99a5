"""`gpuplan report`: a team plan → allocation (the team MILP) → HTML/PDF/Markdown/CSV."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import os
import stat
import sys
from pathlib import Path
from typing import Annotated

import typer

from ..model import format_amount, format_chance, format_usd
from . import _workload_opts as W
from ._app import (
    console,
    print_catalog_banner,
    print_hanging,
    print_json,
    progress_on_stderr,
)
from ._tables import ESSENTIAL, OPTIONAL, Column, Wide, print_table

_SUFFIX = {".html": "html", ".htm": "html", ".pdf": "pdf", ".md": "md", ".csv": "csv"}
_FORMAT_NAMES = {"htm": "html", "markdown": "md"}  # other names --format takes
RENDERING = "rendering the report"  # the progress step after the solve
STDOUT = "-"  # --out - : the report on stdout, as `plan --emit-out -` and `launch … --out -`


def report_cmd(
    team_file: Annotated[str, typer.Argument(help="Team plan YAML: jobs, quotas, budgets, "
                                             "price overrides (docs/team.md).")],
    fmt: Annotated[str | None, typer.Option("--format", help="html, pdf, md or csv. Default: "
                   "from --out's suffix (.html/.htm, .pdf, .md, .csv), else md — except onto a "
                   "terminal with neither --out nor --format, which gets the summary (totals "
                   "and one line per job) instead. A suffix that contradicts --format is an "
                   "error, and so is any other suffix without --format.")] = None,
    out: Annotated[str | None, typer.Option("--out", help="Write the report to this file "
                   "(atomically); an existing file only if it is a report of gpuplan's. No "
                   "--out, or '-': to stdout (a PDF only with '-', into a pipe or a redirect, "
                   "never onto a terminal).")] = None,
    actuals: Annotated[str | None, typer.Option("--actuals", help="CSV of job, gpu_hours, "
                       "cost_usd: compare the plan with what was spent.")] = None,
    overrides: Annotated[str | None, typer.Option("--overrides", help="Price overrides YAML "
                         "applied before the team plan's own overrides.")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", help="Processes that plan different jobs in parallel, 1 to 64 (default: "
        "the CPU count, at most 4).")] = None,
    assume: W.Assume = None,
    json_out: W.Json = False,
    no_calibration: W.NoCalibration = False,
    wide: Wide = False,
) -> None:
    """Choose one plan per job under shared quotas and budgets (a MILP), and write the budget
    report: totals per team and month, a timeline, a burn chart and frozen prices.

    On a terminal, with neither --out nor --format, it prints the summary (totals and one
    line per job); --format md gives the full Markdown report there, and a pipe or a
    redirect gets that report as it is. --json prints the allocation (JSON) on stdout;
    with --out FILE the report is also written to FILE, in the format of --format or FILE's
    suffix. --format without --out, or --out -, cannot go with --json (both would be
    stdout).

    Exit status: 0 every job is placed; 2 no allocation fits the quotas, budgets and
    deadlines (with --json, `{"infeasible": true, "error", "relaxations"}` is still printed)
    or the input is wrong (one error line, nothing on stdout)."""
    from catalog import check_output_path, write_bytes_atomic
    from planner.reports import check_format, load_actuals, render
    from planner.team import (
        MAX_WORKERS,
        AllocationInfeasibleError,
        TeamPlanError,
        allocate,
        check_dates,
        load_team_plan,
        today_utc,
    )

    from ._app import load_priced_catalog, overrides_input
    from ._model_cmds import active_calibration

    # Every option is checked before the catalog is loaded and the MILP runs, so a typo in
    # --out fails in a second, not after minutes of planning.
    for option, value in (("team file", team_file), ("--out", out), ("--actuals", actuals),
                          ("--overrides", overrides), ("--format", fmt)):
        if value is not None and not value.strip():
            raise TeamPlanError(f"{option} is empty. To fix: give a value or leave the option "
                                "out")
    to_stdout = out is None or out == STDOUT
    # Where first (a directory, a device, a missing folder), then what (the format rules).
    # the text as given: Path() drops a trailing '/' ("new/" wrote a file "new", exit 0)
    out_path = None if to_stdout else check_output_path(os.path.expanduser(out), what="report")
    _not_an_input(out_path, {"the team file": team_file, "--actuals": actuals,
                             **overrides_input(overrides)})
    # onto a terminal with neither --out nor --format: the summary, not 145–270 columns of
    # Markdown (a pipe or a redirect still gets the Markdown report, for scripts)
    summary_only = out is None and fmt is None and not json_out and _stdout_is_terminal()
    fmt = report_format(fmt, out, json_out=json_out)
    # A PDF goes to stdout only when asked for by name (--out -) and not onto a terminal,
    # where its bytes would be garbage.
    if fmt == "pdf" and not json_out and (out is None or to_stdout and sys.stdout.isatty()):
        raise TeamPlanError("a PDF report needs --out FILE, or --out - into a pipe or a "
                            "redirect (not a terminal). To fix: e.g. --out budget.pdf")
    if workers is not None and not 1 <= workers <= MAX_WORKERS:
        raise TeamPlanError(f"--workers must be from 1 to {MAX_WORKERS}, got {workers}. To fix: "
                            "e.g. --workers 2")
    if fmt == "pdf" and not (json_out and out_path is None):
        # a PDF needs matplotlib: said now, not after the whole plan was solved (and never when
        # it was infeasible)
        check_format("pdf")
    # a bad --assume is refused alone, before the files are read (their warnings came first)
    assumptions = W.assumptions_from(assume)
    cat = load_priced_catalog(overrides)
    _not_gpuplans_own(out_path, cat)
    team = load_team_plan(Path(team_file), catalog=cat)
    # the config.json files its jobs read are inputs too (known once the plan is read)
    _not_an_input(out_path, {f"the config of job {j.name!r}": j.spec.config_name
                             for j in team.jobs if j.spec.config_name})
    _not_another_file(out_path)  # after the inputs' checks, which say more
    spent = load_actuals(Path(actuals), team) if actuals else None
    # a report is a plan made today: a window that has passed is refused, or said (actuals)
    warnings = check_dates(team, today=today_utc(), past_ok=spent is not None,
                           past_fix="compare the finished plan with what was spent "
                           "(--actuals FILE)", spent=spent or {}, spent_source=actuals or "")
    if warnings:
        err = console(stderr=True, fit=True)
        for warning in warnings:
            print_hanging(err, warning, first="warning: ", rest="  ", first_style="yellow")
    try:
        with progress_on_stderr() as update:  # a large team plan takes a minute or more
            allocation = allocate(team, catalog=cat, assumptions=assumptions,
                                  calibration=active_calibration(cat, no_calibration),
                                  workers=workers or min(4, os.cpu_count() or 1),
                                  progress=update)
    except AllocationInfeasibleError as exc:
        if json_out:  # scripts get every relaxation (the error line cuts a long list short)
            print_json({"infeasible": True, "error": str(exc),
                        "relaxations": list(exc.relaxations)})
        raise
    if json_out and out_path is None:
        print_json(_report_json(allocation, spent, warnings))
        _print_job_warnings(allocation)  # after the answer, as `plan` prints its warnings
        return
    allocation = allocation.with_dates(warnings)  # the dates' warnings in the report too
    if summary_only:
        _print_summary(allocation, cat, wide=wide)
        return
    with progress_on_stderr() as update:  # a 500-job PDF renders for half a minute
        body = render(allocation, fmt, actuals=spent,
                      progress=lambda done, total: update(RENDERING, done, total))
    if out_path is None:  # stdout: the file's own bytes (HTML says it is UTF-8, whatever the
        # locale's encoding; a PDF was checked not to go to a terminal)
        sys.stdout.flush()
        buffer = getattr(sys.stdout, "buffer", None)
        if buffer is None:  # a text-only stream (a test's capture)
            sys.stdout.write(body.decode("utf-8", errors="replace"))
        else:
            buffer.write(body)
            buffer.flush()
        _print_job_warnings(allocation)
        return
    write_bytes_atomic(out_path, body, what="report")
    if json_out:  # after the file: a write that failed printed the answer, then exit 2
        print_json(_report_json(allocation, spent, warnings))
    t = allocation.totals
    # printed as text (print_hanging): the path and the overrides path are user text
    err = console(stderr=True, fit=True)
    print_hanging(err, f"wrote {out}: {_expected(t)}", first="", rest="  ")
    print_catalog_banner(err, cat)  # its own paragraph, wrapped under itself
    _print_job_warnings(allocation)
    if not json_out:  # the report is in the file: on the terminal, one line per job
        print_jobs(allocation.as_dict()["jobs"], wide=wide)


def _expected(totals) -> str:
    """"5 jobs, $64,461 expected": the allocation's totals, as the lines after it say them."""
    n = totals["jobs"]
    return f"{n:,} job{'' if n == 1 else 's'}, {format_usd(totals['cost_usd'])} expected"


def _stdout_is_terminal() -> bool:
    from ._app import _is_terminal

    return _is_terminal(sys.stdout)


SUMMARY_HINT = ("the full report (per team and month, quotas, timeline, frozen prices): "
                "--format md (Markdown on stdout), or --out FILE (.html, .pdf, .md, .csv)")


def _print_summary(allocation, cat, *, wide: bool) -> None:
    """What --out FILE prints on the terminal, with the totals in place of "wrote FILE" and
    a hint naming the full report."""
    t = allocation.totals
    err = console(stderr=True, fit=True)
    print_hanging(console(fit=True), f"{allocation.name}: {_expected(t)}, "
                  f"{format_amount(t['gpu_hours'])} GPU-hours, {t['start']} → {t['end']} UTC",
                  first="", rest="  ")
    print_catalog_banner(err, cat)
    _print_job_warnings(allocation)
    print_jobs(allocation.as_dict()["jobs"], wide=wide)
    print_hanging(err, SUMMARY_HINT, first="hint: ", rest="  ")


def _print_job_warnings(allocation) -> None:
    """What `plan` warns of for each job's chosen plan (a model resized by its sizes, a term
    paid beyond the run, a flagged price …), once per distinct warning, on stderr as the dates'
    warnings are; --json carries them in each job's ``warnings``."""
    lines = allocation.job_warning_lines()  # the dates' were said before the solve
    if lines:
        err = console(stderr=True, fit=True)
        for line in lines:
            print_hanging(err, f"{allocation.source}: {line}", first="warning: ", rest="  ",
                          first_style="yellow")


def _report_json(allocation, spent, warnings: list[str]) -> dict:
    from planner.reports import compare_actuals

    data = allocation.as_dict()
    data["warnings"] = warnings  # the plan's dates against today (planner.team.check_dates)
    if spent is not None:
        data["actuals"] = compare_actuals(allocation, spent)
    return data


def report_format(fmt: str | None, out: str | None, *, json_out: bool = False) -> str:
    """The report's format from --format and --out (the rules in ``report_cmd``'s help): an
    explicit --format must agree with a known suffix; without it a known suffix decides, a
    file without a suffix and stdout get md, and any other suffix is an error."""
    from planner.reports import FORMATS
    from planner.team import TeamPlanError

    known = ", ".join(_SUFFIX)
    if fmt is not None:
        # the suffixes' names are formats too: --out x.htm was HTML, --format htm refused
        fmt = _FORMAT_NAMES.get(fmt.strip().lower(), fmt.strip().lower())
        if fmt not in FORMATS:
            from catalog import close_matches

            close = close_matches(fmt, FORMATS)
            raise TeamPlanError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}."
                                + (f" Did you mean {close[0]!r}?" if close else "")
                                + (f" To fix: --format {close[0]}" if close else
                                   " To fix: e.g. --format html"))
    if json_out and (out is None or out == STDOUT):
        if out == STDOUT:
            raise TeamPlanError("--json and --out - both write to stdout. To fix: drop one, or "
                                "give --out a file name for the report")
        if fmt is not None:
            raise TeamPlanError(f"--format {fmt} does nothing with --json alone (the JSON goes "
                                "to stdout). To fix: drop --format, or add --out FILE to write "
                                "the report too")
        return "md"
    if out is None or out == STDOUT:
        return fmt or "md"
    # ".html" alone is a hidden file with no suffix to pathlib; its writer meant HTML (it got
    # Markdown, silently). Another hidden name (.budget) still has no suffix: Markdown.
    name = Path(out).name.lower()
    suffix = name if name in _SUFFIX else Path(out).suffix.lower()
    implied = _SUFFIX.get(suffix)
    if fmt is None:
        if implied is None and suffix:  # report.txt: Markdown? CSV? Say, don't guess.
            raise TeamPlanError(f"--out {out!r} has suffix {suffix!r}, so the report's format "
                                f"is unknown. To fix: name the file with one of {known}, or "
                                "give --format")
        return implied or "md"  # no suffix at all (budget, -): Markdown, the default
    if implied is not None and implied != fmt:
        raise TeamPlanError(f"--out {out!r} has suffix {suffix} (format {implied}) but --format "
                            f"is {fmt}. To fix: drop --format, or name the file with "
                            f"{_suffix_of(fmt)}")
    return fmt


def _suffix_of(fmt: str) -> str:
    return next(s for s, f in _SUFFIX.items() if f == fmt)


# nodes and cost are never left out: at 60 columns a job's cluster rate without its node
# count read as one instance type at two prices, and a budget report had no cost
JOB_COLUMNS = (
    Column("job", ESSENTIAL), Column("team", OPTIONAL), Column("nodes", ESSENTIAL, align="right"),
    Column("instance", ESSENTIAL), Column("cloud", OPTIONAL), Column("region", ESSENTIAL),
    Column("pricing", ESSENTIAL), Column("cluster $/h", align="right"),
    Column("cost $", ESSENTIAL, align="right"), Column("start"), Column("end"),
    Column("P(deadline)", OPTIONAL, align="right"),
)


def print_jobs(jobs: list[dict], *, wide: bool = False) -> None:
    """The allocation, one row per job: where it runs, at what price, when."""
    print_table(JOB_COLUMNS, [
        (j["job"], j["team"], j["nodes"], j["instance_type"], j["cloud"], j["region"],
         j["pricing"], f"{j['usd_per_hour_cluster']:,.2f}",
         format_usd(j["cost_usd"]).lstrip("$"),
         j["start"][:10], j["end"][:10], format_chance(j["deadline_probability"])) for j in jobs],
        title=f"{len(jobs):,} job{'' if len(jobs) == 1 else 's'}", wide=wide)


def _not_an_input(out_path, inputs: dict) -> None:
    """Refuse an --out that is one of the report's own inputs: the report replaced the team
    plan (or the actuals CSV) it had just read, exit 0."""
    from catalog import input_clash
    from planner.team import TeamPlanError

    if (option := input_clash(out_path, inputs)) is not None:
        raise TeamPlanError(f"--out {out_path} is {option}: the report would replace it. "
                            "To fix: choose another --out")


def _not_gpuplans_own(out_path, cat) -> None:
    """Refuse an --out inside gpuplan's own store (``own_store_clash``)."""
    from planner.team import TeamPlanError

    from ._files import own_store_clash

    if out_path is not None and (what := own_store_clash(out_path, catalog_path=cat.path)):
        raise TeamPlanError(f"--out {out_path} {what}: the report would replace or add to "
                            "gpuplan's own files. To fix: choose another --out")


def _not_another_file(out_path) -> None:
    """Refuse to replace an existing file that is not a report gpuplan wrote
    (``planner.reports.is_report``): `--out notes.md` replaced the user's notes, exit 0. A
    report of any format is replaced silently, so a re-run needs no option, as `launch`
    replaces its own unedited task files; an empty file (a ``mktemp``'s) is replaced too."""
    from planner.reports import REPORT_TAIL_BYTES, is_report
    from planner.team import TeamPlanError

    try:
        st = os.stat(out_path) if out_path is not None else None
        if st is None or not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return  # nothing to replace (check_output_path refused what cannot be written)
        with open(out_path, "rb") as fh:
            head = fh.read(512)
            fh.seek(max(0, st.st_size - REPORT_TAIL_BYTES))
            tail = fh.read()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise TeamPlanError(f"--out {out_path} exists and cannot be read to check that gpuplan "
                            f"wrote it ({exc.strerror or exc}). To fix: choose another --out, "
                            "or remove it") from None
    if not is_report(head, tail):
        raise TeamPlanError(f"--out {out_path} exists and is not a report gpuplan wrote: "
                            "replacing it would lose it. To fix: choose another --out, or "
                            "remove it")
