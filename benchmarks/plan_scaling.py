#!/usr/bin/env python3
"""How `plan` time grows with the GPU limit: a 7B model (llama2-7b, 1T tokens, 14 days) over
the packaged catalog at max GPUs 1,024 and 16,384.

    python benchmarks/plan_scaling.py [--runs 7] [--json]

Each limit runs in a fresh process with an empty cache directory and the settings `gpuplan
plan` gives its own process (``planner.cli.process_settings``: without malloc keeping the
memory it frees, each warm call paid page faults for its 170k-candidate arrays, 21 instead of
12 ms at 16,384 GPUs): the first `plan()` call there
is *cold* (the model is timed for every instance shape and node count, then kept for the
process and on disk), *kept* is a call after forgetting what the process kept (what a new
process pays: the evaluations read from disk), the median of ``--runs`` further calls is
*warm* (what the app, a team report's jobs or a second plan pay). Times are
in-process wall clock and CPU; peak RSS is the process's. Printed: both limits side by side,
the 16,384 / 1,024 ratios (issue #19's target: ≤ 1.5× warm) and how large the answer is (the
frontier grows with the limit: every extra candidate there is described in full).

Then, unless ``--in-process-only``, what a user waits: ``gpuplan plan … --json`` at both limits
in fresh processes with the catalog cache and the kept evaluations present, round-robin with
``python -c pass`` (``_cli_timing``), and the ratio of their medians — the JSON lists every
frontier plan, so the larger answer is described and written in full here too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMITS = (1024, 16384)
TARGET_RATIO = 1.5
WORKLOAD = {"model": "llama2-7b", "tokens": "1T"}
DEADLINE = "14d"


def measure(max_gpus: int, runs: int) -> dict:
    """In this process: one cold plan, then ``runs`` warm ones."""
    import resource
    import time

    import catalog
    from planner import Constraints, WorkloadSpec, build_workload, parse_deadline, plan
    from planner.cli import process_settings

    process_settings("plan")  # what `gpuplan plan` sets: one BLAS thread, malloc keeping memory
    cat = catalog.load_catalog("packaged")
    workload = build_workload(WorkloadSpec(**WORKLOAD))
    c = Constraints(deadline_hours=parse_deadline(DEADLINE), max_gpus=max_gpus)
    from planner.search import clear_caches

    plan(build_workload(WorkloadSpec(model="gpt2", tokens="1B")), cat,
         Constraints(deadline_hours=24, max_gpus=8))  # imports and catalog, not this shape
    t, cpu = time.perf_counter(), time.process_time()
    result = plan(workload, cat, c)  # the cache directory is empty: the model runs
    cold = (time.perf_counter() - t, time.process_time() - cpu)
    clear_caches()  # as a new process: the evaluations the cold call kept are read from disk
    t, cpu = time.perf_counter(), time.process_time()
    plan(workload, cat, c)
    kept = (time.perf_counter() - t, time.process_time() - cpu)
    wall, cpus = [], []
    for _ in range(runs):
        t, cpu = time.perf_counter(), time.process_time()
        result = plan(workload, cat, c)
        wall.append(time.perf_counter() - t)
        cpus.append(time.process_time() - cpu)
    rec = result.recommendation
    return {"max_gpus": max_gpus, "cold_s": cold[0], "cold_cpu_s": cold[1], "kept_s": kept[0],
            "warm_s": statistics.median(wall), "warm_cpu_s": statistics.median(cpus),
            "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "model_evaluations": result.evaluated, "frontier": len(result.frontier),
            "recommendation": f"{rec.nodes}x {rec.offer.instance_type} {rec.offer.pricing} "
                              f"${rec.cost_usd:,.0f}" if rec else "infeasible"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=7, help="warm runs per limit (median)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--in-process-only", action="store_true",
                    help="skip the end-to-end runs in fresh processes")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        sys.path.insert(0, str(ROOT))
        print(json.dumps(measure(args.child, args.runs)))
        return 0
    import tempfile

    rows = []
    for limit in LIMITS:
        with tempfile.TemporaryDirectory() as cache:  # no evaluation kept from other runs
            env = {**os.environ, "GPUPLAN_NO_METADATA": "1", "GPUPLAN_CACHE_DIR": cache}
            env.pop("GPUPLAN_NO_CACHE", None)
            out = subprocess.run([sys.executable, __file__, "--child", str(limit), "--runs",
                                  str(args.runs)], capture_output=True, text=True, env=env,
                                 check=True, cwd=ROOT)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    small, large = rows
    ratio = {k: large[k] / small[k]
             for k in ("cold_s", "cold_cpu_s", "kept_s", "warm_s", "warm_cpu_s")}
    cli = None if args.in_process_only else _end_to_end(args.runs)
    if args.json:
        print(json.dumps({"runs": rows, "ratio_16384_over_1024": ratio,
                          "target_ratio": TARGET_RATIO, "end_to_end": cli}, indent=2))
        return 0
    print(f"plan() for {WORKLOAD['model']} {WORKLOAD['tokens']} tokens, {DEADLINE}, packaged "
          f"catalog; cold = first call in a fresh process, warm = median of {args.runs}")
    head = ("max GPUs", "cold s", "cold CPU s", "kept s", "warm s", "warm CPU s", "peak RSS MiB",
            "model evals", "frontier", "recommendation")
    print("  ".join(f"{h:>12}" for h in head))
    for r in rows:
        print("  ".join(f"{v:>12}" for v in (
            f"{r['max_gpus']:,}", f"{r['cold_s']:.3f}", f"{r['cold_cpu_s']:.3f}",
            f"{r['kept_s']:.3f}",
            f"{r['warm_s']:.3f}", f"{r['warm_cpu_s']:.3f}", f"{r['peak_rss_mib']:.0f}",
            f"{r['model_evaluations']:,}", r["frontier"], r["recommendation"])))
    met = ratio["warm_cpu_s"] <= TARGET_RATIO
    print(f"16,384 / 1,024: warm {ratio['warm_s']:.2f}x (CPU {ratio['warm_cpu_s']:.2f}x), cold "
          f"{ratio['cold_s']:.2f}x (CPU {ratio['cold_cpu_s']:.2f}x); target ≤ "
          f"{TARGET_RATIO}x warm: {'met' if met else 'NOT met'}; kept (a new process, the "
          f"model's evaluations read from disk) {ratio['kept_s']:.2f}x; the frontier (described in "
          f"full) has {large['frontier']} candidates at 16,384 GPUs, {small['frontier']} at "
          "1,024")
    if cli is not None:
        print(f"end to end (`gpuplan plan … --json`, fresh processes, warm caches, median of "
              f"{args.runs}, round-robin): python -c pass {cli['pass_s']:.3f} s, "
              + ", ".join(f"{limit:,} GPUs {cli[f'{limit}_s']:.3f} s" for limit in LIMITS)
              + f"; 16,384 / 1,024: {cli['ratio']:.2f}x")
    return 0


def _end_to_end(runs: int) -> dict:
    """Medians of fresh ``gpuplan plan --json`` processes at both limits (``_cli_timing``)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _cli_timing import end_to_end

    args = ["plan", "--model", WORKLOAD["model"], "--tokens", WORKLOAD["tokens"],
            "--deadline", DEADLINE, "--json", "--max-gpus"]
    times = end_to_end({str(limit): [*args, str(limit)] for limit in LIMITS}, runs)
    out = {"pass_s": statistics.median(times["pass"]),
           **{f"{limit}_s": statistics.median(times[str(limit)]) for limit in LIMITS}}
    out["ratio"] = out[f"{LIMITS[1]}_s"] / out[f"{LIMITS[0]}_s"]
    return out


if __name__ == "__main__":
    sys.exit(main())
