"""A filters sweep's findings: `--exclude` names in capitals gave false "without --gpu: 855
offers" advice (the diagnosis read them as typed, the filter case-blind); the JSON echoed
regions, `exclude` and accelerators as typed ('US-EAST-1'), not as the catalog spells them;
`--exclude H100` was not told that accelerators are --gpu's; a quota rule with another cloud's
region was "unknown aws region … Did you mean 'eu-central-1'"; and a quoted `~` was not the
home folder for --quota-file, --config and --actuals while --overrides and the team file took
it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from catalog import UnknownNameError
from planner.model import PlannerError

ROOT = Path(__file__).resolve().parents[2]
H100_AWS = ["plan", "--model", "llama3-8b", "--tokens", "20B", "--gpu", "H100", "--clouds",
            "aws"]


def _error(capsys, argv) -> str:
    from planner.cli import main

    assert main(argv) != 0
    return capsys.readouterr().err


# -- 4: the "no offer matches" diagnosis reads `exclude` as the filter does ------------------

def test_excluded_names_in_capitals_give_the_same_advice_as_lower_case(capsys):
    upper = _error(capsys, [*H100_AWS, "--exclude", "P5.48XLARGE,P5.4XLARGE"])
    lower = _error(capsys, [*H100_AWS, "--exclude", "p5.48xlarge,p5.4xlarge"])
    assert "no offer matches" in lower
    assert upper == lower


def test_an_excluded_cloud_in_capitals_is_not_said_to_let_offers_through(capsys):
    err = _error(capsys, [*H100_AWS, "--exclude", "AWS"])
    # every aws offer is excluded: leaving out --gpu lets none through
    assert "without --gpu" not in err and "without --clouds" in err


# -- 5: the constraints echo spells names as the catalog does ---------------------------------

def test_the_json_echo_names_regions_exclude_and_accelerators_as_the_catalog(capsys):
    from planner.cli import main

    code = main(["plan", "--model", "llama3-8b", "--tokens", "20B", "--gpu", "h100",
                 "--clouds", "AWS", "--regions", "US-EAST-1", "--exclude", "P5.4XLARGE",
                 "--top", "1", "--json"])
    assert code == 0
    c = json.loads(capsys.readouterr().out)["constraints"]
    assert (c["clouds"], c["regions"], c["exclude"], c["gpus"]) == (
        ["aws"], ["us-east-1"], ["p5.4xlarge"], ["H100"])


def test_in_catalog_spelling_keeps_what_it_cannot_spell_and_folds_repeats(catalog):
    from planner.search import Constraints
    from planner.search._constraints import in_catalog_spelling

    c = Constraints(deadline_hours=100, regions=("US-EAST-1", "us-east-1"),
                    gpus=("h100-sxm5-80gb", "NVIDIA-H100"), exclude=("nowhere",))
    spelled = in_catalog_spelling(c, catalog)
    assert spelled.regions == ("us-east-1",)
    # an alias as the catalog writes it; a name that matches none as written: the canonical
    assert spelled.gpus == ("H100-SXM5-80GB",)
    assert spelled.exclude == ("nowhere",)  # unchecked here: plan() refused it before
    same = Constraints(deadline_hours=100, regions=("us-east-1",))
    assert in_catalog_spelling(same, catalog) is same


# -- 13: an accelerator given to --exclude ------------------------------------------------------

@pytest.mark.parametrize("name", ["H100", "h100", "A100"])  # an alias, any case, a family
def test_an_accelerator_in_exclude_is_told_to_use_gpu(catalog, name):
    from planner.search import check_exclude

    with pytest.raises(UnknownNameError, match="for an accelerator use `gpu`"):
        check_exclude([name], catalog)


def test_an_unknown_name_that_is_no_accelerator_is_not_sent_to_gpu(catalog):
    from planner.search import check_exclude

    with pytest.raises(UnknownNameError) as err:
        check_exclude(["p5.48xlargee"], catalog)
    assert "gpu" not in str(err.value) and "Did you mean 'p5.48xlarge'" in str(err.value)
    # a caller with its own hint (a team file: `accelerators`) names its own field, or none
    with pytest.raises(UnknownNameError) as err:
        check_exclude(["H100"], catalog, hint="exclude takes instance types")
    assert "gpu" not in str(err.value)
    with pytest.raises(UnknownNameError, match="use `accelerators`"):
        check_exclude(["H100"], catalog, hint="exclude takes instance types",
                      accelerators_field="`accelerators`")


def test_the_cli_says_gpu_for_an_excluded_accelerator(capsys):
    err = _error(capsys, ["plan", "--model", "llama3-8b", "--tokens", "20B", "--exclude",
                          "H100"])
    assert "for an accelerator use --gpu" in err


# -- 9: a quota rule's region of another cloud -------------------------------------------------

@pytest.mark.parametrize("region", ["us-central1", " US-CENTRAL1 "])
def test_a_quota_region_of_another_cloud_is_named_as_that_cloud_s(catalog, region):
    from planner.search import parse_quotas

    with pytest.raises(UnknownNameError) as err:  # an UnknownNameError still, as it was
        parse_quotas({"quotas": [{"cloud": "aws", "region": region, "gpus": 8}]}, catalog,
                     source="q.yaml")
    msg = str(err.value)
    assert msg.startswith(f"q.yaml: quotas[1]: unknown aws region {region.strip()!r}: "
                          "us-central1 is gcp's region, not aws's. To fix: write `cloud: gcp`")
    assert "Did you mean" not in msg and "eu-central-1" not in msg


def test_a_quota_region_no_cloud_has_is_still_unknown_with_close_matches(catalog):
    from planner.search import parse_quotas

    with pytest.raises(UnknownNameError, match="unknown aws region 'us-east-11'.*us-east-1"):
        parse_quotas({"quotas": [{"cloud": "aws", "region": "us-east-11", "gpus": 8}]},
                     catalog, source="q.yaml")
    rules = parse_quotas({"quotas": [{"cloud": "aws", "region": "US-EAST-1", "gpus": 8}]},
                         catalog)
    assert rules.rules[0].region == "us-east-1"


def test_a_team_file_s_quota_of_another_cloud_s_region(catalog):
    from planner.team import TeamPlanError, parse_team_plan

    data = {"name": "t", "jobs": [{"name": "a", "workload": {"model": "llama3-8b",
                                                            "tokens": "20B"},
                                   "earliest_start": "2027-03-01",
                                   "deadline": "2027-04-15"}],
            "quotas": [{"cloud": "aws", "region": "us-central1", "gpus": 8}]}
    with pytest.raises(TeamPlanError, match="us-central1 is gcp's region, not aws's"):
        parse_team_plan(data, catalog=catalog, source="team.yaml")


# -- 10: a quoted ~ is the home folder --------------------------------------------------------

@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_quota_file_under_a_quoted_tilde_is_read(home, catalog):
    from planner.cli._files import load_quota_file

    (home / "q.yaml").write_text("quotas:\n  - {cloud: aws, gpus: 64}\n")
    assert load_quota_file("~/q.yaml", catalog).rules[0].gpus == 64
    with pytest.raises(PlannerError) as err:
        load_quota_file("~/nope.yaml", catalog)
    assert "quota file ~/nope.yaml: cannot read it" in str(err.value)
    assert str(home) not in str(err.value)


def test_config_under_a_quoted_tilde_is_read(home):
    from planner.model import WorkloadError, read_model_config

    shutil.copytree(ROOT / "examples" / "llama-3.2-1b", home / "m")
    assert read_model_config("~/m/config.json") == read_model_config("~/m")
    for typed in ("~/nope.json", "~/nope"):
        with pytest.raises(WorkloadError) as err:
            read_model_config(typed)
        assert f"model config {typed}: cannot read config" in str(err.value)
        assert str(home) not in str(err.value)


def test_actuals_under_a_quoted_tilde_are_read(home, catalog):
    from planner.reports import load_actuals
    from planner.team import TeamPlanError, load_team_plan

    team = load_team_plan(ROOT / "examples" / "team.yaml", catalog=catalog)
    shutil.copy(ROOT / "examples" / "actuals.csv", home / "a.csv")
    assert load_actuals(Path("~/a.csv"), team) == load_actuals(ROOT / "examples" / "actuals.csv",
                                                              team)
    with pytest.raises(TeamPlanError) as err:
        load_actuals(Path("~/nope.csv"), team)
    assert "actuals file ~/nope.csv: cannot read it" in str(err.value)
    assert str(home) not in str(err.value)
