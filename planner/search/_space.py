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
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import goodput_arrays, normal_quantile, probability_within
from ._candidates import run_cost_usd, storage_usd

if TYPE_CHECKING:
    import numpy as np

    from catalog import InstanceType

    from ..model import Calibration, ClusterInputs
    from ._evaluate import ShapeEvaluation

PRICE_TIE = 1e-9  # prices within this relative distance of a group's cheapest are kept too
Z_MARGIN = 1e-6  # the bound's margin in standard deviations (≫ the A&S error and rounding)
FIRST_CHUNK = 512  # entries whose sums ``max_probability`` computes first (then 4× more)


@dataclass(frozen=True, slots=True, kw_only=True)
class TypeEntry:
    """An instance type with usable offers: its figures (one node's) and its shape's
    evaluation; ``calibration`` gives a described candidate its own cluster's figures."""

    it: InstanceType
    ci: ClusterInputs
    ev: ShapeEvaluation
    calibration: Calibration


@dataclass(frozen=True, slots=True)
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


class Layout:
    """The part of a plan's candidate space that tokens, deadline and budget do not change:
    risk entries, cost groups (offers sorted by price), configurations, the tie-break order
    and the cheapest offers of every group. Kept across calls for the same offers, instance
    shapes, assumptions and quotas (team jobs, repeated plans)."""

    def __init__(self, *, offers, keys, types, offer_type, rate, restart, caps) -> None:
        import numpy as np

        self.offers, self.types = offers, types
        self.offer_type = np.asarray(offer_type, dtype=np.int64)
        self.price = np.array([o.usd_per_hour for o in offers], dtype=np.float64)
        self.term = np.array([o.term_hours if o.term_hours else np.nan for o in offers],
                             dtype=np.float64)
        self.caps = caps  # GPUs per offer (inf: no quota), or None without quotas
        # ---- risk entries: (shape evaluation, spot rate, restart) × node count -------------
        risk_of, risk_keys = [], {}
        for k in range(len(offers)):
            key = (id(types[self.offer_type[k]].ev), rate[k], restart[k])
            if key not in risk_keys:
                risk_keys[key] = (len(risk_keys), k)
            risk_of.append(risk_keys[key][0])
        self.risk = np.array(risk_of, dtype=np.int64)
        self.risk_ev = [types[self.offer_type[k]].ev for _r, k in risk_keys.values()]
        parts = []
        for _r, k in risk_keys.values():
            ev = types[self.offer_type[k]].ev
            n = len(ev.nodes)
            parts.append((ev.nodes, ev.nodes * types[self.offer_type[k]].it.gpu_count,
                          np.full(n, rate[k], dtype=np.float64),
                          np.full(n, restart[k], dtype=np.float64), ev.sigma))
        sizes = np.array([len(p[0]) for p in parts], dtype=np.int64)
        self.offset = np.r_[0, np.cumsum(sizes)][:-1]
        self.e_nodes, self.e_gpus, self.e_rate, self.e_restart, self.e_sigma = (
            np.concatenate([p[i] for p in parts]) for i in range(5))
        self.n_rows = sizes[self.risk]  # per offer: its node counts
        self.stride = int(sizes.max()) + 1
        self.max_nodes = int(self.e_nodes.max())
        # ---- the stable tie-break: (offer key, nodes) --------------------------------------
        self.key_rank = np.empty(len(offers), dtype=np.int64)
        self.key_rank[sorted(range(len(offers)), key=keys.__getitem__)] = \
            np.arange(len(offers))
        # ---- cost groups: offers sorted by price within each --------------------------------
        groups: dict = {}
        for k, o in enumerate(offers):
            cap = None if caps is None else float(caps[k])
            term = None if math.isnan(self.term[k]) else float(self.term[k])
            groups.setdefault((int(self.risk[k]), o.pricing, o.cloud, term, cap), []).append(k)
        self.groups = [np.array(sorted(g, key=lambda k: (self.price[k], k)), dtype=np.int64)
                       for g in groups.values()]
        self.flat = np.concatenate(self.groups)
        self.starts = np.r_[0, np.cumsum([len(g) for g in self.groups])][:-1]
        g_sizes = np.array([self.n_rows[g[0]] for g in self.groups], dtype=np.int64)
        self.gi = np.repeat(np.arange(len(self.groups)), g_sizes)
        self.gj = np.arange(len(self.gi)) - np.repeat(np.r_[0, np.cumsum(g_sizes)][:-1],
                                                      g_sizes)
        self.gfirst = np.array([g[0] for g in self.groups], dtype=np.int64)[self.gi]
        kinds: dict = {}
        self.pricing = np.array([kinds.setdefault(o.pricing, len(kinds)) for o in offers],
                                dtype=np.int64)
        self.pricings = tuple(kinds)  # in the order offers list them
        # ---- configurations: the same plan at the same price in several regions -------------
        # (and the same spot interruption rate and restart: regions that differ there differ
        # in hours and cost, and one candidate listing both showed the first's figures)
        configs: dict = {}
        self.config = np.array([configs.setdefault(
            (o.cloud, o.instance_type, o.pricing, round(o.usd_per_hour, 4), o.offering_class,
             o.upfront, float(rate[i]), float(restart[i])), len(configs))
            for i, o in enumerate(offers)], dtype=np.int64)
        self.config_size = np.bincount(self.config)
        self.config_members = np.argsort(self.config, kind="stable")
        self.config_start = np.r_[0, np.cumsum(self.config_size)][:-1]
        # sorted once here (a layout serves many calls), so ``cands`` need not sort them; each
        # picked offer's rows are one ascending run, which timsort merges (0.1 ms where
        # quicksort took 6.6 ms for 165k ids: 16,384 GPUs, every new process)
        self.cheapest_ids = {first: np.sort(self._cheapest(first), kind="stable")
                             for first in (False, True)}
        self.clusters: dict = {}  # (type, nodes) → (Cluster, ClusterInputs) described (_result)
        for value in (*vars(self).values(), *self.groups):  # shared between calls: read-only
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def _cheapest(self, first_only: bool):
        """Ids of every group's cheapest offers (prices within PRICE_TIE) at every row. Of
        offers with exactly the same price (same time, cost and limits), only those a list
        can pick: the first in canonical order (the frontier's tie-break) and the first in
        key order (the ranking's); ``first_only``: the first in canonical order alone."""
        import numpy as np

        picks = []
        for g in self.groups:
            p = self.price[g]
            head = g[:np.searchsorted(p, p[0] * (1 + PRICE_TIE), side="right")]
            if len(head) == 1:  # most groups: one cheapest offer, kept by both orders
                picks.append(head)
                continue
            q = self.price[head]
            run = np.r_[0, np.cumsum(q[1:] != q[:-1])]  # exact-price runs (sorted by price)
            keep = np.r_[True, run[1:] != run[:-1]]
            if not first_only:
                order = np.lexsort((self.key_rank[head], run))  # by run, then key rank
                ranked = run[order]
                keep[order[np.r_[True, ranked[1:] != ranked[:-1]]]] = True
            picks.append(head[keep])
        count = np.array([len(h) for h in picks], dtype=np.int64)[self.gi]
        flat = np.concatenate(picks)
        starts = np.r_[0, np.cumsum([len(h) for h in picks])][:-1]
        pick = np.repeat(np.arange(len(count)), count)
        rank = np.arange(int(count.sum())) - np.repeat(np.r_[0, np.cumsum(count)][:-1], count)
        out = flat[starts[self.gi[pick]] + rank] * self.stride + self.gj[pick]
        out.flags.writeable = False
        return out


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
        self.gp = goodput_arrays(ideal_hours=e_ideal, gpus=self.e_gpus.astype(np.float64),
                                 nodes=self.e_nodes.astype(np.float64), checkpoint_bytes=ckpt,
                                 A=A, interruption_rate_per_node_hour=self.e_rate,
                                 restart_minutes=self.e_restart)
        self.wall = self.gp["wall_hours"]
        # ---- probabilities, computed on demand --------------------------------------------
        self.prob = np.full(len(self.e_nodes), np.nan)
        self.below = np.zeros(len(self.e_nodes), dtype=bool)  # known to miss min_probability
        self.evaluations = 0  # risk entries whose interruption sum was computed

    # ---- candidate subsets ------------------------------------------------------------------
    def _take(self, count) -> np.ndarray:
        """Candidate ids of the ``count`` cheapest offers of each (group, row)."""
        import numpy as np

        L = self.layout
        count = np.asarray(count, dtype=np.int64)
        total = int(count.sum())
        if not total:
            return np.empty(0, dtype=np.int64)
        pick = np.repeat(np.arange(len(count)), count)
        rank = np.arange(total) - np.repeat(np.r_[0, np.cumsum(count)][:-1], count)
        oi = L.flat[L.starts[L.gi[pick]] + rank]
        return oi * self.stride + L.gj[pick]

    def option_keys(self, C: Cands) -> np.ndarray:
        """Per candidate of ``C``, its configuration (``config``: the same plan at the same
        price) and node count as one key: candidates with equal keys are one option, listing
        their regions."""
        import numpy as np

        return self.config[C.oi] * (self.max_nodes + 1) + C.nodes.astype(np.int64)

    def cheapest(self, *, first_only: bool = False) -> np.ndarray:
        """Ids of every cost group's cheapest offers at every row (``Layout._cheapest``),
        sorted."""
        return self.layout.cheapest_ids[first_only]

    def within_cost(self, tau: float, *, feasible: bool = False) -> np.ndarray:
        """Ids of every candidate whose cost is at most ``tau`` (and a few just above);
        ``feasible``: only those within the quotas and on time (the ranked lists' pool)."""
        import numpy as np

        if not tau >= 0:
            return np.empty(0, dtype=np.int64)
        gi, j, first = self.layout.gi, self.layout.gj, self.layout.gfirst
        e = self.offset[self.risk[first]] + j
        unit, _ = run_cost_usd(wall_hours=self.wall[e], nodes=self.e_nodes[e].astype(float),
                               usd_per_hour=1.0, term_hours=self.term[first],
                               commitment_use=self.c.commitment_use)
        room = tau - self._storage(self.wall[e])
        with np.errstate(divide="ignore", invalid="ignore"):
            limit = np.where(room >= 0, room / unit, -1.0) * (1 + PRICE_TIE) + 1e-300
        count = np.empty(len(gi), dtype=np.int64)
        start = 0
        for g in self.groups:  # rows of a group are contiguous (``Layout.gi``)
            stop = start + int(self.n_rows[g[0]])
            count[start:stop] = np.searchsorted(self.price[g], limit[start:stop], side="right")
            start = stop
        if feasible:
            rows = np.flatnonzero(count)
            if self.caps is not None:
                rows = rows[self.e_gpus[e[rows]] <= self.caps[first[rows]]]
            keep = np.zeros(len(gi), dtype=bool)
            keep[rows[self.on_time(e[rows])]] = True
            count[~keep] = 0
        return self._take(count)

    def closure(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` and the same configuration (other regions) at the same node count."""
        import numpy as np

        L = self.layout
        oi, j = ids // self.stride, ids % self.stride
        multi = L.config_size[self.config[oi]] > 1
        if not multi.any():
            return ids
        cfg, jj = self.config[oi[multi]], j[multi]
        m = L.config_size[cfg]
        pick = np.repeat(np.arange(len(cfg)), m)
        rank = np.arange(int(m.sum())) - np.repeat(np.r_[0, np.cumsum(m)][:-1], m)
        extra = L.config_members[L.config_start[cfg[pick]] + rank] * self.stride + jj[pick]
        return _unique(np.concatenate([ids, extra]))

    def cands(self, ids: np.ndarray, *, also: Cands | None = None) -> Cands:
        """The candidates ``ids`` (deduplicated, in canonical order) with cost and limits;
        with ``also``, those of ``also`` too (its figures reused, not recomputed: every
        figure is elementwise, so the same floats)."""
        import numpy as np

        ids = _unique(ids)
        if also is not None:
            return _merged(also, self.cands(_missing_from(also.ids, ids)))
        oi, j = ids // self.stride, ids % self.stride
        e = self.offset[self.risk[oi]] + j
        nodes = self.e_nodes[e].astype(np.float64)
        gpus = self.e_gpus[e].astype(np.float64)
        wall = self.wall[e]
        cost, _ = run_cost_usd(wall_hours=wall, nodes=nodes, usd_per_hour=self.price[oi],
                               term_hours=self.term[oi], commitment_use=self.c.commitment_use)
        cost = cost + self._storage(wall)
        c = self.c
        within_budget = cost <= c.budget_usd if c.budget_usd is not None else \
            np.ones(len(ids), bool)
        within_quota = gpus <= self.caps[oi] if self.caps is not None else \
            np.ones(len(ids), bool)
        return Cands(ids=ids, oi=oi, ti=self.offer_type[oi], e=e, j=j, nodes=nodes, gpus=gpus,
                     cost=cost, wall=wall, within_budget=within_budget,
                     within_quota=within_quota,
                     rank_key=self.key_rank[oi] * (self.max_nodes + 1)
                     + self.e_nodes[e].astype(np.int64))

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
    return Cands(**{f.name: np.insert(getattr(a, f.name), at, getattr(b, f.name))
                    for f in fields(Cands)})


def _unique(ids: np.ndarray) -> np.ndarray:
    """Sorted distinct ids (a sort: numpy's hashing unique is slower on these arrays)."""
    import numpy as np

    ids = np.sort(ids, kind="stable")  # timsort: the ids come in long sorted runs
    return ids[np.r_[True, ids[1:] != ids[:-1]]] if ids.size else ids
