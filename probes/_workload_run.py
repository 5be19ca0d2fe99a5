"""Run the workload probe on every rank, gather, and write one report (torch loaded lazily).

Under torchrun every rank (GPU) runs the layers at the same time: ``tp`` consecutive ranks
form one tensor-parallel group (inside a node), and the ``dp`` = world size / ``tp`` groups
are data-parallel replicas whose gradients are all-reduced each step. Every rank's per-layer
time and memory are gathered to rank 0 (``ranks[].workload``, and their spread in
``workload.across_ranks``); rank 0 writes the report with its environment section, so the
planner knows which accelerator, instance and node the figures belong to.

Time budget on one GPU node: start-up (torch, CUDA, process group) 10-20 s; the environment
~2 s; sizing the layer count (one layer, two steps) a few seconds; 5 + 30 steps of
``layers`` layers (a 1B-class layer at 4,096 tokens: a few ms per layer on an H100, 16
layers: well under 10 s; a 70B-class layer at 8,192 tokens ~0.1 s per layer, ~4 layers fit);
one memory step and two profiled steps. A minute or two in all; ``--quick`` takes 2 + 5 steps.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
from pathlib import Path
from typing import Any

from probes._fit import progress
from probes._rescue import write_or_rescue
from probes._schema import (
    SCHEMA_VERSION,
    NamedValue,
    ProbeFailure,
    ProbeReport,
    ProbeSetupError,
    RankResult,
    WorkloadSection,
    WorkloadSplit,
)
from probes._workload_config import WorkloadConfig

GQA_NOTE = ("K/V heads repeated over their query-head groups before the kernel (torchtitan, "
            "Hugging Face Llama)")
MOE_DISPATCH = ("token-choice top-k, softmax renormalised over k (Mixtral); each expert runs on "
                "its tokens (gather, FFN, weighted scatter-add, as Hugging Face's Mixtral); "
                "every expert on this GPU, no expert parallelism")


def _groups(cfg: WorkloadConfig, topo) -> tuple[Any, Any]:
    """(tensor-parallel group, data-parallel group) of this rank; None where the degree is 1."""
    import torch.distributed as dist

    world, tp = topo.world_size, cfg.tp
    if world % tp:
        raise ProbeSetupError(f"tp={tp} does not divide the {world} processes. To fix: run "
                              f"torchrun with a multiple of {tp} processes, or change --tp.")
    if tp > topo.local_world_size:
        raise ProbeSetupError(f"tp={tp} is above the {topo.local_world_size} processes per "
                              "node: tensor parallelism stays inside a node. To fix: lower "
                              "--tp or raise --nproc-per-node.")
    dp = world // tp
    if world == 1:
        return None, None
    if tp == 1:
        return None, dist.group.WORLD
    tp_group = dp_group = None
    for d in range(dp):  # every rank must create every group, in the same order
        g = dist.new_group(list(range(d * tp, (d + 1) * tp)))
        if topo.rank // tp == d:
            tp_group = g
    if dp > 1:
        for i in range(tp):
            g = dist.new_group(list(range(i, world, tp)))
            if topo.rank % tp == i:
                dp_group = g
    return tp_group, dp_group


def _section(cfg: WorkloadConfig, topo, device, measured: dict | None, reason: str | None
             ) -> WorkloadSection:
    dp = max(1, topo.world_size // cfg.tp)
    base = dict(
        model=cfg.model, framework=cfg.framework, hidden=cfg.hidden, heads=cfg.heads,
        kv_heads=cfg.kv_heads, head_dim=cfg.d_head, ffn_hidden=cfg.ffn_hidden, gated=cfg.gated,
        seq_len=cfg.seq_len, micro_batch=cfg.micro_batch, precision=cfg.run_precision,
        precision_requested=cfg.precision, recompute=cfg.recompute, experts=cfg.experts,
        experts_per_token=cfg.experts_per_token, shared_experts=cfg.shared_experts,
        tp=cfg.tp, dp=dp, device=device.type,
        timing="cuda_events" if device.type == "cuda" else "perf_counter",
        gqa=GQA_NOTE if cfg.kv_heads != cfg.heads else "",
        moe_dispatch=MOE_DISPATCH if cfg.experts else None, warmup_steps=cfg.warmup,
        steps=cfg.timed_steps, quick=cfg.quick)
    notes = []
    if cfg.precision == "fp8":
        notes.append("fp8 was asked for: bf16 GEMMs ran (plain PyTorch has no fp8 training "
                     "path; Transformer Engine does)")
    if cfg.tp > 1:
        notes.append(f"tensor parallel over {cfg.tp} GPUs (Megatron column/row split, no "
                     "sequence parallelism): per-layer figures are one shard's, with its "
                     "all-reduces")
    if measured is None:
        layers = cfg.layers or 1
        return WorkloadSection(status="failed", reason=reason or "failed",
                               model_layers=cfg.model_layers or layers, layers=layers,
                               layers_rule="not reached: the probe failed", notes=tuple(notes),
                               **base)
    n = measured["layers"]
    mem = measured["memory"]
    shares = measured["shares"]
    per = measured["fwd_bwd"] / n
    split = WorkloadSplit(source=measured["split_source"],
                          optimizer_seconds=measured["optimizer_seconds"] / n)
    if shares is not None:
        split = WorkloadSplit(source=measured["split_source"],
                              matmul_seconds=shares["matmul"] * per,
                              attention_seconds=shares["attention"] * per,
                              other_seconds=shares["other"] * per,
                              optimizer_seconds=measured["optimizer_seconds"] / n,
                              communication_seconds=(shares["communication"] * per
                                                     if cfg.tp > 1 else None))
    cuda = "peak" in mem
    notes.append(f"attention: {measured['backend_note']}")
    return WorkloadSection(
        status="measured", model_layers=cfg.model_layers or n, layers=n,
        layers_rule=measured["layers_rule"], attention_backend=measured["backend"],
        optimizer=measured["optimizer"], step_seconds=measured["step"],
        step_seconds_p10=measured["step_p10"], step_seconds_p90=measured["step_p90"],
        fwd_bwd_seconds=measured["fwd_bwd"], optimizer_seconds=measured["optimizer_seconds"],
        grad_reduce_seconds=measured["grad_reduce"], layer_fwd_bwd_seconds=per,
        layer_fwd_bwd_seconds_p10=measured["fwd_bwd_p10"] / n,
        layer_fwd_bwd_seconds_p90=measured["fwd_bwd_p90"] / n,
        layer_step_seconds=measured["step"] / n,
        tokens_per_second=cfg.micro_batch * cfg.seq_len / measured["step"],
        static_memory_bytes=mem.get("before"), peak_memory_bytes=mem.get("peak") or None,
        layer_activation_bytes=(mem["after"] - mem["before"]) / n if cuda else None,
        layer_saved_bytes=mem["saved"] / n,
        memory_note=("CUDA allocator (before/after the forward, peak over a step) and "
                     "autograd's saved tensors" if cuda else
                     "not available on cpu for the allocator figures (torch tracks "
                     "allocations on CUDA only); layer_saved_bytes counts autograd's saved "
                     "tensors"),
        split=split, notes=tuple(notes), **base)


def _rank_values(section: WorkloadSection | None) -> tuple[NamedValue, ...]:
    if section is None or section.status != "measured":
        return ()
    names = ("layer_fwd_bwd_seconds", "layer_step_seconds", "layer_activation_bytes",
             "layer_saved_bytes", "peak_memory_bytes")
    return tuple(NamedValue(name=n, value=float(getattr(section, n))) for n in names
                 if getattr(section, n) is not None)


def _gather(topo, mine: RankResult, failures: list[ProbeFailure]
            ) -> tuple[tuple[RankResult, ...], tuple[ProbeFailure, ...]]:
    import torch.distributed as dist

    from probes._gather import merge_failures

    parts: list[Any] = [(mine, tuple(failures))]
    if dist.is_initialized() and topo.world_size > 1:
        parts = [None] * topo.world_size
        try:
            dist.all_gather_object(parts, (mine, tuple(failures)))
        except Exception as exc:  # a peer died: keep this rank's figures and say so
            text = str(exc).strip().splitlines()
            failures.append(ProbeFailure(
                probe="gather", error_type=type(exc).__name__, rank=topo.rank,
                message=(text[0] if text else "") + " (only this rank's figures are kept)"))
            parts = [(mine, tuple(failures))]
    parts = [p for p in parts if p is not None]
    ranks = tuple(sorted((p[0] for p in parts), key=lambda r: r.rank))
    return ranks, merge_failures([p[1] for p in parts])


def _with_spread(section: WorkloadSection, ranks: tuple[RankResult, ...]) -> WorkloadSection:
    import dataclasses

    from probes._stats import spread

    values, who = [], []
    for r in ranks:
        for nv in r.workload:
            if nv.name == "layer_fwd_bwd_seconds":
                values.append(nv.value)
                who.append(r.rank)
    if not values:
        return section
    return dataclasses.replace(section, across_ranks=spread(values, who))


def run_workload_probe(config: WorkloadConfig, *, out: str | os.PathLike[str] | None = None
                       ) -> ProbeReport:
    """Run the workload probe on this rank; rank 0 writes ``out`` (if given) atomically.

    Raises probes.ProbeSetupError when it cannot start (no CUDA for --device cuda, a process
    group that does not form, a tensor-parallel degree the run cannot hold). A failure while
    measuring is recorded in the report (``errors`` and a failed ``workload`` section).
    """
    from probes._environment import collect_environment, recorded_env
    from probes._runner import _init_process_group, _shutdown, _tool_version, topology_from_env
    from probes._timing import resolve_device, smi_gpu_id

    started = time.perf_counter()
    created_utc = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    topo = topology_from_env()
    device = resolve_device(config.device, local_rank=topo.local_rank)
    failures: list[ProbeFailure] = []
    created = _init_process_group(topo, device, config.timeout_seconds)
    environment = section = None
    try:
        try:
            environment = collect_environment(
                device_type=device.type, world_size=topo.world_size,
                local_world_size=topo.local_world_size, query_metadata=topo.rank == 0,
                gpu_id=smi_gpu_id(device), nccl_env=recorded_env())
        except Exception as exc:  # the environment must not stop the measurement
            failures.append(_failure("environment", exc, topo.rank))
        tp_group, dp_group = _groups(config, topo)
        from probes._workload import measure
        from probes._workload_watch import Progress, prompt_stop

        progress(f"building and timing the layers ({config.timed_steps} steps)", rank=topo.rank,
                 started=started)
        try:
            with prompt_stop(rank=topo.rank):  # a signal acted on even inside a long step
                measured = measure(config, device=device, tp_group=tp_group,
                                   dp_group=dp_group,
                                   input_seed=config.seed + 1 + topo.rank // config.tp,
                                   said=Progress(rank=topo.rank, started=started))
            section = _section(config, topo, device, measured, None)
        except Exception as exc:  # OOM, a kernel that fails: recorded, the report is written
            failures.append(_failure("workload", exc, topo.rank))
            section = _section(config, topo, device, None, failures[-1].message)
        mine = RankResult(rank=topo.rank, local_rank=topo.local_rank,
                          hostname=socket.gethostname(), device=str(device),
                          gpu_name=_gpu_name(device), workload=_rank_values(section))
        ranks, errors = _gather(topo, mine, failures)
    finally:
        if created:
            from probes._runner import ProbeConfig, _Context

            _shutdown(_Context(config=ProbeConfig(timeout_seconds=config.timeout_seconds),
                               device=device, topo=topo, failures=failures))
    section = _with_spread(section, ranks)
    report = ProbeReport(schema_version=SCHEMA_VERSION, tool_version=_tool_version(),
                         created_utc=created_utc, quick=config.quick,
                         duration_seconds=time.perf_counter() - started,
                         environment=environment, workload=section, errors=errors, ranks=ranks)
    if out is not None and topo.rank == 0:
        write_or_rescue(report, Path(out))  # a full disk now must not lose the run
    return report


def _failure(probe: str, exc: BaseException, rank: int) -> ProbeFailure:
    text = str(exc).strip().splitlines()
    return ProbeFailure(probe=probe, error_type=type(exc).__name__,
                        message=text[0] if text else "", rank=rank)


def _gpu_name(device) -> str | None:
    if device.type != "cuda":
        return None
    import torch

    return torch.cuda.get_device_properties(device).name
