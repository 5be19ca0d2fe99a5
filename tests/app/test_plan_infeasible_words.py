"""An infeasible plan with a budget (app sweep 2026-12-07): the card without the budget said
"needs a budget of $22,664" above "To fix: raise “Budget, USD” to $22,665", and the cost/time
chart's caption described a frontier, a grey band and bars that the chart did not draw."""

from __future__ import annotations

import json

from ._apptest import app, everything, plain

LINK = {"model": "llama2-7b", "tokens": "1T", "deadline": "5d", "budget": "10000"}


def _opened():
    return app(**LINK)


def test_the_budget_the_card_needs_is_the_budget_the_fix_asks_for():
    said = plain(everything(_opened()))
    assert "To fix: raise “Budget, USD” to $22,665" in said, said
    assert "needs a budget of $22,665" in said, said


def test_the_chart_caption_names_only_what_the_chart_draws():
    at = _opened()
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    names = {t.get("name") for t in spec["data"]}
    assert "cost/time frontier" not in names and "recommendation" not in names, names
    caption = next(c.value for c in at.caption if c.value.startswith("Each point"))
    assert "frontier" not in caption and "grey band" not in caption, caption
    assert "recommendation" not in caption, caption
    assert "The dotted line across is the budget ($10,000)" in caption, caption
    assert "diamond labelled “without the budget”" in caption, caption
    diamond = next(t for t in spec["data"] if t.get("name") == "without the budget")
    assert diamond["textposition"] != "top center"  # the label sat on its own whisker


def test_a_feasible_plan_caption_still_names_the_frontier_and_the_star():
    at = app()
    caption = next(c.value for c in at.caption if c.value.startswith("Each point"))
    assert "cost/time frontier" in caption and "grey band" in caption, caption
    assert "The star is the recommendation" in caption and "diamond" not in caption, caption
