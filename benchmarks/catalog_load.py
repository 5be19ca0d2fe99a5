#!/usr/bin/env python3
"""Cold catalog load and CLI wall times, each measured in fresh processes side by side.

Targets (Foundation issue): cold load < 150 ms, `gpuplan --help` < 300 ms.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

RUNS = 7


def wall(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    return time.perf_counter() - t


def median_ms(cmd: list[str]) -> float:
    wall(cmd)  # warm the OS file cache once; we measure a cold *process*, not a cold disk
    return 1000 * statistics.median(wall(cmd) for _ in range(RUNS))


def main() -> int:
    py = sys.executable
    baseline = median_ms([py, "-c", "pass"])
    load = median_ms([py, "-c", "import catalog; catalog.load_catalog()"])
    imp = median_ms([py, "-c", "import catalog"])
    rows = [
        ("python -c pass (interpreter start)", baseline, None),
        ("import catalog", imp, None),
        ("import + cold load_catalog()", load, 150 + baseline),
        ("gpuplan --help", median_ms([py, "-m", "planner", "--help"]), 300),
        ("gpuplan offers --gpu H100 --json", median_ms([py, "-m", "planner", "offers", "--gpu",
                                                         "H100", "--json"]), None),
        ("gpuplan gpus", median_ms([py, "-m", "planner", "gpus"]), None),
    ]
    print(f"{'command':40s} {'median ms':>10s} {'target ms':>10s}")
    for name, ms, target in rows:
        print(f"{name:40s} {ms:10.1f} {'' if target is None else f'{target:.0f}':>10s}")
    print(f"catalog load alone (load - interpreter start): {load - baseline:.1f} ms "
          f"(target < 150 ms); ratio to target {(load - baseline) / 150:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
