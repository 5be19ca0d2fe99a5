"""`plan`: the cheapest configuration that meets the deadline, checked against a brute force
over a small catalog, and every filter the optimizer applies (budget, quotas, --exclude,
--min-probability), the infeasible answer, and spot next to on-demand.

The catalog is the packaged one cut down to four real instance types (AWS p5.48xlarge and
p4d.24xlarge, GCP a2-highgpu-8g, Azure Standard_ND96asr_v4) with offers copied from real ones at
prices chosen here, so each `plan` call takes milliseconds and no test depends on catalog
prices. The workload is a 1B-parameter model on 20B tokens: from about an hour (8 nodes of H100)
to about a day (one A100 node).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import yaml
from small_catalog import OFFERS, make_offer, packaged, small_catalog, workload

import catalog
from catalog import UnknownNameError
from planner import (
    Constraints,
    NoFitError,
    PlannerError,
    WorkloadSpec,
    build_workload,
    cluster_for_instance,
    estimate,
    parse_quotas,
    plan,
)
from planner.model import format_usd, probability_within

MAX_GPUS = 64


class Result:
    """A PlanResult seen through its JSON contract (``as_dict``), as scripts see it."""

    def __init__(self, res) -> None:
        self.typed = res
        d = res.as_dict()
        self.recommendation, self.candidates = d["recommendation"], d["candidates"]
        self.frontier, self.infeasible = d["frontier"], d["infeasible"]
        self.spot_vs_on_demand, self.notes = d["spot_vs_on_demand"], d["notes"]
        self.evaluated = res.evaluated


def on_demand_catalog() -> catalog.Catalog:
    return small_catalog([make_offer(*r) for r in OFFERS if r[3] == "on_demand"])


def run(cat=None, **constraints):
    constraints.setdefault("max_gpus", MAX_GPUS)
    top_n = constraints.pop("top_n", 10)
    return Result(plan(workload(), cat or small_catalog(), Constraints(**constraints),
                       top_n=top_n))


def config(p: dict) -> tuple:
    return (p["cloud"], p["region"], p["instance_type"], p["pricing"], p["nodes"])


def expand(cands: list[dict]) -> list[tuple]:
    """Each candidate once per region it lists (identical offers are merged across regions)."""
    return [(c["cloud"], r, c["instance_type"], c["pricing"], c["nodes"]) for c in cands
            for r in c["regions"]]


def returned_plans(result) -> list[dict]:
    plans = [*result.candidates, *result.frontier, *result.spot_vs_on_demand.values()]
    if result.infeasible:
        plans += [result.infeasible["fastest"], result.infeasible["cheapest"]]
    return plans


# ---- brute force --------------------------------------------------------------------------

@functools.cache
def brute_estimate(cloud: str, instance_type: str, nodes: int):
    cat = packaged()
    it = cat.instance_type_by_key(cloud, instance_type)
    try:
        return estimate(workload(), cluster_for_instance(cat, it, nodes),
                        memory_gib=it.gpu_memory_gib)
    except NoFitError:
        return None


def brute_force(cat: catalog.Catalog, deadline_hours: float, max_gpus: int = MAX_GPUS):
    """Every on-demand offer × node count, one `estimate` each, in plain Python: the feasible
    configurations as (cost, wall, offer key, nodes), cheapest first."""
    rows = []
    for o in cat.offers:
        assert o.pricing == "on_demand"  # no spot term in the goodput
        it = cat.instance_type_by_key(o.cloud, o.instance_type)
        for n in range(1, max_gpus // it.gpu_count + 1):
            est = brute_estimate(o.cloud, o.instance_type, n)
            if est is None:
                continue
            wall = est.wall_clock_hours
            if wall <= deadline_hours:
                rows.append((n * o.usd_per_hour * wall, wall, o.key, n, est))
    return sorted(rows, key=lambda r: r[:4])


def all_walls(cat) -> list[float]:
    return sorted(r[1] for r in brute_force(cat, math.inf))


@pytest.mark.parametrize("share", [0.05, 0.3, 0.6, 1.0])
def test_recommendation_matches_brute_force(share):
    cat = on_demand_catalog()
    walls = all_walls(cat)
    deadline = walls[min(len(walls) - 1, int(share * len(walls)))] * (1 + 1e-9)
    best_cost, best_wall, (cloud, itype, region, pricing), nodes, _ = brute_force(cat,
                                                                                 deadline)[0]
    r = run(cat, deadline_hours=deadline, min_probability=0).recommendation
    assert r["total_cost_usd"] == pytest.approx(best_cost, rel=1e-9)
    assert r["wall_clock_hours"] == pytest.approx(best_wall, rel=1e-9)
    assert config(r) == (cloud, region, itype, pricing, nodes)


def distinct(rows):
    """Brute-force rows with the same configuration at the same price in several regions
    merged into one (the first region by key), listing the regions: plan's distinct options."""
    merged: dict = {}
    for cost, wall, (cloud, itype, region, pricing), nodes, est in rows:
        key = (cloud, itype, pricing, round(cost, 6), nodes)
        if key in merged:
            merged[key][5].append(region)
        else:
            merged[key] = [cost, wall, (cloud, itype, region, pricing), nodes, est, [region]]
    return list(merged.values())


def test_candidates_are_the_brute_force_ranking():
    cat = on_demand_catalog()
    deadline = all_walls(cat)[-1] * 2
    expected = distinct(brute_force(cat, deadline))
    result = run(cat, deadline_hours=deadline, min_probability=0,
                 top_n=len(expected) + 5)
    assert len(result.candidates) == len(expected)
    for got, (cost, wall, key, nodes, est, regions) in zip(result.candidates, expected,
                                                           strict=True):
        assert (got["cloud"], got["instance_type"], got["region"], got["pricing"],
                got["nodes"]) == (*key, nodes)
        # described as `estimate` describes that cluster: a multi-node plan states its
        # inter-node network (it was described from one node's figures, without it)
        assert got["assumptions"] == list(est.assumptions)
        assert got["regions"] == sorted(regions)
        assert got["total_cost_usd"] == pytest.approx(cost, rel=1e-9)
        assert got["wall_clock_hours"] == pytest.approx(wall, rel=1e-9)


def test_equal_prices_in_two_regions_are_one_candidate_listing_both():
    # p4d.24xlarge costs the same in us-east-1 and us-west-2: same plans, same costs → one
    # candidate per node count, named by the first region of the offer key, listing both
    cat = small_catalog([make_offer(*r) for r in OFFERS if r[1] == "p4d.24xlarge"
                         and r[3] == "on_demand"])
    result = run(cat, deadline_hours=1e4, top_n=100)
    nodes = [c["nodes"] for c in result.candidates]
    assert len(nodes) == len(set(nodes))
    assert all(c["regions"] == ["us-east-1", "us-west-2"] and c["region"] == "us-east-1"
               for c in result.candidates)


def test_recommendation_gpu_hours_equal_estimate():
    cat = on_demand_catalog()
    r = run(cat, deadline_hours=all_walls(cat)[len(all_walls(cat)) // 2]).recommendation
    est = brute_estimate(r["cloud"], r["instance_type"], r["nodes"])
    assert r["gpu_hours"] == pytest.approx(est.gpu_hours, rel=1e-9)
    assert r["gpu_hours"] == pytest.approx(r["wall_clock_hours"] * r["gpus"], rel=1e-12)
    assert r["plan"] == est.plan.as_dict()
    assert r["memory_per_gpu_gib"] == pytest.approx(est.memory["total_gib"], rel=1e-12)


def test_plan_does_not_depend_on_top_n():
    full = run(deadline_hours=12.0, top_n=50)
    short = run(deadline_hours=12.0, top_n=3)
    assert [config(c) for c in short.candidates] == [config(c) for c in full.candidates[:3]]
    assert short.recommendation == full.recommendation


# ---- budget -------------------------------------------------------------------------------

def test_budget_filters_candidates():
    unlimited = run(deadline_hours=12.0, top_n=1000)
    costs = sorted(c["total_cost_usd"] for c in unlimited.candidates)
    budget = costs[len(costs) // 2]
    limited = run(deadline_hours=12.0, budget_usd=budget, top_n=1000)
    assert [config(c) for c in limited.candidates] == [
        config(c) for c in unlimited.candidates if c["total_cost_usd"] <= budget]
    assert all(p["total_cost_usd"] <= budget for p in returned_plans(limited))


def test_budget_below_the_cheapest_plan_is_infeasible():
    cheapest = run(deadline_hours=12.0).recommendation["total_cost_usd"]
    result = run(deadline_hours=12.0, budget_usd=cheapest * 0.99)
    assert result.recommendation is None and not result.candidates
    assert "budget" in result.infeasible["reason"]
    assert "cheapest in time" in result.infeasible["reason"]


# ---- quotas -------------------------------------------------------------------------------

QUOTAS_YAML = """\
quotas:
  - {cloud: aws, accelerator: H100, gpus: 16}     # alias of H100-SXM5-80GB
  - {cloud: aws, region: us-east-1, gpus: 32}
  - {cloud: azure, region: eastus, gpus: 0}
  - {cloud: gcp, gpus: 24}
"""


def test_quota_file_limits_gpus_per_cloud_region_accelerator():
    cat = small_catalog()
    quotas = parse_quotas(yaml.safe_load(QUOTAS_YAML), cat)
    unlimited = run(cat, deadline_hours=30.0, top_n=1000)
    limited = run(cat, deadline_hours=30.0, quotas=quotas, top_n=1000)

    def within(p: dict) -> bool:
        if p["cloud"] == "aws" and p["accelerator"] == "H100-SXM5-80GB" and p["gpus"] > 16:
            return False
        if p["cloud"] == "aws" and p["region"] == "us-east-1" and p["gpus"] > 32:
            return False
        if p["cloud"] == "azure" and p["region"] == "eastus":
            return False
        return not (p["cloud"] == "gcp" and p["gpus"] > 24)

    assert not all(within(p) for p in returned_plans(unlimited))  # the quotas bind
    assert all(within(p) for p in returned_plans(limited))
    assert expand(limited.candidates) == [
        x for c in unlimited.candidates for x in expand([c])
        if within({**c, "region": x[1]})]
    assert any(p["cloud"] == "gcp" and p["gpus"] == 24 for p in limited.candidates)


def test_a_month_scoped_quota_is_refused_by_plan_not_ignored():
    # a plan has no start date: silently dropping the rule would plan above the user's quota
    cat = small_catalog()
    with pytest.raises(PlannerError, match=r"quotas\[2\]: month '2026-12'.*To fix: drop `month`"):
        parse_quotas({"quotas": [{"cloud": "gcp", "gpus": 24},
                                 {"cloud": "aws", "gpus": 8, "month": "2026-12"}]}, cat)


def test_zero_quota_everywhere_is_infeasible():
    cat = small_catalog()
    result = run(cat, deadline_hours=30.0, quotas=parse_quotas({"quotas": [{"gpus": 0}]}, cat))
    assert result.recommendation is None
    assert "quotas" in result.infeasible["reason"]
    assert not result.frontier


# ---- --exclude ----------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "field"), [("p5.48xlarge", "instance_type"),
                                             ("gcp", "cloud"), ("eastus", "region")])
def test_exclude_leaves_out_instance_types_clouds_and_regions(name, field):
    before = run(deadline_hours=30.0, top_n=1000)
    after = run(deadline_hours=30.0, exclude=(name,), top_n=1000)
    assert any(p[field] == name for p in returned_plans(before))
    assert not any(p[field] == name for p in returned_plans(after))
    assert [config(c) for c in after.candidates] == [
        config(c) for c in before.candidates if c[field] != name]


def test_exclude_unknown_name_suggests_a_close_one():
    with pytest.raises(UnknownNameError, match=r"Did you mean 'p5\.48xlarge'"):
        run(deadline_hours=30.0, exclude=("p5.48xlarg",))


# ---- infeasible ---------------------------------------------------------------------------

def test_impossible_deadline_shows_fastest_and_cheapest():
    result = run(deadline_hours=0.05)
    assert result.recommendation is None and not result.candidates
    inf = result.infeasible
    assert inf["reason"].startswith("no candidate finishes within")
    fastest, cheapest = inf["fastest"], inf["cheapest"]
    assert inf["fastest_misses_by_hours"] > 0 and inf["cheapest_misses_by_hours"] > 0
    assert inf["fastest_misses_by_hours"] == pytest.approx(fastest["wall_clock_hours"] - 0.05)
    assert inf["cheapest_misses_by_hours"] == pytest.approx(cheapest["wall_clock_hours"] - 0.05)
    assert fastest["wall_clock_hours"] <= cheapest["wall_clock_hours"]
    assert cheapest["total_cost_usd"] <= fastest["total_cost_usd"]
    assert not fastest["meets_deadline"] and not cheapest["meets_deadline"]
    # the frontier still spans every plan within the other limits: its ends are these two
    assert fastest["wall_clock_hours"] == min(p["wall_clock_hours"] for p in result.frontier)
    assert cheapest["total_cost_usd"] == min(p["total_cost_usd"] for p in result.frontier)


def test_an_impossible_deadline_under_a_budget_quotes_the_plans_within_it():
    """With a budget too, the reason quoted the fastest of all plans (one 10x over the budget)
    beside a fastest block within it, and named only the deadline as binding (sweep
    2026-12-04)."""
    free = run(deadline_hours=0.05).infeasible
    fastest_any = free["fastest"]["wall_clock_hours"]
    budget = free["cheapest"]["total_cost_usd"] * 1.01  # only the slowest, cheapest plans
    inf = run(deadline_hours=0.05, budget_usd=budget).infeasible
    quoted = inf["fastest"]["wall_clock_hours"]
    assert quoted > fastest_any
    assert inf["binding"] == ["deadline", "budget"]
    assert f"the fastest takes {quoted:,.1f} h within the budget ({fastest_any:,.1f} h " \
        "without)" in inf["reason"]
    # where the limits keep no faster plan out, only the deadline binds (as before)
    assert run(deadline_hours=0.05, budget_usd=1e9).infeasible["binding"] == ["deadline"]


def test_a_budget_no_plan_fits_at_all_binds_beside_an_impossible_deadline():
    """--budget 1000 below every plan's cost named only min_probability as binding (and its
    "To fix" never said --budget), while --budget 100000, which some plans fit, named both
    (docs sweep 2026-12-06)."""
    free = run(deadline_hours=0.05).infeasible
    cheapest_any = free["cheapest"]["total_cost_usd"]
    inf = run(deadline_hours=0.05, budget_usd=cheapest_any / 10).infeasible
    assert inf["binding"] == ["deadline", "budget"]
    assert f"; no plan at any duration is within the budget (the cheapest costs " \
        f"{format_usd(cheapest_any)})" in inf["reason"]
    # the blocks quote the plans of all, marked beyond the limits
    assert inf["cheapest"]["total_cost_usd"] == pytest.approx(cheapest_any)


def test_a_filter_that_matches_nothing_is_a_clear_error():
    with pytest.raises(PlannerError, match="no offer matches the filters"):
        run(deadline_hours=30.0, exclude=("aws", "gcp", "azure"))


def test_a_pricing_model_the_catalog_lacks_is_named_not_every_filter():
    # `--pricing committed_1y` on the packaged catalog (no committed-use prices) said only
    # "no offer matches the filters. To fix: widen clouds/regions/pricing/gpu"
    with pytest.raises(PlannerError) as info:
        run(deadline_hours=30.0, pricing=("committed_1y",))
    msg = str(info.value)
    assert "the catalog has no committed_1y offers (GCP committed-use prices come with " \
        "`gpuplan catalog refresh --cloud gcp`" in msg and "To fix: choose another `pricing`" \
        in msg, msg


def test_a_gpu_limit_below_every_instance_says_so_not_more_memory():
    """A 1.6B model with `max_gpus` 2 on H200s (all 8-GPU instances) was told it "fits on none
    … allow GPUs with more memory" (sweep 2026-12-04)."""
    small = build_workload(WorkloadSpec(model="gpt2-xl", tokens="1B"))
    c = Constraints(deadline_hours=168.0, max_gpus=2, gpus=("H200-SXM-141GB",))
    with pytest.raises(PlannerError, match=r"every matching offer's instance has at least 8 "
                                           r"GPUs, above `max_gpus` 2\. To fix: raise "
                                           r"`max_gpus` to 8"):
        plan(small, packaged(), c)
    big = build_workload(WorkloadSpec(model="llama2-70b", tokens="1B"))  # 1-GPU H100s exist
    with pytest.raises(PlannerError, match="fits on none") as info:
        plan(big, packaged(), Constraints(deadline_hours=168.0, max_gpus=1, gpus=("H100",)))
    # the search already recomputes everything it may ("auto"): only limited recomputation
    # is told to recompute fully
    assert "`recompute` full" not in str(info.value)
    limited = build_workload(WorkloadSpec(model="llama2-70b", tokens="1B", recompute="none"))
    with pytest.raises(PlannerError, match="use `recompute` full"):
        plan(limited, packaged(), Constraints(deadline_hours=168.0, max_gpus=1, gpus=("H100",)))


# ---- spot vs on-demand --------------------------------------------------------------------

def test_spot_and_on_demand_side_by_side():
    result = run(deadline_hours=30.0)
    sv = result.spot_vs_on_demand
    assert set(sv) == {"on_demand", "spot"}
    for pricing in ("on_demand", "spot"):
        alone = run(deadline_hours=30.0, pricing=(pricing,)).recommendation
        assert sv[pricing]["pricing"] == pricing
        assert config(sv[pricing]) == config(alone)
        assert sv[pricing]["total_cost_usd"] == pytest.approx(alone["total_cost_usd"],
                                                              rel=1e-12)
    assert sv["spot"]["spot_interruptions_per_hour"] > 0
    assert sv["on_demand"]["spot_interruptions_per_hour"] is None
    assert result.recommendation["total_cost_usd"] == min(
        p["total_cost_usd"] for p in sv.values())


def test_only_on_demand_has_no_spot_entry():
    assert set(run(on_demand_catalog(), deadline_hours=30.0).spot_vs_on_demand) == {
        "on_demand"}


# ---- --min-probability --------------------------------------------------------------------

@pytest.mark.parametrize("threshold", [0.9, 0.99, 0.9999])
def test_min_probability_filters(threshold):
    every = run(deadline_hours=6.0, min_probability=0, top_n=1000)
    kept = run(deadline_hours=6.0, min_probability=threshold, top_n=1000)
    # the frontier spans every plan within budget and quotas whatever the deadline; the
    # recommendation, the candidates and the side-by-side plans meet the threshold
    assert all(p["deadline_probability"] >= threshold for p in
               [*kept.candidates, *kept.spot_vs_on_demand.values()])
    assert [config(c) for c in kept.candidates] == [
        config(c) for c in every.candidates if c["deadline_probability"] >= threshold]
    assert any(c["deadline_probability"] < threshold for c in every.candidates)


def test_spot_is_never_faster_than_on_demand_on_the_same_machine():
    # interruptions only add time: same instance type, region and nodes → spot wall ≥ on-demand
    r = run(deadline_hours=30.0, top_n=1000)
    on_demand = {(c["instance_type"], c["region"], c["nodes"]): c for c in r.candidates
                 if c["pricing"] == "on_demand"}
    pairs = [(s, on_demand[k]) for s in r.candidates if s["pricing"] == "spot"
             and (k := (s["instance_type"], s["region"], s["nodes"])) in on_demand]
    assert pairs
    for spot, od in pairs:
        assert spot["wall_clock_hours"] > od["wall_clock_hours"]
        assert spot["goodput"] < od["goodput"]


# ---- P(finish by the deadline) must not fall as the deadline moves out --------------------
# Regression: deadline_probability once took λ = rate × deadline (interruptions after the run
# had finished), so with the floored slack P(finish by T) fell as T grew between integer steps
# (4 h of work, 0.5 h lost per interruption, 0.1/h: 0.986 at T = 5.0 h, 0.982 at T = 5.4 h),
# and with --min-probability a longer deadline could cost more (spot-only catalog below at
# 0.97: $67.75 at 5.25 h, $68.19 at 5.5 h).

@pytest.mark.parametrize("sigma", [0.0, 0.1, 0.3])
def test_regression_deadline_probability_is_monotone_in_the_deadline(sigma):
    deadlines = [4.9, 5.0, 5.2, 5.4, 5.49, 6.0, 8.0]
    p = probability_within(np.array(deadlines), base_hours=4.0, loss_hours=0.5, rate=0.1,
                           sigma=sigma)
    assert all(b >= a for a, b in zip(p, p[1:], strict=False)), list(zip(deadlines, p,
                                                                          strict=True))


def test_regression_longer_deadline_never_costs_more_with_min_probability():
    cat = small_catalog([make_offer(*r) for r in OFFERS if r[3] == "spot"])
    rises = []
    for threshold in (0.9, 0.97):
        previous = None
        for quarter in range(16, 48):
            deadline = quarter / 4
            r = run(cat, deadline_hours=deadline, min_probability=threshold).recommendation
            cost = r["total_cost_usd"] if r else math.inf
            if previous is not None and cost > previous[1] * (1 + 1e-12):
                rises.append((threshold, previous, (deadline, cost)))
            previous = (deadline, cost)
    assert not rises, rises



def test_an_expected_time_outside_its_own_range_says_why():
    """The headline (goodput's expected calendar time) fell outside the candidate's P10-P90:
    below P10 where interruptions come every few minutes, above P90 where a rare restart costs
    more than the whole run (fuzz round 2026-12-04). Each such candidate now says why."""
    from planner import WorkloadSpec, build_workload
    from planner.model import Assumptions

    cat = packaged()
    short = build_workload(WorkloadSpec(model="gpt2", tokens="10B"))
    A = Assumptions().with_overrides(restart_minutes=240, spot_restart_minutes=240)
    # 500: with 200 the catalog of 2026-12-06 (more cheap spot offers) lists none of them
    res = plan(short, cat, Constraints(deadline_hours=24 * 60, min_probability=0),
               assumptions=A, top_n=500)
    outside = [c for c in res.candidates
               if not c.wall_clock_hours_p10 <= c.wall_clock_hours <= c.wall_clock_hours_p90]
    assert outside  # the case exists in the packaged catalog
    for c in outside:
        (why,) = [w for w in c.warnings if w.startswith("range: the expected")]
        assert "above P90" in why and "each costs" in why
    inside = [c for c in res.candidates if c not in outside]
    assert not any(w.startswith("range:") for c in inside for w in c.warnings)
    frequent = Assumptions().with_overrides(failure_rate_per_gpu_hour=1)
    res = plan(build_workload(WorkloadSpec(model="llama3-8b", tokens="100B")), cat,
               Constraints(deadline_hours=24 * 30, clouds=("aws",), min_probability=0),
               assumptions=frequent)
    rec = res.recommendation
    assert rec.wall_clock_hours < rec.wall_clock_hours_p10
    assert any("below P10" in w and "Young/Daly" in w for w in rec.warnings)


def test_a_chart_points_cost_range_is_costed_as_candidates_are():
    """Chart points scaled the cost by the hours' spread, so a reservation paid by whole terms
    showed $505k-$995k for a flat $708,762 (sweep 2026-12-04)."""
    from planner import WorkloadSpec, build_workload

    cat = packaged()
    res = plan(build_workload(WorkloadSpec(model="llama3-8b", tokens="1T")), cat,
               Constraints(deadline_hours=24 * 60, pricing=("reserved_1y",),
                           min_probability=0, max_gpus=64), points=True)
    terms = [p for p in res.points if p.pricing == "reserved_1y"]
    assert terms
    one_term = [p for p in terms if p.wall_clock_hours_p90 <= 8760]
    assert one_term  # a run inside one term pays it whole, however long it takes
    for p in one_term:
        assert p.total_cost_usd_p10 == pytest.approx(p.total_cost_usd, rel=1e-9)
        assert p.total_cost_usd_p90 == pytest.approx(p.total_cost_usd, rel=1e-9)
    for p in terms:
        assert p.total_cost_usd_p10 <= p.total_cost_usd <= p.total_cost_usd_p90


def test_regions_of_one_price_but_different_spot_rates_are_not_one_candidate():
    """trn1.32xlarge spot costs the same in us-east-1 and us-east-2 but is interrupted 3x as
    often in us-east-2: one candidate listed both with us-east-1's hours (sweep 2026-12-04)."""
    from planner import WorkloadSpec, build_workload

    res = plan(build_workload(WorkloadSpec(model="llama2-7b", tokens="20B")), packaged(),
               Constraints(deadline_hours=24 * 30, gpus=("Trainium1",), pricing=("spot",),
                           min_probability=0), top_n=20)
    east = [c for c in res.candidates if c.offer.instance_type == "trn1.32xlarge"
            and c.nodes == 1]
    assert {tuple(c.regions) for c in east} >= {("us-east-1",), ("us-east-2",)}
    a, b = sorted(east, key=lambda c: c.regions)[:2]
    assert a.spot_interruptions_per_hour != b.spot_interruptions_per_hour
    assert a.wall_clock_hours != b.wall_clock_hours


def test_a_commitments_effective_rate_is_the_instances_own():
    """effective_usd_per_hour counted the checkpoints' storage ($2,232.81 for $2,078.81 at
    $1,000 per GB-month) (sweep 2026-12-04)."""
    from planner import WorkloadSpec, build_workload
    from planner.search._candidates import storage_usd

    work = build_workload(WorkloadSpec(model="llama3-8b", tokens="1T"))
    res = plan(work, packaged(), Constraints(deadline_hours=24 * 60, pricing=("reserved_1y",),
                                              min_probability=0,
                                              checkpoint_storage_usd_per_gb_month=1000.0))
    rec = res.recommendation
    assert rec.commitment is not None
    stored = storage_usd(rec.wall_clock_hours, checkpoint_bytes=_ckpt(work),
                         usd_per_gb_month=1000.0)
    assert stored > 0
    run_only = rec.commitment.effective_usd_per_hour * rec.nodes * rec.wall_clock_hours
    assert run_only + stored == pytest.approx(rec.cost_usd, rel=1e-9)


def _ckpt(work):
    from planner.model import ModelScalars, checkpoint_bytes

    return checkpoint_bytes(ModelScalars.of(work))
