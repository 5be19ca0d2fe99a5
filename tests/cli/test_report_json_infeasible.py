"""`gpuplan report --json` when no allocation fits: the help promises
`{"infeasible": true, "error", "relaxations"}` on stdout (exit 2) — also when one job cannot
finish alone or a quota is too small for it — while a wrong input stays one error line with
nothing on stdout. A quota too small names the rule and the GPUs the cheapest plan in time
needs, as `plan` does."""

from __future__ import annotations

import json

import yaml

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main

JOB = {"name": "j1", "clouds": ["aws"], "accelerators": ["H100"], "max_gpus": 64,
       "pricing": ["on_demand"], "workload": {"params": "1B", "tokens": "20B"},
       "earliest_start": "2027-03-01", "deadline": "2027-03-20"}


def _report(tmp_path, capsys, data, *args) -> tuple[int, str, str]:
    path = tmp_path / "team.yaml"
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    code = main(["report", str(path), *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err.strip()


def _infeasible(out: str) -> dict:
    data = json.loads(out)
    assert data["infeasible"] is True and set(data) == {"infeasible", "error", "relaxations"}
    return data


def test_a_job_that_cannot_finish_alone_prints_the_infeasible_json(tmp_path, capsys):
    team = {"name": "t", "jobs": [{**JOB, "workload": {"params": "1B", "tokens": "2T"},
                                   "deadline": "2027-03-03"}]}
    code, out, err = _report(tmp_path, capsys, team, "--json")
    assert code == 2
    data = _infeasible(out)
    assert "jobs[1] 'j1': nothing finishes between" in data["error"]
    assert data["relaxations"] == []
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "To fix" in line


def _too_small(rules) -> dict:
    return {"name": "t", "jobs": [{**JOB, "workload": {"params": "1B", "tokens": "100B"},
                                   "deadline": "2027-03-03"}], "quotas": rules}


def test_a_quota_too_small_names_the_rule_and_the_gpus_needed(tmp_path, capsys):
    # a month rule of another scope first: plan()'s own list of caps would number the rule 1
    rules = [{"cloud": "gcp", "gpus": 64, "month": "2027-03"},
             {"cloud": "aws", "accelerator": "H100", "gpus": 12}]
    code, out, err = _report(tmp_path, capsys, _too_small(rules), "--json")
    assert code == 2
    error = _infeasible(out)["error"]
    assert ("the quotas allow too few GPUs for any plan that meets the deadline: quotas[2] "
            "aws/*/H100-SXM5-80GB: gpus 12, and the cheapest plan in time needs 16") in error
    assert "To fix: raise the gpus of quotas[2] to 16 or more" in error
    assert "quotas[1]" not in error
    (line,) = err.splitlines()
    assert line == f"error: {error}"


def test_a_wrong_input_with_json_is_one_line_and_nothing_on_stdout(tmp_path, capsys):
    code, out, err = _report(tmp_path, capsys, {"name": "t", "jobs": [{**JOB, "max_gpus": 0}]},
                             "--json")
    assert code == 2 and out == ""
    (line,) = err.splitlines()
    assert line.startswith("error: ") and "max_gpus" in line and "To fix" in line
