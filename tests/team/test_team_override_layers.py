"""A team file's inline overrides on top of --overrides or GPUPLAN_OVERRIDES (`gpuplan report`)
follow one file's rules (catalog/_override_layers.py): the company's aws 10 % stated in both
is refused naming both places, where it priced 19 % off without a word; a team's discount
leaves a rate the overrides file holds as it is (5.0, not 4.5)."""

from __future__ import annotations

import json

import pytest
import yaml

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main

# one small job that only p5.4xlarge (1 H100, list $6.88/h) in us-east-1 can run
TEAM = {"name": "layers", "jobs": [{
    "name": "tiny", "workload": {"params": "125M", "tokens": "1B"}, "clouds": ["aws"],
    "regions": ["us-east-1"], "pricing": ["on_demand"], "accelerators": ["H100"],
    "max_gpus": 1, "earliest_start": "2027-03-01", "deadline": "2027-04-15"}],
    "overrides": {"discounts": [{"cloud": "aws", "percent": 10}]}}
RATE = ("prices: [{cloud: aws, instance_type: p5.4xlarge, region: us-east-1, pricing: on_demand, "
        "usd_per_hour: 5.0}]\n")


@pytest.fixture
def files(tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump(TEAM))
    discount = tmp_path / "ov.yaml"
    discount.write_text("discounts: [{cloud: aws, percent: 10}]\n")
    rate = tmp_path / "rate.yaml"
    rate.write_text(RATE)
    return team, discount, rate


def _report(team, overrides, by: str, monkeypatch) -> list[str]:
    """`gpuplan report TEAM --json` with ``overrides`` given ``by`` the flag or the variable."""
    if by == "GPUPLAN_OVERRIDES":
        monkeypatch.setenv("GPUPLAN_OVERRIDES", str(overrides))
        return ["report", str(team), "--json"]
    return ["report", str(team), "--json", "--overrides", str(overrides)]


@pytest.mark.parametrize("by", ["--overrides", "GPUPLAN_OVERRIDES"])
def test_one_discount_in_the_overrides_file_and_the_team_file_is_refused(by, files, monkeypatch,
                                                                          capsys):
    team, discount, _ = files
    assert main(_report(team, discount, by, monkeypatch)) == 2
    err = capsys.readouterr().err
    assert (f"{team} (overrides): discounts[1]: the same scope (cloud aws) as {discount}: "
            "discounts[1], so which percent applies is ambiguous. To fix: keep one of them"
            in err), err


@pytest.mark.parametrize("by", ["--overrides", "GPUPLAN_OVERRIDES"])
def test_the_team_discount_leaves_the_overrides_files_rate_alone(by, files, monkeypatch, capsys):
    team, _, rate = files
    assert main(_report(team, rate, by, monkeypatch)) == 0
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert (job["instance_type"], job["usd_per_hour"]) == ("p5.4xlarge", 5.0)


def test_without_the_rate_the_team_discount_applies_once(files, capsys):
    team, _, _ = files
    assert main(["report", str(team), "--json"]) == 0
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert job["usd_per_hour"] == pytest.approx(6.88 * 0.9)
