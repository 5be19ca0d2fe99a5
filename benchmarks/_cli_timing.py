"""Timing `gpuplan` commands in fresh processes beside a bare interpreter (shared by
estimate_speed.py and plan_speed.py).

Each variant is measured round-robin with ``python -c pass`` so all see the same machine,
after one warm-up run (the OS file cache, the catalog cache the warm runs read and the
bytecode cache). Every run has GPUPLAN_HOME in a temporary folder (no ingested probe
calibration) and the user's BLAS thread variables removed (the CLI sets one thread itself, as
for a user). A *cold* variant gets an empty catalog cache (GPUPLAN_CACHE_DIR a new folder)
each run.

Bytecode: an installed package runs from its compiled bytecode (pip compiles it on install;
an editable install writes it on the first import). A machine with PYTHONDONTWRITEBYTECODE
set (this project's development machines are) never writes it, and an editable install there
compiles gpuplan's ~100 modules from source on every run (~50 ms). So every run here uses a
bytecode cache of its own (PYTHONPYCACHEPREFIX in the temporary folder, written by the
warm-up for the interpreter, its libraries and gpuplan alike); a *source* variant runs with
that cache less gpuplan's own modules and writes nothing: what such a machine pays.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def speed_args(doc: str, runs: int):
    """The options estimate_speed and plan_speed share: ``--runs N`` and one of
    ``--cli-only`` (fresh processes only) or ``--in-process-only``."""
    import argparse

    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=runs)
    only = parser.add_mutually_exclusive_group()
    only.add_argument("--cli-only", action="store_true")
    only.add_argument("--in-process-only", action="store_true")
    return parser.parse_args()


def cli_env(tmp: Path, **extra: str) -> dict:
    env = {**os.environ, "GPUPLAN_HOME": str(tmp / "home"), "GPUPLAN_NO_METADATA": "1",
           "GPUPLAN_CACHE_DIR": str(tmp / "cache"), "PYTHONPYCACHEPREFIX": str(tmp / "pyc"),
           **extra}
    for variable in ("GPUPLAN_OVERRIDES", "GPUPLAN_NO_CACHE", "OPENBLAS_NUM_THREADS",
                     "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE",
                     "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        env.pop(variable, None)
    return env


def _without_gpuplan_bytecode(prefix: Path, tmp: Path) -> Path:
    """A copy of the bytecode cache ``prefix`` without gpuplan's own modules (the cache
    mirrors source paths under the prefix)."""
    import shutil

    source = tmp / "pyc-source"
    shutil.copytree(prefix, source)
    for package in ("catalog", "planner", "probes"):
        shutil.rmtree(source / (ROOT / package).relative_to(ROOT.anchor), ignore_errors=True)
    return source


def wall(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, check=False)
    elapsed = time.perf_counter() - t
    if done.returncode not in (0, 2):  # 2: an infeasible plan still searched
        sys.exit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr.decode()[-3000:]}")
    return elapsed


def end_to_end(variants: dict[str, list[str]], runs: int, *, cold: frozenset[str] = frozenset(),
               source: frozenset[str] = frozenset(), unkept: frozenset[str] = frozenset(),
               **env_extra: str) -> dict[str, list[float]]:
    """Wall seconds of ``python -c pass`` ("pass") and of each variant (label → gpuplan
    arguments), round-robin; labels in ``cold`` run with an empty cache, labels in ``source``
    without gpuplan's bytecode (module docstring), labels in ``unkept`` with the catalog cache
    but without the model evaluations kept on disk (``eval-*.bin`` removed before each run; the
    run writes them again for the next label)."""
    py = sys.executable
    times: dict[str, list[float]] = {"pass": [], **{label: [] for label in variants}}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        env = cli_env(tmp, **env_extra)
        for label, args in variants.items():  # warm-up: the caches (module docstring),
            if label not in cold | unkept:  # the evaluations each warm label keeps included
                wall([py, "-m", "planner", *args], env)
        wall([py, "-c", "pass"], env)
        source_env = {**env, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPYCACHEPREFIX": str(
            _without_gpuplan_bytecode(Path(env["PYTHONPYCACHEPREFIX"]), tmp))} \
            if source else env  # the copy of the bytecode cache only when a label needs it
        for i in range(runs):
            times["pass"].append(wall([py, "-c", "pass"], env))
            for label, args in variants.items():
                run_env = source_env if label in source else env
                if label in cold:
                    run_env = {**run_env, "GPUPLAN_CACHE_DIR": str(tmp / f"cold-{i}")}
                if label in unkept:
                    for kept in Path(run_env["GPUPLAN_CACHE_DIR"]).glob("eval-*.bin"):
                        kept.unlink()
                times[label].append(wall([py, "-m", "planner", *args], run_env))
    return times


def print_end_to_end(title: str, times: dict[str, list[float]], rows: dict[str, str],
                     target_s: float, targeted: frozenset[str]) -> None:
    """One line per label of ``rows`` (label → what it is): median, min, ratio to and excess
    over ``python -c pass``, and for labels in ``targeted`` the target and the ratio to it."""
    base = statistics.median(times["pass"])
    width = max(len(what) for what in rows.values())
    print(f"{title} — fresh processes, median of {len(times['pass'])} (min), round-robin "
          "with python -c pass")
    print(f"  {'':{width}s} {'median s':>9s} {'min s':>7s} {'x pass':>7s} {'- pass s':>9s} "
          f"{'target s':>9s} {'ratio':>6s}")
    for label, what in rows.items():
        med, low = statistics.median(times[label]), min(times[label])
        target = f"{target_s:9.2f} {med / target_s:6.2f}" if label in targeted else ""
        print(f"  {what:{width}s} {med:9.3f} {low:7.3f} {med / base:7.1f} {med - base:9.3f} "
              f"{target}")
