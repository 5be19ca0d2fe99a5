"""Team plan validation: every error names the job (1-based index and name) and the field,
and says what to do."""

from __future__ import annotations

import pytest
import yaml

from planner.reports import load_actuals
from planner.team import TeamPlanError, load_team_plan, parse_team_plan

from .conftest import team_dict


def _job(**changes) -> dict:
    job = {"name": "pretrain-70b", "team": "research",
           "workload": {"model": "llama3-70b", "tokens": "2T"},
           "earliest_start": "2027-03-01", "deadline": "2027-05-01"}
    job.update(changes)
    return job


def _error(catalog, data) -> str:
    with pytest.raises(TeamPlanError) as err:
        parse_team_plan(data, catalog=catalog, source="team.yaml")
    return str(err.value)


def _third(catalog, **changes) -> str:
    data = team_dict()
    data["jobs"] = data["jobs"][:2] + [_job(**changes)]
    return _error(catalog, data)


def test_clouds_and_pricing_are_taken_as_people_write_them(catalog):
    data = team_dict()
    data["jobs"] = data["jobs"][:2] + [_job(clouds=["AWS"], pricing="On-Demand, SPOT")]
    job = parse_team_plan(data, catalog=catalog, source="team.yaml").jobs[2]
    assert job.clouds == ("aws",) and job.pricing == ("on_demand", "spot")


@pytest.mark.parametrize(("key", "value", "kind"), [
    ("clouds", [], "cloud"), ("clouds", " , ", "cloud"), ("regions", [], "region"),
    ("pricing", [], "pricing model"), ("accelerators", "", "accelerator")])
def test_an_empty_allow_list_is_refused_not_read_as_every_one(catalog, key, value, kind):
    # `clouds: []` planned the job on every cloud — what leaving the key out means
    msg = _third(catalog, **{key: value})
    assert msg == (f"team.yaml: jobs[3] 'pretrain-70b': {key}: is empty, which would allow "
                   f"no {kind} at all. To fix: list at least one {kind}, or leave the key "
                   f"out to allow every {kind}")


def test_an_empty_exclusion_list_excludes_nothing(catalog):
    data = team_dict()
    data["jobs"] = data["jobs"][:2] + [_job(exclude=[])]
    assert parse_team_plan(data, catalog=catalog, source="team.yaml").jobs[2].exclude == ()


def test_deadline_before_earliest_start(catalog):
    msg = _third(catalog, deadline="2027-02-01")
    assert msg.startswith("team.yaml: jobs[3] 'pretrain-70b': deadline 2027-02-01 is before "
                          "earliest_start 2027-03-01. To fix:")


@pytest.mark.parametrize(("changes", "expected"), [
    ({"deadlin": "2027-05-01"}, "jobs[3] 'pretrain-70b': unknown field 'deadlin'. Did you "
                                "mean 'deadline'?"),
    ({"earliest_start": "March"}, "jobs[3] 'pretrain-70b': earliest_start: 'March' is not a date"),
    ({"clouds": ["aws", "oracle"]}, "jobs[3] 'pretrain-70b': clouds: unknown cloud 'oracle'"),
    ({"pricing": ["spt"]},
     "jobs[3] 'pretrain-70b': pricing: unknown pricing model 'spt'. Did you mean 'spot'"),
    ({"pricing": ["On-Demnd"]},  # as written (it echoed 'on_demnd'), matched as spelled
     "pricing: unknown pricing model 'On-Demnd'. Did you mean 'on_demand'"),
    ({"accelerators": ["H1000"]}, "jobs[3] 'pretrain-70b': accelerators: unknown GPU 'H1000'"),
    ({"max_gpus": 0}, "jobs[3] 'pretrain-70b': max_gpus must be a whole number >= 1"),
    ({"priority": "high"}, "jobs[3] 'pretrain-70b': priority must be a whole number"),
    ({"min_probability": 1.5}, "jobs[3] 'pretrain-70b': min_probability: must be a number in"),
    ({"min_probability": 1}, "min_probability: must be a number in (0, 1) (0: no probability "
                             "asked; 1 is never met"),
    ({"start_offsets_days": [0, -7]}, "jobs[3] 'pretrain-70b': start_offsets_days: must be a "
                                      "list of at most 32 whole days"),
    ({"workload": {"model": "llama3-8b", "tokens": "lots"}},
     "jobs[3] 'pretrain-70b': workload: tokens 'lots' is not a count"),
    ({"workload": {"tokens": "1T"}}, "jobs[3] 'pretrain-70b': workload: give exactly one of"),
    ({"workload": {"model": "llama3-8b", "layerz": 3}},
     "jobs[3] 'pretrain-70b': workload: unknown field 'layerz'. Did you mean 'layers'?"),
    ({"workload": {"model": "llama-9"}}, "jobs[3] 'pretrain-70b': workload:"),
])
def test_job_field_errors_name_job_and_field(catalog, changes, expected):
    msg = _third(catalog, **changes)
    assert expected in msg
    assert "To fix" in msg


def test_missing_fields_and_duplicates(catalog):
    job = _job()
    del job["deadline"]
    assert "jobs[1] 'pretrain-70b': missing 'deadline'" in _error(catalog, {"jobs": [job]})
    assert "jobs[1]: 'name' is required" in _error(catalog, {"jobs": [{"team": "x"}]})
    msg = _error(catalog, {"jobs": [_job(), _job()]})
    assert "jobs[2] 'pretrain-70b': name already used by jobs[1]" in msg


@pytest.mark.parametrize(("changes", "expected"), [
    ({"budgets": {"March": 100}}, "budgets.March: not a period"),
    ({"budgets": {"2027Q2": -5}}, "budgets.2027Q2: must be a number of USD >= 0"),
    # one quarter written twice was two budgets; a year 1 budget planned $0 silently
    ({"budgets": {"2027Q1": 150000, "2027q1": 100}},
     "budgets.2027q1: the same period as budgets.2027Q1. To fix: keep one of them"),
    ({"budgets": {"0001-03": 100}}, "budgets.0001-03: the year is outside 2000–2200"),
    ({"quotas": [{"cloud": "aws", "gpus": 8, "month": "2027-13"}]},
     "quotas[1]: month: '2027-13' is not a month"),
    ({"quotas": [{"cloud": "aws", "region": "us-east-9", "gpus": 8}]},
     "quotas[1]: unknown aws region 'us-east-9'. Did you mean 'us-east-2', 'us-east-1'"),
    ({"quotas": [{"cloud": "aws", "gpus": -1}]}, "quotas[1]: gpus must be a whole number"),
    ({"overrides": {"discounts": [{"cloud": "aws", "percent": 150}]}},
     "team.yaml: overrides: discounts[1]: percent must be a number"),
    ({"start_offsets_days": "soon"}, "team.yaml: start_offsets_days: must be a list"),
    ({"jbos": []}, "unknown field 'jbos'. Did you mean 'jobs'?"),
])
def test_plan_level_errors_name_the_field(catalog, changes, expected):
    assert expected in _error(catalog, team_dict(**changes))


def test_example_file_parses(catalog):
    from pathlib import Path

    path = Path(__file__).parents[2] / "examples" / "team.yaml"
    plan = load_team_plan(path, catalog=catalog)
    assert len(plan.jobs) >= 3 and plan.budgets and plan.quotas and plan.overrides


def test_yaml_text_and_bad_yaml(catalog):
    plan = load_team_plan(yaml.safe_dump(team_dict()), catalog=catalog)
    assert [j.name for j in plan.jobs][0] == "pretrain-8b"
    with pytest.raises(TeamPlanError, match=r"team.yaml: invalid YAML at line 3, column 1"):
        load_team_plan("jobs:\n  - [unclosed\n", catalog=catalog)


def test_inline_overrides_price_a_copy_not_the_catalog(catalog):
    from planner.team import priced_catalog

    data = team_dict(overrides={"discounts": [{"cloud": "aws", "percent": 50}]})
    plan = parse_team_plan(data, catalog=catalog)
    priced = priced_catalog(plan, catalog)
    before = {o.key: o.usd_per_hour for o in catalog.offers if o.cloud == "aws"
              and o.pricing == "on_demand" and o.usd_per_hour}
    after = {o.key: o.usd_per_hour for o in priced.offers if o.key in before}
    key = next(iter(before))
    assert after[key] == pytest.approx(before[key] / 2, rel=1e-4)
    assert {o.key: o.usd_per_hour for o in catalog.offers if o.key in before} == before
    assert "overrides" in priced.overrides_path


def test_actuals_unknown_job_names_the_row(catalog, tmp_path):
    plan = parse_team_plan(team_dict(), catalog=catalog)
    path = tmp_path / "actuals.csv"
    path.write_text("job,gpu_hours,cost_usd\npretrain-8b,10,100\npretrain-8bb,1,2\n")
    with pytest.raises(TeamPlanError, match=r"actuals.csv: row 3: unknown job 'pretrain-8bb'\. "
                                            r"Did you mean 'pretrain-8b'"):
        load_actuals(path, plan)
    path.write_text("job,gpu_hours,cost_usd\npretrain-8b,ten,100\n")
    with pytest.raises(TeamPlanError, match=r"row 2 \(job 'pretrain-8b'\): gpu_hours 'ten'"):
        load_actuals(path, plan)
    path.write_text("job,hours\n")
    with pytest.raises(TeamPlanError, match=r"missing column\(s\) \['gpu_hours', 'cost_usd'\]"):
        load_actuals(path, plan)
    path.write_text("job,gpu_hours,cost_usd,invoice\npretrain-8b,10,100,a\npretrain-8b,5,50,b\n")
    assert load_actuals(path, plan) == {"pretrain-8b": {"gpu_hours": 15.0, "cost_usd": 150.0}}
    # a header as a spreadsheet writes it is the same columns
    path.write_text("JOB, GPU_Hours ,Cost_USD\npretrain-8b,10,100\n")
    assert load_actuals(path, plan) == {"pretrain-8b": {"gpu_hours": 10.0, "cost_usd": 100.0}}
    # the spend went to the last of two job columns; an unquoted 1,234.5 split into cells
    # (gpu_hours 1, cost_usd 234.5), silently; ';' between columns was "missing column(s)"
    path.write_text("job,job,gpu_hours,cost_usd\nsft-70b,pretrain-8b,100,200\n")
    with pytest.raises(TeamPlanError, match=r"column 'job' appears 2 times in the header"):
        load_actuals(path, plan)
    path.write_text("job,gpu_hours,cost_usd\npretrain-8b,1,234.5,100\n")
    with pytest.raises(TeamPlanError, match=r"row 2: 4 cells for a header of 3 columns"):
        load_actuals(path, plan)
    # a trailing comma is an empty cell: nothing shifted, accepted
    path.write_text("job,gpu_hours,cost_usd\npretrain-8b,1,2,\n")
    assert load_actuals(path, plan) == {"pretrain-8b": {"gpu_hours": 1.0, "cost_usd": 2.0}}
    path.write_text("job;gpu_hours;cost_usd\npretrain-8b;1;2\n")
    with pytest.raises(TeamPlanError, match=r"separates columns with ';'"):
        load_actuals(path, plan)
