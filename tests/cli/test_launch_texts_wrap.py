"""The launch texts (sweep 23): prose wrapped at the terminal's width with the commands kept
whole, the --install help naming the one project it takes, a `plan --emit torchrun` script
that starts with its shebang, and counts of one said in the singular."""

from __future__ import annotations

import re

from cli_terminal import run
from rich.cells import cell_len

PROBES = ("launch", "probes", "--instance", "p5.48xlarge", "--nodes", "2")


def _prose_too_wide(text: str, width: int) -> list[str]:
    # a numbered command ("  3. scp …") stays whole, however long: it is copied as is
    return [line for line in text.splitlines()
            if cell_len(line) > width and not re.match(r"\s+\d+\. ", line)]


def test_launch_probes_prose_wraps_at_80_columns(capsys, monkeypatch, tmp_path):
    # "Cost before launch: …" ran to 84 columns at 80; with --out - the heading of the two
    # YAML documents to about 250
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *PROBES, "--target", "skypilot")
    assert code == 0 and _prose_too_wide(out, 80) == [], out
    assert "Cost before launch: 2 x p5.48xlarge" in out
    launch = next(line for line in out.splitlines() if "sky launch" in line)
    assert launch.strip().endswith("gpuplan-probes.sky.yaml")  # the command whole
    code, out, err = run(capsys, *PROBES, "--target", "dstack", "--out", "-")
    assert code == 0 and _prose_too_wide(err, 80) == [], err
    flat = " ".join(err.split())
    assert "Save each of the 2 YAML documents printed on stdout to its own file" in flat
    assert any(line.strip().startswith("3. scp ") and line.rstrip().endswith("30 min")
               for line in err.splitlines())  # the long scp command on one line


def test_install_help_names_gpuplan(capsys, monkeypatch):
    # it said "NAME==VERSION from the package index", but only gpuplan==VERSION is taken
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "launch", "probes", "--help")
    flat = " ".join(out.replace("│", " ").split())
    assert code == 0 and "gpuplan==VERSION from the package index" in flat, flat
    assert "NAME==VERSION" not in flat


def test_plan_emit_torchrun_prints_a_script_that_starts_with_its_shebang(capsys):
    code, out, _ = run(capsys, "plan", "--model", "gpt2", "--tokens", "1B", "--deadline",
                       "14d", "--gpu", "A10G", "--emit", "torchrun")
    assert code == 0
    lines = out.splitlines()
    shebang = lines.index("#!/usr/bin/env bash")
    assert lines[shebang - 1] == ""  # a blank line after the plan, then the script
    assert lines[shebang + 1] == "# ---- launch file (torchrun) ----"  # a comment after it
    script = "\n".join(lines[shebang:])
    assert ", 1 GPU; plan" in script and "1 GPUs" not in script  # gpt2: one A10G
