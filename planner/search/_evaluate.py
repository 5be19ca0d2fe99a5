"""The performance model once per distinct instance shape, kept for the next plan.

What the model says about an instance type — for every node count, the fastest parallel plan
that fits and its step time — depends on the workload's *shape* (architecture, sequence,
batch rule, framework, pins …), the assumptions, the calibration and the cluster's figures
(accelerator, GPUs per node, achievable rates, links, memory), never on the tokens, the
deadline, prices or regions. So ``plan`` asks ``shape_evaluation`` once per distinct
``ShapeKey`` and reuses the answer across offers (an instance type sold in twenty regions and
three pricing models is timed once), across instance types that look the same to the model
(GCP's -nolssd twins, AWS p5e/p5en), across deadlines and across team jobs that differ only
in tokens, deadline or prices. The answer keeps only the fastest plan per node count (what
the search reads), so a bounded cache of them stays small; the full grid is built once per
distinct (GPUs per node, node range, memory) within a call and dropped after it.

Nothing here changes a number: the grid, the pruning by memory, the model and the choice of
the fastest plan per node count (ties: less memory, then grid order) are the model's own
(``plan_grid``, ``prune``, ``run_model``), run on slices of whole node counts so that a
16,384-GPU search never holds every row's figures at once.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, fields, is_dataclass, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from catalog import record

from ..model import (
    Assumptions,
    Calibration,
    ClusterInputs,
    ModelScalars,
    Workload,
    nic_by_nodes,
    nvlink_domain,
    plan_grid,
    prune,
    range_sigma,
    run_model,
    seconds_per_sequence,
    workload_memory_ratios,
    workload_scales,
)
from . import _kept

if TYPE_CHECKING:
    import numpy as np

CACHE_SIZE = 1024  # shape evaluations kept per process (each a few arrays of ≤ max nodes) …
CACHE_BYTES = 128 * 2**20  # … holding at most this much (~30 KB each at 1,024 GPUs)
CHUNK_ROWS = 1 << 16  # grid rows timed at once: bounds the model's temporaries (~100 MiB)
# The model's figures ``plan`` and ``summarise`` read of the chosen plan (the rest is dropped).
RES_KEYS = ("step_s", "layer_s", "compute_s", "tp_comm_s", "ep_comm_s", "pp_bubble_s",
            "dp_comm_s", "other_s", "micro_batches", "ep", "virtual_stages", "memory_gib",
            "memory_weights_gib", "memory_grads_gib", "memory_optimizer_gib",
            "memory_activations_gib", "memory_logits_gib")


@dataclass(frozen=True, slots=True, eq=False)
class ShapeEvaluation:
    """The fastest plan that fits for every node count of one instance shape.

    Row j is node count ``nodes[j]`` (ascending; counts where nothing fits are left out):
    ``grid`` its plan (the grid's columns), ``res`` the model's figures for it (``RES_KEYS``),
    ``sigma`` the σ of its range, ``tokens_per_step`` m·dp·mb·s. ``found``: the workload
    probe's measurements per (micro-batch, recompute code); ``evaluated``: the rows of the
    full grid the model timed. Arrays are read-only: the record is shared between calls."""

    nodes: np.ndarray
    grid: Mapping[str, np.ndarray]
    res: Mapping[str, np.ndarray]
    sigma: np.ndarray
    tokens_per_step: np.ndarray
    found: Mapping
    evaluated: int


@record(kw_only=False)
class ShapeKey:
    """Everything a shape evaluation depends on, as hashable values (see the module doc)."""

    workload: Workload  # with tokens 1 and no notes: the model never reads them
    assumptions: tuple
    calibration: tuple | None
    accelerator: str
    gpus_per_node: int
    max_nodes: int
    cluster: tuple  # the ClusterInputs figures the model reads
    fabric: str | None  # the instance type whose measured fabric applies, if any


class BoundedCache:
    """A small thread-safe LRU map (the app plans from several threads), bounded by entries
    and, with ``weigh``, by the bytes its values hold."""

    def __init__(self, size: int, *, max_bytes: int | None = None, weigh=None) -> None:
        self.size, self.max_bytes, self.weigh = size, max_bytes, weigh
        self.data, self.weights, self.lock = OrderedDict(), {}, threading.Lock()
        self.total = self.hits = self.misses = 0

    def get(self, key, default=None):
        with self.lock:
            if key in self.data:
                self.data.move_to_end(key)
                self.hits += 1
                return self.data[key]
            self.misses += 1
            return default

    def put(self, key, value) -> None:
        with self.lock:
            if key in self.data:
                self.total -= self.weights.pop(key)
            self.data[key] = value
            self.weights[key] = self.weigh(value) if self.weigh else 0
            self.total += self.weights[key]
            self.data.move_to_end(key)
            while len(self.data) > self.size or (
                    self.max_bytes is not None and self.total > self.max_bytes
                    and len(self.data) > 1):
                old, _ = self.data.popitem(last=False)
                self.total -= self.weights.pop(old)

    def clear(self) -> None:
        with self.lock:
            self.data.clear()
            self.weights.clear()
            self.total = self.hits = self.misses = 0


def evaluation_bytes(ev: ShapeEvaluation | None) -> int:
    """The memory an evaluation's arrays hold."""
    if ev is None:
        return 0
    return int(ev.nodes.nbytes + ev.sigma.nbytes + ev.tokens_per_step.nbytes
               + sum(a.nbytes for a in (*ev.grid.values(), *ev.res.values())))


_CTX_FIELDS = ("workload", "assumptions", "calibration")  # ShapeKey's fields from CallContext
_EVALUATIONS = BoundedCache(CACHE_SIZE, max_bytes=CACHE_BYTES, weigh=evaluation_bytes)
_MISSING = object()


def clear_cache() -> None:
    """Forget every kept evaluation (tests, benchmarks of a cold search)."""
    _EVALUATIONS.clear()


def cache_info() -> dict:
    return {"size": len(_EVALUATIONS.data), "bytes": _EVALUATIONS.total,
            "hits": _EVALUATIONS.hits, "misses": _EVALUATIONS.misses, "max": CACHE_SIZE}


def hashable(value: Any) -> Any:
    """``value`` as nested tuples of plain values: read-only mappings and records (which
    hold them and so cannot be hashed) become tuples of their items and fields; NaN becomes
    None (NaN is not equal to itself, so it would never be found again)."""
    if isinstance(value, Mapping):
        return tuple((hashable(k), hashable(v)) for k, v in value.items())
    if isinstance(value, list | tuple):
        return tuple(hashable(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(hashable(v) for v in value)
    if isinstance(value, float) and math.isnan(value):
        return None
    if is_dataclass(value) and not isinstance(value, type):
        return (type(value).__name__,
                *(hashable(getattr(value, f.name)) for f in fields(value)))
    return value


@record(kw_only=False)
class CallContext:
    """What one ``plan`` call shares between its instance types: the keys of its inputs and
    the grids it built (a grid depends on GPUs per node, node range and memory only) and,
    once a shape is not kept in memory, its inputs' keys as ``_kept`` writes them."""

    workload: Workload
    ms: ModelScalars
    A: Assumptions
    calibration: Calibration
    workload_key: Workload
    assumptions_key: tuple
    calibration_key: tuple | None
    grids: dict
    kept_text: list  # [canonical text of the three keys], filled on first use

    @classmethod
    def of(cls, workload: Workload, ms: ModelScalars, A: Assumptions,
           calibration: Calibration) -> CallContext:
        return cls(workload=workload, ms=ms, A=A, calibration=calibration,
                   workload_key=replace(workload, tokens=1.0, inferred=(), warnings=()),
                   assumptions_key=hashable(A),
                   calibration_key=None if calibration.empty else hashable(calibration),
                   grids={}, kept_text=[])


def shape_evaluation(ctx: CallContext, it, cluster, ci: ClusterInputs,
                     max_nodes: int) -> ShapeEvaluation | None:
    """The evaluation of instance type ``it`` (``cluster``: one node of it, ``ci`` its
    figures) up to ``max_nodes`` nodes: kept, or computed and kept. None when the grid is
    empty (no plan fits in memory); no rows when the model found none that fits."""
    import numpy as np

    nic = nic_by_nodes(cluster, ci, ctx.calibration, np.arange(1, max_nodes + 1))
    key = ShapeKey(
        workload=ctx.workload_key, assumptions=ctx.assumptions_key,
        calibration=ctx.calibration_key, accelerator=it.accelerator,
        gpus_per_node=it.gpu_count, max_nodes=max_nodes,
        cluster=hashable((ci.matmul_tflops, ci.attention_tflops, ci.hbm_gb_per_s,
                          ci.memory_gib, ci.intra_busbw_gb_per_s, ci.nic_gb_per_s_per_gpu,
                          ci.sm_count, ci.hop_latency_s)),
        fabric=it.name if nic is not None else None)
    found = _EVALUATIONS.get(key, _MISSING)
    if found is _MISSING:
        if not ctx.kept_text:
            ctx.kept_text.append(_kept.canonical(hashable(
                (ctx.workload_key, ctx.assumptions_key, ctx.calibration_key))))
        text = ctx.kept_text[0] + _kept.canonical(hashable(tuple(
            getattr(key, f.name) for f in fields(ShapeKey) if f.name not in _CTX_FIELDS)))
        kept = _kept.load(text)  # from an earlier process (``_kept``)
        if kept is _kept.MISSING:
            found = _evaluate(ctx, it.accelerator, it.gpu_count, max_nodes, ci, nic)
            _kept.store(text, found)
        else:
            found = None if kept is None else ShapeEvaluation(
                **kept, found=MappingProxyType({}))
        _EVALUATIONS.put(key, found)
    return found


def _grid(ctx: CallContext, accelerator: str, gpus_per_node: int, max_nodes: int,
          ci: ClusterInputs, domain: float) -> tuple[dict, dict | None]:
    """(the grid pruned by memory, the workload probe's activation ratios it was pruned with),
    built once per call for each (GPUs per node, node range, memory, ratios) — the unpruned
    grid once per (GPUs per node, node range); pruning runs on slices of whole node counts
    (it is row by row). The ratios are the accelerator's (None without a measurement)."""
    import numpy as np

    full_key = (gpus_per_node, max_nodes, domain)
    if full_key not in ctx.grids:
        ctx.grids[full_key] = plan_grid(ctx.ms, gpus_per_node, np.arange(1, max_nodes + 1),
                                        ctx.workload.recompute, workload=ctx.workload,
                                        nvlink_domain_gpus=domain)
    full = ctx.grids[full_key]
    measured = workload_memory_ratios(ctx.calibration, ctx.workload, accelerator, full)
    key = (*full_key, ci.memory_gib, tuple(sorted(measured.items())) if measured else None)
    if key not in ctx.grids:
        parts = [prune(ctx.ms, ctx.A, part, ci, measured) for part in _slices(full)]
        ctx.grids[key] = parts[0] if len(parts) == 1 else {
            k: np.concatenate([p[k] for p in parts]) for k in parts[0]} if parts else {}
    return ctx.grids[key], measured


def _slices(grid: dict):
    """``grid`` cut into pieces of whole node counts of at most ~CHUNK_ROWS rows, in node
    order, each keeping its rows' order (so ties break as on the whole grid)."""
    import numpy as np

    nodes = grid["nodes"]
    if len(nodes) == 0:
        return
    if len(nodes) <= CHUNK_ROWS:  # one piece: the grid itself, not a copy of it
        yield grid
        return
    counts = np.bincount(nodes)
    edges, total, start = [], 0, 0
    for n in np.flatnonzero(counts):
        if total and total + counts[n] > CHUNK_ROWS:
            edges.append((start, int(n)))
            start, total = int(n), 0
        total += int(counts[n])
    edges.append((start, int(nodes.max()) + 1))
    for lo, hi in edges:
        keep = (nodes >= lo) & (nodes < hi)
        yield {k: (v[keep] if k != "rc_options" else v) for k, v in grid.items()}


def fastest_per_node(nodes: np.ndarray, step: np.ndarray, memory: np.ndarray) -> np.ndarray:
    """Per node count (ascending), the row of the least ``step`` (inf: does not fit), ties to
    less ``memory``, then to the first row; node counts whose least step is not finite are
    left out. What ``np.lexsort((memory, step, nodes))`` and the first row of each node count
    give, without sorting floats: a stable sort of the node counts, then per-group minima (a
    tenth of the time; tests/planner/test_search_kernels.py compares the two)."""
    import numpy as np

    if len(nodes) == 0:
        return np.empty(0, dtype=np.intp)
    order = np.argsort(nodes, kind="stable")
    n_sorted = nodes[order]
    starts = np.flatnonzero(np.r_[True, n_sorted[1:] != n_sorted[:-1]])
    counts = np.diff(np.r_[starts, len(order)])
    s = step[order]
    s = np.where(np.isnan(s), np.inf, s)  # lexsort puts NaN last; such a group is dropped
    tie = s == np.repeat(np.minimum.reduceat(s, starts), counts)
    m = np.where(tie, memory[order], np.inf)
    pick = np.flatnonzero(tie & (m == np.repeat(np.minimum.reduceat(m, starts), counts)))
    group = np.searchsorted(starts, pick, side="right") - 1
    best = order[pick[np.r_[True, group[1:] != group[:-1]]]]
    return best[np.isfinite(step[best])]


def _evaluate(ctx: CallContext, accelerator: str, gpus_per_node: int, max_nodes: int,
              ci: ClusterInputs, nic_per_count) -> ShapeEvaluation | None:
    import numpy as np

    # the accelerator's whole NVLink domain (a GB200 NVL72 rack): ``ci`` is a one-node
    # cluster's, and each row's is capped by its own GPUs (``run_model``)
    domain = float(nvlink_domain(ctx.A, accelerator, gpus_per_node))
    grid, measured_memory = _grid(ctx, accelerator, gpus_per_node, max_nodes, ci, domain)
    if not grid or len(grid["tp"]) == 0:
        return None
    kept_grid, kept_res, found = [], [], {}
    for part in _slices(grid):
        scale, measured = workload_scales(ctx.calibration, ctx.workload, accelerator, part)
        found.update(measured)
        nic = None if nic_per_count is None else nic_per_count[part["nodes"] - 1]
        res = run_model(ctx.ms, ctx.A, part, ci, gpus_per_node, layer_scale=scale, nic=nic,
                        measured_memory=measured_memory,
                        nvlink_domain_gpus=domain)
        best = fastest_per_node(part["nodes"], seconds_per_sequence(part, res),
                                res["memory_gib"])
        kept_grid.append({k: v[best] for k, v in part.items() if k != "rc_options"})
        kept_res.append({k: res[k][best] for k in RES_KEYS})
    if len(kept_grid) == 1:
        g, r = kept_grid[0], kept_res[0]
    else:
        g = {k: np.concatenate([p[k] for p in kept_grid]) for k in kept_grid[0]}
        r = {k: np.concatenate([p[k] for p in kept_res]) for k in RES_KEYS}
    moe = ctx.workload.arch.is_moe
    sigma = np.full(len(g["nodes"]), range_sigma(ctx.A, ctx.workload.framework, moe=moe))
    for (mb, rc), m in found.items():
        rows = np.flatnonzero((g["mb"] == mb) & (g["rc"] == rc))
        covered = r["layer_s"][rows] / r["step_s"][rows]
        sigma[rows] = [range_sigma(ctx.A, ctx.workload.framework, m, float(x), moe=moe)
                       for x in covered]
    tokens_per_step = r["micro_batches"] * g["dp"] * g["mb"] * ctx.workload.seq_len
    for arr in (*g.values(), *r.values(), sigma, tokens_per_step):
        arr.flags.writeable = False
    return ShapeEvaluation(nodes=g["nodes"], grid=MappingProxyType(g),
                           res=MappingProxyType(r), sigma=sigma,
                           tokens_per_step=tokens_per_step,
                           found=MappingProxyType(dict(found)), evaluated=len(grid["tp"]))
