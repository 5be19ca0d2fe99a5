"""From a selection (``_select``) to what ``plan`` and ``plan_options`` return: every shown
candidate described — the model's estimate, P10/P90 of calendar time (all quantiles in one
call), costs, commitments, warnings — and the chart points (the cheapest region of every
(instance type, pricing, nodes) within 4× the cheapest feasible cost and 4× the deadline, or
on the frontier). ``plan_options`` describes only the options its caller keeps.
"""

from __future__ import annotations

import itertools
import weakref
from typing import TYPE_CHECKING, NamedTuple

from ..model import (
    TimeRange,
    cluster_for_instance,
    cluster_inputs,
    distinct,
    format_chance,
    format_hours,
    format_requirement,
    outside_range,
    quantile,
    summarise,
)
from ._candidates import (
    Candidate,
    Commitment,
    FlaggedSkipped,
    Infeasible,
    Option,
    PlanOptions,
    PlanPoint,
    PlanResult,
    run_cost_usd,
    storage_usd,
)

if TYPE_CHECKING:
    from ._select import Selection
    from ._space import Cands, Space


def build_result(*, workload, catalog, constraints, A, ms, space: Space, sel: Selection,
                 points: bool, evaluated: int, offers_considered: int,
                 flagged: FlaggedSkipped, catalog_info: dict, notes: tuple) -> PlanResult:
    """Every candidate ``sel`` shows, described, as a ``PlanResult``."""
    c, C = constraints, sel.C
    wanted = [i for i, _ in (*sel.top, *sel.frontier)] + [*sel.side.values(),
                                                          *sel.by_group.values()]
    inf = sel.infeasible
    if inf is not None:
        wanted += [inf["fastest"], inf["cheapest"], *inf["relaxed"].values()]
    described = _describe(workload, catalog, c, A, ms, space, C, sorted(set(wanted)),
                          regions=_same_regions(space, C, sel.within, wanted))

    def one(i: int, regions: tuple | None = None) -> Candidate:
        return described[i] if regions is None else _with_regions(described[i], regions)

    top = [one(i, r) for i, r in sel.top]
    # not the selection's regions: those are the frontier pool's (one region per option)
    frontier = [one(i) for i, _ in sel.frontier]
    side = {p: one(i) for p, i in sel.side.items()}
    by_group = {g: one(i) for g, i in sel.by_group.items()}
    infeasible = None
    if inf is not None:
        infeasible = Infeasible(reason=inf["reason"], binding=inf["binding"],
                                fastest=one(inf["fastest"]), cheapest=one(inf["cheapest"]),
                                relaxed={k: one(i) for k, i in inf["relaxed"].items()},
                                deadline_hours=c.deadline_hours)
    pts = _points(c, space, C, sel.within, sel.front_idx, sel.ref_cost) if points else ()
    return PlanResult(
        recommendation=top[0] if top else None, candidates=tuple(top), frontier=tuple(frontier),
        points=pts, infeasible=infeasible, constraints=c, evaluated=evaluated,
        offers_considered=offers_considered, catalog=catalog_info, spot_vs_on_demand=side,
        by_group=by_group, group_by=c.group_by, flagged_skipped=flagged,
        # what applying the price overrides noted (a rate 100× below list …): said on stderr
        # once when the file was applied, and here, where `plan --json` and its table keep it
        notes=tuple(dict.fromkeys((*notes, *catalog_info.get("override_notes", ())))))


def build_options(*, workload, catalog, constraints, A, ms, space: Space,
                  sel: Selection) -> PlanOptions:
    """The selection as light options (no estimate yet) and a way to describe those kept."""
    C = sel.C
    front = [i for i, _ in sel.frontier if sel.meets(i)]
    # every region of each frontier option, as ``plan`` lists them (the selection's are the
    # frontier pool's: one region per option)
    feasible_front = list(_same_regions(space, C, sel.within, front).items()) if front else []

    def option(i: int, regions: tuple) -> Option:
        o = space.offers[C.oi[i]]
        return Option(index=i, regions=regions, cloud=o.cloud, region=o.region,
                      instance_type=o.instance_type, pricing=o.pricing,
                      accelerator=space.types[C.ti[i]].it.accelerator, nodes=int(C.nodes[i]),
                      gpus=int(C.gpus[i]), cost_usd=float(C.cost[i]),
                      wall_clock_hours=float(C.wall[i]))

    def describe(options) -> tuple[Candidate, ...]:
        described = _describe(workload, catalog, constraints, A, ms, space, C,
                              sorted({x.index for x in options}))
        return tuple(_with_regions(_override_noted(described[x.index], catalog), x.regions)
                     for x in options)

    inf = sel.infeasible
    return PlanOptions(
        candidates=tuple(option(i, r) for i, r in sel.top),
        feasible_frontier=tuple(option(i, r) for i, r in feasible_front),
        infeasible_reason=inf["reason"] if inf else None,
        fastest_hours=float(C.wall[inf["fastest"]]) if inf else None, describer=describe)


# Where each cloud says how likely spot capacity is (the capacity warning names its own cloud's)
SPOT_CAPACITY_CHECK = {
    "aws": "AWS's Spot placement score / your quota",
    "gcp": "your region's preemptible GPU quota",
    "azure": "Azure's Spot placement score / eviction rates and your spot quota",
}


def _override_noted(cand: Candidate, catalog) -> Candidate:
    """``cand`` warning of what applying the price overrides noted about the entry that priced
    its offer (a rate 100× below list …): a team report's jobs carry their plans' warnings, and
    a note on stderr alone left the written report without a trace of it. (``plan`` says every
    note once among its notes: ``build_result``.)"""
    said = [n.text for n in getattr(catalog, "override_notes", ()) if n.about(cand.offer)]
    if not said:
        return cand
    from dataclasses import replace

    return replace(cand, warnings=tuple(dict.fromkeys((*cand.warnings, *said))))


def _with_regions(cand: Candidate, regions: tuple[str, ...]) -> Candidate:
    if regions == cand.regions:
        return cand
    from dataclasses import replace

    return replace(cand, regions=regions)


KEPT_WORKLOADS = 4  # workloads whose candidate descriptions a layout keeps


class _Described:
    """What describing candidates computes, kept for later plans of the same workload on a
    layout (another deadline, budget or quota: the app's reruns): (workload id, type, nodes,
    row, risk, P10, P90) → Estimate, and (workload id, risk row) → calendar P10, P90. Bounded:
    past KEPT_WORKLOADS workloads it starts again, as a layout serves every token count and
    batch of its shape."""

    def __init__(self) -> None:
        # ids are never reused: when the ids restarted at 0, a fifth workload took the first
        # one's id, and with it the first one's calendar P10/P90 (a 678 h run read "P10–P90
        # 97–190 h" in the app's reruns); a stale id held by another thread now only misses.
        # ``next`` on a count is atomic under the GIL.
        self._counter = itertools.count()
        self._forget()

    def _forget(self) -> None:
        self.estimates: dict = {}
        self.quantiles: dict = {}
        self._ids: dict = {}

    def workload_id(self, workload) -> int:
        """A small key for ``workload``: hashing the record itself for each candidate cost
        more than describing it."""
        found = self._ids.get(workload)
        if found is None:
            if len(self._ids) >= KEPT_WORKLOADS:
                self._forget()
            found = self._ids[workload] = next(self._counter)
        return found


_DESCRIBED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Layout → _Described


def _kept(layout) -> _Described:
    """The layout's kept descriptions (they go when it does)."""
    found = _DESCRIBED.get(layout)
    if found is None:
        found = _DESCRIBED[layout] = _Described()
    return found


def _same_regions(space: Space, C: Cands, within, idx: list[int]) -> dict[int, tuple]:
    """For each candidate of ``idx``, the regions of its configuration at its price on the
    same side of the limits: one option lists them all wherever it is shown (the frontier,
    the spot and on-demand sides and the groups listed one region where the candidates
    listed four). Found among every candidate, not ``C``'s: ``C`` holds the other regions of
    the top plans only, and the on-demand side listed us-east-1 alone beside an
    ``--pricing on_demand`` plan listing the same plan in four regions."""
    import numpy as np

    at = np.array(idx, dtype=np.int64)
    same = space.same_option_cands(C, at)
    found: dict[tuple, set] = {}
    for k, inside, oi in zip(space.option_keys(same).tolist(),
                             (same.within_budget & same.within_quota).tolist(),
                             same.oi.tolist(), strict=True):
        found.setdefault((k, inside), set()).add(space.offers[oi].region)
    return {i: tuple(sorted(found[(k, bool(within[i]))]))
            for i, k in zip(idx, space.option_keys(C, at).tolist(), strict=True)}


def _describe(workload, catalog, c, A, ms, space: Space, C: Cands, idx: list[int],
              regions: dict[int, tuple] | None = None) -> dict[int, Candidate]:
    """Full candidates for ``idx``: the model's estimate, P10/P90 of calendar time (both
    quantiles of every candidate in one call), costs, commitments and warnings; each listing
    ``regions[i]`` (default its own region)."""
    import numpy as np

    if not idx:
        return {}
    t = np.array(idx, dtype=np.int64)
    e = C.e[t]
    gp = space.gp
    prob = space.probability(e)
    meets = space.on_time(e)  # the deadline alone: within_limits says budget and quotas
    # P10 and P90 of each risk row's calendar time: the same for later plans of this workload
    # (kept per layout, as the estimates are); the rows not yet kept in one call
    described = _kept(space.layout)
    w = described.workload_id(workload)  # first: it may start the kept dicts again
    kept = described.quantiles
    new = distinct(np.array([r for r in e.tolist() if (w, r) not in kept], dtype=np.int64))
    if len(new):
        m = len(new)
        q = quantile(np.repeat([0.1, 0.9], m),
                     base_hours=np.tile(gp["checkpointed_hours"][new], 2),
                     loss_hours=np.tile(gp["loss_hours"][new], 2),
                     rate=np.tile(gp["rate"][new], 2), sigma=np.tile(space.e_sigma[new], 2))
        kept.update({(w, int(r)): (float(q[k]), float(q[m + k]))
                     for k, r in enumerate(new.tolist())})
    q10_q90 = np.array([kept[(w, r)] for r in e.tolist()], dtype=np.float64)
    # costs at the expected, P10 and P90 calendar time, every candidate at once
    hours = np.column_stack([C.wall[t], q10_q90[:, 0], q10_q90[:, 1]])
    costs, paid = _costs_at(c, space, C, t, hours)
    # each candidate's figures as Python numbers, read once for all (a numpy scalar per field
    # and candidate was a third of describing a 365-plan frontier; the same values)
    rows = zip(idx, C.oi[t].tolist(), C.ti[t].tolist(), C.j[t].tolist(),
               C.nodes[t].tolist(), C.gpus[t].tolist(), C.wall[t].tolist(),
               (C.within_budget[t] & C.within_quota[t]).tolist(), space.e_rate[e].tolist(),
               space.e_restart[e].tolist(), gp["checkpointed_hours"][e].tolist(),
               gp["loss_hours"][e].tolist(), gp["rate"][e].tolist(), space.e_sigma[e].tolist(),
               hours.tolist(), costs.tolist(), paid.tolist(), prob.tolist(), meets.tolist(),
               strict=True)
    out = {}
    for row in rows:
        r = _Row._make(row)
        out[r.i] = _candidate(workload, (w, described.estimates), catalog, c, A, ms, space, r,
                              regions.get(r.i) if regions else None)
    return out


class _Row(NamedTuple):
    """One described candidate's figures (``_describe``)."""

    i: int
    oi: int
    ti: int
    j: int
    nodes: float
    gpus: float
    wall: float
    within: bool
    spot_rate: float
    restart: float
    base: float  # failure-free calendar hours (``goodput``'s checkpointed hours)
    loss: float
    rate: float  # interruptions per hour
    sigma: float
    hours: list  # expected, P10, P90 calendar hours
    costs: list  # at those hours
    paid: list
    prob: float
    meets: bool


def _costs_at(c, space: Space, C: Cands, t, hours):
    """(cost, paid hours) of candidates ``t`` run for ``hours`` (one row per candidate, a
    column per duration): the rate × nodes × hours, whole terms for a commitment, and the
    checkpoints' storage."""
    oi = C.oi[t][:, None]
    costs, paid = run_cost_usd(wall_hours=hours, nodes=C.nodes[t][:, None],
                               usd_per_hour=space.price[oi], term_hours=space.term[oi],
                               commitment_use=c.commitment_use)
    return costs + storage_usd(hours, checkpoint_bytes=space.ckpt,
                               usd_per_gb_month=c.checkpoint_storage_usd_per_gb_month), paid


def _candidate(workload, kept_as: tuple[int, dict], catalog, c, A, ms, space: Space, r: _Row,
               regions: tuple | None = None) -> Candidate:
    """``kept_as``: (the workload's id, its kept estimates: ``_Described``)."""
    o = space.offers[r.oi]
    q10, q90 = r.hours[1], r.hours[2]
    entry = space.types[r.ti]
    ev = entry.ev
    n = int(r.nodes)
    wall = r.wall
    rate, restart = r.spot_rate, r.restart
    # the search timed every node count from one node's figures and each count's network
    # (``nic_by_nodes``); the description states this cluster's: its inter-node network,
    # NVLink domain and any probe measurement at this node count. Kept per layout (its
    # workload shape, assumptions and calibration): the frontiers of later plans repeat them
    cluster, ci = space.layout.clusters.get((r.ti, n)) or (None, None)
    if cluster is None:
        cluster = cluster_for_instance(catalog, entry.it, n)
        ci = entry.ci if n == 1 else cluster_inputs(cluster, workload, A, entry.calibration,
                                                    memory_gib=entry.it.gpu_memory_gib)
        space.layout.clusters[(r.ti, n)] = (cluster, ci)
    # the estimate is the same for every later plan of this workload (another deadline,
    # budget or quota: the app's reruns, a benchmark's warm calls): kept per layout
    spot = o.pricing == "spot"
    w, kept = kept_as
    key = (w, r.ti, n, r.j, rate, restart, spot, q10, q90)
    est = kept.get(key)
    if est is None:
        est = kept[key] = summarise(
            workload, cluster, ms, A, ci, ev.grid, ev.res, r.j,
            interruption_rate_per_node_hour=rate, restart_minutes=restart,
            measurements=ev.found, wall_range=(q10, q90), calibration=entry.calibration,
            restart_constant="spot_restart_minutes" if spot else "restart_minutes")
    costs, paid = r.costs, r.paid
    stored = (storage_usd(wall, checkpoint_bytes=space.ckpt,
                          usd_per_gb_month=c.checkpoint_storage_usd_per_gb_month)
              if c.checkpoint_storage_usd_per_gb_month is not None else None)
    commitment = None
    if o.term_hours:
        commitment = Commitment(
            term_hours=o.term_hours, terms=int(round(paid[0] / o.term_hours)),
            paid_hours=paid[0], commitment_use=c.commitment_use,
            term_cost_usd=n * o.usd_per_hour * paid[0],
            # the instances' own rate: the run's cost without the checkpoints' storage
            effective_usd_per_hour=(costs[0] - (stored or 0.0)) / (n * wall))
    warnings = list(est.warnings)
    if spot and n > c.max_spot_instances:
        warnings.append(
            f"capacity: {n:,} spot {o.instance_type} in {o.region} for "
            f"{format_hours(wall)} is above the {c.max_spot_instances:,}-instance spot fleet "
            "limit (`max_spot_instances`); clouds publish no spot capacity, so check "
            f"{SPOT_CAPACITY_CHECK.get(o.cloud, 'the cloud spot signals and your quota')} "
            "before counting on it")
    if not o.price_usable:
        why = o.flag_reasons or ", ".join(o.flags)
        warnings.append(f"flagged price used (`allow_flagged`): {why}")
    if commitment and commitment.paid_hours > wall * 1.05:
        warnings.append(
            f"commitment: pays {commitment.terms} × {o.term_hours:,.0f} h per instance for "
            f"a {format_hours(wall)} run (effective "
            f"${commitment.effective_usd_per_hour:,.2f}/instance-h); the "
            f"{commitment.paid_hours - wall:,.0f} h left per instance are charged at "
            f"{1 - c.commitment_use:.0%} (`commitment_use` {c.commitment_use:.0%}: the share "
            "of them you will use afterwards)")
    if r.meets and c.probability_required and r.prob < 0.5:
        # what the user asked (P ≥ 1%) made a plan "meet" a deadline it is likely to miss
        warnings.append(
            f"deadline: this plan finishes by the deadline with probability "
            f"{format_chance(r.prob)}, which meets the {format_requirement(c.min_probability)} "
            f"asked (`min_probability`), but it is more likely to miss it: expected "
            f"{format_hours(wall)} against {format_hours(c.deadline_hours)}; 0.5 or more "
            "asks for a likely finish, 0 for the expected time")
    said = outside_range(wall, q10, q90, loss_hours=r.loss, rate=r.rate)
    if said:
        warnings.append(said)
    dist = {"base_hours": r.base, "loss_hours": r.loss, "rate": r.rate, "sigma": r.sigma,
            "deadline_hours": c.deadline_hours}
    return Candidate(
        offer=o, regions=regions or (o.region,), accelerator=entry.it.accelerator, nodes=n,
        gpus=int(r.gpus), estimate=est, wall_clock_hours=wall,
        wall_clock_hours_p10=q10, wall_clock_hours_p90=q90, cost_usd=costs[0],
        cost_usd_p10=costs[1], cost_usd_p90=costs[2],
        deadline_probability=r.prob, meets_deadline=r.meets, within_limits=r.within,
        expected_interruptions=r.rate * r.base,
        spot_interruptions_per_hour=rate or None, distribution=dist,
        commitment=commitment, warnings=tuple(warnings), checkpoint_storage_usd=stored)


def _points(c, space: Space, C: Cands, within, front_idx, ref_cost) -> tuple[PlanPoint, ...]:
    """The best plan of every (instance type, pricing, node count), cheapest region, within
    4× the best feasible cost (or the cheapest) and 4× the deadline: what a chart can show."""
    import numpy as np

    cost, wall = C.cost, C.wall
    frontier = np.zeros(len(C), dtype=bool)
    frontier[front_idx] = True
    idx = np.flatnonzero(((cost <= 4 * ref_cost) & (wall <= 4 * c.deadline_hours)) | frontier)
    idx = idx[np.lexsort((C.rank_key[idx], cost[idx]))]
    kinds: dict = {}
    kind = np.array([kinds.setdefault((o.cloud, o.instance_type, o.pricing), len(kinds))
                     for o in space.offers], dtype=np.int64)
    key = kind[C.oi[idx]] * (space.max_nodes + 1) + C.nodes[idx].astype(np.int64)
    _, first = np.unique(key, return_index=True)
    idx = idx[np.sort(first)]
    if not idx.size:
        return ()
    prob = space.probability(C.e[idx])
    meets = space.on_time(C.e[idx])  # the deadline alone, as a candidate's
    ranges = [TimeRange.around(float(wall[i]), float(space.e_sigma[C.e[i]])) for i in idx]
    # the cost at P10/P90 hours as a candidate is costed (a reservation pays whole terms: a
    # cost that scaled with the hours showed $505k-$995k for a flat $708,762)
    spread, _ = _costs_at(c, space, C, idx, np.array([[r.p10, r.p90] for r in ranges]))
    out = []
    for k, i in enumerate(idx):
        o = space.offers[C.oi[i]]
        r = ranges[k]
        out.append(PlanPoint(
            cloud=o.cloud, region=o.region, instance_type=o.instance_type,
            accelerator=space.types[C.ti[i]].it.accelerator, pricing=o.pricing,
            nodes=int(C.nodes[i]), gpus=int(C.gpus[i]), wall_clock_hours=float(wall[i]),
            wall_clock_hours_p10=r.p10, wall_clock_hours_p90=r.p90,
            total_cost_usd=float(cost[i]), total_cost_usd_p10=float(spread[k, 0]),
            total_cost_usd_p90=float(spread[k, 1]), deadline_probability=float(prob[k]),
            meets_deadline=bool(meets[k]), within_limits=bool(within[i]),
            on_frontier=bool(frontier[i])))
    return tuple(out)
