"""`estimate`: the best parallel plan for one workload on one cluster, and what it costs in time.

The plan search enumerates tensor (within an NVLink domain), pipeline, context and data
parallel degrees, ZeRO stage, micro-batch size and recomputation — only what the workload's
framework profile can run, and only the values the user did not pin — evaluates them all at
once with the vectorised model (``_perf.evaluate``) and keeps the fastest plan that fits in
memory.

Time has three layers: the step time (physics × the framework's fitted software constants),
*training time* = steps × step time, and *calendar time* = training time / goodput (failures,
checkpoints, evaluation and operational losses, ``_goodput``). The range: log(actual/model) is
taken as normal with σ² = σ_throughput² (leave-one-source-out residuals of the software fit,
per framework) + σ_operations² (spread of published effective-training-time reports);
P10/P90 = P50 · exp(∓1.2816·σ).
"""


from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ._assumptions import Assumptions, overrides_note
from ._calibration import NO_CALIBRATION, Calibration
from ._calibration_words import calibration_warnings
from ._errors import NoFitError
from ._goodput import calendar_range, goodput, goodput_warning, outside_range
from ._grid import (
    BATCH_ROUNDING_LIMIT,
    best_index,
    least_memory,
    plan_grid,
    prune,
    run_model,
)
from ._hardware import MAX_CLUSTER_GPUS, Cluster, larger_counts, resized, smallest_fitting
from ._inputs import ClusterInputs, cluster_inputs, matmul_dtype, nvlink_domain
from ._perf import CHECKPOINT_BYTES, RECOMPUTE_NAMES
from ._pin_checks import check_pins_fit_cluster, no_grid_message
from ._records import Estimate, ParallelPlan, TimeRange
from ._scalars import ModelScalars
from ._shape import shape_of
from ._shown import format_count, format_hours_range
from ._software import PROFILES
from ._unused import unused_overrides
from ._waste import cluster_size_warning
from ._workload import Workload, default_batch_note

if TYPE_CHECKING:
    import numpy as np



def checkpoint_bytes(ms: ModelScalars) -> float:
    """What a checkpoint holds: bf16 weights + fp32 optimizer state of the trainable weights
    (a LoRA run saves its adapters; the frozen base weights are already on storage)."""
    return ms.params_total * ms.trainable_fraction * CHECKPOINT_BYTES[ms.optimizer]


def throughput_sigma(A: Assumptions, framework: str, *, moe: bool = False) -> tuple[float, str]:
    """σ of log(measured/modelled) throughput before any probe, and where it comes from: the
    profile's leave-one-source-out residuals, or for a mixture of experts the MoE fit's
    held-out spread when that is the wider."""
    sigma = A.throughput_log_sigma[framework]
    if moe and A.moe_throughput_log_sigma > sigma:
        return A.moe_throughput_log_sigma, "from the MoE fit's held-out residuals"
    return sigma, f"from the fit's leave-one-source-out residuals for {framework}"


def range_sigma(A: Assumptions, framework: str, measurement=None,
                covered: float = 0.0, *, moe: bool = False) -> float:
    """σ of log(actual/model) for calendar time: throughput and operations, independent.

    With a workload probe measurement of the layers, the throughput part shrinks to the share
    of the step the measurement does not cover (communication, bubble, optimizer), grows back
    with the distance to the measured shape (1 at the largest distance used), and adds the
    measurement's own spread: σ_t' = hypot(σ_meas, σ_t · min(1, (1 − covered) + distance))."""
    sigma_t, _ = throughput_sigma(A, framework, moe=moe)
    if measurement is not None:
        sigma_t = math.hypot(measurement.log_sigma or 0.0, sigma_t * min(
            1.0, max(0.0, 1.0 - covered) + measurement.distance))
    return math.hypot(sigma_t, A.operations_log_sigma)



def _widened_by(wm) -> str:
    """Why a workload measurement widened the range, in parentheses: ``range_sigma`` adds the
    measurement's spread to the model's σ, which narrows the less the farther the measured
    shape; that spread is the envelope of several reports or shapes (they disagree) or one
    report's own, over its steps and GPUs."""
    ids = wm.report_ids
    far = (f"; the measured shape is {wm.distance:.2f} away: the farther, the less the "
           "model's σ narrows" if wm.distance else "")
    spread = (f"measured/modelled P10–P90 {wm.time_ratio_p10:.2f}–{wm.time_ratio_p90:.2f}"
              if wm.time_ratio_p10 and wm.time_ratio_p90 else "spread")
    if len(ids) > 1:
        return (f"(the measurements used disagree): {spread} across reports "
                f"{', '.join(map(str, ids))}{far}")
    return f"(report {ids[0] if ids else '-'}'s own {spread} over its steps and GPUs{far})"


def workload_scales(cal: Calibration, workload: Workload, accelerator: str,
                    grid: dict) -> tuple[np.ndarray | None, dict]:
    """Per row of ``grid``: the workload probe's measured / modelled per-layer time for that
    row's micro-batch and recomputation (1 where nothing is measured), and the measurement
    per (micro-batch, recompute code). (None, {}) when the calibration has no workload
    measurements."""
    import numpy as np

    if cal.empty or not cal.workload_layers:
        return None, {}
    scale = np.ones(len(grid["tp"]))
    found = {}
    for mb, rc in {(int(a), int(b)) for a, b in zip(grid["mb"], grid["rc"], strict=True)}:
        m = _row_measurement(cal, workload, accelerator, mb, rc)
        if m is not None:
            found[(mb, rc)] = m
            scale[(grid["mb"] == mb) & (grid["rc"] == rc)] = m.time_ratio
    return (scale if found else None), found



def _row_measurement(cal: Calibration, workload: Workload, accelerator: str, mb: int,
                     rc: int):
    """The workload measurement covering the rows of micro-batch ``mb`` and recompute code
    ``rc`` (``Calibration.workload`` of their layer shape), or None."""
    return cal.workload(accelerator, workload.framework,
                        shape_of(workload, micro_batch=mb, recompute=RECOMPUTE_NAMES[rc]))


def workload_memory_ratios(cal: Calibration, workload: Workload, accelerator: str,
                           grid: dict) -> dict | None:
    """The workload probe's measured / modelled activations for each (micro-batch, recompute
    code) of ``grid`` (its rows' micro-batches × its recomputation options) that a
    measurement covers, found as ``workload_scales`` finds the time; None when none does.
    ``prune`` and ``run_model`` scale those rows' activations by them, so a stack that keeps
    more than the model counts gets plans that fit it."""
    if cal.empty or not cal.workload_layers or len(grid["tp"]) == 0:
        return None
    found = {}
    for mb in {int(x) for x in grid["mb"]}:
        for rc in {int(x) for x in grid["rc_options"]}:
            m = _row_measurement(cal, workload, accelerator, mb, rc)
            if m is not None and m.memory_ratio is not None:
                found[(mb, rc)] = m.memory_ratio
    return found or None


def plan_of(grid: dict, res: dict, i: int) -> ParallelPlan:
    """The parallel plan of row ``i`` of an evaluated grid."""
    return ParallelPlan(tp=int(grid["tp"][i]), pp=int(grid["pp"][i]), dp=int(grid["dp"][i]),
                        cp=int(grid["cp"][i]), zero_stage=int(grid["zero"][i]),
                        micro_batch=int(grid["mb"][i]),
                        recompute=RECOMPUTE_NAMES[int(grid["rc"][i])],
                        micro_batches=int(res["micro_batches"][i]),
                        expert_parallel=int(res["ep"][i]),
                        virtual_stages=int(res["virtual_stages"][i]))


def summarise(workload: Workload, cluster: Cluster, ms: ModelScalars, A: Assumptions,
              ci: ClusterInputs, grid: dict, res: dict, i: int,
              interruption_rate_per_node_hour: float = 0.0,
              restart_minutes: float | None = None, restart_constant: str = "restart_minutes",
              measurements: dict | None = None,
              wall_range: tuple[float, float] | None = None,
              calibration: Calibration | None = None) -> Estimate:
    """``wall_range``: the calendar time's P10 and P90 where the caller has them (`plan`
    computes every candidate's in one call); else computed here, the same way.
    ``calibration``: the one ``ci`` was built from, for its warnings (a figure far from its
    default, reports that disagree: ``calibration_warnings``)."""
    step = float(res["step_s"][i])
    mb = int(grid["mb"][i])
    dp = int(grid["dp"][i])
    m = int(res["micro_batches"][i])
    tokens_per_step = m * dp * mb * workload.seq_len
    steps = math.ceil(workload.tokens / tokens_per_step)
    ideal_h = steps * step / 3600
    tokens_per_s = tokens_per_step / step
    mflops = ms.model_flops_per_token()
    tflops_gpu = mflops * tokens_per_s / cluster.gpus / 1e12
    gp = goodput(ideal_hours=ideal_h, gpus=cluster.gpus, nodes=cluster.nodes,
                 checkpoint_bytes=checkpoint_bytes(ms), A=A,
                 interruption_rate_per_node_hour=interruption_rate_per_node_hour,
                 restart_minutes=restart_minutes, restart_constant=restart_constant)
    plan = plan_of(grid, res, i)
    breakdown = {k: float(res[k][i]) for k in ("compute_s", "tp_comm_s", "dp_comm_s",
                                               "pp_bubble_s", "other_s")}
    if ms.E:
        breakdown["ep_comm_s"] = float(res["ep_comm_s"][i])
    memory = {"total_gib": float(res["memory_gib"][i]),
              "weights_gib": float(res["memory_weights_gib"][i]),
              "gradients_gib": float(res["memory_grads_gib"][i]),
              "optimizer_gib": float(res["memory_optimizer_gib"][i]),
              "activations_gib": float(res["memory_activations_gib"][i]),
              "logits_gib": float(res["memory_logits_gib"][i]),
              "runtime_reserve_gib": A.runtime_reserve_gib,
              "capacity_gib": ci.memory_gib}
    sw = A.software(workload.framework)
    wm = (measurements or {}).get((mb, int(grid["rc"][i])))
    covered = float(res["layer_s"][i]) / step if step > 0 else 0.0
    sigma = range_sigma(A, workload.framework, wm, covered, moe=workload.arch.is_moe)
    calibrated, probe_effect = list(ci.calibrated), None  # the range said one way in both notes
    if wm is not None:
        unmeasured = range_sigma(A, workload.framework, moe=workload.arch.is_moe)
        probe_effect = ("narrowed" if sigma < unmeasured - 1e-12 else
                        "widened" if sigma > unmeasured + 1e-12 else None)
        # both said, to the decimals that part them ("widened to σ 0.251" from 0.2506)
        digits = 3 if round(sigma, 3) != round(unmeasured, 3) else 4
        moved = f"from σ {unmeasured:.{digits}f} to {sigma:.{digits}f}"
        calibrated.append(
            f"layer time: {wm.summary()}; the layers' work ({covered:.0%} of the step) is "
            f"scaled by {wm.time_ratio:.2f} and the range "
            + (f"narrowed {moved}" if probe_effect == "narrowed" else
               f"widened {moved} {_widened_by(wm)}" if probe_effect else
               f"kept at σ {sigma:.3f} (the measured shape is {wm.distance:.2f} away)")
            + (f"; activations scaled by {wm.memory_ratio:.2f} (measured)"
               if wm.memory_ratio is not None else ""))
    # P10/P90: quantiles of the calendar time C = B·X + K·L (log-normal model error X, Poisson
    # interruptions K: planner.model._probability), as `plan` and the team allocator compute
    # them — a log-normal around the expected time alone gave one configuration a P10–P90 of
    # 1,073–2,114 h from `estimate` and 1,233–1,906 h from `plan`
    range_warning = None  # `plan` (wall_range given) says it with the candidate's figures
    if wall_range:
        q10, q90 = wall_range
    else:
        q10, q90, loss_h, rate = calendar_range(
            ideal_hours=ideal_h, gpus=cluster.gpus, nodes=cluster.nodes,
            checkpoint_bytes=checkpoint_bytes(ms), A=A,
            interruption_rate_per_node_hour=interruption_rate_per_node_hour,
            restart_minutes=gp.restart_hours * 60, sigma=sigma)
        range_warning = outside_range(ideal_h / gp.fraction, q10, q90, loss_hours=loss_h,
                                      rate=rate)
    wall = TimeRange(p10=q10, p50=ideal_h / gp.fraction, p90=q90, log_sigma=sigma)
    profile = PROFILES[workload.framework]
    batch_note = (f"global batch {tokens_per_step:,} tokens ({m} micro-batches × {dp} DP × "
                  f"{mb} sequences of {workload.seq_len})")
    if workload.global_batch_tokens is None:
        batch_note += "; " + default_batch_note(params=ms.params_active, seq_len=ms.s,
                                                finetune=workload.finetune != "none")
    notes = [*workload.inferred, *cluster.notes, *ci.notes,
             f"framework profile {workload.framework} ({profile.label}): GEMMs at "
             f"{sw.gemm_efficiency:.2f}× the achievable matmul rate, non-matmul kernels move "
             f"{sw.elementwise_factor:.2f}× fused bytes, {sw.comm_overlap:.0%} of data/context-"
             f"parallel communication hidden, {sw.tp_comm_overlap:.0%} of tensor-parallel, "
             f"{sw.host_overhead_s_per_layer * 1e6:.0f} µs host time per layer and micro-batch "
             "(fitted on published measured throughput: benchmarks/fit_software.py)"
             + (f"; expert-parallel all-to-all hidden under up to {A.ep_comm_overlap:.0%} of a "
                f"MoE layer's compute (ep_comm_overlap) and "
                f"{A.moe_overhead_s_per_layer * 1e3:.1f} ms per MoE layer and micro-batch "
                "(moe_overhead_s_per_layer), both fitted on measured MoE throughput"
                if ms.E else ""),
             f"model FLOPs per token {mflops:.3e} ("
             + (f"4·N for the frozen weights + 6·N_a for LoRA rank {workload.lora_rank}'s "
                f"adapters of {format_count(ms.adapter_params)} parameters "
                f"({ms.adapter_fraction:.2%} of the model's)" if ms.lora else "6·N")
             + " + 6·L·s·h causal attention"
             + (f" × {ms.attn_share:.3f} for its windows/chunks" if ms.attn_share < 1 else "")
             + "); MFU against the "
             f"{matmul_dtype(workload.precision)} dense peak "
             f"{ci.peak_tflops:g} TFLOP/s",
             batch_note,
             (f"attention: flash kernel, causal fraction {A.causal_fraction} of the score "
              "blocks computed") if ms.flash else
             "attention: unfused (scores materialised in HBM, no causal skip)",
             ci.hbm_note,
             f"memory: {A.runtime_reserve_gib} GiB runtime reserve, "
             f"{A.usable_memory_fraction:.0%} of {ci.memory_gib:g} GiB usable"
             + (f"; gradients in {'fp32' if A.grad_reduce_bytes >= 4 else 'bf16'} as they are "
                f"reduced (grad_reduce_bytes {A.grad_reduce_bytes}"
                + (", as NeMo's performance recipes; Megatron-LM's default fp32 holds 2 more "
                   "bytes per parameter: grad_reduce_bytes 4)" if A.grad_reduce_bytes < 4
                   else ")") if profile.grads_in_reduce_dtype else ""),
             *gp.notes,
             f"range P10–P90 {format_hours_range(wall.p10, wall.p90, decimals_from_2_days=1)}"
             f": the model's log-normal error, σ = {sigma:.3f} "
             + "(throughput σ {:.3f} {}".format(*throughput_sigma(
                 A, workload.framework, moe=workload.arch.is_moe))
             + (f", {probe_effect} by the workload probe" if probe_effect else "")
             + f"; operations σ {A.operations_log_sigma:.3f} from published "
             "effective-training-time reports), with Poisson interruptions",
             *calibrated[len(ci.calibrated):]]
    if said := overrides_note(A):
        notes.append(said)
    warnings = [*workload.warnings]  # sizes given beside `params` that change it
    if said := cluster_size_warning(breakdown, step, micro_batches=m, pp=plan.pp,
                                    mfu=tflops_gpu / ci.peak_tflops):
        warnings.append(said)
    if said := goodput_warning(gp, gpus=cluster.gpus, ideal_hours=ideal_h):
        warnings.append(said)
    if workload.tokens < tokens_per_step:  # steps rounds up: the run pays for a whole step
        shown = f"{workload.tokens:,.0f}" if workload.tokens >= 10 else f"{workload.tokens:g}"
        warnings.append(f"the run ({shown} token{'s' if shown != '1' else ''}) is shorter "
                        "than one optimizer "
                        f"step ({tokens_per_step:,} tokens): the time is that of a whole step; "
                        "a smaller `global_batch_tokens` would match it")
    wanted = ms.gbs_seqs or workload.sequences_per_step(cluster.gpus)
    if wanted < cluster.gpus / (plan.tp * plan.pp * plan.cp):
        warnings.append(f"the global batch ({wanted} sequences) is smaller than the "
                        f"{cluster.gpus // (plan.tp * plan.pp * plan.cp)} data-parallel ranks "
                        "would need: some GPUs get no sequence")
    if m * dp * mb > BATCH_ROUNDING_LIMIT * wanted:
        warnings.append(f"the global batch was rounded up from {wanted} to {m * dp * mb} "
                        f"sequences to give each of the {dp} data-parallel ranks whole "
                        f"micro-batches of {mb}")
    if range_warning:
        warnings.append(range_warning)
    if calibration is not None:
        warnings += calibration_warnings(calibration, cluster, workload, A, ci)
    warnings += unused_overrides(A, workload, cluster,
                                 spot=restart_constant == "spot_restart_minutes")
    spot_key = f"spot_interruptions_per_hour.{cluster.cloud}"
    # a spot offer's own published rate (AWS's advisor buckets) wins over the cloud's
    # assumed one (planner.search spot_rate); its caller names spot_restart_minutes for spot
    if (restart_constant == "spot_restart_minutes" and spot_key in A.overridden
            and interruption_rate_per_node_hour != A.spot_interruptions_per_hour[cluster.cloud]):
        warnings.append(f"`assume` {spot_key} has no effect on this spot "
                        f"{cluster.instance_type}: the offer has its own published rate "
                        f"({interruption_rate_per_node_hour:.2g} interruptions per instance-"
                        f"hour), which is used; the assumed rate applies only to "
                        f"{cluster.cloud} spot offers without one")
    return Estimate(workload=workload, cluster=cluster, plan=plan, step_time_s=step,
                    steps=steps, tokens_per_step=tokens_per_step, breakdown=breakdown,
                    memory=memory, mfu=tflops_gpu / ci.peak_tflops,
                    model_tflops_per_gpu=tflops_gpu, tokens_per_s=tokens_per_s,
                    ideal_hours=ideal_h, goodput=gp, wall_clock=wall,
                    assumptions=tuple(notes), warnings=tuple(warnings),
                    calibrated=tuple(calibrated))


def estimate(workload: Workload, cluster: Cluster, *, assumptions: Assumptions | None = None,
             calibration: Calibration = NO_CALIBRATION,
             memory_gib: float | None = None) -> Estimate:
    """The fastest plan that fits for ``workload`` on ``cluster`` (within the workload's pins
    and framework); NoFitError when none, WorkloadError when a pin cannot work."""
    import numpy as np

    A = assumptions or Assumptions()
    check_pins_fit_cluster(workload, cluster, nvlink_domain(
        A, cluster.accelerator.name, cluster.gpus_per_node, cluster.gpus))
    ci = cluster_inputs(cluster, workload, A, calibration, memory_gib=memory_gib)
    ms = ModelScalars.of(workload)
    grid = plan_grid(ms, cluster.gpus_per_node, np.array([cluster.nodes]), workload.recompute,
                     workload=workload, nvlink_domain_gpus=ci.nvlink_domain_gpus)
    if len(grid["tp"]) == 0:
        raise NoFitError(no_grid_message(workload, cluster, ms, ci.nvlink_domain_gpus))
    measured = workload_memory_ratios(calibration, workload, cluster.accelerator.name, grid)
    pruned = prune(ms, A, grid, ci, measured)
    if len(pruned["tp"]) == 0:
        if A.runtime_reserve_gib >= ci.memory_gib * A.usable_memory_fraction:
            raise NoFitError(reserve_message(A, usable_on=f"each {cluster.accelerator.name}",
                                             memory_gib=ci.memory_gib))
        raise NoFitError(no_fit_message(workload, cluster, ms, A, ci,
                                        least_memory(ms, A, grid, ci, measured),
                                        measured=measured))
    scale, found = workload_scales(calibration, workload, cluster.accelerator.name, pruned)
    res = run_model(ms, A, pruned, ci, cluster.gpus_per_node, layer_scale=scale,
                    measured_memory=measured)
    i = best_index(pruned, res)
    return summarise(workload, cluster, ms, A, ci, pruned, res, i, measurements=found,
                     calibration=calibration)


def reserve_message(A: Assumptions, *, usable_on: str, memory_gib: float) -> str:
    """No plan fits because the per-GPU runtime reserve alone fills the usable memory of
    ``memory_gib`` GPUs (``usable_on``: "each H100-SXM5-80GB", "the largest matching GPU"):
    "use more GPUs" could not help, since every GPU keeps the reserve. `estimate` and `plan`
    both say it."""
    usable = memory_gib * A.usable_memory_fraction
    also = (f", or raise usable_memory_fraction (set to {A.usable_memory_fraction:g})"
            if "usable_memory_fraction" in A.overridden else ", or choose a GPU with more memory")
    return (f"the runtime reserve (runtime_reserve_gib = {A.runtime_reserve_gib:g} GiB, kept on "
            f"every GPU) is at least the {usable:.1f} GiB usable on {usable_on} "
            f"({A.usable_memory_fraction:.0%} of {memory_gib:g} GiB): nothing else fits, on any "
            f"number of GPUs. To fix: lower it with `assume` runtime_reserve_gib=… below "
            f"{usable:.1f} (the default is {Assumptions().runtime_reserve_gib:g}){also}")


def no_fit_message(workload, cluster, ms, A, ci, least: float, *,
                   measured: dict | None = None) -> str:
    import dataclasses

    import numpy as np

    capacity = ci.memory_gib * A.usable_memory_fraction

    def fitting(gpus: int):
        """(cluster, grid, results, best row) of the plan that fits on ``gpus`` GPUs shaped as
        the front end would build them (``resized``), or None."""
        c = resized(cluster, gpus)
        cci = dataclasses.replace(ci, nvlink_domain_gpus=nvlink_domain(
            A, c.accelerator.name, c.gpus_per_node, c.gpus))
        if c.gpus_per_node != cluster.gpus_per_node:  # part of a node grown: its links change
            own = cluster_inputs(c, workload, A, memory_gib=ci.memory_gib)
            cci = dataclasses.replace(cci, intra_busbw_gb_per_s=own.intra_busbw_gb_per_s,
                                      nic_gb_per_s_per_gpu=own.nic_gb_per_s_per_gpu)
        grid = plan_grid(ms, c.gpus_per_node, np.array([c.nodes]), workload.recompute,
                         workload=workload, nvlink_domain_gpus=cci.nvlink_domain_gpus)
        if len(grid["tp"]) == 0:
            return None
        grid = prune(ms, A, grid, cci, measured)
        if len(grid["tp"]) == 0:
            return None
        r = run_model(ms, A, grid, cci, c.gpus_per_node, measured_memory=measured)
        j = best_index(grid, r)
        return None if j is None else (c, grid, r, j)

    # Only counts the front end accepts (`gpus` 21 of 8-GPU nodes was named, and refused),
    # up to all the model covers (it said 16 nodes where 11 fit)
    counts = larger_counts(cluster)
    found = smallest_fitting(counts, fitting, lambda f: int(
        f[1]["tp"][f[3]] * f[1]["pp"][f[3]] * f[1]["cp"][f[3]]))
    per = cluster.node_gpus or cluster.gpus_per_node
    name = cluster.instance_type or cluster.accelerator.name
    if found is not None:
        c, grid, r, j = found = found[1]
        size = (f"{c.gpus} GPUs of one {per}-GPU node" if c.gpus < per else  # as prose reads
                f"{c.nodes:,} node{'s' if c.nodes > 1 else ''} ({c.gpus:,} GPUs)")
        hint = (f" The smallest setup that fits is {size} with {plan_of(grid, r, j)}"
                + (f"; pass `gpus` {c.gpus}." if cluster.node_gpus else "."))
    elif not cluster.inter_node_gbps:
        hint = (f" No setup of up to one node ({per} GPUs) fits, and {name} has no known "
                "inter-node network to span nodes." if counts else
                f" {name} has no known inter-node network, so it cannot use more than one "
                f"node ({per} GPUs).")
    elif counts:
        hint = (f" No setup of up to {counts[-1] // per:,} nodes of {per} GPU"
                f"{'s' if per != 1 else ''} ({counts[-1]:,} GPUs, the most the model covers) "
                "fits.")
    else:
        hint = f" No larger setup was tried: the model covers up to {MAX_CLUSTER_GPUS:,} GPUs."
    if workload.finetune == "lora":  # a 70B LoRA "on one GPU" is usually 4-bit QLoRA
        hint += " LoRA is modelled over bf16 weights: 4-bit QLoRA is not modelled."
    pins = workload.pins.as_dict()
    pinned = (f" with {', '.join(f'{k}={v}' for k, v in pins.items())} pinned" if pins else "")
    # only the remedies that can still help: more GPUs where a larger setup was found to fit
    # (pins can make the count irrelevant); the most frugal plan already recomputes all it
    # may and runs the smallest micro-batch not pinned
    fixes = ["a GPU with more memory"]
    if found is not None:
        fixes.insert(0, "more GPUs (`gpus`)" if cluster.node_gpus else "more nodes (`nodes`)")
    if workload.recompute_limited:
        fixes.append("`recompute` full")
    if pins.get("micro_batch", 1) > 1:
        fixes.append("a smaller `micro_batch`")
    if pins:
        fixes.append("fewer pins")
    return (f"{ms.params_total / 1e9:,.1f}B parameters do not fit on {cluster.gpus:,}x "
            f"{cluster.accelerator.name}{pinned}: the most memory-frugal plan needs "
            f"{least:,.1f} GiB per GPU of {capacity:,.1f} usable.{hint} To fix: use "
            + (f"{', '.join(fixes[:-1])} or {fixes[-1]}" if len(fixes) > 1 else fixes[0]))
