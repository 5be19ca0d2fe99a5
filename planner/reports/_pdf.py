"""The PDF team report: the HTML report's content as text pages plus the two charts, written
with matplotlib's PdfPages (TrueType fonts embedded, so the text can be searched and copied).

Tables are drawn one cell at a time at monospace column positions, not as one padded string
per row: matplotlib lays out each string with the Unicode bidi algorithm, so a row whose first
cell is an Arabic or Hebrew name was laid out right to left as a whole (team "-2+3" read
"2+3-", run dates reversed). A cell on its own keeps its own direction and cannot move the
others. (Bidi marks around cells would do the same in theory, but matplotlib 3.11 misplaces
the glyphs after them.) Glyphs that neither font has are drawn as boxes; the first page then
says so instead of leaving them unexplained.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Callable

from . import _rows as R
from ._charts import _mpl, burn_figure, gantt_figure, quiet_glyphs

PAGE_IN = (11.69, 8.27)  # A4 landscape
LINES_PER_PAGE = 52
FONT_PT = 7.0
CELL_MAX = 40
# DejaVu Sans (matplotlib's own, like the mono) draws what the mono lacks, e.g. Hebrew.
FONTS = ("DejaVu Sans Mono", "DejaVu Sans")
CHAR_EM = 1233 / 2048  # every DejaVu Sans Mono glyph advances this much: columns from it
LEFT = 0.03  # left margin, in figure widths
GAP = 2  # columns between table cells
MISSING_GLYPHS = ("Note: some names contain characters this PDF's fonts cannot draw (shown as "
                  "boxes); the HTML report shows them.")


def _fixed(head: list[str], rows: list[list[str]], numeric_from: int = 1,
           left: tuple[int, ...] = ()) -> list[tuple[str, object]]:
    """('row', cells) lines, each cell (column, 'left' or 'right', text): padded by display
    width (a full-width character takes two columns), cut to ``CELL_MAX`` columns."""
    cells = [[R.cut(c, CELL_MAX) for c in r] for r in [head, *rows]]
    widths = [max(R.display_width(r[i]) for r in cells) for i in range(len(head))]
    starts = [sum(widths[:i]) + GAP * i for i in range(len(widths))]

    def fmt(r: list[str]) -> tuple[str, object]:
        return ("row", tuple((starts[i] + w, "right", c) if i >= numeric_from and i not in left
                             else (starts[i], "left", c)
                             for i, (c, w) in enumerate(zip(r, widths, strict=True)) if c))

    rule = ("row", tuple((x, "left", "-" * w) for x, w in zip(starts, widths, strict=True)))
    return [fmt(cells[0]), rule] + [fmt(r) for r in cells[1:]]


def _lines(a, comparison: dict | None) -> list[tuple[str, str]]:
    """(style, text) lines: style 'h1', 'h2' or 'mono', or ('row', cells) (``_fixed``)."""
    t = a.totals
    out = [("h1", f"GPU budget: {a.name}"),
           ("mono", f"{R.jobs(t['jobs'])}, {R.usd(t['cost_usd'])} expected, "
                    f"{R.num(t['gpu_hours'])} GPU-hours, {t['start']} -> {t['end']} UTC"),
           ("mono", f"Source: {a.source}; {R.catalog_line(a)}"), ("mono", "")]

    def section(title: str, head, rows, numeric_from: int = 1, left=()) -> None:
        out.append(("h2", title))
        out.extend(_fixed(head, rows, numeric_from, left))
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
    if said := a.warning_lines():  # what `plan` warns of for the jobs' plans
        out.append(("h2", "Warnings"))
        out.extend(("mono", f"- {x}") for x in said)
        out.append(("mono", ""))
    out.append(("h2", "Assumptions"))
    out.extend(("mono", f"- {x}") for x in a.assumptions)
    out += [("mono", ""), ("h2", "Catalog and prices"), ("mono", R.catalog_line(a)),
            ("mono", f"source: {a.catalog.get('source', '')}"), ("mono", R.solver_line(a))]
    return out


def _wrap(lines: list[tuple[str, object]], width: int = 190) -> list[tuple[str, object]]:
    import textwrap

    out = []
    for style, text in lines:
        if style == "mono" and len(text) > width and not text.startswith(" "):
            out.extend((style, w) for w in textwrap.wrap(text, width, subsequent_indent="  "))
        else:
            out.append((style, text))
    return out


def _undrawable(lines: list[tuple[str, object]]) -> bool:
    """Whether some visible character is in none of ``FONTS`` (so it would print as a box)."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    have: set[int] = set()
    for family in FONTS:
        path = font_manager.findfont(font_manager.FontProperties(family=family))
        have.update(FT2Font(path).get_charmap())
    texts = [c for style, text in lines if style == "row" for _, _, c in text]
    texts += [text for style, text in lines if style != "row"]
    return any(ord(ch) not in have and unicodedata.category(ch) not in ("Cc", "Cf", "Zs")
               for ch in set("".join(texts)))


def pdf_report(allocation, comparison: dict | None = None, *,
               progress: Callable[[int, int], None] | None = None) -> bytes:
    """The PDF's bytes; ``progress(done, total)`` hears each page as it is drawn."""
    matplotlib, Figure = _mpl()
    tick = progress or (lambda done, total: None)
    from matplotlib.backends.backend_pdf import PdfPages

    lines = _wrap(_lines(allocation, comparison))
    if _undrawable(lines):
        lines.insert(3, ("mono", MISSING_GLYPHS))
    char_w = FONT_PT * CHAR_EM / 72 / PAGE_IN[0]  # one column, in figure widths
    buf = io.BytesIO()
    with matplotlib.rc_context({"pdf.fonttype": 42}), quiet_glyphs(), \
            PdfPages(buf, metadata={"CreationDate": None, "Title": f"GPU budget: "
                                    f"{allocation.name}", "Creator": "gpuplan"}) as pdf:
        pages = -(-len(lines) // LINES_PER_PAGE) + 2  # the text, then the two charts
        tick(0, pages)
        for page, start in enumerate(range(0, len(lines), LINES_PER_PAGE), start=1):
            fig = Figure(figsize=PAGE_IN)
            y = 0.96
            for style, text in lines[start:start + LINES_PER_PAGE]:
                size = {"h1": 14, "h2": 10}.get(style, FONT_PT)
                cells = text if style == "row" else ((0, "left", text),)
                for column, align, cell in cells:
                    fig.text(LEFT + column * char_w, y, cell, fontsize=size, family=FONTS,
                             weight="bold" if style in ("h1", "h2") else "normal", va="top",
                             ha=align, parse_math=False)
                y -= (size + 3.2) / 72 / PAGE_IN[1]
            pdf.savefig(fig)
            tick(page, pages)
        for k, chart in enumerate((gantt_figure, burn_figure), start=pages - 1):
            pdf.savefig(chart(allocation))
            tick(k, pages)
    return buf.getvalue()
