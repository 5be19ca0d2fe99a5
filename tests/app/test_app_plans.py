"""Plans a team can defend, on the Plan page (issue 14): the P10–P90 range on the card, the
warnings (spot capacity, commitments, flagged prices) on the card and per candidate, identical
offers in several regions as one plan listing them, commitments paid for their term with the
effective rate, the infeasible answer naming what binds and the plan without it, the best plan
per accelerator or cloud side by side, and the flagged offers left out — each in the app's
words (inputs by their labels, never CLI flags)."""

from __future__ import annotations

import re

import pytest

from ._apptest import app, assert_clean, errors, everything, recommendation, texts, warnings

FLAG = re.compile(r"(?<![\w-])--[a-z]")
USD = r"\$[\d,]+"


def shown(at) -> str:
    """What the page says in its own words: everything but the task files (code) and the
    lines that name a CLI command as such (the Launch tab's `gpuplan plan --emit`)."""
    text = everything(at)
    for code in at.code:
        text = text.replace(code.value, "")
    return "\n".join(line for line in text.replace("\\", "").splitlines()
                     if "`gpuplan " not in line)


def captions(at) -> list[str]:
    return [c.value.replace("\\", "") for c in at.caption]


def no_flags(text: str) -> None:
    assert not FLAG.search(text), f"a CLI flag on screen: {FLAG.search(text)!r} in {text!r}"


# ---- the range ------------------------------------------------------------------------------

def test_the_card_shows_the_p10_p90_of_cost_and_wall_clock():
    at = app()
    assert_clean(at)
    ranges = [c for c in captions(at) if c.startswith("P10–P90 ")]
    assert len(ranges) == 2, captions(at)
    cost, wall = ranges
    assert re.fullmatch(rf"P10–P90 {USD}–{USD}", cost), cost
    assert re.fullmatch(r"P10–P90 [\d.]+–[\d.]+ (h|days)", wall), wall
    lo, hi = (float(x.replace(",", "")) for x in re.findall(r"\$([\d,]+)", cost))
    total = float(next(m.value for m in at.metric if m.label == "Total cost")[1:]
                  .replace(",", ""))
    assert lo < total < hi
    assert any("interruptions expected" in c for c in captions(at))


def test_the_candidates_table_lists_regions_ranges_and_warnings():
    at = app(deadline="20h")
    data = at.dataframe[0].value
    assert {"regions_shown", "cost_range", "wall_range", "warning_kinds"} <= set(data.columns)
    assert all(re.fullmatch(rf"{USD}–{USD}", r) for r in data["cost_range"])
    # in the unit of the expected time (a 20 h plan's range read "1,089–2,154 min")
    assert all(re.fullmatch(r"[\d.,]+–[\d.,]+ (h|days)", r) for r in data["wall_range"])
    assert any("capacity" in kinds.split(", ")  # 11+ spot instances listed
               for kinds in data["warning_kinds"].dropna())
    expander = next(e for e in at.expander if e.label.startswith("Warnings of"))
    text = " ".join(m.value for m in expander.markdown).replace("\\", "")
    assert "**Capacity:**" in text and "“Max spot instances”" in text
    no_flags(text)


# ---- spot capacity --------------------------------------------------------------------------

def test_a_large_spot_fleet_carries_a_capacity_warning_until_the_limit_is_raised():
    at = app(deadline="6h")  # gpt2-xl in 6 h: 16 spot p5.48xlarge
    assert_clean(at)
    assert " spot" in recommendation(at)
    capacity = [w for w in warnings(at) if "**Capacity:**" in w]
    assert capacity and "above the 8-instance spot fleet limit" in capacity[0]
    assert "“Max spot instances”" in capacity[0]
    no_flags(capacity[0])
    at.number_input(key="max_spot").set_value(64).run()
    assert_clean(at)
    assert not [w for w in warnings(at) if "**Capacity:**" in w]


# ---- commitments and regions ----------------------------------------------------------------

def test_a_reservation_is_paid_for_its_term_with_the_effective_rate_shown():
    at = app(pricing="reserved_1y")
    assert_clean(at)
    rec = recommendation(at)
    assert "reserved 1y" in rec
    line = next(t for t in texts(at) if t.startswith("**Commitment:**"))
    assert "paid for whole terms: 1 × 8,760 h" in line
    term = re.search(r"(\$\d[\d,]*\d) for the term", line)[1]
    charged = re.search(r"charged (\$\d[\d,]*\d)", line)[1]
    assert term == charged  # none of the rest used: the whole term is the cost
    assert re.search(r"an effective \$[\d,]+\.\d\d per instance-hour", line)
    assert any("**Commitment:**" in w and "“Commitment used after the run”" in w
               for w in warnings(at))
    assert "the same whatever the run's length (whole terms)" in captions(at)
    no_flags(shown(at))


def test_using_the_rest_of_the_term_lowers_the_cost():
    at = app(pricing="reserved_1y")
    full = next(m.value for m in at.metric if m.label == "Total cost")
    at.slider(key="commitment_use").set_value(0.5).run()
    assert_clean(at)
    half = next(m.value for m in at.metric if m.label == "Total cost")
    as_usd = [float(x[1:].replace(",", "")) for x in (full, half)]
    assert as_usd[1] < 0.6 * as_usd[0]
    line = next(t for t in texts(at) if t.startswith("**Commitment:**"))
    assert "with 50% of the rest used afterwards" in line


def test_identical_offers_in_several_regions_are_one_plan_listing_them():
    at = app(pricing="reserved_1y")
    rec = recommendation(at)
    assert "us-east-1, us-east-2, us-west-2" in rec
    assert "Same configuration and price in 3 regions: us-east-1, us-east-2, us-west-2." in \
        texts(at)
    table = at.dataframe[0].value
    assert table["regions_shown"].iloc[0] == "us-east-1, us-east-2, us-west-2"
    assert table["offering"].iloc[0] == "standard, all upfront"  # what tells rows apart


def test_no_two_listed_plans_are_one_configuration_at_one_price():
    """Regression: amortised reserved prices differ by $0.000001/h between regions
    (13.258201 vs 13.258202); the planner now groups prices to a hundredth of a cent."""
    at = app(pricing="reserved_1y")
    table = at.dataframe[0].value
    rows = list(zip(table["instance_type"], table["nodes"], table["pricing"],
                    table["offering"], table["total_cost_usd"], strict=True))
    assert len(rows) == len(set(rows)), "a configuration at one price is listed once"


# ---- flagged prices -------------------------------------------------------------------------

def test_the_page_says_how_many_flagged_offers_it_left_out():
    at = app()
    line = next(c for c in captions(at) if "offers were left out" in c)
    assert re.match(r"[\d,]+ offers were left out because the catalog flags their prices", line)
    assert "Tick “Use flagged prices” to plan with them" in line


def test_flagged_prices_are_used_only_when_allowed_and_then_say_so():
    at = app(pricing="capacity_block")  # every capacity block price in the catalog expired
    assert not at.exception
    message = errors(at)[0]
    assert "prices are flagged" in message and "“Use flagged prices”" in message
    assert "the Catalog page" in message
    no_flags(message)
    at.checkbox(key="allow_flagged").check().run()
    assert_clean(at)
    assert "capacity block" in recommendation(at)
    flagged = [w for w in warnings(at) if "**Flagged price:**" in w]
    assert flagged and "expired" in flagged[0]
    assert "Commitment:" in " ".join(texts(at))  # capacity blocks are whole 24 h blocks


# ---- infeasible -----------------------------------------------------------------------------

def test_an_infeasible_budget_names_the_limit_and_the_plan_without_it():
    at = app(model="llama2-7b", tokens="1T", deadline="5d", budget="10000")
    assert_clean(at)
    head = warnings(at)[0]
    assert head.startswith("**Infeasible:**") and "**What binds:** the budget." in head
    without = next(t for t in texts(at) if t.startswith("**Without the budget:**"))
    assert re.search(rf" for {USD} in ", without)
    need = next(c for c in captions(at) if "needs a budget of" in c)
    assert "(“Budget, USD” is $10,000)" in need
    fix = next(t for t in texts(at) if t.startswith("To fix:"))
    assert re.search(rf"raise “Budget, USD” to {USD}", fix)
    no_flags(shown(at))


def test_an_infeasible_probability_names_it_and_the_plan_that_would_finish_in_time():
    at = app(model="llama2-7b", tokens="1T", deadline="22h")
    assert_clean(at)
    assert "**What binds:** the minimum probability." in warnings(at)[0]
    assert any(t.startswith("**Without the minimum probability:**") for t in texts(at))
    assert any("below “Min. probability of meeting the deadline” (90%)" in c
               for c in captions(at))


def test_an_impossible_deadline_says_nothing_but_a_later_deadline_helps():
    at = app(model="llama2-7b", tokens="1T", deadline="6h")
    assert "**What binds:** the deadline." in warnings(at)[0]
    assert any("only a later deadline" in c for c in captions(at))


# ---- compare by accelerator or cloud --------------------------------------------------------

def test_compare_by_accelerator_shows_the_best_plan_of_each_side_by_side():
    at = app(deadline="20h", compare="accelerator")
    assert_clean(at)
    assert "#### Best plan per accelerator" in texts(at)
    heads = [t for t in texts(at) if re.match(r"\*\*[A-Z][\w-]+\*\* · ", t)]
    names = [re.match(r"\*\*([\w-]+)\*\*", h)[1] for h in heads]
    assert "H100-SXM5-80GB" in names and len(names) == len(set(names)) >= 3
    assert heads[0].endswith("the cheapest") and all(re.search(r"\+\d+%$", h)
                                                     for h in heads[1:])
    costs = [float(re.search(r"\*\*\$([\d,]+)\*\* in", t)[1].replace(",", ""))
             for t in texts(at) if re.match(r"\*\*\$[\d,]+\*\* in ", t)]
    assert costs == sorted(costs) and len(costs) == len(names)


def test_compare_by_cloud_is_a_link_parameter():
    import catalog

    at = app(deadline="20h", compare="cloud")
    assert_clean(at)
    assert at.get("button_group")[0].value == "cloud"
    assert "#### Best plan per cloud" in texts(at)
    heads = [m[1] for t in texts(at) if (m := re.match(r"\*\*([\w-]+)\*\* · ", t))]
    assert heads and set(heads) <= set(catalog.CLOUDS)
    at.get("button_group")[0].set_value("none").run()
    assert not [t for t in texts(at) if t.startswith("#### Best plan per")]


# ---- the download ---------------------------------------------------------------------------

def test_the_candidates_csv_carries_ranges_regions_commitments_and_warnings():
    import catalog
    import planner
    from app_pages import _format as F

    cat = catalog.load_catalog()
    workload = planner.build_workload(planner.WorkloadSpec(model="gpt2-xl", tokens="50B"))
    result = planner.plan(workload, cat, planner.Constraints(
        deadline_hours=168.0, pricing=("reserved_1y",)), top_n=3).as_dict()
    rec = result["recommendation"]
    row = F.candidate_row(rec)
    assert row["regions"] == " ".join(rec["regions"]) and len(rec["regions"]) > 1
    assert row["total_cost_usd_p10"] <= row["total_cost_usd"] <= row["total_cost_usd_p90"]
    assert row["wall_clock_hours_p10"] < row["wall_clock_hours"] < row["wall_clock_hours_p90"]
    assert row["commitment_terms"] == 1 and row["commitment_term_hours"] == 8760
    assert row["effective_usd_per_hour"] > rec["usd_per_hour"]
    assert row["warnings"].startswith("commitment:")


def test_unusable_values_of_the_new_inputs_are_named_in_the_link_warning():
    at = app(compare="gpu", max_spot="lots", commitment_use="2")
    assert not at.exception
    warning = next(w for w in warnings(at) if "cannot use" in w)
    for shown_ in ("compare=gpu", "max_spot=lots", "commitment_use=2"):
        assert shown_ in warning, warning
    recommendation(at)


@pytest.mark.parametrize("pricing", [["reserved_1y", "spot"], ["on_demand", "reserved_1y"],
                                     ["reserved_1y"]])
def test_any_pricing_choice_shows_its_best_plans_side_by_side(pricing):
    """The spot/on-demand tab took any two entries for on-demand and spot: reserved_1y + spot
    raised KeyError 'on_demand' and lost the tabs and downloads after it (app sweep
    2026-12-04); reserved_1y alone said "no feasible on-demand plan", which was not asked."""
    at = app(pricing=pricing)
    assert_clean(at)
    assert at.get("download_button")
    said = " ".join(c.value for c in at.caption)
    for p, label in (("on_demand", "on-demand"), ("spot", "spot")):
        if p not in pricing:
            assert f"no feasible {label} plan" not in said


def test_the_accelerators_box_lists_only_chips_with_a_price():
    """GB200, MI300X and Trainium2 were listed from the instance types though the catalog
    prices none of them: choosing one could only end in "no offer matches" (app sweep
    2026-12-04)."""
    import catalog
    from app_pages._shared import gpu_choices

    cat = catalog.load_catalog("packaged")
    choices = gpu_choices(cat)
    assert {"H100-SXM5-80GB", "A100-SXM4-80GB", "L4"} <= set(choices)
    assert not {"GB200-186GB", "MI300X", "Trainium2"} & set(choices)
    # priced, with peaks, but inference-only: no training plan can be made on it
    assert "Trainium1" in choices and "Inferentia2" not in choices


def test_the_candidates_csv_says_which_list_each_plan_is_from():
    """The CSV mixed 24 frontier plans in with the 10 candidates, unmarked; an infeasible
    answer downloaded a one-byte file (app sweep 2026-12-04)."""
    import csv
    import io

    import catalog
    from app_pages._format import CANDIDATE_ROW_COLUMNS, candidate_row
    from app_pages.plan import candidates_csv
    from planner import Constraints, WorkloadSpec, build_workload, plan

    cat = catalog.load_catalog("packaged")
    work = build_workload(WorkloadSpec(model="llama2-7b", tokens="1T"))
    ok = plan(work, cat, Constraints(deadline_hours=24 * 14)).as_dict()
    rows = list(csv.DictReader(io.StringIO(candidates_csv(ok))))
    kinds = [r["list"] for r in rows]
    assert kinds.count("candidate") == len(ok["candidates"]) and "frontier" in kinds
    assert tuple(candidate_row(ok["candidates"][0])) == CANDIDATE_ROW_COLUMNS
    none = plan(work, cat, Constraints(deadline_hours=24 * 5, budget_usd=10_000)).as_dict()
    text = candidates_csv(none)
    assert text.splitlines()[0].startswith("list,cloud,region")
    assert {r["list"] for r in csv.DictReader(io.StringIO(text))} >= {
        "infeasible: fastest", "infeasible: cheapest", "infeasible: without budget"}
