"""The Team page's inputs: a job whose deadline has passed is refused (as the Plan page refuses
a past deadline), and the edited tables' errors speak of their rows, cells and tables, not of
a team file ("table: …", "in the team plan", "jobs[1]")."""

from __future__ import annotations

import datetime as dt
import os

from ._apptest import app, errors, upload_team

PAST_TEAM = """\
jobs:
  - name: last-year
    workload: {model: gpt2, tokens: 1B}
    earliest_start: 2020-01-01
    deadline: 2020-02-01
"""


def edited(row: dict, at_row: int = 0) -> dict:
    return {"edited_rows": {at_row: row}, "deleted_rows": [], "added_rows": []}


def run_table(jobs: dict | None = None, budgets: dict | None = None):
    at = app("app_pages/team.py")
    if jobs is not None:
        at.session_state["team_jobs"] = jobs
    if budgets is not None:
        at.session_state["team_budgets"] = budgets
    at.run()
    at.button(key="team_run").click().run()
    assert not at.exception
    return at


def test_a_job_whose_window_is_in_the_past_is_refused_not_allocated():
    """It was allocated at today's prices, while the Plan page refuses a past deadline."""
    at = run_table(edited({"earliest_start": "2020-01-01", "deadline": "2020-02-01"}))
    (said,) = errors(at)
    assert said.startswith("Jobs table, row 1 (pretrain-1.5b): deadline 2020-02-01 is in the "
                           "past"), said
    assert "To fix: give a future date" in said
    assert not at.metric and not at.get("plotly_chart")


def test_a_deadline_today_is_in_the_past():
    """A deadline is 00:00 UTC of its day, as on the Plan page: today's has passed (today:
    GPUPLAN_TODAY, pinned by the tests' conftest)."""
    today = dt.date.fromisoformat(os.environ["GPUPLAN_TODAY"])
    at = run_table(edited({"earliest_start": str(today - dt.timedelta(days=10)),
                           "deadline": str(today)}, at_row=1))
    (said,) = errors(at)
    assert said.startswith(f"Jobs table, row 2 (ablation-small): deadline {today} is in the "
                           "past"), said


def test_a_start_that_has_passed_is_said_and_the_job_still_allocated():
    """A window that began before today was scheduled from its start, in the past, with no
    word; the CLI's `report` says it the same way (planner.team.check_dates)."""
    today = dt.date.fromisoformat(os.environ["GPUPLAN_TODAY"])
    at = run_table(edited({"earliest_start": str(today - dt.timedelta(days=3)),
                           "deadline": str(today + dt.timedelta(days=40))}, at_row=1))
    assert not errors(at) and at.metric
    (said,) = [w.value.replace("\\", "") for w in at.warning]
    assert said.startswith(f"Jobs table, row 2 (ablation-small): earliest_start "
                           f"{today - dt.timedelta(days=3)} has passed"), said
    assert f"To fix: move earliest_start to {today} or later" in said


def test_a_wrong_today_in_the_environment_is_one_error(monkeypatch):
    monkeypatch.setenv("GPUPLAN_TODAY", "tomorrow")
    at = app("app_pages/team.py").run()
    assert not at.exception
    (said,) = errors(at)
    assert "GPUPLAN_TODAY='tomorrow' is not a date" in said and "YYYY-MM-DD" in said


def test_a_team_file_with_a_past_deadline_names_the_job():
    at = upload_team(PAST_TEAM)
    assert not at.exception
    (said,) = errors(at)
    assert said.startswith("team.yaml: jobs[1] 'last-year': deadline 2020-02-01 is in the "
                           "past"), said
    assert "To fix: give a future date" in said


def test_an_allocation_over_the_budget_speaks_of_the_budgets_table():
    """It said "table: no allocation meets every quota and budget … To fix: raise that quota
    or budget in the team plan, …": the page has tables, and no quotas."""
    at = run_table(budgets=edited({"usd": 1.0}))
    (said,) = errors(at)
    assert not said.startswith("table:") and "team plan" not in said, said
    assert "quota" not in said, said
    assert "no allocation meets every budget" in said and "budget total" in said
    assert "Budgets table" in said and "To fix:" in said


def test_a_repeated_job_name_names_the_earlier_row():
    at = run_table(edited({"name": "pretrain-1.5b"}, at_row=1))
    (said,) = errors(at)
    assert said.startswith("Jobs table, row 2 (pretrain-1.5b): name already used by row 1"), \
        said
    assert "jobs[" not in said


def test_an_unknown_model_suggests_only_what_the_model_cell_takes():
    """The table has a model cell only: "or config config.json, or params" are a team file's
    other workload keys."""
    at = run_table(edited({"model": "gpt5"}))
    (said,) = errors(at)
    assert said.startswith("Jobs table, row 1 (pretrain-1.5b): workload: unknown model preset "
                           "'gpt5'"), said
    assert "config.json" not in said and "params" not in said, said


def test_too_many_rows_speak_of_the_table():
    from app_pages._team_words import table_words

    said = table_words("table: 602 jobs; at most 500 are allowed in one plan. To fix: split "
                       "the plan into several files")
    assert said == ("the Jobs table has 602 jobs; at most 500 are allowed in one plan. To fix: "
                    "delete rows")
