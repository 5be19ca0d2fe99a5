"""The probe commands' messages around ingest (tester's findings, 2026-12): `probe run`'s
errors point to the command typed (`gpuplan probe run --help`, not `python -m probes --help`)
and all start "probe run:" (a missing --out folder's did not); the empty `probe show` and the
estimate's "→ wall-clock … with datasheet defaults" line wrap under their text, without the
trailing space and column-0 continuation rich's own wrap left."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planner.cli import main

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv", [["--bogus"], ["--outt", "r.json"], ["--timeout-s", "nan"],
                                  ["--sizes", ""]])
def test_probe_run_points_to_its_own_help(capsys, argv):
    code, out, err = run(capsys, "probe", "run", *argv)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("error: probe run: ") and "python -m probes" not in err, err
    assert err.endswith("To fix: see `gpuplan probe run --help`\n"), err


@pytest.mark.parametrize(("out_path", "said"), [
    ("nodir/x.json", "the directory nodir does not exist"),
    ("train.py", "exists and is not a probe report"),
])
def test_probe_run_says_every_out_error_the_same_way(capsys, tmp_path, monkeypatch, out_path,
                                                     said):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text("print('mine')\n")
    code, _, err = run(capsys, "probe", "run", "--out", out_path)
    assert code == 2 and len(err.splitlines()) == 1, err
    assert err.startswith(f"error: probe run: probe report (--out) {out_path}: {said}"), err
    assert not err.rstrip("\n").endswith("."), err
    assert (tmp_path / "train.py").read_text() == "print('mine')\n"


def _wrapped_under_itself(text: str, width: int) -> None:
    lines = text.splitlines()
    assert lines and all(len(line) <= width for line in lines), text
    assert all(line == line.rstrip() for line in lines), text  # no "(or ␠"


def test_the_empty_probe_show_wraps_under_itself(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "probe", "show")
    assert code == 0 and out.startswith("no probe reports ingested.")
    _wrapped_under_itself(out, 60)
    assert all(line.startswith("  ") for line in out.splitlines()[1:]), out


def test_the_estimate_with_and_without_measurements_wraps_under_itself(capsys, tmp_path,
                                                                      monkeypatch):
    shutil.copy(DATA / "probe-report.json", tmp_path / "orig.json")
    assert run(capsys, "probe", "ingest", str(tmp_path / "orig.json"))[0] == 0
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run(capsys, "estimate", "--model", "llama3-8b", "--gpu", "H200", "--gpus",
                         "8", "--tokens", "15T")
    assert code == 0, err
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("  → wall-clock "))
    said = lines[at:next(i for i in range(at + 1, len(lines))
                         if not lines[i].startswith("    "))]
    assert len(said) > 1 and "with datasheet defaults" in " ".join(said), said
    _wrapped_under_itself("\n".join(said), 80)


@pytest.mark.parametrize("paths", [[""], ["  ", "report.json"]])
def test_an_empty_report_path_is_said_once(capsys, paths):
    """`probe ingest ''` said "probe report : probe report: the path is empty" (review,
    2026-12-07); with --json its object is printed as for any refused file."""
    code, out, err = run(capsys, "probe", "ingest", *paths)
    assert (code, out) == (2, "")
    assert err == (f"error: the path is empty (report 1 of {len(paths)} given). To fix: give "
                   "the path of each probe report file, e.g. report.json\n")
    code, out, _ = run(capsys, "probe", "ingest", "--json", *paths)
    assert code == 2 and json.loads(out)["errors"] == [] and json.loads(out)["stored"] == []
