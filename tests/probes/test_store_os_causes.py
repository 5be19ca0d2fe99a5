"""Probe-database errors name the cause the file system shows (fix sweep, 2026-12): SQLite
says "disk I/O error" or "unable to open" for a write past `ulimit -f`, a `probes.db-journal`
that is a directory and a read-only mount alike, and the store told the user to check the disk
or the permissions."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from probe_reports import h100_report

from planner.cli import main
from planner.store import db_path
from probes import write_report_atomic

ROOT = Path(__file__).resolve().parents[2]


def _ingest(capsys, path) -> tuple[int, str]:
    code = main(["probe", "ingest", str(path)])
    return code, capsys.readouterr().err


@pytest.mark.skipif(not hasattr(os, "statvfs"), reason="POSIX file-size limits")
def test_a_write_past_the_file_size_limit_says_ulimit(tmp_path):
    """Python ignores SIGXFSZ (CPython does at start-up), so the write fails with EFBIG and
    SQLite says "disk I/O error": the message must name the limit, not the disk."""
    report = write_report_atomic(h100_report(), tmp_path / "r.json")
    script = textwrap.dedent(f"""
        import resource, signal
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN
        resource.setrlimit(resource.RLIMIT_FSIZE, (20 * 1024, resource.getrlimit(
            resource.RLIMIT_FSIZE)[1]))
        from planner.cli import main
        raise SystemExit(main(["probe", "ingest", {str(report)!r}]))
    """)
    env = {**os.environ, "GPUPLAN_HOME": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    said = done.stderr.strip()
    assert len(said.splitlines()) == 1, said
    assert "file-size limit of 20,480 bytes, ulimit -f" in said, said
    assert "ulimit -f unlimited" in said and "check the disk" not in said, said


@pytest.mark.parametrize("database", [False, True], ids=["new", "existing"])
def test_a_journal_that_is_a_directory_is_named(database, tmp_path, capsys):
    first = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "a.json")
    second = write_report_atomic(h100_report(bf16_tflops=610.0), tmp_path / "b.json")
    if database:
        assert _ingest(capsys, first)[0] == 0
    journal = db_path().with_name("probes.db-journal")
    journal.mkdir(parents=True)
    code, err = _ingest(capsys, second)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "probes.db-journal beside it is a directory" in err, err
    assert f"To fix: move the directory {journal} away" in err, err
    assert "check the disk" not in err and "permissions" not in err, err


def test_a_read_only_file_system_is_not_told_to_check_permissions(tmp_path, capsys,
                                                                  monkeypatch):
    """No database yet on a read-only mount: SQLite says "unable to open" (root passes every
    permission check, so chmod is no fix); statvfs tells the mount."""
    report = write_report_atomic(h100_report(), tmp_path / "r.json")
    db_path().parent.mkdir(parents=True, exist_ok=True)

    def read_only_connect(*args, **kwargs):  # what SQLite raises there, without a mount
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(sqlite3, "connect", read_only_connect)
    monkeypatch.setattr(os, "statvfs", lambda p: type("V", (), {"f_flag": os.ST_RDONLY})())
    code, err = _ingest(capsys, report)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "is on a read-only file system" in err, err
    assert "permissions" not in err and "writable file system" in err, err
