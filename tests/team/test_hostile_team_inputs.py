"""Regression tests for what a fuzz run of `gpuplan report` found (inputs like
/tmp/fuzz/cases/team/big500.yaml, toml.toml, excl_typo.yaml). Each test is named after the
bug it pins; all run offline in seconds (jobs are restricted to one cloud and accelerator, or
the MILP gets synthetic candidates from conftest)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from time_limit import time_limit

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main
from planner.search import QuotaRule
from planner.team import (
    AllocationInfeasibleError,
    Options,
    TeamPlanError,
    allocate_candidates,
    load_team_plan,
    parse_team_plan,
    solve,
)

from .conftest import CATALOG_INFO, H100, cand

EPOCH = dt.date(2027, 3, 1)
SMALL_JOB = {"name": "j1", "clouds": ["aws"], "accelerators": ["H100"], "max_gpus": 64,
             "pricing": ["on_demand"], "workload": {"params": "1B", "tokens": "20B"},
             "earliest_start": "2027-03-01", "deadline": "2027-03-20"}


def _write(tmp_path, data, name="team.yaml"):
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return path


def _report(args, capsys) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err.strip()


def _one_error_line(err: str) -> str:
    assert len(err.splitlines()) == 1, err
    assert err.startswith("error: ") and "To fix" in err and "Traceback" not in err
    return err


# -- 1. 500 identical jobs × 32 offsets: 209 s, 2.7 GB, then a 10 KB error line -------------

def _identical_team(n_jobs: int, offsets: int = 32, budgets=None) -> dict:
    return {"name": "identical", "start_offsets_days": list(range(offsets)),
            "jobs": [{**SMALL_JOB, "name": f"j{i}"} for i in range(n_jobs)],
            "budgets": budgets or {}}


def test_identical_jobs_are_listed_once_in_the_milp(catalog):
    """500 copies of a job share one set of run options (an integer count per option), so the
    programme has one job's columns, not 500 × as many binaries, and still one plan per job."""
    one = [cand("aws", "us-east-1", H100, 64, 100, 24.0),
           cand("aws", "us-east-1", H100, 32, 180, 24.0),
           cand("gcp", "us-central1", "A100-SXM4-80GB", 64, 150, 10.0)]
    plan = parse_team_plan({**_identical_team(500), "quotas": [
        {"cloud": "aws", "gpus": 640}]}, catalog=catalog, source="big.yaml")
    with time_limit(120, "the MILP over 500 identical jobs did not finish"):  # minutes before
        alloc = allocate_candidates(plan, [one] * 500, catalog_info=CATALOG_INFO)
    assert alloc.solver["options"] <= 3 * 32  # one job's options, not 500 × 96
    assert len(alloc.jobs) == 500 and alloc.solver["optimal"]
    # every job has its own plan; together they respect the quota (at most 10 × 64 on aws)
    assert all(q["peak_gpus"] <= q["cap_gpus"] for q in alloc.quotas)
    starts = [j["start"] for j in alloc.jobs]
    assert starts == sorted(starts)  # a group's jobs take its runs earliest start first


def test_500_identical_jobs_report_quickly_with_a_short_error(tmp_path, capsys):
    # (the jobs run 2027-03-01 to 03-20: an April budget is now refused as limiting nothing)
    team = _identical_team(500, budgets={"2027-03": 2_000})
    out = tmp_path / "budget.html"
    with time_limit(120, "the report did not finish"):  # 209 s and 2.7 GB before
        code, _, err = _report([_write(tmp_path, team), "--out", out, "--workers", "1"], capsys)
    assert code == 2 and not out.exists()
    err = _one_error_line(err)
    assert len(err) < 800, len(err)  # ~10 KB before: 420 "drop job" clauses
    assert "… and" in err and "more" in err
    assert err.count("drop job") <= 1


@pytest.mark.parametrize("n_drop", [3, 12])
def test_an_infeasible_plan_names_a_handful_of_jobs_to_drop_then_how_many_more(n_drop):
    # n_drop + 1 jobs, each needing all of a 64-GPU quota at the same time: drop all but one
    n = n_drop + 1
    opts = Options(job=np.arange(n), cost_usd=np.full(n, 100.0), gpus=np.full(n, 64.0),
                   start_hours=np.zeros(n), end_hours=np.full(n, 10.0),
                   scope=(("aws", "us-east-1", H100),) * n)
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(opts, job_names=[f"job-{i}" for i in range(n)], epoch=EPOCH,
              quotas=[QuotaRule(gpus=64, cloud="aws")])
    msg = str(err.value)
    drops = next(r for r in err.value.relaxations if r["relax"] == "jobs")["changes"]
    assert len(drops) == n_drop  # the record lists every job …
    if n_drop > 4:  # … the line only a few
        assert f"drop {n_drop} jobs: " in msg and f"… and {n_drop - 4} more" in msg
        assert msg.count("'job-") == 4
    else:
        assert msg.count("drop job") == n_drop
    assert "To fix" in msg


@st.composite
def grouped_instances(draw):
    """Groups of identical jobs: their options once (``job_group``) or once per job."""
    sizes = [draw(st.integers(1, 3)) for _ in range(draw(st.integers(1, 3)))]
    rows = []
    for g in range(len(sizes)):
        for _ in range(draw(st.integers(1, 3))):
            start = draw(st.integers(0, 40)) * 24
            rows.append((g, float(draw(st.integers(1, 50)) * 100), draw(st.sampled_from([8, 32])),
                         start, start + draw(st.integers(1, 30)) * 24))
    cap = draw(st.sampled_from([32, 48, 64]))
    budget = float(draw(st.integers(1, 30)) * 500)
    return sizes, rows, cap, budget


def _opts(rows, job_of_row) -> Options:
    _, cost, gpus, start, end = zip(*rows, strict=True)
    return Options(job=np.array(job_of_row), cost_usd=np.array(cost),
                   gpus=np.array(gpus, float), start_hours=np.array(start, float),
                   end_hours=np.array(end, float), scope=(("aws", "us-east-1", H100),) * len(rows),
                   delay_days=np.zeros(len(rows)))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_instances())
def test_grouping_identical_jobs_gives_the_same_cost_as_one_binary_per_job(instance):
    sizes, rows, cap, budget = instance
    jobs = [g for g, n in enumerate(sizes) for _ in range(n)]
    names = [f"j{i}" for i in range(len(jobs))]
    expanded = [r for j, g in enumerate(jobs) for r in rows if r[0] == g]
    job_of_row = [j for j, g in enumerate(jobs) for r in rows if r[0] == g]
    kw = {"job_names": names, "epoch": EPOCH, "quotas": [QuotaRule(gpus=cap, cloud="aws")],
          "budgets": {"total": budget}}
    results = []
    for options, extra in ((_opts(rows, [r[0] for r in rows]), {"job_group": jobs}),
                           (_opts(expanded, job_of_row), {})):
        try:
            sol = solve(options, **kw, **extra)
            results.append(("ok", round(sol.cost_usd, 6), len(sol.choice)))
        except AllocationInfeasibleError as exc:
            drops = [r for r in exc.relaxations if r["relax"] == "jobs"]
            results.append(("infeasible", len(drops[0]["changes"]) if drops else None))
    assert results[0] == results[1]


def test_too_many_distinct_jobs_times_start_offsets_are_refused_before_planning(
        catalog, tmp_path, capsys):
    team = {"start_offsets_days": list(range(32)),
            "jobs": [{**SMALL_JOB, "name": f"j{i}",
                      "workload": {"params": "1B", "tokens": f"{20 + i}B"}} for i in range(130)]}
    out = tmp_path / "r.md"
    with time_limit(60, "the team plan was planned instead of refused"):
        code, _, err = _report([_write(tmp_path, team), "--out", out], capsys)
    assert code == 2 and not out.exists()
    err = _one_error_line(err)
    assert "130 distinct jobs with 4,160 start offsets" in err and "at most 4,000" in err
    assert "start_offsets_days" in err
    # identical jobs count once: 500 copies × 32 offsets are fine
    parse_team_plan(_identical_team(500), catalog=catalog, source="x.yaml")


# -- 2. `--out -` wrote a file named '-' -------------------------------------------------------

def test_out_dash_writes_the_report_to_stdout_not_a_file_named_dash(tmp_path, capsys,
                                                                    monkeypatch):
    monkeypatch.chdir(tmp_path)
    team = _write(tmp_path, {"jobs": [SMALL_JOB]})
    code, out, err = _report([team, "--out", "-"], capsys)
    assert code == 0, err
    assert out.startswith("# GPU budget") and "wrote" not in err
    assert not (tmp_path / "-").exists()
    code, out, _ = _report([team, "--out", "-", "--format", "csv"], capsys)
    assert code == 0 and out.startswith("kind,job,")
    assert not (tmp_path / "-").exists()


def test_a_pdf_to_stdout_only_into_a_pipe_never_onto_a_terminal(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.chdir(tmp_path)
    team = _write(tmp_path, {"jobs": [SMALL_JOB]})
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, err = _report([team, "--out", "-", "--format", "pdf"], capsys)
    assert code == 2 and out == "" and "not a terminal" in _one_error_line(err)
    assert not (tmp_path / "-").exists()


# -- 3. contradictory --json/--format/--out were silently accepted -----------------------------

@pytest.mark.parametrize(("args", "says"), [
    (["--json", "--format", "html"], "--format html does nothing with --json alone"),
    (["--out", "r.pdf", "--format", "md"], "has suffix .pdf (format pdf) but --format is md"),
    (["--out", "r.xyz"], "has suffix '.xyz', so the report's format is unknown"),
    (["--json", "--out", "-"], "--json and --out - both write to stdout"),
])
def test_contradictory_format_options_are_refused_before_planning(tmp_path, capsys,
                                                                  monkeypatch, args, says):
    monkeypatch.chdir(tmp_path)
    # a team plan that would take long to plan: the check must come first
    team = _write(tmp_path, {"jobs": [{**SMALL_JOB, "clouds": None, "accelerators": None,
                                       "max_gpus": 4096, "pricing": None}]})
    before = set(tmp_path.iterdir())
    with time_limit(30, "the team plan was planned before the options were checked"):
        code, out, err = _report([team, *args], capsys)
    assert code == 2 and out == ""
    assert says in _one_error_line(err)
    assert set(tmp_path.iterdir()) == before  # nothing written


def test_an_explicit_format_may_name_a_file_with_another_suffix(tmp_path, capsys):
    team = _write(tmp_path, {"jobs": [SMALL_JOB]})
    code, _, err = _report([team, "--out", tmp_path / "r.txt", "--format", "csv"], capsys)
    assert code == 0, err
    assert (tmp_path / "r.txt").read_text().startswith("kind,job,")
    code, _, err = _report([team, "--out", tmp_path / "budget"], capsys)  # no suffix: md
    assert code == 0, err
    assert (tmp_path / "budget").read_text().startswith("# GPU budget")


# -- 4. team-file messages that pointed the wrong way ------------------------------------------

def test_an_all_zero_quota_says_the_quota_allows_no_gpus(tmp_path, capsys):
    team = _write(tmp_path, {"quotas": [{"gpus": 0}], "jobs": [SMALL_JOB]})
    code, _, err = _report([team, "--out", tmp_path / "r.md"], capsys)
    assert code == 2 and not (tmp_path / "r.md").exists()
    err = _one_error_line(err)
    assert "the quotas allow no GPUs" in err and "*/*/*: gpus 0" in err
    assert "move the deadline later" not in err and "0.0 days" not in err


def test_a_misspelled_exclude_names_the_job_and_key_not_the_cli_flag(catalog, tmp_path,
                                                                     capsys):
    data = {"jobs": [{**SMALL_JOB, "exclude": ["p5.48xlarg"]}]}
    with pytest.raises(TeamPlanError) as err:  # found while reading the file, before planning
        parse_team_plan(data, catalog=catalog, source="team.yaml")
    assert str(err.value).startswith("team.yaml: jobs[1] 'j1': exclude: unknown instance type, "
                                     "cloud or region 'p5.48xlarg'. Did you mean 'p5.48xlarge'")
    code, _, line = _report([_write(tmp_path, data)], capsys)
    assert code == 2 and "jobs[1] 'j1': exclude:" in _one_error_line(line)
    assert "--exclude" not in line


def test_max_gpus_too_small_names_the_jobs_max_gpus_key_not_the_flag(tmp_path, capsys):
    job = {**SMALL_JOB, "max_gpus": 1, "workload": {"model": "llama3-405b", "tokens": "1T"}}
    code, _, err = _report([_write(tmp_path, {"jobs": [job]})], capsys)
    assert code == 2
    err = _one_error_line(err)
    assert "jobs[1] 'j1'" in err and "raise the job's max_gpus" in err
    assert "--max-gpus" not in err and "--recompute" not in err


def test_a_toml_team_file_is_told_to_be_yaml(tmp_path, capsys):
    toml = ('[[jobs]]\nname="j1"\nworkload={model="gpt2", tokens="1B"}\n'
            'earliest_start=2027-03-01\ndeadline=2027-04-01\n')
    code, _, err = _report([_write(tmp_path, toml, "team.toml")], capsys)
    assert code == 2
    err = _one_error_line(err)
    assert "looks like TOML; a team file must be YAML" in err and "README" in err
    assert "document start" not in err
    # key = value alone parses as a YAML string: still told it is TOML, not "expected a mapping"
    code, _, err = _report([_write(tmp_path, 'name = "x"\n', "t2.toml")], capsys)
    assert code == 2 and "must be YAML" in err


def test_broken_yaml_that_is_not_toml_keeps_the_yaml_message(tmp_path, capsys):
    code, _, err = _report([_write(tmp_path, "jobs:\n  - name: [j1\n")], capsys)
    assert code == 2 and "TOML" not in err and "YAML" in _one_error_line(err)


# -- 5. numbers in exponent form (YAML 1.1 reads 1e13 as a string) ------------------------------

def test_numbers_in_exponent_form_are_numbers(catalog):
    text = """
min_probability: 9e-1
jobs:
  - name: j1
    workload: {params: 1B, tokens: 2e10, seq_len: 2.048e3}
    earliest_start: 2027-03-01
    deadline: 2027-04-01
    max_gpus: 6.4E1
    priority: 1e0
quotas:
  - {cloud: aws, gpus: 1e3}
budgets:
  total: 1e6
  "2027-03": 2.5E+5
overrides:
  discounts:
    - {cloud: aws, percent: 1e1}
"""
    plan = load_team_plan(text, catalog=catalog)
    job = plan.jobs[0]
    assert (job.max_gpus, job.priority, job.min_probability) == (64, 1, 0.9)
    assert job.workload.seq_len == 2048
    assert dict(plan.budgets) == {"total": 1e6, "2027-03": 2.5e5}
    assert plan.quotas[0].gpus == 1000
    assert plan.overrides.discounts[0].percent == 10


@pytest.mark.parametrize(("field", "value"), [
    ("budgets", {"total": "1e400"}), ("budgets", {"total": "nan"}),
    ("budgets", {"total": "inf"}), ("budgets", {"total": "1e3x"}),
    ("budgets", {"total": "1e13"}),  # a number now, but over the 1e12 limit
    ("min_probability", "2e0"), ("max_gpus", "1.5e0"),
])
def test_exponent_form_still_refuses_nan_inf_garbage_and_out_of_range(catalog, field, value):
    data = {"jobs": [dict(SMALL_JOB)]}
    if field == "max_gpus":
        data["jobs"][0]["max_gpus"] = value
    else:
        data[field] = value
    with pytest.raises(TeamPlanError) as err:
        parse_team_plan(data, catalog=catalog, source="team.yaml")
    assert "To fix" in str(err.value)


# -- 6. a budget under $1 was shown as "$0" ----------------------------------------------------

def test_a_budget_under_one_dollar_is_shown_in_cents():
    from planner.reports._rows import usd

    opts = Options(job=np.array([0]), cost_usd=np.array([2.0]), gpus=np.array([8.0]),
                   start_hours=np.array([0.0]), end_hours=np.array([5.0]),
                   scope=(("aws", "us-east-1", H100),))
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(opts, job_names=["a"], epoch=EPOCH, budgets={"total": 0.5})
    msg = str(err.value)
    assert "+$2.00 in total (budget $0.50 → $2.50)" in msg
    assert "budget $0 " not in msg  # was "budget $0"
    with pytest.raises(AllocationInfeasibleError) as err:  # short by less than $1: in cents
        solve(opts, job_names=["a"], epoch=EPOCH, budgets={"total": 1.75})
    assert "+$0.25 in total (budget $1.75 → $2.00)" in str(err.value)  # cents below $100
    assert (usd(0.5), usd(-0.25), usd(0), usd(1234.4), usd(None)) == \
        ("$0.50", "-$0.25", "$0", "$1,234", "—")


def test_money_below_a_cent_is_not_shown_as_zero():
    from planner.model import format_usd

    assert [format_usd(x) for x in (0.001, 0.5, -0.25, 12_345.6, 0.0)] == [
        "$0.001", "$0.50", "-$0.25", "$12,346", "$0"]
    # an actual cost of $0.00001 read "$1e-05" in a report's table (review, 2026-12-07)
    assert [format_usd(x) for x in (1e-5, 1e-300, -1e-7, 0.0015)] == [
        "<$0.001", "<$0.001", ">-$0.001", "$0.0015"]


def test_a_huge_difference_from_plan_is_a_short_percentage():
    from planner.reports._rows import pct

    # $1e12 spent against a $62 plan printed +1597356488309491200.0%
    assert pct(1.6e14) == "×~2×10^14"  # beyond +10,000%: times the plan (sweep 23)
    assert pct(-0.5) == "-50.0%" and pct(0.0) == "0.0%" and pct(None) == "—"


def test_spot_instances_stacked_by_the_allocation_get_a_capacity_warning(catalog):
    # 500 identical jobs were all put on spot p5 in one region at once, with no note; `plan`
    # warns above DEFAULT_MAX_SPOT_INSTANCES for a single job
    spot = [cand("aws", "eu-north-1", H100, 32, 24.0, 50.0, pricing="spot")]  # 4 nodes
    plan = parse_team_plan(_identical_team(3, offsets=1), catalog=catalog, source="t.yaml")
    alloc = allocate_candidates(plan, [spot] * 3, catalog_info=CATALOG_INFO)
    warned = [a for a in alloc.assumptions if a.startswith("Capacity")]
    assert warned == [warned[0]] and "up to 12 spot h100.8x in aws eu-north-1 at once" in \
        warned[0], alloc.assumptions
    two = parse_team_plan(_identical_team(2, offsets=1), catalog=catalog, source="t.yaml")
    alloc = allocate_candidates(two, [spot] * 2, catalog_info=CATALOG_INFO)
    assert not [a for a in alloc.assumptions if a.startswith("Capacity")]  # 8: the limit


@pytest.mark.parametrize("kw", [dict(time_limit_s=-1), dict(time_limit_s=float("nan")),
                                dict(time_limit_s="5"), dict(workers=0), dict(workers=2.5),
                                dict(workers=True), dict(progress=5), dict(assumptions="x")])
def test_allocate_checks_its_own_arguments_before_planning(kw):
    # time_limit_s=-1 reached HiGHS, which warned and ignored it; workers=0 was taken
    from catalog import load_catalog
    from planner import PlannerError
    from planner.team import allocate, parse_team_plan

    cat = load_catalog()
    team = parse_team_plan({"jobs": [{"name": "a", "workload": {"params": "1B",
                                                                  "tokens": "1B"},
                                      "earliest_start": "2027-03-01",
                                      "deadline": "2027-03-20"}]}, catalog=cat)
    with pytest.raises(PlannerError, match="To fix"):
        allocate(team, catalog=cat, **kw)


def test_an_underflowing_exponent_is_refused_not_read_as_zero():
    # "1e-400" became 0.0, and a min_probability of 0 turns the requirement off
    from catalog import load_catalog
    from planner.team import TeamPlanError, parse_team_plan

    job = {"name": "a", "workload": {"params": "1B", "tokens": "1B"}, "min_probability": "1e-400",
           "earliest_start": "2027-03-01", "deadline": "2027-03-20"}
    with pytest.raises(TeamPlanError, match="1e-400"):
        parse_team_plan({"jobs": [job]}, catalog=load_catalog())


@pytest.mark.parametrize("key, top", [("clouds", False), ("regions", False),
                                      ("pricing", False), ("accelerators", False),
                                      ("exclude", False), ("min_probability", False),
                                      ("budgets", True), ("quotas", True), ("overrides", True),
                                      ("min_probability", True), ("name", True)])
def test_a_key_left_empty_is_refused_not_read_as_left_out(tmp_path, capsys, key, top):
    """`clouds:` whose items were commented out read as the key left out: the job was planned
    on every cloud (and `budgets:` as no budget), exit 0 — the very case an empty list is
    refused for."""
    job = {k: v for k, v in SMALL_JOB.items() if k != key}
    data = {"jobs": [job]}
    text = yaml.safe_dump(data, sort_keys=False)
    text = f"{key}:\n{text}" if top else \
        text.replace("- name: j1\n", f"- name: j1\n  {key}:\n")
    path = _write(tmp_path, text)
    assert yaml.safe_load(text)[key] is None if top else \
        yaml.safe_load(text)["jobs"][0][key] is None
    code, out, err = _report([path, "--out", tmp_path / "r.md"], capsys)
    assert code == 2 and out == ""
    line = _one_error_line(err)
    assert f"{key} is empty (the key has no value)" in line and "remove the key" in line
    assert not (tmp_path / "r.md").exists()


def test_names_that_read_the_same_are_one_name(tmp_path, capsys, catalog):
    """Jobs "café" (é) and "café" (e + U+0301) were two jobs shown alike, and an actuals row
    with one spelling went to one of them without a word."""
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    jobs = [{**SMALL_JOB, "name": composed}, {**SMALL_JOB, "name": decomposed}]
    code, _, err = _report([_write(tmp_path, {"jobs": jobs}), "--out", tmp_path / "r.md"],
                           capsys)
    assert code == 2 and "name already used by jobs[1] (written with other Unicode" in err
    twice = [{**SMALL_JOB, "name": decomposed}, {**SMALL_JOB, "name": decomposed}]
    code, _, err = _report([_write(tmp_path, {"jobs": twice}), "--out", tmp_path / "r.md"],
                           capsys)  # the same characters: not "other Unicode characters"
    assert code == 2 and "name already used by jobs[1]. To fix" in err
    plan = parse_team_plan({"jobs": [{**SMALL_JOB, "name": decomposed}]}, catalog=catalog,
                           source="t.yaml")
    from planner.reports import load_actuals

    spent = load_actuals(f"job,gpu_hours,cost_usd\n{composed},1,2\n", plan)
    assert spent == {decomposed: {"gpu_hours": 1.0, "cost_usd": 2.0}}


def test_the_fix_for_a_slow_job_never_asks_for_a_deadline_that_is_refused(tmp_path, capsys):
    """"To fix: move the deadline later (the fastest plan needs 8,894.7 days)": a deadline
    that late is refused (a job's window spans at most 10 years)."""
    job = {**SMALL_JOB, "workload": {"model": "llama3-70b", "tokens": "15T"}, "max_gpus": 8,
           "accelerators": ["B200"], "deadline": "2027-03-02"}
    code, _, err = _report([_write(tmp_path, {"jobs": [job]}), "--out", tmp_path / "r.md"],
                           capsys)
    assert code == 2 and "move the deadline later" not in err, err
    assert "raise the job's max_gpus (the fastest plan within it needs" in err
    assert "more than the 3,653 a job's window may span" in err


def test_a_quota_month_outside_the_years_of_job_dates_is_refused(tmp_path, capsys):
    """`month: "1999-03"` was accepted and held no month any job can run in (budgets and
    dates outside 2000–2200 are refused)."""
    team = {"jobs": [SMALL_JOB], "quotas": [{"cloud": "aws", "gpus": 8, "month": "1999-03"}]}
    code, _, err = _report([_write(tmp_path, team), "--out", tmp_path / "r.md"], capsys)
    assert code == 2
    assert "quotas[1]: month 1999-03: the year is outside 2000–2200" in _one_error_line(err)


@pytest.mark.parametrize(("entry", "says"), [
    ("quotas: [{cloud: aws, gpus: yes}]", "gpus must be a whole number from 0 to 1,000,000, "
                                          "got true."),
    ("quotas: [{cloud: aws}]", "got null."),
    ("quotas: [{cloud: [aws, gcp], gpus: 8}]", "cloud: expected a name, got [aws, gcp]."),
    ("budgets: {~: 100}", "budgets.null: not a period."),
    ("overrides: {discounts: {cloud: aws, percent: 10}}",
     "discounts: expected a list of entries, got {cloud: aws, percent: 10}."),
])
def test_quota_budget_and_override_values_are_shown_as_the_file_writes_them(tmp_path, capsys,
                                                                            entry, says):
    """Python's spelling came back: "got True", "got None", "got ['aws', 'gcp']",
    "budgets.None", "got dict"."""
    text = yaml.safe_dump({"jobs": [SMALL_JOB]}, sort_keys=False) + entry + "\n"
    code, _, err = _report([_write(tmp_path, text), "--out", tmp_path / "r.md"], capsys)
    assert code == 2 and says in _one_error_line(err), err


@pytest.mark.parametrize("key", ["cloud", "region", "accelerator", "month"])
def test_a_quota_rule_key_with_no_value_is_refused(tmp_path, capsys, key):
    """`month:` with no value held in every month; `cloud:` with none made a rule over every
    cloud (gpus 0 blocked them all) — a key left empty read as a key left out."""
    text = yaml.safe_dump({"jobs": [SMALL_JOB]}, sort_keys=False) + \
        f"quotas:\n- gpus: 0\n  {key}:\n" + ("  cloud: aws\n" if key != "cloud" else "")
    code, _, err = _report([_write(tmp_path, text), "--out", tmp_path / "r.md"], capsys)
    assert code == 2
    assert f"quotas[1]: {key} is empty (the key has no value)" in _one_error_line(err)


def test_days_just_past_the_window_are_not_rounded_onto_it():
    """3,653.3 days read "needs 3,653 days, more than the 3,653 a job's window may span"."""
    from types import SimpleNamespace

    from planner.team._allocate import _why_nothing

    said = _why_nothing(SimpleNamespace(quotas=None), SimpleNamespace(window_hours=24.0),
                        {"reason": "no candidate finishes in time", "fastest_days": 3653.3})
    assert "needs 3,654 days, more than the 3,653" in said


@pytest.mark.parametrize("tokens", ["1,000B", "1,000,000M"])
def test_a_thousands_comma_inside_braces_is_said_as_such(tmp_path, capsys, tokens):
    """`workload: {model: llama3-8b, tokens: 1,000B}` read "unknown field '000B'. To fix: use
    one of model, config, …", where the same value on its own line says it is no count
    (review, 2026-12-07): in a YAML flow mapping the comma separates fields."""
    path = _write(tmp_path, f"name: t\njobs:\n  - name: a\n    workload: {{model: llama3-8b, "
                            f"tokens: {tokens}}}\n    earliest_start: 2027-03-01\n"
                            "    deadline: 2027-04-15\n")
    code, _, err = _report([path], capsys)
    assert code == 2
    assert "a comma separates fields, so a number written with a thousands comma (e.g. 1,000B) " \
        "was cut in two. To fix: write it without the comma (1000B), or quote it" \
        in _one_error_line(err), err


def test_a_file_of_thousands_of_jobs_is_told_the_most_a_plan_holds(catalog):
    """9,000 one-line jobs (under the 1 MiB limit) stopped at the YAML node count with "split it
    into smaller files": files of 5,000 jobs would fail again (hostile sweep, 2026-12-08)."""
    job = ("  - {name: j%d, workload: {model: gpt2, tokens: 1B}, earliest_start: 2027-03-01, "
           "deadline: 2027-04-01}\n")
    text = "name: t\njobs:\n" + "".join(job % i for i in range(9_000))
    with pytest.raises(TeamPlanError, match="split it into team files of at most 500 jobs each"):
        load_team_plan(text, catalog=catalog)
