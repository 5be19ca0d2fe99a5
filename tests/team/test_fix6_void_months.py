"""A budget month or quarter, or a quota month, in which no job of the plan can run limits
nothing: almost always a typo in the year ("2026-03" for "2027-03"), which left the month meant
unlimited, silently. It is refused, naming the span the jobs run in and the same month a year
off when a job runs then. A month any job's window touches, even for a day, stays accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

from planner.team import TeamPlanError, load_team_plan, parse_team_plan

from .conftest import team_dict

# team_dict's jobs run from 2027-03-01 (the first earliest_start) to 2027-05-15 (the last
# deadline): months 2027-03 … 2027-05.
SPAN = "the jobs run from 2027-03-01 to 2027-05-15 (months 2027-03 to 2027-05)"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "team.yaml"


def _error(catalog, data) -> str:
    with pytest.raises(TeamPlanError) as err:
        parse_team_plan(data, catalog=catalog, source="team.yaml")
    msg = str(err.value)
    assert "\n" not in msg and "To fix: " in msg
    return msg


def _ok(catalog, data):
    return parse_team_plan(data, catalog=catalog, source="team.yaml")


def _job(name: str, start: str, deadline: str, **more) -> dict:
    return {"name": name, "workload": {"params": "1B", "tokens": "20B"},
            "earliest_start": start, "deadline": deadline, **more}


def test_a_budget_month_a_year_before_the_jobs_is_refused_with_the_month_meant(catalog):
    msg = _error(catalog, team_dict(budgets={"2026-03": 50_000, "2027Q2": 100_000}))
    assert msg == (
        f"team.yaml: budgets.2026-03: no job can run in 2026-03: {SPAN}, so this budget would "
        "limit nothing. Did you mean \"2027-03\"? To fix: budget a month or quarter the jobs run "
        "in, or remove this one")


def test_a_budget_month_after_every_deadline_is_refused_without_a_guess(catalog):
    msg = _error(catalog, team_dict(budgets={"2027-06": 50_000}))
    assert msg.startswith("team.yaml: budgets.2027-06: no job can run in 2027-06: ")
    assert SPAN in msg and "Did you mean" not in msg  # no 2027-06 in another year either


@pytest.mark.parametrize(("quarter", "shown", "meant"), [
    ("2026Q2", "2026Q2 (2026-04 to 2026-06)", "2027Q2"),
    ("2026q1", "2026Q1 (2026-01 to 2026-03)", "2027Q1"),  # the key as written is named
    ("2027Q3", "2027Q3 (2027-07 to 2027-09)", None),
])
def test_a_quarter_no_job_runs_in_is_refused(catalog, quarter, shown, meant):
    msg = _error(catalog, team_dict(budgets={"2027-03": 50_000, quarter: 100_000}))
    assert msg.startswith(f"team.yaml: budgets.{quarter}: no job can run in {shown}: {SPAN}")
    assert ("Did you mean" in msg) == (meant is not None)
    if meant:
        assert f'Did you mean "{meant}"?' in msg


def test_a_quota_month_no_job_runs_in_is_refused(catalog):
    quotas = [{"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 96},
              {"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 256,
               "month": "2028-04"}]
    msg = _error(catalog, team_dict(quotas=quotas))
    assert msg == (
        f"team.yaml: quotas[2]: month 2028-04: no job can run in 2028-04: {SPAN}, so this quota "
        "would limit nothing. Did you mean \"2027-04\"? To fix: give a month the jobs run in, or "
        "remove the rule")


def test_months_a_window_touches_even_partly_are_accepted(catalog):
    # sft-70b runs until 2027-05-15: May is touched for two weeks; 2027Q1 holds March
    quotas = [{"cloud": "aws", "gpus": 96, "month": m} for m in ("2027-03", "2027-05")]
    plan = _ok(catalog, team_dict(quotas=quotas, budgets={
        "2027-03": 1, "2027-05": 2, "2027Q1": 3, "2027Q2": 4, "total": 5}))
    assert [p for p, _ in plan.budgets] == ["2027-03", "2027-05", "2027Q1", "2027Q2", "total"]
    assert [q.month for q in plan.quotas] == ["2027-03", "2027-05"]


def test_a_deadline_on_the_first_ends_the_span_in_the_month_before(catalog):
    # a job ends by 00:00 UTC on its deadline: a deadline of 2027-05-01 never runs in May
    data = {"jobs": [_job("a", "2027-03-20", "2027-05-01", min_probability=0)]}
    assert _ok(catalog, {**data, "budgets": {"2027-04": 1}}).budgets == (("2027-04", 1.0),)
    msg = _error(catalog, {**data, "budgets": {"2027-05": 1}})
    assert "the jobs run from 2027-03-20 to 2027-05-01 (months 2027-03 to 2027-04)" in msg


def test_start_offsets_move_the_start_not_the_deadline(catalog):
    # the earliest run starts 7 days after earliest_start: 2027-04-01, so March is void; the
    # largest offset (40 days, after the deadline) adds no start and moves no end
    job = _job("a", "2027-03-25", "2027-05-10", start_offsets_days=[7, 14, 40])
    msg = _error(catalog, {"jobs": [job], "budgets": {"2027-03": 1}})
    assert "the jobs run from 2027-04-01 to 2027-05-10 (months 2027-04 to 2027-05)" in msg
    assert _ok(catalog, {"jobs": [job], "budgets": {"2027-05": 1, "2027Q2": 2}})
    # with a start on earliest_start itself, March is touched (for a week)
    assert _ok(catalog, {"jobs": [{**job, "start_offsets_days": [0, 14]}],
                         "budgets": {"2027-03": 1}})


def test_a_low_min_probability_lets_runs_and_their_cost_pass_the_deadline(catalog):
    # below 0.5 a run may be expected to end after the deadline (docs/team.md), and its cost
    # accrues to the months it runs in: a later month is not void; an earlier one still is
    job = _job("a", "2027-03-01", "2027-04-01", min_probability=0.3)
    assert _ok(catalog, {"jobs": [job], "budgets": {"2027-06": 1}})
    msg = _error(catalog, {"jobs": [job], "budgets": {"2027-02": 1}})
    assert "from 2027-03-01 on (a min_probability below 0.75 lets a run end after" in msg
    # from 0.5 a log-normal's mean can still pass the deadline (P 0.55: σ > 0.25, the
    # default's 0.264): that job's later months are not refused either
    late = _job("a", "2027-03-01", "2027-04-01", min_probability=0.55)
    assert _ok(catalog, {"jobs": [late], "budgets": {"2027-04": 1}})


def test_the_message_names_each_stretch_the_jobs_run_in(catalog):
    jobs = [_job("a", "2027-01-10", "2027-02-20"), _job("b", "2027-02-01", "2027-03-01"),
            _job("c", "2027-09-01", "2027-10-15")]
    msg = _error(catalog, {"jobs": jobs, "budgets": {"2027Q2": 1}})
    assert ("the jobs run from 2027-01-10 to 2027-03-01 (months 2027-01 to 2027-02), and from "
            "2027-09-01 to 2027-10-15 (months 2027-09 to 2027-10)") in msg
    assert "Did you mean" not in msg  # no job runs in any year's Q2


def test_a_team_file_with_a_mistyped_year_is_refused_and_the_example_is_valid(catalog, tmp_path):
    assert load_team_plan(EXAMPLE, catalog=catalog).budgets  # "2027-03", "2027Q2", total
    text = EXAMPLE.read_text(encoding="utf-8").replace('"2027-03": 150000', '"2026-03": 150000')
    bad = tmp_path / "team.yaml"
    bad.write_text(text, encoding="utf-8")
    (tmp_path / "llama-3.2-1b").mkdir()
    (tmp_path / "llama-3.2-1b" / "config.json").write_bytes(
        (EXAMPLE.parent / "llama-3.2-1b" / "config.json").read_bytes())
    with pytest.raises(TeamPlanError) as err:
        load_team_plan(bad, catalog=catalog)
    assert "budgets.2026-03: no job can run in 2026-03: the jobs run from 2027-03-01 to " \
           "2027-06-30 (months 2027-03 to 2027-06)" in str(err.value)
    assert 'Did you mean "2027-03"?' in str(err.value)


def test_the_month_meant_is_one_a_plan_may_name_and_before_a_deadline(catalog):
    # a job in 2200 (the last year a team plan may name): "Did you mean 2201-03?" was refused
    job = _job("a", "2200-06-01", "2200-12-01", min_probability=0.5)
    msg = _error(catalog, {"jobs": [job], "budgets": {"2200-03": 5}})
    assert "2201" not in msg
    # an open span (a low min_probability) is no reason to guess a month after every deadline
    # ("2027-02" for a job of 2027-03-20 to 05-01 was told "Did you mean 2028-02?")
    job = _job("a", "2027-03-20", "2027-05-01", min_probability=0.5)
    msg = _error(catalog, {"jobs": [job], "budgets": {"2027-02": 1}})
    assert "Did you mean" not in msg
    msg = _error(catalog, {"jobs": [job], "budgets": {"2026-04": 1}})
    assert 'Did you mean "2027-04"?' in msg
