""""A later deadline would cost less" names only deadlines one can set: at most 10 years
(``planner.model.MAX_DEADLINE_HOURS``, what the deadline box takes). llama3-70b on 15T tokens
with at most 2,048 GPUs and a 3,000-day deadline was told "3,982.2 days for $3,348,524", a
deadline the box refuses. Such a plan stays on the chart."""

from __future__ import annotations

import re

from ._apptest import app, assert_clean, chart, plain, texts

LONG = {"model": "llama3-70b", "tokens": "15T", "deadline": "3000d", "max_gpus": "2048"}
LATER = "**A later deadline would cost less:**"


def _plan(wall: float, cost: float, name: str) -> dict:
    return {"cloud": "aws", "region": "us-east-1", "instance_type": name, "pricing": "on_demand",
            "nodes": 1, "wall_clock_hours": wall, "total_cost_usd": cost}


def test_a_plan_longer_than_the_latest_settable_deadline_is_no_advice():
    from app_pages._plan_charts import cheaper_frontier_plans
    from planner.model import MAX_DEADLINE_HOURS

    rec = _plan(100.0, 1000.0, "rec")
    soon, cheap = _plan(500.0, 900.0, "soon"), _plan(MAX_DEADLINE_HOURS * 0.9, 800.0, "cheap")
    longest = _plan(MAX_DEADLINE_HOURS, 700.0, "longest")  # 10 years to the hour: settable
    beyond = _plan(MAX_DEADLINE_HOURS + 1.0, 500.0, "beyond")
    result = {"recommendation": rec, "frontier": [rec, soon, cheap, longest, beyond]}
    later, riskier = cheaper_frontier_plans(result, 120.0)
    assert [(p["instance_type"], saved) for p, saved in later] == [("soon", 100.0),
                                                                   ("longest", 300.0)]
    assert riskier == []
    # nothing but plans past the limit: no advice at all
    result = {"recommendation": rec, "frontier": [rec, beyond]}
    assert cheaper_frontier_plans(result, 120.0) == ([], [])
    # nor a plan whose median is settable but its P90, said beside it, is not
    tail = {**longest, "wall_clock_hours": MAX_DEADLINE_HOURS * 0.8,
            "wall_clock_hours_p90": MAX_DEADLINE_HOURS * 1.1}
    assert cheaper_frontier_plans({"recommendation": rec, "frontier": [rec, tail]},
                                  120.0) == ([], [])


def test_the_plan_page_names_no_deadline_past_ten_years():
    from planner.model import MAX_DEADLINE_HOURS

    at = app(**LONG)
    assert_clean(at)
    # (each plan named with its median and P90, both settable: here the cheaper plans' P90s
    # are all past 10 years, so none is named)
    for line in [t for t in texts(at) if t.startswith(plain(LATER))]:
        days = [float(d.replace(",", ""))
                for d in re.findall(r"([\d,]+(?:\.\d+)?) days", line)]
        assert days and max(days) * 24 <= MAX_DEADLINE_HOURS, line
    # the plan left out of the advice is still drawn: the frontier reaches past 10 years
    spec = chart(at, "frontier_chart")
    (frontier,) = [t for t in spec["data"] if t.get("name") == "cost/time frontier"]
    assert max(frontier["x"]) > MAX_DEADLINE_HOURS
