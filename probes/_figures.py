"""The figures a report offers the planner, and why the report itself may disqualify them.

torch-free (`gpuplan probe ingest|show` and the planner read reports with it); the rules that
need a datasheet (bounds, the instance's GPU count, its fabric) are planner.store._rules'.

Four kinds of figure, each the statistic the planner's default replaces: ``matmul`` (TFLOP/s,
per dtype: the max over the sweep's shapes, the MAMF statistic), ``hbm`` (GB/s, device_copy,
2*N bytes per copy), each the median over GPUs (p10/p90 over GPUs; with one GPU, over
repeats); ``intra`` (GB/s): intra-node all_reduce busbw at the plateau (the best message of at
least PLATEAU_BYTES), p10/p90 over its iterations; ``inter``: the same for the world group.

A refusal here is a fact about the report alone: schema 1, a CPU run, quick mode, MIG, custom
shapes, a failed probe, a missing or repeated rank, ranks on different GPUs, a summary over
GPUs that is not what the ranks' figures give, figures that contradict each other (here for
matmul and fp8; probes._consistency for the rest), a run whose shape disagrees with itself,
GPU facts no CUDA GPU has and a throttled node (both probes._gpu_state), a partial node, a
message short of the plateau. RDMA is derived from what NCCL named, never from the report's
``rdma`` flag. The workload layer
(`workload_refusal`) is refused for the same facts and its own: a failed or partial run, too
few steps, a section no run writes (`_section_edited`), rank 0's figures not the section's,
tensor parallelism (the planner's per-layer reference is one GPU).
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass

from probes._consistency import EDITED as _EDITED
from probes._consistency import contradiction, rank_0_workload_edited
from probes._gpu_state import burst_edited, environment_edited, throttle_refusal
from probes._nccl_log import is_rdma
from probes._schema import CollectiveSeries, MatmulDtype, ProbeReport

# A run's own --steps/--warmup-steps may be smaller than the defaults (30 after 5), not this
# small: the median of fewer than 10 steps, or steps timed before 2 warm-up steps settled
# the clocks and allocator, says little (--quick's 5 after 2 is refused as quick).
MIN_STEPS, MIN_WARMUP_STEPS = 10, 2
# What a full (not --quick) GPU run does (probes._runner's repeats, probes._warmup's GPU_WARMUP
# minimum: both import torch, so repeated here and pinned by tests/probes/test_report_trust.py)
FULL_REPEATS, FULL_WARMUP_S = 10, 15.0

PLATEAU_BYTES = 64 * 2**20  # busbw reaches its plateau at tens of MiB (nccl-tests curves)
# What the matmul probe writes for fp8 (probes._matmul, which imports torch, so they are
# repeated here; tests/probes/test_report_trust.py pins them): the limit of its check against
# bf16, and each fp8 dtype's accumulation. Any other value was not written by the probe.
FP8_MAX_REL_ERROR = 0.05
FP8_ACCUMULATION = {"fp8_e4m3": "split (full precision)", "fp8_e4m3_fast": "fast"}
KINDS: tuple[str, ...] = ("matmul", "hbm", "intra", "inter")
_PROBE_OF = {"matmul": "matmul", "hbm": "memory", "intra": "collectives", "inter": "collectives"}


@dataclass(frozen=True, slots=True, kw_only=True)
class Figure:
    """One number a report offers to calibrate the model, with the facts the rules need."""

    kind: str  # see KINDS
    name: str  # matmul: the probe's dtype (bf16, fp8_e4m3...); hbm: device_copy; else the op
    value: float
    unit: str  # "TFLOP/s" or "GB/s"
    p10: float | None
    p90: float | None
    gpus_per_node: int  # ranks per node in the run (torchrun --nproc-per-node)
    gpus_visible: int  # GPUs the node showed
    nodes: int
    net: str | None = None  # inter: the network NCCL used ("IB", "Socket", ...)
    rdma: bool | None = None
    transport: str | None = None
    refusal: str | None = None  # why this report's own facts make the figure unusable

    @property
    def full_node(self) -> bool:
        return self.gpus_per_node == self.gpus_visible


def report_refusal(report: ProbeReport) -> str | None:
    """Why none of the report's figures can calibrate the planner (None: each is judged on
    its own): an old schema, no GPU, a quick run, MIG, missing or edited ranks, an edited
    figure, a throttled GPU."""
    env = report.environment
    if report.schema_version < 2:
        return (f"schema {report.schema_version} report: burst-mode matmul over five square "
                "shapes on rank 0 only, not comparable to the MAMF-style defaults; re-run the "
                "probes with this gpuplan")
    if env is None:
        return "the report has no environment section: what it measured is unknown"
    if env.device_type != "cuda":
        return f"a {env.device_type} run does not measure a GPU"
    if report.quick:
        return ("quick mode (2 shapes, a short warm-up, 3 repeats) is for checking the set-up; "
                "re-run without --quick to calibrate")
    m = report.matmul  # a quick run's settings under `quick: false` (an edited flag)
    warm = None if m is None else m.warmup_seconds  # None: a report from before warm-ups
    if m is not None and (m.repeats < FULL_REPEATS or warm is not None
                          and warm < FULL_WARMUP_S * 0.99):
        return (f"its matmul ran {m.repeats} repeats"
                + (f" after a {warm:.1f} s warm-up" if warm is not None else "")
                + f", where a full run does {FULL_REPEATS} after at least {FULL_WARMUP_S:g} s: "
                "a quick run's settings; re-run without --quick")
    if env.idle is not None and (env.idle.mig_mode or "").lower() == "enabled":
        return "MIG mode was on: a GPU slice is not the whole GPU"
    ids = sorted(r.rank for r in report.ranks)
    # a rank listed twice is an edit (rank 0 twice among 8 entries: no GPU fell silent)
    twice = sorted(i for i, n in Counter(ids).items() if n > 1)
    if len(set(ids)) < env.world_size:  # none at all too: the summaries would be unchecked
        return (f"only {len(set(ids))} of {env.world_size} ranks reported" + (
            f", and rank {twice[0]} is listed more than once ({len(ids)} entries): the report "
            "was edited or merged. To fix: ingest the file the probes wrote" if twice else
            ": a GPU that did not answer may be the slow one"))
    if ids != list(range(env.world_size)):  # a rank twice, or one the run did not have
        again = f"; rank {twice[0]} more than once" if twice else ""
        return (f"the ranks reported ({len(ids)} entries{again}) are not ranks 0–"
                f"{env.world_size - 1} once each: the report was edited or merged")
    gpus = sorted({r.gpu_name or "unnamed" for r in report.ranks}
                  | ({env.gpu_model} if env.gpu_model else set()))
    if len(gpus) > 1:  # between ranks, or against the environment's GPU
        return (f"the ranks and the environment name different GPUs ({', '.join(gpus)}): one "
                "accelerator's figures cannot come from another's")
    if edited := (environment_edited(env) or _topology_edited(report)
                  or _summary_not_from_ranks(report) or _contradiction(report)
                  or contradiction(report) or burst_edited(report)):
        return edited
    if any(e.probe == "gather" for e in report.errors):
        return "the ranks' results could not be gathered: the other GPUs are unknown"
    return throttle_refusal(report)


def _topology_edited(report: ProbeReport) -> str | None:
    """The run's shape stated once: world size = nodes x GPUs per node, in the environment and
    in every section that states it (collectives' counts, the workload's tp x dp); the ranks on
    as many distinct hosts as nodes, each host holding GPUs-per-node ranks, each rank on its own
    device and local rank there, and no GPU UUID twice (CPU runs and old drivers have none)."""
    env = report.environment
    world, local, nodes = env.world_size, env.local_world_size, env.node_count
    if world != nodes * local:
        return (f"the environment's world size {world} is not its {nodes} node(s) x {local} "
                f"GPUs per node: {_EDITED}")
    col, w = report.collectives, report.workload
    stated = [("collectives", (col.world_size, col.local_world_size, col.node_count))
              ] if col is not None else []
    if w is not None and w.status == "measured":  # a failed run may not have divided by tp
        stated.append(("workload", (w.tp * w.dp, local, nodes)))
    for name, (s_world, s_local, s_nodes) in stated:
        if (s_world, s_local, s_nodes) != (world, local, nodes):
            return (f"the {name} section's run ({s_world} ranks, {s_local} per node, {s_nodes} "
                    f"node(s)) is not the environment's ({world}, {local}, {nodes}): {_EDITED}")
    hosts = Counter(r.hostname for r in report.ranks)
    if len(hosts) != nodes or set(hosts.values()) != {local}:
        shown = ", ".join(f"{h}: {n}" for h, n in sorted(hosts.items())[:4])
        return (f"the ranks are on {len(hosts)} host(s) ({shown}{', ...' if len(hosts) > 4 else ''}"
                f" ranks), not {nodes} node(s) of {local} GPUs (nodes that share a hostname "
                f"cannot be told apart): {_EDITED}")
    seen: dict[object, int] = {}
    for r in sorted(report.ranks, key=lambda r: r.rank):
        for key, what in (((r.hostname, "device", r.device), f"{r.hostname} {r.device}"),
                          ((r.hostname, "local rank", r.local_rank),
                           f"{r.hostname} local rank {r.local_rank}"),
                          (("uuid", r.gpu_uuid), f"GPU {r.gpu_uuid}")):
            if key[-1] is None:
                continue
            if key in seen:
                return (f"ranks {seen[key]} and {r.rank} both ran on {what}: one GPU counted "
                        f"twice: {_EDITED}")
            seen[key] = r.rank
    return None


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)  # as written, up to float rounding


def _summary_not_from_ranks(report: ProbeReport) -> str | None:
    """Every measured figure's summary over GPUs (what calibrates) recomputed from the ranks'
    own figures, as the probe computes it (``spread``): each rank must report the figure and
    the summary must be what they give; the section's own figure (rank 0's, at any world size)
    must be that rank's entry. An edited, deleted or rank-less summary could hide outlier
    GPUs behind tidy numbers (or fall back to one GPU's)."""
    from probes._gather import _values
    from probes._stats import spread

    world = report.environment.world_size
    items = [(f"matmul {d.dtype}", "matmul_best_tflops", d.dtype, d.across_ranks, d.best_tflops)
             for d in (report.matmul.dtypes if report.matmul else ())
             if d.status == "measured" and d.best_tflops]
    items += [(f"memory {p.name}", "memory_gb_per_s", p.name, p.across_ranks, p.gb_per_s)
              for p in (report.memory.points if report.memory else ())
              if p.status == "measured" and p.gb_per_s]
    w = report.workload
    # a rank whose workload probe failed has no figure: that failure is the reason given
    if w is not None and w.status == "measured" and not _failed(report, "workload"):
        items.append(("workload layer_fwd_bwd_seconds", "workload", "layer_fwd_bwd_seconds",
                      w.across_ranks, w.layer_fwd_bwd_seconds))
    for what, attr, name, given, own in items:
        values, who = _values(report.ranks, attr, name)
        if sorted(who) != list(range(world)):  # a rank without the figure, or with it twice
            return (f"{len(set(who))} of {world} ranks report their {what} figure once: the "
                    "summary over GPUs cannot be checked")
        ranks = spread(values, who)
        same = given is not None and given.n == ranks.n and all(
            _same(getattr(given, k), getattr(ranks, k)) for k in ("min", "p10", "p50", "p90",
                                                                  "max"))
        if not same:
            shown = "missing" if given is None else f"median {given.p50:,.4g}, n {given.n}"
            return (f"the {what} summary over GPUs ({shown}) is not what the ranks' own "
                    f"figures give (median {ranks.p50:,.4g}, n {ranks.n}): {_EDITED}")
        rank0 = values[who.index(0)]
        # the sections are rank 0's, so their own figure is rank 0's at any world size (with
        # one GPU it is the figure that calibrates: a spread of one value is not used)
        if own is not None and not _same(own, rank0):
            return (f"the report's own {what} figure ({own:,.4g}) is not rank 0's "
                    f"({rank0:,.4g}), whose figures the sections hold: {_EDITED}")
    return None


def _contradiction(report: ProbeReport) -> str | None:
    """Matmul figures that cannot all be what the probe wrote: ``best_tflops`` is the max over
    the dtype's points and ``median_tflops`` their median, so neither a point nor the median
    can exceed it; an fp8 check holds the probe's limit, accumulation and verdict."""
    sec = report.matmul
    for d in sec.dtypes if sec else ():
        if d.status != "measured" or not d.best_tflops:
            continue
        above = [p for p in sec.points if p.dtype == d.dtype and p.tflops > d.best_tflops
                 and not _same(p.tflops, d.best_tflops)]
        if above:
            p = max(above, key=lambda p: p.tflops)
            return (f"matmul {d.dtype}: a point ({p.m}x{p.n}x{p.k}, {p.tflops:,.4g} TFLOP/s) is "
                    f"above the stated best {d.best_tflops:,.4g}, the max over the points: "
                    f"{_EDITED}")
        if d.median_tflops and d.median_tflops > d.best_tflops \
                and not _same(d.median_tflops, d.best_tflops):
            return (f"matmul {d.dtype}: the median over shapes ({d.median_tflops:,.4g} TFLOP/s) "
                    f"is above the best ({d.best_tflops:,.4g}): {_EDITED}")
        # fp8_e4m3_fast never calibrates (it is recorded for comparison): not checked
        if d.dtype.startswith("fp8") and d.dtype != "fp8_e4m3_fast":
            why = _fp8_edited(d)
            if why:
                return why
    return None


def _fp8_edited(d: MatmulDtype) -> str | None:
    """An fp8 check the probe could not have written (None: consistent, passed or not)."""
    expected = FP8_ACCUMULATION.get(d.dtype)
    if d.accumulation != expected:
        return (f"matmul {d.dtype}: accumulation {d.accumulation!r} is not what the probe "
                f"records for it ({expected!r}): {_EDITED}")
    if d.check_rel_error is None and d.check_passed is None:
        return None  # no check: refused in _matmul as unchecked
    if d.check_max_rel_error is not None and not _same(d.check_max_rel_error,
                                                       FP8_MAX_REL_ERROR):
        return (f"matmul {d.dtype}: the accuracy check's limit {d.check_max_rel_error:g} is not "
                f"the probe's {FP8_MAX_REL_ERROR:g}: {_EDITED}")
    passed = d.check_rel_error is not None and d.check_rel_error <= FP8_MAX_REL_ERROR
    if d.check_passed is not passed:
        error = "none" if d.check_rel_error is None else f"{d.check_rel_error:.3g}"
        return (f"matmul {d.dtype}: the accuracy check says passed={d.check_passed} with "
                f"relative error {error} against the probe's limit {FP8_MAX_REL_ERROR:g}: "
                f"{_EDITED}")
    return None


def _failed(report: ProbeReport, probe: str) -> str | None:
    for e in report.errors:
        if e.probe == probe:
            return (f"the {probe} probe failed on rank {e.rank} ({e.error_type}: "
                    f"{e.message[:80]})")
    return None


def _matmul(report: ProbeReport, base: dict) -> list[Figure]:
    out = []
    sec = report.matmul
    for d in sec.dtypes if sec else ():
        if d.status != "measured" or not d.best_tflops:
            continue
        why = None
        if sec.sweep != "default":
            why = "custom shapes (--shapes): not the sweep the defaults are compared with"
        elif d.dtype == "fp8_e4m3_fast":
            why = ("fast accumulation is recorded for comparison; the anchors (mamf-finder.py) "
                   "use the default accumulation, measured as fp8_e4m3")
        elif d.dtype.startswith("fp8") and not (
                d.check_rel_error is not None and d.check_rel_error <= FP8_MAX_REL_ERROR):
            # the verdict from the numbers and the probe's limit (_fp8_edited: the flag agrees)
            why = ("fp8 has no accuracy check" if d.check_rel_error is None else
                   f"fp8 failed its accuracy check against bf16 (relative error "
                   f"{d.check_rel_error:.3g}, limit {FP8_MAX_REL_ERROR:g})")
        spread = d.across_ranks
        best = next((p for p in sec.points if p.dtype == d.dtype and p.tflops == d.best_tflops),
                    None)
        if spread is not None and spread.n >= 2:
            value, p10, p90 = spread.p50, spread.p10, spread.p90
        else:
            value = d.best_tflops
            p10, p90 = (best.tflops_p10, best.tflops_p90) if best else (None, None)
        out.append(Figure(kind="matmul", name=d.dtype, value=value, unit="TFLOP/s", p10=p10,
                          p90=p90, refusal=why, **base))
    return out


def _hbm(report: ProbeReport, base: dict) -> list[Figure]:
    for p in report.memory.points if report.memory else ():
        if p.name == "device_copy" and p.status == "measured" and p.gb_per_s:
            spread = p.across_ranks
            if spread is not None and spread.n >= 2:
                value, p10, p90 = spread.p50, spread.p10, spread.p90
            else:
                value, p10, p90 = p.gb_per_s, p.gb_per_s_p10, p.gb_per_s_p90
            return [Figure(kind="hbm", name=p.name, value=value, unit="GB/s", p10=p10, p90=p90,
                           **base)]
    return []


def _plateau(s: CollectiveSeries) -> tuple[float, float | None, float | None, str | None]:
    large = [p for p in s.points if p.size_bytes >= PLATEAU_BYTES]
    pool = large or list(s.points)
    best = max(pool, key=lambda p: p.busbw_gb_per_s)
    why = None if large else (f"largest message {max(p.size_bytes for p in s.points)} B is "
                              f"below {PLATEAU_BYTES >> 20} MiB, short of the busbw plateau")
    return best.busbw_gb_per_s, best.busbw_p10_gb_per_s, best.busbw_p90_gb_per_s, why


def _collective(report: ProbeReport, base: dict) -> list[Figure]:
    out = []
    col = report.collectives
    for s in col.series if col and col.status == "measured" else ():
        if s.op != "all_reduce" or s.status != "measured" or not s.points:
            continue
        if s.scope == "world" and base["nodes"] < 2:
            continue
        value, p10, p90, why = _plateau(s)
        kind = "intra" if s.scope == "intra_node" else "inter"
        if why is None and not base["gpus_per_node"] == base["gpus_visible"]:
            why = (f"the run used {base['gpus_per_node']} of the node's {base['gpus_visible']} "
                   "GPUs; bus bandwidth depends on the group, so only full nodes calibrate")
        if why is None and kind == "intra" and s.group_size != base["gpus_per_node"]:
            why = f"intra-node group of {s.group_size}, not the node's {base['gpus_per_node']}"
        out.append(Figure(kind=kind, name=s.op, value=value, unit="GB/s", p10=p10, p90=p90,
                          net=s.net, rdma=_rdma(s), transport=s.transport, refusal=why, **base))
    return out


def _rdma(s: CollectiveSeries) -> bool | None:
    """RDMA as the probe derives it (probes._collectives): every network NCCL named is one
    is_rdma accepts, and no channel went over NET/Socket. The report's ``rdma`` flag is not
    read: a TCP socket labelled rdma true would otherwise pass for the fabric."""
    if s.net is None:
        return None
    sockets = any(t.strip().upper().startswith("NET/SOCKET")
                  for t in (s.transport or "").split("+"))
    return not sockets and all(is_rdma(n) for n in s.net.split("+"))


def report_figures(report: ProbeReport) -> tuple[Figure, ...]:
    """Every figure the report offers, each with the report's own refusal (None: usable so
    far; the planner still checks the datasheet bounds and the instance)."""
    env = report.environment
    base = {"gpus_per_node": env.local_world_size if env else 1,
            # nvidia-smi lists the node's GPUs even when CUDA_VISIBLE_DEVICES hides some
            "gpus_visible": max(env.gpu_count, env.gpu_count_smi or 0) or env.local_world_size
            if env else 1,
            "nodes": env.node_count if env else 1}
    figures = [*_matmul(report, base), *_hbm(report, base), *_collective(report, base)]
    whole = report_refusal(report)
    out = []
    for f in figures:
        why = whole or _failed(report, _PROBE_OF[f.kind]) or f.refusal
        out.append(f if why == f.refusal else dataclasses.replace(f, refusal=why))
    return tuple(out)


def workload_refusal(report: ProbeReport) -> str | None:
    """Why the report's workload layer cannot calibrate the planner (None: usable so far; the
    planner still checks it against the datasheet and its own model)."""
    w, env = report.workload, report.environment
    if w is None:
        return "no workload section"
    if why := (report_refusal(report) or _failed(report, "workload")):
        return why
    if w.status != "measured":
        return f"the workload probe did not measure ({w.reason})"
    if w.steps < MIN_STEPS or w.warmup_steps < MIN_WARMUP_STEPS:
        return (f"{w.steps} timed step(s) after {w.warmup_steps} warm-up step(s), fewer than "
                f"{MIN_STEPS} after {MIN_WARMUP_STEPS}: the clocks and allocator had not "
                "settled, or the median is of too few steps. To fix: re-run without "
                "--steps/--warmup-steps (the defaults: 30 after 5)")
    if why := (_section_edited(report) or rank_0_workload_edited(report)):
        return why
    gpus_visible = max(env.gpu_count, env.gpu_count_smi or 0) or env.local_world_size
    if env.local_world_size != gpus_visible:
        return (f"the run used {env.local_world_size} of the node's {gpus_visible} GPUs: only a "
                "full node shows the power and heat of a training step; run torchrun with "
                "--nproc-per-node equal to the node's GPUs")
    if w.tp > 1:
        return (f"tensor parallel (tp={w.tp}): a shard's time includes its all-reduces, and the "
                "planner's per-layer reference is one GPU (tp=1); re-run with --tp 1")
    return None


_WORKLOAD_BYTES = ("static_memory_bytes", "peak_memory_bytes", "layer_activation_bytes",
                   "layer_saved_bytes")
# The allocator's and autograd's activation counts are of the same tensors (806,421,504 and
# 806,420,504 bytes on docs/probes.md's H200; gpu_check wants 25%): 2x apart (+2 MiB) is edited
MEMORY_COUNTS_FACTOR, MEMORY_COUNTS_SLACK_BYTES = 2.0, 2 * 2**20


def _section_edited(report: ProbeReport) -> str | None:
    """A workload section no run writes: a byte count (the section's, a rank's) <= 0 (None: not
    measured, as on CPU), the allocator's and saved tensors' activations over
    MEMORY_COUNTS_FACTOR apart, a quick flag or device not the report's, shared experts alone."""
    w, env = report.workload, report.environment
    ranks = [(f"rank {r.rank}'s workload", [(v.name, v.value) for v in r.workload])
             for r in sorted(report.ranks, key=lambda r: r.rank)]
    whose = [("the workload", [(n, getattr(w, n)) for n in _WORKLOAD_BYTES]), *ranks]
    for what, named in whose:
        for name, value in named:
            if name in _WORKLOAD_BYTES and value is not None and value <= 0:
                return f"{what} {name} is {value:,.4g} bytes; a measured layer has more: {_EDITED}"
    for what, named in whose:
        act, saved = (dict(named).get(n) for n in ("layer_activation_bytes", "layer_saved_bytes"))
        if act and saved and max(act, saved) > MEMORY_COUNTS_FACTOR * min(act, saved) \
                + MEMORY_COUNTS_SLACK_BYTES:
            return (f"{what} layer_activation_bytes ({act / 2**20:,.1f} MiB) and "
                    f"layer_saved_bytes ({saved / 2**20:,.1f} MiB), the allocator's and "
                    f"autograd's counts of the same tensors, are over "
                    f"{MEMORY_COUNTS_FACTOR:g}x apart: {_EDITED}")
    if w.quick != report.quick or w.device != env.device_type:
        return (f"the workload section says quick {w.quick} on {w.device!r}, the report quick "
                f"{report.quick} on {env.device_type!r}; one run writes both: {_EDITED}")
    if w.shared_experts and not w.experts:
        return (f"{w.shared_experts} shared experts in a dense layer (experts 0): shared experts "
                "belong to a mixture, and the planner models no such layer. To fix: re-run "
                "with --experts and --experts-per-token, or without --shared-experts")
    return None
