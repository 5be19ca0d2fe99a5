"""Modelled vs measured per-layer time and memory on this machine's CPU, for three layer shapes.

    python benchmarks/workload_probe_cpu.py [--steps 10] [--threads 1] [--json OUT]

What it does, and what the comparison means:

1. The CPU's "hardware figures", measured by the probes themselves: the bf16 matmul rate
   (`python -m probes` matmul, a custom sweep of the three layers' own GEMM shapes, the max
   over them, as MAMF is for a GPU) and the host copy bandwidth. The model gets the matmul rate
   as both the datasheet peak and the achievable rate (a CPU has no datasheet the catalog
   knows), the same rate for the attention kernel (PyTorch's CPU flash attention is built on
   GEMMs; there is no published CPU attention fraction), and the copy bandwidth as its
   achievable memory bandwidth. So "modelled" here is the planner's model fed with this CPU's
   measured rates, not a prediction the product makes: the plumbing is under test (the same
   shapes, the same per-layer reference, the same units end to end), not the CPU model.
2. Each shape runs through the workload probe (`probes.run_workload_probe`, CPU, 2 layers) and
   through the planner's per-layer model (planner/_layer_model.py) under the fsdp profile, the
   profile of eager PyTorch layers; memory is what autograd saved for backward per layer (the
   CUDA allocator figures do not exist on CPU).
3. Both go through the calibration's workload rules and lookup (planner.store.calibrate,
   planner.model.Calibration) as a GPU report's would — minus the report-level rule that
   refuses CPU runs, skipped here on purpose — and the table prints what
   `Calibration.workload` returns.

Expect ratios far from 1: the software constants were fitted on GPUs (GEMM efficiency,
elementwise fusion, launch overheads), and a shared 2-core CPU runs eager PyTorch's small
elementwise kernels and the optimizer at a very different share of its matmul rate.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# Three CPU-sized layers: a GQA SwiGLU layer, a multi-head GELU layer under full
# recomputation, and an 8-expert top-2 MoE layer under selective recomputation.
SHAPES = (
    {"name": "dense GQA", "hidden": 512, "heads": 8, "kv_heads": 2, "ffn_hidden": 1376,
     "gated": True, "seq_len": 256, "micro_batch": 2, "recompute": "none"},
    {"name": "dense MHA, full recompute", "hidden": 768, "heads": 12, "kv_heads": 12,
     "ffn_hidden": 3072, "gated": False, "seq_len": 256, "micro_batch": 1,
     "recompute": "full"},
    {"name": "MoE 8 x top-2, selective", "hidden": 512, "heads": 8, "kv_heads": 8,
     "ffn_hidden": 512, "gated": True, "seq_len": 256, "micro_batch": 1,
     "recompute": "selective", "experts": 8, "experts_per_token": 2},
)
FRAMEWORK = "fsdp"
ACCELERATOR = "this CPU (measured matmul rate as peak)"


def gemm_shapes(s: dict) -> list[tuple[int, int, int]]:
    """(M, N, K) of the layer's forward GEMMs (M = tokens, or routed tokens per expert)."""
    T, h, d = s["seq_len"] * s["micro_batch"], s["hidden"], s["hidden"] // s["heads"]
    F, m = s["ffn_hidden"], 2 if s["gated"] else 1
    rows = T * s.get("experts_per_token", 1) // max(s.get("experts", 1), 1)
    return [(T, (s["heads"] + 2 * s["kv_heads"]) * d, h), (T, h, s["heads"] * d),
            (rows, m * F, h), (rows, h, F)]


def cpu_hardware(shapes: list[dict]) -> dict:
    from probes import ProbeConfig, run_probes

    sweep = sorted({g for s in shapes for g in gemm_shapes(s)})
    report = run_probes(ProbeConfig(device="cpu", probes=("matmul", "memory"),
                                    dtypes=("bf16",), matmul_shapes=tuple(sweep)))
    bf16 = next(d for d in report.matmul.dtypes if d.dtype == "bf16")
    copy = next(p for p in report.memory.points if p.name == "host_copy")
    return {"matmul_tflops": bf16.best_tflops, "best_shape": bf16.best_shape,
            "median_tflops": bf16.median_tflops, "copy_gb_per_s": copy.gb_per_s,
            "shapes": sweep}


def run(steps: int) -> dict:
    import torch

    from planner.model import (
        Assumptions,
        LayerHardware,
        WorkloadShape,
        model_attention,
        model_layer,
    )
    from planner.store import WorkloadCandidate, calibrate
    from probes import WorkloadConfig, run_workload_probe

    A = Assumptions()
    hw_facts = cpu_hardware(list(SHAPES))
    memory_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    hardware = LayerHardware(
        matmul_tflops=hw_facts["matmul_tflops"], attention_tflops=hw_facts["matmul_tflops"],
        # the model applies its memory efficiency to this: undo it for a measured copy
        hbm_gb_per_s=hw_facts["copy_gb_per_s"] / A.memory_bandwidth_efficiency,
        memory_gib=memory_gib, peak_tflops=hw_facts["matmul_tflops"])
    rows, candidates = [], []
    for i, s in enumerate(SHAPES):
        spec = {k: v for k, v in s.items() if k != "name"}
        report = run_workload_probe(WorkloadConfig(**spec, device="cpu", framework=FRAMEWORK,
                                                   steps=steps, warmup_steps=3,
                                                   model=s["name"]))
        w = report.workload
        shape = WorkloadShape(hidden=w.hidden, heads=w.heads, kv_heads=w.kv_heads,
                              head_dim=w.head_dim, ffn_hidden=w.ffn_hidden, gated=w.gated,
                              seq_len=w.seq_len, micro_batch=w.micro_batch,
                              precision=w.precision, recompute=w.recompute,
                              experts=w.experts, experts_per_token=w.experts_per_token)
        model = model_layer(shape, hardware=hardware, framework=FRAMEWORK,
                            attention=model_attention(w.attention_backend), A=A)
        candidates.append(WorkloadCandidate(
            report_id=i + 1, created_utc=report.created_utc, accelerator=ACCELERATOR,
            framework=FRAMEWORK, shape=shape, measured_layer_seconds=w.layer_fwd_bwd_seconds,
            p10=w.layer_fwd_bwd_seconds_p10, p90=w.layer_fwd_bwd_seconds_p90,
            measured_layer_memory_bytes=w.layer_saved_bytes,
            measured_optimizer_seconds=w.split.optimizer_seconds,
            attention_backend=w.attention_backend, modelled=model,
            peak_tflops=hardware.peak_tflops, memory_bytes=memory_gib * 2**30))
        rows.append((s["name"], shape, w, model))
    cal = calibrate([], workloads=candidates)
    out = {"torch": torch.__version__, "threads": torch.get_num_threads(),
           "hardware": hw_facts, "framework": FRAMEWORK, "shapes": []}
    for name, shape, w, model in rows:
        found = cal.workload(ACCELERATOR, FRAMEWORK, shape)
        sp = w.split
        out["shapes"].append({
            "name": name, "shape": shape.label, "attention_backend": w.attention_backend,
            "measured_ms": w.layer_fwd_bwd_seconds * 1e3,
            "measured_p10_ms": w.layer_fwd_bwd_seconds_p10 * 1e3,
            "measured_p90_ms": w.layer_fwd_bwd_seconds_p90 * 1e3,
            "modelled_ms": model.layer_seconds * 1e3,
            "time_ratio": found.time_ratio if found else None,
            "measured_split_ms": {k: (v * 1e3 if v is not None else None) for k, v in (
                ("matmul", sp.matmul_seconds), ("attention", sp.attention_seconds),
                ("other", sp.other_seconds), ("optimizer", sp.optimizer_seconds))},
            "modelled_split_ms": {"matmul+attention": model.compute_seconds * 1e3,
                                  "other": model.other_seconds * 1e3,
                                  "optimizer": model.optimizer_seconds * 1e3},
            "measured_kib": w.layer_saved_bytes / 1024,
            "modelled_kib": model.activation_bytes / 1024,
            "memory_ratio": found.memory_ratio if found else None,
            "calibration": found.summary() if found else "not found",
            "refused": [n.line() for n in cal.rejected()]})
    return out


def render(result: dict) -> str:
    hw = result["hardware"]
    lines = [f"CPU: bf16 matmul {hw['matmul_tflops'] * 1e3:,.0f} GFLOP/s (max over the layers' "
             f"{len(hw['shapes'])} GEMM shapes, at {'x'.join(map(str, hw['best_shape']))}; "
             f"median {hw['median_tflops'] * 1e3:,.0f}), host copy {hw['copy_gb_per_s']:,.1f} "
             f"GB/s; torch {result['torch']}, {result['threads']} threads; profile "
             f"{result['framework']}",
             "The model is fed these measured rates as the CPU's peak (module docstring): "
             "the plumbing is compared, not a CPU prediction.", ""]
    head = (f"{'shape':<28} {'measured':>10} {'modelled':>10} {'ratio':>6}  "
            f"{'act meas':>10} {'act model':>10} {'ratio':>6}")
    lines += [head, "-" * len(head)]
    for s in result["shapes"]:
        lines.append(f"{s['name']:<28} {s['measured_ms']:>8.2f}ms {s['modelled_ms']:>8.2f}ms "
                     f"{s['time_ratio']:>6.2f}  {s['measured_kib']:>7,.0f}KiB "
                     f"{s['modelled_kib']:>7,.0f}KiB {s['memory_ratio']:>6.2f}")
    lines.append("")
    for s in result["shapes"]:
        ms, md = s["measured_split_ms"], s["modelled_split_ms"]
        lines.append(f"{s['name']} [{s['shape']}, SDPA {s['attention_backend']}]")
        lines.append(f"  measured per layer: matmul {ms['matmul']:.2f}, attention "
                     f"{ms['attention']:.2f}, other {ms['other']:.2f} ms (fwd+bwd, p10-p90 "
                     f"{s['measured_p10_ms']:.2f}-{s['measured_p90_ms']:.2f}); optimizer "
                     f"{ms['optimizer']:.2f} ms")
        lines.append(f"  modelled per layer: matmul+attention {md['matmul+attention']:.2f}, "
                     f"other {md['other']:.2f} ms; optimizer {md['optimizer']:.2f} ms")
        lines.append(f"  Calibration.workload: {s['calibration']}")
    if result["shapes"][0]["refused"]:
        lines.append("refused: " + "; ".join(result["shapes"][0]["refused"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per shape")
    parser.add_argument("--threads", type=int, default=1,
                        help="torch threads for the matmul rate and the layers alike (default "
                             "1: on a shared 2-core box two threads stall whenever one core "
                             "is taken)")
    parser.add_argument("--json", default=None, help="also write the figures to this file")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("torch is not installed. To fix: pip install -e '.[probes]'")
        return 2
    torch.set_num_threads(args.threads)
    started = time.perf_counter()
    result = run(args.steps)
    result["seconds"] = time.perf_counter() - started
    print(render(result))
    print(f"({result['seconds']:.0f} s)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, default=str) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
