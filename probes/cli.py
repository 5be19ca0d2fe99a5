"""Command line for the probes: ``python -m probes`` / ``gpuplan probe run``, and
``python -m probes workload`` / ``gpuplan probe workload`` (probes._workload_cli).

Exit status: 0 when every probe ran, 1 when the report was written but a probe failed (its
error is in the report and on stdout), 2 for a problem the user can fix (missing torch, bad
option, no CUDA for --device cuda, a process group that does not form). Every option is checked
before anything runs (``check_args``: bounds, names with "Did you mean", a report path that
can be written); an option error is one line on stderr ending "To fix: …", and so is a set-up
error (``setup_error``: "error: … To fix: …"). Stdout carries only the summary.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from probes._args import FIX as _FIX
from probes._args import (
    MAX_DIGITS,
    MAX_TIMEOUT_S,
    OneLineParser,
    check_timeout,
    close_names,
    is_rank_zero,
    wait_unless_rank_zero,
)
from probes._errors import require_torch
from probes._fit import say_summary
from probes._rescue import check_out
from probes._runner import PROBE_NAMES, ProbeConfig
from probes._schema import MATMUL_DTYPES, ProbeReport, ProbesError
from probes._smi import clock_event_words
from probes._spread import shown as _shown

# gpuplan is not on a package index: the probes need only torch next to this package
_UNITS = {"": 1, "B": 1, "K": 2**10, "KIB": 2**10, "M": 2**20, "MIB": 2**20, "G": 2**30,
          "GIB": 2**30}
# The bounds of the options, in one place: `gpuplan probe run` parses its options with this
# parser (planner/cli/_probe_cmds.py), so both refuse the same values, before anything runs.
# (--timeout-s: MAX_TIMEOUT_S, in probes._args with the check both parsers share)
MAX_SIZE_BYTES = 16 * 2**30  # --sizes: a collective buffer larger than any GPU's memory share
MAX_MATMUL_DIM = 65_536  # --shapes: 65,536^2 bf16 is 8 GiB per operand
MAX_LIST = 32  # --sizes, --shapes: entries (a default sweep has about ten)


def parse_size(text: str) -> int:
    """'4096', '64K', '1MiB', '1G' -> bytes (binary multiples)."""
    raw = text.strip().upper()
    digits = raw.rstrip("KMGIB")
    unit = raw[len(digits):]
    # isdecimal, not isdigit: "²" is a digit that int() refuses with a bare ValueError.
    if digits.isdecimal() and unit in _UNITS and len(digits) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(
            f"size {_shown(text)} is too large: at most 16 GiB each. To fix: e.g. 1K,1M,1G.")
    if not digits.isdecimal() or unit not in _UNITS or int(digits) <= 0:
        raise argparse.ArgumentTypeError(
            f"bad size {_shown(text)}. To fix: use a positive number of bytes with an optional "
            "K/M/G (KiB/MiB/GiB) suffix, e.g. 1K,1M,1G.")
    return int(digits) * _UNITS[unit]


def _sizes(text: str) -> tuple[int, ...]:
    return tuple(parse_size(part) for part in text.split(",") if part.strip())


def _shapes(text: str) -> tuple[tuple[int, int, int], ...]:
    shapes = []
    for part in text.split(","):
        dims = part.strip().lower().split("x")
        if len(dims) == 1:
            dims = dims * 3
        if len(dims) == 3 and all(d.isdecimal() for d in dims) and \
                any(len(d) > MAX_DIGITS for d in dims):
            raise argparse.ArgumentTypeError(
                f"shape {_shown(part)} is too large: each dimension at most "
                f"{MAX_MATMUL_DIM:,}. To fix: e.g. 4096x4096x8192,8192.")
        if len(dims) != 3 or not all(d.isdecimal() and len(d) <= MAX_DIGITS and int(d) > 0
                                     for d in dims):
            raise argparse.ArgumentTypeError(
                f"bad shape {_shown(part)}. To fix: use MxNxK or one number for a cube, "
                "e.g. 4096x4096x8192,8192.")
        shapes.append((int(dims[0]), int(dims[1]), int(dims[2])))
    return tuple(shapes)


def _names(known: Sequence[str]) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        # A name given twice is run once (dict.fromkeys keeps the order).
        names = tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
        bad = [n for n in names if n not in known]
        if bad or not names:
            close = close_names(bad[0], known) if bad else []
            hint = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise argparse.ArgumentTypeError(
                f"unknown name(s) {', '.join(_shown(n) for n in bad) or '(none)'}.{hint} "
                f"To fix: choose from {', '.join(known)}.")
        return names
    return parse


def check_args(args: argparse.Namespace) -> None:
    """What argparse accepts but must not run, each a one-line ProbesError with its bound: a
    NaN timeout, a 10^15-byte buffer, 100 shapes, a report path that cannot be written (rank 0
    only: the others write nothing). Run by ``parse_args`` of ``build_parser()``'s parser."""
    check_timeout(args.timeout_s)
    if args.sizes == ():
        raise ProbesError(f"--sizes is empty. {_FIX}")
    sizes = args.sizes or ()
    if len(sizes) > MAX_LIST or any(n > MAX_SIZE_BYTES for n in sizes):
        raise ProbesError(f"--sizes: at most {MAX_LIST} sizes, each at most 16 GiB. {_FIX}")
    shapes = args.shapes or ()
    if len(shapes) > MAX_LIST or any(d > MAX_MATMUL_DIM for s in shapes for d in s):
        raise ProbesError(f"--shapes: at most {MAX_LIST} shapes, each dimension at most "
                          f"{MAX_MATMUL_DIM:,}. {_FIX}")
    if args.out == "-":  # a file named '-' was written, though other commands print for '-'
        raise ProbesError("--out -: the probes write their report to a file (rank 0, at the "
                          "end of the run), not to standard output. To fix: give a file name, "
                          "e.g. --out report.json")
    check_out(args.out, what="probe report (--out)")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m probes", checks=check_args,
        description="Measure matmul TFLOP/s, copy bandwidth and collective bandwidth on this "
                    "instance and write a JSON report. Run under torchrun for several GPUs "
                    "or nodes. `python -m probes workload --help`: time your model's layers.")
    parser.add_argument("--out", default="probe-report.json",
                        help="report path, written by rank 0; missing folders are created "
                             "(default: %(default)s)")
    parser.add_argument("--quick", action="store_true",
                        help="2 matmul shapes, one layout, a short warm-up, 3 repeats: checks "
                             "the set-up; never calibrates the planner")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="auto: CUDA when torch sees a GPU, else the CPU (default: auto)")
    parser.add_argument("--timeout-s", type=float, default=120.0,
                        help=f"process group timeout in seconds, 1 to {MAX_TIMEOUT_S:,} "
                             "(default: %(default)s)")
    parser.add_argument("--sizes", type=_sizes, default=None,
                        help="collective message sizes, e.g. 1K,1M,256M,1G (default: 1 KiB to "
                             "1 GiB by 4x on a GPU, to 1 MiB on a CPU)")
    parser.add_argument("--shapes", type=_shapes, default=None,
                        help="matmul shapes MxNxK, e.g. 4096,8192x8192x16384 (default: the "
                             "built-in sweep; a custom one does not calibrate the planner)")
    parser.add_argument("--dtypes", type=_names(MATMUL_DTYPES), default=None,
                        help=f"matmul dtypes, from {','.join(MATMUL_DTYPES)} (default: all)")
    parser.add_argument("--probes", type=_names(PROBE_NAMES), default=PROBE_NAMES,
                        help=f"which probes to run, from {','.join(PROBE_NAMES)}; the "
                             "environment is always collected (default: all)")
    return parser


def _num(value: float) -> str:
    return f"{value:,.1f}" if value >= 10 else f"{value:.3g}"


def _gb(value: float | None) -> str:
    return f"{_num(value)} GB/s" if value is not None else "-"


def _size(size: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def _spread(s, ranks: str = "GPUs") -> str:
    """"; 2 GPUs p10 …" (``ranks``: "ranks" for a run without a GPU)."""
    if s is None or s.n < 2:
        return ""
    return (f"; {s.n} {ranks} p10 {_num(s.p10)} p50 {_num(s.p50)} p90 {_num(s.p90)}, slowest "
            f"rank {s.min_rank} {_num(s.min)}")


def _clock_events(mask: str | None) -> str:
    if not mask:
        return ""
    words = clock_event_words(mask)
    return f"clock events {mask}" + (f" ({words})" if words else "")


def _telemetry(t) -> str:
    parts = [f"SM {t.sm_clock_mhz} MHz" if t.sm_clock_mhz else "",
             f"memory {t.memory_clock_mhz} MHz" if t.memory_clock_mhz else "",
             f"{t.power_draw_w:.0f} W" if t.power_draw_w else "",
             f"limit {t.power_limit_w:.0f} W" if t.power_limit_w else "",
             f"{t.temperature_c:.0f} C" if t.temperature_c else "",
             f"MIG {t.mig_mode}" if t.mig_mode else "", f"ECC {t.ecc_mode}" if t.ecc_mode else "",
             _clock_events(t.clock_event_reasons)]
    return ", ".join(p for p in parts if p)


def _matmul_lines(m, ranks: str = "GPUs") -> list[str]:
    lines = []
    pad = max((len(d.dtype) for d in m.dtypes), default=0)  # fp8_e4m3_fast broke the column
    if m.warmup_seconds is not None and m.burst_tflops and m.sustained_tflops:
        warm = m.warmup_seconds  # "0 s" for 0.096 s read as no warm-up at all
        took = f"{warm:.0f} s" if warm >= 10 else f"{warm:.2g} s"
        lines.append(f"warm-up {m.warmup_dtype} {'x'.join(map(str, m.warmup_shape or ()))}: "
                     f"{took}, burst {_num(m.burst_tflops)} -> sustained "
                     f"{_num(m.sustained_tflops)} TFLOP/s"
                     + ("" if m.warmup_settled else " (not settled)"))
    if m.under_load is not None:
        lines.append(f"under load: {_telemetry(m.under_load)}")
    for d in m.dtypes:
        if d.status == "measured" and d.best_tflops and d.best_shape:
            shape = "x".join(map(str, d.best_shape))
            line = (f"matmul {d.dtype:>{pad}}: {_num(d.best_tflops)} TFLOP/s at {shape}"
                    f"{'/' + d.best_layout if d.best_layout else ''}")
            if d.median_tflops and d.points_measured > 1:
                line += f", median {_num(d.median_tflops)} over {d.points_measured} shapes"
            line += _spread(d.across_ranks, ranks)
            if d.check_rel_error is not None:
                line += (f"; vs bf16 error {d.check_rel_error:.2g} "
                         f"({'ok' if d.check_passed else 'FAILED'})")
            lines.append(line)
        else:
            lines.append(f"matmul {d.dtype:>{pad}}: {d.status} ({d.reason})")
    return lines


def format_summary(report: ProbeReport, *, out: str | None = None) -> str:
    """A few lines for a person: TFLOP/s per dtype, bandwidths, largest-size busbw, the spread
    over GPUs and the transports."""
    lines = []
    env = report.environment
    ranks = "GPUs" if env is None or env.device_type == "cuda" else "ranks"  # a CPU run's
    if env is not None:
        gpu = f"{env.gpu_count} x {env.gpu_model}" if env.gpu_model else "no GPU"
        where = " ".join(x for x in (env.cloud, env.instance_type, env.region) if x)
        lines.append(f"{env.hostname}: {gpu}, {env.node_count} node(s), torch "
                     f"{env.torch_version}, CUDA {env.cuda_version}, NCCL {env.nccl_version}"
                     + (f" ({where})" if where else ""))
        if env.idle is not None:
            lines.append(f"idle: {_telemetry(env.idle)}")
    if report.matmul is not None:
        lines.extend(_matmul_lines(report.matmul, ranks))
    if report.memory is not None:
        for p in report.memory.points:
            if p.status == "measured":
                lines.append(f"memory {p.name:>12}: {_gb(p.gb_per_s)} "
                             f"({_size(p.size_bytes or 0)} buffer)"
                             f"{_spread(p.across_ranks, ranks)}")
        lines.append("  bytes: " + report.memory.byte_convention)
    col = report.collectives
    if col is not None:
        if col.status != "measured":
            lines.append(f"collectives: {col.status} ({col.reason})")
        for s in col.series:
            if s.status == "measured" and s.points:
                last = s.points[-1]
                via = (f" via {s.transport}" + (f" over {s.net}" if s.net else "")
                       + (f", net plugin {s.net_plugin}" if s.net_plugin else "")) \
                    if s.transport else (f" ({s.transport_source})" if s.transport_source else "")
                lines.append(f"{s.scope:>10} {s.op:<14} n={s.group_size}: busbw "
                             f"{_gb(last.busbw_gb_per_s)} at {_size(last.size_bytes)}{via}")
            elif s.scope != "world" or col.node_count > 1:
                lines.append(f"{s.scope:>10} {s.op:<14}: {s.status} ({s.reason})")
    if report.ranks:
        lines.append(f"ranks reporting: {len(report.ranks)}")
    for e in report.errors:
        lines.append(f"error in {e.probe} (rank {e.rank}): {e.error_type}: {e.message}")
    if out is not None:
        lines.append(f"report written to {out} ({report.duration_seconds:.1f} s)")
    return "\n".join(lines)


def build_workload_parser(*, check_out: bool = True) -> argparse.ArgumentParser:
    """The parser of `python -m probes workload`, whose options `gpuplan probe workload`
    checks before anything runs; ``check_out=False``: all but the report path."""
    from probes._workload_cli import build_parser as workload_parser

    return workload_parser(check_out=check_out)


def check_workload_config(args: argparse.Namespace) -> str | None:
    """The checks `python -m probes workload` makes of the shape before building anything
    (tp divides the heads, and so on), for `gpuplan probe workload` (its errors then read as
    gpuplan's) and its --print-command, which prints a command for the node instead of
    running it; ProbesError when one fails. Returns
    the note the run would print first (its steps too few to calibrate), or None."""
    from probes._workload_cli import config_from_args, too_short_to_calibrate

    return too_short_to_calibrate(config_from_args(args))


_TAKES_VALUE = ("--out", "--device", "--timeout-s", "--sizes", "--shapes", "--dtypes",
                "--probes")


def workload_position(argv: list[str]) -> int | None:
    """Where the ``workload`` subcommand is: first, or after options such as ``--out FILE``
    (the launch task runs ``-m probes --out report.json $GPUPLAN_PROBE_ARGS``, so
    ``GPUPLAN_PROBE_ARGS="workload --model ..."`` reaches it); None for the hardware probes."""
    for i, token in enumerate(argv):
        if token == "workload" and (i == 0 or argv[i - 1] not in _TAKES_VALUE):
            return i
        if not token.startswith("-") and (i == 0 or argv[i - 1] not in _TAKES_VALUE):
            return None  # another positional: not ours to interpret
    return None




def setup_error(message: object) -> int:
    """Say a problem the user can fix before anything is measured, as every gpuplan error:
    one line on stderr, "error: … To fix: …"; returns the exit status, 2. Said once under
    torchrun (PEER_GRACE_S); nothing if stderr is closed (stdout is the summary's)."""
    wait_unless_rank_zero()
    if sys.stderr is None:  # 2>&-: print(file=None) would write to stdout
        return 2
    try:
        print(f"error: {' '.join(str(message).split())}", file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed or broken stderr: the exit status still says it
        pass
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    at = workload_position(argv)
    if at is not None:  # `python -m probes workload ...`: the user's layers
        from probes._workload_cli import main as workload_main

        try:
            return workload_main(argv[:at] + argv[at + 1:])
        except ProbesError as exc:
            return setup_error(exc)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        require_torch()  # a clear message when it is missing; Ctrl-C during it not lost
    except ProbesError as exc:
        return setup_error(exc)
    from probes._runner import run_probes

    try:
        config = ProbeConfig(quick=args.quick, device=args.device,
                             timeout_seconds=args.timeout_s, probes=args.probes,
                             dtypes=args.dtypes, matmul_shapes=args.shapes,
                             collective_sizes_bytes=args.sizes)
    except ValueError as exc:
        return setup_error(f"{str(exc).rstrip('.')}. {_FIX}")
    try:
        report = run_probes(config, out=args.out)
    except ProbesError as exc:
        return setup_error(exc)
    if is_rank_zero():
        say_summary(format_summary(report, out=args.out))
    return 1 if report.errors else 0
