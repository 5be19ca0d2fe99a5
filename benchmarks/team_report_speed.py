#!/usr/bin/env python3
"""How long a 50-job team plan takes over the full catalog: candidates (plan() per job), the
MILP, and the HTML report — side by side for three shapes of plan.

    python benchmarks/team_report_speed.py [--jobs 50] [--json]

  distinct    every job a different workload (model × tokens × window): plan() runs 50 times
  repeated    50 jobs drawn from 10 distinct (workload, window, filters) — a team running
              sweeps and re-runs; identical pairs are planned once
  restricted  every job distinct, but each limited to one cloud (round robin), as teams with
              one provider's commitments do
Target: allocation + HTML report in < 10 s for 50 jobs on a 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog import load_catalog
from planner.model import (
    NO_CALIBRATION,
    Assumptions,
)
from planner.reports import render
from planner.team import allocate_candidates, job_candidates, parse_team_plan, priced_catalog

MODELS = ("llama3-8b", "llama2-7b", "llama2-13b", "mistral-7b", "qwen2.5-7b", "llama3-70b",
          "mixtral-8x7b", "gpt2-xl", "llama2-70b", "qwen2.5-72b")
TEAMS = ("research", "product", "infra", "applied")


def team(n_jobs: int, shape: str) -> dict:
    jobs = []
    for i in range(n_jobs):
        k = i % 10 if shape == "repeated" else i
        model = MODELS[k % len(MODELS)]
        big = "70b" in model or "72b" in model or "8x7b" in model
        tokens = (20 + 5 * (k // len(MODELS))) if big else (100 + 25 * (k // len(MODELS)))
        start = dt.date(2027, 1, 4) + dt.timedelta(days=7 * (k % 20))
        job = {"name": f"job-{i:02d}-{model}", "team": TEAMS[i % len(TEAMS)],
               "workload": {"model": model, "tokens": f"{tokens}B"},
               "earliest_start": start.isoformat(),
               "deadline": (start + dt.timedelta(days=45)).isoformat(), "priority": i % 3,
               "max_gpus": 512}
        if shape == "restricted":
            job["clouds"] = [("aws", "gcp", "azure")[i % 3]]
        jobs.append(job)
    return {"name": f"benchmark {shape}", "jobs": jobs,
            "quotas": [{"cloud": "aws", "accelerator": "H100", "gpus": 1024},
                       {"cloud": "azure", "gpus": 768}],
            "budgets": {"2027Q1": 3_000_000, "2027Q2": 3_000_000}}


def run(cat, n_jobs: int, shape: str, workers: int = 1) -> dict:
    t0 = time.perf_counter()
    plan = parse_team_plan(team(n_jobs, shape), catalog=cat, source=f"{shape}.yaml")
    priced = priced_catalog(plan, cat)
    t1 = time.perf_counter()
    cands = job_candidates(plan, priced, Assumptions(), NO_CALIBRATION, workers=workers)
    t2 = time.perf_counter()
    alloc = allocate_candidates(plan, cands, catalog_info=priced.provenance())
    t3 = time.perf_counter()
    html = render(alloc, "html")
    t4 = time.perf_counter()
    return {"shape": shape, "workers": workers, "jobs": n_jobs,
            "distinct_plan_calls": len({(j.workload, j.window_hours, j.clouds)
                                        for j in plan.jobs}),
            "parse_s": t1 - t0, "candidates_s": t2 - t1, "milp_s": t3 - t2,
            "html_s": t4 - t3, "total_s": t4 - t0, "options": alloc.solver["options"],
            "rows": alloc.solver["rows"], "optimal": alloc.solver["optimal"],
            "cost_usd": alloc.totals["cost_usd"], "html_bytes": len(html)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=50)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                    help="processes for the plan() calls in the second row of each shape")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    cat = load_catalog()
    render_warm = time.perf_counter()
    import matplotlib  # noqa: F401  (import cost reported separately)

    import_s = time.perf_counter() - render_warm
    rows = [run(cat, args.jobs, shape, w) for shape in ("distinct", "repeated", "restricted")
            for w in (1, args.workers)]
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "matplotlib_import_s": import_s,
                          "runs": rows}, indent=2))
        return 0
    print(f"{args.jobs} jobs over the full catalog ({len(cat.offers)} offers), "
          f"{os.cpu_count()} CPUs; matplotlib import {import_s:.2f} s (once per process)")
    head = ("shape", "workers", "plan() calls", "candidates s", "MILP s", "HTML s", "total s",
            "options", "rows", "vs 10 s")
    print("  ".join(f"{h:>12}" for h in head))
    for r in rows:
        print("  ".join(f"{v:>12}" for v in (
            r["shape"], r["workers"], r["distinct_plan_calls"], f"{r['candidates_s']:.2f}",
            f"{r['milp_s']:.2f}", f"{r['html_s']:.2f}", f"{r['total_s']:.2f}", r["options"],
            r["rows"], f"{r['total_s'] / 10:.2f}x")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
