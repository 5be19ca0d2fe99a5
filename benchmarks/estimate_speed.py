#!/usr/bin/env python3
"""One `estimate` (workload → full parallel-plan search → best plan) in process, per size.

Target (performance-model issue): < 50 ms per estimate including the full plan search.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog import load_catalog
from planner import WorkloadSpec, build_workload, estimate, reference_cluster
from planner.model import (
    ModelScalars,
    plan_grid,
)

CASES = [("llama3-8b", "H100", 64), ("llama2-70b", "A100-80GB", 512),
         ("llama3-405b", "H100", 2048), ("mixtral-8x7b", "MI300X", 64),
         ("deepseek-v3", "H800", 2048), ("gpt2", "L4", 8)]
TARGET_MS = 50.0


def main() -> int:
    cat = load_catalog()
    print(f"{'workload':14s} {'hardware':18s} {'plans':>6s} {'median ms':>10s} {'ratio':>6s}")
    worst = 0.0
    for model, gpu, gpus in CASES:
        w = build_workload(WorkloadSpec(model=model, tokens="1T"))
        cluster = reference_cluster(cat, gpu, gpus)
        estimate(w, cluster)  # warm caches (base plan grids)
        times = []
        for _ in range(15):
            t = time.perf_counter()
            estimate(w, cluster)
            times.append(time.perf_counter() - t)
        ms = 1000 * statistics.median(times)
        grid = plan_grid(ModelScalars.of(w), cluster.gpus_per_node, [cluster.nodes],
                         w.recompute)
        plans = len(grid["tp"]) * len(grid["rc_options"])
        worst = max(worst, ms)
        print(f"{model:14s} {gpu + ' x' + str(gpus):18s} {plans:>6d} {ms:>10.2f} "
              f"{ms / TARGET_MS:>6.2f}")
    print(f"worst {worst:.2f} ms against the {TARGET_MS:.0f} ms target "
          f"(ratio {worst / TARGET_MS:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
