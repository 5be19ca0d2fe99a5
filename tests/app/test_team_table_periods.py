"""The Team page's Budgets table: a period in two rows is refused whatever its case (2027q1 and
2027Q1 were two rows to the table's check and then told in the file's words, "the same period
as budgets.2027q1"), and a period no job runs in is told to delete its row (it said "remove
this one", a file's words)."""

from __future__ import annotations

from ._apptest import app, errors


def _with_rows(*rows: dict, run: bool = False):
    at = app("app_pages/team.py")
    at.session_state["team_budgets"] = {"edited_rows": {}, "deleted_rows": [],
                                        "added_rows": list(rows)}
    at.run()
    if run:  # the plan is parsed, against the jobs' dates, when it is allocated
        at.button(key="team_run").click().run(timeout=120)
    assert not at.exception
    return errors(at)


def test_a_quarter_in_two_rows_in_two_cases_is_told_as_a_table():
    said = _with_rows({"period": "2027q1", "usd": 5.0}, {"period": "2027Q1", "usd": 6.0})
    assert said and "the period '2027Q1' is in an earlier row too (as '2027q1'). To fix: " \
        "keep one row per period" in said[0], said
    assert "budgets." not in said[0]


def test_a_period_no_job_runs_in_is_told_to_delete_its_row():
    said = _with_rows({"period": "2001-01", "usd": 5.0}, run=True)
    assert said and "Budgets table, period 2001-01: no job can run in 2001-01" in said[0], said
    assert said[0].endswith("or delete its row") and "remove this one" not in said[0]


def test_total_in_two_cases_is_one_period_as_the_planner_reads_it():
    said = _with_rows({"period": "total", "usd": 5.0}, {"period": "Total", "usd": 6.0})
    assert said and "Budgets table, row 2: the period" in said[0], said
    assert "is in an earlier row too" in said[0]


def test_a_month_and_a_quarter_are_not_the_same_period():
    assert not _with_rows({"period": "2027-01", "usd": 5.0}, {"period": "2027Q1", "usd": 6.0})
