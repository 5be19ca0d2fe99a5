"""Check the probes against independent references on an NVIDIA GPU machine.

    python benchmarks/gpu_check.py [--quick] [--tolerance 0.1] [--nccl-tests DIR]

1. Runs the matmul probe in this process, then for each measured dtype (fp32, tf32, bf16,
   fp16) times a plain loop of torch.matmul on one pair of matrices at the probe's best shape,
   bracketed by CUDA events, and prints probe / reference.
2. With two or more GPUs, runs the collectives probe under torchrun on all local GPUs and, if
   nccl-tests' all_reduce_perf is on PATH (or in --nccl-tests DIR), runs it over the same
   sizes and compares busbw at the largest common size (out-of-place column).

Exit status: 0 when every ratio is within 1 +- tolerance (or nothing could run: no CUDA device
prints "no CUDA device: skipped"), 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def reference_matmul_tflops(dtype: str, shape: tuple[int, int, int], *, iters: int) -> float:
    import torch

    m, n, k = shape
    dt = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16,
          "fp16": torch.float16}[dtype]
    saved = (torch.backends.cuda.matmul.allow_tf32, torch.get_float32_matmul_precision())
    torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
    torch.set_float32_matmul_precision("high" if dtype == "tf32" else "highest")
    try:
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        for _ in range(10):
            torch.matmul(a, b)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iters):
            torch.matmul(a, b)
        end.record()
        end.synchronize()
        seconds = start.elapsed_time(end) / 1e3 / iters
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved[0]
        torch.set_float32_matmul_precision(saved[1])
    return 2 * m * n * k / seconds / 1e12


def check_matmul(quick: bool) -> list[tuple[str, float]]:
    from probes import ProbeConfig, run_probes

    report = run_probes(ProbeConfig(quick=quick, device="cuda", probes=("matmul",)))
    if report.errors or report.matmul is None:
        print(f"matmul probe failed: {report.errors}")
        return [("matmul probe", 0.0)]
    ratios = []
    for d in report.matmul.dtypes:
        if d.status != "measured" or d.dtype == "fp8_e4m3" or not d.best_shape:
            print(f"matmul {d.dtype}: {d.status} ({d.reason}); no reference")
            continue
        ref = reference_matmul_tflops(d.dtype, d.best_shape, iters=20 if quick else 50)
        ratio = (d.best_tflops or 0.0) / ref
        shape = "x".join(map(str, d.best_shape))
        print(f"matmul {d.dtype} {shape}: probe {d.best_tflops:.1f} TFLOP/s, "
              f"plain torch.matmul loop {ref:.1f} TFLOP/s, ratio {ratio:.3f}")
        ratios.append((f"matmul {d.dtype}", ratio))
    return ratios


def parse_nccl_tests(output: str) -> dict[int, float]:
    """size in bytes -> out-of-place busbw (GB/s), located from nccl-tests' header line."""
    column = None
    result: dict[int, float] = {}
    for line in output.splitlines():
        tokens = line.lstrip("#").split()
        if line.startswith("#") and "size" in tokens and "busbw" in tokens:
            column = tokens.index("busbw")
        elif column is not None and tokens and tokens[0].isdigit() and len(tokens) > column:
            try:
                result[int(tokens[0])] = float(tokens[column])
            except ValueError:
                continue
    return result


def check_collectives(quick: bool, gpus: int, nccl_dir: str | None) -> list[tuple[str, float]]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone",
               f"--nproc-per-node={gpus}", "-m", "probes", "--probes", "collectives",
               "--device", "cuda", "--out", str(out)] + (["--quick"] if quick else [])
        env = dict(os.environ, PYTHONPATH=str(REPO))
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
        if proc.returncode != 0 or not out.exists():
            print(f"collectives probe failed (exit {proc.returncode}): {proc.stdout[-1500:]}"
                  f"{proc.stderr[-1500:]}")
            return [("collectives probe", 0.0)]
        data = json.loads(out.read_text())
    series = [s for s in data["collectives"]["series"]
              if s["op"] == "all_reduce" and s["scope"] == "intra_node"
              and s["status"] == "measured"]
    if not series:
        print("collectives probe measured no all_reduce")
        return [("collectives probe", 0.0)]
    probe = {p["size_bytes"]: p["busbw_gb_per_s"] for p in series[0]["points"]}
    exe = shutil.which("all_reduce_perf", path=nccl_dir) if nccl_dir else None
    exe = exe or shutil.which("all_reduce_perf")
    if exe is None:
        largest = max(probe)
        print(f"all_reduce probe busbw {probe[largest]:.1f} GB/s at {largest} B; "
              "all_reduce_perf (nccl-tests) not found: no reference")
        return []
    cmd = [exe, "-b", str(min(probe)), "-e", str(max(probe)), "-f", "4" if not quick else "16",
           "-g", str(gpus), "-d", "float"]
    ref_proc = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    reference = parse_nccl_tests(ref_proc.stdout)
    common = sorted(set(probe) & set(reference))
    if not common:
        print(f"no common sizes with all_reduce_perf (exit {ref_proc.returncode}): "
              f"{ref_proc.stdout[-800:]}")
        return [("all_reduce", 0.0)]
    size = common[-1]
    ratio = probe[size] / reference[size]
    print(f"all_reduce {size} B on {gpus} GPUs: probe busbw {probe[size]:.1f} GB/s, "
          f"nccl-tests {reference[size]:.1f} GB/s, ratio {ratio:.3f}")
    return [("all_reduce", ratio)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--tolerance", type=float, default=0.1)
    parser.add_argument("--nccl-tests", default=None, help="folder holding all_reduce_perf")
    args = parser.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("no CUDA device: skipped (torch is not installed)")
        return 0
    if not torch.cuda.is_available():
        print("no CUDA device: skipped")
        return 0
    ratios = check_matmul(args.quick)
    gpus = torch.cuda.device_count()
    if gpus >= 2:
        ratios += check_collectives(args.quick, gpus, args.nccl_tests)
    else:
        print("one GPU: collectives need two or more; skipped")
    bad = [(name, r) for name, r in ratios if abs(r - 1) > args.tolerance]
    for name, r in bad:
        print(f"OUT OF TOLERANCE: {name} ratio {r:.3f} (allowed 1 +- {args.tolerance})")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
