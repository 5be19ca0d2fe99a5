"""Damage inside the probe database's pages, and a write that waits for another's lock (hostile
sweep, 2026-12). A page that lost cells dropped rows without a word (`probe show` listed one
report of three, estimates used what was left, a removal and an ingest wrote into the damaged
file); an overflow chain pointing into another page read as one report that is "not UTF-8"; a
damaged schema was a traceback. Each is now the one error that names the file as damaged. An
ingest that waited up to 50 s for another process's lock said nothing until then."""

from __future__ import annotations

import hashlib
import os
import re
import selectors
import sqlite3
import subprocess
import sys
import time

import pytest
from probe_reports import h100_report
from probe_store import drop_cells, garble_schema, misdirect_overflow

from planner.cli import main
from planner.store import db_path, list_reports
from probes import write_report_atomic

ESTIMATE = ("estimate", "--model", "llama3-8b", "--tokens", "1T", "--gpu", "H100", "--gpus", "64")
FIX = "To fix: move it away and ingest the reports again"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _three_reports(capsys, tmp_path):
    paths = [write_report_atomic(h100_report(bf16_tflops=600.0 + i), tmp_path / f"r{i}.json")
             for i in range(3)]
    assert run(capsys, "probe", "ingest", *map(str, paths))[0] == 0
    return write_report_atomic(h100_report(bf16_tflops=640.0), tmp_path / "new.json")


def _said_damaged(capsys, argv, *, says: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, (argv, err)
    assert err.startswith(f"error: {db_path()}: the probe database is damaged ({says}"), err
    # estimate, plan and report may go on without the store: they say how
    fix = FIX + ("; or pass --no-calibration to plan with datasheet figures meanwhile"
                 if argv[0] in ("estimate", "plan", "report") else "")
    assert err.rstrip().endswith(fix) and "probe remove" not in err, err


def _digest() -> str:
    return hashlib.sha256(db_path().read_bytes()).hexdigest()


@pytest.mark.parametrize("table", ["reports", "measurements"])
def test_rows_a_damaged_page_dropped_are_damage_not_a_smaller_store(capsys, tmp_path, table):
    new = _three_reports(capsys, tmp_path)
    drop_cells(db_path(), table)  # SQLite itself reads one row where there were three
    before = _digest()
    for argv in (("probe", "show"), ("probe", "show", "--json"), ("probe", "show", "2"),
                 ("probe", "show", "1"), ESTIMATE, ("probe", "remove", "1"),
                 ("probe", "ingest", str(new))):
        _said_damaged(capsys, argv, says="SQLite's quick_check: ")
    # nothing written into the damaged file: it is as the damage left it, for a recovery
    assert _digest() == before and not db_path().with_name("probes.db-journal").exists()


def test_a_chain_into_another_page_is_a_damaged_file_not_one_unreadable_report(capsys,
                                                                               tmp_path):
    _three_reports(capsys, tmp_path)
    misdirect_overflow(db_path())  # a report's text runs on into a b-tree page's bytes
    for argv in (("probe", "show"), ESTIMATE, *(("probe", "show", str(i)) for i in (1, 2, 3))):
        _said_damaged(capsys, argv, says="SQLite's quick_check: ")


def test_a_damaged_schema_is_said_not_a_traceback(capsys, tmp_path):
    new = _three_reports(capsys, tmp_path)
    garble_schema(db_path())  # SQLite's message quotes bytes Python's sqlite3 cannot decode
    for argv in (("probe", "show"), ("probe", "show", "1"), ESTIMATE,
                 ("probe", "ingest", str(new)), ("probe", "remove", "1")):
        _said_damaged(capsys, argv, says="malformed database schema (removed_reports)")


def test_a_whole_file_with_one_unreadable_report_is_that_report_s_damage(capsys, tmp_path):
    """quick_check finds the file whole (a hand edit; damage inside a report's text alone):
    the store is usable, one report is damaged, and removing it is the fix."""
    _three_reports(capsys, tmp_path)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = '{\"quick\": ' WHERE id = 2")
    code, _, err = run(capsys, "probe", "show", "2")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{db_path()}: the probe database is damaged (report 2: its report does not " \
           "parse" in err and "To fix: `gpuplan probe remove 2`, or move it away" in err, err
    assert run(capsys, *ESTIMATE)[0] == 0  # plans go on with the other reports
    assert run(capsys, "probe", "show")[0] == 0


# -- a write waiting for another process's lock ----------------------------------------------
def test_an_ingest_that_waits_for_the_lock_says_so_and_then_stores(capsys, tmp_path):
    new = _three_reports(capsys, tmp_path)
    holder = sqlite3.connect(db_path(), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writing, for as long as it likes
    proc = subprocess.Popen([sys.executable, "-m", "planner", "probe", "ingest", str(new)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "COLUMNS": "200"})
    try:
        with selectors.DefaultSelector() as sel:  # the note comes while it still waits
            sel.register(proc.stderr, selectors.EVENT_READ)
            assert sel.select(timeout=30), "no line on stderr while the ingest waited"
            line = proc.stderr.readline()
        assert proc.poll() is None  # still waiting: the note is not said after the fact
        assert re.fullmatch(f"note: waiting for the probe database {re.escape(str(db_path()))}"
                            r": another gpuplan process is writing it \(up to \d+ s more\)…\n",
                            line), line
        time.sleep(0.5)
        holder.execute("ROLLBACK")  # the other process finishes: the ingest goes on
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        holder.close()
    assert proc.returncode == 0 and err == "", err
    assert "report 4:" in out and len(list_reports()) == 4


def test_an_ingest_that_waits_in_vain_says_so_once_then_the_lock_error(capsys, tmp_path,
                                                                        monkeypatch):
    from planner.store import _db  # the waits: private, cut short here

    new = _three_reports(capsys, tmp_path)
    monkeypatch.setattr(_db, "BUSY_TIMEOUT_SECONDS", 0.6)
    monkeypatch.setattr(_db, "NOTICE_AFTER_SECONDS", 0.2, raising=False)
    monkeypatch.setattr(_db, "RETRIES", 1)
    holder = sqlite3.connect(db_path(), isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        start = time.monotonic()
        code, out, err = run(capsys, "probe", "ingest", str(new))
        took = time.monotonic() - start
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    note, error = err.splitlines()
    assert code == 2 and out == ""
    assert note == (f"note: waiting for the probe database {db_path()}: another gpuplan "
                    "process is writing it (up to 1 s more)…"), err
    assert error.startswith(f"error: {db_path()}: the probe database is locked by another "
                            "process") and "To fix:" in error, err
    assert took >= 0.6 * 2  # the whole wait, as before: 0.2 s, then 0.4 s, then 0.6 s
    assert len(list_reports()) == 3
    assert "waiting" not in run(capsys, "probe", "ingest", str(new))[2]  # no wait: no note


@pytest.mark.parametrize("kind", ["loop", "dangling", "fifo", "device"])
def test_a_probe_database_that_is_no_file_says_what_it_is(capsys, tmp_path, kind):
    """probes.db as a symlink loop or a dangling link read as "no probe reports ingested"
    (and plans went uncalibrated without a word), and ingest said "check the permissions"; a
    FIFO was "disk I/O error … check the disk" (fault sweep 2026-12-06)."""
    db = db_path()
    db.parent.mkdir(parents=True, exist_ok=True)
    if kind == "loop":
        db.symlink_to(db.name)
    elif kind == "dangling":
        db.symlink_to(tmp_path / "gone.db")
    elif kind == "fifo":
        os.mkfifo(db)
    else:
        db.symlink_to("/dev/zero")
    report = write_report_atomic(h100_report(), tmp_path / "r.json")
    says = {"loop": "a symbolic link to itself or a missing place",
            "dangling": "a symbolic link to itself or a missing place",
            "fifo": "not a regular file", "device": "not a regular file"}[kind]
    for argv in (("probe", "show"), ("probe", "ingest", str(report)),
                 ("estimate", "--model", "gpt2", "--instance", "p5.48xlarge")):
        code, out, err = run(capsys, *argv)
        assert code == 2, (argv, out, err)
        assert says in err and "To fix: " in err and "\n" not in err.strip(), (argv, err)
