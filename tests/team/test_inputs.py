"""The edges of the team planner: files and values a user gives it (issue 16). Parsers take
data; the path readers go through catalog's safe readers; every bad value is one line that
names the field and says how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from catalog import GpuplanError, UnknownNameError, read_json_file
from planner.cli._files import load_quota_file
from planner.model import (
    PlannerError,
    WorkloadError,
    architecture_from_config,
    parse_count,
    parse_deadline,
)
from planner.reports import neutralise_cell, parse_actuals, render
from planner.search import parse_quotas
from planner.team import TeamPlanError, load_team_plan, parse_team_plan

from .conftest import CATALOG_INFO, golden_candidates, team_dict

EXAMPLES = Path(__file__).parents[2] / "examples"
CONFIG_JOB = {"name": "sft-1b", "workload": {"config": "llama-3.2-1b/config.json",
                                             "tokens": "50B"},
              "earliest_start": "2027-04-15", "deadline": "2027-05-15"}


# ---- config paths: a file may name one, an upload may not ---------------------------------------

def test_an_uploaded_team_plan_cannot_name_a_server_path(catalog):
    text = yaml.safe_dump({"jobs": [{**CONFIG_JOB, "workload": {"config": "/dev/zero",
                                                                "tokens": "1B"}}]})
    with pytest.raises(TeamPlanError, match="config: a team plan given as text or data") as info:
        load_team_plan(text, catalog=catalog)  # text: config paths refused by default
    assert "To fix" in str(info.value)
    with pytest.raises(TeamPlanError, match="cannot name files on this machine"):
        parse_team_plan(yaml.safe_load(text), catalog=catalog)  # data alone reads no file


def test_a_team_file_names_a_config_relative_to_itself(catalog, tmp_path):
    (tmp_path / "llama-3.2-1b").mkdir()
    (tmp_path / "llama-3.2-1b" / "config.json").write_bytes(
        (EXAMPLES / "llama-3.2-1b" / "config.json").read_bytes())
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump({"jobs": [CONFIG_JOB]}))
    plan = load_team_plan(path, catalog=catalog)
    assert plan.jobs[0].workload.arch.name == "llama-3.2-1b"
    with pytest.raises(TeamPlanError, match="cannot name files"):
        load_team_plan(path, catalog=catalog, allow_config_paths=False)


def test_the_example_config_is_llama_3_2_1b():
    arch, context = architecture_from_config(
        read_json_file(EXAMPLES / "llama-3.2-1b" / "config.json", what="model config"),
        default_name="llama-3.2-1b")
    assert (arch.layers, arch.hidden, arch.heads, arch.kv_heads) == (16, 2048, 32, 8)
    assert arch.tied_embeddings and context == 131072
    assert arch.params_total() == pytest.approx(1.236e9, rel=0.01)  # "1.24B" on the model card


# ---- config.json values -------------------------------------------------------------------------

LLAMA = json.loads((EXAMPLES / "llama-3.2-1b" / "config.json").read_text())


@pytest.mark.parametrize(("changes", "fragment"), [
    ({"hidden_size": True}, "hidden_size must be a whole number, got true"),
    ({"num_hidden_layers": -16}, "num_hidden_layers is -16; it must be at least 1"),
    ({"intermediate_size": 8192.5}, "intermediate_size must be a whole number, got 8192.5"),
    ({"vocab_size": 10**12}, "vocab_size is 1,000,000,000,000; it must be at most"),
    ({"tie_word_embeddings": 1}, "tie_word_embeddings must be true or false, got 1"),
    ({"num_key_value_heads": 0}, "num_key_value_heads is 0; it must be at least 1"),
])
def test_config_values_are_checked_not_converted(changes, fragment):
    with pytest.raises(WorkloadError, match="To fix") as info:
        architecture_from_config({**LLAMA, **changes}, source="cfg.json")
    assert str(info.value).startswith("cfg.json: ") and fragment in str(info.value)


def test_an_integral_float_size_is_accepted():
    arch, _ = architecture_from_config({**LLAMA, "hidden_size": 2048.0})
    assert arch.hidden == 2048 and isinstance(arch.hidden, int)


# ---- quotas -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("rule", "fragment"), [
    ({"cloud": "awz", "gpus": 8}, "quotas[1]: unknown cloud 'awz'. Did you mean 'aws'?"),
    ({"cloud": "gcp", "region": "us-east-1", "gpus": 8}, "unknown gcp region 'us-east-1'"),
    ({"accelerator": "H1OO", "gpus": 8}, "quotas[1]: unknown GPU 'H1OO'"),
])
def test_quota_names_must_exist_with_close_matches(catalog, rule, fragment):
    with pytest.raises(UnknownNameError) as info:
        parse_quotas({"quotas": [rule]}, catalog, source="q.yaml")
    assert str(info.value).startswith("q.yaml: quotas[1]: ") and fragment in str(info.value)


def test_a_quota_that_matches_no_offer_is_an_error(catalog):
    with pytest.raises(PlannerError) as info:
        parse_quotas({"quotas": [{"cloud": "azure", "accelerator": "TPU-v5e", "gpus": 8}]},
                     catalog)
    message = str(info.value)
    assert "no offer in the catalog matches cloud azure, accelerator TPU-v5e" in message
    assert "(TPU-v5e is offered in gcp/" in message and "would limit nothing" in message


def test_quota_file_read_errors_are_planner_errors(catalog, tmp_path):
    path = tmp_path / "q.yaml"
    path.write_bytes(b"quotas: []\n\xff")
    with pytest.raises(PlannerError, match="not UTF-8"):
        load_quota_file(path, catalog)  # the CLI's --quota-file reader
    with pytest.raises(PlannerError, match="at most 10,000 are allowed"):
        parse_quotas({"quotas": [{"gpus": 1}] * 10_001}, catalog)


# ---- the quantities people type -----------------------------------------------------------------

@pytest.mark.parametrize(("value", "what", "fragment"), [
    ("", "tokens", "`tokens` is empty"),
    ("nan", "tokens", "not a finite number"),
    (10**400, "tokens", "~1e400 is too large"),  # was "a huge number is too large"
    ("2e15", "tokens", "at most 1e15 tokens"),
    ("2e14", "params", "at most 1e14 parameters"),
    ("2e9", "global_batch_tokens", "at most 1e9 tokens per step"),
    ("0.5", "tokens", "must be at least 1"),
    (True, "tokens", "is not a count"),
])
def test_parse_count_bounds(value, what, fragment):
    with pytest.raises(PlannerError, match="To fix") as info:
        parse_count(value, what)
    assert fragment in str(info.value)


def test_parse_count_keeps_real_values():
    assert parse_count("15T") == 15e12 and parse_count("1P") == 1e15
    assert parse_count(7e9, "params") == 7e9


@pytest.mark.parametrize(("value", "fragment"), [
    ("", "is empty"), ("inf", "not a finite duration"), ("3653d", "more than 10 years"),
    ("30m", "not a duration"), ("0.5h", "less than an hour"), ("-2d", "negative"),
    ("1\nd", "not a duration"),
])
def test_parse_deadline_bounds(value, fragment):
    with pytest.raises(PlannerError, match="To fix") as info:
        parse_deadline(value)
    assert fragment in str(info.value) and "\n" not in str(info.value)


def test_a_deadline_ten_years_out_is_accepted():
    assert parse_deadline("3652d") == 3652 * 24


# ---- team plan values ---------------------------------------------------------------------------

@pytest.mark.parametrize(("changes", "fragment"), [
    ({"budgets": {"total": float("nan")}}, "budgets.total: must be a number of USD >= 0"),
    ({"budgets": {"total": 10**400}}, "got ~1e400"),
    ({"jobs": [{**team_dict()["jobs"][0], "deadline": "2027-02-30"}]},
     "deadline: '2027-02-30' is not a date (day is out of range for month)"),
    ({"jobs": [{**team_dict()["jobs"][0], "workload": {"model": "gpt2", "tokens": ""}}]},
     "workload: tokens is empty"),
    ({"jobs": [{**team_dict()["jobs"][0], "max_gpus": 10**12}]}, "<= 65,536"),
])
def test_team_values_are_bounded(catalog, changes, fragment):
    with pytest.raises(TeamPlanError, match="To fix") as info:
        parse_team_plan(team_dict(**changes), catalog=catalog)
    assert fragment in str(info.value)


def test_actuals_text_is_parsed_and_bad_csv_is_one_line(catalog):
    plan = parse_team_plan(team_dict(), catalog=catalog)
    assert parse_actuals("job,gpu_hours,cost_usd\npretrain-8b,1,2\n", plan) == {
        "pretrain-8b": {"gpu_hours": 1.0, "cost_usd": 2.0}}
    with pytest.raises(TeamPlanError, match=r"cost_usd 'inf' is not a number"):
        parse_actuals("job,gpu_hours,cost_usd\npretrain-8b,1,inf\n", plan)
    with pytest.raises(TeamPlanError, match=r"cost_usd must be a number from 0 to"):
        parse_actuals("job,gpu_hours,cost_usd\npretrain-8b,1,1e400\n", plan)
    with pytest.raises(GpuplanError, match="not valid CSV"):
        parse_actuals('job,gpu_hours,cost_usd\npretrain-8b,1,"' + "x" * 200_000 + '"\n', plan)


@pytest.mark.parametrize("cost", ['"21.050,40"', '"21,05"', '"1,2,3"'])
def test_actuals_with_a_decimal_comma_are_refused_not_misread(catalog, cost):
    """"21.050,40" (21,050.40 written the European way) was read as 21.0504: 1000x too small."""
    plan = parse_team_plan(team_dict(), catalog=catalog)
    with pytest.raises(TeamPlanError, match="is not a number.*commas only between thousands"):
        parse_actuals(f"job,gpu_hours,cost_usd\npretrain-8b,1,{cost}\n", plan)
    assert parse_actuals('job,gpu_hours,cost_usd\npretrain-8b,"1,000","$21,050.40"\n',
                         plan) == {"pretrain-8b": {"gpu_hours": 1000.0, "cost_usd": 21050.4}}


# ---- CSV formula injection ----------------------------------------------------------------------

@pytest.mark.parametrize(("cell", "safe"), [
    ("=1+1", "'=1+1"), ("+cmd", "'+cmd"), ("-2+3", "'-2+3"), ("@SUM(A1)", "'@SUM(A1)"),
    ("\t=x", "'\t=x"), ("\r=x", "'\r=x"), ("-12.50", "-12.50"), ("+3", "+3"), ("1e-4", "1e-4"),
    ("pretrain", "pretrain"), ("", ""), (None, ""), (-5, "-5"),
])
def test_neutralise_cell(cell, safe):
    assert neutralise_cell(cell) == safe


def test_team_csv_report_neutralises_user_text(catalog):
    from planner.team import allocate_candidates

    data = team_dict()
    data["jobs"][0] = {**data["jobs"][0], "name": "=HYPERLINK(\"http://x/\")", "team": "@evil"}
    plan = parse_team_plan(data, catalog=catalog)
    allocation = allocate_candidates(plan, golden_candidates(), catalog_info=CATALOG_INFO)
    csv = render(allocation, "csv").decode()
    assert "'=HYPERLINK" in csv and ",'@evil," in csv
    assert ",=HYPERLINK" not in csv and ",@evil," not in csv


def test_start_offsets_that_all_fall_after_the_deadline_are_named(catalog):
    """Offsets [20] in a 9-day window gave "no plan finishes … raise max_gpus", naming
    neither the offsets nor the window; offsets partly beyond it (the team-wide default on a
    short job) are fine."""
    data = team_dict()
    data["jobs"][1]["start_offsets_days"] = [21, 30]  # window 2027-03-20 – 04-10: 21 days
    with pytest.raises(TeamPlanError, match=r"jobs\[2\] 'eval\|sweep <b>': every start offset "
                                            r"\[21, 30\] is on or after the deadline: the "
                                            r"window 2027-03-20 – 2027-04-10 is 21 days"):
        parse_team_plan(data, catalog=catalog)
    data["jobs"][1]["start_offsets_days"] = [0, 30]
    assert parse_team_plan(data, catalog=catalog).jobs[1].start_offsets_days == (0, 30)


def test_a_job_may_allow_flagged_prices_as_the_message_suggests(catalog):
    """'… prices are flagged: … or pass allow_flagged' named a key a team file did not have."""
    data = team_dict()
    data["jobs"][0]["allow_flagged"] = True
    assert parse_team_plan(data, catalog=catalog).jobs[0].allow_flagged is True
    assert parse_team_plan(team_dict(), catalog=catalog).jobs[0].allow_flagged is False
    data["jobs"][0]["allow_flagged"] = "yes"
    with pytest.raises(TeamPlanError, match="allow_flagged must be true or false, got 'yes'"):
        parse_team_plan(data, catalog=catalog)


@pytest.mark.parametrize("tokens,label", [("100M", "100M tokens"), ("1.5B", "1.5B tokens"),
                                          ("20B", "20B tokens"), ("1.5T", "1.5T tokens")])
def test_a_jobs_workload_label_keeps_small_and_fractional_token_counts(catalog, tokens, label):
    """100M tokens read "0B tokens" and 1.5B "2B" in every team report (app sweep
    2026-12-04)."""
    from planner.team._summary import workload_label

    data = team_dict()
    data["jobs"][0]["workload"]["tokens"] = tokens
    job = parse_team_plan(data, catalog=catalog).jobs[0]
    assert workload_label(job) == f"llama3-8b, {label}"


def test_an_unclosed_quote_in_actuals_is_named_not_called_a_short_row(catalog):
    # '"a,10,20' swallowed the rest of the file: "row 2 has 1 cell, the header has 3 columns"
    plan = parse_team_plan(team_dict(), catalog=catalog)
    text = 'job,gpu_hours,cost_usd\npretrain-8b,1,2\n"pretrain-8b,10,20\npretrain-8b,3,4\n'
    with pytest.raises(TeamPlanError, match=r"line 3: a quote \(\"\) is never closed"):
        parse_actuals(text, plan)
    # a quoted cell that closes is plain CSV
    assert parse_actuals('job,gpu_hours,cost_usd\n"pretrain-8b",1,2\n', plan) == {
        "pretrain-8b": {"gpu_hours": 1.0, "cost_usd": 2.0}}
