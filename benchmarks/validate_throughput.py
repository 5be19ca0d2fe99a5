#!/usr/bin/env python3
"""Predicted vs published step throughput, with the published parallel plan pinned.

    python benchmarks/validate_throughput.py [--json] [--no-loso] [--rows] [--moe]

Rows: benchmarks/data/throughput.csv (sources in throughput_README.md). For every row the
model is run with the published framework, precision, sequence, global batch, micro-batch,
tensor/pipeline/context-parallel degrees, ZeRO stage and recomputation pinned, on a reference
node of the published accelerator (with the published inter-node network where the source
states one), with the constants in planner/_fitted.py. Printed side by side:

- model (fitted): in-sample error of the shipped constants;
- model, leave-one-source-out: each source predicted by constants fitted on the other sources
  only (benchmarks/fit_software.py) — the honest figure for a source the fit has not seen;
- the compute-only rule users have today: tokens/s per GPU = 40% × datasheet peak / model
  FLOPs per token (6·N + attention).

Targets (issue 12): median |error| ≤ 10%, every row within ±25%, LOSO median ≤ 15%. Also
reported: published configurations the memory model says would not fit (the fit ignores
memory, because those configurations ran).

``--moe`` validates the MoE rows (benchmarks/data/throughput_moe_rows.csv) instead: the
held-out columns refit only the MoE constants (fit_software.fit_moe) without the held-out
source, and a leave-one-model-out line follows (fit on four architectures, predict the fifth).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_rows import DATA, MOE_DATA, load_rows
from fit_software import (
    CALIBRATED,
    Problem,
    dense_held_out,
    moe_held_out,
    params_for,
)

from planner import Assumptions, PlannerError, estimate
from planner.model import (
    ModelScalars,
    matmul_dtype,
)

CONSTANT_MFU = 0.40


def _stats(err: np.ndarray) -> dict:
    a = np.abs(err)
    return {"rows": int(len(err)), "median_abs": float(np.median(a)),
            "max_abs": float(np.max(a)), "within_25": float(np.mean(a <= 0.25)),
            "median_signed": float(np.median(err))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--no-loso", action="store_true", help="skip the leave-one-source-out refits")
    ap.add_argument("--rows", action="store_true", help="print every row")
    ap.add_argument("--moe", action="store_true", help="the MoE rows (throughput_moe_rows.csv)")
    args = ap.parse_args(argv)
    rows = load_rows(MOE_DATA if args.moe else args.data)
    problem = Problem.build(rows)
    A = Assumptions()
    idx = list(range(len(rows)))
    meas = np.array([r.measured_tokens_per_s_per_gpu for r in rows])
    pred = problem.predict(A, idx)
    model_err = pred / meas - 1

    naive = np.empty(len(rows))
    fits = np.ones(len(rows), dtype=bool)
    for i, r in enumerate(rows):
        cl = problem.clusters[i]
        peak = cl.accelerator.peak_tflops(matmul_dtype(r.workload.precision))
        naive[i] = CONSTANT_MFU * peak * 1e12 / ModelScalars.of(r.workload) \
            .model_flops_per_token()
        a = A.with_overrides(**dict(r.overrides)) if r.overrides else A
        try:
            estimate(r.workload, cl, assumptions=a)
        except PlannerError:
            fits[i] = False
    naive_err = naive / meas - 1

    loso_err = np.full(len(rows), np.nan)
    lomo_err = None
    if not args.no_loso and args.moe:
        held = moe_held_out(problem)
        loso_err, lomo_err = np.expm1(held["by_source"]), np.expm1(held["by_model"])
    elif not args.no_loso:
        frameworks = tuple(f for f in CALIBRATED if any(r.framework == f for r in rows))
        loso_err = np.expm1(dense_held_out(problem, params_for(frameworks)))

    by_source = defaultdict(list)
    for i, r in enumerate(rows):
        by_source[r.source].append(i)
    report = {"sources": {}, "overall": {
        "model": _stats(model_err), "constant_mfu": _stats(naive_err),
        "loso": _stats(loso_err[np.isfinite(loso_err)]) if np.isfinite(loso_err).any()
        else None,
        "memory_model_rejects_published_config": int((~fits).sum())}}
    if lomo_err is not None:
        report["overall"]["leave_one_model_out"] = _stats(lomo_err)
    for src, ii in sorted(by_source.items()):
        ii = np.array(ii)
        lo = loso_err[ii]
        report["sources"][src] = {
            "framework": rows[ii[0]].framework,
            "accelerators": sorted({rows[i].accelerator for i in ii}),
            "model": _stats(model_err[ii]), "constant_mfu": _stats(naive_err[ii]),
            "loso": _stats(lo) if np.isfinite(lo).all() else None}
    if args.json:
        report["rows"] = [{"label": r.label, "measured": float(meas[i]),
                           "predicted": float(pred[i]), "error": float(model_err[i]),
                           "loso_error": None if np.isnan(loso_err[i]) else float(loso_err[i]),
                           "constant_mfu_error": float(naive_err[i]),
                           "memory_model_fits": bool(fits[i])}
                          for i, r in enumerate(rows)]
        print(json.dumps(report, indent=2))
        return 0
    if args.rows:
        print(f"{'row':90s} {'published':>9s} {'model':>9s} {'err':>7s} {'LOSO':>7s} "
              f"{'40%MFU':>7s}")
        for i, r in enumerate(rows):
            lo = "" if np.isnan(loso_err[i]) else f"{loso_err[i]:+7.1%}"
            print(f"{r.label[:90]:90s} {meas[i]:9,.0f} {pred[i]:9,.0f} {model_err[i]:+7.1%} "
                  f"{lo:>7s} {naive_err[i]:+7.1%}{'' if fits[i] else '  (memory model: no fit)'}")
        print()

    def fmt(s):
        if s is None:
            return f"{'—':>29s}"
        return (f"{s['median_abs']:6.1%} {s['max_abs']:7.1%} {s['within_25']:6.0%} "
                f"{s['median_signed']:+7.1%}")

    head = "median    max  ≤25%  signed"
    print(f"{'source':28s} {'framework':9s} {'rows':>4s} | model (fitted): {head} | "
          f"LOSO: {head} | 40% MFU rule: {head}")
    for src, s in report["sources"].items():
        print(f"{src[:28]:28s} {s['framework']:9s} {s['model']['rows']:4d} | "
              f"{'':16s}{fmt(s['model'])} | {'':6s}{fmt(s['loso'])} | "
              f"{'':14s}{fmt(s['constant_mfu'])}")
    o = report["overall"]
    print(f"{'overall':28s} {'':9s} {o['model']['rows']:4d} | {'':16s}{fmt(o['model'])} | "
          f"{'':6s}{fmt(o['loso'])} | {'':14s}{fmt(o['constant_mfu'])}")
    print(f"targets: median |error| ≤ 10% (model {o['model']['median_abs']:.1%}), every row "
          f"within ±25% (max {o['model']['max_abs']:.1%}), LOSO median ≤ 15% ("
          + (f"{o['loso']['median_abs']:.1%}" if o["loso"] else "not run") + ")")
    if lomo_err is not None:
        print(f"leave-one-model-out (MoE constants fitted on the other architectures): "
              f"{fmt(o['leave_one_model_out'])}")
    print(f"published configurations the memory model rejects: "
          f"{o['memory_model_rejects_published_config']} of {len(rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
