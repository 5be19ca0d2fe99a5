"""One spelling of a budget period (``period_label``), shared by a team file's budgets and the
app's Budgets table: a quarter in any case is the upper-case quarter, "Total" in any case is
the whole plan (it was "not a period ... or total", the word it wrote), and two spellings of one
period are refused as the same period in both."""

from __future__ import annotations

import pytest

from planner.team import TeamPlanError, parse_team_plan, period_label

from .conftest import team_dict


@pytest.mark.parametrize("written, label", [
    ("2027q2", "2027Q2"), ("2027Q2", "2027Q2"), ("total", "total"), ("Total", "total"),
    ("TOTAL", "total"), ("2027-03", "2027-03")])
def test_each_period_has_one_label(written, label):
    assert period_label(written) == label


@pytest.mark.parametrize("bad", ["2027q5", "totals", "2027-13", "2027-3", "Q2 2027", ""])
def test_what_is_not_a_period_is_refused_as_period_months_refuses_it(bad):
    with pytest.raises(ValueError):
        period_label(bad)


def test_a_total_in_capitals_budgets_the_whole_plan(catalog):
    plan = parse_team_plan(team_dict(budgets={"Total": 500_000}), catalog=catalog,
                           source="team.yaml")
    assert plan.budgets == (("total", 500_000.0),)


def test_total_twice_in_two_spellings_is_one_period_given_twice(catalog):
    with pytest.raises(TeamPlanError) as err:
        parse_team_plan(team_dict(budgets={"total": 5e5, "TOTAL": 4e5}), catalog=catalog,
                        source="team.yaml")
    assert "budgets.TOTAL: the same period as budgets.total. To fix: keep one of them" \
        in str(err.value)
