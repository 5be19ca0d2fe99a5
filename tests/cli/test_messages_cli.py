"""Error lines of the CLI sweep of messages: a hint spelled with the flags of the command being
run, a huge value quoted as a short prefix, a duplicate quota rule, a short --actuals row and
a whole-report note of `probe show` that said "report report 1"."""

from __future__ import annotations

import json
import sqlite3

import pytest
import yaml
from probe_reports import h100_report

from planner.cli import main
from planner.store import db_path
from probes import write_report_atomic

HUGE = "x" * 100_000


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(err: str) -> str:
    assert err.count("\n") == 1 and "Traceback" not in err, err[:500]
    return err.strip()


# -- 1: the hint uses the running command's spelling ------------------------------------------
def test_offers_says_its_own_cloud_and_region_flags(capsys):
    # "To fix: add aws to --clouds" for a command whose option is --cloud
    code, _, err = run(capsys, "offers", "--cloud", "gcp", "--region", "us-east-1")
    line = one_line(err)
    assert code == 2
    assert "To fix: add aws to --cloud or drop us-east-1 from --region" in line
    assert line.startswith("error: --region: region 'us-east-1' is aws's, not in --cloud gcp")
    assert "--clouds" not in line and "--regions" not in line


def test_plan_keeps_its_own_plural_flags(capsys):
    code, _, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--clouds", "gcp",
                       "--regions", "us-east-1")
    line = one_line(err)
    assert code == 2
    assert "To fix: add aws to --clouds or drop us-east-1 from --regions" in line


def test_estimate_names_an_unknown_cloud_not_the_instance_it_disambiguates(capsys):
    """`--cloud nope` said "p5.48xlarge is on aws, not nope. To fix: … (`gpuplan offers
    --cloud nope`)": the typo was never named and the suggested command failed too."""
    code, _, err = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "1T",
                       "--instance", "p5.48xlarge", "--cloud", "nope")
    assert code == 2
    assert one_line(err) == "error: unknown cloud 'nope'. To fix: use one of aws, gcp, azure"
    code, _, _ = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "1T",
                     "--instance", "p5.48xlarge", "--cloud", "AWS")  # as `offers --cloud AWS`
    assert code == 0


@pytest.mark.parametrize("home", ["a file", "under a file", "/dev/null"])
def test_probe_show_says_what_is_in_the_way_of_the_data_directory(capsys, monkeypatch,
                                                                  tmp_path, home):
    """A GPUPLAN_HOME that is a file (or /dev/null) read as "no probe reports ingested",
    exit 0, while `probe ingest` said what was in the way; /dev/null is not to be moved."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    where = {"a file": blocker, "under a file": blocker / "sub", "/dev/null": "/dev/null"}[home]
    monkeypatch.setenv("GPUPLAN_HOME", str(where))
    code, out, err = run(capsys, "probe", "show", "--json")
    line = one_line(err)
    assert code == 2 and out == "", out
    assert "not a directory. To fix: " in line and "GPUPLAN_HOME" in line, line
    assert ("move it away" in line) == (home != "/dev/null"), line


def test_a_probe_database_that_is_a_directory_is_named_so(capsys, monkeypatch, tmp_path):
    (tmp_path / "probes.db").mkdir()  # said "check the permissions of the data directory"
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path))
    code, _, err = run(capsys, "probe", "show")
    assert code == 2
    assert "probes.db is a directory, not the probe database" in one_line(err)
    assert "To fix: move it away" in err


def test_a_model_too_large_at_the_largest_gpu_limit_is_not_told_to_raise_it(capsys):
    code, _, err = run(capsys, "plan", "--params", "1e14", "--tokens", "1e15", "--deadline",
                       "3650d", "--max-gpus", "65536")
    line = one_line(err)
    assert code == 2 and "within 65,536 GPUs. To fix: allow GPUs with more memory" in line
    assert "raise --max-gpus" not in line
    code, _, err = run(capsys, "plan", "--params", "1e14", "--tokens", "1e15", "--deadline",
                       "3650d")
    assert "within 1,024 GPUs. To fix: raise --max-gpus" in one_line(err)


# -- 2: a huge value is quoted as a short prefix ----------------------------------------------
def test_a_repeated_option_with_a_huge_value_is_one_short_line(capsys):
    code, _, err = run(capsys, "estimate", "--model", HUGE, "--model", "gpt2")
    line = one_line(err)
    assert code == 2 and len(line) < 400
    assert "--model is given 2 times" in line and "To fix: give --model once" in line
    assert "'gpt2'" in line


def test_an_option_repeated_many_times_is_one_short_line(capsys):
    code, _, err = run(capsys, "estimate", *["--model", "gpt2"] * 1000)
    line = one_line(err)
    assert code == 2 and len(line) < 400
    assert "--model is given 1000 times" in line and "To fix: give --model once" in line


def test_a_short_repeated_value_is_still_quoted_whole(capsys):
    code, _, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--emit",
                       "skypilot", "--emit", "dstack")
    assert code == 2 and "('skypilot', 'dstack')" in one_line(err)


def test_a_huge_model_type_in_a_config_is_a_short_note(capsys, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": HUGE, "num_hidden_layers": 2,
                                  "hidden_size": 256, "num_attention_heads": 4,
                                  "vocab_size": 1000}))
    code, out, err = run(capsys, "estimate", "--config", str(config), "--tokens", "1B",
                         "--gpu", "H100", "--gpus", "8", "--json")
    assert code == 0, err
    (note,) = [a for a in json.loads(out)["assumptions"] if a.startswith("model_type")]
    assert len(note) < 400 and "is not a family gpuplan knows" in note


# -- 3: a duplicate quota rule is refused -----------------------------------------------------
def test_a_duplicate_quota_rule_in_the_quota_file_is_refused(capsys, tmp_path):
    quotas = tmp_path / "quotas.yaml"
    quotas.write_text(yaml.safe_dump({"quotas": [
        {"cloud": "aws", "region": "us-east-1", "accelerator": "H100", "gpus": 64},
        {"cloud": "gcp", "gpus": 8},
        {"cloud": "aws", "region": "us-east-1", "accelerator": "h100", "gpus": 256}]}))
    code, _, err = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--quota-file",
                       str(quotas))
    line = one_line(err)
    assert code == 2 and "quotas[3]" in line and "quotas[1]" in line
    assert "To fix: keep one rule per" in line


# -- 4: a short --actuals row -----------------------------------------------------------------
TEAM = {
    "name": "messages team",
    "jobs": [{"name": "small-a", "team": "research", "clouds": ["aws"],
              "accelerators": ["H100"], "max_gpus": 64, "pricing": ["on_demand"],
              "workload": {"params": "1B", "tokens": "20B", "seq_len": 2048},
              "earliest_start": "2027-03-01", "deadline": "2027-03-20"}],
    "budgets": {"2027-03": 1_000_000},
}


def test_a_short_actuals_row_says_how_many_cells_it_has(capsys, tmp_path):
    team = tmp_path / "team.yaml"
    team.write_text(yaml.safe_dump(TEAM))
    actuals = tmp_path / "actuals.csv"
    actuals.write_text("job,gpu_hours,cost_usd\nsmall-a,100\n")
    code, _, err = run(capsys, "report", str(team), "--actuals", str(actuals))
    line = one_line(err)
    assert code == 2 and "row 2 has 2 cells, the header has 3 columns" in line
    assert "is not a number" not in line and "To fix:" in line


# -- 5: `probe show` says "report 1", not "report report 1" -----------------------------------
def test_probe_show_names_an_unreadable_report_once(capsys, tmp_path):
    path = write_report_atomic(h100_report(), tmp_path / "report.json")
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = '{}'")
    for argv in (["probe", "show"], ["probe", "show", "1"]):
        code, out, _ = run(capsys, *argv)
        assert code == 0, argv
        assert "report report" not in out and "(report 1)" not in out
        assert "  report 1: this gpuplan cannot read it" in out


def test_probe_show_json_names_an_unreadable_report_once(capsys, tmp_path):
    path = write_report_atomic(h100_report(), tmp_path / "report.json")
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = '{}'")
    code, out, _ = run(capsys, "probe", "show", "--json")
    (why,) = json.loads(out)[0]["not_used"]
    assert code == 0 and why.startswith("report 1: this gpuplan cannot read it")


def test_probe_ingest_names_a_report_refused_whole_once():
    from planner.model import CalibrationNote, reasons_by_figure

    whole = CalibrationNote(kind="report", key="report 3", value=None, unit="",
                            report_ids=(3,), reason="this gpuplan cannot read it")
    figure = CalibrationNote(kind="matmul", key="H100-SXM5-80GB bf16", value=900.0,
                             unit="TFLOP/s", report_ids=(3,), reason="too fast")
    assert reasons_by_figure([whole, figure]) == ["report 3: this gpuplan cannot read it",
                                         "matmul H100-SXM5-80GB bf16: too fast"]
