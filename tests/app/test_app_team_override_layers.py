"""The Team page layers GPUPLAN_OVERRIDES and the uploaded plan's inline overrides as
`gpuplan report` does (catalog/_override_layers.py): one discount in both is refused naming
both places; a team discount leaves the file's rate as it is."""

from __future__ import annotations

import yaml

from ._apptest import errors, plain, upload_team

TEAM = {"name": "layers", "jobs": [{
    "name": "tiny", "workload": {"params": "125M", "tokens": "1B"}, "clouds": ["aws"],
    "regions": ["us-east-1"], "pricing": ["on_demand"], "accelerators": ["H100"],
    "max_gpus": 1, "earliest_start": "2027-03-01", "deadline": "2027-04-15"}],
    "overrides": {"discounts": [{"cloud": "aws", "percent": 10}]}}


def test_a_discount_in_gpuplan_overrides_and_the_team_plan_is_refused(tmp_path, monkeypatch):
    ov = tmp_path / "ov.yaml"
    ov.write_text("discounts: [{cloud: aws, percent: 10}]\n")
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(ov))
    at = upload_team(yaml.safe_dump(TEAM))
    assert not at.exception
    (said,) = errors(at)
    assert (f"team.yaml (overrides): discounts[1]: the same scope (cloud aws) as {ov}: "
            "discounts[1], so which percent applies is ambiguous") in said, said


def test_a_team_discount_leaves_the_gpuplan_overrides_rate_alone(tmp_path, monkeypatch):
    ov = tmp_path / "rate.yaml"
    ov.write_text("prices: [{cloud: aws, instance_type: p5.4xlarge, region: us-east-1, "
                  "pricing: on_demand, usd_per_hour: 5.0}]\n")
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(ov))
    at = upload_team(yaml.safe_dump(TEAM))
    assert not at.exception and not errors(at), errors(at)
    (job,) = at.table[0].value.to_dict("records")  # the Jobs table
    assert (plain(job["Instance type"]), plain(job["$/instance-h"])) == ("p5.4xlarge",
                                                                         "$5.0000")
