"""The HTML report's two charts as inline SVG, written by plain Python: a Gantt timeline of the
jobs and the monthly burn. No plotting library: matplotlib's import and layout were a third of
a small report's time, and SVG text written here is the same bytes on every machine.

Every piece of text (job and team names, labels) passes through ``html.escape``; coordinates
are written with one decimal, so the same allocation gives the same bytes. Layout assumes a
12 px sans-serif font at ``WIDTH`` px (the report scales the chart down to narrower windows);
text widths are estimated, not measured, so long names are cut with "…" and given in full in
the element's <title> (the browser's tooltip). The PDF keeps matplotlib (``_charts``).
"""

from __future__ import annotations

import datetime as dt
import math
from html import escape

from ._rows import cut, display_width, usd

TEAM_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3",
                "#8C8C8C", "#CCB974", "#64B5CD")
SPEND, BUDGET, CUMULATIVE, DEADLINE = "#4C72B0", "#C44E52", "#55A868", "#8B0000"
WINDOW_FILL, WINDOW_EDGE, GRID, AXIS, INK = "#EEEEEE", "#BBBBBB", "#DDDDDD", "#555555", "#222222"
WIDTH = 960
FONT = "system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif"
FONT_PX, SMALL_PX = 12, 11
CHAR_EM = 0.6  # a generous average glyph width: estimated labels must not overflow
ROW_PX, LEGEND_ROW_PX = 22, 20
MAX_LABEL_PX = 280


def _n(x: float) -> str:
    """A coordinate: one decimal, no "-0.0" (so equal layouts are equal bytes)."""
    text = f"{x:.1f}"
    return "0.0" if text == "-0.0" else text


def _text_px(text: str, px: int = FONT_PX) -> float:
    return display_width(text) * px * CHAR_EM


def _fit(text: str, max_px: float, px: int = FONT_PX) -> str:
    """``text`` cut with "…" to what fits in ``max_px`` (the PDF's chart cuts its labels the
    same way)."""
    return cut(text, max(1, int(max_px / (px * CHAR_EM))))


def _t(text: str, x: float, y: float, *, anchor: str = "start", px: int = FONT_PX,
       fill: str = INK, extra: str = "") -> str:
    return (f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" font-size="{px}" '
            f'fill="{fill}"{extra}>{escape(text)}</text>')


def _svg(height: float, title: str, ident: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{_n(height)}" '
            f'viewBox="0 0 {WIDTH} {_n(height)}" role="img" aria-labelledby="{ident}" '
            f'font-family="{escape(FONT)}">'
            f'<title id="{ident}">{escape(title)}</title>' + "".join(body) + "</svg>")


def _legend(items: list[tuple[str, str]], x0: float, y0: float, right: float) -> tuple[
        list[str], float]:
    """Legend entries (swatch SVG drawn in a 14×10 box at its origin, label) in rows that wrap
    at ``right``; returns the elements and the height used."""
    out, x, y = [], x0, y0
    for swatch, label in items:
        w = 18 + _text_px(label, SMALL_PX) + 16
        if x > x0 and x + w > right:
            x, y = x0, y + LEGEND_ROW_PX
        out.append(f'<g transform="translate({_n(x)},{_n(y)})">{swatch}</g>')
        out.append(_t(label, x + 18, y + 9, px=SMALL_PX))
        x += w
    return out, y - y0 + LEGEND_ROW_PX


def _box(fill: str, edge: str | None = None) -> str:
    stroke = f' stroke="{edge}" stroke-width="1"' if edge else ""
    return f'<rect x="0" y="0" width="14" height="10" fill="{fill}"{stroke}/>'


def _line_swatch(colour: str, dot: bool = False) -> str:
    circle = f'<circle cx="7" cy="5" r="3" fill="{colour}"/>' if dot else ""
    return f'<line x1="0" y1="5" x2="14" y2="5" stroke="{colour}" stroke-width="2"/>{circle}'


# ---- the timeline ------------------------------------------------------------------------------

def _when(text: str) -> dt.datetime:
    """'2027-03-01' or '2027-03-01 08:00' (UTC, as the allocation writes them)."""
    return dt.datetime.fromisoformat(text)


def _day_ticks(lo: dt.datetime, hi: dt.datetime, max_ticks: int) -> list[dt.datetime]:
    """Dates at the steps a calendar has (every day, every other day, Mondays, the 1st and
    15th, the 1st of every 1, 2, 3, 6 or 12 months), the finest that gives at most
    ``max_ticks`` from ``lo`` to ``hi``."""
    days = [lo.replace(hour=0, minute=0, second=0, microsecond=0) + dt.timedelta(days=k)
            for k in range(int((hi - lo).total_seconds() // 86400) + 2)]
    days = [d for d in days if lo <= d <= hi]
    rules = [lambda d: True, lambda d: d.toordinal() % 2 == 0, lambda d: d.weekday() == 0,
             lambda d: d.day in (1, 15)]
    rules += [lambda d, k=k: d.day == 1 and (d.month - 1) % k == 0 for k in (1, 2, 3, 6, 12)]
    for rule in rules:
        ticks = [d for d in days if rule(d)]
        if len(ticks) <= max_ticks:
            return ticks
    years = sorted({d.year for d in days})
    every = math.ceil(len(years) / max_ticks)
    return [dt.datetime(y, 1, 1) for y in years[::every] if lo <= dt.datetime(y, 1, 1) <= hi]


def gantt_svg(allocation) -> str:
    """Each job's window (earliest start → deadline, grey), its run (team colour) and its
    deadline (a dark red bar), one row per job in the allocation's order, dates in UTC."""
    jobs = allocation.jobs
    teams = list(dict.fromkeys([*allocation.by_team, *(j["team"] for j in jobs)]))
    colour = {t: TEAM_COLOURS[k % len(TEAM_COLOURS)] for k, t in enumerate(teams)}
    items = [(_box(colour[t]), f"team {t}") for t in teams]
    items += [(_box(WINDOW_FILL, WINDOW_EDGE), "window: earliest start → deadline"),
              (f'<line x1="7" y1="0" x2="7" y2="10" stroke="{DEADLINE}" stroke-width="2"/>',
               "deadline")]
    legend, legend_h = _legend(items, 8, 6, WIDTH - 8)
    label_w = min(MAX_LABEL_PX, max([_text_px(j["job"]) for j in jobs] + [40]))
    left, right = 12 + label_w + 8, WIDTH - 24
    top = 6 + legend_h + 8
    bottom = top + ROW_PX * max(1, len(jobs))
    height = bottom + 44
    if not jobs:
        return _svg(height, "Timeline: no jobs", "gantt-title",
                    legend + [_t("no jobs", WIDTH / 2, top + 14, anchor="middle")])
    spans = [(_when(j["earliest_start"]), _when(j["deadline"]), _when(j["start"]),
              _when(j["end"])) for j in jobs]
    lo = min(min(s) for s in spans)
    hi = max(max(s) for s in spans)
    if hi <= lo:
        hi = lo + dt.timedelta(days=1)
    pad = (hi - lo) * 0.02  # a deadline at the last date is not drawn on the frame
    lo, hi = lo - pad, hi + pad
    scale = (right - left) / (hi - lo).total_seconds()

    def x(t: dt.datetime) -> float:
        return left + (t - lo).total_seconds() * scale

    body = list(legend)
    ticks = _day_ticks(lo, hi, max(2, int((right - left) // 90)))
    for t in ticks:
        body.append(f'<line x1="{_n(x(t))}" y1="{_n(top)}" x2="{_n(x(t))}" y2="{_n(bottom)}" '
                    f'stroke="{GRID}" stroke-width="1"/>')
        body.append(_t(f"{t:%Y-%m-%d}", x(t), bottom + 16, anchor="middle", px=SMALL_PX))
    for i, (j, (window_lo, deadline, start, end)) in enumerate(zip(jobs, spans, strict=True)):
        y = top + ROW_PX * i
        tip = (f"{j['job']} (team {j['team']}): runs {j['start']} → {j['end']} UTC; window "
               f"{j['earliest_start']} → deadline {j['deadline']}")
        body.append(f"<g><title>{escape(tip)}</title>")
        body.append(_t(_fit(j["job"], label_w), left - 8, y + ROW_PX / 2 + 4, anchor="end"))
        body.append(f'<rect x="{_n(x(window_lo))}" y="{_n(y + 3)}" '
                    f'width="{_n(max(x(deadline) - x(window_lo), 0.5))}" '
                    f'height="{_n(ROW_PX - 6)}" fill="{WINDOW_FILL}" stroke="{WINDOW_EDGE}" '
                    f'stroke-width="0.5"/>')
        body.append(f'<rect x="{_n(x(start))}" y="{_n(y + 6)}" '
                    f'width="{_n(max(x(end) - x(start), 1.0))}" height="{_n(ROW_PX - 12)}" '
                    f'fill="{colour[j["team"]]}"/>')
        body.append(f'<line x1="{_n(x(deadline))}" y1="{_n(y + 2)}" x2="{_n(x(deadline))}" '
                    f'y2="{_n(y + ROW_PX - 2)}" stroke="{DEADLINE}" stroke-width="2"/></g>')
    body.append(f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(right - left)}" '
                f'height="{_n(bottom - top)}" fill="none" stroke="{AXIS}" stroke-width="1"/>')
    body.append(_t("date (UTC)", (left + right) / 2, bottom + 36, anchor="middle",
                   px=SMALL_PX, fill=AXIS))
    return _svg(height, f"Timeline of {len(jobs)} jobs: window, run and deadline of each",
                "gantt-title", body)


# ---- the monthly burn --------------------------------------------------------------------------

def nice_ticks(top: float, max_ticks: int = 6) -> list[float]:
    """0 and round steps (1, 2, 2.5, 5 × 10^k) up to at least ``top``."""
    if not top > 0 or not math.isfinite(top):
        return [0.0, 1.0]
    raw = top / (max_ticks - 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw * (1 - 1e-9))
    n = math.ceil(top / step - 1e-9)
    return [round(step * i, 10) for i in range(n + 1)]


def usd_tick(x: float, digits: int = 0) -> str:
    """$0, $750, $2.5k, $40k, $1.2M (``digits`` more where ticks would read the same)."""
    for suffix, scale in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if x >= scale:
            text = f"{x / scale:.{digits + 1}f}".rstrip("0").rstrip(".")
            return f"${text}{suffix}"
    return f"${x:,.{digits}f}"


def usd_ticks(ticks: list[float]) -> list[str]:
    for digits in range(4):
        labels = [usd_tick(t, digits) for t in ticks]
        if len(set(labels)) == len(labels):
            return labels
    return labels


def burn_svg(allocation) -> str:
    """Planned spend per calendar month (bars, left axis) against that month's budget where
    one is set (a red bar across), and the cumulative spend (line, right axis)."""
    months = list(allocation.by_month)
    cost = [float(allocation.by_month[m]["cost_usd"]) for m in months]
    budget = [allocation.by_month[m].get("budget_usd") for m in months]
    running, total = [], 0.0
    for c in cost:
        total += c
        running.append(total)
    items = [(_box(SPEND), "planned spend (left axis)")]
    if any(b is not None for b in budget):
        items.append((_line_swatch(BUDGET), "monthly budget (left axis)"))
    items.append((_line_swatch(CUMULATIVE, dot=True), "cumulative spend (right axis)"))
    legend, legend_h = _legend(items, 8, 6, WIDTH - 8)
    left, right = 84, WIDTH - 84
    top = 6 + legend_h + 14
    bottom = top + 240
    height = bottom + 50
    if not months:
        return _svg(height, "Monthly burn: no spend", "burn-title",
                    legend + [_t("no spend", WIDTH / 2, top + 40, anchor="middle")])
    # 5% headroom: the tallest bar, budget or point is never drawn on the frame
    ticks = nice_ticks(1.05 * max(cost + [b for b in budget if b is not None]))
    cum_ticks = nice_ticks(1.05 * running[-1])

    def y(v: float, axis: list[float]) -> float:
        return bottom - (bottom - top) * v / axis[-1]

    body = list(legend)
    for v, label in zip(ticks, usd_ticks(ticks), strict=True):
        body.append(f'<line x1="{_n(left)}" y1="{_n(y(v, ticks))}" x2="{_n(right)}" '
                    f'y2="{_n(y(v, ticks))}" stroke="{GRID}" stroke-width="1"/>')
        body.append(_t(label, left - 6, y(v, ticks) + 4, anchor="end", px=SMALL_PX))
    for v, label in zip(cum_ticks, usd_ticks(cum_ticks), strict=True):
        body.append(_t(label, right + 6, y(v, cum_ticks) + 4, px=SMALL_PX, fill=CUMULATIVE))
    slot = (right - left) / len(months)
    every = max(1, math.ceil(56 / slot))  # month labels ("2027-03") need ~56 px each
    show_values = slot >= _text_px("$00,000,000", SMALL_PX)
    points, values = [], []  # value labels go last: on top of the cumulative line
    for i, m in enumerate(months):
        cx = left + slot * (i + 0.5)
        bw = slot * 0.7
        tip = f"{m}: {usd(cost[i])} planned"
        if budget[i] is not None:
            tip += f" of a {usd(budget[i])} budget"
        tip += f"; {usd(running[i])} cumulative"
        body.append(f"<g><title>{escape(tip)}</title>")
        body.append(f'<rect x="{_n(cx - bw / 2)}" y="{_n(y(cost[i], ticks))}" width="{_n(bw)}" '
                    f'height="{_n(bottom - y(cost[i], ticks))}" fill="{SPEND}"/>')
        if budget[i] is not None:
            body.append(f'<line x1="{_n(cx - bw / 2 - 4)}" y1="{_n(y(budget[i], ticks))}" '
                        f'x2="{_n(cx + bw / 2 + 4)}" y2="{_n(y(budget[i], ticks))}" '
                        f'stroke="{BUDGET}" stroke-width="3"/>')
        if show_values:  # inside the bar's top where it is tall enough, else above it
            inside = bottom - y(cost[i], ticks) >= 22
            values.append(_t(usd(cost[i]), cx, y(cost[i], ticks) + (15 if inside else -4),
                           anchor="middle", px=SMALL_PX, fill="#FFFFFF" if inside else INK))
        body.append("</g>")
        if i % every == 0:
            body.append(_t(m, cx, bottom + 16, anchor="middle", px=SMALL_PX))
        points.append(f"{_n(cx)},{_n(y(running[i], cum_ticks))}")
    body.append(f'<polyline points="{" ".join(points)}" fill="none" stroke="{CUMULATIVE}" '
                f'stroke-width="2"/>')
    body += [f'<circle cx="{p.split(",")[0]}" cy="{p.split(",")[1]}" r="3.5" '
             f'fill="{CUMULATIVE}"/>' for p in points]
    body += values
    body.append(f'<rect x="{_n(left)}" y="{_n(top)}" width="{_n(right - left)}" '
                f'height="{_n(bottom - top)}" fill="none" stroke="{AXIS}" stroke-width="1"/>')
    mid = (top + bottom) / 2
    body.append(_t("USD per month", 16, mid, anchor="middle", px=SMALL_PX, fill=AXIS,
                   extra=f' transform="rotate(-90 16 {_n(mid)})"'))
    body.append(_t("cumulative USD", WIDTH - 12, mid, anchor="middle", px=SMALL_PX,
                   fill=CUMULATIVE, extra=f' transform="rotate(90 {WIDTH - 12} {_n(mid)})"'))
    body.append(_t("month (cost pro rata of running hours)", (left + right) / 2, bottom + 38,
                   anchor="middle", px=SMALL_PX, fill=AXIS))
    return _svg(height, f"Monthly burn over {len(months)} months: planned spend, budgets and "
                "cumulative spend", "burn-title", body)
