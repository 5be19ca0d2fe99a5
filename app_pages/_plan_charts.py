"""The Plan page's cost-vs-time chart: every plan the result carries, the cost/time frontier,
the deadline with the region past it shaded, and the recommendation.

The points are what ``planner.plan`` returns today: the top candidates (all meet the
deadline) and the Pareto frontier over every plan within the other limits (it reaches past
the deadline, which is where a later deadline saves money).
"""

from __future__ import annotations

import math

import plotly.graph_objects as go

from app_pages import _charts as C
from app_pages import _format as F


def plan_key(p: dict) -> tuple:
    return (p["cloud"], p["region"], p["instance_type"], p["pricing"], p["nodes"])


def plan_points(result: dict) -> list[dict]:
    """Every distinct plan in the result, each marked ``on_frontier`` or not."""
    inf = result.get("infeasible") or {}
    frontier = {plan_key(p) for p in result["frontier"]}
    seen: dict[tuple, dict] = {}
    for p in [*result["frontier"], *result["candidates"], inf.get("fastest"),
              inf.get("cheapest")]:
        if p and plan_key(p) not in seen:
            seen[plan_key(p)] = dict(p, on_frontier=plan_key(p) in frontier)
    return list(seen.values())


def later_deadline_savings(result: dict, deadline_hours: float,
                           limit: int = 3) -> list[tuple[dict, float]]:
    """Frontier plans past the deadline that cost less than the recommendation, with the
    saving: (plan, USD saved), soonest first."""
    rec = result.get("recommendation")
    if not rec:
        return []
    later = sorted((p for p in result["frontier"]
                    if p["wall_clock_hours"] > deadline_hours
                    and p["total_cost_usd"] < rec["total_cost_usd"]),
                   key=lambda p: p["wall_clock_hours"])
    return [(p, rec["total_cost_usd"] - p["total_cost_usd"]) for p in later[:limit]]


def _hover(p: dict) -> list[str]:
    return [F.plot_text(F.config_line(p)), F.usd(p["total_cost_usd"]),
            F.hours(p["wall_clock_hours"]), f"{p['deadline_probability']:.0%}",
            f"{p['mfu']:.0%}", F.plot_text(F.plan_text(p))]


HOVER = ("%{customdata[0]}<br>total cost %{customdata[1]} · wall-clock %{customdata[2]}"
         "<br>P(deadline) %{customdata[3]} · MFU %{customdata[4]}<br>%{customdata[5]}"
         "<extra></extra>")


def frontier_chart(result: dict, deadline_hours: float,
                   budget_usd: float | None = None) -> go.Figure:
    points = plan_points(result)
    rec = result.get("recommendation")
    fig = go.Figure()
    for pricing in [p for p in C.PRICING_COLORS if any(q["pricing"] == p for q in points)]:
        colour = C.PRICING_COLORS[pricing]
        group = [p for p in points if p["pricing"] == pricing]
        on_time = [p for p in group if p["wall_clock_hours"] <= deadline_hours]
        late = [p for p in group if p["wall_clock_hours"] > deadline_hours]
        # filled: meets the deadline; open: past it (one legend entry per pricing model)
        for plans, symbol in ((on_time, "circle"), (late, "circle-open")):
            if plans:
                fig.add_trace(go.Scatter(
                    x=[p["wall_clock_hours"] for p in plans],
                    y=[p["total_cost_usd"] for p in plans], mode="markers",
                    name=C.PRICING_LABELS[pricing], legendgroup=pricing,
                    showlegend=plans is on_time or not on_time,
                    marker={"color": colour, "size": 9, "opacity": 0.85, "symbol": symbol,
                            "line": {"width": 1.5, "color": colour}},
                    customdata=[_hover(p) for p in plans], hovertemplate=HOVER))
    front = sorted(result["frontier"], key=lambda p: p["wall_clock_hours"])
    if front:
        fig.add_trace(go.Scatter(
            x=[p["wall_clock_hours"] for p in front], y=[p["total_cost_usd"] for p in front],
            mode="lines", line={"color": "#555", "width": 1.2, "shape": "hv", "dash": "dot"},
            name="cost/time frontier", hoverinfo="skip"))
    if rec:
        fig.add_trace(go.Scatter(
            x=[rec["wall_clock_hours"]], y=[rec["total_cost_usd"]], mode="markers",
            name="recommendation",
            marker={"symbol": "star", "size": 20, "color": C.PRICING_COLORS[rec["pricing"]],
                    "line": {"width": 1.5, "color": "#111"}},
            customdata=[_hover(rec)],
            hovertemplate=HOVER))
    # the axis reaches past the deadline, so that the region beyond it always shows
    walls = [p["wall_clock_hours"] for p in points] + [deadline_hours, deadline_hours * 1.4]
    costs = [p["total_cost_usd"] for p in points] + ([budget_usd] if budget_usd else [])
    x_log = C.hours_axis(fig, walls, title="Wall-clock time")
    C.usd_axis(fig, costs, title="Total cost")
    # past the deadline: shaded to far beyond the axis (the plot area clips it)
    fig.add_vrect(x0=deadline_hours, x1=deadline_hours * 1e3, fillcolor=C.DEADLINE_COLOR,
                  opacity=0.07, line_width=0, layer="below")
    fig.add_vline(x=deadline_hours, line_dash="dash", line_color=C.DEADLINE_COLOR)
    # an annotation on a log axis takes log10 coordinates (a shape takes data coordinates)
    fig.add_annotation(x=math.log10(deadline_hours) if x_log else deadline_hours, y=1,
                       yref="paper", yanchor="bottom", showarrow=False, xanchor="left",
                       text=f" deadline {F.duration(deadline_hours)} → past it",
                       font={"color": C.DEADLINE_COLOR})
    if budget_usd:
        fig.add_hline(y=budget_usd, line_dash="dot", line_color="#555",
                      annotation_text=f"budget {F.usd(budget_usd)}",
                      annotation_position="top left")
    fig.update_layout(height=480, margin={"t": 40, "r": 20}, legend_title_text="",
                      hoverlabel={"align": "left"})
    return fig
