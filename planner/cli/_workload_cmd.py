"""`gpuplan probe workload` (issue #20): the user's own transformer layers, timed on this
machine at their real shapes, with the model chosen as for `estimate`."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

from typing import Annotated

import typer

from . import _workload_opts as W  # the workload options of `estimate`, one definition
from ._app import CliExit, console, print_hanging
from ._flags import say_fields
from ._probe_cmds import parse_probe_args


def _take_option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """(the value of ``name VALUE`` / ``name=VALUE`` in ``args``, the last when given twice as
    argparse takes it; ``args`` without it). A ``name`` without a value is an error here: left
    in, the probes called `--model-name` "given twice" beside gpuplan's own."""
    from catalog import GpuplanError

    value, rest, i = None, [], 0
    while i < len(args):
        if args[i] == name or args[i].startswith(name + "="):
            value = (args[i + 1] if i + 1 < len(args) else "") if args[i] == name else \
                args[i].split("=", 1)[1]
            if not value.strip() or (args[i] == name and value.startswith("--")):
                raise GpuplanError(f"probe workload: {name} needs a value. To fix: give one, "
                                   f"e.g. {name}=NAME")
            i += 2 if args[i] == name else 1
        else:
            rest.append(args[i])
            i += 1
    return value, rest


def check_workload_args(argv: list[str], *, print_command: bool = False,
                        inputs: dict | None = None) -> None:
    """Every `probe workload` option checked before any layer is built or file written: the
    counts within their bounds (--build-layers, --steps... see `python -m probes workload
    --help`), a finite timeout, and --out as every gpuplan --out (its folder must exist).
    With ``print_command`` the report is written on the node: its path is not checked here,
    and the note the node would print first (too few steps to calibrate) is said now.
    ``inputs``: option → path the command reads, which --out must not replace."""
    from catalog import GpuplanError, check_output_path, input_clash
    from probes.cli import build_workload_parser

    if not print_command:  # the clash first: the report check would only say "not a report"
        out = parse_probe_args(build_workload_parser(check_out=False), argv,
                               command="workload").out
        if (option := input_clash(out, inputs or {})) is not None:
            raise GpuplanError(f"--out {out} is the file {option} names, which the probe "
                               "reads: the report would replace it. To fix: choose another "
                               "--out")
    args = parse_probe_args(build_workload_parser(check_out=not print_command), argv,
                             command="workload")
    if not print_command:
        check_output_path(args.out, what="workload report (--out)")
    from probes import ProbesError
    from probes.cli import check_workload_config

    try:  # a printed command must not fail on the node; a run fails here, as gpuplan errors
        note = check_workload_config(args)
    except ProbesError as exc:
        raise GpuplanError(f"probe workload: {exc}") from None
    if note and print_command:  # a run prints it itself
        console(stderr=True).print(note, markup=False, highlight=False)


def workload_cmd(
    ctx: typer.Context,
    model: W.Model = None, config: W.Config = None, params: W.Params = None,
    active_params: W.ActiveParams = None, experts: W.Experts = None,
    experts_per_token: W.ExpertsPerToken = None, seq_len: W.SeqLen = None,
    precision: W.Precision = "bf16", recompute: W.ProbeRecompute = "none",
    layers: W.Layers = None, hidden: W.Hidden = None, heads: W.Heads = None,
    kv_heads: W.KvHeads = None, ffn_hidden: W.FfnHidden = None,
    framework: W.Framework = "fsdp", tp: W.ProbeTp = None, micro_batch: W.ProbeMicroBatch = None,
    print_command: Annotated[bool, typer.Option(
        "--print-command", help="Print the torchrun command that runs this on every GPU of a "
        "node (the shape spelled out: the node needs only the probes package) and exit.")]
    = False,
) -> None:
    """Time your model's transformer layers (forward + backward + AdamW) at their real shapes
    on this machine and write a report for `gpuplan probe ingest` (needs torch).

    The model is chosen as for `estimate`. Run options of `python -m probes workload` pass
    through: --out FILE (its folder must exist), --quick, --device, --build-layers N (1 to
    128), --steps N (1 to 10,000), --warmup-steps N (0 to 1,000), --attention
    auto|flash|cudnn|efficient|math, --no-profile, --timeout-s S (1 to 86,400). --framework
    (default fsdp: eager PyTorch layers, as FSDP/torchtitan run them) names the profile the
    measurement calibrates; --recompute defaults to none here.
    """
    import shlex

    import planner
    from catalog import GpuplanError
    from planner.model import probe_options, shape_of

    if recompute == "auto":  # estimate and plan search it; a measurement times one setting
        raise GpuplanError("--recompute auto searches in `estimate` and `plan`; the workload "
                           "probe times one setting. To fix: pass --recompute none, selective "
                           "or full (the default here is none)")

    from argparse import ArgumentTypeError

    from probes.cli import build_workload_parser

    # the probe's bounds (its option types), not the planner's pins: those went up to 131,072
    # and said "or leave it to the search", and the probe has no search
    types = {a.dest: a.type for a in build_workload_parser(check_out=False)._actions}
    for flag, value in (("--tp", tp), ("--micro-batch", micro_batch)):
        try:
            if value is not None:
                types[flag[2:].replace("-", "_")](str(value))
        except ArgumentTypeError as exc:
            raise GpuplanError(f"{flag}: {exc}. To fix: pass e.g. {flag} 1, or leave it out "
                               "(default 1)") from None
    for flag in ("--head-dim", "--shared-experts"):  # gpuplan gives the model's own: a user's
        # went through as a second (--head-dim "given twice") or as a dense run's shared experts
        if any(a == flag or a.startswith(flag + "=") for a in ctx.args):
            raise GpuplanError(f"{flag} is for a shape given in full; with --model, --config or "
                               f"--params the model's own is used. To fix: drop {flag}, or give "
                               "the shape in full to `python -m probes workload`")
    # the probe times layers, never a run: a nominal token count, so a model too large for
    # the default (20 per parameter) is not refused with "give --tokens", a flag it lacks
    spec = W.workload_spec(
        model=model, config=config, params=params, active_params=active_params,
        experts=experts, experts_per_token=experts_per_token, tokens="1B", seq_len=seq_len,
        global_batch_tokens=None, precision=precision, optimizer="adamw", recompute=recompute,
        finetune="none", lora_rank=None, layers=layers, hidden=hidden, heads=heads,
        kv_heads=kv_heads, ffn_hidden=ffn_hidden, vocab=None, framework=framework, tp=tp,
        micro_batch=micro_batch)
    workload = planner.build_workload(spec)
    for warning in workload.warnings:  # as estimate says them: a --seq-len beyond the model's
        # context, sizes that change the model (the probe times the model as changed)
        print_hanging(console(stderr=True), say_fields(warning), first="warning: ", rest="  ",
                      first_style="yellow")
    arch = workload.arch
    narrow = arch.windowed_layers or arch.chunked_layers
    if arch.attention_params_per_layer or arch.dense_layers or narrow:
        console(stderr=True).print(
            "note: " + "; ".join(n for n in (
                "the model's attention (MLA-style) runs as standard attention of the same "
                "heads and head dim, as the planner models it" if
                arch.attention_params_per_layer else "",
                f"its {arch.dense_layers} leading dense layers are not probed (the MoE layer "
                "is)" if arch.dense_layers else "",
                # a windowed model's layer was timed with full causal attention, unsaid
                "the layer runs full causal attention: its sliding window or chunks are not "
                "probed (the planner scales the attention for them)" if narrow else "")
                if n), markup=False, highlight=False)
    # the user's own label (`--model-name`, passed on to the probes) replaces gpuplan's: both
    # went through, and the probes said "--model-name is given twice"
    named, passed = _take_option(ctx.args, "--model-name")
    # a config's own name (its _name_or_path), as `python -m probes` and `estimate` label it:
    # its file name would be "config.json" for every Hugging Face download
    label = named or model or (arch.name if config else f"{params} (inferred)")
    opts = probe_options(shape_of(workload), model_layers=workload.arch.layers,
                         framework=spec.framework, model=label, tp=tp or 1)
    check_workload_args([*opts, *passed], print_command=print_command,
                        inputs={"--config": config})
    if print_command:
        # the launch task writes report.json itself (and fetches that): a --out of this
        # machine's would be the last --out there, and the report would not be fetched;
        # run by hand, the node writes workload-report.json unless the options name a file
        launched = _take_option(passed, "--out")[1]
        out_default = [] if launched != passed else ["--out", "workload-report.json"]
        out = console()
        out.print("torchrun --standalone --nproc-per-node \"$(nvidia-smi -L | wc -l)\" "
                  "-m probes workload "
                  f"{shlex.join([*opts, *out_default, *passed])}",
                  markup=False, highlight=False, soft_wrap=True)
        out.print(f"# or with `gpuplan launch probes`: sky launch --env GPUPLAN_PROBE_ARGS="
                  f"{shlex.quote(shlex.join(['workload', *opts, *launched]))} …",
                  markup=False, highlight=False, soft_wrap=True)
        return
    from probes.cli import main as probes_main

    code = probes_main(["workload", *opts, *passed])
    if code:
        raise CliExit(code)
