#!/usr/bin/env python3
"""Predicted vs published GPU-hours for real, cited training runs.

    python benchmarks/validate_published.py [--json]

Rows come from benchmarks/published_runs.csv (each with its source; see published_runs.md).
For every run the model picks its own best parallel plan on a reference cluster of the
published accelerator and GPU count (when a source gives no count, the count used is printed
and marked "assumed"). Side by side, the spreadsheet rule users have today: GPU-hours =
tokens × 6N(+attention) FLOPs / (40% × datasheet peak). No constant here is fitted to
these rows.
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog import load_catalog  # noqa: E402
from planner import (  # noqa: E402
    Architecture,
    PlannerError,
    Workload,
    estimate,
    preset,
    preset_names,
    reference_cluster,
)
from planner._perf import ModelScalars  # noqa: E402

CONSTANT_MFU = 0.40
# Where a source publishes GPU-hours but not the GPU count, one rule for every such run:
# model it on 2048 GPUs (a common allocation for a single pre-training job in these papers).
ASSUMED_GPUS_DEFAULT = 2048
GATED = ("llama", "mistral", "qwen", "deepseek", "mixtral")


def _int(text: str) -> int | None:
    return int(float(text)) if text.strip() else None


def workload_for(row: dict) -> Workload:
    name = row["model_preset"]
    key = name.replace("llama3-1-", "llama3-")
    if key in preset_names():
        arch, seq = preset(key)
    else:
        arch = Architecture(
            layers=_int(row["layers"]), hidden=_int(row["hidden"]), heads=_int(row["heads"]),
            kv_heads=_int(row["kv_heads"]) or _int(row["heads"]),
            ffn_hidden=_int(row["ffn_hidden"]) or 4 * _int(row["hidden"]),
            vocab=_int(row["vocab"]), gated_ffn=name.startswith(GATED),
            tied_embeddings=not name.startswith(GATED), name=name)
        seq = _int(row["seq_len"])
    seq = _int(row["seq_len"]) or seq
    gbt = _int(row["global_batch_tokens"]) or 4 * 1024 * 1024
    return Workload(arch=arch, tokens=float(row["tokens"]), seq_len=seq,
                    global_batch_tokens=max(gbt, seq),
                    precision=(row["precision"] or "bf16").strip())


def published_gpu_hours(row: dict, gpus: int) -> float | None:
    if row["published_gpu_hours"].strip():
        return float(row["published_gpu_hours"])
    if row["published_wall_clock_days"].strip():
        return float(row["published_wall_clock_days"]) * 24 * gpus
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    cat = load_catalog("packaged")
    rows = list(csv.DictReader(open(ROOT / "benchmarks" / "published_runs.csv",
                                    encoding="utf-8")))
    results = []
    for row in rows:
        gpus = _int(row["gpus"]) or ASSUMED_GPUS_DEFAULT
        truth = published_gpu_hours(row, gpus or 0)
        if truth is None or gpus is None:
            results.append({"name": row["name"], "skipped": "no published GPU-hours or "
                            "wall-clock"})
            continue
        w = workload_for(row)
        try:
            cluster = reference_cluster(cat, row["accelerator"], gpus)
            est = estimate(w, cluster)
        except PlannerError as exc:
            results.append({"name": row["name"], "skipped": str(exc)})
            continue
        ms = ModelScalars.of(w)
        peak = cluster.accelerator.peak_tflops("fp8" if w.precision == "fp8" else
                                               ("fp16" if w.precision == "fp16" else "bf16"))
        naive = w.tokens * ms.model_flops_per_token() / (CONSTANT_MFU * peak * 1e12) / 3600
        results.append({
            "name": row["name"], "accelerator": cluster.accelerator.name, "gpus": gpus,
            "gpus_assumed": not row["gpus"].strip(), "published_gpu_hours": truth,
            "predicted_gpu_hours": est.gpu_hours, "error": est.gpu_hours / truth - 1,
            "constant_mfu_gpu_hours": naive, "constant_mfu_error": naive / truth - 1,
            "predicted_mfu": est.mfu, "published_mfu": float(row["published_mfu"])
            if row["published_mfu"].strip() else None, "plan": est.plan.as_dict(),
            "goodput": est.goodput.fraction, "source": row["source"]})
    scored = [r for r in results if "error" in r]
    summary = {
        "runs": len(scored),
        "median_abs_error": statistics.median(abs(r["error"]) for r in scored),
        "median_abs_error_constant_mfu": statistics.median(abs(r["constant_mfu_error"])
                                                           for r in scored),
        "median_signed_error": statistics.median(r["error"] for r in scored),
    }
    if args.json:
        print(json.dumps({"results": results, "summary": summary}, indent=2))
        return 0
    print(f"{'run':44s} {'GPU':15s} {'GPUs':>7s} {'published':>11s} {'predicted':>11s} "
          f"{'err':>7s} {'40%-MFU':>8s} {'MFU':>6s}  plan")
    for r in results:
        if "skipped" in r:
            print(f"{r['name'][:44]:44s} skipped: {r['skipped']}")
            continue
        p = r["plan"]
        print(f"{r['name'][:44]:44s} {r['accelerator']:15s} {r['gpus']:>6d}"
              f"{'*' if r['gpus_assumed'] else ' '} {r['published_gpu_hours']:>11,.0f} "
              f"{r['predicted_gpu_hours']:>11,.0f} {r['error']:>+7.1%} "
              f"{r['constant_mfu_error']:>+8.1%} {r['predicted_mfu']:>6.1%}  "
              f"tp{p['tp']} pp{p['pp']} dp{p['dp']} z{p['zero_stage']} {p['recompute']}")
    print(f"* GPU count not published: modelled on {ASSUMED_GPUS_DEFAULT} GPUs (one rule for "
          "every such run); the default 4M-token batch where none is published")
    print(f"median |error|: model {summary['median_abs_error']:.1%} over {summary['runs']} runs"
          f" (signed median {summary['median_signed_error']:+.1%}); constant 40% MFU rule "
          f"{summary['median_abs_error_constant_mfu']:.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
