"""Every option lists every region that sells it at its price, wherever the answer shows it:
the frontier, the best per pricing model and per accelerator, an infeasible answer's plans.
They listed one region (the on-demand side "us-east-1" beside a `--pricing on_demand` plan
listing the same plan in us-east-1, us-east-1-atl-1, us-east-2 and us-west-2; 892 of 6,843
shown plans in a numbers audit, 2026-12): the other regions were looked for only among the
candidates the top list needed."""

from __future__ import annotations

import dataclasses

import pytest

from catalog import load_catalog
from planner import Constraints, WorkloadSpec, build_workload, plan
from planner.model import Assumptions
from planner.search._optimizer import spot_rate


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


@pytest.fixture(scope="module")
def llama3_8b():
    return build_workload(WorkloadSpec(model="llama3-8b", tokens="1T"))


def _same(a, b) -> bool:
    return (a.offer.cloud, a.offer.instance_type, a.offer.pricing, a.nodes) == \
        (b.offer.cloud, b.offer.instance_type, b.offer.pricing, b.nodes)


def _regions_selling(cat, cand) -> tuple[str, ...]:
    """The regions whose usable offer is this candidate's configuration: the same instance
    type, pricing model, price to 1e-4 USD and spot interruption rate (design.md)."""
    o, A = cand.offer, Assumptions()
    return tuple(sorted({
        x.region for x in cat.offers
        if (x.cloud, x.instance_type, x.pricing, x.offering_class, x.upfront)
        == (o.cloud, o.instance_type, o.pricing, o.offering_class, o.upfront)
        and x.price_usable and x.usd_per_hour is not None
        and round(x.usd_per_hour, 4) == round(o.usd_per_hour, 4)
        and spot_rate(x, A) == spot_rate(o, A)}))


def test_the_sides_list_the_regions_their_own_plans_list(cat, llama3_8b):
    c = Constraints(deadline_hours=336)
    result = plan(llama3_8b, cat, c)
    for pricing, side in result.spot_vs_on_demand.items():
        alone = plan(llama3_8b, cat, dataclasses.replace(c, pricing=(pricing,)))
        assert _same(side, alone.recommendation)
        assert side.regions == alone.recommendation.regions, pricing
    assert len(result.spot_vs_on_demand["on_demand"].regions) > 1


def test_the_groups_list_the_regions_their_own_plans_list(cat, llama3_8b):
    c = Constraints(deadline_hours=336, group_by="accelerator")
    result = plan(llama3_8b, cat, c)
    assert result.by_group
    for accelerator, best in result.by_group.items():
        alone = plan(llama3_8b, cat, Constraints(deadline_hours=336, gpus=(accelerator,)))
        assert _same(best, alone.recommendation)
        assert best.regions == alone.recommendation.regions, accelerator


@pytest.mark.parametrize("clouds", [(), ("gcp", "azure")])
def test_every_frontier_plan_lists_every_region_selling_it(cat, clouds):
    workload = build_workload(WorkloadSpec(model="mixtral-8x7b", tokens="500B"))
    result = plan(workload, cat, Constraints(deadline_hours=720, clouds=clouds))
    assert result.frontier
    wrong = [(f.offer.instance_type, f.nodes, f.regions, _regions_selling(cat, f))
             for f in result.frontier if f.regions != _regions_selling(cat, f)]
    assert not wrong, wrong[:5]
    assert any(len(f.regions) > 1 for f in result.frontier)


def test_an_infeasible_answer_lists_every_region_of_its_plans(cat):
    workload = build_workload(WorkloadSpec(model="llama3-405b", tokens="15T"))
    result = plan(workload, cat, Constraints(deadline_hours=720))
    inf = result.infeasible
    assert inf is not None
    for cand in (inf.fastest, inf.cheapest):
        assert cand.regions == _regions_selling(cat, cand), cand.offer.instance_type
