#!/usr/bin/env python3
"""Loading the packaged catalog, parsed (cold) and from the per-user cache (warm), and a few
CLI wall times — each in fresh processes, round-robin with ``python -c pass``.

    cold   GPUPLAN_CACHE_DIR a new, empty folder each run: the CSV files are parsed and
           validated (~14,500 offers) and the cache is written
    off    GPUPLAN_NO_CACHE=1: parsed and validated, nothing written
    warm   the cache present: the records are rebuilt from it; the offers are built on first
           use, so "warm, offers built" is what `plan` pays and "warm" what `estimate` pays

"load alone" is a row minus ``import catalog``.

Targets (Foundation issue): cold load < 150 ms, `gpuplan --help` < 300 ms.

    python benchmarks/catalog_load.py [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from _cli_timing import cli_env, wall  # noqa: E402

RUNS = 7
LOAD_TARGET_MS = 150.0
HELP_TARGET_MS = 300.0
LOAD = "import catalog; catalog.load_catalog('packaged')"
LOAD_OFFERS = "import catalog; len(catalog.load_catalog('packaged').offers)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    opts = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = cli_env(tmp)
        off = {**env, "GPUPLAN_NO_CACHE": "1"}
        rows = {  # label: (command, environment or a function of the run's index, target ms)
            "python -c pass (interpreter start)": ([py, "-c", "pass"], env, None),
            "import catalog": ([py, "-c", "import catalog"], env, None),
            "import + load, cold (cache written)": (
                [py, "-c", LOAD_OFFERS],
                lambda i: {**env, "GPUPLAN_CACHE_DIR": str(tmp / f"cold-{i}")}, None),
            "import + load, cache off": ([py, "-c", LOAD_OFFERS], off, None),
            "import + load, warm": ([py, "-c", LOAD], env, None),
            "import + load, warm, offers built": ([py, "-c", LOAD_OFFERS], env, None),
            "gpuplan --help": ([py, "-m", "planner", "--help"], env, HELP_TARGET_MS),
            "gpuplan offers --gpu H100 --json": (
                [py, "-m", "planner", "offers", "--gpu", "H100", "--json"], env, None),
            "gpuplan gpus": ([py, "-m", "planner", "gpus"], env, None),
        }
        wall([py, "-c", LOAD_OFFERS], env)  # warm the OS file cache and the catalog cache
        times: dict[str, list[float]] = {label: [] for label in rows}
        for i in range(opts.runs):  # round-robin: every row sees the same machine
            for label, (cmd, environment, _) in rows.items():
                run_env = environment(i) if callable(environment) else environment
                times[label].append(1000 * wall(cmd, run_env))
    base = statistics.median(times["python -c pass (interpreter start)"])
    imp = statistics.median(times["import catalog"])
    print(f"fresh processes, median of {opts.runs} (min), round-robin")
    print(f"  {'command':38s} {'median ms':>10s} {'min ms':>8s} {'- pass ms':>10s} "
          f"{'target ms':>10s}")
    for label, (_, _, target) in rows.items():
        med, low = statistics.median(times[label]), min(times[label])
        print(f"  {label:38s} {med:10.1f} {low:8.1f} {med - base:10.1f} "
              f"{'' if target is None else f'{target:.0f}':>10s}")
    for label in ("import + load, cold (cache written)", "import + load, cache off",
                  "import + load, warm", "import + load, warm, offers built"):
        ms = statistics.median(times[label]) - imp
        print(f"  load alone ({label.removeprefix('import + load, ')}): {ms:.1f} ms, ratio "
              f"to the {LOAD_TARGET_MS:.0f} ms target {ms / LOAD_TARGET_MS:.2f}")
    parse = statistics.median(times["import + load, cache off"])
    warm = statistics.median(times["import + load, warm, offers built"])
    print(f"  the cache makes a load with every offer {(parse - imp) / (warm - imp):.0f}x "
          "faster than parsing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
