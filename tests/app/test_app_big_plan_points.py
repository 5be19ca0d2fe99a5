"""A plan over many GPUs prices tens of thousands of plans: the Plan page drew every one
(~116,000 markers, a 30 MB chart spec, 10 s of plotly validation) and its JSON download
carried them all (76 MB, where `gpuplan plan --json` writes 1.5 MB). The chart draws at most
``MAX_CHART_PLANS`` markers, every listed plan among them, and says so; the download is what
the CLI writes, without the chart-only ``points``."""

from __future__ import annotations

import json
import re

from ._apptest import app, assert_clean, chart

THINNED = re.compile(r"The chart shows ([\d,]+) of the ([\d,]+) plans priced")
# 16,384 GPUs, a 1 M-token sequence, 1 hour: ~14,000 plans in about a second
BIG = {"max_gpus": "16384", "seq_len": "1048576", "deadline": "1h"}


def _open(monkeypatch, **query: str) -> tuple:
    """The Plan page, the result it drew and the text of each download button."""
    import streamlit as st

    from app_pages import _shared as S

    downloads: dict[str, str] = {}
    results: list[dict] = []
    button, cached = st.download_button, S.cached_plan

    def kept(label, data, *args, **kwargs):
        downloads[label] = data
        return button(label, data, *args, **kwargs)

    def plan(*args, **kwargs):
        out = cached(*args, **kwargs)
        results.append(out["result"])
        return out

    monkeypatch.setattr(st, "download_button", kept)
    monkeypatch.setattr(S, "cached_plan", plan)
    at = app(**query)
    assert_clean(at)
    return at, results[-1], downloads


def _markers(spec: dict) -> set[tuple[float, float]]:
    """The plan markers (every pricing model's traces; not the recommendation's star, the
    relaxed plans' diamonds or the legend's symbols)."""
    return {(round(x, 6), round(y, 6)) for t in spec["data"] if t.get("mode") == "markers"
            and t.get("name") != "recommendation" and t.get("x") != [None]
            for x, y in zip(t["x"], t["y"], strict=True)}


def _count(spec: dict) -> int:
    return sum(len(t["x"]) for t in spec["data"] if t.get("mode") == "markers"
               and t.get("name") != "recommendation" and t.get("x") != [None])


def _xy(plans) -> set[tuple[float, float]]:
    return {(round(p["wall_clock_hours"], 6), round(p["total_cost_usd"], 6)) for p in plans}


def test_a_plan_over_many_gpus_draws_a_bounded_chart_with_every_listed_plan(monkeypatch):
    from app_pages._plan_charts import MAX_CHART_PLANS, plan_points

    at, result, downloads = _open(monkeypatch, **BIG)
    total = len(plan_points(result))
    assert total > MAX_CHART_PLANS
    spec = chart(at, "frontier_chart")
    assert _count(spec) <= MAX_CHART_PLANS
    drawn = _markers(spec)
    assert _xy(result["frontier"]) <= drawn
    assert _xy(result["candidates"]) <= drawn
    # each trace keeps its fastest plan, so the fastest of each pricing model is drawn
    for pricing in {p["pricing"] for p in result["points"]}:
        assert _xy([min((p for p in result["points"] if p["pricing"] == pricing),
                        key=lambda p: p["wall_clock_hours"])]) <= drawn
    said = [m for c in at.caption if (m := THINNED.search(c.value))]
    assert len(said) == 1, [c.value for c in at.caption]
    assert said[0].group(1) == f"{_count(spec):,}" and said[0].group(2) == f"{total:,}"
    plan = json.loads(downloads["Download plan (JSON)"])
    assert "points" not in plan
    assert plan["frontier"] == result["frontier"] and plan["candidates"] == result["candidates"]


def test_a_default_plan_draws_every_plan_and_says_nothing_of_thinning(monkeypatch):
    from app_pages._plan_charts import plan_points

    at, result, downloads = _open(monkeypatch)
    spec = chart(at, "frontier_chart")
    assert _count(spec) == len(plan_points(result))
    assert _xy(plan_points(result)) <= _markers(spec)
    assert not [c.value for c in at.caption if THINNED.search(c.value)]
    assert "points" not in json.loads(downloads["Download plan (JSON)"])
