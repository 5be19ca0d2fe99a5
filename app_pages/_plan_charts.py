"""The Plan page's cost-vs-time chart: every plan the planner priced, the cost/time frontier
with each plan's P10–P90 range, the deadline with the region past it shaded, the
recommendation, and (when nothing is feasible) the plans that would be without one limit.

What it draws is the result's contract (``planner.plan(..., points=True)``):

- ``points``: the best plan of every instance type, pricing model and node count (cheapest
  region), past the deadline and over the budget too, each with ``meets_deadline`` (the
  deadline at the minimum probability, whatever the budget) and ``within_limits`` (budget and
  quotas);
- ``frontier``: the Pareto set of (cost, wall-clock) over every plan within the budget and
  quotas, whatever the deadline, so the saving of a later deadline shows at any minimum
  probability;
- the P10–P90 of wall-clock and cost (``*_p10``/``*_p90``): the model's range and
  interruptions together.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterator, Sequence

import plotly.graph_objects as go

from app_pages import _charts as C
from app_pages import _format as F

MEETS, LATE, OVER = "meets", "late", "over"
STATUS = {  # marker, legend text, hover text
    MEETS: ("circle", "meets the deadline and limits", "meets the deadline and limits"),
    LATE: ("circle-open", "misses the deadline", "misses the deadline (at the minimum "
           "probability)"),
    OVER: ("x-thin-open", "over the budget or quotas", "over the budget or quotas"),
}
RANGE_COLOR = "rgba(60, 60, 60, 0.55)"  # error bars: a plan's P10–P90
BAND_COLOR = "rgba(90, 90, 90, 0.13)"  # the frontier's P10–P90 band
RELAXED_WORDS = {"budget": "without the budget", "min_probability":
                 "without the minimum probability", "quotas": "without the quotas"}
# The most plan markers the chart draws. A plan over tens of thousands of GPUs priced about
# 116,000 plans: a 30 MB plotly spec that took ~10 s to validate and a browser seconds to
# draw, though the eye cannot tell apart more than a few thousand markers on one chart. With
# 3,000 the spec is ~1 MB and the chart's shape (the spread of every trace) still shows.
MAX_CHART_PLANS = 3_000


class PointColumns(Sequence):
    """The result's ``points`` (each a ``PlanPoint.as_dict()``) as columns, for Streamlit's
    cache: an array of floats (8 bytes each) or whole numbers per number field, a byte per
    flag, and each text as a small index into the distinct texts. As dicts, the 86,110 points
    of a plan over 65,536 GPUs were 15 MB of its 16 MB cache entry (88 MB once unpickled, on
    every rerun); as columns 6.2 MB (the entry 6.9 MB, 9 MB unpickled). Read back, every
    point is the dict it was, field for field (nothing is rounded), a new one each time."""

    __slots__ = ("_fields", "_kinds", "_columns", "_texts", "_n")

    def __init__(self, points: list[dict]) -> None:
        """``points`` all with the same keys (``compact``); a field whose values are not all
        floats, all whole numbers, all flags or all texts is kept as a tuple."""
        fields = tuple(points[0]) if points else ()
        texts: dict[str, int] = {}
        kinds, columns = [], []
        for f in fields:
            values = [p[f] for p in points]
            types = {type(v) for v in values}
            if types == {float}:
                kind, col = "d", array("d", values)
            elif types == {bool}:
                kind, col = "b", bytes(values)
            elif types == {int} and all(-2**63 <= v < 2**63 for v in values):
                kind, col = "n", array("i" if all(-2**31 <= v < 2**31 for v in values)
                                       else "q", values)
            elif types == {str}:
                index = [texts.setdefault(v, len(texts)) for v in values]
                kind, col = "s", array("B" if len(texts) <= 2**8 else "H" if len(texts) <= 2**16
                                       else "I", index)
            else:
                kind, col = "o", tuple(values)
            kinds.append(kind)
            columns.append(col)
        self._fields, self._kinds, self._columns = fields, tuple(kinds), tuple(columns)
        self._texts, self._n = tuple(texts), len(points)

    def _values(self, k: int) -> list:
        """Field ``k`` of every point, as the dicts had it."""
        kind, col = self._kinds[k], self._columns[k]
        if kind == "b":
            return list(map((False, True).__getitem__, col))
        if kind == "s":
            return list(map(self._texts.__getitem__, col))
        return list(col)

    def __iter__(self) -> Iterator[dict]:
        names = self._fields
        for values in zip(*map(self._values, range(len(names))), strict=True):
            yield dict(zip(names, values, strict=True))

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        i = range(self._n)[index]  # from the end when negative, IndexError past it: a list's
        return {f: self._value(k, i) for k, f in enumerate(self._fields)}

    def _value(self, k: int, i: int):
        kind, v = self._kinds[k], self._columns[k][i]
        return bool(v) if kind == "b" else self._texts[v] if kind == "s" else v

    def __eq__(self, other) -> bool:
        if isinstance(other, PointColumns | list | tuple):
            return len(self) == len(other) and all(
                a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None


def compact(points: list[dict]) -> Sequence[dict]:
    """``points`` as ``PointColumns`` when they share their keys (the planner's do), else as
    they are."""
    if not points or any(p.keys() != points[0].keys() for p in points):
        return points
    return PointColumns(points)


def plan_key(p: dict) -> tuple:
    """A plan as a chart point: instance type, pricing and nodes (its cheapest region)."""
    return (p["cloud"], p["instance_type"], p["pricing"], p["nodes"])


def status(p: dict) -> str:
    if not p.get("within_limits", True):
        return OVER
    return MEETS if p.get("meets_deadline") else LATE


def plan_points(result: dict) -> list[dict]:
    """Every distinct plan to draw: the result's ``points``, and any listed plan (candidate,
    frontier, infeasible alternative) they lack, each marked ``on_frontier``."""
    frontier = {plan_key(p) for p in result["frontier"]}
    budget = (result.get("constraints") or {}).get("budget_usd")
    inf = result.get("infeasible") or {}
    seen: dict[tuple, dict] = {}
    for p in result.get("points") or ():
        seen.setdefault(plan_key(p), dict(p))
    for p in [*result["frontier"], *result["candidates"], inf.get("fastest"),
              inf.get("cheapest"), *(inf.get("relaxed") or {}).values()]:
        if p and plan_key(p) not in seen:
            within = budget is None or p["total_cost_usd"] <= budget  # no quotas in the app
            seen[plan_key(p)] = dict(p, within_limits=within)
    for key, p in seen.items():
        p["on_frontier"] = p.get("on_frontier", False) or key in frontier
    return list(seen.values())


def listed_keys(result: dict) -> set[tuple]:
    """The plans the page lists (frontier, candidates, the recommendation, an infeasible
    answer's alternatives, the best of each pricing model or group): always on the chart."""
    inf = result.get("infeasible") or {}
    listed = [*result["frontier"], *result["candidates"], result.get("recommendation"),
              inf.get("fastest"), inf.get("cheapest"), *(inf.get("relaxed") or {}).values(),
              *(result.get("spot_vs_on_demand") or {}).values(),
              *(result.get("by_group") or {}).values()]
    return {plan_key(p) for p in listed if p}


def chart_points(points: list[dict], result: dict, most: int = MAX_CHART_PLANS) -> list[dict]:
    """At most ``most`` of ``points`` (more when the listed plans alone are more): every
    plan the page lists, and of the rest every k-th of each trace (pricing model and status)
    by wall-clock time, the same k for all, so each trace keeps its spread and its share."""
    if len(points) <= most:
        return points
    listed = listed_keys(result)
    kept = [p for p in points if plan_key(p) in listed]
    traces: dict[tuple, list[dict]] = {}
    for p in points:
        if plan_key(p) not in listed:
            traces.setdefault((p["pricing"], status(p)), []).append(p)
    room = most - len(kept)
    if room <= 0:
        return kept
    k = max(1, math.ceil(sum(map(len, traces.values())) / room))
    while sum(math.ceil(len(t) / k) for t in traces.values()) > room:
        k += 1
    for plans in traces.values():
        plans.sort(key=lambda p: (p["wall_clock_hours"], p["total_cost_usd"]))
        kept += plans[::k]
    return kept


def cheaper_frontier_plans(result: dict, deadline_hours: float
                           ) -> tuple[list[tuple[dict, float]], list[tuple[dict, float]]]:
    """Frontier plans that cost less than the recommendation (so they miss the deadline at
    the minimum probability), with the saving, as (past the deadline, by the deadline but
    too unlikely to meet it): of each, the soonest and the cheapest (the largest saving) —
    the three soonest alone left out what a later deadline saved most. A plan whose P90 is
    longer than the latest deadline one can set (10 years) is no advice: it stays on the
    chart only."""
    from planner.model import MAX_DEADLINE_HOURS  # loaded already: a plan is shown

    rec = result.get("recommendation")
    if not rec:
        return [], []
    cheaper = sorted((p for p in result["frontier"]
                      if p["total_cost_usd"] < rec["total_cost_usd"] - 0.005
                      # its P90 too is said: a deadline one can set (the median's, without)
                      and p.get("wall_clock_hours_p90", p["wall_clock_hours"])
                      <= MAX_DEADLINE_HOURS),
                     key=lambda p: p["wall_clock_hours"])

    def ends(plans: list[dict]) -> list[tuple[dict, float]]:
        shown = list({id(p): p for p in plans[:1] + sorted(
            plans, key=lambda p: p["total_cost_usd"])[:1]}.values())
        return [(p, rec["total_cost_usd"] - p["total_cost_usd"]) for p in shown]

    return (ends([p for p in cheaper if p["wall_clock_hours"] > deadline_hours]),
            ends([p for p in cheaper if p["wall_clock_hours"] <= deadline_hours]))


def _hover(p: dict) -> list[str]:
    return [F.plot_text(F.config_line(p)), F.usd(p["total_cost_usd"]),
            F.hours(p["wall_clock_hours"]),
            F.duration_range(p["wall_clock_hours_p10"], p["wall_clock_hours_p90"],
                             p["wall_clock_hours"]),
            F.usd_range(p["total_cost_usd_p10"], p["total_cost_usd_p90"]),
            F.chance(p["deadline_probability"]), STATUS[status(p)][2]]


HOVER = ("%{customdata[0]}<br>total cost %{customdata[1]} · wall-clock %{customdata[2]}"
         "<br>P10–P90 %{customdata[3]}, %{customdata[4]}<br>P(deadline) %{customdata[5]} · "
         "%{customdata[6]}<extra></extra>")


def _error_bars(plans: list[dict]) -> dict:
    """Plotly error bars from each plan's P10–P90 of wall-clock (x) and cost (y)."""
    def bars(mid: str, lo: str, hi: str) -> dict:
        return {"type": "data", "symmetric": False, "color": RANGE_COLOR, "thickness": 1.2,
                "width": 3, "array": [max(p[hi] - p[mid], 0.0) for p in plans],
                "arrayminus": [max(p[mid] - p[lo], 0.0) for p in plans]}

    return {"error_x": bars("wall_clock_hours", "wall_clock_hours_p10", "wall_clock_hours_p90"),
            "error_y": bars("total_cost_usd", "total_cost_usd_p10", "total_cost_usd_p90")}


def _stairs(xy: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """The corners of the step line plotly draws through ``xy`` with shape "hv" (across,
    then down), so that a filled band follows the frontier's steps."""
    out = xy[:1]
    for (_, y0), (x1, y1) in zip(xy, xy[1:], strict=False):
        out += [(x1, y0), (x1, y1)]
    return out


def _xy(plans: list[dict]) -> dict:
    return {"x": [p["wall_clock_hours"] for p in plans],
            "y": [p["total_cost_usd"] for p in plans]}


def frontier_chart(result: dict, deadline_hours: float, budget_usd: float | None = None, *,
                   points: list[dict] | None = None, drawn: list[dict] | None = None
                   ) -> go.Figure:
    """``points``: ``plan_points(result)``, ``drawn``: ``chart_points`` of them, when the
    caller has them; the chart draws ``drawn``, its axes covering every point."""
    points = plan_points(result) if points is None else points
    drawn = chart_points(points, result) if drawn is None else drawn
    rec = result.get("recommendation")
    fig = go.Figure()
    # the band between the frontier's P10 and P90 plans (where the frontier may lie), under
    # everything else
    front = sorted(result["frontier"], key=lambda p: p["wall_clock_hours"])
    if front:
        lo = _stairs([(p["wall_clock_hours_p10"], p["total_cost_usd_p10"]) for p in front])
        hi = _stairs([(p["wall_clock_hours_p90"], p["total_cost_usd_p90"]) for p in front])
        ring = lo + hi[::-1] + lo[:1]
        fig.add_trace(go.Scatter(
            x=[x for x, _ in ring], y=[y for _, y in ring], mode="lines", fill="toself",
            fillcolor=BAND_COLOR, line={"width": 0}, name="frontier P10–P90",
            legendgroup="frontier", hoverinfo="skip"))
    # every plan: one colour per pricing model; filled, open or × by how it fares
    statuses = set()
    for pricing in [p for p in C.PRICING_COLORS if any(q["pricing"] == p for q in drawn)]:
        colour, shown = C.PRICING_COLORS[pricing], False
        for kind in (MEETS, LATE, OVER):
            plans = [p for p in drawn if p["pricing"] == pricing and status(p) == kind]
            if not plans:
                continue
            statuses.add(kind)
            fig.add_trace(go.Scatter(
                **_xy(plans), mode="markers", name=C.PRICING_LABELS[pricing],
                legendgroup=pricing, showlegend=not shown,
                marker={"color": colour, "size": 8 if kind != OVER else 7,
                        "opacity": 0.8 if kind != OVER else 0.5, "symbol": STATUS[kind][0],
                        "line": {"width": 1.5, "color": colour}},
                customdata=[_hover(p) for p in plans], hovertemplate=HOVER))
            shown = True
    # what the symbols mean (legend entries only)
    if statuses - {MEETS}:
        for kind in (MEETS, LATE, OVER):
            if kind in statuses:
                fig.add_trace(go.Scatter(
                    x=[None], y=[None], mode="markers", name=STATUS[kind][1],
                    legendgroup="status", hoverinfo="skip",
                    marker={"color": "#777", "size": 8, "symbol": STATUS[kind][0],
                            "line": {"width": 1.5, "color": "#777"}}))
    # the frontier; the plans without a limit; the recommendation with its P10–P90
    if front:
        fig.add_trace(go.Scatter(
            **_xy(front), mode="lines", name="cost/time frontier", legendgroup="frontier",
            line={"color": "#555", "width": 1.2, "shape": "hv", "dash": "dot"},
            hoverinfo="skip"))
    relaxed = (result.get("infeasible") or {}).get("relaxed") or {}
    for limit, p in relaxed.items():
        fig.add_trace(go.Scatter(
            **_xy([p]), mode="markers+text", name=RELAXED_WORDS.get(limit, limit),
            # beside the marker, clear of its own P10–P90 whisker (centred, it sat on it)
            text=[RELAXED_WORDS.get(limit, limit)], textposition="top right",
            marker={"symbol": "diamond", "size": 14, "color": C.PRICING_COLORS[p["pricing"]],
                    "line": {"width": 1.5, "color": "#111"}}, **_error_bars([p]),
            customdata=[_hover(p)], hovertemplate=HOVER))
    if rec:
        fig.add_trace(go.Scatter(
            **_xy([rec]), mode="markers", name="recommendation",
            marker={"symbol": "star", "size": 20, "color": C.PRICING_COLORS[rec["pricing"]],
                    "line": {"width": 1.5, "color": "#111"}}, **_error_bars([rec]),
            customdata=[_hover(rec)], hovertemplate=HOVER))
    # the axes cover every plan and the ranges drawn; time reaches past the deadline, so that
    # the region beyond it always shows
    ranged = [*front, *relaxed.values(), *([rec] if rec else [])]
    walls = [p["wall_clock_hours"] for p in points] + [deadline_hours, deadline_hours * 1.4]
    walls += [p[k] for p in ranged for k in ("wall_clock_hours_p10", "wall_clock_hours_p90")]
    costs = [p["total_cost_usd"] for p in points] + ([budget_usd] if budget_usd else [])
    costs += [p[k] for p in ranged for k in ("total_cost_usd_p10", "total_cost_usd_p90")]
    x_log = C.hours_axis(fig, walls, title="Wall-clock time")
    y_log = C.usd_axis(fig, costs, title="Total cost")
    # past the deadline: shaded to far beyond the axis (the plot area clips it)
    fig.add_vrect(x0=deadline_hours, x1=deadline_hours * 1e3, fillcolor=C.DEADLINE_COLOR,
                  opacity=0.07, line_width=0, layer="below")
    fig.add_vline(x=deadline_hours, line_dash="dash", line_color=C.DEADLINE_COLOR)
    # an annotation on a log axis takes log10 coordinates (a shape takes data coordinates);
    # inside the plot's top, under the toolbar, on the side of the line with the more room
    # (to its right it ran off a phone's screen)
    x = math.log10(deadline_hours) if x_log else deadline_hours
    lo, hi = fig.layout.xaxis.range
    left = (x - lo) / (hi - lo) < 0.5
    fig.add_annotation(x=x, y=1, yref="paper", yanchor="top", showarrow=False,
                       xanchor="left" if left else "right",
                       text=f" deadline {F.duration(deadline_hours)} ",
                       bgcolor="rgba(255, 255, 255, 0.75)", font={"color": C.DEADLINE_COLOR})
    if budget_usd:
        fig.add_hline(y=budget_usd, line_dash="dot", line_color="#555")
        fig.add_annotation(x=0, xref="paper", xanchor="left", yanchor="bottom",
                           y=math.log10(budget_usd) if y_log else budget_usd,
                           showarrow=False, text=f"budget {F.usd(budget_usd)}",
                           font={"color": "#555"})
    # the legend in rows under the plot (beside it, it took half of a phone's width), and the
    # time ticks level (plotly tilted them when they crowded)
    fig.update_layout(height=560, margin={"t": 40, "r": 20}, hoverlabel={"align": "left"},
                      legend={"title_text": "", "orientation": "h", "yref": "container",
                              "y": 0, "yanchor": "bottom", "x": 0, "xanchor": "left"})
    _fewer_ticks(fig.layout.xaxis)
    return fig


def _fewer_ticks(axis, most: int = 6) -> None:
    """Every other tick while there are more than ``most``, level: on a phone, nine tilted
    labels ran into each other."""
    vals, texts = list(axis.tickvals or ()), list(axis.ticktext or ())
    while len(vals) > most:
        vals, texts = vals[::2], texts[::2]
    axis.update(tickangle=0, **({"tickvals": vals, "ticktext": texts} if vals else {}))
