"""The Team timeline, the Catalog's price chart and the Probes' matmul chart on a 390 px phone
(app sweep 2026-12-06): a long job name left the timeline's plot no width, legends beside a
plot took its width, and titles ran off the screen. The same server and Chromium as
``test_browser.py`` (marker ``browser``; skipped without Chromium or the playwright package).

Set GPUPLAN_APP_SCREENSHOT_DIR to keep a screenshot of each chart."""

from __future__ import annotations

import os

import pytest

from .conftest import probe_report_json
from .test_app_phone_mends import NAME60
from .test_browser import CHROMIUM, RENDER_S, page, server  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)"),
]


def chart_boxes(page, key: str, name: str) -> tuple[dict, dict, dict]:  # noqa: F811
    """The figure, its plot area and its legend, once the chart is drawn."""
    chart = page.locator(f".st-key-{key} .js-plotly-plot")
    chart.wait_for(timeout=RENDER_S * 1000)
    page.wait_for_timeout(500)  # plotly lays out after it is attached
    if os.environ.get("GPUPLAN_APP_SCREENSHOT_DIR"):
        chart.screenshot(path=f"{os.environ['GPUPLAN_APP_SCREENSHOT_DIR']}/{name}.png")
    return (chart.bounding_box(), chart.locator(".nsewdrag").first.bounding_box(),
            chart.locator(".legend").first.bounding_box())


def assert_reads(figure: dict, plot: dict, legend: dict | None) -> None:
    assert plot["width"] > 0.5 * figure["width"], (plot, figure)
    if legend is not None:
        assert legend["y"] >= plot["y"] + plot["height"], (legend, plot)  # under the plot


def assert_title_fits(page, key: str) -> None:  # noqa: F811
    for title in page.locator(f".st-key-{key} .js-plotly-plot").locator(
            ".gtitle, .gtitle-subtitle").all():
        box = title.bounding_box()
        assert box["x"] + box["width"] <= 390, (title.text_content(), box)


def test_the_team_timeline_reads_on_a_phone(server, page):  # noqa: F811
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{server}/team")
    page.get_by_text("Upload team YAML").click()
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "team.yaml", "mimeType": "text/yaml", "buffer": NAME60.encode()}])
    page.get_by_role("button", name="Run the allocation").click(timeout=RENDER_S * 1000)
    assert_reads(*chart_boxes(page, "team_timeline", "team_timeline"))
    assert_title_fits(page, "team_timeline")


def test_the_catalog_chart_reads_on_a_phone(server, page):  # noqa: F811
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{server}/catalog")
    assert_reads(*chart_boxes(page, "price_chart", "price_chart"))
    assert_title_fits(page, "price_chart")


def test_the_matmul_title_fits_a_phone(server, page):  # noqa: F811
    page.set_viewport_size({"width": 390, "height": 900})
    page.goto(f"{server}/probes")
    page.locator("input[type=file]").first.set_input_files(
        files=[{"name": "r.json", "mimeType": "application/json",
                "buffer": probe_report_json()}])
    chart_boxes(page, "matmul_chart", "matmul_chart")
    assert_title_fits(page, "matmul_chart")
