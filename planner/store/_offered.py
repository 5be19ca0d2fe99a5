"""The figures a stored report offers, as planner/store reads them: the measurement rows
ingest stores beside a report (one per figure), and the workload layer it measured. Read by
ingest (``_reports``), by the calibration (``_calibrate``) and by what makes two reports one
run (``_fingerprint``), which is why they live apart from all three."""

from __future__ import annotations

from ..model import WorkloadShape

# probe dtype -> catalog dtype (catalog.DTYPES); fp8 with fast accumulation keeps its own key
DTYPE_NAMES = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16", "fp16": "fp16",
               "fp8_e4m3": "fp8", "fp8_e4m3_fast": "fp8_fast"}
LARGE_MESSAGE_BYTES = 64 * 2**20  # busbw plateau: messages of 64 MiB and more


def measurement_rows(report) -> list[tuple[str, str, float, str]]:
    """(kind, key, value, unit) of each figure ingest stores beside the report: each matmul
    dtype's, the device copy and triad bandwidth, each collective series' plateau busbw, the
    workload layer's time and activations."""
    from probes import report_figures

    rows = []
    for f in report_figures(report):
        if f.kind == "matmul" and f.name in DTYPE_NAMES:
            rows.append(("matmul_tflops", DTYPE_NAMES[f.name], f.value, "TFLOP/s"))
    for p in report.memory.points if report.memory else ():
        if p.status == "measured" and p.name in ("device_copy", "device_triad") and p.gb_per_s:
            value = p.across_ranks.p50 if p.across_ranks and p.across_ranks.n > 1 else p.gb_per_s
            rows.append((f"{p.name}_gb_per_s", p.name.split("_")[1], value, "GB/s"))
    col = report.collectives
    for s in col.series if col and col.status == "measured" else ():
        if s.status != "measured" or not s.points:
            continue
        large = [p.busbw_gb_per_s for p in s.points if p.size_bytes >= LARGE_MESSAGE_BYTES]
        best = max(large or [p.busbw_gb_per_s for p in s.points])
        kind = "busbw_intra_gb_per_s" if s.scope == "intra_node" else "busbw_world_gb_per_s"
        rows.append((kind, s.op, best, "GB/s"))
    w = workload_figures(report)
    if w is not None:
        key = f"{w['framework']} {w['shape'].label}"
        rows.append(("workload_layer_ms", key, w["seconds"] * 1e3, "ms"))
        if w["memory_bytes"] is not None:
            rows.append(("workload_layer_activation_mib", key, w["memory_bytes"] / 2**20,
                         "MiB"))
    return rows


def _rank_median(report, name: str) -> float | None:
    values = [nv.value for r in report.ranks for nv in r.workload if nv.name == name]
    if not values:
        return None
    values.sort()
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def workload_figures(report) -> dict | None:
    """The workload layer a report measured: its shape, forward + backward seconds per layer
    (the median over GPUs, p10/p90 the wider of over GPUs and over steps), activation bytes
    per layer (the CUDA allocator's, else the saved tensors') and the optimizer per layer.
    None without a measured workload section."""
    w = report.workload
    if w is None or w.status != "measured" or not w.layer_fwd_bwd_seconds:
        return None
    spread = w.across_ranks
    seconds = spread.p50 if spread is not None and spread.n > 1 else w.layer_fwd_bwd_seconds
    p10s = [x for x in (w.layer_fwd_bwd_seconds_p10, spread.p10 if spread else None) if x]
    p90s = [x for x in (w.layer_fwd_bwd_seconds_p90, spread.p90 if spread else None) if x]
    memory = (_rank_median(report, "layer_activation_bytes") or w.layer_activation_bytes
              or _rank_median(report, "layer_saved_bytes") or w.layer_saved_bytes)
    shape = WorkloadShape(hidden=w.hidden, heads=w.heads, kv_heads=w.kv_heads,
                          head_dim=w.head_dim, ffn_hidden=w.ffn_hidden, gated=w.gated,
                          seq_len=w.seq_len, micro_batch=w.micro_batch, precision=w.precision,
                          recompute=w.recompute, experts=w.experts,
                          experts_per_token=w.experts_per_token,
                          shared_experts=w.shared_experts)
    split = w.split
    return {"shape": shape, "framework": w.framework, "seconds": seconds,
            "p10": min(p10s) if p10s else None, "p90": max(p90s) if p90s else None,
            "memory_bytes": memory if memory and memory > 0 else None,
            "memory_source": "allocator" if w.layer_activation_bytes else "saved tensors",
            "optimizer_seconds": split.optimizer_seconds if split else None,
            "attention_backend": w.attention_backend}
