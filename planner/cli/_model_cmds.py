"""`gpuplan estimate`, and the probe calibration that `plan` and `report` use too."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import re
from typing import Annotated

import typer

from . import _workload_opts as W
from ._app import console, print_hanging, print_json
from ._flags import given_options, say_fields


def active_calibration(cat, no_calibration: bool = False):
    """Measurements from ingested probe reports (empty when none were ingested or when the
    user turned them off)."""
    from planner.model import NO_CALIBRATION
    from planner.store import db_path

    path = db_path()  # nothing ingested: skip the store's rules (a broken link is something)
    if no_calibration or not (path.exists() or path.is_symlink()):
        return NO_CALIBRATION
    from planner.model import CalibrationError
    from planner.store import load_calibration

    try:
        return load_calibration(cat)
    except CalibrationError as exc:  # a damaged, locked or foreign store: said how to go on
        raise CalibrationError(f"{str(exc).rstrip('.')}; or pass --no-calibration to plan "
                               "with datasheet figures meanwhile") from None


def estimate_cmd(
    model: W.Model = None, config: W.Config = None, params: W.Params = None,
    active_params: W.ActiveParams = None, experts: W.Experts = None,
    experts_per_token: W.ExpertsPerToken = None, tokens: W.Tokens = None,
    seq_len: W.SeqLen = None, global_batch_tokens: W.GlobalBatch = None,
    precision: W.Precision = "bf16", optimizer: W.Optimizer = "adamw",
    recompute: W.Recompute = "auto", finetune: W.Finetune = "none", lora_rank: W.LoraRank = None,
    layers: W.Layers = None, hidden: W.Hidden = None, heads: W.Heads = None,
    kv_heads: W.KvHeads = None, ffn_hidden: W.FfnHidden = None, vocab: W.Vocab = None,
    framework: W.Framework = "megatron", attention: W.Attention = "flash",
    tp: W.Tp = None, pp: W.Pp = None, cp: W.Cp = None, vp: W.Vp = None, zero: W.Zero = None,
    micro_batch: W.MicroBatch = None, ep: W.Ep = None,
    instance: Annotated[str | None, typer.Option("--instance", help="A catalog instance type, "
                        "e.g. p5.48xlarge.")] = None,
    nodes: Annotated[int, typer.Option("--nodes", help="Instances (with --instance).")] = 1,
    cloud: Annotated[str | None, typer.Option("--cloud", help="Disambiguate --instance.")]
    = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="An accelerator for a reference "
                   "node: V100-32GB, A100-40GB, A100-80GB, H100, H800, H200, B200, L4, L40S, "
                   "A10G, MI300X, … (a name several share, such as A100, is refused)")] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", help="Accelerators (with --gpu; "
                                                         "default 8: one reference node).")]
    = None,
    assume: W.Assume = None,
    list_assumptions: Annotated[bool, typer.Option("--list-assumptions",
                                help="Print the model's constants and exit.")] = False,
    no_calibration: W.NoCalibration = False,
    json_out: W.Json = False,
) -> None:
    """Wall-clock, GPU-hours, MFU and memory of one training run on one cluster, with the
    fastest parallel plan that fits.

    Exit status: 0 the estimate is printed; 2 the workload fits in no parallel plan on this
    cluster (one error line naming the smallest setup that fits; with --json too, nothing on
    stdout) or the input is wrong (one error line, nothing on stdout)."""
    import planner

    if list_assumptions:
        from catalog import GpuplanError
        from planner.model import describe_assumptions

        ignored = given_options(besides=("list_assumptions", "assume", "json_out"))
        if ignored:
            raise GpuplanError(
                f"--list-assumptions prints the model's constants and exits; it takes only "
                f"--assume and --json, and {', '.join(ignored)} would be ignored. To fix: "
                f"drop {', '.join(ignored)}, or drop --list-assumptions to estimate")

        rows = describe_assumptions(W.assumptions_from(assume))
        if json_out:
            print_json(rows)
        else:
            print_assumption_table(rows)
        return
    from catalog import load_catalog

    cat = load_catalog()
    spec = W.workload_spec(model=model, config=config, params=params,
                           active_params=active_params, experts=experts,
                           experts_per_token=experts_per_token, tokens=tokens, seq_len=seq_len,
                           global_batch_tokens=global_batch_tokens, precision=precision,
                           optimizer=optimizer, recompute=recompute, finetune=finetune,
                           lora_rank=lora_rank, layers=layers, hidden=hidden, heads=heads,
                           kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=vocab,
                           framework=framework, attention=attention, tp=tp, pp=pp, cp=cp,
                           vp=vp, zero=zero, micro_batch=micro_batch, ep=ep)
    workload = planner.build_workload(spec)
    cluster, mem = planner.build_cluster(cat, instance=instance, nodes=nodes, cloud=cloud,
                                         gpu=gpu, gpus=gpus)
    A = W.assumptions_from(assume)
    try:
        est = planner.estimate(workload, cluster, assumptions=A,
                               calibration=active_calibration(cat, no_calibration),
                               memory_gib=mem)
    except planner.NoFitError:  # the workload's own warnings first: a head_dim typo that
        # counted 694B parameters was said as "693.9B parameters do not fit" alone
        err = console(stderr=True, fit=True)
        for warning in workload.warnings:
            print_hanging(err, say_fields(warning), first="warning: ", rest="  ",
                          first_style="yellow")
        raise
    without = None
    if est.calibrated:  # show what the measurements did: the same estimate without them
        try:
            without = planner.estimate(workload, cluster, assumptions=A, memory_gib=mem)
        except planner.NoFitError:  # measured activations below the count made it fit
            without = NO_FIT_WITHOUT
    if json_out:
        d = est.as_dict()
        if without is not None:
            d["wall_clock_hours_without_calibration"] = (
                None if without is NO_FIT_WITHOUT else without.wall_clock_hours)
        print_json(d)
        return
    print_estimate(est, without)


NO_FIT_WITHOUT = object()  # the estimate without calibration found no plan that fits
NARROW_COLUMNS = 100  # below this the constants are a list: a 4-column table squeezes them
MIN_CELL = 12  # the narrowest a wrapped value is made (rich narrows it further if it must)
TABLE_FRAME = 7  # what a two-column table's borders and padding take: "│ " + " │ " + " │"
# a space that must not break: after a number, before its unit ("751 h", "0.000 s"; at 60
# columns "h" and "s" stood alone on the next line)
_GLUE = re.compile(r"(?<=\d) (?=(?:h|d|s|GiB|GB/s|TFLOP/s)\b)")
NBSP = "\u00a0"


def _units_kept(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` (at least ``MIN_CELL``) where it is longer, never
    between a number and its unit; as it is where it fits."""
    from rich.cells import cell_len

    from ._tables import wrap_text

    if cell_len(text) <= width:
        return text
    lines = wrap_text(_GLUE.sub(NBSP, text), max(width, MIN_CELL))
    return "\n".join(lines).replace(NBSP, " ")


def print_assumption_table(rows: list[dict]) -> None:
    from rich.table import Table

    out = console(fit=True)  # the terminal's width, 100 when piped (as README says)
    if out.width < NARROW_COLUMNS:
        import textwrap

        from rich.text import Text

        out.print("[bold]Model constants[/bold] (override with --assume NAME=VALUE)")
        for r in rows:
            v = r["value"]
            text = f"{v:.4g}" if isinstance(v, float) else str(v)
            line = Text(r["name"], style="bold")
            line.append(f"{' *' if r['overridden'] else ''} = {text} {r['unit']}")
            out.print(line, soft_wrap=True)  # the name whole, as --assume takes it
            out.print(Text(textwrap.fill(r["about"], out.width, initial_indent="    ",
                                         subsequent_indent="    ")))
        return
    t = Table(title="Model constants (override with --assume NAME=VALUE)")
    # a name is what --assume takes: never broken across lines (the prose column wraps)
    t.add_column("name", no_wrap=True)
    for col, just in (("value", "right"), ("unit", "left"), ("what and where from", "left")):
        t.add_column(col, justify=just, overflow="fold")
    for r in rows:
        v = r["value"]
        text = f"{v:.4g}" if isinstance(v, float) else str(v)
        t.add_row(r["name"] + (" *" if r["overridden"] else ""), text, r["unit"], r["about"])
    out.print(t)


def _bullet(out, text: str) -> None:
    """'  • text', the continuation under the text."""
    print_hanging(out, text, first="  • ")


def print_measured(out, calibrated) -> None:
    """The probe measurements an estimate used instead of datasheet defaults (its
    ``calibrated`` lines): `estimate`'s section, and `plan`'s for its recommendation."""
    # continued under itself: at 60 columns "--no-calibration" began a line at column 0
    print_hanging(out, "(`gpuplan probe show`; --no-calibration to ignore)",
                  first="Measured on your instances ", rest="  ", first_style="bold")
    for line in calibrated:
        _bullet(out, say_fields(line))


def _h(hours: float) -> str:
    """Hours as `plan`'s card writes them (whole from two days: "216 h (9.0 d)" beside a
    P10–P90 of "154–303 h"; it said "216.1 h")."""
    from planner.model import format_hours

    return format_hours(hours)


def print_estimate(est, without=None) -> None:
    from rich.table import Table
    from rich.text import Text

    from planner.model import (
        format_amount,
        format_count,
        format_expected,
        format_hours_range,
        format_params,
    )

    out = console(fit=True)  # the terminal's width, 100 when piped (as README says)
    c, p, w = est.cluster, est.plan, est.workload
    hw = (f"{c.nodes}x {c.instance_type} ({c.gpus}x {c.accelerator.name})" if c.instance_type
          else f"{c.gpus}x {c.accelerator.name} (reference node)")
    a = w.arch
    # the name as text: a config's folder may be called "m[/red]" (rich read it as markup)
    out.print(Text.assemble((a.name or "model", "bold"), f" {format_params(a.params_total())} "
                            f"params, {format_count(w.tokens)} tokens on {hw}; framework "
                            f"{w.framework}"))
    rows: list[tuple[str, str]] = []

    def row(label: str, value: str) -> None:
        rows.append((label, value))

    r = est.wall_clock
    row("wall-clock (calendar)",
        f"{_h(r.p50)}  P10–P90 {format_hours_range(r.p10, r.p90)}")
    row("training time", f"{_h(est.training_hours)} (steps × step time)")
    row("GPU-hours", f"{format_amount(est.gpu_hours)}  P10–P90 "
        f"{format_amount(r.p10 * c.gpus)}–{format_amount(r.p90 * c.gpus)}")
    row("MFU", f"{est.mfu:.1%}")
    row("model TFLOP/s per GPU", f"{est.model_tflops_per_gpu:,.1f}")
    row("tokens/s", f"{est.tokens_per_s:,.0f} ({est.tokens_per_s / c.gpus:,.0f} per GPU)")
    row("memory per GPU", f"{est.memory['total_gib']:.1f} of "
        f"{est.memory['capacity_gib']:g} GiB")
    row("step time", f"{est.step_time_s:.4g} s × {est.steps:,} steps of "
        f"{est.tokens_per_step:,} tokens")
    g = est.goodput
    row("goodput", f"{g.fraction:.1%} ({format_expected(g.expected_interruptions)} "
        "interruptions expected)")
    pinned = w.pins.as_dict()
    row("plan", str(p) + (f"  (pinned: {', '.join(f'{k}={v}' for k, v in pinned.items())})"
                          if pinned else ""))
    b = est.breakdown
    row("step breakdown", ", ".join(f"{k.removesuffix('_s').replace('_', ' ')} {v:.3f} s"
                                    for k, v in b.items()))
    m = est.memory
    row("memory breakdown", f"weights {m['weights_gib']:.1f}, grads "
        f"{m['gradients_gib']:.1f}, optimizer {m['optimizer_gib']:.1f}, activations "
        f"{m['activations_gib']:.1f}, logits {m['logits_gib']:.1f}, reserve "
        f"{m['runtime_reserve_gib']:.1f} GiB")
    t = Table(show_header=False)
    t.add_column("metric")
    t.add_column("value", overflow="fold")  # left: a wrapped line stays beside its label
    room = out.width - max(len(label) for label, _ in rows) - TABLE_FRAME
    for label, value in rows:
        t.add_row(label, _units_kept(value, room))
    out.print(t)
    for warning in est.warnings:  # continued two columns in, as plan's
        print_hanging(out, say_fields(warning), first="warning: ", rest="  ",
                      first_style="yellow")
    if est.calibrated:
        print_measured(out, est.calibrated)
        # wrapped under its text: rich's own wrap left "… with datasheet defaults " with a
        # trailing space and "(+39.6%)" at column 0
        if without is NO_FIT_WITHOUT:
            print_hanging(out, f"wall-clock {_h(est.wall_clock_hours)} with the measurements; "
                          "with datasheet defaults no plan fits (the measured activations are "
                          "smaller)", first="  → ", rest="    ")
        elif without is not None:
            change = est.wall_clock_hours / without.wall_clock_hours - 1
            print_hanging(out, f"wall-clock {_h(est.wall_clock_hours)} with the measurements, "
                          f"{_h(without.wall_clock_hours)} with datasheet defaults "
                          f"({change:+.1%})", first="  → ", rest="    ")
    out.print("[bold]Assumptions[/bold]")
    for note in est.assumptions:
        _bullet(out, say_fields(note))
