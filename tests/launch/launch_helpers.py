"""Helpers for the launch tests: parse YAML and pick a torchrun line apart."""

from __future__ import annotations

import shlex

import yaml


def load(text: str) -> dict:
    data = yaml.safe_load(text)
    assert isinstance(data, dict)
    return data


def torchrun_args(script: str) -> dict[str, str]:
    """The options of the one torchrun line in ``script`` (``--flag value`` pairs)."""
    lines = [line for line in script.splitlines() if line.lstrip().startswith("torchrun ")]
    assert len(lines) == 1, script
    words = shlex.split(lines[0].split("  #")[0])[1:]
    opts: dict[str, str] = {}
    i = 0
    while i < len(words) and words[i].startswith("-"):
        if words[i] == "--standalone":
            opts["--standalone"] = ""
            i += 1
            continue
        if words[i] == "-m":
            opts["-m"] = words[i + 1]
            break
        opts[words[i]] = words[i + 1]
        i += 2
    return opts


def run(capsys, *argv: str) -> tuple[int, str, str]:
    """``gpuplan argv``: (exit code, stdout, stderr)."""
    from planner.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_error(code: int, err: str, *needles: str) -> None:
    """Exit 2 with one "error: … To fix: …" line (no traceback) holding every needle."""
    assert code == 2, err
    assert err.count("\n") == 1 and err.startswith("error: ") and "To fix: " in err, err
    assert "Traceback" not in err
    for needle in needles:
        assert needle in err, err
