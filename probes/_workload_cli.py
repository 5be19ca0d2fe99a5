"""``python -m probes workload`` (and under torchrun): the user's layers on this node.

The shape comes either from explicit options (``--hidden --heads --kv-heads --ffn-hidden
--seq-len ...``: all a node with only the probes package needs) or, where gpuplan's planner is
installed, from ``--model/--config/--params`` resolved exactly as `gpuplan estimate` does
(planner.build_workload), with ``--layers/--hidden/--heads/--kv-heads/--ffn-hidden`` as
overrides. `gpuplan probe workload` resolves the model on the laptop and calls this with the
explicit shape; ``--print-command`` there prints the torchrun line for a node.

Exit status as `python -m probes`: 0 measured, 1 the report was written but the probe failed
on some rank, 2 a problem to fix first (``main`` raises it as a ProbesError, which
``probes.cli.main`` says on stderr as every set-up error: "error: … To fix: …").
"""

from __future__ import annotations

import argparse
import sys

from probes._args import MAX_TIMEOUT_S, OneLineParser, check_timeout, count, is_rank_zero
from probes._fit import say_summary
from probes._rescue import check_out
from probes._schema import ProbeReport, ProbesError
from probes._workload_config import (
    ATTENTION_BACKENDS,
    FRAMEWORKS,
    LIMITS,
    PRECISIONS,
    RECOMPUTE,
    WorkloadConfig,
)

PLANNER_MISSING = ("--model/--config/--params need gpuplan's planner, which is not installed "
                   "here (`gpuplan launch` copies only the probes). To fix: give the shape "
                   "(`gpuplan probe workload --model NAME --print-command` prints it), or "
                   "install gpuplan on this machine")
SHAPE_MISSING = ("give the model (--model NAME, --config config.json or --params N) or its "
                 "shape. To fix: e.g. --model llama3-8b, or --hidden 4096 --heads 32 "
                 "--kv-heads 8 --ffn-hidden 14336 --seq-len 8192")
FIX = "To fix: see `python -m probes workload --help`."


def _count(name: str, low: int = 1) -> dict:
    """The type and the bounds of a count option, from LIMITS (one definition each)."""
    return {"type": count(low, LIMITS[name]), "metavar": "N"}


# what a shape option left out means (the others are required without --model)
_SHAPE_DEFAULTS = {"kv-heads": " (default: as many as --heads)",
                   "head-dim": " (default: hidden / heads)",
                   "seq-len": " (default with --model: the model's pre-training context)",
                   "experts-per-token": " (with --experts)",
                   "shared-experts": " (default: none)"}


def build_parser(*, check_out: bool = True) -> argparse.ArgumentParser:
    """The options, each checked as it is parsed; ``check_out=False`` leaves the report path
    alone (`gpuplan probe workload --print-command`: the file is written on the node)."""
    p = OneLineParser(
        prog="python -m probes workload", checks=_check_args if check_out else _check_values,
        fix=FIX,
        description="Time the model's transformer layers (forward + backward + AdamW) at its "
                    "real shapes on this machine and write a JSON report for `gpuplan probe "
                    "ingest`. Run under torchrun on every GPU of a node to calibrate.")
    m = p.add_argument_group("model (as `gpuplan estimate`; needs gpuplan installed)")
    m.add_argument("--model", help="a preset, e.g. llama3-8b")
    m.add_argument("--config", help="a Hugging Face config.json")
    m.add_argument("--params", help="total parameters, e.g. 7B (a shape is inferred)")
    m.add_argument("--active-params", help="active parameters per token (MoE, with --params)")
    s = p.add_argument_group("shape (explicit, or overrides of --model but for --head-dim and "
                             "--shared-experts)")
    s.add_argument("--layers", **_count("layers"),
                   help=f"the model's layer count (1 to {LIMITS['layers']:,})")
    for name in ("hidden", "heads", "kv-heads", "ffn-hidden", "head-dim", "seq-len",
                 "experts", "experts-per-token", "shared-experts"):
        key = name.replace("-", "_")
        s.add_argument(f"--{name}", **_count(key),
                       help=f"1 to {LIMITS[key]:,}" + _SHAPE_DEFAULTS.get(name, ""))
    s.add_argument("--gated", action=argparse.BooleanOptionalAction, default=None,
                   help="gated FFN (SwiGLU; default) or not (GELU)")
    s.add_argument("--micro-batch", **_count("micro_batch"), default=None,
                   help=f"sequences per micro-batch, 1 to {LIMITS['micro_batch']:,} "
                        "(default 1)")
    s.add_argument("--precision", choices=PRECISIONS, default="bf16",
                   help="fp8 runs bf16 GEMMs (plain PyTorch has no fp8 training path; "
                        "default: bf16)")
    s.add_argument("--recompute", choices=(*RECOMPUTE, "auto"), default="none",
                   help="activation recomputation (auto means none here; default: none)")
    s.add_argument("--tp", **_count("tp"), default=1,
                   help=f"tensor-parallel degree, 1 to {LIMITS['tp']:,}; the other processes "
                        "are data parallel (default: 1)")
    s.add_argument("--framework", choices=FRAMEWORKS,
                   default="fsdp", help="the planner's framework profile this measurement "
                   "stands for (default fsdp: eager PyTorch layers with SDPA, as "
                   "FSDP/torchtitan run them on each GPU)")
    s.add_argument("--model-name", default=None, help="a label for the report")
    r = p.add_argument_group("run")
    r.add_argument("--out", default="workload-report.json",
                   help="report path, written by rank 0; missing folders are created "
                        "(default: %(default)s)")
    r.add_argument("--build-layers", **_count("build_layers"), default=None,
                   help=f"layers to build on each GPU, 1 to {LIMITS['build_layers']} "
                        "(default: 2 on CPU, as many as fill 70%% of a GPU's free memory, at "
                        "most the model's and 16)")
    r.add_argument("--steps", **_count("steps"), default=None,
                   help=f"timed steps, 1 to {LIMITS['steps']:,} (default 30)")
    r.add_argument("--warmup-steps", **_count("warmup_steps", low=0), default=None,
                   help=f"untimed steps first, 0 to {LIMITS['warmup_steps']:,} (default 5)")
    r.add_argument("--quick", action="store_true",
                   help="2 + 5 steps: checks the set-up; never calibrates")
    r.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="auto: CUDA when torch sees a GPU, else the CPU (default: auto)")
    r.add_argument("--attention", choices=("auto", *ATTENTION_BACKENDS), default="auto",
                   help="SDPA backend (auto: the first of flash, cudnn, efficient, math "
                        "that runs)")
    r.add_argument("--no-profile", action="store_true",
                   help="skip the torch.profiler split (matmul/attention/other)")
    r.add_argument("--timeout-s", type=float, default=120.0,
                   help=f"process group timeout in seconds, 1 to {MAX_TIMEOUT_S:,} (default: "
                        "%(default)s)")
    return p


def _from_planner(args) -> dict:
    """Shape fields from --model/--config/--params via gpuplan's planner."""
    try:
        from planner.model import (
            PlanPins,
            WorkloadSpec,
            build_workload,
            read_model_config,
            shape_of,
        )
    except ImportError:
        raise ProbesError(PLANNER_MISSING) from None
    from catalog import GpuplanError

    for flag, given in (("--head-dim", args.head_dim), ("--shared-experts", args.shared_experts)):
        if given is not None:  # the planner builds the model's shape: no override to pass on
            raise ProbesError(f"{flag} is for a shape given in full; with --model, --config or "
                              f"--params the model's own is used. To fix: drop {flag}, or give "
                              "the shape without --model")
    overrides = tuple((k, v) for k, v in (
        ("layers", args.layers), ("hidden", args.hidden), ("heads", args.heads),
        ("kv_heads", args.kv_heads), ("ffn_hidden", args.ffn_hidden)) if v is not None)
    try:  # the file's settings: WorkloadSpec takes them parsed (the path was refused as
        # "expected a JSON object … found str", every time)
        config = None if args.config is None else read_model_config(args.config)
    except GpuplanError as exc:
        raise ProbesError(_as_flags(exc)) from None
    spec = WorkloadSpec(model=args.model, config=config, config_name=args.config or "",
                        params=args.params,
                        active_params=args.active_params, experts=args.experts,
                        experts_per_token=args.experts_per_token, seq_len=args.seq_len,
                        precision=args.precision, recompute=args.recompute,
                        framework=args.framework,
                        pins=PlanPins(tp=args.tp, micro_batch=args.micro_batch),
                        arch_overrides=overrides)
    try:
        workload = build_workload(spec)
    except GpuplanError as exc:
        raise ProbesError(_as_flags(exc)) from None
    shape = shape_of(workload)
    # a config's own name (its _name_or_path), not "config.json" for every model
    name = args.model or (workload.arch.name if args.config else f"{args.params} (inferred)")
    return {"hidden": shape.hidden, "heads": shape.heads, "kv_heads": shape.kv_heads,
            "head_dim": shape.head_dim, "ffn_hidden": shape.ffn_hidden, "gated": shape.gated,
            "seq_len": shape.seq_len, "micro_batch": shape.micro_batch,
            "recompute": shape.recompute, "experts": shape.experts,
            "experts_per_token": shape.experts_per_token,
            "shared_experts": shape.shared_experts, "model_layers": workload.arch.layers,
            "model": args.model_name or name}


def _as_flags(exc: Exception) -> str:
    """A planner error with its `field` references written as this command's options ("give
    `params` instead" named no option of `python -m probes workload`); others stay as they
    are."""
    from planner.model import refer_to_fields

    options = set(build_parser()._option_string_actions)

    def flag(field: str) -> str | None:
        spelled = "--" + field.replace("_", "-")
        return spelled if spelled in options else None

    return refer_to_fields(str(exc), flag)


def _explicit(args) -> dict:
    missing = [n for n in ("hidden", "heads", "ffn_hidden", "seq_len")
               if getattr(args, n) is None]
    if missing:
        raise ProbesError(f"{SHAPE_MISSING} (missing: "
                          f"{', '.join('--' + n.replace('_', '-') for n in missing)})")
    return {"hidden": args.hidden, "heads": args.heads, "kv_heads": args.kv_heads or args.heads,
            "head_dim": args.head_dim or 0, "ffn_hidden": args.ffn_hidden,
            "gated": True if args.gated is None else args.gated, "seq_len": args.seq_len,
            "micro_batch": args.micro_batch or 1,
            "recompute": "none" if args.recompute == "auto" else args.recompute,
            "experts": args.experts or 0, "experts_per_token": args.experts_per_token or 0,
            "shared_experts": args.shared_experts or 0, "model_layers": args.layers or 0,
            "model": args.model_name or "custom"}


def config_from_args(args) -> WorkloadConfig:
    """The run's configuration; ProbesError with a "To fix" for what cannot work."""
    for flag, given in (("--model", args.model), ("--config", args.config),
                        ("--params", args.params)):
        if given is not None and not given.strip():  # read as "not given", silently
            raise ProbesError(f"{flag} is empty. To fix: give a value, or leave {flag} out")
    shape = _from_planner(args) if (args.model or args.config or args.params) \
        else _explicit(args)
    if args.gated is not None and (args.model or args.config or args.params):
        shape["gated"] = args.gated
    try:
        return WorkloadConfig(**shape, precision=args.precision, framework=args.framework,
                              layers=args.build_layers, tp=args.tp, steps=args.steps,
                              warmup_steps=args.warmup_steps, quick=args.quick,
                              device=args.device, attention=args.attention,
                              profile=not args.no_profile, timeout_seconds=args.timeout_s)
    except ValueError as exc:
        text = str(exc).rstrip(".")  # a message with its own fix needs no pointer to --help
        raise ProbesError(text if "To fix:" in text else f"{text}. {FIX}") from None


def too_short_to_calibrate(config: WorkloadConfig) -> str | None:
    """A note, said before the run, when its steps are too few for the planner to calibrate
    with the report (``probes._figures``: MIN_STEPS timed after MIN_WARMUP_STEPS); None
    otherwise. --quick says so in its help."""
    from probes._figures import MIN_STEPS, MIN_WARMUP_STEPS

    if config.quick or (config.timed_steps >= MIN_STEPS and config.warmup >= MIN_WARMUP_STEPS):
        return None
    return (f"note: {config.timed_steps} timed step(s) after {config.warmup} warm-up: the "
            f"planner calibrates only with {MIN_STEPS} or more after {MIN_WARMUP_STEPS} or "
            "more, so this run checks the set-up and its report will not calibrate a plan. "
            f"To calibrate: --steps {MIN_STEPS} --warmup-steps {MIN_WARMUP_STEPS} or more "
            "(defaults 30 and 5)")


def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.3g} ms"


def _mib(n: float | None) -> str:
    if n is None:
        return "not available"
    return f"{n / 2**20:,.1f} MiB" if n >= 2**20 else f"{n / 2**10:,.1f} KiB"


def format_summary(report: ProbeReport, *, out: str | None = None) -> str:
    """A few lines for a person: the shape, time per layer and its split, memory, spread."""
    w, lines = report.workload, []
    env = report.environment
    if env is not None:
        gpu = f"{env.gpu_count} x {env.gpu_model}" if env.gpu_model else "no GPU"
        lines.append(f"{env.hostname}: {gpu}, {env.world_size} process(es), torch "
                     f"{env.torch_version}")
    if w is not None:
        moe = (f", {w.experts} experts top-{w.experts_per_token}"
               + (f" + {w.shared_experts} shared" if w.shared_experts else "")) \
            if w.experts else ""
        lines.append(f"workload {w.model} ({w.framework}): hidden {w.hidden}, heads "
                     f"{w.heads}/{w.kv_heads} kv, head dim {w.head_dim}, FFN {w.ffn_hidden}"
                     f"{' gated' if w.gated else ''}{moe}; sequence {w.seq_len} x "
                     f"{w.micro_batch}; {w.precision}; recompute {w.recompute}; "
                     f"tp {w.tp} x dp {w.dp}")
        if w.status != "measured":
            lines.append(f"workload: {w.status} ({w.reason})")
        else:
            lines.append(f"{w.layers_rule}; {w.steps} steps after {w.warmup_steps} warm-up "
                         f"on {w.device}")
            lines.append(f"per layer: forward + backward {_ms(w.layer_fwd_bwd_seconds)} "
                         f"(p10 {_ms(w.layer_fwd_bwd_seconds_p10)}, p90 "
                         f"{_ms(w.layer_fwd_bwd_seconds_p90)}), whole step "
                         f"{_ms(w.layer_step_seconds)}; {w.tokens_per_second:,.0f} tokens/s")
            sp = w.split
            if sp is not None and sp.matmul_seconds is not None:
                comm = (f"communication {_ms(sp.communication_seconds)}, "
                        if sp.communication_seconds is not None else "")
                lines.append(f"split per layer: matmul {_ms(sp.matmul_seconds)}, attention "
                             f"{_ms(sp.attention_seconds)}, {comm}other "
                             f"{_ms(sp.other_seconds)}, optimizer {_ms(sp.optimizer_seconds)} "
                             f"({sp.source})")
            elif sp is not None:
                lines.append(f"split: {sp.source}; optimizer {_ms(sp.optimizer_seconds)} per "
                             "layer")
            lines.append(f"memory per layer: activations {_mib(w.layer_activation_bytes)} "
                         f"(allocator), {_mib(w.layer_saved_bytes)} saved for backward; "
                         f"peak {_mib(w.peak_memory_bytes)}")
            s = w.across_ranks
            if s is not None and s.n > 1:
                times = [(nv.value, r.rank) for r in report.ranks for nv in r.workload
                         if nv.name == "layer_fwd_bwd_seconds"]
                slowest, who = max(times)
                who_ran = "GPUs" if w.device == "cuda" else "ranks"
                lines.append(f"over {s.n} {who_ran}: p10 {_ms(s.p10)}, p50 {_ms(s.p50)}, p90 "
                             f"{_ms(s.p90)}; slowest rank {who} {_ms(slowest)}")
            lines.extend(f"note: {n}" for n in w.notes)
    for e in report.errors:
        lines.append(f"error in {e.probe} (rank {e.rank}): {e.error_type}: {e.message}")
    if out is not None:
        lines.append(f"report written to {out} ({report.duration_seconds:.1f} s)")
    return "\n".join(lines)


def _check_values(args) -> None:
    """What argparse's float() lets through: a NaN, infinite or negative timeout (as
    `python -m probes` refuses it, with the same check)."""
    check_timeout(args.timeout_s, FIX)


def _check_args(args) -> None:
    """Before minutes of measuring, not after: the values (``_check_values``), and the report
    path (rank 0 only: the others write nothing) must be a file rank 0 can create — never a
    device, FIFO, directory or the kernel's own files (the same rules as `python -m probes
    --out`)."""
    _check_values(args)
    check_out(args.out, what="workload report (--out)")


def _check_attention(config: WorkloadConfig) -> None:
    """ProbeSetupError when the --attention backend asked for cannot run this head size and
    precision on this rank's device (the run tries it again before timing: ``choose_backend``)."""
    from probes._runner import topology_from_env
    from probes._timing import resolve_device
    from probes._workload import choose_backend

    local_rank = topology_from_env().local_rank
    choose_backend(config, resolve_device(config.device, local_rank=local_rank))


def main(argv: list[str] | None = None) -> int:
    """The run, for ``probes.cli.main``: 0 or 1 as `python -m probes`; a problem to fix first
    (torch missing, no shape, a --tp it cannot hold, no CUDA for --device cuda, a process group
    that does not form) raises a ProbesError, which ``probes.cli.main`` says on stderr, once
    under torchrun, and exits 2."""
    from probes._errors import require_torch

    args = build_parser().parse_args(argv)
    require_torch()  # ProbesError when it is missing; a Ctrl-C during the import not lost
    from probes._workload_run import run_workload_probe

    config = config_from_args(args)
    if is_rank_zero() and (note := too_short_to_calibrate(config)):
        print(note, file=sys.stderr)
    if config.attention != "auto":  # a backend this device lacks: exit 2 before the run,
        _check_attention(config)  # not a failed report after minutes of set-up
    report = run_workload_probe(config, out=args.out)
    if is_rank_zero():
        say_summary(format_summary(report, out=args.out))
    return 1 if report.errors else 0
