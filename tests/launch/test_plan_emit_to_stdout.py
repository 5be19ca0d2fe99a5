"""`plan --emit TARGET --emit-out -`: stdout is the launch file alone, so `> task.yaml` saves
a usable file, as `launch probes --out -` does (the plan's tables came first on stdout and the
saved file was no YAML); the plan goes to stderr. A file saved so counts as gpuplan's own: a
later `--emit-out` of that name replaces it (a torchrun script's ``#!`` stays its first line,
the heading after it)."""

from __future__ import annotations

import pytest
import yaml
from launch_helpers import run

from planner.launch import generated_state

PLAN = ("plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "2d", "--gpu", "H100",
        "--clouds", "aws")


@pytest.mark.parametrize("target", ["skypilot", "dstack", "torchrun"])
def test_stdout_is_the_launch_file_alone_and_saved_it_is_gpuplan_s(capsys, tmp_path, target):
    code, out, err = run(capsys, *PLAN, "--emit", target, "--emit-out", "-")
    assert code == 0, err
    assert "Recommendation" in err and "Recommendation" not in out
    assert "Then run:" in err and "FILE" in err  # the commands name the file the user saved
    if target == "torchrun":
        assert out.startswith("#!/usr/bin/env bash\n# ---- gpuplan-train.sh ----\n")
    else:
        assert isinstance(yaml.safe_load(out), dict)
    saved = tmp_path / f"task.{target}"
    saved.write_text(out)
    assert generated_state(out) == "unedited"
    code, out, err = run(capsys, *PLAN, "--emit", target, "--emit-out", str(saved))
    assert code == 0 and f"wrote {saved}" in out, err  # replaced: not "not written by"


def test_without_emit_out_the_file_still_follows_the_plan_on_stdout(capsys):
    code, out, _ = run(capsys, *PLAN, "--emit", "skypilot")
    assert code == 0
    assert out.index("Recommendation") < out.index("# ---- launch file (skypilot) ----")


@pytest.mark.parametrize("text, state", [
    ("#!/bin/sh\n# ---- a.sh ----\n", None),  # no mark at all
    ("body\n# ---- a.sh ----\n", None),
])
def test_a_file_without_the_mark_is_not_gpuplan_s(text, state):
    assert generated_state(text) is state
