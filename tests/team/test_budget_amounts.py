"""A team plan's budgets read as `plan --budget` reads them (``parse_usd``): `2027Q2: 30k` and
`total: $30,000` were refused ("must be a number of USD"); the errors still name the file and
the key."""

from __future__ import annotations

import pytest
import yaml

from planner.team import TeamPlanError, load_team_plan, parse_team_plan

from .conftest import team_dict


def _budgets(catalog, usd) -> tuple:
    data = team_dict(budgets={"2027Q2": usd})
    return parse_team_plan(data, catalog=catalog, source="team.yaml").budgets


@pytest.mark.parametrize(("usd", "read"), [
    ("30k", 30000), ("30K", 30000), ("$30,000", 30000), ("$30k", 30000), ("30,000", 30000),
    ("1e6", 1e6), ("2.5M", 2.5e6), ("$1,000,000.50", 1000000.5), ("100", 100), ("0", 0),
    (120000, 120000), (0.5, 0.5)])
def test_a_budget_is_read_as_people_write_money(catalog, usd, read):
    assert _budgets(catalog, usd) == (("2027Q2", pytest.approx(read)),)


@pytest.mark.parametrize(("usd", "says"), [
    ("lots", "team.yaml: budgets.2027Q2 'lots' is not an amount of USD. To fix: e.g. 30000, "
             "30k or $30,000"),
    ("", "team.yaml: budgets.2027Q2 is empty. To fix: leave it out, or give an amount"),
    ("1,00", "team.yaml: budgets.2027Q2 '1,00': the comma after '1' is followed by 2 digits, "
             "not 3: use a dot for decimals (1.00)"),
    ("0,5", "team.yaml: budgets.2027Q2 '0,5': the comma after '0' is no thousands separator: "
            "use a dot for decimals (0.5)"),
    ("-5", "team.yaml: budgets.2027Q2 must not be negative, got -5. To fix:"),
    ("nan", "team.yaml: budgets.2027Q2 'nan' is not a finite amount."),
    ("2T", "team.yaml: budgets.2027Q2 '2T' is not an amount of USD."),
    # the range stays the team's own (0 to a trillion), quoted as written
    ("2000B", "team.yaml: budgets.2027Q2: must be a number of USD >= 0 and <= "
              "1,000,000,000,000, got '2000B'. To fix: e.g. 120000"),
    (-5, "team.yaml: budgets.2027Q2: must be a number of USD >= 0"),
    (True, "team.yaml: budgets.2027Q2: must be a number of USD >= 0")])
def test_a_budget_that_is_no_amount_names_the_file_and_key(catalog, usd, says):
    with pytest.raises(TeamPlanError) as caught:
        _budgets(catalog, usd)
    message = str(caught.value)
    assert says in message and "\n" not in message and "`" not in message, message


def test_the_key_is_named_as_the_file_writes_it(catalog):
    data = team_dict(budgets={"2027q2": "30 grand"})
    with pytest.raises(TeamPlanError, match=r"^team\.yaml: budgets\.2027q2 '30 grand' is not"):
        parse_team_plan(data, catalog=catalog, source="team.yaml")


def test_a_yaml_file_with_money_as_people_write_it(catalog, tmp_path):
    data = team_dict()
    text = yaml.safe_dump({k: v for k, v in data.items() if k != "budgets"}, sort_keys=False)
    path = tmp_path / "team.yaml"
    path.write_text(text + "budgets:\n  2027-03: $50,000\n  2027Q2: 100k\n  total: 1.5e5\n")
    plan = load_team_plan(str(path), catalog=catalog)
    assert plan.budgets == (("2027-03", 50000.0), ("2027Q2", 100000.0), ("total", 150000.0))
