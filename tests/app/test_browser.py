"""The app in a real browser: `streamlit run app.py` as a subprocess, headless Chromium driven
by Playwright (the Python package; the browser is Debian's /usr/bin/chromium, never a
downloaded one). Skipped when either is missing.

Set GPUPLAN_APP_SCREENSHOT=/tmp/gpuplan-app.png to keep a screenshot of the Plan page.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from .conftest import APP, ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
SERVER_START_S = 60
RENDER_S = 60

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is not installed "
                       "(apt-get install chromium)"),
]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_health(url: str, proc: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"streamlit exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.read().strip() == b"ok":
                    return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"streamlit did not answer within {SERVER_START_S} s:\n"
                f"{log.read_text()[-3000:]}")


@pytest.fixture
def server(tmp_path):
    """A Streamlit server on a free port, with its own GPUPLAN_HOME; always terminated."""
    port = free_port()
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "GPUPLAN_HOME": str(home), "GPUPLAN_NO_METADATA": "1"}
    env.pop("GPUPLAN_OVERRIDES", None)
    log = tmp_path / "streamlit.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(APP), "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


@pytest.fixture
def page(tmp_path):
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="the playwright package is not installed")
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path / "chromium-profile"), executable_path=str(CHROMIUM), headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 1000})
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def recommendation_text(page, previous: str | None = None) -> str:
    """The recommendation heading, once it is there (and differs from ``previous``)."""
    heading = page.locator("h3", has_text="Recommendation:")
    heading.first.wait_for(timeout=RENDER_S * 1000)
    deadline = time.monotonic() + RENDER_S
    while True:
        text = heading.first.inner_text()
        if previous is None or text != previous or time.monotonic() > deadline:
            return text
        time.sleep(0.05)


def test_the_plan_page_shows_a_priced_recommendation_in_a_browser(server, page, tmp_path):
    from playwright.sync_api import expect

    start = time.perf_counter()
    page.goto(f"{server}/")
    first = recommendation_text(page)
    first_s = time.perf_counter() - start
    assert "Recommendation:" in first
    assert any(c in first for c in (" aws ", " gcp ", " azure ")), first
    card = page.locator(".st-key-recommendation")
    expect(card).to_contain_text("P(finish by deadline)", timeout=RENDER_S * 1000)
    expect(card.get_by_test_id("stMetricValue").first).to_contain_text("$")
    expect(card).to_contain_text("P10–P90 $")  # the range of the cost, under it
    page.get_by_role("tab", name="Cost vs time").wait_for()
    page.locator(".js-plotly-plot").first.wait_for(timeout=RENDER_S * 1000)
    # the cost axis says "$" at every tick; the time axis says hours or days
    frontier = page.locator(".st-key-frontier_chart .js-plotly-plot")
    costs = frontier.locator(".ytick text").all_text_contents()
    assert len(costs) >= 2 and all(t.startswith("$") for t in costs), costs
    times = frontier.locator(".xtick text").all_text_contents()
    assert times and all(t.endswith((" h", " d")) for t in times), times
    legend = " ".join(frontier.locator(".legendtext").all_text_contents())
    assert "frontier P10–P90" in legend and "recommendation" in legend, legend
    shot = tmp_path / "gpuplan-app.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    if os.environ.get("GPUPLAN_APP_SCREENSHOT"):
        shutil.copy(shot, os.environ["GPUPLAN_APP_SCREENSHOT"])

    # a widget change gives a new recommendation, and the URL now carries the input
    deadline = page.get_by_label("Deadline", exact=True)
    deadline.fill("1d")
    start = time.perf_counter()
    deadline.press("Enter")
    changed = recommendation_text(page, previous=first)
    change_s = time.perf_counter() - start
    assert changed != first
    page.wait_for_url("**deadline=1d**", timeout=10_000)

    # the link is the plan: opening it afresh gives the same recommendation
    start = time.perf_counter()
    page.goto(page.url)
    assert recommendation_text(page) == changed
    link_s = time.perf_counter() - start
    print(f"\nbrowser: first render {first_s:.2f} s (cold server), deadline change "
          f"{change_s:.2f} s, shared link in a new session {link_s:.2f} s", file=sys.stderr)


def test_the_catalog_price_axis_reads_in_dollars(server, page):
    page.goto(f"{server}/catalog")
    chart = page.locator(".st-key-price_chart .js-plotly-plot")
    chart.wait_for(timeout=RENDER_S * 1000)
    prices = chart.locator(".ytick text").all_text_contents()
    assert len(prices) >= 2 and all(t.startswith("$") for t in prices), prices


def test_a_shared_link_cannot_inject_images_or_links(server, page):
    evil = "![x](https://evil.example/x.png) [click](https://evil.example) www.evil.example"
    page.goto(f"{server}/?deadline={urllib.parse.quote(evil)}")
    alert = page.get_by_test_id("stAlert").first
    alert.wait_for(timeout=RENDER_S * 1000)
    page.wait_for_timeout(500)
    assert "evil.example" in alert.inner_text()  # shown as text …
    assert page.locator('img[src*="evil.example"]').count() == 0  # … never as an image
    links = page.locator('a[href*="evil.example"]')
    assert links.count() == 0, links.evaluate_all("els => els.map(e => e.outerHTML)")
