"""Budget reports of a team allocation: HTML, PDF, Markdown and CSV from the same content.

``render(allocation, fmt, actuals=None) -> bytes`` is the one entry point; the renderers live
in ``_text`` (Markdown, CSV), ``_html`` and ``_pdf``, what they share in ``_rows``, the charts
in ``_svg`` (HTML: inline SVG, plain Python) and ``_charts`` (PDF: matplotlib, the ``report``
extra, ``pip install -e '.[report]'``, imported only when a PDF is rendered).
Every report freezes the prices it used: each job's USD per instance-hour and the catalog's
date and source. Nothing here reads the clock, so the same allocation renders the same bytes.

Actuals (``--actuals actuals.csv``, read by ``_actuals.load_actuals``) map a job name to
``{"gpu_hours": …, "cost_usd": …}``; ``compare_actuals`` lines them up with the plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from catalog import UnknownNameError

from ..model import PlannerError
from ..team import TeamPlanError
from ._charts import _mpl
from ._html import html_report
from ._pdf import pdf_report
from ._text import csv_text, markdown

FORMATS = ("html", "pdf", "md", "csv")


def render(allocation, fmt: str, *, actuals: Mapping[str, Mapping] | None = None,
           progress: Callable[[int, int], None] | None = None) -> bytes:
    """The report of ``allocation`` in ``fmt`` (html, pdf, md or csv) as bytes.

    ``progress(done, total)``, when given, hears how far rendering is: a PDF once per page
    (a 500-job PDF takes half a minute), the other formats at 0 and 1 of 1."""
    tick = progress or (lambda done, total: None)
    fmt = {"markdown": "md"}.get(fmt.lower(), fmt.lower())
    comparison = compare_actuals(allocation, actuals) if actuals is not None else None
    if fmt == "pdf":
        return pdf_report(allocation, comparison, progress=tick)
    tick(0, 1)
    if fmt == "md":
        body = markdown(allocation, comparison)
    elif fmt == "csv":
        body = csv_text(allocation, comparison)
    elif fmt == "html":
        body = html_report(allocation, comparison)
    else:
        body = None
    if body is not None:
        tick(1, 1)
        return body.encode("utf-8")
    raise PlannerError(f"unknown report format {fmt!r}. To fix: use one of "
                       f"{', '.join(FORMATS)}")


def check_format(fmt: str) -> None:
    """Refuse now what ``render`` would refuse for ``fmt`` after the plan was solved: a PDF
    without matplotlib (the error says how to install it). The CLI asks before planning."""
    if {"markdown": "md"}.get(fmt.lower(), fmt.lower()) == "pdf":
        _mpl()


def compare_actuals(allocation, actuals: Mapping[str, Mapping]) -> dict:
    """Planned against spent, per job, per team and in total."""
    names = [j["job"] for j in allocation.jobs]
    for name in actuals:
        if name not in names:
            raise TeamPlanError(str(UnknownNameError("job", name, names, where="actuals",
                                                     hint="use a job name from the team plan")))

    def row(label: dict, plan_h: float, plan_usd: float, act_h, act_usd,
            plan_usd_reported: float | None = None) -> dict:
        base = plan_usd if plan_usd_reported is None else plan_usd_reported
        delta = None if act_usd is None else act_usd - base
        return {**label, "planned_gpu_hours": plan_h, "actual_gpu_hours": act_h,
                "planned_cost_usd": plan_usd, "actual_cost_usd": act_usd,
                "delta_cost_usd": delta,
                "delta_pct": None if delta is None or not base else delta / base}

    jobs, teams = [], {}
    for j in allocation.jobs:
        a = actuals.get(j["job"])
        act_h = None if a is None else float(a["gpu_hours"])
        act_usd = None if a is None else float(a["cost_usd"])
        jobs.append(row({"job": j["job"], "team": j["team"]}, j["gpu_hours"], j["cost_usd"],
                        act_h, act_usd))
    for key in [*dict.fromkeys(j["team"] for j in jobs), None]:
        mine = [r for r in jobs if key is None or r["team"] == key]
        done = [r for r in mine if r["actual_cost_usd"] is not None]
        teams[key] = row({"team": "total" if key is None else key},
                         sum(r["planned_gpu_hours"] for r in mine),
                         sum(r["planned_cost_usd"] for r in mine),
                         sum(r["actual_gpu_hours"] for r in done) if done else None,
                         sum(r["actual_cost_usd"] for r in done) if done else None,
                         sum(r["planned_cost_usd"] for r in done))
        # what Δ compares the spend with: the plan of the jobs that reported
        teams[key].update(
            jobs=len(mine), reported_jobs=len(done),
            planned_gpu_hours_reported=sum(r["planned_gpu_hours"] for r in done)
            if done else None,
            planned_cost_usd_reported=sum(r["planned_cost_usd"] for r in done) if done else None)
    total = teams.pop(None)
    return {"jobs": jobs, "teams": [teams[k] for k in sorted(teams)], "total": total,
            "reported_jobs": sum(r["actual_cost_usd"] is not None for r in jobs),
            "note": "jobs without actuals show —; Δ compares the reported jobs' spend with "
                    "their plan"}


# What a report of each format starts with (the PDF: its Info dictionary, written last).
_MD_HEAD = b"# GPU budget: "
_HTML_HEAD = b'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n<title>GPU budget: '
_PDF_CREATOR = b"/Creator (gpuplan)"
# of a PDF, read for its Info dictionary, which matplotlib writes before the cross-reference
# table (20 bytes an object): 5,241 bytes from the end in a 500-job report with actuals
REPORT_TAIL_BYTES = 1 << 20


def is_report(head: bytes, tail: bytes = b"") -> bool:
    """Whether a file that starts with ``head`` and ends with ``tail`` (its last
    ``REPORT_TAIL_BYTES``) is a report ``render`` wrote, in any format: `report --out`
    replaces only such a file (it replaced a user's notes.md silently, where every other
    --out of the CLI refuses a file gpuplan did not write)."""
    from ._text import CSV_COLUMNS

    head = head.removeprefix(b"\xef\xbb\xbf")
    return (head.startswith((_MD_HEAD, _HTML_HEAD))
            or head.startswith(",".join(CSV_COLUMNS).encode() + b"\n")
            or head.startswith(b"%PDF-") and _PDF_CREATOR in tail)
