#!/usr/bin/env python3
"""Held-out check: predicted vs published training throughput on rows no constant was fitted on.

    python benchmarks/validate_heldout.py [--rows] [--json]

Rows: benchmarks/data/heldout_throughput.csv (119 published measurements gathered on 2026-12-03,
2026-12-06 and 2026-12-08 from sources *not* in the calibration sets of benchmarks/fit_software.py:
the NeMo 25.02 / 25.04 / 25.07 performance summaries, NeMo 24.07's fine-tuning table, the long-
sequence tables (Llama 2 7B on H100, NeMo 24.03; Llama 3 8B on B200, NeMo 25.04), the Megatron
MoE ModelZoo's Qwen3-235B and Mixtral-8x22B layouts (its 2026 commit's H100 and GB200 tables
too, and Megatron-LM's DeepSeek-V3 GB200 optimisation notes: TFLOP/s per GPU converted to
tokens/s with Megatron-LM's own causal FLOP count, as each row's notes say), the Llama 3 paper's
405B rows, MT-NLG 530B, the OLMo-core
README, VectorLM's reference-throughput table (Llama 3 8B full and LoRA fine-tuning with FSDP on
1–4 A100-80GB), the TinyLlama README (1.1B pre-training with FSDP on A100-40GB), XTuner's
speed benchmark (Llama 2 7B/70B full fine-tuning with DeepSpeed on A100-80GB; its documents are
packed with attention confined to each one, which the model cannot say: it times causal
attention over the whole sequence, so its 32K row is slower than the model's workload), the
flash-attention training README (GPT-3 125M–2.7B on one node of A100-80GB, 2022, FlashAttention
1), Lambda's FlashAttention-2 benchmark (GPT-3 2.7B on 1 and 8 A100-80GB / H100, fp16),
InternLM's training-performance page (InternLM-7B on one node of A100-80GB; its multi-node rows
ran on 4×100 Gb RoCE, not a reference node, and are left out) and FlagPerf's NVIDIA cases
(Llama 3 8B/70B with Megatron-Core on A800 (timed as A100-80GB, whose NVLink is faster) and
H100, Llama 2 70B with FlagScale on H800, Llama 2 7B with Megatron-DeepSpeed and with DeepSpeed
ZeRO-3 on A800/H800); the URL of each is in its ``reference`` column).
Models that are not presets are HF-style configs in benchmarks/data/heldout_configs/, written
from the published architectures. Never use these rows to fit anything: they are what the
model has not seen.

Each row runs `gpuplan estimate --json` (in process) with the published configuration pinned:
accelerator and GPU count (a reference node), sequence, global batch, micro-batch, tp/pp/cp/vp/
ep, ZeRO stage, recomputation, precision, framework, attention, fine-tuning. When the memory
model refuses the published recomputation (three rows: activation offloading and FP8 weights
are not modelled), recomputation is searched and the row says so. Four VectorLM full
fine-tuning rows on 1–2 GPUs stay "not expressible": they keep weights and AdamW states in
bf16 (no fp32 master copy), which the memory model does not represent. ``measure`` says what
was published: tokens/s per GPU; tokens/s summed over the row's GPUs (VectorLM), divided by
``gpus``; NeMo's TFLOP/s per GPU under its own Llama 2 / Llama 3 FLOP formula (full, non-causal
attention), converted to tokens/s with that formula; or model TFLOP/s per GPU (the Llama 3
paper), compared with the estimate's. ``confidence`` "weak" marks rows
whose source leaves a configuration fact or its FLOP convention unstated (see ``notes``); the
summary is printed for all rows and for the "stated" ones alone.

Error = predicted / measured − 1 (positive: the model is too optimistic).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import io
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "heldout_throughput.csv"
CONFIGS = ROOT / "benchmarks" / "data"


def nemo_flops_per_token(seq: int, *, L: int, h: int, kv: int, heads: int, ffn: int,
                         V: int) -> float:
    """NeMo's Llama FLOPs per token (nemo/utils/flops_formulas.py, llama2 and llama3 before
    the causal discount of 2025-08-09): attention counted in full (non-causal), as both
    long-sequence tables' TFLOP/s were computed."""
    return L * h * h * (12 + 12 * kv / heads + 18 * ffn / h + 12 * seq / h + 6 * V / (L * h))


# The published TFLOP/s measures and the architecture each formula was evaluated with.
NEMO_FORMULAS = {
    "nemo_llama2_tflops_per_gpu": {"L": 32, "h": 4096, "kv": 32, "heads": 32, "ffn": 11008,
                                   "V": 32000},
    "nemo_llama3_tflops_per_gpu": {"L": 32, "h": 4096, "kv": 8, "heads": 32, "ffn": 14336,
                                   "V": 128256},
}


def argv_for(r: dict, recompute: str | None = None) -> list[str]:
    model = r["model"]
    a = ["estimate", "--json", "--tokens", "1e10"]
    a += ["--config", str(CONFIGS / model)] if model.endswith(".json") else ["--model", model]
    a += ["--gpu", r["accelerator"], "--gpus", r["gpus"], "--seq-len", r["seq_len"],
          "--global-batch-tokens", str(int(r["global_batch_seqs"]) * int(r["seq_len"])),
          "--micro-batch", r["micro_batch"], "--tp", r["tp"], "--pp", r["pp"], "--cp", r["cp"],
          "--zero", r["zero"], "--precision", r["precision"], "--framework", r["framework"],
          "--attention", r["attention"], "--recompute", recompute or r["recompute"]]
    if r["vp"] and int(r["pp"]) > 1:
        a += ["--vp", r["vp"]]
    if r["ep"]:
        a += ["--ep", r["ep"]]
    if r["finetune"] != "none":
        a += ["--finetune", r["finetune"]]
    return a


def run_estimate(argv: list[str]) -> tuple[int, str]:
    from planner.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue() if code == 0 else err.getvalue().strip()


def evaluate(r: dict) -> dict:
    res = {k: r[k] for k in ("source", "label", "accelerator", "gpus", "precision", "framework",
                             "confidence")}
    code, text = run_estimate(argv_for(r))
    res["status"] = "pinned"
    if code != 0 and r["recompute"] != "auto":
        code, text = run_estimate(argv_for(r, "auto"))
        res["status"] = "recompute searched"
    if code != 0:
        res["status"], res["error"] = "not expressible", text.splitlines()[-1][:200]
        return res
    est = json.loads(text)
    pred_tps, pred_tflops = est["tokens_per_second_per_gpu"], est["model_tflops_per_gpu"]
    measured = float(r["measured"])
    if r["measure"] == "tokens_per_s_per_gpu":
        res["measured_tps"], res["error"] = measured, pred_tps / measured - 1
    elif r["measure"] == "tokens_per_s_total":  # summed over the row's GPUs (VectorLM)
        res["measured_tps"] = measured / int(r["gpus"])
        res["error"] = pred_tps / res["measured_tps"] - 1
    elif r["measure"] in NEMO_FORMULAS:
        per_token = nemo_flops_per_token(int(r["seq_len"]), **NEMO_FORMULAS[r["measure"]])
        res["measured_tps"] = measured * 1e12 / per_token
        res["error"] = pred_tps / res["measured_tps"] - 1
    else:  # model TFLOP/s per GPU, compared as published
        res["measured_tps"] = measured / pred_tflops * pred_tps
        res["error"] = pred_tflops / measured - 1
    res["predicted_tps"] = pred_tps
    return res


def summary(rows: list[dict]) -> dict:
    e = [r["error"] for r in rows if "predicted_tps" in r]
    if not e:
        return {"rows": 0}
    a = [abs(x) for x in e]
    return {"rows": len(e), "median_abs": statistics.median(a),
            "median_signed": statistics.median(e),
            "within_20": sum(x <= 0.20 for x in a) / len(a),
            "within_35": sum(x <= 0.35 for x in a) / len(a), "max_abs": max(a)}


def _line(label: str, s: dict) -> str:
    if not s["rows"]:
        return f"  {label:28s}      0"
    return (f"  {label:28s} {s['rows']:6d} {s['median_abs']:8.1%} {s['median_signed']:+8.1%} "
            f"{s['within_20']:8.0%} {s['within_35']:8.0%} {s['max_abs']:8.1%}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", action="store_true", help="print every row")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    with DATA.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    results = [evaluate(r) for r in rows]
    groups: dict[str, dict] = {"all": summary(results),
                               "stated only": summary([r for r in results
                                                       if r["confidence"] == "stated"])}
    for key in ("source", "accelerator", "precision", "framework"):
        by = defaultdict(list)
        for r in results:
            by[r[key]].append(r)
        for k in sorted(by):
            groups[f"{key}: {k}"] = summary(by[k])
    if args.json:
        print(json.dumps({"summary": groups, "rows": results}, indent=1))
        return 0
    if args.rows:
        for r in results:
            err = f"{r['error']:+7.1%}" if "predicted_tps" in r else "   —   "
            meas = f"{r['measured_tps']:10,.0f}" if "measured_tps" in r else " " * 10
            pred = f"{r['predicted_tps']:10,.0f}" if "predicted_tps" in r else " " * 10
            print(f"{r['source']:18s} {r['accelerator']:14s} {r['label'][:44]:44s} {meas} "
                  f"{pred} {err}  {r['status']}" + (f": {r['error']}" if r["status"] ==
                                                    "not expressible" else ""))
        print()
    print(f"Held-out published throughput ({len(rows)} rows, none used in any fit): "
          "error = predicted / measured − 1")
    print(f"  {'group':28s} {'rows':>6s} {'med |e|':>8s} {'signed':>8s} {'±20%':>8s} "
          f"{'±35%':>8s} {'max':>8s}")
    for label, s in groups.items():
        print(_line(label, s))
    skipped = [r for r in results if r["status"] == "not expressible"]
    searched = sum(r["status"] == "recompute searched" for r in results)
    print(f"{searched} rows with recomputation searched (the memory model refused the "
          f"published one); {len(skipped)} not expressible"
          + "".join(f"\n  {r['label']} on {r['accelerator']}: {r['error']}" for r in skipped))
    return 0


if __name__ == "__main__":
    sys.exit(main())
