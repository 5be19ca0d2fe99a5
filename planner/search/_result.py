"""From the optimizer's candidate arrays to a ``PlanResult``: costs, constraints, ranking,
distinct options, the frontier, the infeasible diagnosis, per-group bests and chart points."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from catalog import HOURS_PER_MONTH

from ..model import TimeRange, cluster_for_instance, quantile, summarise
from ._candidates import (
    Candidate,
    Commitment,
    FlaggedSkipped,
    Infeasible,
    PlanPoint,
    PlanResult,
    run_cost_usd,
)

if TYPE_CHECKING:
    import numpy as np

LIMITS = ("budget", "min_probability", "quotas")
# Checkpoint storage: the newest checkpoint and the one before it (a write interrupted by a
# failure must leave one complete checkpoint), priced per month of 8,760 / 12 hours.
CHECKPOINTS_KEPT = 2


@dataclass(frozen=True, slots=True)
class Arrays:
    """One entry per (offer, node count): the best plan's inputs to cost and risk."""

    offer_idx: np.ndarray
    type_idx: np.ndarray
    rows: np.ndarray  # row of the best plan in its type's evaluated grid
    nodes: np.ndarray
    gpus: np.ndarray
    ideal: np.ndarray  # training hours
    rate: np.ndarray  # spot interruptions per node-hour
    restart: np.ndarray  # minutes per interruption
    gp: dict  # goodput_arrays
    prob: np.ndarray  # P(finish by the deadline)
    quota_caps: np.ndarray | None
    sigma: np.ndarray  # the range's σ per candidate (narrower where a workload probe applies)
    checkpoint_bytes: float


def _pareto(cost: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-optimal points (minimise both), sorted by cost."""
    import numpy as np

    order = np.lexsort((wall, cost))
    best_wall = math.inf
    keep = []
    for i in order:
        if wall[i] < best_wall - 1e-12:
            keep.append(i)
            best_wall = wall[i]
    return np.array(keep, dtype=np.int64)


def build_result(*, workload, catalog, constraints, A, ms, offers, per_type, arrays: Arrays,
                 top_n: int, points: bool, evaluated: int, offers_considered: int,
                 flagged: FlaggedSkipped, catalog_info: dict, notes: tuple) -> PlanResult:
    import numpy as np

    c, a = constraints, arrays
    oi = a.offer_idx
    price = np.array([o.usd_per_hour for o in offers])[oi]
    term = np.array([o.term_hours if o.term_hours else np.nan for o in offers])[oi]
    wall = a.gp["wall_hours"]
    cost, _ = run_cost_usd(wall_hours=wall, nodes=a.nodes, usd_per_hour=price,
                           term_hours=term, commitment_use=c.commitment_use)

    def storage(hours):  # the checkpoints kept, for the run's duration (priced per month)
        s = c.checkpoint_storage_usd_per_gb_month
        return (CHECKPOINTS_KEPT * a.checkpoint_bytes / 1e9 * s * hours / HOURS_PER_MONTH
                if s else 0.0)

    cost = cost + storage(wall)
    within_budget = cost <= c.budget_usd if c.budget_usd is not None else np.ones(len(wall), bool)
    within_quota = a.gpus <= a.quota_caps if a.quota_caps is not None \
        else np.ones(len(wall), bool)
    within = within_budget & within_quota
    by_time = wall <= c.deadline_hours
    on_time = a.prob >= c.min_probability if c.probability_required else by_time
    meets = within & on_time
    # A stable tie-break independent of the order offers arrived in: (offer key, nodes).
    key_rank = np.empty(len(offers), dtype=np.int64)
    key_rank[sorted(range(len(offers)), key=lambda i: offers[i].key)] = np.arange(len(offers))
    rank_key = key_rank[oi] * (int(a.nodes.max(initial=0)) + 1) + a.nodes.astype(np.int64)

    def ranked(mask, primary, secondary):
        idx = np.flatnonzero(mask)
        return idx[np.lexsort((rank_key[idx], secondary[idx], primary[idx]))]

    def config(i: int) -> tuple:
        o = offers[oi[i]]
        # Prices equal to a hundredth of a cent are the same price (amortised reservations
        # differ by $0.000001/h between regions).
        return (o.cloud, o.instance_type, o.pricing, round(o.usd_per_hour, 4),
                o.offering_class, o.upfront, int(a.nodes[i]), int(a.type_idx[i]),
                int(a.rows[i]))

    def distinct(order: np.ndarray, limit: int | None = None) -> list[tuple[int, tuple]]:
        """Identical configurations at the same price in several regions → one entry."""
        groups: dict[tuple, list[int]] = {}
        for i in order:
            groups.setdefault(config(int(i)), []).append(int(i))
        out = [(idx[0], tuple(sorted({offers[oi[j]].region for j in idx})))
               for idx in groups.values()]
        return out[:limit] if limit else out

    described: dict[int, Candidate] = {}

    def describe_all(items: list[tuple[int, tuple]]) -> list[Candidate]:
        todo = [i for i, _ in items if i not in described]
        if todo:
            t = np.array(todo)
            kw = {"base_hours": a.gp["checkpointed_hours"][t], "loss_hours":
                  a.gp["loss_hours"][t], "rate": a.gp["rate"][t], "sigma": a.sigma[t]}
            q10, q90 = quantile(0.1, **kw), quantile(0.9, **kw)
            for k, i in enumerate(todo):
                described[i] = _candidate(i, float(q10[k]), float(q90[k]))
        return [_with_regions(described[i], regions) for i, regions in items]

    def _candidate(i: int, q10: float, q90: float) -> Candidate:
        o = offers[oi[i]]
        it, ci, grid, res, _, found, _ = per_type[a.type_idx[i]]
        n = int(a.nodes[i])
        cluster = cluster_for_instance(catalog, it, n)
        est = summarise(workload, cluster, ms, A, ci, grid, res, int(a.rows[i]),
                        interruption_rate_per_node_hour=float(a.rate[i]),
                        restart_minutes=float(a.restart[i]), measurements=found)
        t = o.term_hours or math.nan
        costs, paid = run_cost_usd(wall_hours=np.array([wall[i], q10, q90]), nodes=n,
                                   usd_per_hour=o.usd_per_hour, term_hours=t,
                                   commitment_use=c.commitment_use)
        costs = costs + storage(np.array([wall[i], q10, q90]))
        commitment = None
        if o.term_hours:
            commitment = Commitment(
                term_hours=o.term_hours, terms=int(round(paid[0] / o.term_hours)),
                paid_hours=float(paid[0]), commitment_use=c.commitment_use,
                term_cost_usd=float(n * o.usd_per_hour * paid[0]),
                effective_usd_per_hour=float(costs[0] / (n * wall[i])))
        warnings = list(est.warnings)
        if o.pricing == "spot" and n > c.max_spot_instances:
            warnings.append(
                f"capacity: {n} spot {o.instance_type} in {o.region} for "
                f"{wall[i]:,.0f} h is above the {c.max_spot_instances}-instance spot fleet "
                "limit (`max_spot_instances`); clouds publish no spot capacity, so check "
                "AWS's Spot placement score / your quota before counting on it")
        if not o.price_usable:
            why = o.flag_reasons or ", ".join(o.flags)
            warnings.append(f"flagged price used (`allow_flagged`): {why}")
        if commitment and commitment.paid_hours > wall[i] * 1.05:
            warnings.append(
                f"commitment: pays {commitment.terms} × {o.term_hours:,.0f} h per instance for "
                f"a {wall[i]:,.0f} h run (effective ${commitment.effective_usd_per_hour:,.2f}/"
                f"instance-h); `commitment_use` says how much of the rest you will use")
        dist = {"base_hours": float(a.gp["checkpointed_hours"][i]),
                "loss_hours": float(a.gp["loss_hours"][i]), "rate": float(a.gp["rate"][i]),
                "sigma": float(a.sigma[i]), "deadline_hours": c.deadline_hours}
        return Candidate(
            offer=o, regions=(o.region,), accelerator=it.accelerator, nodes=n,
            gpus=int(a.gpus[i]), estimate=est, wall_clock_hours=float(wall[i]),
            wall_clock_hours_p10=q10, wall_clock_hours_p90=q90, cost_usd=float(costs[0]),
            cost_usd_p10=float(costs[1]), cost_usd_p90=float(costs[2]),
            deadline_probability=float(a.prob[i]), meets_deadline=bool(meets[i]),
            within_limits=bool(within[i]),
            expected_interruptions=float(a.gp["rate"][i] * a.gp["checkpointed_hours"][i]),
            spot_interruptions_per_hour=float(a.rate[i]) or None, distribution=dist,
            commitment=commitment, warnings=tuple(warnings))

    feasible = ranked(meets, cost, wall)
    top = describe_all(distinct(feasible, top_n))
    front_idx = np.flatnonzero(within)[_pareto(cost[within], wall[within])] \
        if within.any() else np.array([], dtype=np.int64)
    frontier = describe_all(distinct(front_idx[np.argsort(cost[front_idx], kind="stable")]))
    side = {}
    for pricing in dict.fromkeys(o.pricing for o in offers):
        first = next((int(i) for i in feasible if offers[oi[i]].pricing == pricing), None)
        if first is not None:
            side[pricing] = describe_all([(first, (offers[oi[first]].region,))])[0]
    by_group = {}
    if c.group_by:
        for i in feasible:
            g = per_type[a.type_idx[i]][0].accelerator if c.group_by == "accelerator" \
                else offers[oi[i]].cloud
            if g not in by_group:
                by_group[g] = int(i)
        by_group = {g: describe_all([(i, (offers[oi[i]].region,))])[0]
                    for g, i in sorted(by_group.items())}
    infeasible = None
    if feasible.size == 0:
        infeasible = _infeasible(c, wall, cost, a, within, within_budget, within_quota,
                                 on_time, by_time, rank_key, describe_all, offers)
    pts = _points(c, a, offers, per_type, wall, cost, meets, within, front_idx, rank_key,
                  feasible) if points else ()
    return PlanResult(
        recommendation=top[0] if top else None, candidates=tuple(top), frontier=tuple(frontier),
        points=pts, infeasible=infeasible, constraints=c, evaluated=evaluated,
        offers_considered=offers_considered, catalog=catalog_info, spot_vs_on_demand=side,
        by_group=by_group, group_by=c.group_by, flagged_skipped=flagged, notes=notes)


def _with_regions(cand: Candidate, regions: tuple[str, ...]) -> Candidate:
    if regions == cand.regions:
        return cand
    from dataclasses import replace

    return replace(cand, regions=regions)


def _infeasible(c, wall, cost, a, within, within_budget, within_quota, on_time, by_time,
                rank_key, describe_all, offers) -> Infeasible:
    import numpy as np

    pool = np.flatnonzero(within) if within.any() else np.arange(len(wall))
    fastest = int(pool[np.lexsort((rank_key[pool], cost[pool], wall[pool]))[0]])
    cheapest = int(pool[np.lexsort((rank_key[pool], wall[pool], cost[pool]))[0]])
    relaxed_masks = {}
    if c.budget_usd is not None:
        relaxed_masks["budget"] = on_time & within_quota
    if c.probability_required:
        relaxed_masks["min_probability"] = by_time & within
    if a.quota_caps is not None:
        relaxed_masks["quotas"] = on_time & within_budget
    relaxed = {}
    for limit, mask in relaxed_masks.items():
        idx = np.flatnonzero(mask)
        if idx.size:
            best = int(idx[np.lexsort((rank_key[idx], wall[idx], cost[idx]))[0]])
            relaxed[limit] = describe_all([(best, (offers[a.offer_idx[best]].region,))])[0]
    if not on_time.any():
        binding = ("deadline",)
        if c.probability_required and by_time.any():
            binding = ("min_probability",)
        best_p = float(a.prob.max())
        reason = (f"no candidate finishes within {c.deadline_hours:,.1f} h"
                  + (f" with probability ≥ {c.min_probability:.0%} (best "
                     f"{best_p:.1%})" if c.probability_required else "")
                  + f"; the fastest takes {wall.min():,.1f} h")
    else:
        binding = tuple(relaxed) or tuple(k for k in relaxed_masks)
        parts = []
        if "budget" in relaxed_masks:
            ok = on_time & within_quota
            parts.append(f"the budget ${c.budget_usd:,.0f}"
                         + (f" (cheapest in time ${cost[ok].min():,.0f})" if ok.any() else ""))
        if "quotas" in relaxed_masks:
            parts.append("the quotas")
        reason = "no candidate meets the deadline within " + (" and ".join(parts) or
                                                              "the limits")
    d = describe_all([(fastest, (offers[a.offer_idx[fastest]].region,)),
                      (cheapest, (offers[a.offer_idx[cheapest]].region,))])
    return Infeasible(reason=reason, binding=binding, fastest=d[0], cheapest=d[1],
                      relaxed=relaxed, deadline_hours=c.deadline_hours)


def _points(c, a, offers, per_type, wall, cost, meets, within, front_idx, rank_key,
            feasible) -> tuple[PlanPoint, ...]:
    """The best plan of every (instance type, pricing, node count), cheapest region, within
    4× the best feasible cost (or the cheapest) and 4× the deadline: what a chart can show."""
    import numpy as np

    oi = a.offer_idx
    ref_cost = cost[feasible[0]] if feasible.size else float(cost.min())
    keep_limit = (cost <= 4 * ref_cost) & (wall <= 4 * c.deadline_hours)
    order = np.lexsort((rank_key, cost))
    seen, out = set(), []
    frontier = set(int(i) for i in front_idx)
    for i in order:
        i = int(i)
        if not keep_limit[i] and i not in frontier:
            continue
        o = offers[oi[i]]
        key = (o.cloud, o.instance_type, o.pricing, int(a.nodes[i]))
        if key in seen:
            continue
        seen.add(key)
        r = TimeRange.around(float(wall[i]), float(a.sigma[i]))
        k = r.p90 / r.p50
        out.append(PlanPoint(
            cloud=o.cloud, region=o.region, instance_type=o.instance_type,
            accelerator=per_type[a.type_idx[i]][0].accelerator, pricing=o.pricing,
            nodes=int(a.nodes[i]), gpus=int(a.gpus[i]), wall_clock_hours=float(wall[i]),
            wall_clock_hours_p10=r.p10, wall_clock_hours_p90=r.p90,
            total_cost_usd=float(cost[i]), total_cost_usd_p10=float(cost[i]) / k,
            total_cost_usd_p90=float(cost[i]) * k, deadline_probability=float(a.prob[i]),
            meets_deadline=bool(meets[i]), within_limits=bool(within[i]),
            on_frontier=i in frontier))
    return tuple(out)
