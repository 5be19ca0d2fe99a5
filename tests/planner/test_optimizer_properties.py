"""Properties `plan` must have for any small catalog: a longer deadline or one more offer never
raises the optimal cost, offer order never matters, every plan it returns fits in memory and
meets the deadline, and the recommendation lies on the cost/time frontier.

A catalog is a random non-empty subset of nine offers (four real instance types: AWS p5.48xlarge
and p4d.24xlarge, GCP a2-highgpu-8g, Azure Standard_ND96asr_v4; on-demand and spot) copied from
the packaged catalog at random prices; the workload is 1B parameters on 20B tokens, at most
16–64 GPUs, with deadlines from half an hour to two days.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from small_catalog import OFFERS, make_offer, small_catalog, workload

from planner import Assumptions, Constraints, plan

POOL = OFFERS  # reference prices; the strategies scale them
SETTINGS = settings(max_examples=30, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
USABLE = Assumptions().usable_memory_fraction


@st.composite
def offer_sets(draw, min_size: int = 1, max_size: int = len(POOL)):
    """Distinct offers of the pool at prices from 0.5× to 2× the reference (ties kept
    sometimes: the two p4d on-demand offers may share a price)."""
    picks = draw(st.lists(st.integers(0, len(POOL) - 1), min_size=min_size,
                          max_size=max_size, unique=True))
    out = []
    for i in sorted(picks):
        cloud, itype, region, pricing, usd = POOL[i]
        factor = draw(st.sampled_from((1.0, 1.0, 0.5, 2.0)) | st.floats(0.5, 2.0))
        out.append(make_offer(cloud, itype, region, pricing, round(usd * factor, 4)))
    return out


deadlines = st.floats(min_value=0.5, max_value=48.0)
max_gpus = st.sampled_from((16, 32, 64))
probabilities = st.sampled_from((None, None, 0.5, 0.9, 0.99))


def best_cost(result) -> float:
    return result.recommendation.cost_usd if result.recommendation else float("inf")


def run(offers, **constraints):
    return plan(workload(), small_catalog(offers), Constraints(**constraints))


def as_json(result) -> dict:
    """The result as scripts see it (``--json``)."""
    return result.as_dict()


@SETTINGS
@given(offers=offer_sets(), d1=deadlines, d2=deadlines, gpus=max_gpus, p=probabilities,
       budget=st.none() | st.floats(100, 2000))
def test_longer_deadline_never_raises_the_optimal_cost(offers, d1, d2, gpus, p, budget):
    short, long = sorted((d1, d2))
    kw = {"max_gpus": gpus, "budget_usd": budget, "min_probability": p}
    a = run(offers, deadline_hours=short, **kw)
    b = run(offers, deadline_hours=long, **kw)
    assert best_cost(b) <= best_cost(a)
    if a.recommendation is not None:
        assert b.recommendation is not None


@SETTINGS
@given(offers=offer_sets(min_size=2), extra_index=st.integers(0, len(POOL) - 1),
       deadline=deadlines, gpus=max_gpus, p=probabilities)
def test_adding_an_offer_never_raises_the_optimal_cost(offers, extra_index, deadline, gpus, p):
    extra = offers[extra_index % len(offers)]
    rest = [o for o in offers if o is not extra]
    kw = {"deadline_hours": deadline, "max_gpus": gpus, "min_probability": p}
    assert best_cost(run(offers, **kw)) <= best_cost(run(rest, **kw))


@SETTINGS
@given(offers=offer_sets(min_size=2), deadline=deadlines, gpus=max_gpus, p=probabilities,
       data=st.data())
def test_result_does_not_depend_on_offer_order(offers, deadline, gpus, p, data):
    shuffled = data.draw(st.permutations(offers))
    kw = {"deadline_hours": deadline, "max_gpus": gpus, "min_probability": p}
    a, b = run(offers, **kw), run(shuffled, **kw)
    assert a.as_dict() == b.as_dict()


@SETTINGS
@given(offers=offer_sets(), deadline=deadlines, gpus=max_gpus, p=probabilities,
       budget=st.none() | st.floats(100, 2000))
def test_every_returned_plan_fits_and_meets_the_deadline(offers, deadline, gpus, p, budget):
    cat = small_catalog(offers)
    result = as_json(plan(workload(), cat, Constraints(deadline_hours=deadline, max_gpus=gpus,
                                                       min_probability=p, budget_usd=budget)))
    plans = list(result["candidates"])
    assert (result["recommendation"] is None) == (not plans)
    assert (result["infeasible"] is None) == bool(plans)
    if plans:
        assert plans[0] == result["recommendation"]
        assert [c["total_cost_usd"] for c in plans] == sorted(c["total_cost_usd"] for c in plans)
    for c in [*plans, *result["spot_vs_on_demand"].values()]:
        it = cat.instance_type_by_key(c["cloud"], c["instance_type"])
        capacity = it.gpu_memory_gib or cat.accelerator(it.accelerator).memory_gib
        assert c["memory"]["capacity_gib"] == capacity
        assert c["memory_per_gpu_gib"] <= capacity * USABLE
        assert c["meets_deadline"] is True
        assert c["gpus"] == c["nodes"] * it.gpu_count <= gpus
        if p is not None:
            # the probability includes the model's range: at 0.9 the P90 meets the deadline
            assert c["deadline_probability"] >= p
            if p >= 0.9:
                assert c["wall_clock_hours_p90"] <= deadline * (1 + 1e-6)
        else:
            assert c["wall_clock_hours"] <= deadline
        if budget is not None:
            assert c["total_cost_usd"] <= budget
        assert c["total_cost_usd"] == pytest.approx(
            c["usd_per_hour_cluster"] * c["wall_clock_hours"], rel=1e-12)


@SETTINGS
@given(offers=offer_sets(), deadline=deadlines, gpus=max_gpus, p=probabilities)
def test_recommendation_lies_on_the_frontier(offers, deadline, gpus, p):
    result = as_json(run(offers, deadline_hours=deadline, max_gpus=gpus, min_probability=p))
    points = [(f["total_cost_usd"], f["wall_clock_hours"]) for f in result["frontier"]]
    # sorted by cost, wall strictly falling: no frontier point is both cheaper and faster
    assert points == sorted(points)
    for (c1, w1), (c2, w2) in zip(points, points[1:], strict=False):
        assert c1 <= c2 and w2 < w1
    for i, (c1, w1) in enumerate(points):
        assert not any(c2 <= c1 and w2 <= w1 for j, (c2, w2) in enumerate(points) if j != i)
    r = result["recommendation"]
    if r is None:
        return
    rec = (r["total_cost_usd"], r["wall_clock_hours"])
    if p is None:
        # decided on expected time alone, the recommendation is a frontier point
        assert rec in points
        assert not any(c <= rec[0] and w <= rec[1] and (c, w) != rec for c, w in points)
    # nothing on the frontier that meets the deadline at the required probability is cheaper
    assert all(f["total_cost_usd"] >= rec[0] - 1e-9 for f in result["frontier"]
               if f["meets_deadline"])


@SETTINGS
@given(offers=offer_sets(), deadline=deadlines, gpus=max_gpus,
       ps=st.lists(st.sampled_from((0.5, 0.8, 0.9, 0.95, 0.99)), min_size=2, max_size=2))
def test_raising_min_probability_never_lowers_the_odds_or_the_cost(offers, deadline, gpus,
                                                                   ps):
    low, high = sorted(ps)
    a = run(offers, deadline_hours=deadline, max_gpus=gpus, min_probability=low)
    b = run(offers, deadline_hours=deadline, max_gpus=gpus, min_probability=high)
    assert best_cost(b) >= best_cost(a)
    if b.recommendation is not None:
        assert a.recommendation is not None
        assert b.recommendation.deadline_probability >= high
        # the quantile the user asked for lies within the deadline
        assert b.recommendation.wall_clock_hours_p90 <= deadline * (1 + 1e-6) or high < 0.9
