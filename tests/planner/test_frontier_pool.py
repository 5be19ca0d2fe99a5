"""The frontier's pool leaves out rows as slow as fewer nodes (``Space.frontier_pool``, issue
#19): the frontier over it must be the one over every cheapest offer within the limits, for
real plans and for times made hostile (ties, NaN, infinity) on purpose."""

from __future__ import annotations

import numpy as np
import pytest

from planner import NO_CALIBRATION, Constraints, WorkloadSpec, build_workload
from planner.search._optimizer import _search
from planner.search._quota import parse_quotas
from planner.search._select import _pareto
from planner.search._space import Space

CASES = [
    ({"model": "llama2-7b", "tokens": "1T"}, {"deadline_hours": 336, "max_gpus": 4096}),
    ({"model": "gpt2-xl", "tokens": "30B"},
     {"deadline_hours": 72, "max_gpus": 512, "budget_usd": 5_000.0,
      "pricing": ("on_demand", "reserved_1y", "capacity_block"), "commitment_use": 0.5,
      "checkpoint_storage_usd_per_gb_month": 0.023}),
    ({"params": "125M", "tokens": "5B"}, {"deadline_hours": 24, "max_gpus": 256,
                                          "min_probability": 0.9}),
]


def _full_and_pruned(space: Space, extra_ids: np.ndarray):
    F = space.cands(space.cheapest())
    C, extra = space.extended(F, extra_ids)
    pool = np.searchsorted(C.ids, space.cheapest(first_only=True))
    pool = pool[C.within_budget[pool] & C.within_quota[pool]]
    full = pool[_pareto(C.cost[pool], C.wall[pool])]
    pruned = space.frontier_pool(F, C, extra)
    assert np.all(np.diff(pruned) > 0)  # ascending, as the pool it replaces
    assert np.isin(pruned, pool).all()
    return full, pruned[_pareto(C.cost[pruned], C.wall[pruned])], len(pool), len(pruned)


def _space(catalog, workload, constraints) -> Space:
    w = build_workload(WorkloadSpec(**workload))
    return _search(w, catalog, Constraints(**constraints), None, NO_CALIBRATION, 10).space


@pytest.mark.parametrize(("workload", "constraints"), CASES)
def test_the_pruned_pool_gives_the_same_frontier(catalog, workload, constraints):
    space = _space(catalog, workload, constraints)
    other = np.array([space.cheapest()[-1] + 1], dtype=np.int64)  # not a cheapest id
    full, pruned, n_full, n_pruned = _full_and_pruned(space, other)
    assert full.tolist() == pruned.tolist()
    assert n_pruned < n_full  # it does leave rows out


@pytest.mark.filterwarnings("ignore:invalid value encountered")  # inf − inf: NaN costs
@pytest.mark.parametrize("seed", range(6))
def test_hostile_times_give_the_same_frontier(catalog, seed):
    """Times tied across node counts, NaN and infinite ones, and a quota cutting the pool."""
    rng = np.random.default_rng(seed)
    quotas = parse_quotas({"quotas": [{"cloud": "aws", "gpus": 64}]}, catalog)
    space = _space(catalog, CASES[seed % 3][0],
                   {**CASES[seed % 3][1], "quotas": quotas} if seed % 2 else CASES[seed % 3][1])
    wall = space.wall
    n = len(wall)
    ties = rng.choice(n, n // 3, replace=False)
    wall[ties] = wall[np.maximum(ties - 1, 0)]  # as slow as one node fewer
    wall[rng.choice(n, n // 50, replace=False)] = np.nan
    wall[rng.choice(n, n // 50, replace=False)] = np.inf
    wall[rng.choice(n, n // 20, replace=False)] *= rng.uniform(0.5, 2.0)
    full, pruned, _, _ = _full_and_pruned(space, np.empty(0, dtype=np.int64))
    assert full.tolist() == pruned.tolist()
