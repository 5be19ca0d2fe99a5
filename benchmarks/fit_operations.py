#!/usr/bin/env python3
"""Derive the operations layer (training time → calendar time) from published operations facts.

    python benchmarks/fit_operations.py            # print what is derived, from which facts
    python benchmarks/fit_operations.py --write    # … and store it in planner/model/_fitted.py

Data: benchmarks/data/operations.csv (sources in operations_README.md). GPU runs only (TPU
facts are listed there but not used). Nothing here reads an end-to-end GPU-hours figure.

- failure_rate_per_gpu_hour: median of the published failure rates, each converted to
  failures per GPU-hour (an MTTF of M hours for a G-GPU job is 1/(M·G)).
- restart_minutes: median of the published restart overheads (detection, rescheduling and
  reload; a range counts as its midpoint).
- evaluation_fraction: median of the published shares of time spent on evaluation.
- operational_loss_fraction: for each published effective-training-time ratio (ETTR: share of
  calendar time spent making progress), the loss the failure model (Young/Daly with the two
  constants above) does not explain: o = 1 − ETTR / goodput_model(GPUs) − e; the median.
- operations_log_sigma: root-mean-square of log(ETTR / predicted ETTR) over those runs, with
  the median loss applied — the spread of calendar time around the model.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "operations.csv"
FITTED = ROOT / "planner" / "model" / "_fitted.py"


@dataclass(frozen=True)
class Fact:
    run: str
    metric: str
    value: float
    gpus: float | None
    source: str


def _number(text: str) -> float:
    """'~2' → 2, '5-20' → 12.5 (midpoint), '0.9' → 0.9; anything else is refused."""
    t = text.strip().lstrip("~").replace(",", "")
    try:
        return float(t)
    except ValueError:
        pass
    m = re.fullmatch(r"([0-9.]+)\s*-\s*([0-9.]+)", t)
    if m:
        return (float(m.group(1)) + float(m.group(2))) / 2
    raise ValueError(text)


def load(path: Path = DATA) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def _gpus(r: dict) -> float | None:
    g = (r.get("gpus") or "").strip().lstrip(">=")
    return float(g) if g else None


def failure_rates(rows: list[dict]) -> list[Fact]:
    out = []
    for r in rows:
        m, g = r["metric"], _gpus(r)
        if "TPU" in r["run_or_cluster"]:
            continue
        try:
            v = _number(r["value"])
        except ValueError:
            continue
        if m == "unexpected_interruptions_per_gpu_hour":
            rate = v
        elif m.startswith("mttf_hours_") and g:
            rate = 1 / (v * g)
        elif m.startswith("mttf_days_") and g:
            rate = 1 / (v * 24 * g)
        elif m == "hours_between_failures" and g:
            rate = 1 / (v * g)
        elif m == "gpu_failures_per_week" and g:
            rate = v / (7 * 24 * g)
        elif m == "node_failures_per_day" and g:
            rate = v / (24 * g)  # a failed node stops the job like a failed GPU
        else:
            continue
        out.append(Fact(r["run_or_cluster"], m, rate, g, r["source"]))
    return out


def restart_minutes(rows: list[dict]) -> list[Fact]:
    out = []
    catch_up = {}
    for r in rows:
        if r["metric"] in ("mean_detection_and_diagnosis_minutes", "catch_up_minutes_after_crash"):
            catch_up.setdefault(r["run_or_cluster"], []).append(_number(r["value"]))
        if r["metric"] == "restart_overhead_minutes":
            out.append(Fact(r["run_or_cluster"], r["metric"], _number(r["value"]), None,
                            r["source"]))
    for run, parts in catch_up.items():
        if len(parts) == 2:  # MegaScale: detect and diagnose, then catch up after the crash
            out.append(Fact(run, "detection + catch-up minutes", sum(parts), None, "MegaScale"))
    return out


def evaluation_shares(rows: list[dict]) -> list[Fact]:
    return [Fact(r["run_or_cluster"], r["metric"], _number(r["value"]), _gpus(r), r["source"])
            for r in rows if r["metric"] in ("eval_fraction_of_time",
                                             "evaluation_share_of_gpu_time")]


def ettr_facts(rows: list[dict]) -> list[Fact]:
    out = []
    for r in rows:
        if "TPU" in r["run_or_cluster"] or not _gpus(r):
            continue
        if r["metric"] in ("effective_training_time_fraction", "ideal_over_calendar_ratio"):
            out.append(Fact(r["run_or_cluster"], r["metric"], _number(r["value"]), _gpus(r),
                            r["source"]))
        elif r["metric"] == "step_time_days_vs_calendar_days":
            step, cal = (float(x.strip().lstrip("~")) for x in r["value"].split("vs"))
            out.append(Fact(r["run_or_cluster"], r["metric"], min(1.0, step / cal), _gpus(r),
                            r["source"]))
    return out


def failure_goodput(gpus: float, rate: float, restart_h: float) -> float:
    """The model's failure-only goodput for a job of ``gpus`` (checkpoint cost negligible
    against restarts at these scales: τ/2 of lost work is included with τ = √(2δM) → small)."""
    mtbf = 1 / (rate * gpus)
    return 1 / (1 + restart_h / mtbf)


def derive(rows: list[dict]) -> tuple[dict, dict]:
    rates = failure_rates(rows)
    restarts = restart_minutes(rows)
    evals = evaluation_shares(rows)
    ettrs = ettr_facts(rows)
    rate = statistics.median(f.value for f in rates)
    restart = statistics.median(f.value for f in restarts)
    e = statistics.median(f.value for f in evals)
    losses = []
    for f in ettrs:
        g = failure_goodput(f.gpus, rate, restart / 60)
        losses.append(1 - f.value / g - e)
    o = max(0.0, statistics.median(losses))
    logs = []
    for f in ettrs:
        predicted = failure_goodput(f.gpus, rate, restart / 60) * (1 - e - o)
        logs.append(math.log(f.value / predicted))
    sigma = math.sqrt(statistics.fmean(x * x for x in logs))
    values = {"FAILURE_RATE_PER_GPU_HOUR": rate, "RESTART_MINUTES": restart,
              "EVALUATION_FRACTION": e, "OPERATIONAL_LOSS_FRACTION": o,
              "OPERATIONS_LOG_SIGMA": sigma}
    used = {"failure rates": rates, "restart overheads": restarts, "evaluation shares": evals,
            "effective training time": ettrs, "_losses": losses, "_logs": logs}
    return values, used


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    values, used = derive(load(args.data))
    for title in ("failure rates", "restart overheads", "evaluation shares",
                  "effective training time"):
        print(f"{title}:")
        for k, f in enumerate(used[title]):
            extra = ""
            if title == "effective training time":
                extra = (f"  unexplained loss {used['_losses'][k]:+.3f}, log(actual/model) "
                         f"{used['_logs'][k]:+.3f}")
            gpus = f" ({f.gpus:g} GPUs)" if f.gpus else ""
            print(f"  {f.value:.4g}  {f.metric}{gpus} — {f.run[:60]}{extra}")
    print("\nderived:")
    for k, v in values.items():
        print(f"  {k} = {v:.4g}")
    if args.write:
        text = FITTED.read_text(encoding="utf-8")
        for k, v in values.items():
            text, n = re.subn(rf"^{k} = .*$", f"{k} = {v!r}", text, flags=re.M)
            if n != 1:
                raise SystemExit(f"{FITTED} has no line for {k}")
        tmp = FITTED.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(FITTED)
        print(f"wrote {FITTED.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
