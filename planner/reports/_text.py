"""Markdown (for pull requests) and CSV (for spreadsheets) team reports.

Markdown: headings, pipe tables (user text escaped: ``|``, ``<``, ``>``, ``[``, ``]``, new
lines) and a Mermaid Gantt chart, which GitHub renders. CSV layout — one header, then one row
per job and summary rows, told apart by the first column ``kind``:

    job          one per job: its configuration, frozen price, run window, GPU-hours, cost
    team         one per team: totals (job, cloud … columns empty)
    month        one per calendar month with spend: pro-rata GPU-hours and cost, its budget
    budget       one per budget period: budget_usd and the planned cost_usd
    quota        one per quota scope and month: scope, cap_gpus and peak_gpus (in use at once)
    total        the whole plan
    warning      one per distinct warning of the jobs' plans (``note``; ``job`` when it is one
                 job's), as `gpuplan plan` warns of them
    assumption   one per assumption of the report (``note``)
    catalog      the catalog's name, price dates and source (``note``)
Numbers are plain (no thousands separators): money to the cent, hours to 0.1, probabilities
to 0.0001 within [0.0001, 0.9999] (``_chance``: no finish is certain). With actuals,
actual_gpu_hours and actual_cost_usd are filled where known. Text cells that a spreadsheet
would run as a formula (``=…``, ``+…``, ``-…``, ``@…``) get a leading apostrophe
(``_csvsafe``).
"""

from __future__ import annotations

import csv
import io
import math
import re

from . import _rows as R
from ._csvsafe import neutralise_row


def _md_cell(text: object) -> str:
    # "[" and "]" too: a job named "![x](https://tracker.example/p.png)" must not become an
    # image or a link in the pull request that shows the report. Nor may a bare URL, "www."
    # or an e-mail address (GitHub's extended autolinks): their ":", "." and "@" are escaped,
    # which breaks the match and renders the same characters. "~" too: GitHub strikes through
    # text between single tildes ("gcp ~2025-04-01, azure ~2024-03-01", a job "~old~").
    # "&" first: a job named "&amp;" showed as "&"; "*" and a "_" at a word's edge: "*b*" and
    # "_i_" turned into emphasis ("on_demand" stays as it is: GitHub ignores intraword "_")
    s = _visible(str(text).replace("\r", " ").replace("\n", " ")).replace("\\", "\\\\")
    s = (s.replace("&", "&amp;").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")
         .replace("`", "\\`").replace("[", "\\[").replace("]", "\\]").replace("~", "\\~")
         .replace("*", "\\*").replace("#", "\\#"))  # "team #": a heading's closing "#"
    s = _EDGE_UNDERSCORE.sub(r"\\_", s)
    return _AUTOLINK.sub(lambda m: "\\" + m.group(0), s)


_EDGE_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")
# C0 and C1 controls and DEL: a team file named "evil\x1b[31m.yaml" recoloured the terminal
# that the Markdown report was printed to (its name is the default title and the Source)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    """``text`` with control characters written as visible escapes (``\\x1b``)."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


# The characters GitHub's autolink extension keys on: the ":" of "scheme://", the "." of
# "www." (any case) and the "@" of an address.
_AUTOLINK = re.compile(r"(?<=[A-Za-z]):(?=//)|(?<=(?i:www))\.|@")


def _md_code(text: object) -> str:
    """Text for inside a `code span`, where backslash escapes do not work: no backticks."""
    return _visible(str(text).replace("`", "'").replace("\r", " ").replace("\n", " "))


def _md_table(head: list[str], rows: list[list[str]], right_from: int = 1,
              left: tuple[int, ...] = ()) -> list[str]:
    align = ["---" if i < right_from or i in left else "---:" for i in range(len(head))]
    out = ["| " + " | ".join(_md_cell(h) for h in head) + " |", "| " + " | ".join(align) + " |"]
    out += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in rows]
    return out


# What Mermaid's Gantt lexer (gantt.jison, case-insensitive, no word boundary) reads at the
# start of a line before it tries a task name: a job named "excludes weekends" or "title x"
# would set the chart's options instead of drawing a bar, and "2027-03-01 rerun" lexes as a
# date. Such a task name gets a prefix (``_mermaid_task``); a section line needs none, as
# "section" takes the rest of its line.
_MERMAID_KEYWORD = re.compile(
    r"(?i)(gantt|dateformat|inclusiveenddates|topaxis|axisformat|tickinterval|includes|"
    r"excludes|todaymarker|weekday|weekend|title|acctitle|accdescr|section|click|href|call|"
    r"\d{4}-\d{2}-\d{2})")


def _mermaid_name(text: str, fallback: str = "job") -> str:
    """A name Mermaid reads as text: no ``:``/``;``/``#`` (they end a task name), no ``%``
    (``%%`` starts a comment anywhere on a line, which would drop the task's dates), no
    markup."""
    return re.sub(r"[:;#%\n\r<>{}\"`]", " ", text).strip() or fallback


def _mermaid_task(text: str) -> str:
    name = _mermaid_name(text)
    return f"job {name}" if _MERMAID_KEYWORD.match(name) else name


def markdown(allocation, comparison: dict | None = None) -> str:
    a = allocation
    t = a.totals
    lines = [f"# GPU budget: {_md_cell(a.name)}", "",
             f"{R.jobs(t['jobs'])}, **{R.usd(t['cost_usd'])}** expected, {R.num(t['gpu_hours'])} "
             f"GPU-hours, {t['start']} → {t['end']} UTC. Source: `{_md_code(a.source)}`; "
             f"{_md_cell(R.catalog_line(a))}.", "", "## Totals", ""]
    lines += _md_table(R.TOTALS_HEAD, R.totals_rows(a))
    lines += ["", "### Per team", ""] + _md_table(R.TEAM_HEAD, R.team_rows(a))
    lines += ["", "### Per month", ""] + _md_table(R.MONTH_HEAD, R.month_rows(a), 1, (5,))
    if a.budgets:
        lines += ["", "### Budgets", ""] + _md_table(R.BUDGET_HEAD, R.budget_rows(a))
    if a.quotas:
        lines += ["", "### Quotas (peak GPUs in use)", ""] + _md_table(R.QUOTA_HEAD,
                                                                       R.quota_rows(a), 2)
    lines += ["", "## Timeline", "", "```mermaid", "gantt", "  dateFormat YYYY-MM-DD HH:mm",
              "  axisFormat %Y-%m-%d"]
    for team in a.by_team:
        lines.append(f"  section {_mermaid_name(team, 'team')}")
        for i, j in enumerate(a.jobs):
            if j["team"] == team:
                lines.append(f"  {_mermaid_task(j['job'])} :j{i + 1}, {j['start']}, {j['end']}")
    lines += ["```", "", "## Jobs", ""]
    lines += _md_table([h for h, _ in R.JOB_COLUMNS],
                       [[f(j) for _, f in R.JOB_COLUMNS] for j in a.jobs], 7, (9, 11))
    if comparison is not None:
        lines += ["", "## Estimate vs actual", ""] + _md_table(R.ACTUAL_HEAD,
                                                               R.actual_rows(comparison))
        lines += ["", f"_{comparison['reported_jobs']} of {len(a.jobs)} jobs reported; "
                  f"{comparison['note']}._"]
    if said := a.warning_lines():  # what `plan` warns of for the jobs' plans
        lines += ["", "## Warnings", ""] + [f"- {_md_cell(x)}" for x in said]
    lines += ["", "## Assumptions", ""] + [f"- {_md_cell(x)}" for x in a.assumptions]
    lines += ["", "## Catalog and prices", "",
              f"- {_md_cell(R.catalog_line(a))}",
              f"- source: {_md_cell(a.catalog.get('source', ''))}",
              f"- {R.solver_line(a)}", ""]
    return "\n".join(lines)


CSV_COLUMNS = ("kind", "job", "team", "month", "period", "workload", "earliest_start",
               "deadline", "start", "end", "cloud", "region", "instance_type", "accelerator",
               "nodes", "gpus", "pricing", "usd_per_hour", "price_as_of", "tp", "pp", "dp",
               "zero_stage", "cp", "vp", "ep", "micro_batch", "grad_accumulation", "recompute",
               "wall_clock_hours", "gpu_hours", "cost_usd", "budget_usd",
               "deadline_probability", "actual_gpu_hours", "actual_cost_usd",
               # added after the others: a reader of the columns above by position keeps them
               "scope", "cap_gpus", "peak_gpus", "note")


def _f(x, digits: int) -> str:
    return "" if x is None else f"{x:.{digits}f}"


# Planned cost and GPU-hours are written to the micro-unit (trailing zeros dropped), so that a
# spreadsheet summing the job rows gets the team, month and total rows to the cent and the
# hundredth of an hour: rounded to cents and tenths, 500 jobs of $0.626 summed to $315.00
# against a total of $313.02 (GPU-hours 0.684 → 0.7: 350 against 342). Rounding the parts to
# sum to the total instead would misstate single jobs.
EXACT_DIGITS = 6


def _exact(x) -> str:
    if x is None:
        return ""
    shown = f"{x:.{EXACT_DIGITS}f}".rstrip("0").rstrip(".")
    return "0" if shown in ("", "-0") else shown


def _chance(p: float | None) -> str:
    """A deadline probability for the CSV, as ``planner.model.format_chance`` words it: the
    model's range makes no finish certain, so a computed 1.0 (or 0.99996) is 0.9999, as the
    other reports' "> 99.99%", and a chance above 0 is at least 0.0001 ("< 0.01%"); 0 is 0."""
    if p is None or not math.isfinite(p):
        return ""
    if p <= 0:
        return f"{0.0:.4f}"
    return f"{min(max(p, 0.0001), 0.9999):.4f}"


def csv_text(allocation, comparison: dict | None = None) -> str:
    a = allocation
    actual = {r["job"]: r for r in comparison["jobs"]} if comparison else {}
    actual_team = {r["team"]: r for r in comparison["teams"]} if comparison else {}
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n",
                            extrasaction="raise")
    writer.writeheader()

    def put(row: dict) -> None:  # job and team names are user text: neutralise every row
        writer.writerow(neutralise_row(row))

    for j in a.jobs:
        p = j["plan"] or {}
        r = actual.get(j["job"], {})
        put({"kind": "job", "job": j["job"], "team": j["team"],
             "workload": j["workload"], "earliest_start": j["earliest_start"],
             "deadline": j["deadline"], "start": j["start"], "end": j["end"],
             "cloud": j["cloud"], "region": j["region"],
             "instance_type": j["instance_type"], "accelerator": j["accelerator"],
             "nodes": j["nodes"], "gpus": j["gpus"], "pricing": j["pricing"],
             "usd_per_hour": _f(j["usd_per_hour"], 4), "price_as_of": j["price_as_of"],
             "tp": p.get("tp", ""), "pp": p.get("pp", ""), "dp": p.get("dp", ""),
             "zero_stage": p.get("zero_stage", ""),
             # the rest of the plan (the Markdown report's "tp1 pp1 ep8 dp48 zero3 mb4×3
             # sel-recompute"): a plan with experts or context parallelism was not expressible
             "cp": p.get("cp", ""), "vp": p.get("virtual_stages", 1 if p else ""),
             "ep": p.get("ep", 1 if p else ""), "micro_batch": p.get("micro_batch", ""),
             "grad_accumulation": p.get("grad_accumulation", ""),
             "recompute": p.get("recompute", ""),
             "wall_clock_hours": _f(j["wall_clock_hours"], 1),
             "gpu_hours": _exact(j["gpu_hours"]), "cost_usd": _exact(j["cost_usd"]),
             "deadline_probability": _chance(j["deadline_probability"]),
             "actual_gpu_hours": _exact(r.get("actual_gpu_hours")),
             "actual_cost_usd": _exact(r.get("actual_cost_usd"))})
    for team, v in a.by_team.items():
        r = actual_team.get(team, {})
        put({"kind": "team", "team": team, "gpu_hours": _exact(v["gpu_hours"]),
             "cost_usd": _exact(v["cost_usd"]),
             "actual_gpu_hours": _exact(r.get("actual_gpu_hours")),
             "actual_cost_usd": _exact(r.get("actual_cost_usd"))})
    for m, v in a.by_month.items():
        put({"kind": "month", "month": m, "gpu_hours": _exact(v["gpu_hours"]),
             "cost_usd": _exact(v["cost_usd"]), "budget_usd": _f(v.get("budget_usd"), 2)})
    for b in a.budgets:
        put({"kind": "budget", "period": b["period"], "cost_usd": _exact(b["planned_usd"]),
             "budget_usd": _f(b["budget_usd"], 2)})
    for q in a.quotas:
        put({"kind": "quota", "month": q["month"], "scope": q["scope"],
             "cap_gpus": q["cap_gpus"], "peak_gpus": q["peak_gpus"]})
    t = a.totals
    r = comparison["total"] if comparison else {}
    put({"kind": "total", "start": t["start"], "end": t["end"],
         "gpu_hours": _exact(t["gpu_hours"]), "cost_usd": _exact(t["cost_usd"]),
         "budget_usd": _f(t.get("budget_usd"), 2),
         "actual_gpu_hours": _exact(r.get("actual_gpu_hours")),
         "actual_cost_usd": _exact(r.get("actual_cost_usd"))})
    # the words the other reports carry: what was warned of, assumed, and priced with
    for line in a.date_warnings:  # each names its job: "jobs[0] 'a': deadline … has passed"
        put({"kind": "warning", "job": "", "note": line})
    for (idx, _), line in zip(a.grouped_warnings(), a.job_warning_lines(), strict=True):
        put({"kind": "warning", "job": a.jobs[idx[0]]["job"] if len(idx) == 1 else "",
             "note": line})
    for x in a.assumptions:
        put({"kind": "assumption", "note": x})
    put({"kind": "catalog", "note": f"{R.catalog_line(a)}; source: "
                                    f"{a.catalog.get('source', '')}"})
    return buf.getvalue()
