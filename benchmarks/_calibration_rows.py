"""Calibration rows (benchmarks/data/throughput.csv) as the planner's own inputs.

Shared by ``fit_software.py`` (fits the software constants) and ``validate_throughput.py``
(predicted vs published throughput with the published plan pinned). One row → a Workload with
the published architecture, sequence, batch, precision, framework and plan pinned, a reference
cluster of the published accelerator and GPU count (and network, where published), and the few
per-row configuration facts that are assumptions in the model (e.g. the gradient-reduction
dtype).
"""

from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from planner import Architecture, PlanPins, Workload

DATA = ROOT / "benchmarks" / "data" / "throughput.csv"
MOE_DATA = ROOT / "benchmarks" / "data" / "throughput_moe_rows.csv"  # the MoE stage's rows
SHARDING_TO_ZERO = {"none": 0, "zero1": 1, "zero2": 2, "zero3": 3}
# Sources that share an organisation, code base and benchmark harness are one family (as in
# data/throughput_check.py): leave-one-source-out holds out a whole family, and the fit weighs
# families, so a project that republished its table per release does not count many times.
FAMILIES = (
    ("llm-foundry", "llm-foundry"),
    ("torchtitan-", "torchtitan"),
    ("trainy-torchtitan", "trainy"),
    ("fms-fsdp", "fms-fsdp"),
    ("nemo-automodel", "nemo-automodel"),
    ("nemo-24.07", "nemo"),
    ("nemo-25.", "nemo"),  # NeMo 25.02/25.04 MoE rows (throughput_moe_rows.csv)
    ("megatron-bridge-", "nemo"),
    ("megatron-lm-readme-2024", "megatron-lm-readme"),
    ("megatron-lm-paper-2021", "narayanan-2021"),
    ("megatron-lm-paper-2022", "korthikanti-2022"),
)


def family(source: str) -> str:
    for prefix, name in FAMILIES:
        if source.startswith(prefix):
            return name
    return source


# Hardware the datasheet does not describe: kept in the data and printed by the validation,
# but neither fitted nor held to the targets. Reasons come from the sources themselves.
NONSTANDARD_HARDWARE = {
    ("torchtitan", "H100-SXM5-80GB"): "Meta Grand Teton H100 96 GB HBM2e at a 500 W power limit"
                                      "; the source says its peak is unknown",
}


@dataclass(frozen=True, slots=True)
class Row:
    source: str  # the independent source family
    label: str
    framework: str
    accelerator: str
    gpus: int
    gpus_per_node: int
    workload: Workload
    measured_tokens_per_s_per_gpu: float
    overrides: tuple[tuple[str, float], ...]  # per-row configuration facts (assumptions)
    nonstandard: str = ""  # why the datasheet does not describe this hardware ("" if it does)
    inter_node_gbps: float | None = None  # the published network per node (None: reference)


def _int(text: str, default: int | None = None) -> int | None:
    text = (text or "").strip()
    return int(float(text)) if text else default


def _bool(text: str) -> bool:
    return (text or "").strip().lower() in ("true", "1", "yes", "y")


def row_from_csv(r: dict) -> Row:
    layers, hidden, heads = _int(r["layers"]), _int(r["hidden"]), _int(r["heads"])
    experts = _int(r.get("moe_experts", ""), 0)
    arch = Architecture(
        layers=layers, hidden=hidden, heads=heads, kv_heads=_int(r["kv_heads"], heads),
        ffn_hidden=_int(r["ffn_hidden"]), vocab=_int(r["vocab"]), gated_ffn=_bool(r["gated_ffn"]),
        tied_embeddings="tied" in r.get("notes", "").lower(),
        experts=experts, experts_per_token=_int(r.get("moe_top_k", ""), 0) if experts else 0,
        moe_ffn_hidden=_int(r.get("moe_ffn_hidden", ""), 0) if experts else 0,
        shared_experts=_int(r.get("moe_shared_experts", ""), 0) if experts else 0,
        dense_layers=_int(r.get("moe_dense_layers", ""), 0) if experts else 0,
        head_dim=_int(r.get("head_dim", ""), 0),
        attention_params_per_layer=_int(r.get("attention_params_per_layer", ""), 0),
        name=r["model"])
    seq = _int(r["seq_len"])
    pins = PlanPins(tp=_int(r["tp"], 1), pp=_int(r["pp"], 1), cp=_int(r["cp"], 1),
                    vp=_int(r["vp"]) if _int(r["pp"], 1) > 1 and _int(r["vp"]) else None,
                    zero=SHARDING_TO_ZERO[(r["sharding"] or "none").strip()],
                    micro_batch=_int(r["micro_batch"]),  # empty: not published → searched
                    ep=_int(r.get("ep", "")) if experts else None)
    gbs = _int(r["global_batch_seqs"])
    attention = (r.get("attention") or "flash").strip()
    if attention == "flash" and "attention: triton" in r.get("notes", ""):
        attention = "triton"  # llm-foundry's tables ran attn_impl=triton (see the README)
    # Unpublished precision (the Megatron papers' "mixed precision" on A100, where fp16 and bf16
    # peaks are equal) is bf16; unpublished recomputation is searched like any unpinned choice.
    w = Workload(arch=arch, tokens=1e12, seq_len=seq, global_batch_tokens=gbs * seq,
                 precision=(r["precision"] or "bf16").strip(), framework=r["framework"].strip(),
                 attention=attention, recompute=(r["recompute"] or "auto").strip(), pins=pins)
    overrides = []
    notes = r.get("notes", "")
    # Composer's FSDP "DEFAULT" mixed precision reduces gradients in fp32 (reduce_dtype
    # float32); "PURE" in bf16 (composer/trainer/mosaic_fsdp_utils.py get_mixed_precision).
    if "mp_mode=DEFAULT" in notes:
        overrides.append(("grad_reduce_bytes", 4))
    label = (f"{r['source']}: {r['model']} s{seq} {r['accelerator']}×{r['gpus']} {r['precision']}"
             f" tp{pins.tp} pp{pins.pp} cp{pins.cp} z{pins.zero} mb{pins.micro_batch}"
             f" {w.recompute}")
    return Row(source=family(r["source"].strip()), label=label, framework=w.framework,
               accelerator=r["accelerator"].strip(), gpus=_int(r["gpus"]),
               gpus_per_node=_int(r["gpus_per_node"], 8), workload=w,
               measured_tokens_per_s_per_gpu=float(r["tokens_per_s_per_gpu"]),
               overrides=tuple(overrides),
               nonstandard=NONSTANDARD_HARDWARE.get((family(r["source"].strip()),
                                                     r["accelerator"].strip()), ""),
               inter_node_gbps=_int(r.get("inter_node_gbps", "")))


def load_rows(path: Path = DATA, *, nonstandard: bool = False) -> list[Row]:
    """The calibration rows (with ``nonstandard=True``, also the held-out hardware)."""
    with open(path, encoding="utf-8", newline="") as fh:
        rows = [row_from_csv(r) for r in csv.DictReader(fh)]
    return rows if nonstandard else [r for r in rows if not r.nonstandard]
