"""A plan's candidate space that tokens, deadline and budget do not change (``Layout``): risk
entries, cost groups, configurations, the cheapest offers and their fixed figures; kept across
plans of one workload shape. ``_space`` prices it for one plan (its docstring says why the
cheapest offers of each cost group are the candidates that matter)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog import record

from ..model import goodput_fixed

if TYPE_CHECKING:
    import numpy as np

    from catalog import InstanceType

    from ..model import Calibration, ClusterInputs
    from ._evaluate import ShapeEvaluation

PRICE_TIE = 1e-9  # prices within this relative distance of a group's cheapest are kept too


@record
class TypeEntry:
    """An instance type with usable offers: its figures (one node's) and its shape's
    evaluation; ``calibration`` gives a described candidate its own cluster's figures."""

    it: InstanceType
    ci: ClusterInputs
    ev: ShapeEvaluation
    calibration: Calibration


@record(kw_only=False)
class _Fixed:
    """``Cands``' figures that tokens, deadline and budget do not change (``Layout.fixed``)."""

    ids: np.ndarray
    oi: np.ndarray
    ti: np.ndarray
    e: np.ndarray
    j: np.ndarray
    nodes: np.ndarray
    gpus: np.ndarray
    price: np.ndarray
    term: np.ndarray
    within_quota: np.ndarray
    rank_key: np.ndarray

    def arrays(self) -> tuple:
        return tuple(getattr(self, name) for name in self.__slots__)


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
        self.e_entry = np.repeat(np.arange(len(sizes), dtype=np.float64), sizes)
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
        # the cheapest offers' candidate ids, ascending (``cands`` need not sort them): an offer
        # picked in its group is picked at every row, so the ids are each picked offer's run
        # of rows, offers ascending — built in order, not sorted (4 ms in every new 16,384-GPU
        # process), and where a row lies among them is read off its offer's run, not searched
        picked = {first: self._picked(first) for first in (False, True)}
        start = np.full(len(offers), -1, dtype=np.int64)  # an offer's first position
        rows = self.n_rows[picked[False]]
        start[picked[False]] = np.r_[0, np.cumsum(rows)][:-1]
        self.cheapest_ids = {first: _runs(o * self.stride, self.n_rows[o])
                             for first, o in picked.items()}
        # where each (group, row)'s cheapest offer is among the cheapest ids: ``within_cost``
        # reads its cost there to skip rows no offer of the group can be within τ at
        self.first_pos = start[self.gfirst] + self.gj
        # the frontier's pool (``cheapest(first_only=True)``): where each is among the cheapest
        # ids and its risk row, so ``frontier_pool`` picks the rows that can be on it
        first = picked[True]
        self.front_in_cheapest = _runs(start[first], self.n_rows[first])
        self.front_e = _runs(self.offset[self.risk[first]], self.n_rows[first])
        # what the cheapest offers' candidates are whatever the tokens, deadline and budget:
        # ``Space.cheapest_cands`` prices them (every plan reads all of them)
        self.cheapest_fixed = self.fixed(self.cheapest_ids[False])
        self._goodput: dict = {}  # (checkpoint bytes, assumptions) → ``goodput_fixed``
        self.clusters: dict = {}  # (type, nodes) → (Cluster, ClusterInputs) described (_result)
        for value in (*vars(self).values(), *self.cheapest_fixed.arrays(),
                      *self.groups):  # shared between calls: read-only
            if isinstance(value, np.ndarray):
                value.flags.writeable = False

    def goodput_fixed(self, ckpt: float, A) -> dict:
        """``goodput_fixed`` over the risk rows, kept per checkpoint size and assumption."""
        import numpy as np

        key = (ckpt, A.failure_rate_per_gpu_hour, A.checkpoint_write_gb_per_s_per_node,
               A.checkpoint_read_gb_per_s_per_node)
        found = self._goodput.get(key)
        if found is None:
            found = goodput_fixed(gpus=self.e_gpus.astype(np.float64),
                                  nodes=self.e_nodes.astype(np.float64), checkpoint_bytes=ckpt,
                                  A=A, interruption_rate_per_node_hour=self.e_rate,
                                  restart_minutes=self.e_restart)
            for value in found.values():
                value.flags.writeable = False  # every later plan's ``Space.gp`` shares them
            if len(self._goodput) >= 4:  # a layout serves one shape: one size, in practice
                self._goodput.clear()
            self._goodput[key] = found
        return found

    def fixed(self, ids: np.ndarray) -> _Fixed:
        """The figures of candidates ``ids`` (sorted, distinct) that no plan input but the
        offers, shapes and quotas change."""
        import numpy as np

        oi, j = ids // self.stride, ids % self.stride
        e = self.offset[self.risk[oi]] + j
        gpus = self.e_gpus[e].astype(np.float64)
        return _Fixed(ids=ids, oi=oi, ti=self.offer_type[oi], e=e, j=j,
                      nodes=self.e_nodes[e].astype(np.float64), gpus=gpus,
                      price=self.price[oi], term=self.term[oi],
                      within_quota=gpus <= self.caps[oi] if self.caps is not None else
                      np.ones(len(ids), bool),
                      rank_key=self.key_rank[oi] * (self.max_nodes + 1)
                      + self.e_nodes[e].astype(np.int64))

    @property
    def nbytes(self) -> int:
        """The bytes of its arrays (what keeping it costs beyond its evaluations)."""
        import numpy as np

        return sum(v.nbytes for v in (*vars(self).values(), *self.cheapest_fixed.arrays(),
                                      *self.cheapest_ids.values())
                   if isinstance(v, np.ndarray))

    def _picked(self, first_only: bool):
        """Every group's cheapest offers (prices within PRICE_TIE), ascending. Of
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
        return np.sort(np.concatenate(picks))


def _runs(first, length):
    """``first[k] + 0, 1, …, length[k] − 1`` for every k, one run after another."""
    import numpy as np

    first, length = np.asarray(first, dtype=np.int64), np.asarray(length, dtype=np.int64)
    total = int(length.sum())
    out = np.repeat(first - np.r_[0, np.cumsum(length)][:-1], length) + np.arange(total)
    out.flags.writeable = False
    return out
