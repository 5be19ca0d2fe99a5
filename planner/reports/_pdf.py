"""The PDF team report: the HTML report's content as text pages plus the two charts, written
with matplotlib's PdfPages (TrueType fonts embedded, so the text can be searched and copied).
"""

from __future__ import annotations

import io

from . import _rows as R
from ._charts import _mpl, burn_figure, gantt_figure, quiet_glyphs

PAGE_IN = (11.69, 8.27)  # A4 landscape
LINES_PER_PAGE = 52
FONT_PT = 7.0
CELL_MAX = 40


def _fixed(head: list[str], rows: list[list[str]], numeric_from: int = 1,
           left: tuple[int, ...] = ()) -> list[str]:
    cells = [[c if len(c) <= CELL_MAX else c[:CELL_MAX - 1] + "…" for c in r]
             for r in [head, *rows]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(head))]

    def fmt(r: list[str]) -> str:
        return "  ".join(c.rjust(w) if i >= numeric_from and i not in left else c.ljust(w)
                         for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()

    return [fmt(cells[0]), "  ".join("-" * w for w in widths)] + [fmt(r) for r in cells[1:]]


def _lines(a, comparison: dict | None) -> list[tuple[str, str]]:
    """(style, text) lines: style 'h1', 'h2' or 'mono'."""
    t = a.totals
    out = [("h1", f"GPU budget: {a.name}"),
           ("mono", f"{R.jobs(t['jobs'])}, {R.usd(t['cost_usd'])} expected, "
                    f"{R.num(t['gpu_hours'])} GPU-hours, {t['start']} -> {t['end']} UTC"),
           ("mono", f"Source: {a.source}; {R.catalog_line(a)}"), ("mono", "")]

    def section(title: str, head, rows, numeric_from: int = 1, left=()) -> None:
        out.append(("h2", title))
        out.extend(("mono", x) for x in _fixed(head, rows, numeric_from, left))
        out.append(("mono", ""))

    section("Totals", R.TOTALS_HEAD, R.totals_rows(a))
    section("Per team", R.TEAM_HEAD, R.team_rows(a))
    section("Per month", R.MONTH_HEAD, R.month_rows(a), 1, (5,))
    if a.budgets:
        section("Budgets", R.BUDGET_HEAD, R.budget_rows(a))
    if a.quotas:
        section("Quotas (peak GPUs in use)", R.QUOTA_HEAD, R.quota_rows(a), 2)
    cols = R.JOB_COLUMNS
    first = [c for c in cols if c[0] in ("Job", "Team", "Run (UTC)", "Deadline", "Cloud",
                                         "Region", "Instance")]
    second = [c for c in cols if c[0] not in {h for h, _ in first} or c[0] == "Job"]
    section("Jobs: where and when", [h for h, _ in first],
            [[f(j) for _, f in first] for j in a.jobs], 99)
    section("Jobs: configuration, frozen price and cost", [h for h, _ in second],
            [[f(j) for _, f in second] for j in a.jobs], 1, (2, 3, 5))
    if comparison is not None:
        section("Estimate vs actual", R.ACTUAL_HEAD, R.actual_rows(comparison))
    out.append(("h2", "Assumptions"))
    out.extend(("mono", f"- {x}") for x in a.assumptions)
    out += [("mono", ""), ("h2", "Catalog and prices"), ("mono", R.catalog_line(a)),
            ("mono", f"source: {a.catalog.get('source', '')}"), ("mono", R.solver_line(a))]
    return out


def _wrap(lines: list[tuple[str, str]], width: int = 190) -> list[tuple[str, str]]:
    import textwrap

    out = []
    for style, text in lines:
        if style == "mono" and len(text) > width and not text.startswith(" "):
            out.extend((style, w) for w in textwrap.wrap(text, width, subsequent_indent="  "))
        else:
            out.append((style, text))
    return out


def pdf_report(allocation, comparison: dict | None = None) -> bytes:
    matplotlib, Figure = _mpl()
    from matplotlib.backends.backend_pdf import PdfPages

    lines = _wrap(_lines(allocation, comparison))
    buf = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 42}), quiet_glyphs(), \
            PdfPages(buf, metadata={"CreationDate": None, "Title": f"GPU budget: "
                                    f"{allocation.name}", "Creator": "gpuplan"}) as pdf:
        for start in range(0, len(lines), LINES_PER_PAGE):
            fig = Figure(figsize=PAGE_IN)
            y = 0.96
            for style, text in lines[start:start + LINES_PER_PAGE]:
                size = {"h1": 14, "h2": 10}.get(style, FONT_PT)
                fig.text(0.03, y, text, fontsize=size, family="DejaVu Sans Mono",
                         weight="bold" if style != "mono" else "normal", va="top",
                         parse_math=False)
                y -= (size + 3.2) / 72 / PAGE_IN[1]
            pdf.savefig(fig)
        for fig in (gantt_figure(allocation), burn_figure(allocation)):
            pdf.savefig(fig)
    return buf.getvalue()
