"""The usage line of --help names a positional argument as its row does: Typer 0.29 wrapped a
required one in braces (``Usage: gpuplan report [OPTIONS] {TEAM_FILE}``) although the rows
below already said ``TEAM_FILE`` (docs/design.md: no ``{team_file}``-style placeholders)."""

from __future__ import annotations

import pytest
from cli_terminal import run


@pytest.mark.parametrize(("argv", "usage"), [
    (("report",), "Usage: gpuplan report [OPTIONS] TEAM_FILE"),
    (("catalog", "use"), "Usage: gpuplan catalog use [OPTIONS] NAME"),
    (("probe", "ingest"), "Usage: gpuplan probe ingest [OPTIONS] REPORT..."),
    (("probe", "remove"), "Usage: gpuplan probe remove [OPTIONS] REPORT_ID..."),
    (("probe", "show"), "Usage: gpuplan probe show [OPTIONS] [REPORT_ID]"),
])
def test_the_usage_line_names_arguments_without_braces(capsys, monkeypatch, argv, usage):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, *argv, "--help")
    assert code == 0 and out.splitlines()[0] == usage
    assert "{" not in out.splitlines()[0]


def test_the_arguments_rows_keep_their_word(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run(capsys, "report", "--help")
    assert code == 0 and "TEAM_FILE Team plan YAML" in " ".join(out.split())
