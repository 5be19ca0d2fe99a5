"""The report's quota table covers every month of the jobs' windows and every month a rule
names, not only the months the chosen runs reach: a cap of 0 GPUs in April moved a job's plan
into March, and the table (JSON `quotas`, md, html, csv, pdf) then listed no rule at all."""

from __future__ import annotations

from planner.reports import render
from planner.reports._pdf import _lines
from planner.team import allocate_candidates, parse_team_plan

from .conftest import CATALOG_INFO, H100, cand


def _allocation(catalog, quotas: list[dict]):
    data = {"name": "t",
            "jobs": [{"name": "j1", "workload": {"params": "1B", "tokens": "20B"},
                      "earliest_start": "2027-03-30", "deadline": "2027-04-20"}],
            "quotas": quotas}
    plan = parse_team_plan(data, catalog=catalog, source="t.yaml")
    # 64 GPUs for 60 h would cross into April (cheaper); 8 GPUs for 9.4 h ends in March.
    candidates = [[cand("aws", "us-east-1", H100, 64, 60.0, 1.0),
                   cand("aws", "us-east-1", H100, 8, 9.4, 55.0)]]
    return allocate_candidates(plan, candidates, catalog_info=CATALOG_INFO)


def test_a_month_rule_that_moved_the_plan_out_of_its_month_is_listed(catalog):
    a = _allocation(catalog, [{"cloud": "aws", "gpus": 0, "month": "2027-04"}])
    assert a.jobs[0]["gpus"] == 8 and a.jobs[0]["end"] < "2027-04"  # the rule shaped it
    assert [dict(q) for q in a.quotas] == [
        {"scope": "aws/*/*", "month": "2027-04", "cap_gpus": 0, "peak_gpus": 0}]
    assert "| aws/\\*/\\* | 2027-04 | 0 | 0 |" in render(a, "md").decode()
    html = render(a, "html").decode()
    assert "<td>aws/*/*</td><td>2027-04</td>" in html and "Quotas (peak GPUs in use)" in html
    assert "quota,,,2027-04," in render(a, "csv").decode()
    pdf = [cells for kind, cells in _lines(a, None) if kind == "row"]
    assert any([c[2].strip() for c in row] == ["aws/*/*", "2027-04", "0", "0"] for row in pdf)


def test_an_every_month_rule_is_listed_for_each_month_of_the_window(catalog):
    a = _allocation(catalog, [{"cloud": "aws", "gpus": 64}])
    assert a.jobs[0]["end"] >= "2027-04"  # the 64-GPU run, into April
    assert [(q["month"], q["cap_gpus"], q["peak_gpus"]) for q in a.quotas] == [
        ("2027-03", 64, 64), ("2027-04", 64, 64)]
    a = _allocation(catalog, [{"cloud": "aws", "gpus": 8}])
    assert a.jobs[0]["end"] < "2027-04"  # 8 GPUs, over by March 30
    assert [(q["month"], q["cap_gpus"], q["peak_gpus"]) for q in a.quotas] == [
        ("2027-03", 8, 8), ("2027-04", 8, 0)]
