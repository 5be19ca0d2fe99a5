"""Sweep 23 of `gpuplan report`: short jobs under a shared quota (default start offsets that fit
the window, and a relaxation that names later starts), the start-passed warning in an actuals
report, progress while rendering, CSV rows that add up to the totals, the summary on a
terminal, and small wording (an empty job cell, a huge Δ%, long HTML cells, a huge budget)."""

from __future__ import annotations

import csv
import datetime as dt
import io

import pytest
import yaml

import planner.cli._report_cmds as report_cmds
from planner.cli import main
from planner.reports import parse_actuals, render
from planner.reports._html import CSS
from planner.reports._rows import pct
from planner.team import TeamPlanError, allocate_candidates, check_dates, parse_team_plan

from .conftest import CATALOG_INFO, H100, cand

# the tester's file: two 30B-token jobs in a 5-day window, one 12-GPU quota (8-GPU runs)
SHORT = {"workload": {"model": "llama3-8b", "tokens": "30B"}, "earliest_start": "2027-03-01",
         "deadline": "2027-03-06", "clouds": ["aws"], "regions": ["us-east-1"]}
QUOTA = [{"cloud": "aws", "region": "us-east-1", "gpus": 12}]
SMALL = {"clouds": ["aws"], "accelerators": ["H100"], "max_gpus": 64, "pricing": ["on_demand"],
         "workload": {"params": "1B", "tokens": "20B"}, "earliest_start": "2027-03-01",
         "deadline": "2027-03-20"}


def _file(tmp_path, data: dict) -> str:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return str(path)


def _report(capsys, *args) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, " ".join(cap.err.split())


def _plan(catalog, jobs: list[dict], **top):
    return parse_team_plan({"name": "t", "jobs": jobs, **top}, catalog=catalog,
                           source="t.yaml")


# 1. start offsets ----------------------------------------------------------------------------

@pytest.mark.parametrize(("days", "offsets"), [(5, (0, 1, 2, 3)), (10, (0, 2, 4, 6, 7)),
                                               (14, (0, 3, 6, 7, 9)), (1, (0,)),
                                               (15, (0, 7, 14)), (45, (0, 7, 14))])
def test_default_offsets_fit_the_window(catalog, days, offsets):
    end = (dt.date(2027, 3, 1) + dt.timedelta(days=days)).isoformat()
    plan = _plan(catalog, [{**SMALL, "name": "a", "deadline": end}])
    assert plan.jobs[0].start_offsets_days == offsets


def test_offsets_given_are_kept(catalog):
    short = {**SMALL, "deadline": "2027-03-06"}
    plan = _plan(catalog, [{**short, "name": "a"}, {**short, "name": "b",
                                                    "start_offsets_days": [0, 2]}],
                 start_offsets_days=[0, 3])
    assert [j.start_offsets_days for j in plan.jobs] == [(0, 3), (0, 2)]


@pytest.mark.parametrize("value, fix", [
    (7, "To fix: [0, 7] to start on earliest_start or 7 days later, or [7] for the later start "
        "only"),
    (1, "[0, 1] to start on earliest_start or 1 day later"),
    (0, "To fix: [0] to start on earliest_start only, or e.g. [0, 7]")])
def test_a_bare_number_of_offset_days_is_refused_not_taken_as_one_late_start(catalog, value,
                                                                             fix):
    """`start_offsets_days: 7` planned a start 7 days late only, where "up to 7" was meant
    (hostile sweep): a list is asked for, with both readings."""
    with pytest.raises(TeamPlanError, match=r"start_offsets_days: is one number") as exc:
        _plan(catalog, [{**SMALL, "name": "a", "start_offsets_days": value}])
    assert fix in str(exc.value)


def test_short_jobs_sharing_a_quota_are_staggered_by_default(catalog):
    """Two 40-hour 8-GPU runs in a 5-day window under a 12-GPU quota: one after the other."""
    plan = _plan(catalog, [{**SMALL, "name": n, "deadline": "2027-03-06"} for n in "ab"],
                 quotas=[{"cloud": "aws", "gpus": 12}])
    cands = [[cand("aws", "us-east-1", H100, 8, 40, 24.0)]] * 2
    alloc = allocate_candidates(plan, cands, catalog_info=CATALOG_INFO)
    assert sorted(j["start_offset_days"] for j in alloc.jobs)[0] == 0
    assert sorted(j["start_offset_days"] for j in alloc.jobs)[1] >= 2


def test_tester_file_is_feasible_without_offsets(tmp_path, capsys):
    team = _file(tmp_path, {"jobs": [{**SHORT, "name": "q1"}, {**SHORT, "name": "q2"}],
                            "quotas": QUOTA})
    code, out, err = _report(capsys, team, "--format", "csv")
    assert code == 0, err
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["kind"] == "job"]
    assert len(rows) == 2 and {r["start"][:10] for r in rows} != {"2027-03-01"}


def test_infeasible_quota_names_later_starts(tmp_path, capsys):
    team = _file(tmp_path, {"start_offsets_days": [0],
                            "jobs": [{**SHORT, "name": "q1"}, {**SHORT, "name": "q2"}],
                            "quotas": QUOTA})
    code, out, err = _report(capsys, team, "--format", "md")
    assert code == 2 and out == ""
    assert "start_offsets_days that start 'q2' + " in err, err
    assert "To fix: add those start offsets to the jobs' start_offsets_days" in err


# 2. the start-passed warning with actuals ----------------------------------------------------

def test_no_start_passed_warning_for_a_job_with_spending(catalog):
    plan = _plan(catalog, [{**SMALL, "name": "a"}, {**SMALL, "name": "b"}],
                 start_offsets_days=[0])
    today = dt.date(2027, 3, 10)
    said = check_dates(plan, today=today, past_ok=True, spent={"a": {}},
                       spent_source="act.csv")
    assert not any("'a'" in w for w in said)
    (b,) = said
    assert "if it has started, add its spending to act.csv" in b
    plain = check_dates(plan, today=today)  # no actuals: as before
    assert all("To fix: move earliest_start to 2027-03-10 or later" in w for w in plain)


# 3. progress while rendering -----------------------------------------------------------------

def _alloc(catalog, n: int = 1, usd: float = 24.0, wall: float = 10.0):
    plan = _plan(catalog, [{**SMALL, "name": f"j{i}", "team": f"t{i % 3}"} for i in range(n)],
                 start_offsets_days=[0])
    return allocate_candidates(plan, [[cand("aws", "us-east-1", H100, 8, wall, usd)]] * n,
                               catalog_info=CATALOG_INFO)


def test_pdf_render_reports_each_page(catalog):
    heard = []
    render(_alloc(catalog, 60), "pdf", progress=lambda d, t: heard.append((d, t)))
    total = heard[0][1]
    assert heard[0] == (0, total) and heard[-1] == (total, total) and total >= 4
    assert [d for d, _ in heard] == list(range(total + 1))


def test_report_shows_a_rendering_step(tmp_path, capsys, monkeypatch):
    from contextlib import contextmanager

    steps = []

    @contextmanager
    def recorded():
        yield lambda task, done, total, detail="": steps.append((task, done, total))

    monkeypatch.setattr(report_cmds, "progress_on_stderr", recorded)
    team = _file(tmp_path, {"start_offsets_days": [0], "jobs": [{**SMALL, "name": "a"}]})
    code, _, err = _report(capsys, team, "--out", tmp_path / "r.md")
    assert code == 0, err
    assert ("rendering the report", 1, 1) in steps


# 4. CSV rows add up --------------------------------------------------------------------------

def test_csv_job_rows_add_up_to_the_totals(catalog):
    # 8 GPUs × 0.0855 h at $0.915/GPU-h: $0.626 a job, 0.684 GPU-hours
    alloc = _alloc(catalog, 500, usd=7.3216, wall=0.0855)
    rows = list(csv.DictReader(io.StringIO(render(alloc, "csv").decode())))
    jobs = [r for r in rows if r["kind"] == "job"]
    (total,) = [r for r in rows if r["kind"] == "total"]
    for key, tol in (("cost_usd", 0.01), ("gpu_hours", 0.01)):
        assert abs(sum(float(r[key]) for r in jobs) - float(total[key])) <= tol, key
        teams = [r for r in rows if r["kind"] == "team"]
        assert abs(sum(float(r[key]) for r in teams) - float(total[key])) <= tol, key


# 5. the summary on a terminal ----------------------------------------------------------------

def test_terminal_gets_the_summary_and_a_pipe_the_markdown(tmp_path, capsys, monkeypatch):
    team = _file(tmp_path, {"start_offsets_days": [0], "jobs": [{**SMALL, "name": "a"}]})
    code, piped, err = _report(capsys, team)
    assert code == 0, err
    assert piped.startswith("# GPU budget")
    monkeypatch.setattr(report_cmds, "_stdout_is_terminal", lambda: True)
    code, shown, err = _report(capsys, team)
    assert code == 0, err
    assert "# GPU budget" not in shown and "| --- |" not in shown
    assert "1 job, $" in shown and "nodes" in shown
    assert "hint: the full report" in err and "--format md" in err
    code, md, err = _report(capsys, team, "--format", "md")  # asked for by name: Markdown
    assert code == 0 and md.startswith("# GPU budget")


def test_report_help_says_so(capsys):
    main(["report", "--help"])
    said = " ".join(capsys.readouterr().out.replace("│", " ").split())
    assert "with neither --out nor --format" in said


# 6. small wording ----------------------------------------------------------------------------

def test_empty_job_cell_is_said(catalog):
    plan = _plan(catalog, [{**SMALL, "name": "a"}], start_offsets_days=[0])
    with pytest.raises(TeamPlanError) as exc:
        parse_actuals("job,gpu_hours,cost_usd\n,5,5\n", plan)
    assert "row 2: the job cell is empty. To fix:" in str(exc.value)
    assert "''" not in str(exc.value)


def test_huge_delta_is_readable():
    assert pct(2396.0) == "×2,397"
    assert pct(1.6e14) == "×~2×10^14"
    assert pct(0.5) == "+50.0%" and pct(-0.25) == "-25.0%"


def test_html_cells_wrap_long_names():
    assert "td{overflow-wrap:anywhere}" in CSS


def test_huge_budget_is_shown_compactly(catalog):
    with pytest.raises(TeamPlanError) as exc:
        _plan(catalog, [{**SMALL, "name": "a"}], budgets={"total": 1e13})
    assert "got 10,000,000,000,000." in str(exc.value)
    assert "10000000000000.0" not in str(exc.value)
