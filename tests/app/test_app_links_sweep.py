"""Links and tables a hostile sweep found handled silently or unreadably (app sweep
2026-12-05): unknown parameters on the Probes and Team pages, a key given twice, a link
warning without a size limit, a number's allowed range, the Catalog's price bound, Team table
rows dropped without a word, and a team name that plotly read as a hover placeholder."""

from __future__ import annotations

import pytest

from ._apptest import app, assert_clean, chart, errors, upload_team, warnings


def link_warning(at) -> str:
    said = [w for w in warnings(at) if w.startswith("The link has parameters")]
    assert len(said) == 1, warnings(at)
    return said[0]


# ---- 1. every page names the link's unknown parameters ---------------------------------------

@pytest.mark.parametrize("page", ["app_pages/probes.py", "app_pages/team.py"])
def test_an_unknown_link_parameter_is_named_on_every_page(page):
    """/probes?foo=bar showed nothing, while Plan and Catalog name such a parameter."""
    at = app(page, foo="bar")
    assert not at.exception
    assert "foo=bar (not a setting of this page: unused here)" in link_warning(at)


# ---- 2. a key given more than once ---------------------------------------------------------

@pytest.mark.parametrize("key, given, label", [
    ("tokens", ["1T", "2T"], "Training tokens"),
    ("precision", ["fp16", "bf16"], "Precision"),
    ("min_prob", ["0.5", "0.8"], "Min. probability of meeting the deadline"),
    ("compare", ["cloud", "accelerator"], "Compare by"),
])
def test_a_key_given_twice_is_named_not_resolved_silently(key, given, label):
    """?tokens=1T&tokens=2T planned 2T without a word; ?compare=cloud&compare=accelerator
    called accelerator "not a valid value"."""
    at = app(**{key: given})
    assert not at.exception
    said = link_warning(at)
    assert f"{key}={', '.join(given)} ({label}: given 2 times, a link sets it once; showing " \
        in said, said
    assert "not a valid value" not in said, said


def test_a_multiselect_still_takes_several_values():
    at = app(clouds=["aws", "gcp"])
    assert at.multiselect(key="clouds").value == ["aws", "gcp"]
    assert not any(w.startswith("The link has parameters") for w in warnings(at))


# ---- 3. the warning has a size limit -------------------------------------------------------

def test_a_long_link_value_is_cut_in_the_warning():
    at = app(colour="x" * 6000)
    said = link_warning(at)
    assert "colour=" + "x" * 40 + "…" in said and "x" * 41 not in said
    assert len(said) < 300, len(said)


def test_many_unknown_keys_are_listed_up_to_ten():
    at = app(**{f"k{i:03d}": "v" for i in range(300)})
    said = link_warning(at)
    assert "k009=v" in said and "k010=" not in said
    assert "and 290 more" in said
    assert len(said) < 1000, len(said)


# ---- 4. a number's allowed range -------------------------------------------------------------

@pytest.mark.parametrize("page, key, given, words", [
    (None, "min_prob", "1", "not a valid value: 0 to 0.99; showing 0.9"),
    (None, "top", "500", "not a valid value: a whole number from 1 to 50; showing 10"),
    ("app_pages/catalog.py", "offers_min_gpus", "70000",
     "not a valid value: a whole number from 1 to 65,536;"),
])
def test_a_number_out_of_range_says_the_range(page, key, given, words):
    at = app(page, **{key: given})
    assert not at.exception
    said = link_warning(at)
    assert f"{key}={given} (" in said and words in said, said


# ---- 5. the Catalog's price box has the filter's bound --------------------------------------

def test_the_catalog_price_box_has_the_filters_bound():
    """The page's copy of the filter's bound (the filter's is private to catalog) stays equal
    to it; read from the source, since importing a page runs it."""
    import ast

    from catalog._query import MAX_PRICE_LIMIT_USD_PER_HOUR

    from .conftest import APP

    tree = ast.parse((APP.parent / "app_pages" / "catalog.py").read_text())
    (bound,) = [ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                and [t.id for t in n.targets if isinstance(t, ast.Name)]
                == ["MAX_PRICE_USD_PER_HOUR"]]
    assert bound == MAX_PRICE_LIMIT_USD_PER_HOUR


def test_a_huge_catalog_price_in_a_link_is_a_warning_not_an_error():
    """It was a red error with a Python float: "got 1000000000000000.0"."""
    at = app("app_pages/catalog.py", offers_max_price="1e15")
    assert_clean(at)
    assert at.number_input(key="offers_max_price").value is None
    said = link_warning(at)
    assert "offers_max_price=1e15" in said and "0.01 to 100,000" in said, said


# ---- 6. Team table rows are not dropped silently ---------------------------------------------

def _tables(jobs_added=(), budgets_added=()):
    at = app("app_pages/team.py")
    at.session_state["team_jobs"] = {"edited_rows": {}, "deleted_rows": [],
                                     "added_rows": list(jobs_added)}
    at.session_state["team_budgets"] = {"edited_rows": {}, "deleted_rows": [],
                                        "added_rows": list(budgets_added)}
    at.run()
    assert not at.exception
    return at


def test_a_job_row_without_a_name_is_named_not_skipped():
    at = _tables(jobs_added=[{"team": "research", "model": "gpt2", "tokens": "1B",
                              "earliest_start": "2027-01-01", "deadline": "2027-01-10",
                              "priority": 1, "max_gpus": 8}])
    (said,) = errors(at)
    assert said.startswith("Jobs table, row 3: the name cell is empty"), said
    assert "To fix:" in said


@pytest.mark.parametrize("row, missing", [({"period": "2027-03"}, "USD"),
                                          ({"usd": 500.0}, "period")])
def test_a_budget_row_half_filled_is_named_not_skipped(row, missing):
    at = _tables(budgets_added=[row])
    (said,) = errors(at)
    assert said.startswith(f"Budgets table, row 2: the {missing} cell is empty"), said
    assert "To fix:" in said


def test_empty_added_rows_are_still_skipped():
    at = _tables(jobs_added=[{}], budgets_added=[{}])
    assert not errors(at)


# ---- 7. user text is not a plotly placeholder ------------------------------------------------

PLACEHOLDER_TEAM = """\
jobs:
  - name: "%{y}job"
    team: "%{x}"
    workload: {model: gpt2, tokens: 1B}
    earliest_start: 2027-03-25
    deadline: 2027-04-30
"""


def test_a_team_name_is_not_read_as_a_hover_placeholder():
    at = upload_team(PLACEHOLDER_TEAM)
    assert_clean(at)
    (bar,) = [t for t in chart(at, "team_burn")["data"] if t["type"] == "bar"]
    # the template holds placeholders only; the team's name travels as data
    assert "%{x}:" in bar["hovertemplate"] and bar["hovertemplate"].count("%{x}") == 1
    assert all(row[2] == "%{x}" for row in bar["customdata"]), bar["customdata"]


def test_a_bad_budget_cell_is_named_by_its_period():
    # the team file's location became "budgets.total" (was "budgets['total']"): the table's
    # words still replace it
    at = app("app_pages/team.py")
    at.session_state["team_budgets"] = {"edited_rows": {0: {"usd": -5.0}}, "deleted_rows": [],
                                        "added_rows": []}
    at.run()
    at.button(key="team_run").click().run()
    assert not at.exception
    (said,) = errors(at)
    assert said.startswith("Budgets table, period total: must be a number of USD")
