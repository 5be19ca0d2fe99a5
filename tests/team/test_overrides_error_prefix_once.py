"""A team plan's inline override that does not apply names its place once: "team.yaml:
overrides: team.yaml (overrides): prices[1]: …" said the file twice."""

from __future__ import annotations

import pytest

from planner.team import TeamPlanError, parse_team_plan, priced_catalog

from .conftest import team_dict


def test_the_file_is_named_once(catalog):
    data = team_dict(overrides={"prices": [{
        "cloud": "aws", "instance_type": "p5.48xlargee", "region": "us-east-1",
        "pricing": "on_demand", "usd_per_hour": 50.0}]})
    with pytest.raises(TeamPlanError) as err:
        priced_catalog(parse_team_plan(data, catalog=catalog, source="team.yaml"), catalog)
    msg = str(err.value)
    assert msg.count("team.yaml") == 1 and "(overrides): prices[1]" in msg, msg
    assert "p5.48xlarge" in msg and "To fix" in msg
