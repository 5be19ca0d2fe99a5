#!/usr/bin/env python3
"""How long a 50-job team report takes over the full catalog, stage by stage:

    plan      parse the team plan, price the catalog for it and plan() every job's candidates
              (``parse_team_plan``, ``priced_catalog``, ``job_candidates``)
    allocate  the team MILP over those candidates (``allocate_candidates``)
    render    the HTML report (``planner.reports.render``; no matplotlib: its charts are SVG
              written in plain Python)

    python benchmarks/team_report_speed.py [--jobs 50] [--shapes distinct,repeated,restricted]
                                           [--workers 1,2] [--json]

Three shapes of plan, each run with every ``--workers`` count (processes for the plan() calls):

  distinct    every job a different workload (model × tokens × window): plan() runs 50 times
  repeated    50 jobs drawn from 10 distinct (workload, window, filters) — a team running
              sweeps and re-runs; identical pairs are planned once
  restricted  every job distinct, but each limited to one cloud (round robin), as teams with
              one provider's commitments do

Each row runs in a fresh process (the planner keeps in-process caches: a second plan of the
same shapes in one process would be faster than any user's run) with the process settings
of `gpuplan report` (``planner.cli.process_settings``: one BLAS thread, malloc keeping freed
memory). In that process the catalog is loaded and ``planner.reports`` imported before the
clock starts; both are timed on their own (catalog s, report import s), and "process s" is
the child's whole wall time, Python's start-up and every import included.

Target (issue 19): plan + allocate + render ≤ 2 s for 50 jobs on the project's 2-core machine,
printed beside each total.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog import load_catalog
from planner.model import NO_CALIBRATION, Assumptions
from planner.team import allocate_candidates, job_candidates, parse_team_plan, priced_catalog

MODELS = ("llama3-8b", "llama2-7b", "llama2-13b", "mistral-7b", "qwen2.5-7b", "llama3-70b",
          "mixtral-8x7b", "gpt2-xl", "llama2-70b", "qwen2.5-72b")
TEAMS = ("research", "product", "infra", "applied")
SHAPES = ("distinct", "repeated", "restricted")
TARGET_S = 2.0


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


def run(cat, render, n_jobs: int, shape: str, workers: int = 1) -> dict:
    t0 = time.perf_counter()
    plan = parse_team_plan(team(n_jobs, shape), catalog=cat, source=f"{shape}.yaml")
    priced = priced_catalog(plan, cat)
    cands = job_candidates(plan, priced, Assumptions(), NO_CALIBRATION, workers=workers)
    t1 = time.perf_counter()
    alloc = allocate_candidates(plan, cands, catalog_info=priced.provenance())
    t2 = time.perf_counter()
    html = render(alloc, "html")
    t3 = time.perf_counter()
    return {"shape": shape, "workers": workers, "jobs": n_jobs,
            "distinct_plan_calls": len({(j.workload, j.window_hours, j.clouds)
                                        for j in plan.jobs}),
            "plan_s": t1 - t0, "allocate_s": t2 - t1, "render_s": t3 - t2,
            "total_s": t3 - t0, "target_s": TARGET_S, "met": t3 - t0 <= TARGET_S,
            "options": alloc.solver["options"], "rows": alloc.solver["rows"],
            "optimal": alloc.solver["optimal"], "cost_usd": alloc.totals["cost_usd"],
            "html_bytes": len(html)}


def child(n_jobs: int, shape: str, workers: int) -> dict:
    """One row, in this (fresh) process, with the process settings `gpuplan report` makes
    (one BLAS thread where numpy is not yet imported, malloc keeping what it frees)."""
    from planner.cli import process_settings

    process_settings("report")
    t = time.perf_counter()
    cat = load_catalog()
    catalog_s = time.perf_counter() - t
    t = time.perf_counter()
    from planner.reports import render

    import_s = time.perf_counter() - t
    row = run(cat, render, n_jobs, shape, workers)
    return {**row, "catalog_s": catalog_s, "report_import_s": import_s,
            "matplotlib_imported": "matplotlib" in sys.modules}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=50)
    ap.add_argument("--shapes", default=",".join(SHAPES),
                    help=f"comma-separated, of {', '.join(SHAPES)}")
    ap.add_argument("--workers", default=f"1,{os.cpu_count() or 1}",
                    help="comma-separated process counts for the plan() calls")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--child", nargs=2, metavar=("SHAPE", "WORKERS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.jobs, args.child[0], int(args.child[1]))))
        return 0
    shapes = [s for s in args.shapes.split(",") if s]
    if bad := [s for s in shapes if s not in SHAPES]:
        ap.error(f"unknown shape(s) {bad}; use {', '.join(SHAPES)}")
    workers = sorted({int(w) for w in args.workers.split(",") if w})
    rows = []
    for shape in shapes:
        for w in workers:
            t = time.perf_counter()
            out = subprocess.run([sys.executable, __file__, "--jobs", str(args.jobs),
                                  "--child", shape, str(w)], check=True, capture_output=True,
                                 text=True).stdout
            rows.append({**json.loads(out.strip().splitlines()[-1]),
                         "process_s": time.perf_counter() - t})
    if args.json:
        print(json.dumps({"cpus": os.cpu_count(), "runs": rows}, indent=2))
        return 0
    offers = len(load_catalog().offers)
    mpl = any(r["matplotlib_imported"] for r in rows)
    print(f"{args.jobs}-job team report over the full catalog ({offers} offers), "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; each row a fresh "
          f"process; matplotlib imported by the HTML report: {'yes' if mpl else 'no'}")
    head = ("shape", "workers", "plan() calls", "catalog s", "report import s", "plan s",
            "allocate s", "render s", "total s", f"≤ {TARGET_S:g} s", "process s", "options")
    print("  ".join(f"{h:>12}" for h in head))
    for r in rows:
        verdict = f"{'met' if r['met'] else 'NOT met'} {r['total_s'] / TARGET_S:.2f}x"
        print("  ".join(f"{v:>12}" for v in (
            r["shape"], r["workers"], r["distinct_plan_calls"], f"{r['catalog_s']:.2f}",
            f"{r['report_import_s']:.3f}", f"{r['plan_s']:.2f}", f"{r['allocate_s']:.2f}",
            f"{r['render_s']:.3f}", f"{r['total_s']:.2f}", verdict, f"{r['process_s']:.2f}",
            r["options"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
