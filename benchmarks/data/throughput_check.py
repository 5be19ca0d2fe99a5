#!/usr/bin/env python3
"""Validate benchmarks/data/throughput.csv (the measured-throughput calibration set) and print
its counts.

Checks: the header; every row has a source, table and row_ref; enumerations (framework,
accelerator, precision, sharding, recompute, attention); integer and positive numeric fields;
dp == gpus / (tp*pp*cp); the global batch is a multiple of dp (and of dp*micro_batch where the
micro-batch is known); and, where a row prints both tokens/s and TFLOP/s per GPU, which
FLOP-per-token convention the pair matches (a transcription check: a row that matches no
convention is listed). Exit status 1 if any hard check fails.

    python benchmarks/data/throughput_check.py [path/to/throughput.csv]
"""

import collections
import csv
import os
import sys

COLS = (
    "source,table,row_ref,framework,model,layers,hidden,heads,kv_heads,ffn_hidden,vocab,gated_ffn,"
    "moe_experts,moe_top_k,moe_ffn_hidden,seq_len,accelerator,gpus,gpus_per_node,inter_node_gbps,precision,"
    "tp,pp,cp,vp,ep,dp,"
    "sharding,micro_batch,global_batch_seqs,recompute,attention,tokens_per_s_per_gpu,reported_mfu_percent,"
    "reported_tflops_per_gpu,notes"
).split(",")
ENUMS = {
    "framework": {"megatron", "fsdp", "deepspeed", "hf"},
    "accelerator": {
        "A100-SXM4-40GB",
        "A100-SXM4-80GB",
        "H100-SXM5-80GB",
        "H200-SXM-141GB",
        "B200-SXM-180GB",
        "GB200-186GB",
        "MI300X",
    },
    "precision": {
        "bf16",
        "fp16",
        "fp8",
        "",
    },  # empty only where the source does not say (see notes)
    "sharding": {"none", "zero1", "zero2", "zero3"},
    "recompute": {
        "none",
        "selective",
        "full",
        "",
    },  # empty only where the source does not say (see notes)
    "attention": {"flash", "unfused"},
    "gated_ffn": {"true", "false"},
}
INT_REQUIRED = [
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "moe_experts",
    "moe_top_k",
    "moe_ffn_hidden",
    "seq_len",
    "gpus",
    "tp",
    "pp",
    "cp",
    "ep",
    "dp",
    "global_batch_seqs",
]
INT_OPTIONAL = ["gpus_per_node", "inter_node_gbps", "vp", "micro_batch"]
FLOAT_REQUIRED = ["tokens_per_s_per_gpu"]
FLOAT_OPTIONAL = ["reported_mfu_percent", "reported_tflops_per_gpu"]


# Sources that share an organisation, code base and benchmark harness are one family: hold a
# whole family out in leave-one-source-out, or the "held-out" source is predicted from its own
# siblings.
FAMILIES = [
    ("llm-foundry", "mosaicml/llm-foundry (Composer FSDP)"),
    ("torchtitan-", "pytorch/torchtitan team"),
    ("trainy-torchtitan", "Trainy on WhiteFiber (torchtitan code)"),
    ("fms-fsdp", "IBM fms-fsdp"),
    ("nemo-automodel", "NVIDIA NeMo AutoModel (FSDP2)"),
    ("nemo-24.07", "NVIDIA NeMo performance tables"),
    ("megatron-bridge-", "NVIDIA NeMo performance tables"),
    ("megatron-lm-readme-2024", "NVIDIA Megatron-LM README (2024)"),
    ("megatron-lm-paper-2021", "Narayanan et al. 2021 (Megatron-LM)"),
    ("megatron-lm-paper-2022", "Korthikanti et al. 2022 (Megatron-LM)"),
]


def family(source):
    for prefix, name in FAMILIES:
        if source.startswith(prefix):
            return name
    return source


def flops_per_token(r, causal, recompute_fwd=False):
    """Model FLOPs per token, Megatron-style (matmuls only): QKV + output projection, attention
    scores and values, MLP (x1.5 when gated), logits; x3 for forward + backward (x4 with a full
    recompute forward)."""
    L, h, a, kv = int(r["layers"]), int(r["hidden"]), int(r["heads"]), int(r["kv_heads"])
    f, V, s = int(r["ffn_hidden"]), int(r["vocab"]), int(r["seq_len"])
    gated = r["gated_ffn"] == "true"
    per_layer = (
        2 * h * h * (1 + 1 + 2 * kv / a)
        + 2 * h * f * (3 if gated else 2)
        + 4 * s * h * (0.5 if causal else 1)
    )
    fwd = L * per_layer + 2 * h * V
    return fwd * (4 if recompute_fwd else 3)


def main(path):
    rows = list(csv.DictReader(open(path, newline="")))
    header = next(csv.reader(open(path, newline="")))
    errors = []
    if header != COLS:
        errors.append(f"header differs from the documented schema: {header}")
    for i, r in enumerate(rows, 2):
        where = f"line {i} ({r.get('source')}, {r.get('row_ref')})"
        for c in ("source", "table", "row_ref", "model"):
            if not r[c].strip():
                errors.append(f"{where}: empty {c}")
        for c, allowed in ENUMS.items():
            if r[c] not in allowed:
                errors.append(f"{where}: {c}={r[c]!r} not in {sorted(allowed)}")
        if r["precision"] == "" and "precision" not in r["notes"].lower():
            errors.append(f"{where}: empty precision without a note")
        if r["recompute"] == "" and "recompute" not in r["notes"].lower():
            errors.append(f"{where}: empty recompute without a note")
        for c in INT_REQUIRED + INT_OPTIONAL:
            v = r[c]
            if v == "" and c in INT_OPTIONAL:
                continue
            try:
                iv = int(v)
            except ValueError:
                errors.append(f"{where}: {c}={v!r} is not an integer")
                continue
            if iv < 0 or (iv == 0 and not c.startswith("moe_")):
                errors.append(f"{where}: {c}={iv} out of range")
        for c in FLOAT_REQUIRED + FLOAT_OPTIONAL:
            v = r[c]
            if v == "" and c in FLOAT_OPTIONAL:
                continue
            try:
                if float(v) <= 0:
                    errors.append(f"{where}: {c}={v} not positive")
            except ValueError:
                errors.append(f"{where}: {c}={v!r} is not a number")
        try:
            g, tp, pp, cp, dp = (int(r[c]) for c in ("gpus", "tp", "pp", "cp", "dp"))
            if g != dp * tp * pp * cp:
                errors.append(f"{where}: dp={dp} but gpus/(tp*pp*cp) = {g}/({tp}*{pp}*{cp})")
            gbs = int(r["global_batch_seqs"])
            if gbs % dp:
                errors.append(f"{where}: global batch {gbs} not a multiple of dp {dp}")
            if (
                r["micro_batch"]
                and gbs % (dp * int(r["micro_batch"]))
                and r["source"] != "llm-foundry"
            ):
                errors.append(f"{where}: global batch {gbs} not a multiple of dp*micro_batch")
            if r["gpus_per_node"] and tp > int(r["gpus_per_node"]) * (
                18 if r["accelerator"] == "GB200-186GB" else 1
            ):
                errors.append(f"{where}: tp {tp} above the NVLink domain")
            if int(r["kv_heads"]) > int(r["heads"]) or int(r["heads"]) % int(r["kv_heads"]):
                errors.append(
                    f"{where}: kv_heads {r['kv_heads']} does not divide heads {r['heads']}"
                )
        except ValueError:
            pass

    # FLOP-convention consistency of (tokens/s, TFLOP/s) pairs: a transcription check.
    conv = collections.defaultdict(collections.Counter)
    unmatched = []
    for r in rows:
        if not r["reported_tflops_per_gpu"]:
            continue
        implied = float(r["reported_tflops_per_gpu"]) * 1e12 / float(r["tokens_per_s_per_gpu"])
        cands = {
            "non-causal": flops_per_token(r, False),
            "causal": flops_per_token(r, True),
            "non-causal+recompute-fwd": flops_per_token(r, False, True),
        }
        # llm-foundry and torchtitan count 6*N (N incl. embeddings) + attention; close to the
        # non-causal form
        best = min(cands, key=lambda k: abs(implied / cands[k] - 1))
        dev = implied / cands[best] - 1
        if abs(dev) <= 0.03:
            conv[r["source"]][best] += 1
        else:
            unmatched.append(
                (
                    r["source"],
                    r["row_ref"],
                    r["model"],
                    round(implied / 1e9, 2),
                    {k: round(v / 1e9, 2) for k, v in cands.items()},
                )
            )

    print(f"{path}: {len(rows)} rows, {len(header)} columns")
    by = collections.Counter((r["source"], r["accelerator"], r["framework"]) for r in rows)
    print("\nrows by source x accelerator x framework")
    for (s, a, f), n in sorted(by.items()):
        print(f"  {s:32s} {a:16s} {f:9s} {n:4d}")
    for key in ("framework", "accelerator", "precision", "recompute", "sharding"):
        print(
            f"\nrows by {key}: "
            + ", ".join(
                f"{k or '(empty)'}={v}"
                for k, v in sorted(collections.Counter(r[key] for r in rows).items())
            )
        )
    fam = collections.Counter((r["framework"], family(r["source"])) for r in rows)
    print(
        "\nrows by framework x independent source family "
        "(group by family for leave-one-source-out):"
    )
    for (fw, fa), n in sorted(fam.items()):
        print(f"  {fw:9s} {fa:40s} {n:4d}")
    print("\nFLOP convention implied by printed TFLOP/s and tokens/s (within 3%):")
    for s, c in sorted(conv.items()):
        print(f"  {s:32s} " + ", ".join(f"{k}={v}" for k, v in c.items()))
    if unmatched:
        print(
            f"\n{len(unmatched)} rows whose TFLOP/tokens pair matches no simple convention "
            "within 3% (llm-foundry counts 6*N with N including the tied embedding; at 125M "
            "that differs from the per-matmul form):"
        )
        for u in unmatched[:20]:
            print("  ", u)
    if errors:
        print(f"\n{len(errors)} ERRORS")
        for e in errors[:50]:
            print("  ", e)
        return 1
    print("\nall hard checks passed")
    return 0


if __name__ == "__main__":
    default = os.path.join(os.path.dirname(os.path.abspath(__file__)), "throughput.csv")
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else default))
