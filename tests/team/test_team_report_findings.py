"""What a sweep of `gpuplan report` found: warnings `plan` gives for a job that the team report
dropped, the CSV without quota rows, the team-file field `commitment_use`, and wording (+1 GPUs,
a directory given as the team file). Each job is held to one cloud, accelerator and pricing
model so that plan() evaluates a handful of instance types (seconds)."""

from __future__ import annotations

import csv
import io
import json

import pytest
import yaml

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main
from planner.team import TeamPlanError, allocate_candidates, parse_team_plan

from .conftest import CATALOG_INFO, H100, cand

JOB = {"name": "j1", "clouds": ["aws"], "accelerators": ["H100"], "max_gpus": 64,
       "pricing": ["on_demand"], "workload": {"params": "1B", "tokens": "20B"},
       "earliest_start": "2027-03-01", "deadline": "2027-03-20"}
RESIZED = "hidden 1000 and heads 3 change the model from 1.00B parameters (params) to 0.22B"


def _team(tmp_path, *jobs, **top) -> str:
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"name": "t", "jobs": list(jobs), **top}, sort_keys=False))
    return str(path)


def _job(**changes) -> dict:
    return {**JOB, **changes}


def _report(capsys, *args) -> tuple[int, str, str]:
    code = main(["report", *map(str, args)])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _flat(text: str) -> str:
    """Wrapped terminal text as one line."""
    return " ".join(text.split())


# -- 1. the warnings plan gives for a job are the team report's too ----------------------------

def test_sizes_that_change_the_model_are_warned_and_the_workload_says_the_modelled_size(
        tmp_path, capsys):
    team = _team(tmp_path, _job(workload={"params": "1B", "tokens": "20B", "hidden": 1000,
                                          "heads": 3}))
    code, out, err = _report(capsys, team, "--json")
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    assert any(w.startswith(RESIZED) for w in job["warnings"]), job["warnings"]
    assert "`" not in " ".join(job["warnings"])  # the file's keys, not the CLI's references
    assert "warning: " in err and f"jobs[1] 'j1': {RESIZED}" in _flat(err)
    # labelled "1B params" beside the cost of a 0.22B model, with nothing said
    assert job["workload"] == "1B params (modelled at 0.22B), 20B tokens"
    for fmt, head in (("md", "## Warnings"), ("html", "<h2>Warnings</h2>")):
        code, out, err = _report(capsys, team, "--format", fmt)
        assert code == 0, err
        assert head in out and RESIZED in out.replace("\\_", "_")
        assert out.index(head) < out.index("Assumptions")


def test_a_run_shorter_than_one_step_is_warned(tmp_path, capsys):
    team = _team(tmp_path, _job(workload={"params": "1B", "tokens": 1000}))
    code, out, err = _report(capsys, team, "--json")
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    (said,) = [w for w in job["warnings"] if "shorter than one optimizer step" in w]
    assert "global_batch_tokens would match it" in said  # the workload's key
    assert "shorter than one optimizer step" in _flat(err)


def test_a_flagged_capacity_block_says_its_flag_and_the_block_it_pays(tmp_path, capsys):
    team = _team(tmp_path, _job(pricing=["capacity_block"], allow_flagged=True))
    code, out, err = _report(capsys, team, "--format", "md")
    assert code == 0, err
    md = out.replace("\\_", "_")
    warnings = md[md.index("## Warnings"):md.index("## Assumptions")]
    assert "flagged price used (the job's allow_flagged): expired" in warnings
    assert "commitment: pays 1 × 24 h per instance for a 9.4 h run" in warnings
    assert "flagged price used" in _flat(err) and "commitment: pays 1 × 24 h" in _flat(err)


def test_a_one_year_reservation_says_the_term_it_pays(tmp_path, capsys):
    team = _team(tmp_path, _job(pricing=["reserved_1y"]))
    code, out, err = _report(capsys, team, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    (warning,) = [r for r in rows if r["kind"] == "warning"]
    assert warning["job"] == "j1"
    assert "commitment: pays 1 × 8,760 h per instance" in warning["note"]
    assert "the job's commitment_use 0%" in warning["note"]


def test_a_warning_of_several_jobs_is_said_once_naming_them(tmp_path, capsys):
    resized = {"params": "1B", "tokens": "20B", "hidden": 1000, "heads": 3}
    team = _team(tmp_path, _job(name="a", workload=resized), _job(name="b", workload=resized),
                 _job(name="c"))
    code, out, err = _report(capsys, team, "--format", "md")
    assert code == 0, err
    assert _flat(err).count(RESIZED) == 1
    assert f"jobs[1] 'a' and jobs[2] 'b': {RESIZED}" in _flat(err)
    assert out.count(RESIZED) == 1


def _synthetic(catalog, warnings: list[list[str]], **job):
    jobs = [{**JOB, "name": f"j{i}", **job} for i in range(len(warnings))]
    plan = parse_team_plan({"name": "t", "start_offsets_days": [0], "jobs": jobs},
                           catalog=catalog, source="t.yaml")
    cands = [[{**cand("aws", "us-east-1", H100, 8, 10, 24.0), "warnings": w}] for w in warnings]
    return allocate_candidates(plan, cands, catalog_info=CATALOG_INFO)


def test_every_job_and_many_jobs_are_named_compactly(catalog):
    alloc = _synthetic(catalog, [["x"]] * 6)
    assert alloc.warning_lines() == ["all 6 jobs: x"]
    alloc = _synthetic(catalog, [["x"]] * 6 + [["y"]])
    assert alloc.warning_lines() == [
        "jobs[1] 'j0', jobs[2] 'j1', jobs[3] 'j2', jobs[4] 'j3' and 2 more: x",
        "jobs[7] 'j6': y"]
    assert list(alloc.jobs[-1]["warnings"]) == ["y"]
    # the reports read each job's list: a job dict without one (an older pickle) says nothing
    from planner.reports import render

    assert b"Warnings" not in render(_synthetic(catalog, [[]]), "md")


def test_the_pdf_lists_the_warnings(catalog):
    from planner.reports._pdf import _lines

    lines = _lines(_synthetic(catalog, [["x <y>"]]), None)
    at = lines.index(("h2", "Warnings"))
    assert lines[at + 1] == ("mono", "- jobs[1] 'j0': x <y>")
    assert at < lines.index(("h2", "Assumptions"))


# -- 3. commitment_use: a job's share of its term used after the run ----------------------------

def test_commitment_use_is_a_job_field_passed_to_the_plan(tmp_path, capsys, catalog):
    plan = parse_team_plan({"name": "t", "jobs": [_job(pricing=["reserved_1y"],
                                                       commitment_use=0.5)]}, catalog=catalog)
    assert plan.jobs[0].commitment_use == 0.5
    assert parse_team_plan({"name": "t", "jobs": [JOB]}, catalog=catalog).jobs[0] \
        .commitment_use == 0
    costs = {}
    for use in (0, 0.5):
        team = _team(tmp_path, _job(pricing=["reserved_1y"], commitment_use=use))
        code, out, err = _report(capsys, team, "--json")
        assert code == 0, err
        (job,) = json.loads(out)["jobs"]
        costs[use] = job["cost_usd"]
        assert any(f"the job's commitment_use {use:.0%}" in w for w in job["warnings"])
    assert costs[0.5] == pytest.approx(costs[0] / 2, rel=0.02)  # half the unused term


@pytest.mark.parametrize("value,says", [
    (-0.1, "commitment_use must be a number from 0 to 1"),
    (1.5, "commitment_use must be a number from 0 to 1"),
    ("half", "you will use), got 'half'"),
    (True, "you will use), got true"),
    (None, "commitment_use is empty (the key has no value)")])
def test_a_wrong_commitment_use_is_one_error_naming_the_job(catalog, value, says):
    with pytest.raises(TeamPlanError, match="To fix") as err:
        parse_team_plan({"name": "t", "jobs": [_job(pricing=["reserved_1y"],
                                                    commitment_use=value)]}, catalog=catalog)
    assert str(err.value).startswith("team.yaml: jobs[1] 'j1': ") and says in str(err.value)
    assert "\n" not in str(err.value)


def test_commitment_use_without_a_term_is_refused_as_plan_refuses_it(catalog):
    with pytest.raises(TeamPlanError, match=r"jobs\[1\] 'j1': commitment_use applies to "
                                            r"reserved, committed and capacity-block pricing.*"
                                            r"To fix: add one to pricing"):
        parse_team_plan({"name": "t", "jobs": [_job(commitment_use=0.5)]}, catalog=catalog)


# -- 4. the CSV carries the quotas, the warnings and the assumptions ---------------------------

def test_the_csv_has_quota_and_assumption_rows(golden_allocation):
    from planner.reports import render

    rows = list(csv.DictReader(io.StringIO(render(golden_allocation, "csv").decode())))
    quotas = [r for r in rows if r["kind"] == "quota"]
    assert [(r["scope"], r["month"], int(r["cap_gpus"]), int(r["peak_gpus"])) for r in quotas] \
        == [(q["scope"], q["month"], q["cap_gpus"], q["peak_gpus"])
            for q in golden_allocation.quotas] and quotas
    assert [r["note"] for r in rows if r["kind"] == "assumption"] \
        == list(golden_allocation.assumptions)


# -- 5. wording -----------------------------------------------------------------------------

def test_one_gpu_more_is_singular():
    from planner.team._solve import infeasible_error

    err = infeasible_error(binding=["quota aws/*/* in 2027-03"], proven=True, time_limit_s=60,
                           relaxations=[{"relax": "quotas", "cost_usd": 10.0, "changes": [
                               {"kind": "quota", "scope": "aws/*/*", "month": "2027-03",
                                "cap_gpus": 8, "more_gpus": 1}]}])
    assert "+1 GPU of aws/*/* in 2027-03 (quota 8 → 9)" in str(err)


def test_one_constraint_row_is_singular(catalog):
    from planner.reports._rows import solver_line

    alloc = _synthetic(catalog, [[]])
    assert alloc.solver["rows"] == 1 and alloc.solver["options"] == 1
    assert solver_line(alloc).endswith("; 1 run option, 1 constraint row")


def test_a_directory_as_the_team_file_says_so(tmp_path, capsys):
    code, out, err = _report(capsys, tmp_path)
    assert code == 2 and out == ""
    (line,) = err.strip().splitlines()
    assert line == (f"error: team plan {tmp_path} is a directory. To fix: give the team "
                    "file's path, e.g. examples/team.yaml")
