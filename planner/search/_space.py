"""The candidates of a plan — every (offer, node count) — and the few that can matter.

A candidate's calendar time, its distribution and so its chance of meeting the deadline depend
on its *risk entry* only: the instance shape's evaluation (``_evaluate``), the node count, the
spot rate and the restart time. An instance type sold in twenty regions at one pricing model
is one risk entry per node count, not twenty. Its cost is n·p·billed(wall) + storage(wall)
(``run_cost_usd``): for offers that share a risk entry, a pricing model, a commitment term, a
cloud and a quota cap — a *cost group* — it grows with the price p and with nothing else.

So within a cost group, at any node count, an offer dearer than the group's cheapest has the
same time, the same chance, the same limits and a higher cost: it can never be Pareto-optimal,
never the first feasible plan of its pricing model, accelerator or cloud, never the fastest,
cheapest or relaxed plan of an infeasible answer. It can only enter the answer through the
cost-ranked lists: the top-N distinct plans (and the regions they list) and, for charts, the
points within 4× the cheapest feasible cost. ``_select`` therefore keeps

    the cheapest offers of every cost group at every node count            (``cheapest``)
  ∪ every feasible candidate whose cost is at most τ                         (``within_cost``)
  ∪ the same configuration in other regions (same price to 1e-4 USD)       (``closure``)
  ∪ with chart points, every candidate up to 4× the cheapest feasible cost

where τ bounds the cost of the N-th distinct feasible plan — found among the cheapest offers
alone, which can only rank it later. Of cheapest offers at exactly the same price only two can
be picked: the first in canonical order (the frontier's tie-break) and the first by offer key
(the ranking's). Every list ``_select`` computes over this subset is the list it would compute
over every candidate (design.md, "The optimizer").

Probabilities are computed per risk entry and only when needed: ranking the cheapest plans
first, a candidate whose failure-free range alone already misses the deadline
(ln(D/B)/σ < z_q, an upper bound of the probability) is rejected without the interruption sum.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog import record

from ..model import goodput_over, normal_quantile, probability_within
from ._candidates import run_cost_usd, storage_usd
from ._layout import PRICE_TIE, _runs

if TYPE_CHECKING:
    import numpy as np

    from ._layout import Layout, _Fixed

Z_MARGIN = 1e-6  # the bound's margin in standard deviations (≫ the A&S error and rounding)
FIRST_CHUNK = 512  # entries whose sums ``max_probability`` computes first (then 4× more)
MERGE_SLICES = 64  # ``_merged`` copies slices up to this many new candidates, then np.insert


@record(kw_only=False)
class Cands:
    """Candidates in canonical order (offer, then node count): what ``build_result`` ranks.

    ``e``: each candidate's risk entry (``Space``); ``j``: its row in the shape evaluation."""

    ids: np.ndarray  # offer index × stride + row: sorted
    oi: np.ndarray
    ti: np.ndarray
    e: np.ndarray
    j: np.ndarray
    nodes: np.ndarray  # float64, as the cost and goodput formulas take them
    gpus: np.ndarray
    cost: np.ndarray
    wall: np.ndarray
    within_budget: np.ndarray
    within_quota: np.ndarray
    rank_key: np.ndarray  # (offer key, nodes): the stable tie-break

    def __len__(self) -> int:
        return len(self.oi)


class Space:
    """One plan's candidates over a ``Layout``: calendar time and cost for its tokens and
    prices, the candidate subsets ``_select`` asks for, probabilities on demand."""

    def __init__(self, layout: Layout, *, workload, A, ckpt, constraints) -> None:
        import numpy as np

        self.layout, self.c, self.ckpt = layout, constraints, ckpt
        for name in ("offers", "types", "offer_type", "price", "term", "caps", "risk",
                     "offset", "e_nodes", "e_gpus", "e_rate", "e_restart", "e_sigma",
                     "n_rows", "stride", "max_nodes", "key_rank", "groups", "pricing",
                     "pricings", "config"):
            setattr(self, name, getattr(layout, name))
        ideal = {}
        for ev in layout.risk_ev:
            if id(ev) not in ideal:
                ideal[id(ev)] = (np.ceil(workload.tokens / ev.tokens_per_step)
                                 * ev.res["step_s"] / 3600)
        e_ideal = np.concatenate([ideal[id(ev)] for ev in layout.risk_ev])
        self.gp = goodput_over(layout.goodput_fixed(ckpt, A), ideal_hours=e_ideal, A=A)
        self.wall = self.gp["wall_hours"]
        # ---- probabilities, computed on demand --------------------------------------------
        self.prob = np.full(len(self.e_nodes), np.nan)
        self.below = np.zeros(len(self.e_nodes), dtype=bool)  # known to miss min_probability
        self.evaluations = 0  # risk entries whose interruption sum was computed

    # ---- candidate subsets ------------------------------------------------------------------
    def _take(self, count, rows) -> np.ndarray:
        """Candidate ids of the ``count[k]`` cheapest offers of (group, row) ``rows[k]``
        (``Layout.gi``/``gj`` indices, ascending)."""
        import numpy as np

        L = self.layout
        count = np.asarray(count, dtype=np.int64)
        oi = L.flat[_runs(L.starts[L.gi[rows]], count)]
        return oi * self.stride + L.gj[np.repeat(rows, count)]

    def option_keys(self, C: Cands, idx: np.ndarray | None = None) -> np.ndarray:
        """Per candidate of ``C`` (of ``idx``, when given), its configuration (``config``: the
        same plan at the same price) and node count as one key: candidates with equal keys
        are one option, listing their regions."""
        import numpy as np

        if idx is None:
            return self.config[C.oi] * (self.max_nodes + 1) + C.nodes.astype(np.int64)
        return self.config[C.oi[idx]] * (self.max_nodes + 1) + C.nodes[idx].astype(np.int64)

    def same_options(self, C: Cands, idx: np.ndarray) -> np.ndarray:
        """Indices into ``C``, ascending, of every candidate with the option key of one of
        ``idx`` (``option_keys``): its configuration's offers (``Layout.config_members``) at
        the same row — one configuration is one instance type, so one evaluation, where a
        row is a node count — found among C's ids, not by comparing every key of C."""
        import numpy as np

        idx = np.asarray(idx, dtype=np.int64)
        if not idx.size:
            return idx
        ids = _unique(self._same_config(self.config[C.oi[idx]], C.j[idx]))
        pos = np.minimum(np.searchsorted(C.ids, ids), len(C) - 1)
        return pos[C.ids[pos] == ids]

    def same_option_cands(self, C: Cands, idx: np.ndarray) -> Cands:
        """Every candidate with the option key of one of ``idx`` (indices into ``C``), priced,
        whether ``C`` holds it or not: ``C`` holds the other regions of the top plans only
        (``closure``), where the frontier, the best per pricing model or group and an
        infeasible answer list every region of their option too."""
        import numpy as np

        idx = np.asarray(idx, dtype=np.int64)
        return self.cands(self._same_config(self.config[C.oi[idx]], C.j[idx]))

    def cheapest(self, *, first_only: bool = False) -> np.ndarray:
        """Ids of every cost group's cheapest offers at every row (``Layout._picked``),
        sorted."""
        return self.layout.cheapest_ids[first_only]

    def within_cost(self, tau: float, *, cheapest: Cands, feasible: bool = False
                    ) -> np.ndarray:
        """Ids of every candidate whose cost is at most ``tau`` (and a few just above);
        ``feasible``: only those within the quotas and on time (the ranked lists' pool).
        ``cheapest``: the candidates of ``cheapest()``, whose costs rule out at once every
        (group, row) whose cheapest offer costs more than τ (most of them: the work then
        follows the few rows left, not the node counts — issue #19)."""
        import numpy as np

        if not tau >= 0:
            return np.empty(0, dtype=np.int64)
        L = self.layout
        # a superset of the rows the exact test below keeps: its margin ≫ rounding; NaN costs
        # stay (the exact test keeps them too)
        rows = np.flatnonzero(~(cheapest.cost[L.first_pos] > tau * (1 + 1e-6) + 1e-9))
        gi, j, first = L.gi[rows], L.gj[rows], L.gfirst[rows]
        e = self.offset[self.risk[first]] + j
        unit, _ = run_cost_usd(wall_hours=self.wall[e], nodes=self.e_nodes[e].astype(float),
                               usd_per_hour=1.0, term_hours=self.term[first],
                               commitment_use=self.c.commitment_use)
        room = tau - self._storage(self.wall[e])
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(room >= 0, room / unit, -1.0) * (1 + PRICE_TIE) + 1e-300
        count = np.empty(len(rows), dtype=np.int64)
        # rows of a group are contiguous (``Layout.gi``): one search per group present
        starts = np.flatnonzero(np.r_[True, gi[1:] != gi[:-1]]) if len(rows) else rows
        for start, stop in zip(starts.tolist(), [*starts[1:].tolist(), len(rows)],
                               strict=True):
            g = self.groups[int(gi[start])]
            count[start:stop] = np.searchsorted(self.price[g], limit[start:stop], side="right")
        if feasible:
            keep = np.flatnonzero(count)
            if self.caps is not None:
                keep = keep[self.e_gpus[e[keep]] <= self.caps[first[keep]]]
            ok = np.zeros(len(rows), dtype=bool)
            ok[keep[self.on_time(e[keep])]] = True
            count[~ok] = 0
        return self._take(count, rows)

    def closure(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` and the same configuration (other regions) at the same node count."""
        import numpy as np

        L = self.layout
        oi, j = ids // self.stride, ids % self.stride
        multi = L.config_size[self.config[oi]] > 1
        if not multi.any():
            return ids
        extra = self._same_config(self.config[oi[multi]], j[multi])
        return _unique(np.concatenate([ids, extra]))

    def _same_config(self, cfg: np.ndarray, j: np.ndarray) -> np.ndarray:
        """Candidate ids of every offer of configuration ``cfg[k]`` at row ``j[k]``, for
        every k (``Layout.config_members``: its regions)."""
        import numpy as np

        L = self.layout
        m = L.config_size[cfg]
        return (L.config_members[_runs(L.config_start[cfg], m)] * self.stride
                + np.repeat(j, m))

    def extended(self, F: Cands, ids: np.ndarray) -> tuple[Cands, np.ndarray]:
        """``F`` (the candidates of ``cheapest()``) and ``ids`` as one ``Cands`` in canonical
        order (F's figures reused, not recomputed: every figure is elementwise, so the same
        floats), and the ids that were not in ``F``."""
        extra = _missing_from(F.ids, _unique(ids))
        return _merged(F, self.cands(extra)), extra

    def frontier_pool(self, F: Cands, C: Cands, extra: np.ndarray) -> np.ndarray:
        """Indices into ``C`` (``extended(F, …)``) of the frontier's pool — the first of the
        cheapest offers of each group and row (``cheapest(first_only=True)``) — whose risk row
        is faster than every row with fewer nodes of its risk entry, ascending. A row as slow as
        one with fewer nodes is never on the frontier: the same offer there costs less (n·p·
        billed(wall) and the storage grow with n and with the wall), is as fast, comes first
        in canonical order and is within the limits whenever it is. At 16,384 GPUs for a 7B
        model 18% of the rows are left (issue #19)."""
        import numpy as np

        L = self.layout
        # one running minimum over every entry: entry k's times shifted down by k·big, big
        # above any time, so no entry sees an earlier one's. Rounding is monotone, so "≤ the
        # minimum before" keeps every row that is truly faster (and a few that tie it after
        # rounding: a superset, which changes nothing); a time that is not finite (never on
        # the frontier) is +inf and hides nothing
        finite = np.isfinite(self.wall)
        big = 2 * float(self.wall[finite].max(initial=0.0)) + 1.0
        v = np.where(finite, self.wall, np.inf) - L.e_entry * big
        before = np.minimum.accumulate(v)
        fast = np.empty(len(v), dtype=bool)
        fast[1:] = v[1:] <= before[:-1]
        fast[L.offset] = True  # each entry's first row
        pos = L.front_in_cheapest[fast[L.front_e]]
        if extra.size:  # F's candidate p is C's p + (extra ids before it)
            pos = pos + np.searchsorted(extra, F.ids[pos])
        return pos[C.within_budget[pos] & C.within_quota[pos]]

    def cands(self, ids: np.ndarray) -> Cands:
        """The candidates ``ids`` (deduplicated, in canonical order) with cost and limits."""
        return self._priced(self.layout.fixed(_unique(ids)))

    def cheapest_cands(self) -> Cands:
        """The candidates of ``cheapest()``: ``cands(cheapest())`` from the layout's kept
        figures."""
        return self._priced(self.layout.cheapest_fixed)

    def _priced(self, f: _Fixed) -> Cands:
        import numpy as np

        wall = self.wall[f.e]
        cost, _ = run_cost_usd(wall_hours=wall, nodes=f.nodes, usd_per_hour=f.price,
                               term_hours=f.term, commitment_use=self.c.commitment_use)
        cost = cost + self._storage(wall)
        c = self.c
        within_budget = cost <= c.budget_usd if c.budget_usd is not None else \
            np.ones(len(f.ids), bool)
        return Cands(ids=f.ids, oi=f.oi, ti=f.ti, e=f.e, j=f.j, nodes=f.nodes, gpus=f.gpus,
                     cost=cost, wall=wall, within_budget=within_budget,
                     within_quota=f.within_quota, rank_key=f.rank_key)

    def _storage(self, hours):
        return storage_usd(hours, checkpoint_bytes=self.ckpt,
                           usd_per_gb_month=self.c.checkpoint_storage_usd_per_gb_month)

    # ---- probabilities ------------------------------------------------------------------
    def probability(self, e: np.ndarray) -> np.ndarray:
        """P(finish by the deadline) of risk entries ``e``, the interruption sum computed once
        per entry (elementwise, so the same figures whichever entries are asked together)."""
        import numpy as np

        e = np.asarray(e, dtype=np.int64)
        todo = _unique(e[np.isnan(self.prob[e])])
        if todo.size:
            gp = self.gp
            self.prob[todo] = probability_within(
                self.c.deadline_hours, base_hours=gp["checkpointed_hours"][todo],
                loss_hours=gp["loss_hours"][todo], rate=gp["rate"][todo],
                sigma=self.e_sigma[todo])
            self.evaluations += int(todo.size)
        return self.prob[e]

    def on_time(self, e: np.ndarray) -> np.ndarray:
        """Whether risk entries ``e`` meet the deadline (min_probability, or the expected
        calendar time when it is 0); the bound settles most misses without the sum."""
        import numpy as np

        c = self.c
        e = np.asarray(e, dtype=np.int64)
        if not c.probability_required:
            return self.wall[e] <= c.deadline_hours
        unknown = e[np.isnan(self.prob[e]) & ~self.below[e]]
        if unknown.size:
            self.below[unknown[self._misses(unknown)]] = True
            rest = unknown[~self.below[unknown]]
            if rest.size:
                self.probability(rest)
        out = np.zeros(len(e), dtype=bool)
        known = ~self.below[e]
        out[known] = self.prob[e[known]] >= c.min_probability
        return out

    def max_probability(self) -> float:
        """The highest P(finish by the deadline) of any candidate. The run without
        interruptions, P(B·X ≤ D) ≥ P, orders the entries: their sums are computed from the
        likeliest down until that bound falls below the best sum found."""
        import numpy as np

        B, s = self.gp["checkpointed_hours"], self.e_sigma
        D = self.c.deadline_hours
        with np.errstate(divide="ignore"):
            z = np.where(s > 0, np.log(D / B) / np.where(s > 0, s, 1.0),
                         np.where(D >= B, np.inf, -np.inf))
        order = np.argsort(-z, kind="stable")
        best, start, size = -math.inf, 0, FIRST_CHUNK
        while start < len(order):
            chunk = order[start:start + size]
            best = max(best, float(self.probability(chunk).max()))
            start, size = start + size, size * 4
            if start < len(order):
                nxt = order[start:start + 1]
                bound = float(probability_within(D, base_hours=B[nxt], loss_hours=0.0,
                                                 rate=0.0, sigma=s[nxt])[0])
                if bound + 1e-12 < best:
                    break
        return best

    def _misses(self, e: np.ndarray) -> np.ndarray:
        """True where P(B·X ≤ D) — the run without interruptions, an upper bound of the
        probability — is certainly below min_probability: ln(D/B)/σ < z_q − margin."""
        import numpy as np

        B = self.gp["checkpointed_hours"][e]
        s = self.e_sigma[e]
        D = self.c.deadline_hours
        if self.c.min_probability >= 1:  # P = 1 exactly can still qualify: no bound
            return np.zeros(len(e), dtype=bool)
        zq = normal_quantile(float(self.c.min_probability))
        with np.errstate(divide="ignore"):
            z = np.log(D / B) / np.where(s > 0, s, 1.0)
        return np.where(s > 0, z < zq - Z_MARGIN, D < B * (1 - 1e-12))


def _missing_from(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The ``ids`` not in ``sorted_ids`` (sorted, distinct)."""
    import numpy as np

    if not sorted_ids.size:
        return ids
    pos = np.minimum(np.searchsorted(sorted_ids, ids), sorted_ids.size - 1)
    return ids[sorted_ids[pos] != ids]


def _merged(a: Cands, b: Cands) -> Cands:
    """``a`` and ``b`` (no id in both) as one ``Cands`` in canonical (id) order."""
    from dataclasses import fields

    import numpy as np

    if not len(b):
        return a
    at = np.searchsorted(a.ids, b.ids)
    if len(b) > MERGE_SLICES:
        return Cands(**{f.name: np.insert(getattr(a, f.name), at, getattr(b, f.name))
                        for f in fields(Cands)})
    # a few new candidates (the usual case): np.insert's result by slices, one copy a field
    cuts = [0, *at.tolist(), len(a)]

    def merged(x, y):
        parts = []
        for k in range(len(y)):
            parts += (x[cuts[k]:cuts[k + 1]], y[k:k + 1])
        parts.append(x[cuts[-2]:])
        return np.concatenate(parts)

    return Cands(**{f.name: merged(getattr(a, f.name), getattr(b, f.name))
                    for f in fields(Cands)})


def _unique(ids: np.ndarray) -> np.ndarray:
    """Sorted distinct ids (a sort: numpy's hashing unique is slower on these arrays)."""
    import numpy as np

    ids = np.sort(ids, kind="stable")  # timsort: the ids come in long sorted runs
    return ids[np.r_[True, ids[1:] != ids[:-1]]] if ids.size else ids
