"""What the CLI sweep of 2026-12-04 found around the inputs: a data folder whose name no file
system accepts, an output path that is the command's own standard output, a stored report
nested too deep to parse, and a closed stderr. Each must be one line and exit 2 (or the
command's own answer), never a traceback, never lost output."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import pytest
from probe_reports import h100_report

from planner.cli import main
from planner.store import db_path, ingest
from probes import write_report_atomic

PLAN = ["plan", "--model", "gpt2", "--tokens", "1B", "--clouds", "aws", "--max-gpus", "16"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("home", ["y" * 300, "/".join(["yyyyyyyyyy"] * 400)])
@pytest.mark.parametrize("argv", [
    ["estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8"], ["probe", "show"],
    ["catalog", "use", "packaged"]])
def test_a_data_folder_no_file_system_accepts_is_one_line(capsys, tmp_path, monkeypatch,
                                                           home, argv):
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / home))  # ENAMETOOLONG was a traceback
    code, out, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "GPUPLAN_HOME" in err and "To fix: set GPUPLAN_HOME to a shorter path" in err


def _gpuplan(args, **kw):
    return subprocess.run([sys.executable, "-m", "planner", *args], capture_output=True,
                          text=True, timeout=120, **kw)


def test_standard_output_as_the_task_file_is_refused_before_planning(tmp_path):
    """`--emit-out /dev/stdout > plan.txt` replaced plan.txt with the task file (exit 0): the
    plan the command printed was lost."""
    with open(tmp_path / "plan.txt", "w") as out:
        proc = subprocess.run([sys.executable, "-m", "planner", *PLAN, "--emit", "skypilot",
                               "--emit-out", "/dev/stdout"], stdout=out,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 2 and "is an open file of a process" in proc.stderr
    assert (tmp_path / "plan.txt").read_text() == ""  # refused before anything was printed
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("path", ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"])
def test_paths_through_a_process_descriptor_are_refused(tmp_path, path):
    from catalog import GpuplanError, check_output_path

    with pytest.raises(GpuplanError, match="is an open file of a process"):
        check_output_path(path, what="report (--out)")
    link = tmp_path / "out.md"
    link.symlink_to(path)  # a link of the user's to one
    with pytest.raises(GpuplanError, match="is an open file of a process"):
        check_output_path(link, what="report (--out)")
    check_output_path(tmp_path / "plain.md", what="report (--out)")  # an ordinary path is fine


def test_a_closed_stderr_keeps_exit_2_and_a_clean_stdout():
    """`plan … 2>&-` when infeasible exited 1 (sys.stderr.write on None); error lines went to
    stdout among the JSON."""
    infeasible = _gpuplan([*PLAN, "--deadline", "1h", "--budget", "0.01", "--json"],
                          stderr=None, close_fds=True,
                          preexec_fn=lambda: os.close(2))
    assert infeasible.returncode == 2
    assert infeasible.stdout.lstrip().startswith("{") and "error:" not in infeasible.stdout
    bad = _gpuplan(["estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "0", "--json"],
                   stderr=None, preexec_fn=lambda: os.close(2))
    assert bad.returncode == 2 and bad.stdout == ""


def test_a_stored_report_nested_too_deep_is_damaged_not_a_traceback(capsys, tmp_path):
    import catalog

    ingest(write_report_atomic(h100_report(), tmp_path / "r.json"), catalog.load_catalog())
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = ? WHERE id = 1",
                     ("[" * 100_000 + "]" * 100_000,))
    code, out, err = run(capsys, "estimate", "--model", "gpt2", "--gpu", "H100", "--gpus", "8")
    assert code == 0 and "Traceback" not in err  # the report is refused, the estimate goes on
    code, out, err = run(capsys, "probe", "show", "1")
    assert code == 2 and "nested too deep to read" in err and "`gpuplan probe remove 1`" in err
    code, out, err = run(capsys, "probe", "show")
    assert code == 0 and "nested too deep" in out
