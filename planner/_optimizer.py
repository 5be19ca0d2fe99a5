"""`plan`: the cheapest configuration that meets the deadline, and the cost/time frontier.

Search space: every usable offer (cloud × region × instance type × pricing model, after the
user's filters and overrides) × every node count 1 … ⌊max GPUs / GPUs per node⌋ (1 only when
the instance has no known inter-node network) × every parallel plan of the performance model.
The model runs once per distinct instance type over all its node counts and plans (vectorised);
prices, spot risk and constraints then apply per offer, also vectorised.

For candidate c with n nodes at price p (USD per instance-hour):
    wall_c  = ideal_c / goodput_c      (failures + spot interruptions, Young/Daly checkpoints)
    cost_c  = n · p · wall_c  (+ checkpoint storage when priced)
    P_c     = P(interruptions ≤ ⌊(deadline − useful time)/loss per interruption⌋), Poisson
Feasible: fits memory, wall_c ≤ deadline, P_c ≥ min probability, cost_c ≤ budget, GPUs within
max GPUs and quota. Ranked by (cost, wall, a stable key) so the answer never depends on the
order offers arrive in. The frontier is the Pareto set of (cost, wall) over every candidate
that satisfies the constraints other than the deadline; the recommendation lies on it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from catalog import Catalog, Offer, UnknownNameError

from ._assumptions import Assumptions
from ._calibration import NO_CALIBRATION, Calibration
from ._errors import PlannerError
from ._estimate import (
    checkpoint_bytes,
    cluster_inputs,
    costable,
    nic_by_nodes,
    plan_grid,
    prune,
    run_model,
    summarise,
)
from ._goodput import deadline_probability, goodput_arrays
from ._hardware import cluster_for_instance
from ._perf import RECOMPUTE_NAMES, ModelScalars
from ._quota import Quotas
from ._software import check_pins
from ._workload import Workload

GPU_VENDORS = ("NVIDIA", "AMD")  # the model's kernels and NCCL/RCCL constants apply to these
DEFAULT_MAX_GPUS = 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    deadline_hours: float
    max_gpus: int = DEFAULT_MAX_GPUS
    budget_usd: float | None = None
    min_probability: float | None = None
    clouds: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    pricing: tuple[str, ...] = ("on_demand", "spot")
    gpus: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # instance types, clouds or regions to leave out
    quotas: Quotas | None = None
    checkpoint_storage_usd_per_gb_month: float | None = None

    def __post_init__(self) -> None:
        if not self.deadline_hours > 0:
            raise PlannerError("--deadline must be in the future. To fix: pass e.g. 14d")
        if self.max_gpus < 1:
            raise PlannerError("--max-gpus must be at least 1. To fix: e.g. --max-gpus 256")
        if self.budget_usd is not None and self.budget_usd <= 0:
            raise PlannerError("--budget must be positive (USD). To fix: e.g. --budget 250000")
        if self.min_probability is not None and not 0 < self.min_probability <= 1:
            raise PlannerError("--min-probability must be in (0, 1]. To fix: e.g. 0.9")


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    offer: Offer
    nodes: int
    gpus: int
    wall_clock_hours: float
    total_cost_usd: float
    deadline_probability: float
    meets_deadline: bool
    row: int  # index into the evaluated arrays (for the full estimate)
    type_index: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanResult:
    recommendation: dict | None
    candidates: tuple[dict, ...]
    frontier: tuple[dict, ...]
    infeasible: dict | None
    evaluated: int  # (instance type, nodes, parallel plan) model evaluations
    offers_considered: int
    catalog: dict
    spot_vs_on_demand: dict = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"recommendation": self.recommendation, "candidates": list(self.candidates),
                "frontier": list(self.frontier), "infeasible": self.infeasible,
                "spot_vs_on_demand": self.spot_vs_on_demand,
                "search": {"model_evaluations": self.evaluated,
                           "offers_considered": self.offers_considered},
                "catalog": self.catalog, "notes": list(self.notes)}


def spot_rate(offer: Offer, A: Assumptions) -> float:
    if offer.pricing != "spot":
        return 0.0
    if offer.interruption_rate_per_hour is not None:
        return offer.interruption_rate_per_hour
    return getattr(A, f"spot_interruptions_per_hour_{offer.cloud}")


def usable_offers(catalog: Catalog, workload: Workload, c: Constraints) -> list[Offer]:
    """Offers that pass the filters and whose accelerator the model can cost."""
    from catalog import select_offers

    exclude = set(c.exclude)
    explicit = bool(c.gpus)
    rows = select_offers(catalog, gpus=c.gpus, clouds=c.clouds, regions=c.regions,
                         pricing=c.pricing, include_unpriced=False)
    out = []
    for r in rows:
        o, acc = r.offer, r.accelerator
        if not o.price_usable or {o.instance_type, o.cloud, o.region} & exclude:
            continue
        if not explicit and acc.vendor not in GPU_VENDORS:
            continue  # TPU/Trainium/Gaudi only when asked for by --gpu
        if costable(acc, workload.precision):
            out.append(o)
    return out


def _pareto(cost: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-optimal points (minimise both), sorted by cost."""
    order = np.lexsort((wall, cost))
    best_wall = math.inf
    keep = []
    for i in order:
        if wall[i] < best_wall - 1e-12:
            keep.append(i)
            best_wall = wall[i]
    return np.array(keep, dtype=np.int64)


def plan(workload: Workload, catalog: Catalog, constraints: Constraints, *,
         assumptions: Assumptions | None = None, calibration: Calibration = NO_CALIBRATION,
         top_n: int = 10) -> PlanResult:
    A = assumptions or Assumptions()
    c = constraints
    known = ({t.name for t in catalog.instance_types} | set(catalog.regions())
             | {"aws", "gcp", "azure"})
    for name in c.exclude:
        if name not in known:
            raise UnknownNameError("instance type, cloud or region", name, known,
                                   hint="--exclude takes instance types, clouds or regions")
    check_pins(workload.pins, workload.framework)
    offers = usable_offers(catalog, workload, c)
    ms = ModelScalars.of(workload)
    ckpt = checkpoint_bytes(ms)
    # ---- 1. the model, once per instance type, over all node counts and plans ------------
    by_type: dict[tuple[str, str], list[Offer]] = {}
    for o in offers:
        by_type.setdefault((o.cloud, o.instance_type), []).append(o)
    types = sorted(by_type)
    per_type = []  # (instance, cluster_inputs, grid, result, best rows per node count)
    evaluated = 0
    # Instance types that look the same to the model (same accelerator, node shape, links
    # and memory) share one evaluation: GCP's -nolssd twins, AWS p5e/p5en, Azure sizes.
    shared: dict[tuple, tuple] = {}
    for key in types:
        it = catalog.instance_type_by_key(*key)
        max_nodes = c.max_gpus // it.gpu_count if it.inter_node_gbps else 1
        if max_nodes < 1:
            continue
        cluster = cluster_for_instance(catalog, it, 1)
        try:
            ci = cluster_inputs(cluster, workload, A, calibration,
                                memory_gib=it.gpu_memory_gib)
        except PlannerError:
            continue
        # A fabric measured on this instance type (per node count) makes it unlike others.
        measured_fabric = (not calibration.empty
                           and calibration.inter(it.name, 2) is not None)
        signature = (it.accelerator, it.gpu_count, max_nodes, ci.matmul_tflops,
                     ci.intra_busbw_gb_per_s, ci.nic_gb_per_s_per_gpu, ci.memory_gib,
                     ci.hbm_gb_per_s, ci.hop_latency_s, it.name if measured_fabric else None)
        if signature not in shared:
            grid = prune(ms, A, plan_grid(ms, it.gpu_count, np.arange(1, max_nodes + 1),
                                          workload.recompute, workload=workload), ci)
            if len(grid["tp"]) == 0:
                shared[signature] = None
                continue
            res = run_model(ms, A, grid, ci, it.gpu_count,
                            nic=nic_by_nodes(cluster, ci, calibration, grid["nodes"]))
            evaluated += len(grid["tp"])
            step = np.where(res["fits"], res["step_s"], np.inf)
            order = np.lexsort((res["memory_gib"], step, grid["nodes"]))
            n_sorted = grid["nodes"][order]
            first = np.r_[True, n_sorted[1:] != n_sorted[:-1]]
            best = order[first]
            shared[signature] = (grid, res, best[np.isfinite(step[best])])
        if shared[signature] is None:
            continue
        grid, res, best = shared[signature]
        if best.size:
            per_type.append((it, ci, grid, res, best))
    if not per_type:
        raise PlannerError(_nothing_fits(workload, offers))
    # ---- 2. candidates: (offer, node count) with time, cost and probability -------------
    offer_list, parts = [], []
    for ti, (it, _ci, grid, res, best) in enumerate(per_type):
        tokens_per_step = res["micro_batches"][best] * grid["dp"][best] * grid["mb"][best] \
            * workload.seq_len
        ideal = np.ceil(workload.tokens / tokens_per_step) * res["step_s"][best] / 3600
        for o in by_type[(it.cloud, it.name)]:
            oi = len(offer_list)
            offer_list.append(o)
            k = len(best)
            parts.append((np.full(k, oi), np.full(k, ti), best, grid["nodes"][best],
                          grid["nodes"][best] * it.gpu_count, ideal))
    offer_idx, type_idx, rows, node_arr, gpu_arr, ideal_arr = (
        np.concatenate([p[j] for p in parts]) for j in range(6))
    price = np.array([o.usd_per_hour for o in offer_list])[offer_idx]
    rate = np.array([spot_rate(o, A) for o in offer_list])[offer_idx]
    restart = np.array([A.spot_restart_minutes if o.pricing == "spot" else A.restart_minutes
                        for o in offer_list])[offer_idx]
    nodes = node_arr.astype(np.float64)
    gpus = gpu_arr.astype(np.float64)
    gp = goodput_arrays(ideal_hours=ideal_arr, gpus=gpus, nodes=nodes, checkpoint_bytes=ckpt,
                        A=A, interruption_rate_per_node_hour=rate, restart_minutes=restart)
    wall = gp["wall_hours"]
    cost = nodes * price * wall
    if c.checkpoint_storage_usd_per_gb_month:
        # two checkpoints kept for the run's duration
        cost = cost + 2 * ckpt / 1e9 * c.checkpoint_storage_usd_per_gb_month * wall / 730
    prob = deadline_probability(checkpointed_hours=gp["checkpointed_hours"],
                                loss_hours=gp["loss_hours"], rate=gp["rate"],
                                deadline_hours=c.deadline_hours)
    allowed = np.ones(len(wall), dtype=bool)
    if c.budget_usd is not None:
        allowed &= cost <= c.budget_usd
    if c.min_probability is not None:
        allowed &= prob >= c.min_probability
    if c.quotas is not None:
        caps = np.array([c.quotas.limit(o.cloud, o.region, catalog.instance_type_by_key(
            o.cloud, o.instance_type).accelerator) for o in offer_list])[offer_idx]
        allowed &= gpus <= caps
    meets = allowed & (wall <= c.deadline_hours)
    # A stable tie-break independent of the order offers arrived in: (offer key, nodes).
    key_rank = np.empty(len(offer_list), dtype=np.int64)
    key_rank[sorted(range(len(offer_list)), key=lambda i: offer_list[i].key)] = \
        np.arange(len(offer_list))
    rank_key = key_rank[offer_idx] * 100_000 + node_arr

    def ranked(mask: np.ndarray, primary: np.ndarray, secondary: np.ndarray) -> np.ndarray:
        idx = np.flatnonzero(mask)
        return idx[np.lexsort((rank_key[idx], secondary[idx], primary[idx]))]

    def describe(i: int) -> dict:
        o = offer_list[offer_idx[i]]
        it, ci, grid, res, _ = per_type[type_idx[i]]
        cluster = cluster_for_instance(catalog, it, int(nodes[i]))
        est = summarise(workload, cluster, ms, A, ci, grid, res, int(rows[i]),
                        interruption_rate_per_node_hour=float(rate[i]),
                        restart_minutes=float(restart[i]))
        d = est.as_dict()
        d.update({
            "cloud": o.cloud, "region": o.region, "instance_type": o.instance_type,
            "accelerator": it.accelerator, "nodes": int(nodes[i]), "gpus": int(gpus[i]),
            "pricing": o.pricing, "usd_per_hour": o.usd_per_hour,
            "usd_per_hour_cluster": o.usd_per_hour * int(nodes[i]),
            "total_cost_usd": float(cost[i]), "wall_clock_hours": float(wall[i]),
            "gpu_hours": float(wall[i] * gpus[i]), "meets_deadline": bool(meets[i]),
            "deadline_probability": float(prob[i]),
            "spot_interruptions_per_hour": float(rate[i]) or None,
            "price_as_of": o.as_of.isoformat(), "price_source": o.source,
            "price_flags": list(o.flags)})
        return d

    feasible = ranked(meets, cost, wall)
    frontier_idx = _pareto(cost[allowed], wall[allowed])
    frontier_rows = np.flatnonzero(allowed)[frontier_idx]
    cat_info = {"name": catalog.name, "as_of": {cl: catalog.as_of(cl).isoformat()
                                               for cl in ("aws", "gcp", "azure")
                                               if catalog.as_of(cl)},
                "source": catalog.source, "overrides": catalog.overrides_path}
    frontier = tuple(describe(int(i)) for i in frontier_rows)
    notes = (f"deadline {c.deadline_hours:,.1f} h; {len(offers)} offers; up to "
             f"{c.max_gpus} GPUs; model evaluated {evaluated:,} (instance type × nodes × plan)",)
    if feasible.size == 0:
        pool = np.flatnonzero(allowed) if allowed.any() else np.arange(len(wall))
        fastest = int(pool[np.lexsort((rank_key[pool], cost[pool], wall[pool]))[0]])
        cheapest = int(pool[np.lexsort((rank_key[pool], wall[pool], cost[pool]))[0]])
        infeasible = {
            "reason": _why_infeasible(c, allowed, wall, cost, prob),
            "fastest": describe(fastest), "cheapest": describe(cheapest),
            "fastest_misses_by_hours": float(wall[fastest] - c.deadline_hours),
            "cheapest_misses_by_hours": float(wall[cheapest] - c.deadline_hours),
        }
        return PlanResult(recommendation=None, candidates=(), frontier=frontier,
                          infeasible=infeasible, evaluated=evaluated,
                          offers_considered=len(offers), catalog=cat_info, notes=notes)
    top = tuple(describe(int(i)) for i in feasible[:top_n])
    return PlanResult(recommendation=top[0], candidates=top, frontier=frontier,
                      infeasible=None, evaluated=evaluated, offers_considered=len(offers),
                      catalog=cat_info,
                      spot_vs_on_demand=_side_by_side(feasible, offer_list, offer_idx, describe),
                      notes=notes)


def _side_by_side(feasible: np.ndarray, offer_list, offer_idx, describe) -> dict:
    """The best feasible spot plan next to the best feasible on-demand plan."""
    out = {}
    for pricing in ("on_demand", "spot"):
        for i in feasible:
            if offer_list[offer_idx[i]].pricing == pricing:
                out[pricing] = describe(int(i))
                break
    return out


def _why_infeasible(c: Constraints, allowed, wall, cost, prob) -> str:
    if wall.min() > c.deadline_hours:
        return (f"no candidate finishes within {c.deadline_hours:,.1f} h (the fastest takes "
                f"{wall.min():,.1f} h)")
    on_time = wall <= c.deadline_hours
    parts = []
    if c.budget_usd is not None and not (on_time & (cost <= c.budget_usd)).any():
        parts.append(f"the budget ${c.budget_usd:,.0f} (cheapest in time "
                     f"${cost[on_time].min():,.0f})")
    if c.min_probability is not None and not (on_time & (prob >= c.min_probability)).any():
        parts.append(f"--min-probability {c.min_probability} (best {prob[on_time].max():.2f})")
    return "no candidate meets the deadline within " + (" and ".join(parts) or
                                                        "the quotas and limits")


def _nothing_fits(workload: Workload, offers: Sequence[Offer]) -> str:
    if not offers:
        return ("no offer matches the filters. To fix: widen --clouds/--regions/--pricing/--gpu "
                "or check `gpuplan offers`")
    return (f"the model ({workload.arch.params_total() / 1e9:.1f}B parameters) fits on none of "
            f"the {len(offers)} matching offers within the GPU limit. To fix: raise --max-gpus, "
            "allow GPUs with more memory, or use --recompute full")


__all__ = ["Constraints", "PlanResult", "RECOMPUTE_NAMES", "plan"]
