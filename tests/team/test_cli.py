"""`gpuplan report` end to end on the packaged catalog, kept fast by restricting each job to
one cloud and accelerator (plan() then evaluates a handful of instance types)."""

from __future__ import annotations

import json

import pytest
import yaml

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main

TEAM = {
    "name": "cli team",
    "start_offsets_days": [0, 7],
    "jobs": [
        {"name": "small-a", "team": "research", "clouds": ["aws"], "accelerators": ["H100"],
         "max_gpus": 64, "pricing": ["on_demand"],
         "workload": {"params": "1B", "tokens": "20B", "seq_len": 2048},
         "earliest_start": "2027-03-01", "deadline": "2027-03-20"},
        {"name": "small-b", "team": "product", "clouds": ["aws"], "accelerators": ["H100"],
         "max_gpus": 64, "workload": {"params": "3B", "tokens": "20B", "seq_len": 2048},
         "earliest_start": "2027-03-05", "deadline": "2027-03-30"},
    ],
    "budgets": {"2027-03": 1_000_000},
    "overrides": {"discounts": [{"cloud": "aws", "percent": 20}]},
}


@pytest.fixture
def team_file(tmp_path):
    path = tmp_path / "team.yaml"
    path.write_text(yaml.safe_dump(TEAM))
    return path


def test_report_md_json_and_actuals(team_file, tmp_path, capsys):
    out = tmp_path / "budget.md"
    actuals = tmp_path / "actuals.csv"
    actuals.write_text("job,gpu_hours,cost_usd\nsmall-a,100,2500\n")
    assert main(["report", str(team_file), "--out", str(out), "--actuals", str(actuals)]) == 0
    md = out.read_text()
    assert "## Estimate vs actual" in md and "small-a" in md and "overrides" in md
    capsys.readouterr()
    assert main(["report", str(team_file), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [j["job"] for j in data["jobs"]] == ["small-a", "small-b"]
    for j in data["jobs"]:
        assert j["cloud"] == "aws" and j["accelerator"].startswith("H100")
        if j["pricing"] == "on_demand":  # the inline discount priced it (spot: never)
            assert "-20%" in j["price_source"]
        assert j["end"] <= j["deadline"] + " 00:00"
    assert data["totals"]["cost_usd"] == pytest.approx(sum(j["cost_usd"] for j in data["jobs"]))
    assert set(data["by_team"]) == {"product", "research"}


def test_offset_probability_matches_plan_at_offset_zero(catalog):
    from planner import Assumptions
    from planner.model import NO_CALIBRATION
    from planner.team import candidate_probability, job_candidates, parse_team_plan

    plan = parse_team_plan(TEAM, catalog=catalog)
    cands = job_candidates(plan, catalog, Assumptions(), NO_CALIBRATION)
    for job, cs in zip(plan.jobs, cands, strict=True):
        for c in cs[:5]:
            assert candidate_probability(c, job.window_hours, Assumptions()) == pytest.approx(
                c["deadline_probability"], abs=1e-9)


@pytest.mark.parametrize("workers", [1, 2])
def test_allocate_reports_its_progress(catalog, workers):
    from planner.team import allocate, parse_team_plan

    team = {**TEAM, "jobs": [*TEAM["jobs"], {**TEAM["jobs"][0], "name": "small-a-again"}]}
    heard = []
    allocation = allocate(parse_team_plan(team, catalog=catalog), catalog=catalog,
                          workers=workers, progress=lambda *a: heard.append(a))
    # three jobs, two distinct (workload, constraints): plan() runs twice
    assert heard == [("planning jobs", 0, 2), ("planning jobs", 1, 2), ("planning jobs", 2, 2),
                     ("solving the team MILP", 0, 1), ("solving the team MILP", 1, 1)]
    assert allocation.totals["jobs"] == 3


def test_infeasible_quota_exits_2_with_one_line(team_file, capsys):
    data = yaml.safe_load(team_file.read_text())
    data["jobs"][1]["earliest_start"] = "2027-03-01"
    data["jobs"][0]["start_offsets_days"] = [0]
    data["jobs"][1]["start_offsets_days"] = [0]
    data["jobs"][0]["min_probability"] = data["jobs"][1]["min_probability"] = 0
    data["quotas"] = [{"cloud": "aws", "accelerator": "H100", "gpus": 8}]
    data["jobs"][0]["deadline"] = data["jobs"][1]["deadline"] = "2027-03-04"
    team_file.write_text(yaml.safe_dump(data))
    assert main(["report", str(team_file)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith("error: ") and "To fix" in err
    assert "binding: quota aws/*/H100-SXM5-80GB in 2027-03" in err
    # --json: the relaxations for scripts on stdout (it printed nothing), the same error line
    assert main(["report", str(team_file), "--json"]) == 2
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["infeasible"] is True and data["relaxations"] and err.startswith("error: ")
    assert data["error"] in err


def test_bad_format_and_pdf_without_out(team_file, capsys):
    assert main(["report", str(team_file), "--format", "docx"]) == 2
    assert "--format 'docx' is not one of html, pdf, md, csv" in capsys.readouterr().err
    assert main(["report", str(team_file), "--format", "pdf"]) == 2
    assert "a PDF report needs --out FILE" in capsys.readouterr().err


def test_html_from_suffix_is_written_atomically(team_file, tmp_path):
    out = tmp_path / "reports" / "budget.html"
    out.parent.mkdir()
    assert main(["report", str(team_file), "--out", str(out)]) == 0  # the old report
    out.write_text(out.read_text().replace("GPU-hours", "GPU hours"))
    out.chmod(0o640)
    assert main(["report", str(team_file), "--out", str(out)]) == 0
    assert out.read_text().startswith("<!DOCTYPE html>") and "GPU-hours" in out.read_text()
    assert out.stat().st_mode & 0o777 == 0o640  # a replaced report keeps its mode
    assert not list(out.parent.glob(".budget.html.*"))  # no temp file left behind


@pytest.mark.parametrize("suffix", ["md", "html", "csv", "pdf"])
def test_report_replaces_its_own_report_but_not_another_file(team_file, tmp_path, capsys,
                                                            suffix):
    """`--out notes.md` replaced the user's notes, exit 0 (hostile sweep): only a report of
    gpuplan's, of any format, is replaced; an empty file too (a mktemp's)."""
    if suffix == "pdf":
        pytest.importorskip("matplotlib")
    out = tmp_path / f"budget.{suffix}"
    out.write_bytes(b"my notes\n")
    assert main(["report", str(team_file), "--out", str(out)]) == 2
    assert out.read_bytes() == b"my notes\n"
    assert (f"--out {out} exists and is not a report gpuplan wrote: replacing it would lose "
            "it. To fix: choose another --out, or remove it") in capsys.readouterr().err
    out.write_bytes(b"")
    assert main(["report", str(team_file), "--out", str(out)]) == 0
    first = out.read_bytes()
    assert main(["report", str(team_file), "--out", str(out)]) == 0
    assert out.read_bytes() == first
    other = tmp_path / f"other.{'md' if suffix != 'md' else 'csv'}"
    other.write_bytes(first)  # a report in another format than its name says: still gpuplan's
    assert main(["report", str(team_file), "--out", str(other)]) == 0


def test_a_new_report_gets_the_umask_mode_not_0600(team_file, tmp_path):
    import os

    old = os.umask(0o022)
    try:
        assert main(["report", str(team_file), "--format", "csv", "--out",
                     str(tmp_path / "budget.csv")]) == 0
    finally:
        os.umask(old)
    assert (tmp_path / "budget.csv").stat().st_mode & 0o777 == 0o644


def test_a_missing_output_directory_fails_before_planning(team_file, tmp_path, capsys):
    out = tmp_path / "reports" / "budget.html"
    assert main(["report", str(team_file), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "does not exist. To fix: create it (mkdir -p" in err
    assert not out.parent.exists()


def test_an_out_path_ending_in_a_slash_is_refused_not_written_as_a_file(team_file, tmp_path,
                                                                         capsys):
    """`--out newname/` wrote a file 'newname' and said "wrote newname/" (Path() drops the
    slash); an existing x.md was replaced by `--out x.md/`."""
    existing = tmp_path / "x.md"
    existing.write_text("keep\n")
    for out in (f"{tmp_path / 'newname'}/", f"{existing}/"):
        assert main(["report", str(team_file), "--out", out]) == 2
        assert "ends with '/', which names a directory" in capsys.readouterr().err
    # "." and ".." do not end with "/": named as the directories they are
    for out in (f"{tmp_path / 'newname'}/.", ".", ".."):
        assert main(["report", str(team_file), "--out", out]) == 2
        err = capsys.readouterr().err
        assert f"{out}: names a directory. To fix: give a file name inside it, e.g. " in err
        assert "ends with" not in err
    assert not (tmp_path / "newname").exists() and existing.read_text() == "keep\n"


def test_json_keeps_user_names_and_out_never_replaces_an_input(team_file, tmp_path, capsys):
    """A job named "exp `tokens` v2" came back as "exp --tokens v2" in --json (the planner's
    notes name inputs as flags; user text is not a note); `--out` naming the team file or the
    actuals replaced the input it had just read (exit 0)."""
    data = yaml.safe_load(team_file.read_text())
    data["jobs"][0]["name"] = "exp `tokens` `out` v2"
    data["jobs"][0]["team"] = "`workers`"
    team_file.write_text(yaml.safe_dump(data))
    assert main(["report", str(team_file), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["jobs"][0]["job"] == "exp `tokens` `out` v2"
    assert out["jobs"][0]["team"] == "`workers`" and "`workers`" in out["by_team"]
    # and in an error line: the name as written, not turned into flags
    dup = yaml.safe_load(team_file.read_text())
    dup["jobs"][1]["name"] = dup["jobs"][0]["name"]
    twice = tmp_path / "twice.yaml"
    twice.write_text(yaml.safe_dump(dup))
    assert main(["report", str(twice)]) == 2
    assert "jobs[2] 'exp `tokens` `out` v2': name already used" in capsys.readouterr().err
    before = team_file.read_text()
    actuals = tmp_path / "actuals.csv"
    actuals.write_text("job,gpu_hours,cost_usd\nsmall-b,100,2500\n")
    for target in (team_file, actuals):
        assert main(["report", str(team_file), "--actuals", str(actuals), "--format", "csv",
                     "--out", str(target)]) == 2
        err = capsys.readouterr().err
        assert "the report would replace it. To fix: choose another --out" in err
    assert team_file.read_text() == before
    assert actuals.read_text().startswith("job,gpu_hours")


def test_a_region_of_another_cloud_is_named_in_the_files_words(team_file, capsys):
    """It said "add --cloud gcp or drop --region europe-west4": flags `report` does not take."""
    data = yaml.safe_load(team_file.read_text())
    data["jobs"][0]["regions"] = ["europe-west4"]  # the job's clouds are [aws]
    team_file.write_text(yaml.safe_dump(data))
    assert main(["report", str(team_file)]) == 2
    err = capsys.readouterr().err
    assert ("region 'europe-west4' is gcp's, not in clouds aws. To fix: add gcp to clouds or "
            "drop europe-west4 from regions") in err and "--" not in err


def test_out_never_replaces_a_config_the_plan_reads(tmp_path, capsys):
    """`--out llama-3.2-1b/config.json` replaced the model config a job reads (exit 0)."""
    import shutil
    from pathlib import Path

    examples = Path(__file__).resolve().parents[2] / "examples"
    shutil.copytree(examples, tmp_path / "ex")
    config = tmp_path / "ex" / "llama-3.2-1b" / "config.json"
    before = config.read_text()
    assert main(["report", str(tmp_path / "ex" / "team.yaml"), "--format", "md", "--out",
                 str(config)]) == 2
    err = capsys.readouterr().err
    assert "is the config of job 'sft-1b': the report would replace it" in err
    assert config.read_text() == before


def test_out_never_replaces_the_overrides_file_of_gpuplan_overrides(team_file, tmp_path,
                                                                      monkeypatch, capsys):
    """The check covered --overrides but not GPUPLAN_OVERRIDES's file: `report --out` and
    `plan --emit-out` wrote over it, exit 0 (hostile sweep)."""
    overrides = tmp_path / "ov.yaml"
    overrides.write_text("discounts: []\n")
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(overrides))
    assert main(["report", str(team_file), "--format", "md", "--out", str(overrides)]) == 2
    assert (f"--out {overrides} is GPUPLAN_OVERRIDES: the report would replace it. To fix: "
            "choose another --out") in capsys.readouterr().err
    assert main(["plan", "--model", "llama3-8b", "--tokens", "100B", "--emit", "skypilot",
                 "--emit-out", str(overrides)]) == 2
    assert (f"--emit-out {overrides} is the file GPUPLAN_OVERRIDES names, which this plan "
            "reads") in capsys.readouterr().err
    assert overrides.read_text() == "discounts: []\n"


def test_json_is_printed_only_once_the_file_is_written(team_file, tmp_path, monkeypatch,
                                                        capsys):
    """With --json and a file to write, a write that failed (a full disk) left the whole
    answer on stdout, then exit 2: a script read a normal allocation (hostile sweep)."""
    import errno

    import catalog

    def full(path, *args, **kwargs):
        raise catalog.GpuplanError(f"cannot write {path}: {errno.errorcode[errno.ENOSPC]}. "
                                   "To fix: free space")

    monkeypatch.setattr(catalog, "write_bytes_atomic", full)
    monkeypatch.setattr(catalog, "write_text_atomic", full)
    assert main(["report", str(team_file), "--json", "--out", str(tmp_path / "r.html")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "ENOSPC" in captured.err
    assert main(["plan", "--model", "llama3-8b", "--tokens", "100B", "--json", "--emit",
                 "skypilot", "--emit-out", str(tmp_path / "task.yaml")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "ENOSPC" in captured.err


@pytest.mark.parametrize(("out", "fmt"), [(".html", "html"), ("r/.CSV", "csv"),
                                          (".budget", "md"), ("a.b/.md", "md")])
def test_a_file_named_only_by_its_suffix_gets_that_format(out, fmt):
    # `--out .html` wrote Markdown: pathlib sees a hidden file with no suffix
    from planner.cli._report_cmds import report_format

    assert report_format(None, out) == fmt


def _dated(monkeypatch, today: str, tmp_path, **dates) -> str:
    """The team file with small-a's dates replaced, and ``today`` as GPUPLAN_TODAY."""
    monkeypatch.setenv("GPUPLAN_TODAY", today)
    data = yaml.safe_load(yaml.safe_dump(TEAM))
    data["jobs"][0].update(dates)
    path = tmp_path / "dated.yaml"
    path.write_text(yaml.safe_dump(data))
    return str(path)


def test_a_deadline_that_has_passed_is_refused(monkeypatch, tmp_path, capsys):
    """`report` allocated a March 2027 window in April at today's prices, exit 0, while the app
    refused it: one rule now (planner.team.check_dates)."""
    path = _dated(monkeypatch, "2027-03-20", tmp_path)  # small-a's deadline: today's 00:00
    assert main(["report", path, "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    (line,) = err.strip().splitlines()
    assert "jobs[1] 'small-a': deadline 2027-03-20 is in the past" in line
    assert "today is 2027-03-20" in line and "To fix: give a future date, or compare" in line
    assert "--actuals FILE" in line


def test_with_actuals_a_finished_job_is_planned_with_a_warning(monkeypatch, tmp_path, capsys):
    path = _dated(monkeypatch, "2027-03-25", tmp_path)
    actuals = tmp_path / "actuals.csv"
    actuals.write_text("job,gpu_hours,cost_usd\nsmall-a,100,2500\n")
    assert main(["report", path, "--json", "--actuals", str(actuals)]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    warning, started = data["warnings"]  # small-b began on 03-05 and ends on 03-30
    assert "jobs[2] 'small-b': earliest_start 2027-03-05 has passed" in started
    assert warning.endswith("jobs[1] 'small-a': deadline 2027-03-20 has passed (today is "
                            "2027-03-25): it is planned for its window at the catalog's current "
                            "prices, which may not be those it was planned at")
    assert "warning: " in err and "small-a" in err
    assert data["actuals"]["total"]["actual_cost_usd"] == 2500


def test_a_start_that_has_passed_is_said(monkeypatch, tmp_path, capsys):
    path = _dated(monkeypatch, "2027-03-04", tmp_path)  # small-a began 03-01; small-b: 03-05
    assert main(["report", path, "--json"]) == 0
    out, err = capsys.readouterr()
    (warning,) = json.loads(out)["warnings"]
    assert "earliest_start 2027-03-01 has passed (today is 2027-03-04)" in warning
    assert warning.endswith("To fix: move earliest_start to 2027-03-04 or later")
    assert err.startswith("warning: ")
    capsys.readouterr()
    on_time = _dated(monkeypatch, "2027-03-01", tmp_path)  # a start today is now
    assert main(["report", on_time, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


@pytest.mark.parametrize("value", ["tomorrow", "2027-02-30", "2027/03/01"])
def test_a_wrong_gpuplan_today_is_one_error(monkeypatch, team_file, capsys, value):
    monkeypatch.setenv("GPUPLAN_TODAY", value)
    assert main(["report", str(team_file)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"GPUPLAN_TODAY={value!r} is not a date" in line and "To fix:" in line


def test_without_gpuplan_today_today_is_the_utc_date(monkeypatch):
    import datetime as dt

    from planner.team import today_utc

    monkeypatch.delenv("GPUPLAN_TODAY")
    before = dt.datetime.now(dt.UTC).date()
    assert today_utc() in (before, dt.datetime.now(dt.UTC).date())


def test_a_low_min_probability_chooses_as_plan_chooses(capsys, tmp_path):
    """min_probability 0.1 over a 21-day window: `plan` recommends 5 p5 nodes (expected to run
    past the deadline, P 15%), the team allocator demanded an expected end inside the window
    too and chose 7 — or, for a 70B job at 0.4, said no plan existed."""
    team = {"min_probability": 0.1, "jobs": [
        {"name": "j", "workload": {"model": "llama3-8b", "tokens": "1T"}, "clouds": ["aws"],
         "accelerators": ["H100"], "earliest_start": "2027-03-01", "deadline": "2027-03-22"}]}
    path = tmp_path / "low.yaml"
    path.write_text(yaml.safe_dump(team))
    assert main(["report", str(path), "--json", "--workers", "1"]) == 0
    (job,) = json.loads(capsys.readouterr().out)["jobs"]
    assert main(["plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "21d",
                 "--clouds", "aws", "--gpu", "H100", "--min-probability", "0.1",
                 "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["recommendation"]
    assert (job["instance_type"], job["nodes"], job["pricing"]) == (
        rec["instance_type"], rec["nodes"], rec["pricing"])
    assert job["cost_usd"] == pytest.approx(rec["total_cost_usd"], rel=1e-6)
    assert job["deadline_probability"] < 0.5 and job["slack_hours"] < 0


def test_report_can_go_on_without_a_store_it_cannot_read(team_file, tmp_path, capsys):
    """A damaged, locked or foreign probes.db blocked `report` outright: it had no
    --no-calibration, and the error did not name it (hostile sweep, 2026-12-08)."""
    import sqlite3

    from planner.store import db_path

    db_path().parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("CREATE TABLE foo (x)")
    assert main(["report", str(team_file), "--json"]) == 2
    assert capsys.readouterr().err.rstrip().endswith(
        "; or pass --no-calibration to plan with datasheet figures meanwhile")
    assert main(["report", str(team_file), "--json", "--no-calibration"]) == 0
    assert json.loads(capsys.readouterr().out)["totals"]["jobs"] == len(TEAM["jobs"])


def test_a_large_pdf_report_is_still_recognised_as_gpuplans(tmp_path):
    """A 500-job PDF with actuals has its Info dictionary (Creator gpuplan) 5,241 bytes from
    the end, beyond the 4,096 first read: a re-run was refused (diff review, 2026-12-08)."""
    from planner.cli._report_cmds import _not_another_file

    pdf = tmp_path / "big.pdf"
    pdf.write_bytes(b"%PDF-1.4\n" + b"0" * 100_000 + b"<< /Creator (gpuplan) >>\n"
                    + b"0000041187 00000 n \n" * 3_000 + b"trailer\n%%EOF\n")
    _not_another_file(pdf)  # no error: gpuplan's own report
