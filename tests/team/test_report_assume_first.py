"""A bad --assume is the one message `gpuplan report` prints: it used to come after the
warnings the team file and actuals raised (found by a CLI fuzzer)."""

from __future__ import annotations

from pathlib import Path

import planner.cli._report_cmds  # noqa: F401  (registers `report` on the app)
from planner.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_a_bad_assume_is_refused_before_the_files_warn(tmp_path, capsys):
    actuals = tmp_path / "a.csv"  # spending for a job that has not started: a warning
    actuals.write_text("job,gpu_hours,cost_usd\npretrain-8b,1,1\n")
    code = main(["report", str(EXAMPLES / "team.yaml"), "--assume", "=", "--actuals",
                 str(actuals)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--assume '=' is not name=value" in err
    assert "warning" not in err
