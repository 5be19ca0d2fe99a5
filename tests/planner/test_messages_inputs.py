"""Messages of the planner's inputs (the sweep of messages): a huge GPU name or model_type
quoted as a short prefix, duplicate quota rules refused, a short actuals row named as such,
and a report with a GPU environment not absorbed by an environment-less copy of its run."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest
from probe_reports import h100_report
from probe_store import H100

from catalog import GpuplanError
from planner import CalibrationError
from planner.model import family_note
from planner.reports import parse_actuals
from planner.search import parse_quota_rules, parse_quotas
from planner.store import ingest_bytes, list_reports, load_calibration
from planner.store._facts import instance_contradiction
from planner.team import TeamPlanError
from probes import report_to_json

HUGE = "X" * 100_000


# -- a huge value is quoted as a short prefix -------------------------------------------------
def test_a_huge_model_type_is_a_short_note():
    note = family_note({"model_type": HUGE})
    assert len(note) < 400 and "is not a family gpuplan knows" in note
    assert family_note({"model_type": "my_model"}).startswith(
        "model_type 'my_model' is not a family gpuplan knows")


def test_a_huge_gpu_name_the_catalog_does_not_know_is_a_short_line(catalog):
    report = h100_report(gpu_model=HUGE, instance_type=None)
    with pytest.raises(CalibrationError) as info:
        ingest_bytes(report_to_json(report).encode(), catalog, source="r.json")
    text = str(info.value)
    assert len(text) < 400 and "cannot tell which catalog accelerator" in text
    assert "To fix: pass `accelerator` NAME" in text and list_reports() == []


def test_a_huge_gpu_name_that_contradicts_the_accelerator_asked_for_is_a_short_line(catalog):
    # the catalog reads the name with its padding stripped; the message quoted it whole
    report = h100_report(gpu_model="NVIDIA H100 80GB HBM3" + " " * 100_000, instance_type=None)
    with pytest.raises(CalibrationError) as info:
        ingest_bytes(report_to_json(report).encode(), catalog, source="r.json",
                     accelerator="H200")
    text = str(info.value)
    assert len(text) < 400 and "'NVIDIA H100 80GB HBM3" in text
    assert "not H200-SXM-141GB" in text
    assert "To fix: name H100-SXM5-80GB in `accelerator`, or leave it out" in text


def test_a_huge_gpu_name_on_an_instance_of_other_gpus_is_a_short_line():
    text = instance_contradiction("NVIDIA A100-SXM4-80GB" + " " * 100_000, "p5.48xlarge",
                                  "A100-SXM4-80GB", H100)
    assert len(text) < 400 and "'NVIDIA A100-SXM4-80GB" in text
    assert "on a p5.48xlarge, whose GPUs are H100-SXM5-80GB" in text
    # a short name is quoted whole, as before
    assert "the GPU 'NVIDIA A100-SXM4-80GB' (A100-SXM4-80GB) on a p5.48xlarge" in \
        instance_contradiction("NVIDIA A100-SXM4-80GB", "p5.48xlarge", "A100-SXM4-80GB", H100)


# -- duplicate quota rules --------------------------------------------------------------------
def _rules(*rules: dict) -> dict:
    return {"quotas": list(rules)}


def test_a_duplicate_quota_rule_is_refused(catalog):
    data = _rules({"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 64},
                  {"cloud": "aws", "region": "us-east-1", "accelerator": "h100-sxm5-80gb",
                   "gpus": 256})
    with pytest.raises(GpuplanError) as info:
        parse_quotas(data, catalog, source="q.yaml")
    text = str(info.value)
    assert text.startswith("q.yaml: quotas[2]: ")
    assert "quotas[1]" in text and "aws" in text and "us-east-1" in text and H100 in text
    assert "To fix: keep one rule per" in text and "\n" not in text


@pytest.mark.parametrize("rule", [{"cloud": "gcp", "gpus": 8}, {"gpus": 100}])
def test_a_duplicate_quota_rule_without_some_fields_is_refused(catalog, rule):
    with pytest.raises(GpuplanError, match=r"quotas\[2\].*quotas\[1\].*To fix: keep one rule per"):
        parse_quotas(_rules(rule, dict(rule, gpus=rule["gpus"] + 1)), catalog)


@pytest.mark.parametrize(("written", "gpus"), [(64.0, 64), ("1e3", 1000), (1e3, 1000)])
def test_a_quota_file_takes_whole_numbers_as_a_team_plan_does(catalog, written, gpus):
    """A quota file refused `gpus: 64.0` and `1e3`, which the same rule in a team plan took
    (docs/team.md: a whole-number field takes 64.0 or 1e3); 64.5 is still refused."""
    assert parse_quotas(_rules({"cloud": "aws", "gpus": written}), catalog).rules[0].gpus == gpus
    with pytest.raises(GpuplanError, match=r"gpus must be a whole number .* got 64\.5\. To fix"):
        parse_quotas(_rules({"cloud": "aws", "gpus": 64.5}), catalog)


def test_a_quota_cloud_in_capitals_is_the_cloud(catalog):
    """`cloud: AWS` was "unknown cloud 'AWS'. Did you mean 'aws'?", where a job's `clouds`
    and `offers --cloud` take it; a duplicate written both ways is still one scope."""
    assert parse_quotas(_rules({"cloud": "AWS", "gpus": 64}), catalog).rules[0].cloud == "aws"
    with pytest.raises(GpuplanError, match="To fix: keep one rule per"):
        parse_quotas(_rules({"cloud": "AWS", "gpus": 64}, {"cloud": "aws", "gpus": 8}), catalog)


def test_quota_rules_of_different_scopes_or_months_are_kept(catalog):
    rules = _rules({"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 64},
                   {"cloud": "aws", "region": "us-east-1", "gpus": 128},
                   {"cloud": "aws", "gpus": 256}, {"gpus": 512})
    assert len(parse_quotas(rules, catalog).rules) == 4
    # a team plan's month rule replaces the every-month rule of its scope in that month
    month = parse_quota_rules([{"cloud": "gcp", "gpus": 8},
                               {"cloud": "gcp", "gpus": 16, "month": "2027-03"},
                               {"cloud": "gcp", "gpus": 32, "month": "2027-04"}],
                              catalog, "team.yaml")
    assert len(month) == 3
    with pytest.raises(GpuplanError, match=r"team.yaml: quotas\[3\].*quotas\[2\].*month 2027-03"):
        parse_quota_rules([{"cloud": "gcp", "gpus": 8},
                           {"cloud": "gcp", "gpus": 16, "month": "2027-03"},
                           {"cloud": "gcp", "gpus": 32, "month": "2027-03"}],
                          catalog, "team.yaml")


# -- a short actuals row ----------------------------------------------------------------------
TEAM = SimpleNamespace(jobs=[SimpleNamespace(name="pretrain-8b")])


@pytest.mark.parametrize("text,cells", [("pretrain-8b,10\n", 2), ("pretrain-8b\n", 1)])
def test_a_short_actuals_row_names_its_cell_count(text, cells):
    with pytest.raises(TeamPlanError) as info:
        parse_actuals("job,gpu_hours,cost_usd,note\n" + text, TEAM, source="a.csv")
    message = str(info.value)
    assert message.startswith(f"a.csv: row 2 has {cells} cell{'s' if cells > 1 else ''}, "
                              "the header has 4 columns")
    assert "is not a number" not in message and "To fix:" in message


def test_a_row_without_only_the_ignored_columns_is_still_read():
    got = parse_actuals("job,gpu_hours,cost_usd,note\npretrain-8b,10,100\n", TEAM)
    assert got == {"pretrain-8b": {"gpu_hours": 10.0, "cost_usd": 100.0}}


def test_an_empty_cell_is_still_not_a_number():
    with pytest.raises(TeamPlanError, match=r"row 2 \(job 'pretrain-8b'\): cost_usd '' is not"):
        parse_actuals("job,gpu_hours,cost_usd\npretrain-8b,10,\n", TEAM)


# -- the same run, with and without its environment -------------------------------------------
def _ingest(catalog, report, name: str):
    return ingest_bytes(report_to_json(report).encode(), catalog, source=name)


def test_a_gpu_run_is_not_absorbed_by_an_environment_less_copy_stored_before(catalog):
    run = h100_report(bf16_tflops=900.0)
    bare = _ingest(catalog, dataclasses.replace(run, environment=None), "bare.json")
    assert (bare.ingest_status, bare.device_type) == ("stored", "unknown")
    gpu = _ingest(catalog, run, "gpu.json")
    assert (gpu.id, gpu.ingest_status, gpu.accelerator) == (2, "stored", H100)
    m = load_calibration(catalog).matmul(H100, "bf16")
    assert (m.value, m.report_ids) == (900.0, (2,))


def test_copies_of_a_gpu_run_are_still_one_run(catalog):
    run = h100_report(bf16_tflops=900.0)
    first = _ingest(catalog, run, "a.json")
    again = _ingest(catalog, dataclasses.replace(run, created_utc="2026-01-31T12:00:01Z"),
                    "b.json")
    assert (again.id, again.ingest_status) == (first.id,
                                               "already stored as report 1 (same measurements)")
    assert _ingest(catalog, run, "a.json").ingest_status == \
        "already stored as report 1 (same file)"
    assert len(list_reports()) == 1


def test_a_cpu_run_cannot_be_named_a_gpu(catalog):
    """`probe ingest cpu-run.json --accelerator H100` stored a CPU run's figures as an H100's
    ("its accelerator is now H100-SXM5-80GB (was none)"): they would calibrate H100 plans."""
    report = h100_report(device_type="cpu", gpu_model=None, instance_type=None)
    with pytest.raises(CalibrationError) as info:
        ingest_bytes(report_to_json(report).encode(), catalog, source="r.json",
                     accelerator="H100")
    assert "the report is a 'cpu' run: it measured no GPU" in str(info.value)
    assert "To fix: leave `accelerator` out" in str(info.value)
