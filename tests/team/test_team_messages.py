"""What a team plan's errors say (hostile sweep): misspelt keys name the closest one (inline
overrides too), 1e400 is quoted as written (not "inf"), !!binary and !!set values are named
rather than shown as Python, `overrides: {}` is refused, and a quota error's fix names the team
plan being read, not `plan --quota-file`'s file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main
from planner.team import TeamPlanError, load_team_plan

JOB = """jobs:
  - name: a
    workload: {model: llama3-8b, tokens: 1T}
    earliest_start: 2027-03-01
    deadline: 2027-04-15
"""


def _error(catalog, extra: str) -> str:
    with pytest.raises(TeamPlanError) as info:
        load_team_plan(JOB + extra, catalog=catalog)
    message = str(info.value)
    assert "\n" not in message and "To fix:" in message
    return message


@pytest.mark.parametrize("extra,says", [
    # inline overrides said "unknown field(s) ['usd_per_hourr']; allowed: [...]"
    ("overrides: {prices: [{cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
     "pricing: on_demand, usd_per_hourr: 3}]}\n",
     "team.yaml: overrides: prices[1]: unknown field 'usd_per_hourr'. Did you mean "
     "'usd_per_hour'? To fix: use one of cloud, instance_type"),
    # and "expected only the keys 'discounts' and 'prices'"
    ("overrides: {price: []}\n",
     "team.yaml: overrides: unknown field 'price'. Did you mean 'prices'?"),
    # these already named the closest key: kept so
    ("quota: [{cloud: aws, gpus: 4}]\n", "unknown field 'quota'. Did you mean 'quotas'?"),
    ("quotas: [{cloud: aws, gpu: 4}]\n", "unknown field 'gpu'. Did you mean 'gpus'?"),
    ("    max_gpu: 4\n", "unknown field 'max_gpu'. Did you mean 'max_gpus'?"),
])
def test_a_misspelt_key_names_the_closest_one(catalog, extra, says):
    message = _error(catalog, extra)
    assert says in message and "['" not in message


@pytest.mark.parametrize("extra,says", [
    ("    max_gpus: 1e400\n", "max_gpus must be a whole number >= 1 and <= 65,536, got 1e400."),
    ("    priority: -1e400\n", "at most 1,000,000), got -1e400."),
    ("    min_probability: 1e400\n", "makes no finish certain), got 1e400."),
    ("budgets: {total: 1e400}\n", "<= 1,000,000,000,000, got 1e400."),
    ("quotas: [{cloud: aws, gpus: 1e400}]\n", "from 0 to 1,000,000, got 1e400."),
    ("overrides: {discounts: [{cloud: aws, percent: 1e400}]}\n",
     "100 would make prices $0), got 1e400."),
])
def test_a_number_beyond_a_float_is_quoted_as_written(catalog, extra, says):
    message = _error(catalog, extra)  # each said "got inf" (or "-inf")
    assert says in message and "inf" not in message


@pytest.mark.parametrize("extra,says", [
    ("    team: !!binary aGVsbG8=\n", "team must be a non-empty string, got a binary value "
                                      "(!!binary)."),
    ("    clouds: !!set {aws, gcp}\n", "clouds: expected a list of names, got a set "
                                       "(!!set {aws, gcp})."),
    ("    max_gpus: !!set {8, 16}\n", "got a set (!!set {16, 8})."),
])
def test_yaml_binary_and_set_values_are_named_not_shown_as_python(catalog, extra, says):
    message = _error(catalog, extra)  # they said "got b'hello'", "got {'gcp', 'aws'}"
    assert says in message and "b'" not in message and "'aws'" not in message


def test_empty_inline_overrides_are_refused(catalog):
    # `overrides: {}` priced nothing, yet the report said overrides were applied
    assert _error(catalog, "overrides: {}\n") == (
        "team.yaml: overrides: has no entries under 'discounts' or 'prices', so it would "
        "change no price. To fix: add entries, e.g. discounts: [{cloud: aws, percent: 10}] "
        "(format: `gpuplan offers --help`, --overrides), or remove the overrides: key")
    assert "has no entries" in _error(catalog, "overrides: {prices: []}\n")
    # no value at all is refused too (its entries commented out), as `{}` is
    assert "overrides is empty (the key has no value)" in _error(catalog, "overrides:\n")


@pytest.mark.parametrize("quotas,says", [
    ("quotas: 5\n", "team.yaml: 'quotas' must be a list of rules such as {cloud: aws, gpus: "
                    "64}. To fix: correct quotas in team.yaml (format: docs/team.md)"),
    ("quotas: [{cloud: 5, gpus: 4}]\n", "To fix: correct quotas in team.yaml (format: "
                                        "docs/team.md)"),
    ("quotas: [{cloud: aws, gpu: 4}]\n", "To fix: use one of cloud, region, accelerator, gpus, "
                                         "month (format: docs/team.md)"),
])
def test_a_quota_error_names_the_team_plan_not_a_quota_file(catalog, quotas, says):
    # the fix said "correct the quota file (format: `gpuplan plan --help`, `quota_file`)",
    # a file that `gpuplan report` never reads
    message = _error(catalog, quotas)
    assert message.endswith(says) and "quota file" not in message and "quota_file" not in message


def test_the_cli_names_the_file_it_reads(tmp_path, capsys):
    path = tmp_path / "plan.yaml"
    path.write_text(JOB + "quotas: 5\n")
    assert main(["report", str(path), "--format", "md"]) == 2
    err = capsys.readouterr().err
    assert f"To fix: correct quotas in {path} (format: docs/team.md)" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("name, says", [
    ("[a, b]", "got [a, b]"), ("{a: 1}", "got {a: 1}"), ("true", "got true"),
])
def test_a_job_name_of_another_type_is_quoted_as_yaml_writes_it(catalog, name, says):
    # "got ['a', 'b']", "got {'a': 1}", "got True": Python's spelling, not the file's
    with pytest.raises(TeamPlanError) as info:
        load_team_plan(JOB.replace("name: a", f"name: {name}"), catalog=catalog)
    message = str(info.value)
    assert says in message and "['" not in message and "True" not in message


def test_a_budget_is_located_as_the_file_writes_its_key(catalog):
    # "budgets['total']" was Python's subscript
    with pytest.raises(TeamPlanError) as info:
        load_team_plan(JOB + "budgets: {total: -5}\n", catalog=catalog)
    assert "team.yaml: budgets.total: must be a number" in str(info.value)


def test_a_report_says_the_constants_and_measurements_that_changed_it():
    # `--assume restart_minutes=600` doubled a report's cost and the report never said so;
    # nor did it name the probe measurements it used
    from planner.model import Assumptions
    from planner.team._allocate import _inputs_said

    line = "matmul bf16: measured 679.7 TFLOP/s instead of the datasheet default 792.6"
    jobs = [{"accelerator": "H200-SXM-141GB", "calibration": [line]},
            {"accelerator": "H200-SXM-141GB", "calibration": [line]},  # said once
            {"accelerator": "H100-SXM5-80GB", "calibration": []}]
    said = _inputs_said(Assumptions().with_overrides(restart_minutes=600), jobs)
    assert said[0].startswith("Set with `assume`: restart_minutes = 600 (default ")
    assert said[1] == ("Measured on your instances (`gpuplan probe show`), used instead of "
                       f"datasheet figures: H200-SXM-141GB {line}.")
    assert _inputs_said(Assumptions(), jobs[2:]) == []


H200_RUN = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / \
    "gpu_check_h200_2026-12-04" / "probe-report.json"


@pytest.mark.parametrize(("accelerators", "measured"), [("[H200]", True), ("[H100]", False)])
def test_only_the_measurements_the_chosen_plans_used_are_said(tmp_path, capsys, accelerators,
                                                              measured):
    """An H200 probe report stored, a job placed on H100: the report said its figures were
    "used instead of datasheet figures" (review, 2026-12-07); the plan had read none."""
    assert main(["probe", "ingest", str(H200_RUN)]) == 0
    path = tmp_path / "plan.yaml"
    path.write_text("name: t\njobs:\n  - name: a\n    workload: {model: gpt2, tokens: 10B}\n"
                    f"    accelerators: {accelerators}\n    earliest_start: 2027-03-01\n"
                    "    deadline: 2027-04-15\n")
    capsys.readouterr()
    assert main(["report", str(path), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    said = [a for a in out["assumptions"] if a.startswith("Measured on your instances")]
    assert bool(said) == measured == bool(out["jobs"][0]["calibration"]), said
    if measured:
        assert said[0].startswith("Measured on your instances (`gpuplan probe show`), used "
                                  "instead of datasheet figures: H200-SXM-141GB matmul bf16: "
                                  "measured 679.7 TFLOP/s"), said


def test_the_cli_report_lists_an_assumed_constant(tmp_path, capsys):
    path = tmp_path / "plan.yaml"
    path.write_text(JOB)
    assert main(["report", str(path), "--format", "md", "--workers", "1",
                 "--assume", "restart_minutes=600"]) == 0
    assert "Set with `assume`: restart_minutes = 600" in capsys.readouterr().out.replace("\\", "")
