"""A measured report is not lost to a full disk (fault sweep, 2026-12): a nearly full disk
is refused before measuring, and a write that fails at the end saves the report to a rescue
file the error names."""

from __future__ import annotations

from collections import namedtuple
from pathlib import Path

import pytest

import probes._rescue as rescue
from probes import load_report
from probes._errors import ReportWriteError
from probes.cli import main

FAST = ["--quick", "--device", "cpu", "--shapes", "64", "--dtypes", "fp32"]
Usage = namedtuple("Usage", "total used free")


@pytest.fixture
def full_target(monkeypatch, tmp_path):
    """Writing the asked-for path fails as a full disk does; other paths write."""
    target = tmp_path / "out" / "report.json"
    real = rescue.write_report_atomic

    def write(report, path):
        if Path(path) == target:
            raise ReportWriteError(f"probe report {target}: cannot write it (disk full). "
                                   "To fix: free space, or choose another location with --out.")
        return real(report, path)

    monkeypatch.setattr(rescue, "write_report_atomic", write)
    monkeypatch.setattr(rescue.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    return target


def test_a_run_whose_report_cannot_be_written_is_saved_elsewhere(full_target, tmp_path, capsys):
    pytest.importorskip("torch")
    assert main([*FAST, "--out", str(full_target)]) == 2
    err = capsys.readouterr().err
    (saved,) = (tmp_path / "tmp").glob("gpuplan-probe-report-*.json")
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert f"saved to {saved} instead" in err and f"mv {saved} {full_target}" in err
    assert load_report(saved).quick  # the whole measured report
    assert not full_target.exists()


def test_when_no_rescue_works_the_first_error_stands(full_target, monkeypatch, tmp_path):
    def fail(report, path):
        raise ReportWriteError(f"probe report {path}: cannot write it (disk full). To fix: x")

    monkeypatch.setattr(rescue, "write_report_atomic", fail)
    with pytest.raises(ReportWriteError, match=str(full_target)) as raised:
        rescue.write_or_rescue(object(), full_target)
    assert "saved to" not in str(raised.value)


def test_a_nearly_full_disk_is_refused_before_measuring(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(rescue.shutil, "disk_usage", lambda p: Usage(10**9, 10**9, 300_000))
    measured = []
    monkeypatch.setattr("probes._runner.run_probes", lambda *a, **k: measured.append(1))
    with pytest.raises(SystemExit) as exited:  # an option's one-line error, as argparse's
        main([*FAST, "--out", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert exited.value.code == 2 and err.count("\n") == 1
    assert "only 292 KiB free" in err and "To fix: free space" in err and not measured


def test_a_disk_with_room_is_not_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(rescue.shutil, "disk_usage", lambda p: Usage(10**9, 0, 10**9))
    rescue.check_space(tmp_path / "new" / "deeper" / "r.json", what="probe report")


@pytest.mark.parametrize(("why", "fix"), [
    ("the file is larger than this process's file-size limit, ulimit -f",
     "raise the file-size limit (ulimit -f unlimited) and run again"),
    ("read-only file system", "choose a path on a writable file system"),
])
def test_the_rescue_keeps_the_write_s_own_fix(why, fix, monkeypatch, tmp_path):
    """The rescue said "To fix: free space, then mv …" whatever failed: a ulimit or a
    read-only mount sent the user to free space."""
    target = tmp_path / "out" / "report.json"
    real = rescue.write_report_atomic

    def write(report, path):
        if Path(path) == target:
            raise ReportWriteError(f"probe report {target}: cannot write it ({why}). To fix: "
                                   f"{fix} with --out.")
        return real(report, path)

    monkeypatch.setattr(rescue, "write_report_atomic", write)
    monkeypatch.setattr(rescue.tempfile, "gettempdir", lambda: str(tmp_path))
    from probe_reports import h100_report

    with pytest.raises(ReportWriteError) as info:
        rescue.write_or_rescue(h100_report(), target)
    said = str(info.value)
    assert f"To fix: {fix}, then mv " in said and "free space" not in said
    assert "--out" not in said  # the run is over: no option chooses the place now
