"""What a 390 px phone showed badly (app sweep 2026-12-06), checked on the figures and tables
the pages hand to the browser: the Team timeline's long job names, chart titles that ran off
the screen, legends beside a plot, the Catalog's price columns, and link values that stayed in
the URL after the warning named them."""

from __future__ import annotations

import pytest

from app_pages import _charts as C

from ._apptest import app, assert_clean, chart, upload_team, warnings
from .conftest import probe_report_json

LONG_JOB = "llama3-70b-sft-instruct-v2-multilingual-longctx-ablation"
NAME60 = f"""\
name: t
jobs:
  - name: {LONG_JOB}
    team: foundation-models-research
    workload: {{model: llama3-8b, tokens: 100B}}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
  - name: {LONG_JOB}-2
    team: b
    workload: {{model: gpt2, tokens: 1B}}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
  - name: short
    team: b
    workload: {{model: gpt2, tokens: 1B}}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
"""


def assert_legend_below(layout: dict) -> None:
    legend = layout["legend"]
    assert legend["orientation"] == "h", legend
    assert legend.get("yanchor") == "bottom" and legend.get("y") == 0, legend
    assert legend.get("yref") == "container", legend


def test_the_timeline_cuts_long_job_names_and_puts_the_legend_below():
    """A 60-character job name left the timeline's plot no width at 390 px."""
    at = upload_team(NAME60)
    assert_clean(at)
    spec = chart(at, "team_timeline")
    rows = [y for t in spec["data"] if t.get("name") != "deadline" for y in t["y"]]
    assert len(set(rows)) == 3, rows  # two names alike still two rows
    assert all(len(y) <= C.SHORT_LABEL_CHARS for y in rows), rows
    assert "short" in rows
    # the whole name in the hover
    hover = [c for t in spec["data"] for row in t.get("customdata") or () for c in row]
    assert LONG_JOB in hover
    assert_legend_below(spec["layout"])
    # the title fits: what qualifies it on a line under it
    assert len(spec["layout"]["title"]["text"]) <= 30, spec["layout"]["title"]


@pytest.mark.parametrize("names", [["a" * 189, "a" * 190, "a" * 191], ["x", "x… 2", "y" * 30]])
def test_short_labels_stay_short_and_distinct(names):
    labels = C.short_labels(names)
    assert len(set(labels)) == len(names)
    assert all(len(x) <= C.SHORT_LABEL_CHARS for x in labels), labels


def test_the_matmul_title_names_the_accelerator_under_it():
    """"Matmul: measured vs datasheet (H200-SXM-141GB)" was cut at 390 px."""
    at = app("app_pages/probes.py")
    at.file_uploader(key="probe_file").set_value(
        ("r.json", probe_report_json(), "application/json")).run()
    assert_clean(at)
    title = chart(at, "matmul_chart")["layout"]["title"]
    assert title["text"] == "Matmul: measured vs datasheet"
    assert "H100" in title["subtitle"]["text"]


def test_the_catalog_shows_prices_after_the_instance_type_and_the_legend_below():
    at = app("app_pages/catalog.py")
    assert_clean(at)
    columns = list(at.dataframe[0].value.columns)
    assert columns[:4] == ["cloud", "instance_type", "usd_per_hour", "usd_per_gpu_hour"]
    layout = chart(at, "price_chart")["layout"]
    assert_legend_below(layout)
    assert len(layout["title"]["text"]) <= 30, layout["title"]


@pytest.mark.parametrize("key, given", [
    ("offers_min_gpus", "1e308"), ("offers_min_gpus", "2.5"), ("offers_max_price", "nan"),
    ("offers_max_price", "inf"), ("offers_min_gpus", "lots")])
def test_a_link_value_the_warning_names_leaves_the_url(key, given):
    """1e308, 2.5, nan and inf stayed in the URL after the warning (a reload or the copied
    link warned again); "lots", -1 and 0 were already dropped."""
    at = app("app_pages/catalog.py", **{key: given})
    assert not at.exception
    assert any(f"{key}={given} (" in w for w in warnings(at)), warnings(at)
    assert key not in at.query_params, dict(at.query_params)


def test_a_doubled_link_value_leaves_the_url_with_the_value_shown():
    """?offers_sort=pflop_price&offers_sort=gpu_price kept both in the URL after the warning
    (a reload warned again): the URL keeps the one the box shows."""
    at = app("app_pages/catalog.py", offers_sort=["pflop_price", "gpu_price"])
    assert_clean(at)
    assert at.selectbox(key="offers_sort").value == "gpu_price"
    assert any("offers_sort=pflop_price, gpu_price (Sort by: given 2 times, a link sets it "
               "once; showing gpu_price)" in w for w in warnings(at)), warnings(at)
    assert at.query_params["offers_sort"] in ("gpu_price", ["gpu_price"])
