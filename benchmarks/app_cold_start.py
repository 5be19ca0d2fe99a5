#!/usr/bin/env python3
"""The app's first plan on a cold server, as a person sees it in a browser.

    python benchmarks/app_cold_start.py [--runs 3] [--catalog-cache both|warm|cold]
                                        [--launch both|gpuplan|streamlit] [--app DIR] [--json]

Each run starts a fresh server (headless, a free port on 127.0.0.1, its own empty
GPUPLAN_HOME, so no ingested probe report), as `gpuplan app` starts it (``python -m planner
app``: the command a user types, which then runs Streamlit) and as a bare ``streamlit run
app.py`` does (``--launch``; both by default, side by side: the difference is what the
wrapper costs before the browser can connect), and opens "/" in headless Chromium (Debian's
/usr/bin/chromium driven by Playwright, as tests/app/test_browser.py does; a fresh browser
context per run, so nothing is cached in the browser either). The browser process itself is
launched once, before the first server, and is not timed: a person's browser is already open.

Two kinds of cold server for each launch, each ``--runs`` times (the median is the figure):

  warm cache  the server restarts on a machine where gpuplan has run before: the parsed
              catalog is in the per-user cache (GPUPLAN_CACHE_DIR, filled once, untimed)
  cold cache  the very first start after installing: the cache directory is empty, so the
              server parses the catalog's CSV files

Times are from the moment `gpuplan app` (or `streamlit run`) is started:

  server up     /_stcore/health answers "ok" (Python, Streamlit and app.py's router loaded)
  first paint   the Plan page's title "Plan a training run" is on screen
  first plan    the recommendation ("Recommendation: …" heading) is on screen: the catalog
                loaded, the default workload planned over the whole catalog and drawn

Target (issue 19): first plan ≤ 3 s, median of the runs, on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync"]
TARGET_S = 3.0
LIMIT_S = 90  # a run that has shown nothing by then is a failure, not a figure
TITLE = "Plan a training run"
ANSWER = "Recommendation:"  # the h3 of the recommendation card: only there once planned


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(home: Path, cache: Path) -> dict:
    env = {**os.environ, "GPUPLAN_HOME": str(home), "GPUPLAN_CACHE_DIR": str(cache),
           "GPUPLAN_NO_METADATA": "1"}
    for name in ("GPUPLAN_OVERRIDES", "GPUPLAN_NO_CACHE"):
        env.pop(name, None)
    return env


def fill_cache(cache: Path, app_dir: Path = ROOT) -> None:
    """The per-user catalog cache as an earlier gpuplan command leaves it (untimed)."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-cold-") as tmp:
        subprocess.run([sys.executable, "-c", "import catalog; catalog.load_catalog()"],
                       cwd=app_dir, env=server_env(Path(tmp), cache), check=True)


def start_server(port: int, home: Path, log, app_dir: Path = ROOT,
                 cache: Path | None = None, launch: str = "gpuplan") -> subprocess.Popen:
    """``launch``: "gpuplan" runs `gpuplan app` (``python -m planner app``, as README and
    docs/app.md start it: the wrapper checks its options, then runs `streamlit run`);
    "streamlit" runs `streamlit run app.py` itself."""
    env = server_env(home, cache or home / "cache")
    options = ["--server.port", str(port), "--server.fileWatcherType", "none"]
    if launch == "gpuplan":
        command = [sys.executable, "-m", "planner", "app", *options]
        env["PYTHONPATH"] = str(app_dir)  # this app_dir's planner, as `gpuplan` there
    else:
        command = [sys.executable, "-m", "streamlit", "run", str(app_dir / "app.py"),
                   "--server.headless", "true", "--server.address", "127.0.0.1",
                   "--browser.gatherUsageStats", "false", *options]
    return subprocess.Popen(command, cwd=app_dir, env=env, stdout=log,
                            stderr=subprocess.STDOUT)


def wait_healthy(url: str, proc: subprocess.Popen, t0: float) -> float:
    while time.perf_counter() - t0 < LIMIT_S:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as r:
                if r.read().strip() == b"ok":
                    return time.perf_counter() - t0
        except OSError:
            time.sleep(0.02)
    raise RuntimeError(f"streamlit did not answer within {LIMIT_S} s")


def one_run(browser, app_dir: Path = ROOT, cache: Path | None = None,
            launch: str = "gpuplan") -> dict:
    """One fresh server and browser context; ``cache`` is the catalog cache directory (None:
    an empty one of this run's own)."""
    with tempfile.TemporaryDirectory(prefix="gpuplan-cold-") as tmp:
        home = Path(tmp) / "home"
        home.mkdir()
        port = free_port()
        url = f"http://127.0.0.1:{port}"
        with open(Path(tmp) / "streamlit.log", "wb") as log:
            t0 = time.perf_counter()
            proc = start_server(port, home, log, app_dir, cache, launch)
        context = browser.new_context(viewport={"width": 1400, "height": 1000})
        try:
            up = wait_healthy(url, proc, t0)
            page = context.new_page()
            page.goto(f"{url}/")
            page.get_by_text(TITLE).first.wait_for(timeout=LIMIT_S * 1000)
            paint = time.perf_counter() - t0
            answer = page.locator("h3", has_text=ANSWER).first
            answer.wait_for(timeout=LIMIT_S * 1000)
            first = time.perf_counter() - t0
            heading = answer.inner_text()
        finally:
            context.close()
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
    return {"server_up_s": up, "first_paint_s": paint, "first_plan_s": first,
            "recommendation": " ".join(heading.split())}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--app", type=Path, default=ROOT,
                    help="the folder whose app.py is served (default: this checkout), e.g. a "
                         "copy of an older app.py and app_pages/ to compare with")
    ap.add_argument("--catalog-cache", choices=("both", "warm", "cold"), default="both",
                    help="measure a server whose per-user catalog cache is filled (warm), empty "
                         "(cold: the first start after installing), or both")
    ap.add_argument("--launch", choices=("both", "gpuplan", "streamlit"), default="both",
                    help="start the server as `gpuplan app` does, as a bare `streamlit run "
                         "app.py`, or both side by side (default)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not CHROMIUM.exists():
        print(f"{CHROMIUM} is not installed: apt-get install chromium", file=sys.stderr)
        return 2
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("the playwright package is not installed: pip install playwright (the browser "
              "is Debian's chromium; no download)", file=sys.stderr)
        return 2
    app_dir = args.app.resolve()
    caches = ["warm", "cold"] if args.catalog_cache == "both" else [args.catalog_cache]
    launches = ["gpuplan", "streamlit"] if args.launch == "both" else [args.launch]
    kinds = [(launch, cache) for launch in launches for cache in caches]
    runs: dict[str, list[dict]] = {f"{launch} {cache}": [] for launch, cache in kinds}
    with tempfile.TemporaryDirectory(prefix="gpuplan-cache-") as shared, sync_playwright() as p:
        if "warm" in caches:
            fill_cache(Path(shared), app_dir)
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True,
                                    args=CHROMIUM_FLAGS)
        try:
            for _ in range(args.runs):  # interleaved: a busy spell hits every kind alike
                for launch, cache in kinds:
                    runs[f"{launch} {cache}"].append(one_run(
                        browser, app_dir, Path(shared) if cache == "warm" else None, launch))
        finally:
            browser.close()
    keys = ("server_up_s", "first_paint_s", "first_plan_s")
    median = {kind: {k: statistics.median(r[k] for r in rs) for k in keys}
              for kind, rs in runs.items()}
    met = {kind: m["first_plan_s"] <= TARGET_S for kind, m in median.items()}
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "app": str(app_dir), "runs": runs,
                          "median": median, "target_first_plan_s": TARGET_S, "met": met},
                         indent=2))
        return 0
    print(f"app cold start: {args.runs} fresh servers per kind, {os.cpu_count()} CPUs, "
          f"load average {os.getloadavg()[0]:.1f} (seconds from starting `gpuplan app` or "
          "`streamlit run app.py` to what the browser shows)")
    print(f"{'launch, catalog cache':>22}  {'run':>6}  {'server up':>10}  {'first paint':>12}  "
          f"{'first plan':>11}")
    for kind, rs in runs.items():
        for i, r in enumerate(rs, 1):
            print(f"{kind:>22}  {i:>6}  {r['server_up_s']:>10.2f}  {r['first_paint_s']:>12.2f}  "
                  f"{r['first_plan_s']:>11.2f}")
        m = median[kind]
        print(f"{kind:>22}  {'median':>6}  {m['server_up_s']:>10.2f}  {m['first_paint_s']:>12.2f}"
              f"  {m['first_plan_s']:>11.2f}   target ≤ {TARGET_S:.1f} s: "
              f"{'met' if met[kind] else 'NOT met'}")
    last = next(iter(runs.values()))[-1]
    print(f"first answer: {last['recommendation']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
