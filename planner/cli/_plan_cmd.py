"""`gpuplan plan`. A module of its own so that `gpuplan estimate`, which registers only
itself, does not import the optimizer (``planner.search``) for its defaults."""

# No `from __future__ import annotations` in a command module: see planner/cli/_main.py

import sys
from typing import Annotated

import typer

from planner.search import (
    DEFAULT_MAX_GPUS,
    DEFAULT_MAX_SPOT_INSTANCES,
    DEFAULT_MIN_PROBABILITY,
    DEFAULT_PRICING,
)

from . import _workload_opts as W
from ._app import console, print_json
from ._model_cmds import active_calibration
from ._tables import Wide


def plan_cmd(
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
    deadline: Annotated[str, typer.Option("--deadline", help="14d, 36h, 2w or a date "
                        "(2027-03-31: by 00:00 UTC that day).")] = "30d",
    budget: Annotated[str | None, typer.Option("--budget", help="Total USD limit (e.g. 30000, "
                      "30k or $30,000).")] = None,
    max_gpus: Annotated[int | None, typer.Option(
        "--max-gpus", help="Largest cluster to consider (default: the planner's, "
        f"{DEFAULT_MAX_GPUS:,}).")] = None,
    quota_file: Annotated[str | None, typer.Option("--quota-file", help="YAML: quotas: "
                          "[{cloud?, region?, accelerator?, gpus}] (a field left out matches "
                          "everything).")] = None,
    clouds: Annotated[list[str] | None, typer.Option(
        "--clouds", "--cloud", help="Only these clouds (aws, gcp, azure; comma-separated or "
        "repeated).")] = None,
    regions: Annotated[list[str] | None, typer.Option(
        "--regions", "--region", help="Only these regions (exact names: us-east-1 does not "
        "include its Local Zones).")] = None,
    pricing: Annotated[list[str] | None, typer.Option(
        "--pricing", help=f"Pricing models to consider (default {','.join(DEFAULT_PRICING)}; "
        "also reserved_1y, reserved_3y, committed_1y, committed_3y, capacity_block).")] = None,
    gpu: Annotated[list[str] | None, typer.Option("--gpu", help="Only these accelerators "
                   "(also admits TPU/Trainium/Gaudi, which are otherwise left out). A name "
                   "several share (A100, V100) is refused with their names.")] = None,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Instance types, "
                       "clouds or regions to leave out.")] = None,
    min_probability: Annotated[float | None, typer.Option(
        "--min-probability", help="Only plans at least this likely to finish by the deadline "
        f"(default {DEFAULT_MIN_PROBABILITY:g}; 0: the expected time must meet it, no "
        "probability asked — not the loosest: 0.1 admits plans expected to run late).")] = None,
    top: Annotated[int, typer.Option("--top", help="Distinct candidates to list (1–1000).")]
    = 10,
    commitment_use: Annotated[float | None, typer.Option(
        "--commitment-use", help="Share (0–1) of a reservation's or commitment's remaining "
        "term you will use after this run; the rest is paid for nothing (default 0).")] = None,
    max_spot_instances: Annotated[int | None, typer.Option(
        "--max-spot-instances", help="Spot fleets above this many instances of one type in "
        f"one region carry a capacity warning (default {DEFAULT_MAX_SPOT_INSTANCES}: clouds "
        "publish no spot capacity).")] = None,
    allow_flagged: Annotated[bool, typer.Option(
        "--allow-flagged", help="Also use offers whose price the catalog flagged (see "
        "`gpuplan offers --flagged`).")] = False,
    by: Annotated[str | None, typer.Option(
        "--by", help="Also show the best plan per accelerator or per cloud, side by side.")]
    = None,
    storage_price: Annotated[str | None, typer.Option(
        "--checkpoint-storage-usd-per-gb-month", help="Add the storage of the two "
        "checkpoints kept, at this USD per GB-month (e.g. 0.023), to each plan's cost "
        "(default: none).")] = None,
    emit: Annotated[str | None, typer.Option("--emit", help="Also write a launch file for "
                    "the recommendation: skypilot, dstack or torchrun.")] = None,
    emit_out: Annotated[str | None, typer.Option("--emit-out", help="Where --emit writes "
                        "(default: stdout after the plan).")] = None,
    overrides: Annotated[str | None, typer.Option("--overrides", help="Price overrides YAML "
                         "(see `gpuplan offers --help`).")] = None,
    assume: W.Assume = None,
    no_calibration: W.NoCalibration = False,
    json_out: W.Json = False,
    wide: Wide = False,
) -> None:
    """The cheapest cloud configuration that trains the workload by the deadline, the
    cost/time frontier, and the odds of finishing in time.

    Exit status: 0 a plan meets the deadline; 2 none does (with --json the answer, its
    `infeasible` block set, is still printed) or the input is wrong (one error line, nothing
    on stdout)."""
    import planner
    from planner.model import parse_usd
    from planner.search import Constraints, plan

    from ._app import (
        EXIT_USAGE,
        CliExit,
        catalog_banner_on_stderr,
        load_priced_catalog,
        overrides_input,
        print_catalog_banner,
    )
    from ._files import load_quota_file
    from ._values import comma_hint, split_csv

    # amounts as people type them ($30,000, 30k): read by the planner's parser as --tokens is,
    # a wrong one a line naming the flag; before the catalog loads, as Typer's refusal was
    budget_usd = None if budget is None else parse_usd(budget, "budget_usd")
    storage_usd = None if storage_price is None else parse_usd(
        storage_price, "checkpoint_storage_usd_per_gb_month")
    inputs = {"--config": config, "--quota-file": quota_file, **overrides_input(overrides)}
    if emit is not None or emit_out is not None:
        from ._launch_cmds import check_emit_options

        check_emit_options(emit, emit_out, json_out=json_out, inputs=inputs)  # before search
    cat = load_priced_catalog(overrides)
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
    comma_hint(split_csv(gpu, "--gpu"), "--gpu", cat.resolve_accelerator)  # "H100 A10G"
    constraints = Constraints(
        deadline_hours=planner.parse_deadline(deadline), max_gpus=max_gpus,
        budget_usd=budget_usd, min_probability=min_probability,
        clouds=tuple(split_csv(clouds, "--clouds")),
        regions=tuple(split_csv(regions, "--regions")),
        pricing=tuple(split_csv(pricing, "--pricing")) or None,
        gpus=tuple(split_csv(gpu, "--gpu")), exclude=tuple(split_csv(exclude, "--exclude")),
        quotas=load_quota_file(quota_file, cat) if quota_file is not None else None,
        checkpoint_storage_usd_per_gb_month=storage_usd, commitment_use=commitment_use,
        max_spot_instances=max_spot_instances, allow_flagged=allow_flagged,
        group_by=by.lower() if by is not None else None)
    _check_commitment_use(commitment_use, constraints.pricing)
    result = plan(workload, cat, constraints, assumptions=W.assumptions_from(assume),
                  calibration=active_calibration(cat, no_calibration), top_n=top)
    bundle = None
    if emit is not None and result.infeasible is None:
        from ._launch_cmds import plan_launch

        # built before anything is printed: a plan no launch file covers is one error line
        bundle = plan_launch(result.recommendation.as_dict(), emit, emit_out, cat, workload,
                             inputs)
    if not json_out:
        import contextlib

        from ._plan_view import print_plan

        # --emit-out -: stdout is the launch file alone (`> run.sky.yaml`), the plan for the
        # person goes to stderr (it came first on stdout, and the saved file was no YAML)
        with (contextlib.redirect_stdout(sys.stderr) if bundle is not None and emit_out == "-"
              else contextlib.nullcontext()):
            print_plan(result, constraints, wide=wide)
            print_catalog_banner(console(fit=not wide), cat)
    if bundle is not None:
        # after the table; before the JSON: a write that failed (a full disk) printed the
        # whole answer on stdout and then exited 2 (hostile sweep)
        from ._launch_cmds import emit_plan_launch

        emit_plan_launch(bundle, emit_out, json_out=json_out)
    if json_out:
        print_json(result.as_dict())
        if result.infeasible is None:  # (an infeasible answer's stderr is its one error line)
            # which prices, how old, as `offers --json` says it: on stderr, beside the JSON
            catalog_banner_on_stderr(cat)
    if result.infeasible is not None:
        inf = result.infeasible
        from ._plan_view import infeasible_fixes

        sys.stderr.write(f"error: infeasible: {inf.reason}. To fix: "
                         f"{infeasible_fixes(inf, constraints)} (details "
                         f"{'in the JSON' if json_out else 'above'})\n")
        raise CliExit(EXIT_USAGE)


def _check_commitment_use(given: float | None, pricing: tuple[str, ...]) -> None:
    """--commitment-use prices a term's hours left after the run: with no term among the
    pricing models searched it changed nothing, silently (hostile sweep)."""
    from catalog import PRICING_TERM_HOURS, GpuplanError

    if given is not None and not any(PRICING_TERM_HOURS.get(p) for p in pricing):
        raise GpuplanError(
            f"--commitment-use applies to reserved and committed pricing (the term's hours "
            f"left after the run); --pricing {', '.join(pricing)} has no term. To fix: add "
            "one to --pricing (e.g. reserved_1y, committed_1y), or leave out --commitment-use")
