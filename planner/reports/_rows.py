"""What the Markdown, HTML and PDF team reports share: money and number formats, the per-job
columns and the summary tables' rows (all text), so the three say the same thing."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping

from catalog import price_dates

from ..model import ParallelPlan, below_shown, format_chance, format_usd


def usd(x: float | None) -> str:
    """``format_usd``, and "—" for no figure."""
    return "—" if x is None else format_usd(x)


def delta_usd(x: float | None) -> str:
    """A difference in USD, signed as its percentage beside it is ("+$6,123", "-$512")."""
    return f"+{usd(x)}" if x is not None and x > 0 else usd(x)


def jobs(n: int) -> str:
    """'1 job', '3 jobs'."""
    return f"{n:,} job{'' if n == 1 else 's'}"


def num(x: float | None, digits: int = 0) -> str:
    """A figure to ``digits`` decimals; one that is not zero but would read so, as the bound
    it is under ("<1" GPU-hours of an actuals file's 1e-5, which read "0")."""
    if x is None:
        return "—"
    return below_shown(x, 10.0 ** -digits, rounds=True) or f"{x:,.{digits}f}"


def used(x: float | None) -> str:
    """Share of a budget used: whole percent from 10%, one decimal below it (0.41% is "0.4%",
    not "0%", which reads as nothing planned), "< 0.1%" for less but not none."""
    if x is None:
        return "—"
    if 0 < x < 0.001:
        return "< 0.1%"
    return f"{x:.0%}" if x >= 0.1 or x == 0 else f"{x:.1%}"


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: 2 for a wide (CJK, full-width) character, 0
    for a combining mark or an invisible format character, 1 otherwise (``len`` would let a
    full-width name overrun its column)."""
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf")
               else 2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def cut(text: str, columns: int) -> str:
    """``text`` cut with "…" to at most ``columns`` display columns (``display_width``): the
    one rule for a name that does not fit, in the PDF's tables and both reports' charts."""
    if display_width(text) <= columns:
        return text
    out, room = [], max(0, columns - 1)
    for c in text:
        room -= display_width(c)
        if room < 0:
            break
        out.append(c)
    return "".join(out) + "…"


def pct(x: float | None) -> str:
    if x is None:
        return "—"
    if x >= 100:  # beyond +10,000% say how many times the plan: "+2.4e+05%" read as code
        ratio = x + 1  # spent ÷ planned
        if ratio < 1e6:
            return f"×{ratio:,.0f}"
        # one significant digit: "×~10^7" stood for 8.2e7, a tenth of it
        mantissa, exponent = f"{ratio:.0e}".split("e")
        return f"×~{mantissa}×10^{int(exponent)}"
    if x <= -100:  # (spend below zero: not from a checked actuals file)
        return f"{x * 100:+.2g}%"
    return f"{x:+.1%}" if x < 0 or x > 0 else "0.0%"


def plan_text(p: Mapping) -> str:
    """A job's parallel plan as every plan is written (``ParallelPlan.__str__``)."""
    return str(ParallelPlan.from_dict(p)) if p else "—"


def catalog_line(allocation) -> str:
    c = allocation.catalog
    over = f"; overrides: {c['overrides']}" if c.get("overrides") else ""
    return f"catalog {c.get('name', '?')} (prices as of {price_dates(c)}){over}"


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
    ("P(deadline)", lambda j: format_chance(j["deadline_probability"])),
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
             "—" if not v.get("budget_usd") else used(v["cost_usd"] / v["budget_usd"]),
             ", ".join(v["jobs"])] for m, v in allocation.by_month.items()]


def budget_rows(allocation) -> list[list[str]]:
    return [[b["period"], usd(b["budget_usd"]), usd(b["planned_usd"]), usd(b["headroom_usd"]),
             used(b["used"])] for b in allocation.budgets]


def quota_rows(allocation) -> list[list[str]]:
    return [[q["scope"], q["month"], str(q["cap_gpus"]), str(q["peak_gpus"])]
            for q in allocation.quotas]


def actual_rows(comparison: dict) -> list[list[str]]:
    """One row per job, then per team and the total. A team's or the total's planned figures
    are those of its jobs that reported actuals, as its Δ (``compare_actuals``) compares: on
    every row Δ = actual − planned; the label says "(1 of 3 jobs reported)" when some did not
    (the whole plan's figures are in the Totals and Per team tables)."""
    rows = [[r["job"], num(r["planned_gpu_hours"]), num(r["actual_gpu_hours"]),
             usd(r["planned_cost_usd"]), usd(r["actual_cost_usd"]),
             delta_usd(r["delta_cost_usd"]), pct(r["delta_pct"])] for r in comparison["jobs"]]
    summaries = [*((f"team {r['team']}", r) for r in comparison["teams"]),
                 ("Total", comparison["total"])]
    for label, r in summaries:
        if r["reported_jobs"] < r["jobs"]:
            label += f" ({r['reported_jobs']} of {jobs(r['jobs'])} reported)"
        rows.append([label, num(r["planned_gpu_hours_reported"]), num(r["actual_gpu_hours"]),
                     usd(r["planned_cost_usd_reported"]), usd(r["actual_cost_usd"]),
                     delta_usd(r["delta_cost_usd"]), pct(r["delta_pct"])])
    return rows


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
    options, rows = s.get("options", s.get("variables")), s.get("rows")
    return (f"HiGHS MILP: {state}; {options} run option"
            f"{'' if options == 1 else 's'}, {rows} constraint row{'' if rows == 1 else 's'}")
