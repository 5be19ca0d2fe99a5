"""The Plan page's mends that only a browser shows (app sweep 2026-12-06): Back to the page
after another one, the budget box's figures, and the cost-vs-time chart on a phone. The same
server and Chromium as ``test_browser.py`` (marker ``browser``; skipped without Chromium or
the playwright package)."""

from __future__ import annotations

import pytest

from .test_browser import CHROMIUM, RENDER_S, page, recommendation_text, server  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)"),
]


def test_back_after_another_page_shows_the_plan_left(server, page):  # noqa: F811
    """/?model=llama2-7b&tokens=2T&deadline=30d, Catalog, Back: the page planned gpt2-xl 50B
    7d. Leaving the page, Streamlit pushed a bare "/" to the history (not every time: made
    certain here by giving the entry that URL), and Back's history navigation reset every
    input the URL did not name."""
    page.goto(f"{server}/?model=llama2-7b&tokens=2T&deadline=30d")
    left = recommendation_text(page)
    page.evaluate("history.replaceState(history.state, '', '/')")
    page.get_by_role("link", name="Catalog").click()
    page.wait_for_url("**/catalog", timeout=RENDER_S * 1000)
    page.get_by_test_id("stDataFrame").first.wait_for(timeout=RENDER_S * 1000)
    page.go_back()
    page.wait_for_url("**deadline=30d**", timeout=RENDER_S * 1000)  # the URL is the plan
    assert recommendation_text(page) == left
    assert "llama2-7b" in page.locator("h3, p", has_text="parameters").first.inner_text()
    assert page.get_by_label("Deadline", exact=True).input_value() == "30d"


def test_the_budget_box_shows_the_budget_the_plan_uses(server, page):  # noqa: F811
    """?budget=0.001 read "0.00" in the box (its default two decimals)."""
    page.goto(f"{server}/?tokens=1&budget=0.001")
    box = page.get_by_label("Budget, USD", exact=True)
    box.wait_for(timeout=RENDER_S * 1000)
    page.get_by_text("Without the budget:").first.wait_for(timeout=RENDER_S * 1000)
    assert box.input_value() == "0.001"


def test_the_cost_time_chart_reads_on_a_phone(server, page):  # noqa: F811
    """At 390 px the legend took half the width beside the plot, the time ticks were tilted
    into each other, and the deadline's label ran off the screen under the toolbar."""
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{server}/?tokens=1.5T")
    chart = page.locator(".st-key-frontier_chart .js-plotly-plot")
    chart.wait_for(timeout=RENDER_S * 1000)
    page.wait_for_timeout(500)  # plotly lays out after it is attached
    figure = chart.bounding_box()
    plot = chart.locator(".nsewdrag").first.bounding_box()  # the plot area
    legend = chart.locator(".legend").first.bounding_box()
    assert plot["width"] > 0.6 * figure["width"], (plot, figure)
    assert legend["y"] >= plot["y"] + plot["height"]  # under the plot, not beside it
    assert legend["x"] + legend["width"] <= figure["x"] + figure["width"] + 1
    ticks = chart.locator(".xtick text")
    assert ticks.count() >= 2
    boxes = [ticks.nth(i).bounding_box() for i in range(ticks.count())]
    for t in range(ticks.count()):
        assert "rotate" not in (ticks.nth(t).get_attribute("transform") or "")
    boxes.sort(key=lambda b: b["x"])
    assert all(a["x"] + a["width"] <= b["x"] for a, b in zip(boxes, boxes[1:], strict=False))
    label = chart.locator(".annotation", has_text="deadline").first.bounding_box()
    assert figure["x"] <= label["x"] and label["x"] + label["width"] <= figure["x"] + \
        figure["width"]
    assert label["y"] >= plot["y"] - 1  # inside the plot's top, under the toolbar
