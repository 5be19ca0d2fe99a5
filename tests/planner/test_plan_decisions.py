"""Plans a team can defend: the model's range in the decision, commitments for their whole
term, spot realism, distinct options, per-group comparison, flagged prices, and the infeasible
answer that says which limit binds and what it would take.

Uses the small catalog of tests/small_catalog.py (four real instance types) with offers at
prices chosen here; the workload is a 1B model on 20B tokens (about an hour to a day).
"""

from __future__ import annotations

import dataclasses
import datetime as dt

import pytest
from small_catalog import OFFERS, make_offer, small_catalog, workload

import catalog
from planner import Constraints, PlannerError, plan
from planner.model import quantile
from planner.search import run_cost_usd

MAX_GPUS = 64


def run(offers=None, **kw):
    kw.setdefault("max_gpus", MAX_GPUS)
    top_n = kw.pop("top_n", 10)
    cat = small_catalog(offers) if offers is not None else small_catalog()
    return plan(workload(), cat, Constraints(**kw), top_n=top_n)


def on_demand(instance_type="p5.48xlarge", region="us-east-1", price=98.32):
    return make_offer("aws", instance_type, region, "on_demand", price)


def reserved(term_hours: float, price: float, pricing="reserved_1y",
             instance_type="p5.48xlarge", region="us-east-1") -> catalog.Offer:
    base = on_demand(instance_type, region)
    return dataclasses.replace(base, pricing=pricing, usd_per_hour=price,
                               term_hours=term_hours, offering_class="standard",
                               upfront="none", as_of=dt.date(2025, 11, 30))


# ---- the model's range is in the decision ----------------------------------------------

def test_recommendation_p90_meets_the_deadline_at_the_default_probability():
    res = run(deadline_hours=8.0)
    r = res.recommendation
    assert r is not None and res.constraints.min_probability == 0.9
    assert r.deadline_probability >= 0.9
    assert r.wall_clock_hours_p90 <= 8.0
    # P90 is the 0.9-quantile of the same distribution the probability comes from
    d = r.distribution
    q = quantile(0.9, base_hours=d["base_hours"], loss_hours=d["loss_hours"], rate=d["rate"],
                 sigma=d["sigma"])
    assert float(q) == pytest.approx(r.wall_clock_hours_p90, rel=1e-6)
    assert r.wall_clock_hours_p10 < r.wall_clock_hours < r.wall_clock_hours_p90
    assert r.cost_usd_p10 <= r.cost_usd <= r.cost_usd_p90


def test_a_plan_is_no_longer_certain_just_because_it_runs_on_demand():
    """Regression: P(deadline) counted only spot interruptions, so a plan finishing exactly at
    the deadline was '100%'. With the model's range it is about a coin flip."""
    res = run([on_demand()], deadline_hours=1e4, min_probability=0, top_n=1)
    wall = res.recommendation.wall_clock_hours
    tight = run([on_demand()], deadline_hours=wall * 1.001, min_probability=0, top_n=1)
    assert 0.3 < tight.recommendation.deadline_probability < 0.7


# ---- commitments are paid for their term ------------------------------------------------

def test_reserved_1y_for_a_short_run_costs_the_whole_term():
    res = run([reserved(8760, 60.0)], deadline_hours=48.0, pricing=("reserved_1y",),
              min_probability=0)
    r = res.recommendation
    assert r.commitment is not None and r.commitment.terms == 1
    # the whole year, per instance: nodes × 60 $/h × 8,760 h
    assert r.cost_usd == pytest.approx(r.nodes * 60.0 * 8760, rel=1e-9)
    assert r.commitment.effective_usd_per_hour == pytest.approx(
        60.0 * 8760 / r.wall_clock_hours, rel=1e-9)
    assert any("commitment" in w for w in r.warnings)


def test_commitment_use_credits_the_rest_of_the_term():
    half = run([reserved(8760, 60.0)], deadline_hours=48.0, pricing=("reserved_1y",),
               min_probability=0, commitment_use=0.5).recommendation
    wall = half.wall_clock_hours
    assert half.cost_usd == pytest.approx(half.nodes * 60.0 * (wall + (8760 - wall) * 0.5),
                                          rel=1e-9)
    # the warning says how the unused hours were charged (it asked for `commitment_use`
    # even when it had been given)
    left = 8760 - wall
    assert any(f"the {left:,.0f} h left per instance are charged at 50% (`commitment_use` 50%"
               in w for w in half.warnings), half.warnings
    full = run([reserved(8760, 60.0)], deadline_hours=48.0, pricing=("reserved_1y",),
               min_probability=0, commitment_use=1.0).recommendation
    assert full.cost_usd == pytest.approx(full.nodes * 60.0 * full.wall_clock_hours, rel=1e-9)


def test_capacity_blocks_are_paid_in_whole_blocks():
    cost, paid = run_cost_usd(wall_hours=[1.0, 24.0, 24.5, 50.0], nodes=2, usd_per_hour=10.0,
                              term_hours=24.0, commitment_use=0.0)
    assert list(paid) == [24.0, 24.0, 48.0, 72.0]
    assert list(cost) == [480.0, 480.0, 960.0, 1440.0]
    payg, _ = run_cost_usd(wall_hours=[1.5], nodes=2, usd_per_hour=10.0,
                           term_hours=float("nan"), commitment_use=0.0)
    assert payg[0] == 30.0


# ---- spot realism -----------------------------------------------------------------------

def test_a_spot_fleet_above_the_limit_carries_a_capacity_warning():
    spot = [make_offer(*r) for r in OFFERS if r[3] == "spot"]
    res = run(spot, deadline_hours=3.0, max_spot_instances=1, min_probability=0)
    r = res.recommendation
    assert r is not None and r.offer.pricing == "spot"
    if r.nodes > 1:
        assert any(w.startswith("capacity:") for w in r.warnings)
    wide = run(spot, deadline_hours=3.0, max_spot_instances=1000, min_probability=0)
    assert not any(w.startswith("capacity:") for w in wide.recommendation.warnings)


def test_the_goodput_note_names_the_restart_constant_the_plan_used():
    """A spot plan restarts after spot_restart_minutes; its note said restart_minutes (which
    --assume then changed to no effect) and printed a small spot rate as 0.000/node-h."""
    spot = [make_offer(*r) for r in OFFERS if r[3] == "spot"][:1]
    r = run(spot, deadline_hours=1e4, min_probability=0).recommendation
    note = next(n for n in r.estimate.assumptions if n.startswith("goodput"))
    assert "(spot_restart_minutes)" in note and "spot 0.000/node-h" not in note
    r = run([on_demand()], deadline_hours=1e4, min_probability=0).recommendation
    note = next(n for n in r.estimate.assumptions if n.startswith("goodput"))
    assert "(restart_minutes)" in note and "spot_restart" not in note


def test_spot_interruptions_grow_with_the_fleet():
    spot = [make_offer(*r) for r in OFFERS if r[3] == "spot"][:1]
    res = run(spot, deadline_hours=1e4, min_probability=0, top_n=100)
    by_nodes = {c.nodes: c for c in res.candidates}
    small, large = min(by_nodes), max(by_nodes)
    assert by_nodes[large].distribution["rate"] > by_nodes[small].distribution["rate"]


# ---- distinct options and comparisons ---------------------------------------------------

def test_no_two_candidates_are_the_same_configuration_at_the_same_price():
    res = run(deadline_hours=30.0, top_n=10)
    keys = [(c.offer.cloud, c.offer.instance_type, c.offer.pricing, c.offer.usd_per_hour,
             c.nodes) for c in res.candidates]
    assert len(keys) == len(set(keys))


def test_by_accelerator_shows_the_best_plan_of_each():
    res = run(deadline_hours=30.0, group_by="accelerator")
    assert len(res.by_group) >= 2
    for acc, c in res.by_group.items():
        assert c.accelerator == acc and c.meets_deadline
        better = [x for x in res.candidates if x.accelerator == acc]
        if better:
            assert c.cost_usd <= better[0].cost_usd + 1e-9
    assert res.as_dict()["by"] == "accelerator"


# ---- infeasible: which limit binds and what it would take -------------------------------

def test_a_binding_budget_names_the_plan_without_it():
    cheapest = run(deadline_hours=12.0).recommendation.cost_usd
    res = run(deadline_hours=12.0, budget_usd=cheapest * 0.9)
    inf = res.infeasible
    assert res.recommendation is None and inf is not None
    assert "budget" in inf.binding
    assert inf.relaxed["budget"].cost_usd == pytest.approx(cheapest, rel=1e-9)


def test_a_binding_probability_names_the_plan_without_it():
    res = run(deadline_hours=1e4, min_probability=0, top_n=1)
    wall = res.recommendation.wall_clock_hours
    tight = run(deadline_hours=wall * 1.02, min_probability=0.999)
    if tight.infeasible is not None:
        assert tight.infeasible.binding == ("min_probability",)
        relaxed = tight.infeasible.relaxed["min_probability"]
        assert relaxed.wall_clock_hours <= wall * 1.02


# ---- flagged prices -----------------------------------------------------------------------

def test_flagged_prices_are_skipped_and_reported_unless_allowed():
    bad = dataclasses.replace(on_demand(price=1.0), flags=("suspect_price",),
                              flag_reasons="suspect_price: test")
    res = run([on_demand(), bad], deadline_hours=30.0)
    assert res.flagged_skipped.count >= 1
    assert res.recommendation.offer.usd_per_hour == 98.32
    allowed = run([on_demand(), bad], deadline_hours=30.0, allow_flagged=True)
    assert allowed.recommendation.offer.usd_per_hour == 1.0
    assert any("flagged price used" in w for w in allowed.recommendation.warnings)


@pytest.mark.parametrize("kw,field", [
    ({"commitment_use": 1.5}, "commitment_use"),
    ({"commitment_use": float("nan")}, "commitment_use"),
    ({"max_spot_instances": 0}, "max_spot_instances"),
    ({"budget_usd": float("nan")}, "budget_usd"),
    ({"min_probability": 2.0}, "min_probability"),
    ({"group_by": "region"}, "group_by"),
])
def test_bad_constraints_name_their_field(kw, field):
    with pytest.raises(PlannerError) as err:
        Constraints(deadline_hours=10.0, **kw)
    assert err.value.field == field


def test_the_spot_capacity_warning_names_the_offer_s_own_cloud(catalog):
    """An Azure spot fleet was told to check AWS's Spot placement score."""
    from planner import Constraints, WorkloadSpec, build_workload, plan

    result = plan(build_workload(WorkloadSpec(model="llama2-7b", tokens="1T")), catalog,
                  Constraints(deadline_hours=24 * 14, clouds=("azure",), pricing=("spot",),
                              max_spot_instances=1))
    said = [w for c in result.candidates for w in c.warnings if w.startswith("capacity:")]
    assert said and all("Azure's Spot placement score" in w and "AWS" not in w for w in said)


def test_fp8_on_accelerators_without_it_says_so_not_that_no_offer_matches(catalog):
    """`--precision fp8 --gpu A100-SXM4-40GB` said "no offer matches the filters … widen
    clouds/regions/pricing/gpu" although A100 offers exist."""
    from planner import Constraints, PlannerError, WorkloadSpec, build_workload, plan

    workload = build_workload(WorkloadSpec(model="llama3-8b", tokens="1T", precision="fp8"))
    with pytest.raises(PlannerError, match=r"accelerators that cannot run fp8 training "
                                           r"\(A100-SXM4-40GB: .*To fix: choose `precision` "
                                           r"bf16 or fp16, or accelerators that support fp8"):
        plan(workload, catalog, Constraints(deadline_hours=336, gpus=("A100-SXM4-40GB",)))


def test_excluding_every_matching_offer_says_so_not_that_the_precision_fails(catalog):
    """`--clouds aws --exclude aws` was told the accelerators "cannot run bf16 training"."""
    from planner import Constraints, PlannerError, WorkloadSpec, build_workload, plan

    with pytest.raises(PlannerError, match=r"no offer matches the filters.*exclude less"):
        plan(build_workload(WorkloadSpec(model="gpt2", tokens="1B")), catalog,
             Constraints(deadline_hours=24, clouds=("aws",), exclude=("aws",)))


def test_a_short_spot_run_says_its_duration_not_0_h():
    """The capacity warning of a 27-minute spot run said "for 0 h" beside a card of 27 min."""
    import catalog
    from planner import Constraints, WorkloadSpec, build_workload, plan

    result = plan(build_workload(WorkloadSpec(model="gpt2", tokens="30B")),
                  catalog.load_catalog("packaged"),
                  Constraints(deadline_hours=1.0, max_spot_instances=1, pricing=("spot",)))
    capacity = [w for c in result.candidates for w in c.warnings if w.startswith("capacity:")]
    assert capacity and not [w for w in capacity if " for 0 h " in w]
    assert any(" min is above the 1-instance spot fleet limit" in w for w in capacity), capacity
