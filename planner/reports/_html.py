"""A self-contained HTML team report: inline CSS, charts as inline SVG (written by ``_svg``, no
matplotlib), no scripts and no external URLs. Every piece of user text passes through
``html.escape``."""

from __future__ import annotations

from html import escape

from . import _rows as R
from ._svg import burn_svg, gantt_svg

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2rem;
color:#222;max-width:1400px}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #ddd}h3{font-size:1.05rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.85rem}
th,td{border:1px solid #ddd;padding:.25rem .5rem;text-align:left;vertical-align:top}
td{overflow-wrap:anywhere}
th{background:#f4f4f4}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.lead{font-size:1.05rem}.muted{color:#666;font-size:.85rem}
.chart svg{max-width:100%;height:auto}
"""


def _table(head: list[str], rows: list[list[str]], numeric_from: int = 1) -> str:
    h = "".join(f"<th>{escape(x)}</th>" for x in head)
    body = []
    for row in rows:
        cells = "".join(f'<td class="n">{escape(c)}</td>' if i >= numeric_from else
                        f"<td>{escape(c)}</td>" for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    return f"<table><thead><tr>{h}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def html_report(allocation, comparison: dict | None = None) -> str:
    a, t = allocation, allocation.totals
    parts = [
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
        f"<title>GPU budget: {escape(a.name)}</title><style>{CSS}</style></head><body>",
        f"<h1>GPU budget: {escape(a.name)}</h1>",
        f'<p class="lead">{R.jobs(t["jobs"])}, <strong>{escape(R.usd(t["cost_usd"]))}</strong> '
        f"expected, {escape(R.num(t['gpu_hours']))} GPU-hours, {escape(t['start'])} → "
        f"{escape(t['end'])} UTC.</p>",
        f'<p class="muted">Source: {escape(a.source)}; {escape(R.catalog_line(a))}.</p>',
        "<h2>Totals</h2>", _table(R.TOTALS_HEAD, R.totals_rows(a)),
        "<h3>Per team</h3>", _table(R.TEAM_HEAD, R.team_rows(a)),
        "<h3>Per month</h3>", _table(R.MONTH_HEAD, R.month_rows(a)),
    ]
    if a.budgets:
        parts += ["<h3>Budgets</h3>", _table(R.BUDGET_HEAD, R.budget_rows(a))]
    if a.quotas:
        parts += ["<h3>Quotas (peak GPUs in use)</h3>", _table(R.QUOTA_HEAD, R.quota_rows(a), 2)]
    parts += ["<h2>Timeline</h2>", f'<div class="chart">{gantt_svg(a)}</div>',
              "<h2>Monthly burn</h2>", f'<div class="chart">{burn_svg(a)}</div>',
              "<h2>Jobs</h2>",
              _table([h for h, _ in R.JOB_COLUMNS],
                     [[f(j) for _, f in R.JOB_COLUMNS] for j in a.jobs], 7),
              '<p class="muted">Workloads: ' + "; ".join(
                  f"{escape(j['job'])}: {escape(j['workload'])}" for j in a.jobs) + "</p>"]
    if comparison is not None:
        parts += ["<h2>Estimate vs actual</h2>",
                  _table(R.ACTUAL_HEAD, R.actual_rows(comparison)),
                  f'<p class="muted">{comparison["reported_jobs"]} of {len(a.jobs)} jobs '
                  f"reported; {escape(comparison['note'])}.</p>"]
    if said := a.warning_lines():  # what `plan` warns of for the jobs' plans
        parts += ["<h2>Warnings</h2><ul>"] + [f"<li>{escape(x)}</li>" for x in said] + ["</ul>"]
    parts += ["<h2>Assumptions</h2><ul>"] + [f"<li>{escape(x)}</li>" for x in a.assumptions]
    parts += ["</ul><h2>Catalog and prices</h2><ul>",
              f"<li>{escape(R.catalog_line(a))}</li>",
              f"<li>source: {escape(str(a.catalog.get('source', '')))}</li>",
              f"<li>{escape(R.solver_line(a))}</li></ul>", "</body></html>", ""]
    return "\n".join(parts)
