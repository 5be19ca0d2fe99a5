"""Every `--help` page ends with "Examples:" (0 of 18 had one), each example keeps its own line
at 60 columns, and every example runs as shown — offline, on the packaged catalog, in a fresh
data and cache folder — so none can rot; `estimate --help` says its exit status."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
import typer
from cli_terminal import in_terminal
from probe_reports import h100_report

from planner.cli import app, main
from probes import write_report_atomic

ROOT = Path(__file__).resolve().parents[2]
WIDTH = 60


def pages() -> dict[str, object]:
    """Every command and group of the full CLI by its path ("" the root, "catalog info")."""
    found = {}

    def walk(command, path):
        found[path] = command
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(app), "")
    return found


PAGES = sorted(pages())


def help_text(capsys, monkeypatch, path: str) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    assert main([*path.split(), "--help"]) == 0
    return capsys.readouterr().out


def example_section(text: str) -> list[str]:
    """The lines under "Examples:" of a help page, as shown (indent kept)."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip() == "Examples:")
    return [line for line in lines[at + 1:] if line.strip()]


def commands(section: list[str]) -> list[tuple[str, str]]:
    """(command line, its comment) per example: continued lines (`` \\``) joined, comment-only
    lines dropped."""
    out, pending = [], ""
    for line in (s.strip() for s in section):
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = pending + line
        pending = ""
        code, _, comment = whole.partition("  #")
        out.append((code.strip(), comment.strip()))
    assert not pending, f"an example ends with a continuation: {pending!r}"
    return out


def test_the_root_and_its_eighteen_commands_and_groups_are_checked():
    assert len(PAGES) == 19, PAGES


@pytest.mark.parametrize("path", PAGES)
def test_every_help_page_ends_with_examples_that_fit_60_columns(path, capsys, monkeypatch):
    section = example_section(help_text(capsys, monkeypatch, path))
    examples = commands(section)
    assert 1 <= len(examples) <= 3, (path, examples)
    for code, _ in examples:
        assert code.startswith("gpuplan "), code
    # each example line as written: not rewrapped by click, not wider than the page
    for line in section:
        assert len(line) <= WIDTH, (path, line)
    assert all(line.startswith("    ") for line in section), section


def test_examples_keep_their_lines_in_a_real_terminal():
    """What a person sees in a 60-column terminal (COLUMNS unset): each example line intact."""
    from planner.cli._examples import EXAMPLES

    shown = in_terminal(["plan", "--help"], columns=WIDTH).splitlines()
    at = [line.strip() for line in shown].index("Examples:")
    assert [line.rstrip() for line in shown[at + 1:] if line.strip()] == [
        f"    {line}" for line in EXAMPLES["plan"]]


@pytest.fixture
def fresh_place(tmp_path, monkeypatch):
    """A fresh data and cache folder; the working folder holds the checkout's examples/ and a
    probe report (what `probe run` writes on a GPU node), stored as report 1."""
    from catalog import load_catalog
    from planner.store import ingest

    for name in ("home", "cache", "work"):
        (tmp_path / name).mkdir()
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "cache"))
    work = tmp_path / "work"
    shutil.copytree(ROOT / "examples", work / "examples")
    report = write_report_atomic(h100_report(), work / "report.json")
    ingest(report, load_catalog())
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("path", PAGES)
def test_every_example_runs_as_shown(path, fresh_place, capsys, monkeypatch):
    """Each example of the page, parsed as a shell would (shlex), run in process; exit 0.
    Those whose comment says they need a GPU, the network or start a server are skipped."""
    from planner.cli._examples import NOT_OFFLINE

    examples = commands(example_section(help_text(capsys, monkeypatch, path)))
    monkeypatch.delenv("COLUMNS")
    ran = 0
    for code, comment in examples:
        if any(mark in comment for mark in NOT_OFFLINE):
            continue
        argv = shlex.split(code)
        assert argv[0] == "gpuplan"
        status = main(argv[1:])
        out, err = capsys.readouterr()
        assert status == 0, f"{code!r} exited {status}: {err[-600:]}"
        ran += 1
    if path not in ("app", "probe run", "catalog refresh"):  # GPU, network or a server only
        assert ran, f"no example of `gpuplan {path}` runs offline"


def test_estimate_help_says_its_exit_status(capsys, monkeypatch):
    text = " ".join(help_text(capsys, monkeypatch, "estimate").split())
    assert "Exit status: 0 the estimate is printed; 2" in text
    assert "fits in no parallel plan" in text and "the input is wrong" in text


def test_estimate_that_fits_nowhere_exits_2_as_its_help_says(capsys):
    status = main(["estimate", "--model", "llama3-70b", "--tokens", "1T", "--gpu", "L4",
                   "--gpus", "1", "--json"])
    out, err = capsys.readouterr()
    assert (status, out) == (2, "")
    assert err.startswith("error: ") and "smallest setup that fits" in err
