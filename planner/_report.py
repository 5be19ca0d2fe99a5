"""Budget reports of a team allocation: HTML, PDF, Markdown and CSV from the same content.

``render(allocation, fmt, actuals=None) -> bytes`` is the one entry point; the renderers live
in ``_report_text`` (Markdown, CSV), ``_report_html`` and ``_report_pdf``, the charts in
``_report_charts`` (matplotlib, the ``report`` extra: ``pip install 'gpuplan[report]'``).
Every report freezes the prices it used: each job's USD per instance-hour and the catalog's
date and source. Nothing here reads the clock, so the same allocation renders the same bytes.

Actuals (``--actuals actuals.csv``, read by ``planner._report_actuals.load_actuals``) map a
job name to ``{"gpu_hours": …, "cost_usd": …}``; ``compare_actuals`` lines them up with the
plan.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ._errors import PlannerError

FORMATS = ("html", "pdf", "md", "csv")


def render(allocation, fmt: str, *, actuals: Mapping[str, Mapping] | None = None) -> bytes:
    """The report of ``allocation`` in ``fmt`` (html, pdf, md or csv) as bytes."""
    fmt = {"markdown": "md"}.get(fmt.lower(), fmt.lower())
    comparison = compare_actuals(allocation, actuals) if actuals is not None else None
    if fmt == "md":
        from ._report_text import markdown

        return markdown(allocation, comparison).encode("utf-8")
    if fmt == "csv":
        from ._report_text import csv_text

        return csv_text(allocation, comparison).encode("utf-8")
    if fmt == "html":
        from ._report_html import html_report

        return html_report(allocation, comparison).encode("utf-8")
    if fmt == "pdf":
        from ._report_pdf import pdf_report

        return pdf_report(allocation, comparison)
    raise PlannerError(f"unknown report format {fmt!r}. To fix: use one of "
                       f"{', '.join(FORMATS)}")


def compare_actuals(allocation, actuals: Mapping[str, Mapping]) -> dict:
    """Planned against spent, per job, per team and in total."""
    from ._team import TeamPlanError, _unknown_job

    names = [j["job"] for j in allocation.jobs]
    for name in actuals:
        if name not in names:
            raise TeamPlanError(_unknown_job(name, names, "actuals"))

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
    total = teams.pop(None)
    return {"jobs": jobs, "teams": [teams[k] for k in sorted(teams)], "total": total,
            "reported_jobs": sum(r["actual_cost_usd"] is not None for r in jobs),
            "note": "jobs without actuals show —; Δ compares the reported jobs' spend with "
                    "their plan"}


# ---- formatting shared by the renderers ------------------------------------------------------

def usd(x: float | None) -> str:
    return "—" if x is None else (f"-${-x:,.0f}" if x < 0 else f"${x:,.0f}")


def num(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"{x:,.{digits}f}"


def pct(x: float | None) -> str:
    return "—" if x is None else f"{x:+.1%}" if x < 0 or x > 0 else "0.0%"


def plan_text(p: Mapping) -> str:
    if not p:
        return "—"
    return (f"tp{p.get('tp', 1)} pp{p.get('pp', 1)} dp{p.get('dp', 1)} "
            f"zero{p.get('zero_stage', 0)}")


def catalog_line(allocation) -> str:
    c = allocation.catalog
    dates = ", ".join(f"{k} {v}" for k, v in sorted(c.get("as_of", {}).items()))
    over = f"; overrides: {c['overrides']}" if c.get("overrides") else ""
    return f"catalog {c.get('name', '?')} (prices as of {dates or 'unknown'}){over}"


# (header, value) for the per-job table of the Markdown, HTML and PDF reports.
JOB_COLUMNS: tuple[tuple[str, Callable[[dict], str]], ...] = (
    ("Job", lambda j: j["job"]),
    ("Team", lambda j: j["team"]),
    ("Run (UTC)", lambda j: f"{j['start']} → {j['end']}"),
    ("Deadline", lambda j: j["deadline"]),
    ("Cloud", lambda j: j["cloud"]),
    ("Region", lambda j: j["region"]),
    ("Instance", lambda j: j["instance_type"]),
    ("Nodes", lambda j: str(j["nodes"])),
    ("GPUs", lambda j: f"{j['gpus']}× {j['accelerator']}"),
    ("Pricing", lambda j: j["pricing"]),
    ("$/instance-h", lambda j: f"${j['usd_per_hour']:,.4f}"),
    ("Plan", lambda j: plan_text(j["plan"])),
    ("GPU-hours", lambda j: num(j["gpu_hours"])),
    ("Cost", lambda j: usd(j["cost_usd"])),
    ("P(deadline)", lambda j: f"{j['deadline_probability']:.2f}"),
)


def totals_rows(allocation) -> list[list[str]]:
    t = allocation.totals
    return [["Overall", str(t["jobs"]), num(t["gpu_hours"]), usd(t["cost_usd"]),
             usd(t.get("budget_usd"))]]


def team_rows(allocation) -> list[list[str]]:
    total = allocation.totals["cost_usd"] or 1.0
    return [[k, str(v["jobs"]), num(v["gpu_hours"]), usd(v["cost_usd"]),
             f"{v['cost_usd'] / total:.1%}"] for k, v in allocation.by_team.items()]


def month_rows(allocation) -> list[list[str]]:
    return [[m, num(v["gpu_hours"]), usd(v["cost_usd"]), usd(v.get("budget_usd")),
             "—" if not v.get("budget_usd") else f"{v['cost_usd'] / v['budget_usd']:.0%}",
             ", ".join(v["jobs"])] for m, v in allocation.by_month.items()]


def budget_rows(allocation) -> list[list[str]]:
    return [[b["period"], usd(b["budget_usd"]), usd(b["planned_usd"]), usd(b["headroom_usd"]),
             "—" if b["used"] is None else f"{b['used']:.0%}"] for b in allocation.budgets]


def quota_rows(allocation) -> list[list[str]]:
    return [[q["scope"], q["month"], str(q["cap_gpus"]), str(q["peak_gpus"])]
            for q in allocation.quotas]


def actual_rows(comparison: dict) -> list[list[str]]:
    labelled = [*((r["job"], r) for r in comparison["jobs"]),
                *((f"team {r['team']}", r) for r in comparison["teams"]),
                ("Total", comparison["total"])]
    return [[label, num(r["planned_gpu_hours"]), num(r["actual_gpu_hours"]),
             usd(r["planned_cost_usd"]), usd(r["actual_cost_usd"]), usd(r["delta_cost_usd"]),
             pct(r["delta_pct"])] for label, r in labelled]


TOTALS_HEAD = ["", "Jobs", "GPU-hours", "Cost", "Budget"]
TEAM_HEAD = ["Team", "Jobs", "GPU-hours", "Cost", "Share"]
MONTH_HEAD = ["Month", "GPU-hours", "Cost", "Budget", "Used", "Jobs running"]
BUDGET_HEAD = ["Period", "Budget", "Planned", "Headroom", "Used"]
QUOTA_HEAD = ["Quota scope", "Month", "Cap (GPUs)", "Peak use"]
ACTUAL_HEAD = ["", "Planned GPU-h", "Actual GPU-h", "Planned cost", "Actual cost", "Δ cost",
               "Δ %"]


def solver_line(allocation) -> str:
    s = allocation.solver
    state = "optimal" if s.get("optimal") else "best found within the time limit"
    return (f"scipy.optimize.milp (HiGHS): {state}; {s.get('options', s.get('variables'))} run "
            f"options, {s.get('rows')} constraint rows")


__all__ = ["FORMATS", "compare_actuals", "render"]
