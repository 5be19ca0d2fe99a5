"""The search's array kernels against the plain numpy they replace (issue #19: faster, and
the same answer): ``fastest_per_node`` against a lexsort over (node count, step, memory)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.search._evaluate import fastest_per_node

STEPS = st.sampled_from([0.5, 1.0, 1.0, 2.0, 3.5, np.inf, np.nan])
MEMORY = st.sampled_from([10.0, 20.0, 20.0, 40.0, 79.5])


def lexsort_reference(nodes, step, memory):
    if len(nodes) == 0:
        return np.empty(0, dtype=np.intp)
    order = np.lexsort((memory, step, nodes))
    n_sorted = nodes[order]
    best = order[np.r_[True, n_sorted[1:] != n_sorted[:-1]]]
    return best[np.isfinite(step[best])]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.integers(1, 12), STEPS, MEMORY), min_size=0, max_size=200))
def test_fastest_per_node_is_the_lexsort_choice(rows):
    nodes = np.array([r[0] for r in rows], dtype=np.int64).reshape(-1)
    step = np.array([r[1] for r in rows])
    memory = np.array([r[2] for r in rows])
    assert np.array_equal(fastest_per_node(nodes, step, memory),
                          lexsort_reference(nodes, step, memory))


def test_ties_go_to_less_memory_then_to_the_first_row():
    nodes = np.array([2, 1, 2, 2, 1, 3])
    step = np.array([1.0, 5.0, 1.0, 1.0, 5.0, np.inf])
    memory = np.array([30.0, 10.0, 20.0, 20.0, 10.0, 1.0])
    # node 1: rows 1 and 4 tie on both → row 1; node 2: row 2 (less memory, before row 3);
    # node 3 fits nowhere → left out
    assert fastest_per_node(nodes, step, memory).tolist() == [1, 2]


def test_the_model_refuses_a_zero_stage_it_has_no_expression_for():
    import pytest

    from planner import WorkloadSpec, build_workload
    from planner.model import Assumptions, ModelScalars, evaluate

    ms = ModelScalars.of(build_workload(WorkloadSpec(model="llama2-7b", tokens="1T")))
    one = {k: np.array([v]) for k, v in dict(
        tp=1, pp=1, dp=8, mb=1, rc=0, gpus_per_node=8, matmul_tflops=700.0,
        attention_tflops=400.0, hbm_gb_per_s=3000.0, memory_gib=80.0,
        intra_busbw_gb_per_s=300.0, nic_gb_per_s_per_gpu=50.0).items()}
    assert np.isfinite(evaluate(ms, Assumptions(), zero=np.array([1]), **one)["step_s"]).all()
    for bad in (5, 1.5, -1):
        with pytest.raises(ValueError, match="zero must be 0, 1, 2 or 3"):
            evaluate(ms, Assumptions(), zero=np.array([bad]), **one)


def _quantile_by_probability_within(q: float) -> float:
    """The bound's z as it was found before normal_quantile: bisection on the full
    probability_within (base 1, no interruptions, σ = 1)."""
    import math

    from planner.model import probability_within

    lo, hi = -40.0, 40.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        p = float(probability_within(math.exp(mid), base_hours=1.0, loss_hours=0.0, rate=0.0,
                                     sigma=1.0))
        lo, hi = (mid, hi) if p < q else (lo, mid)
    return lo


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.one_of(st.sampled_from([0.0, 1e-12, 0.5, 0.8, 0.95, 0.999999, 1 - 1e-15]),
                 st.floats(0.0, 1.0, exclude_max=True)))
def test_normal_quantile_is_the_bisection_on_probability_within(q):
    from planner.model import normal_quantile

    assert normal_quantile(q) == _quantile_by_probability_within(q)


def test_normal_quantile_of_certainty_is_infinite():
    from planner.model import normal_quantile

    assert normal_quantile(1.0) == float("inf")


COSTS = st.sampled_from([1.0, 2.0, 2.0, 3.0, 3.0 + 1e-13, 5.0, 8.0, np.nan])
WALLS = st.sampled_from([1.0, 1.0 + 5e-13, 2.0, 2.0, 4.0, 6.0, 9.0, np.nan])


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(st.tuples(COSTS, WALLS), min_size=0, max_size=120), st.integers(1, 7))
def test_the_screened_frontier_is_the_walked_one(points, step):
    """``_pareto`` screens by a sample's front before walking: the same indices, in the same
    order, as the walk over every point (ties, 1e-12 gaps and NaN included)."""
    from planner.search import _select

    cost = np.array([p[0] for p in points], dtype=float)
    wall = np.array([p[1] for p in points], dtype=float)
    walked = _select._pareto_walk(cost, wall)
    above, every = _select.SCREEN_ABOVE, _select.SCREEN_STEP
    try:
        _select.SCREEN_ABOVE, _select.SCREEN_STEP = 0, step
        screened = _select._pareto(cost, wall)
    finally:
        _select.SCREEN_ABOVE, _select.SCREEN_STEP = above, every
    assert screened.tolist() == walked.tolist()


def test_the_screen_drops_most_of_a_large_search():
    """Curves like a plan's (cost rising, time falling with nodes, per offer): the screen
    leaves a small share for the walk, and the same front."""
    from planner.search import _select

    rng = np.random.default_rng(7)
    nodes = np.tile(np.arange(1, 2049, dtype=float), 40)
    price = np.repeat(rng.uniform(1, 10, 40), 2048)
    speed = np.repeat(rng.uniform(0.5, 2, 40), 2048)
    wall = 1e4 / (speed * nodes ** rng.uniform(0.8, 0.95))
    cost = price * nodes * wall
    kept = _select._screen(cost, wall)
    assert kept.sum() < 0.1 * len(cost)
    assert _select._pareto(cost, wall).tolist() == _select._pareto_walk(cost, wall).tolist()
