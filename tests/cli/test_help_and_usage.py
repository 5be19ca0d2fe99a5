"""`--help`, `--version` and usage errors: every option has help that says what its value is,
help never breaks a flag at its hyphen, a usage error is one line that says where the help is
(split from test_readability.py)."""

from __future__ import annotations

import importlib.metadata
import json
import re

import pytest
import typer
from cli_terminal import in_terminal, run

from planner.cli import app
from planner.cli._app import print_json

# ---- help, version, errors ------------------------------------------------------------------

PENDING_HELP: set = set()  # options allowed to lack help (none)


def options_without_help() -> set[tuple[str, str]]:
    def walk(command, path):
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk(sub, f"{path} {name}")

    missing = set()
    for path, command in walk(typer.main.get_command(app), "gpuplan"):
        for param in command.params:
            if not (getattr(param, "help", None) or "").strip():
                missing.add((path, param.opts[0] if param.param_type_name == "option"
                             else param.name))
    return missing


def test_every_option_of_every_command_has_help():
    missing = options_without_help()
    assert missing <= PENDING_HELP, sorted(missing - PENDING_HELP)


def test_no_option_is_waiting_for_help():
    assert not options_without_help()


def test_help_says_what_each_value_is_not_its_python_type(capsys, monkeypatch):
    """Typer 0.29 printed ``--out <str>``, ``--assume <list[str]>`` and ``{team_file}``; every
    parameter of every command now has a word from ``_metavars.METAVARS`` (none falls back to
    its kind), and no help page shows a Python type."""
    from planner.cli import _metavars
    from planner.cli import main as gpuplan

    assert _metavars.readable(typer.main.get_command(app)) == []
    monkeypatch.setenv("COLUMNS", "200")
    pages = [(), ("report",), ("plan",), ("estimate",), ("offers",), ("probe", "ingest"),
             ("probe", "workload"), ("catalog", "use"), ("launch", "probes")]
    for argv in pages:
        assert gpuplan([*argv, "--help"]) == 0
        text = capsys.readouterr().out
        assert not re.search(r"<(str|int|float|list\[str\]|bool)>", text), argv
    assert gpuplan(["report", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "[OPTIONS] TEAM_FILE" in text and "{TEAM_FILE}" not in text
    assert "TEAM_FILE Team plan YAML" in text
    assert "--assume NAME=VALUE" in text and "--out FILE" in text and "--workers N" in text


def test_version_is_the_installed_distributions(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out == f"gpuplan {importlib.metadata.version('gpuplan')}\n"


def test_a_usage_error_is_one_line_that_says_where_the_help_is(capsys):
    for argv, fragment in ((["offers", "--limt", "3"], "No such option: --limt"),
                           (["offers", "--limit", "x"], "'--limit'"),
                           (["launch", "probes"], "Missing option '--instance'"),
                           (["ofers"], "No such command 'ofers'")):
        code, _, err = run(capsys, *argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert err.startswith("error: ") and fragment in err and "To fix: see `gpuplan" in err


@pytest.mark.parametrize("argv,says", [
    (["estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8", "--seq-len", "8K"],
     "'--seq-len': it takes a whole number in digits (e.g. 64; not 1.5, 8K or 1e4)"),
    (["plan", "--model", "gpt2", "--deadline", "1d", "--max-gpus", "1.5"],
     "'--max-gpus': it takes a whole number in digits"),
    (["plan", "--model", "gpt2", "--deadline", "1d", "--budget", "lots"],
     "--budget 'lots' is not an amount of USD. To fix: e.g. 30000, 30k or $30,000"),
])
def test_a_value_that_is_not_a_number_says_what_is_taken(capsys, argv, says):
    # it said "Input should be a valid integer, unable to parse string as an integer"
    code, _, err = run(capsys, *argv)
    assert code == 2 and says in err and "Input should be" not in err


def test_a_bare_group_still_shows_its_help(capsys):
    code, _, err = run(capsys, "catalog")
    assert code == 2 and "Usage:" in err and "refresh" in err


def test_json_never_holds_nan_or_infinity(capsys):
    print_json({"a": float("nan"), "b": [float("inf"), 1.5], "c": "Infinity Fabric"})
    assert json.loads(capsys.readouterr().out) == {"a": None, "b": [None, 1.5],
                                                   "c": "Infinity Fabric"}
    code, out, _ = run(capsys, "gpus", "--all", "--json")
    assert code == 0 and json.loads(out, parse_constant=lambda c: pytest.fail(c))


@pytest.mark.parametrize("argv", [["--help"], ["catalog", "--help"], ["probe", "--help"],
                                  ["launch", "--help"]])
@pytest.mark.parametrize("columns", [60, 140])
def test_command_lists_are_never_cut_short(argv, columns):
    # click cut every summary with "..." even 140 columns wide
    text = in_terminal(argv, columns)
    listed = text.split("Commands:", 1)[1]
    assert "..." not in listed and len(listed.strip().splitlines()) >= 1


@pytest.mark.parametrize("argv", [["probe", "workload", "--help"], ["plan", "--help"],
                                  ["estimate", "--help"]])
def test_help_never_breaks_a_flag_or_word_at_its_hyphen(argv):
    # '--warmup-' / 'steps', 'pre-' / 'training': a flag could not be copied from --help
    text = in_terminal(argv, 80)
    broken = [line for line in text.splitlines() if re.search(r"\w-$", line.rstrip())]
    assert broken == []
