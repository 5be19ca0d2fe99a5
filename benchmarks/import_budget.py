#!/usr/bin/env python3
"""What `gpuplan estimate` and `gpuplan plan` import, against a budget (exit 1 above it).

Runs each command in a fresh process under ``python -X importtime`` (RUNS times, after one
warm-up that also fills the catalog cache, as a user's second run finds it) and adds up the
import time of every module. The best of the runs is compared with the budget (on a shared
machine the others measure the neighbours too). Prints the total, the ten costliest packages
and the ten costliest modules, and fails when a total is above its budget or when a module
that the command must not need is imported at all:

    pydantic   Typer coerces options with it; gpuplan's own coercion (planner/cli/_coerce.py)
               handles every option the planner has
    scipy      was used for a Poisson tail only
    rich       `--json` prints no tables
    matplotlib, pandas, streamlit, torch, boto3   other front ends and probes
    click      Typer runs its own bundled copy (typer._click); the help-wrapping patch
               imported the separate package only to patch it (~5 ms)
    statistics a normal quantile for the range's starting point; it imports decimal,
               fractions and random (~4 ms); its C function is used without them
    numpy.ma   np.unique imports it to check for a masked array (20–23 ms on 2026-12-07);
               planner.model.distinct gives the same values without it

Budgets (milliseconds of import time as -X importtime counts it, best of RUNS; 2-core
machine): on 2026-12-02 both commands measured 195 ms on a quiet machine and up to 230 ms
on a busy one (before the issue-19 work ~265 ms, pydantic included); on 2026-12-05, after
the plan stopped importing statistics, `estimate` 132 ms and `plan` 152 ms (quiet). The
budget, 210 ms, is ~40% above the quiet `plan`. Lower them when the imports get lighter:
the largest remaining shares are numpy (~35 ms), catalog's eager
``__init__`` (~35 ms, of which ``_refresh``, ``_overrides``, ``_anomalies``, ``_query`` and
yaml are not needed to plan), planner.model (~37 ms, mostly creating frozen dataclasses) and
planner.search (~20 ms, which `estimate` gets only through ``planner/__init__``).

    python benchmarks/import_budget.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RUNS = 7
COMMANDS = {  # name: (arguments, budget in ms)
    "estimate": (["estimate", "--model", "llama3-70b", "--tokens", "15T", "--gpu", "H100",
                  "--gpus", "2048", "--json"], 210),
    "plan": (["plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "14d", "--json"],
             210),
}
FORBIDDEN = ("pydantic", "scipy", "rich", "matplotlib", "pandas", "streamlit", "torch",
             "boto3", "click", "statistics")
FORBIDDEN_MODULES = ("numpy.ma",)  # a module and what is under it, not the whole package


def parse_importtime(stderr: str) -> list[tuple[int, int, int, str]]:
    """(self µs, cumulative µs, depth, module) per line of -X importtime output."""
    rows = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        self_us, cumulative_us, name = line[len("import time:"):].split("|", 2)
        depth = (len(name) - len(name.lstrip(" ")) - 1) // 2
        rows.append((int(self_us), int(cumulative_us), depth, name.strip()))
    return rows


def package_of(module: str) -> str:
    """The unit a module's time is booked to: ``planner.model``, ``catalog``, ``numpy``,
    and the standard library's modules as themselves."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "planner" and len(parts) > 1 else parts[0]


def top_packages(rows, n: int = 10) -> list[tuple[str, float]]:
    by_package: dict[str, float] = {}
    for self_us, _, _, module in rows:
        key = package_of(module)
        by_package[key] = by_package.get(key, 0.0) + self_us / 1000
    return sorted(by_package.items(), key=lambda kv: -kv[1])[:n]


def run_once(args: list[str], env: dict) -> list[tuple[int, int, int, str]]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "planner", *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode not in (0, 2):
        sys.exit(f"gpuplan {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return parse_importtime(done.stderr)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=RUNS)
    opts = parser.parse_args()
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "GPUPLAN_HOME": str(Path(tmp) / "home"),
               "GPUPLAN_CACHE_DIR": str(Path(tmp) / "cache"), "GPUPLAN_NO_METADATA": "1"}
        for variable in ("GPUPLAN_OVERRIDES", "GPUPLAN_NO_CACHE", "OPENBLAS_NUM_THREADS",
                         "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            env.pop(variable, None)  # as a user runs it: the CLI sets its own BLAS threads
        for name, (args, budget_ms) in COMMANDS.items():
            run_once(args, env)  # warm-up: OS file cache, catalog cache, .pyc files
            runs = [run_once(args, env) for _ in range(opts.runs)]
            totals = [sum(r[0] for r in rows) / 1000 for rows in runs]
            best = min(totals)
            rows = runs[totals.index(best)]
            modules = {r[3] for r in rows}
            bad = sorted(m for m in modules if m.split(".")[0] in FORBIDDEN
                         or any(m == f or m.startswith(f"{f}.") for f in FORBIDDEN_MODULES))
            over = best > budget_ms
            failed |= over or bool(bad)
            print(f"gpuplan {name}: imports {best:.0f} ms (best of {opts.runs}; median "
                  f"{statistics.median(totals):.0f}), budget {budget_ms} ms, ratio "
                  f"{best / budget_ms:.2f} — {'OVER BUDGET' if over else 'ok'}; "
                  f"{len(modules)} modules")
            print("  top 10 by package (ms, summed over its modules):")
            for package, ms in top_packages(rows):
                print(f"    {ms:7.1f}  {package}")
            print("  top 10 modules (own ms, with what they import ms):")
            for self_us, cum_us, _, module in sorted(rows, key=lambda r: -r[0])[:10]:
                print(f"    {self_us / 1000:7.1f} {cum_us / 1000:7.1f}  {module}")
            if bad:
                print(f"  FORBIDDEN imports: {', '.join(bad[:10])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
