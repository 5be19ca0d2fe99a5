"""The app sweep of 2026-12-07 on a 390 px phone in a real browser (marker ``browser``, as
``test_browser.py``): the Catalog price chart named only every other accelerator.

Set GPUPLAN_APP_SCREENSHOT_DIR to keep a screenshot of each page checked."""

from __future__ import annotations

import os

import pytest

from .test_browser import CHROMIUM, RENDER_S, page, server  # noqa: F401

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)"),
]


def _shot(target, name: str) -> None:
    if os.environ.get("GPUPLAN_APP_SCREENSHOT_DIR"):
        target.screenshot(path=f"{os.environ['GPUPLAN_APP_SCREENSHOT_DIR']}/{name}.png")


@pytest.mark.parametrize("width", [390, 1600])
def test_the_price_chart_names_every_accelerator_apart(server, page, width):  # noqa: F811
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{server}/catalog")
    chart = page.locator(".st-key-price_chart .js-plotly-plot")
    chart.wait_for(timeout=RENDER_S * 1000)
    page.wait_for_timeout(500)  # plotly lays out after it is attached
    _shot(chart, f"price_chart_{width}")
    boxes = sorted((t.bounding_box() for t in chart.locator(".xtick text").all()),
                   key=lambda b: b["x"])
    assert len(boxes) >= 30, len(boxes)  # every accelerator (38 in the packaged catalog)
    centres = [b["x"] + b["width"] / 2 for b in boxes]
    apart = [b - a for a, b in zip(centres, centres[1:], strict=False)]
    assert min(apart) >= 7.5  # upright 8 px names this far apart do not overlap
