"""A report compared with actuals after a job's window has passed lists that among its
warnings: the "deadline … has passed" and "earliest_start … has passed" warnings went to
stderr only, and a reader of the written report (Markdown, HTML, CSV, PDF) never saw them."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("suffix", ["md", "html", "csv"])
def test_passed_windows_are_in_the_written_report(tmp_path, monkeypatch, capsys, suffix):
    monkeypatch.setenv("GPUPLAN_TODAY", "2027-04-20")
    out = tmp_path / f"r.{suffix}"
    assert main(["report", str(EXAMPLES / "team.yaml"), "--actuals",
                 str(EXAMPLES / "actuals.csv"), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "deadline 2027-04-15 has passed" in err  # said on stderr, as before
    text = out.read_text(encoding="utf-8")
    assert "deadline 2027-04-15 has passed" in text
    assert "earliest_start 2027-04-01 has passed" in text
    assert str(EXAMPLES / "team.yaml") + ": jobs[" not in text  # as the jobs' warnings read
    if suffix == "csv":
        notes = [r["note"] for r in csv.DictReader(text.splitlines()) if r["kind"] == "warning"]
        assert notes[0].startswith("jobs[1] 'pretrain-8b': deadline 2027-04-15 has passed")
    # the dates' warnings are said once on stderr, not again after the solve
    assert err.count("deadline 2027-04-15 has passed") == 1
