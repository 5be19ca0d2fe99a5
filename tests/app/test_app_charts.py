"""Charts and tables a person can read (issue 17): dollar axes that say "$" at every tick (never a
bare "7" for both $70k and $7k), the cost-vs-time chart with every plan the result carries and
the deadline, months as categories with the budgets drawn, one colour per pricing model, and
table cells with "$", "—" for a missing value and human headings."""

from __future__ import annotations

import math
import re

import plotly.graph_objects as go
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app_pages import _charts as C

from ._apptest import app, assert_clean, chart, table_columns, texts, upload_team
from .conftest import probe_report_json


def parse_usd(label: str) -> float:
    m = re.fullmatch(r"-?\$([\d,.]+)([kMBT]?)", label)
    assert m, f"not a dollar label: {label!r}"
    scale = {"": 1, "k": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}[m[2]]
    return float(m[1].replace(",", "")) * scale


def assert_dollar_axis(axis: dict) -> None:
    labels, values = axis["ticktext"], axis["tickvals"]
    assert len(labels) >= 2 and len(set(labels)) == len(labels), labels
    for label, value in zip(labels, values, strict=True):
        assert math.isclose(parse_usd(label), value, rel_tol=0.02, abs_tol=0.005), (label, value)


# ---- the axis helpers -----------------------------------------------------------------------

# no deadline: the first example pays for plotly's lazily imported layout validators (0.5 s on
# a busy 2-core machine), which Hypothesis would report as a flaky test
@settings(deadline=None)
@given(lo=st.floats(0.01, 1e8), factor=st.floats(1.05, 1e5))
def test_every_dollar_tick_reads_as_its_own_value(lo, factor):
    fig = go.Figure()
    log = C.usd_axis(fig, [lo, lo * factor], title="cost")
    axis = fig.layout.yaxis.to_plotly_json()
    assert axis["type"] == ("log" if log else "linear")
    assert log == (factor > C.LOG_ABOVE_RATIO)
    assert_dollar_axis(axis)
    lo_shown, hi_shown = (10 ** r for r in axis["range"]) if log else axis["range"]
    assert lo_shown <= lo and hi_shown >= lo * factor


def test_seventy_and_seven_thousand_read_differently():
    """Regression: a log axis labelled both $70k and $7k as "7"."""
    fig = go.Figure()
    C.usd_axis(fig, [6_000, 80_000], title="cost")
    labels = fig.layout.yaxis.ticktext
    assert "$7k" in labels and "$70k" in labels


def test_a_narrow_range_is_linear_with_dollar_ticks():
    fig = go.Figure()
    assert not C.usd_axis(fig, [60_000, 71_000], title="cost")
    assert fig.layout.yaxis.ticktext[:2] == ("$60k", "$62k")


# ---- Plan: cost vs time ---------------------------------------------------------------------

def default_plan(**changes) -> dict:
    """The Plan page's default plan (gpt2-xl, 50B tokens, 7 days) as the page gets it."""
    import catalog
    import planner.store

    cat = catalog.load_catalog()
    workload = planner.build_workload(planner.WorkloadSpec(model="gpt2-xl", tokens="50B"))
    constraints = dict(deadline_hours=changes.pop("deadline_hours", 168.0), max_gpus=1024,
                       min_probability=0.9, pricing=("on_demand", "spot"))
    constraints.update(changes)
    result = planner.plan(workload, cat, planner.Constraints(**constraints),
                          calibration=planner.store.load_calibration(cat), top_n=10, points=True)
    return result.as_dict(points=True)


def drawn_points(spec: dict) -> set[tuple[float, float]]:
    return {(round(x, 6), round(y, 6)) for t in spec["data"] if t.get("mode") == "markers"
            and t.get("x") != [None] for x, y in zip(t["x"], t["y"], strict=True)}


def xy(plans) -> set[tuple[float, float]]:
    return {(round(p["wall_clock_hours"], 6), round(p["total_cost_usd"], 6)) for p in plans}


def test_the_cost_vs_time_chart_draws_every_plan_of_the_result_and_the_deadline():
    """Every point the planner priced (past the deadline too), every listed plan, the
    frontier, the recommendation, the deadline and the region past it. A chart point is a
    shape (cloud, type, pricing, nodes) at its cheapest region (``plan_key``): a listed plan
    of the same shape in a dearer region is drawn as that point."""
    from app_pages._plan_charts import plan_key

    at = app()
    assert_clean(at)
    spec = chart(at, "frontier_chart")
    result = default_plan()
    assert len(result["points"]) > len(result["candidates"])
    drawn = drawn_points(spec)
    assert xy(result["points"]) | xy(result["frontier"]) <= drawn
    cheapest: dict = {}
    for p in [*result["points"], *result["frontier"], *result["candidates"]]:
        if plan_key(p) not in cheapest or p["total_cost_usd"] < cheapest[plan_key(p)][
                "total_cost_usd"]:
            cheapest[plan_key(p)] = p
    assert xy(cheapest[plan_key(c)] for c in result["candidates"]) <= drawn
    names = {t.get("name") for t in spec["data"]}
    assert {"cost/time frontier", "frontier P10–P90", "recommendation"} <= names
    assert names & {"on-demand", "spot"}
    front = next(t for t in spec["data"] if t.get("name") == "cost/time frontier")
    assert sorted(front["x"]) == sorted(p["wall_clock_hours"] for p in result["frontier"])
    assert_dollar_axis(spec["layout"]["yaxis"])
    assert all(t.endswith((" h", " d")) for t in spec["layout"]["xaxis"]["ticktext"])
    shapes = spec["layout"]["shapes"]
    assert any(s["type"] == "rect" and s["x0"] == 168.0 and s["x1"] > 168.0 for s in shapes)
    assert any(s["type"] == "line" and s["x0"] == s["x1"] == 168.0 for s in shapes)
    assert spec["layout"]["xaxis"]["range"][1] > math.log10(168.0) \
        if spec["layout"]["xaxis"]["type"] == "log" else spec["layout"]["xaxis"]["range"][1] > 168


def test_plans_past_the_deadline_show_what_a_later_deadline_saves():
    """At the default minimum probability (0.9): the frontier reaches past the deadline,
    whatever the probability, so the saving of a later deadline shows."""
    at = app(deadline="20h")
    assert_clean(at)
    spec = chart(at, "frontier_chart")
    late = [t for t in spec["data"] if t.get("marker", {}).get("symbol") == "circle-open"
            and t.get("x") != [None]]
    assert late and max(x for t in late for x in t["x"]) > 20
    front = next(t for t in spec["data"] if t.get("name") == "cost/time frontier")
    assert max(front["x"]) > 20
    saving = [t for t in texts(at) if t.startswith("**A later deadline would cost less:**")]
    assert saving and "less" in saving[0] and "$" in saving[0]


def test_the_old_caption_that_hid_plans_past_the_deadline_is_gone():
    """Regression (old frontier semantics): with a minimum probability set, the frontier
    stopped at the deadline and the page asked for 0 to show later plans."""
    at = app(deadline="20h")
    captions = " ".join(c.value for c in at.caption)
    assert "Set it to 0 to see what a later deadline would save" not in captions
    assert "past the deadline" in captions


def test_the_frontier_carries_a_p10_p90_band_and_the_recommendation_error_bars():
    at = app(deadline="20h")
    spec = chart(at, "frontier_chart")
    result = default_plan(deadline_hours=20.0)
    band = next(t for t in spec["data"] if t.get("name") == "frontier P10–P90")
    assert band["fill"] == "toself"
    for p in result["frontier"]:  # the band's corners include every frontier plan's range
        assert any(math.isclose(x, p["wall_clock_hours_p10"]) for x in band["x"])
        assert any(math.isclose(x, p["wall_clock_hours_p90"]) for x in band["x"])
        assert any(math.isclose(y, p["total_cost_usd_p90"]) for y in band["y"])
    rec, star = result["recommendation"], next(t for t in spec["data"]
                                               if t.get("name") == "recommendation")
    assert star["x"] == [rec["wall_clock_hours"]] and star["y"] == [rec["total_cost_usd"]]
    assert math.isclose(star["error_x"]["array"][0],
                        rec["wall_clock_hours_p90"] - rec["wall_clock_hours"])
    assert math.isclose(star["error_x"]["arrayminus"][0],
                        rec["wall_clock_hours"] - rec["wall_clock_hours_p10"])
    assert math.isclose(star["error_y"]["array"][0],
                        rec["total_cost_usd_p90"] - rec["total_cost_usd"])
    lo, hi = spec["layout"]["yaxis"]["range"]
    log = spec["layout"]["yaxis"]["type"] == "log"
    top = max(p["total_cost_usd_p90"] for p in result["frontier"])
    assert (10 ** hi if log else hi) >= top  # the axis shows the whole band


def test_plans_over_the_budget_are_drawn_as_crosses_with_the_budget_line():
    at = app(deadline="20h", budget="400")
    assert_clean(at)
    spec = chart(at, "frontier_chart")
    over = [t for t in spec["data"] if t.get("marker", {}).get("symbol") == "x-thin-open"
            and t.get("x") != [None]]
    assert over and min(y for t in over for y in t["y"]) > 400
    names = {t.get("name") for t in spec["data"]}
    assert {"meets the deadline and limits", "misses the deadline",
            "over the budget or quotas"} <= names
    label = next(a for a in spec["layout"]["annotations"] if a["text"].startswith("budget"))
    assert label["text"] == "budget $400"
    y = label["y"]  # a log axis takes log10 coordinates
    assert math.isclose(10 ** y if spec["layout"]["yaxis"]["type"] == "log" else y, 400)


def test_the_candidates_table_has_dollars_human_headings_and_no_none():
    at = app()
    columns = table_columns(at.dataframe[0])
    headings = [c["label"] for c in columns.values()]
    assert "Total cost" in headings and "Instance type" in headings
    assert not [h for h in headings if "_" in h]
    assert columns["total_cost_usd"]["format"] == columns["usd_per_hour_cluster"]["format"] \
        == "dollar"
    assert columns[None]["label"] == "—"  # what an empty cell shows (not "None")
    data = at.dataframe[0].value
    assert set(data["pricing"]) <= {"on-demand", "spot"}


# ---- Catalog --------------------------------------------------------------------------------

def pricing_colours(spec: dict) -> dict[str, str]:
    return {t["name"]: t["marker"]["color"] for t in spec["data"] if t.get("showlegend", True)
            and t.get("name")}


def test_a_pricing_model_keeps_its_colour_whatever_the_filters():
    everything = pricing_colours(chart(app("app_pages/catalog.py"), "price_chart"))
    at = app("app_pages/catalog.py")
    at.multiselect(key="offers_pricing").set_value(["spot"]).run()
    only_spot = pricing_colours(chart(at, "price_chart"))
    assert only_spot == {"spot": everything["spot"]} == {"spot": C.PRICING_COLORS["spot"]}
    assert everything["on-demand"] == C.PRICING_COLORS["on_demand"]


def test_the_catalog_chart_and_table_show_dollars_and_no_none():
    at = app("app_pages/catalog.py")
    assert_dollar_axis(chart(at, "price_chart")["layout"]["yaxis"])
    columns = table_columns(at.dataframe[0])
    assert columns["usd_per_hour"] == {"label": "$/h", "format": "dollar"}
    assert columns["usd_per_gpu_hour"]["format"] == "dollar"
    assert columns[None]["label"] == "—"
    data = at.dataframe[0].value
    assert not data["flags"].map(lambda v: isinstance(v, list)).any()  # text, not lists


# ---- Probes ---------------------------------------------------------------------------------

@pytest.mark.parametrize("tflops, label", [(0.42, "0.42"), (42.5, "42.5"), (701.3, "701")])
def test_matmul_bar_labels_are_readable_at_any_scale(tflops, label):
    """Regression: a CPU run's bars were all labelled "0"."""
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("r.json", probe_report_json(bf16_tflops=tflops), "application/json")).run()
    assert_clean(at)
    bars = chart(at, "matmul_chart")["data"]
    measured = next(t for t in bars if t["name"] == "measured")
    assert label in measured["text"]


def test_message_sizes_read_in_bytes():
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("r.json", probe_report_json(), "application/json")).run()
    ticks = chart(at, "busbw_chart")["layout"]["xaxis"]["ticktext"]
    assert "1 MiB" in ticks and "1 GiB" in ticks


# ---- Team -----------------------------------------------------------------------------------

TEAM = """\
name: two months
jobs:
  - name: pretrain
    team: research
    workload: {model: gpt2-xl, tokens: 50B}
    earliest_start: 2027-03-25
    deadline: 2027-04-30
  - name: ablation
    team: product
    workload: {model: gpt2-medium, tokens: 20B}
    earliest_start: 2027-04-01
    deadline: 2027-04-20
budgets:
  "2027-03": 5000
  total: 20000
"""


def test_the_monthly_burn_has_months_as_categories_and_draws_the_budgets():
    at = upload_team(TEAM)
    assert_clean(at)
    spec = chart(at, "team_burn")
    layout = spec["layout"]
    assert layout["xaxis"]["type"] == "category"
    bars = [t for t in spec["data"] if t["type"] == "bar"]
    assert {x for t in bars for x in t["x"]} >= {"2027-04"}
    assert all(re.fullmatch(r"\d{4}-\d\d", x) for t in bars for x in t["x"])
    budget = next(t for t in spec["data"] if t.get("name") == "monthly budget")
    assert budget["x"] == ["2027-03"] and budget["y"] == [5000]
    assert any(s.get("yref") == "y2" and s["y0"] == 20000 for s in layout["shapes"])
    assert_dollar_axis(layout["yaxis"])
    assert_dollar_axis(layout["yaxis2"])
    # one scale: the months and the cumulative spend are read against the same dollars (the
    # tallest month drawn as high as the total budget misled; app review, 2026-12-07)
    assert layout["yaxis"]["range"] == layout["yaxis2"]["range"]
    assert layout["yaxis"]["tickvals"] == layout["yaxis2"]["tickvals"]
    jobs = at.table[0].value
    assert {"Job", "Cost", "Instance type", "Run (UTC)"} <= set(jobs.columns)
    assert all(v.startswith("\\$") for v in jobs["Cost"])
    cells = [str(v) for t in at.table for v in t.value.to_numpy().ravel()]
    assert "None" not in cells and "nan" not in cells
