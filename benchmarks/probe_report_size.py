#!/usr/bin/env python3
"""Seconds of `probe ingest`, then `estimate` and `probe show`, for a normal probe report
and for one padded to 40,000 matmul points (6.7 MB, under the store's 16 MiB limit), side by
side in one run.

A tester's padded report took a minute to ingest and made every later `estimate`, `plan` and
`probe show` ~25x slower (each read re-parsed it, resolving type hints once per object). The
parser now refuses lists longer than the probes write (``probes/_report_parse.py``), so the
padded report should be refused (exit 2) in a few seconds and leave the later commands as
fast as with the normal one.

    python benchmarks/probe_report_size.py

Each report goes into a fresh GPUPLAN_HOME; one run each (the gap was tens of seconds).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
PADDED_POINTS = 40_000
COMMANDS = {
    "estimate": ["estimate", "--model", "llama3-8b", "--instance", "p5.48xlarge", "--tokens",
                 "100B"],
    "probe show": ["probe", "show"],
}


def _run(args: list[str], env: dict[str, str]) -> tuple[float, int]:
    start = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True,
                       text=True, env=env, cwd=ROOT)
    return time.perf_counter() - start, p.returncode


def reports(folder: Path) -> dict[str, Path]:
    from probe_reports import h100_report

    from probes import report_to_json

    normal = json.loads(report_to_json(h100_report()))
    padded = json.loads(json.dumps(normal))
    points = padded["matmul"]["points"]
    padded["matmul"]["points"] = (points * (PADDED_POINTS // len(points) + 1))[:PADDED_POINTS]
    out = {}
    for name, data in (("normal", normal), (f"{PADDED_POINTS:,} matmul points", padded)):
        path = folder / f"{len(out)}.json"
        path.write_text(json.dumps(data))
        out[name] = path
    return out


def main() -> int:
    folder = Path(tempfile.mkdtemp())
    print(f"{'report':24s} {'MB':>5s} {'ingest s':>9s} {'rc':>3s} "
          + " ".join(f"{k + ' s':>13s}" for k in COMMANDS))
    for name, path in reports(folder).items():
        home = tempfile.mkdtemp()
        env = dict(os.environ, GPUPLAN_HOME=home, GPUPLAN_CACHE_DIR=home + "/cache",
                   GPUPLAN_TODAY="2026-12-01", PYTHONPATH=str(ROOT))
        seconds, rc = _run(["probe", "ingest", str(path)], env)
        after = [_run(args, env)[0] for args in COMMANDS.values()]
        print(f"{name:24s} {path.stat().st_size / 1e6:5.1f} {seconds:9.2f} {rc:3d} "
              + " ".join(f"{s:13.2f}" for s in after))
    return 0


if __name__ == "__main__":
    sys.exit(main())
