"""Screenshots of every page of the app at 1400×1000, as a person sees them in Chromium.

    python docs/screenshots/make_screenshots.py            # writes docs/screenshots/*.png

Starts `streamlit run app.py` on a free local port with a throw-away GPUPLAN_HOME (so no
probe report of yours shows), drives Debian's /usr/bin/chromium headless through Playwright
(the Python package only; never `playwright install`), and saves one PNG per view. Needs the
app and test extras (`pip install -e '.[test]'`) and `apt-get install chromium`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1400, "height": 1000}
WAIT_MS = 60_000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(home: Path):
    port = free_port()
    env = {**os.environ, "GPUPLAN_HOME": str(home), "GPUPLAN_NO_METADATA": "1"}
    env.pop("GPUPLAN_OVERRIDES", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
         "--server.headless", "true", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
         "--server.fileWatcherType", "none"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise SystemExit("streamlit did not start") from None
                time.sleep(0.25)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def settle(page) -> None:
    """Wait until Streamlit has finished running the script and plotly has drawn."""
    page.wait_for_timeout(500)
    page.locator('[data-testid="stStatusWidget"]').wait_for(state="detached", timeout=WAIT_MS)
    page.wait_for_timeout(1500)


def shot(page, name: str, element=None) -> None:
    """Save the viewport, scrolled (if ``element``, a CSS selector or a locator, is given) just
    far enough for that element to show."""
    if element is not None:
        locator = page.locator(element) if isinstance(element, str) else element
        locator.first.scroll_into_view_if_needed()
        page.wait_for_timeout(800)
    page.screenshot(path=str(HERE / f"{name}.png"))
    print(f"wrote docs/screenshots/{name}.png")


def probe_report_file(folder: Path) -> Path:
    from probes import report_to_json  # the real package, before tests/ joins the path

    sys.path.append(str(ROOT / "tests"))
    from probe_reports import h100_report

    path = folder / "h100-probe-report.json"
    path.write_text(report_to_json(h100_report(
        bf16_tflops=700.0, fp16_tflops=707.0,
        busbw_by_size=((2**20, 95.0), (2**26, 402.0), (2**30, 481.8)))), encoding="utf-8")
    return path


def main() -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="gpuplan-shots-") as tmp, \
            streamlit_server(Path(tmp) / "home") as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True,
                                    args=CHROMIUM_FLAGS)
        page = browser.new_page(viewport=VIEWPORT)
        # Plan: the defaults as the page opens
        page.goto(f"{url}/")
        page.locator("h3", has_text="Recommendation:").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan")
        # a tight deadline at the default probability: every plan, past the deadline too, the
        # frontier with its P10–P90 band, and what a later deadline saves
        page.goto(f"{url}/?deadline=20h")
        page.locator("h3", has_text="Recommendation:").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-cost-vs-time", page.get_by_text("A later deadline would cost less"))
        page.get_by_role("tab", name="Top candidates").click()
        settle(page)
        page.get_by_text("Warnings of").first.click()
        settle(page)
        shot(page, "plan-candidates", '[data-testid="stTabs"]')
        page.get_by_role("tab", name="Launch").click()
        settle(page)
        shot(page, "plan-launch", '[data-testid="stTabs"]')
        # a deadline only a large spot fleet meets: the capacity warning on the card
        page.goto(f"{url}/?deadline=6h")
        page.locator("h3", has_text="Recommendation:").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-capacity-warning")
        # a 1-year reservation: one plan in three regions, paid for its whole term
        page.goto(f"{url}/?pricing=reserved_1y")
        page.locator("h3", has_text="Recommendation:").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-commitment", ".st-key-recommendation")
        # the best plan per accelerator, side by side
        page.goto(f"{url}/?deadline=20h&compare=accelerator")
        page.locator(".st-key-by_group").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-compare", ".st-key-by_group")
        # over the budget: what binds, and the plan without the budget
        page.goto(f"{url}/?model=llama2-7b&tokens=1T&deadline=5d&budget=10000")
        page.locator(".st-key-relaxed_budget").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-infeasible")
        shot(page, "plan-infeasible-chart", ".st-key-frontier_chart")
        # Plan: an MoE workload by parameter count, and a link with a bad parameter
        page.goto(f"{url}/?source=params&params=47B&active_params=13B&experts=8"
                  "&experts_per_token=2&tokens=1T&deadline=30d&clouds=aws&clouds=mars")
        page.locator("h3", has_text="Recommendation:").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "plan-moe-and-bad-link")
        page.goto(f"{url}/?source=params&params=47B&seq_len=4096&global_batch_tokens=x")
        settle(page)
        shot(page, "plan-error")
        # Catalog
        page.goto(f"{url}/catalog?offers_gpu=H100-SXM5-80GB&offers_gpu=A100-SXM4-80GB"
                  "&offers_gpu=L4&offers_gpu=MI300X")
        settle(page)
        shot(page, "catalog")
        shot(page, "catalog-table", '[data-testid="stDataFrame"]')
        # Probes: upload a report (one 8×H100 node), before ingesting
        page.goto(f"{url}/probes")
        settle(page)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            str(probe_report_file(Path(tmp))))
        page.locator(".stPlotlyChart").first.wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "probes")
        # Team: the example jobs of the table, allocated
        page.goto(f"{url}/team")
        settle(page)
        page.get_by_role("button", name="Run the allocation").click()
        page.locator(".stPlotlyChart").first.wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "team")
        # Team: examples/team.yaml uploaded; it names a config.json, which the page asks for
        page.get_by_text("Upload team YAML").click()
        settle(page)
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').set_input_files(
            str(ROOT / "examples" / "team.yaml"))
        settle(page)
        shot(page, "team-config-asked", '[data-testid="stAlert"]')
        # … uploaded: several months, budgets, quotas
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(1).set_input_files(
            str(ROOT / "examples" / "llama-3.2-1b" / "config.json"))
        settle(page)
        page.get_by_role("button", name="Run the allocation").click()
        page.locator(".st-key-team_burn").wait_for(timeout=WAIT_MS)
        settle(page)
        shot(page, "team-timeline", ".st-key-team_timeline")
        shot(page, "team-burn", ".st-key-team_burn")
        shot(page, "team-tables", '[data-testid="stTable"]')
        browser.close()


if __name__ == "__main__":
    main()
