"""Which candidates a plan's answer shows, before any is described (``_result``).

The rules (unchanged by the speed work of issue #19): feasible = within budget and quotas and
on time; ranked by (cost, wall, (offer key, nodes)); identical configurations at the same price
(to 1e-4 USD) in several regions are one option listing every region; the frontier is the
Pareto set of (cost, wall) over every candidate within budget and quotas (a later point must be
faster by more than 1e-12 h); the best per pricing model, accelerator or cloud is its first
feasible plan; an infeasible answer names the fastest and cheapest plans and the cheapest plan
without each limit.

They are evaluated on a subset of the candidates (``_space``): the cheapest offers of every
cost group at every node count, every candidate up to a cost τ that bounds the N-th distinct
feasible plan (and, for charts, 4× the cheapest feasible cost), and their other regions — a
subset on which each list is provably the one all candidates give. Ranking reads the
candidates cheapest first, a growing chunk at a time, so probabilities are computed only for
the prefix a list needs.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog import record

from ..model import (
    distinct,
    format_chance,
    format_hours,
    format_requirement,
    format_usd,
    format_usd_at_least,
)

if TYPE_CHECKING:
    import numpy as np

    from ._space import Cands, Space

FIRST_CHUNK = 512  # candidates ranked at a time (each later chunk 4× larger)
SCREEN_ABOVE = 4096  # the frontier of more points than this is screened first (``_screen``)
SCREEN_STEP = 32  # … by the front of every 32nd point


def _in_order(C: Cands, idx: np.ndarray):
    """``idx`` in (cost, wall, rank key) order, a growing chunk at a time: a scan that stops
    early sorts only the prefix it read (every cost in a chunk is below the next chunk's)."""
    import numpy as np

    rest, k = idx, FIRST_CHUNK
    while rest.size:
        if rest.size > k:
            cut = np.partition(C.cost[rest], k - 1)[k - 1]
            take = C.cost[rest] <= cut
            if not take.any():  # NaN costs (none are expected) sort last, as in lexsort
                take = np.ones(rest.size, dtype=bool)
        else:
            take = np.ones(rest.size, dtype=bool)
        chunk, rest = rest[take], rest[~take]
        yield chunk[np.lexsort((C.rank_key[chunk], C.wall[chunk], C.cost[chunk]))]
        k *= 4


def _first(space: Space, C: Cands, idx: np.ndarray, *, on_time: bool = True) -> int | None:
    """The first of ``idx`` in rank order that is on time (or the first at all)."""
    import numpy as np

    for chunk in _in_order(C, idx):
        hit = np.flatnonzero(space.on_time(C.e[chunk])) if on_time else np.arange(1)
        if hit.size:
            return int(chunk[hit[0]])
    return None


def _firsts(space: Space, C: Cands, within_idx: np.ndarray, ranked: np.ndarray,
            label: np.ndarray, names) -> dict:
    """name → the first feasible candidate whose ``label`` (per candidate of ``C``) is that
    name's index. ``ranked`` is a prefix of every feasible candidate in rank order, so a name
    found there needs no scan; the others are ranked among their own candidates (``_first``)."""
    found = {}
    for i in ranked.tolist():
        found.setdefault(int(label[i]), i)
    out = {}
    for k, name in enumerate(names):
        first = found[k] if k in found else _first(space, C, within_idx[label[within_idx] == k])
        if first is not None:
            out[name] = first
    return out


def _pareto(cost: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-optimal points (minimise both; a later point must be faster by
    more than 1e-12), sorted by cost, then wall, then index: ``_pareto_walk`` over the points
    ``_screen`` leaves (all of them when there are few)."""
    import numpy as np

    if len(cost) <= SCREEN_ABOVE:
        return _pareto_walk(cost, wall)
    idx = np.flatnonzero(_screen(cost, wall))
    return idx[_pareto_walk(cost[idx], wall[idx])]


def _screen(cost: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """False for points the walk can never keep, found without sorting them all: the front
    of every SCREEN_STEP-th point, then each point that a front point is strictly cheaper
    than (in the walk's order: NaN last) and no slower than. Why such a point p is never kept:
    when the walk reaches it, the front point s came before; s was kept, or the wall kept then
    was at most wall_s + 1e-12, and kept walls only fall — so p, no faster than s, is not
    faster than the kept wall by 1e-12. Dropping points the walk does not keep changes nothing
    it keeps (tests/planner/test_search_kernels.py compares both)."""
    import numpy as np

    sample = np.arange(0, len(cost), SCREEN_STEP)
    front = sample[_pareto_walk(cost[sample], wall[sample])]
    if not front.size:  # e.g. no sampled time is a number: nothing to screen by
        return np.ones(len(cost), dtype=bool)
    # front costs strictly rise (an equal cost, sorted after, is never faster) and walls fall:
    # the dearest front point cheaper than p is the fastest of those cheaper than p
    j = np.searchsorted(cost[front], cost, side="left") - 1
    return ~((j >= 0) & (wall[front][np.maximum(j, 0)] <= wall))


def _pareto_walk(cost: np.ndarray, wall: np.ndarray) -> np.ndarray:
    """``_pareto`` over every point: sorted by (cost, wall, index), a point is kept when it is
    faster than the last kept by more than 1e-12. Only a point faster than every point before
    it can be kept (the kept wall is never more than 1e-12 above that running minimum), so the
    walk visits those only."""
    import numpy as np

    order = np.argsort(cost)
    c = cost[order]
    tied = np.zeros(len(c), dtype=bool)
    tied[:-1] = c[1:] == c[:-1]
    tied[1:] |= tied[:-1].copy()
    if tied.any():  # equal costs: by wall, then index, exactly as a lexsort would
        pos = np.flatnonzero(tied)
        sub = order[pos]
        order[pos] = sub[np.lexsort((sub, wall[sub], cost[sub]))]
    w = wall[order]
    running = np.minimum.accumulate(w)
    new = np.flatnonzero(w < np.r_[math.inf, running[:-1]])
    best_wall = math.inf
    keep = []
    for i in order[new]:
        if wall[i] < best_wall - 1e-12:
            keep.append(i)
            best_wall = wall[i]
    return np.array(keep, dtype=np.int64)


def _distinct(space: Space, C: Cands, order: np.ndarray, members: np.ndarray | None = None,
              limit: int | None = None) -> list[tuple[int, tuple]]:
    """Identical configurations at the same price in several regions → one entry (the first in
    ``order``) listing the regions of every entry of ``members`` (default: ``order``) with
    that configuration; the first ``limit`` entries."""
    import numpy as np

    if order.size == 0:
        return []
    key = space.option_keys(C, order)
    _, first = np.unique(key, return_index=True)
    heads = np.sort(first)[:limit]
    pool = order if members is None else members
    regions: dict[int, set] = {}
    for k, oi in zip((key if members is None else space.option_keys(C, pool)).tolist(),
                     C.oi[pool].tolist(), strict=True):
        regions.setdefault(k, set()).add(space.offers[oi].region)
    key = key.tolist()
    return [(int(order[h]), tuple(sorted(regions.get(key[h], ())))) for h in heads.tolist()]


@record
class Selection:
    """Indices into ``C`` of what the answer shows, with the regions each option lists."""

    C: Cands
    top: list  # (index, regions) of the top-N distinct feasible configurations
    frontier: list  # (index, regions), by cost
    front_idx: np.ndarray
    side: dict  # pricing model → index of its first feasible plan
    by_group: dict  # accelerator or cloud → index
    infeasible: dict | None  # _infeasible_plan
    within: np.ndarray
    ref_cost: float  # the cheapest feasible cost (or the cheapest cost): charts' reference
    space: Space

    def meets(self, i: int) -> bool:
        """Whether candidate ``i`` is feasible (within the limits and on time)."""
        return bool(self.within[i] and self.space.on_time(self.C.e[i:i + 1])[0])


def select(*, constraints, space: Space, top_n: int, points: bool) -> Selection:
    """What the answer shows (module docstring), as indices into the kept candidates."""
    import numpy as np

    c = constraints
    # ---- the cheapest offer of every cost group at every node count ---------------------
    F = space.cheapest_cands()
    within_F = np.flatnonzero(F.within_budget & F.within_quota)
    # the N-th distinct feasible configuration among them bounds the true N-th one's cost
    tau, ref_cost = -math.inf, None
    seen: set = set()
    for chunk in _in_order(F, within_F):
        ok = chunk[space.on_time(F.e[chunk])]
        if ok.size and ref_cost is None:
            ref_cost = float(F.cost[ok[0]])
        for i in ok:
            seen.add((int(space.config[F.oi[i]]), int(F.j[i])))
            if len(seen) == top_n:
                tau = float(F.cost[i])
                break
        if len(seen) >= top_n:
            break
    else:
        tau = math.inf if ref_cost is not None else -math.inf
    if ref_cost is None:
        ref_cost = float(F.cost.min())
    if c.budget_usd is not None:
        tau = min(tau, c.budget_usd)  # above the budget nothing is feasible
    parts = [space.closure(space.within_cost(tau, feasible=True, cheapest=F))]
    if points:
        parts.append(space.within_cost(4 * ref_cost, cheapest=F))
    C, extra = space.extended(F, np.concatenate(parts))  # F is every cheapest offer
    # ---- over the kept candidates: exactly the lists of all candidates -------------------
    cost, wall = C.cost, C.wall
    within = C.within_budget & C.within_quota
    within_idx = np.flatnonzero(within)
    by_time = wall <= c.deadline_hours
    ranked = []  # feasible, in rank order, up to the N-th distinct configuration
    keys_seen: set = set()
    for chunk in _in_order(C, within_idx):
        ok = chunk[space.on_time(C.e[chunk])]
        for i in ok:
            keys_seen.add((int(space.config[C.oi[i]]), int(C.j[i])))
            if len(keys_seen) > top_n:
                break
            ranked.append(int(i))
        if len(keys_seen) > top_n:
            break
    ranked = np.array(ranked, dtype=np.int64)
    # every feasible region of those configurations, wherever it ranks
    same = space.same_options(C, ranked)
    same = same[within[same]]
    same = same[space.on_time(C.e[same])] if same.size else same
    top_items = _distinct(space, C, ranked, members=same, limit=top_n)
    # the frontier: among the cheapest offers (the first of equal prices: the others tie it
    # and come later), within the limits, at rows faster than fewer nodes — no other
    # candidate can be on it (``_space``)
    pool = space.frontier_pool(F, C, extra)
    front_idx = pool[_pareto(cost[pool], wall[pool])] if pool.size else \
        np.array([], dtype=np.int64)
    front_items = _distinct(space, C, front_idx)
    side_idx = _firsts(space, C, within_idx, ranked, space.pricing[C.oi], space.pricings)
    group_idx = {}
    if c.group_by:
        names = sorted({t.it.accelerator if c.group_by == "accelerator" else t.it.cloud
                        for t in space.types})
        label = np.array([names.index(t.it.accelerator if c.group_by == "accelerator"
                                      else t.it.cloud) for t in space.types], dtype=np.int64)
        group_idx = _firsts(space, C, within_idx, ranked, label[C.ti], names)
    infeasible_plan = None
    if ranked.size == 0:
        infeasible_plan = _infeasible_plan(c, space, C, within, by_time)
    return Selection(C=C, top=top_items, frontier=front_items, front_idx=front_idx,
                     side=side_idx, by_group=group_idx, infeasible=infeasible_plan,
                     within=within, ref_cost=ref_cost, space=space)


def _best(p: float, below: float | None = None) -> str:
    """The best probability to one decimal, unless that reads 0.0% (or 100.0%) for a chance
    that is not, or reads ``below``, a minimum it misses: then as ``format_chance`` says it
    ("< 0.01%", beside a card saying so; 0.8996 against 90% "89.96%": "(best 90.0%)" beside
    "probability ≥ 90%" read as met; compared in percent, rounded: 89.6 / 100 is below 0.896)."""
    text = f"{p:.1%}"
    if (text in ("0.0%", "100.0%") and 0 < p < 1) or (
            below is not None and p < below and float(text[:-1]) >= round(below * 100, 9)):
        return format_chance(p, below=below)
    return text


def _usd_need(need: float, have: float) -> tuple[str, str]:
    """(budget, need) as the reason shows them: ``format_usd``'s, unless both read the same
    ("$25,381 (cheapest in time $25,381)" for $25,381.04): then cents, the need rounded up (it
    read "$25,381.04" for $25,381.0407, the budget itself) and the budget with the decimals
    that tell them apart. ``_plan_view._budget_to`` asks for the same figure."""
    if format_usd(need) != format_usd(have):
        return format_usd(have), format_usd(need)
    up = format_usd_at_least(need, cents=True)
    shown = f"${have:,.2f}"
    return (shown if shown != up else f"${have:,.6f}".rstrip("0")), up


def _binding_rules(c, space: Space, C: Cands, i: int | None) -> str:
    """" (quotas[2]: 8 GPUs of aws H100-SXM5-80GB; the cheapest plan in time needs 32)": the
    rules that keep out candidate ``i``, the cheapest in time without quotas ("" without
    one). The reason said "the quotas" and left the user to find which."""
    if i is None:
        return ""
    o = space.offers[C.oi[i]]
    accelerator = space.types[C.ti[i]].it.accelerator
    gpus = int(C.gpus[i])
    rules = [f"quotas[{k}]: {r.gpus:,} GPUs of "
             + (" ".join(x for x in (r.cloud, r.region, r.accelerator) if x) or "every offer")
             for k, r in enumerate(c.quotas.rules, start=1)
             if r.month is None and r.matches(o.cloud, o.region, accelerator) and r.gpus < gpus]
    return (f" ({'; '.join(rules)}; the cheapest plan in time needs {gpus:,})" if rules
            else "")


def _names(limits: list[str]) -> str:
    return " and ".join("the budget" if k == "budget" else "the quotas" for k in limits)


def _infeasible_plan(c, space: Space, C: Cands, within, by_time) -> dict:
    """Nothing is feasible: the fastest and cheapest candidates, the cheapest plan without
    each limit and why (indices into ``C``; described by the caller)."""
    import numpy as np

    cost, wall, rank = C.cost, C.wall, C.rank_key
    pool = np.flatnonzero(within) if within.any() else np.arange(len(C))
    fastest = int(pool[np.lexsort((rank[pool], cost[pool], wall[pool]))[0]])
    cheapest = int(pool[np.lexsort((rank[pool], wall[pool], cost[pool]))[0]])
    masks = {}
    if c.budget_usd is not None:
        masks["budget"] = ("on_time", C.within_quota)
    if c.probability_required:
        masks["min_probability"] = ("by_time", within)
    if space.caps is not None:
        masks["quotas"] = ("on_time", C.within_budget)
    relaxed = {}
    for limit, (kind, mask) in masks.items():
        idx = np.flatnonzero(mask & by_time) if kind == "by_time" else np.flatnonzero(mask)
        best = _first(space, C, idx, on_time=kind == "on_time")
        if best is not None:
            relaxed[limit] = best
    any_on_time = _first(space, C, np.arange(len(C))) is not None
    if not any_on_time:
        binding = ("deadline",)
        if c.probability_required and by_time.any():
            binding = ("min_probability",)
        # the figures of the plans within the limits, as the fastest block shows them; a
        # budget or quota that keeps out faster plans binds too (the reason quoted a 23 h plan
        # costing 10x the budget beside a fastest block of 52 h)
        limits = [k for k in masks if k != "min_probability"]
        limited = bool(limits) and within.any() and wall[fastest] > wall.min() * (1 + 1e-9)
        # a budget or quota that no plan fits at any duration binds too: without this the
        # reason and its "To fix" named only the probability beside a $1,000 budget
        alone = {"budget": C.within_budget, "quotas": C.within_quota}
        shut = [k for k in limits if not alone[k].any()] or (limits if not within.any()
                                                             else [])
        binding = (*binding, *(limits if limited else shut))
        best_p = (float(space.probability(distinct(C.e[pool])).max()) if within.any()
                  else space.max_probability())
        names = _names(limits)
        reason = (f"no candidate finishes within {format_hours(c.deadline_hours)}"
                  + (f" with probability ≥ {format_requirement(c.min_probability)} (best "
                     f"{_best(best_p, c.min_probability)})" if c.probability_required else "")
                  + f"; the fastest takes {format_hours(wall[fastest])}"
                  + (f" within {names} ({format_hours(wall.min())} without)" if limited
                     else "")
                  + (f"; no plan at any duration is within {_names(shut)}"
                     + (f" (the cheapest costs {format_usd(cost.min())})" if shut == ["budget"]
                        else "") if shut else ""))
    else:
        binding = tuple(relaxed) or tuple(masks)
        parts = []
        if "budget" in masks:
            ok = relaxed.get("budget")
            have, need = (format_usd(c.budget_usd), None) if ok is None else \
                _usd_need(float(cost[ok]), c.budget_usd)
            parts.append(f"the budget {have}"
                         + (f" (cheapest in time {need})" if need is not None else ""))
        if "quotas" in masks:
            parts.append("the quotas" + _binding_rules(c, space, C, relaxed.get("quotas")))
        reason = "no candidate meets the deadline within " + (" and ".join(parts) or
                                                              "the limits")
    return {"reason": reason, "binding": binding, "fastest": fastest, "cheapest": cheapest,
            "relaxed": relaxed}
