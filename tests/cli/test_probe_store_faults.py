"""Faults of the probe database (fault sweep, 2026-12): a stored report whose text is not
UTF-8 is one damaged report, not a failure of every plan; an I/O error while the schema is
created is said as itself; a full disk during a removal does not speak of storing."""

from __future__ import annotations

import sqlite3

import pytest
from probe_reports import h100_report

from planner.cli import main
from planner.store import db_path
from probes import write_report_atomic

NOT_UTF8 = "CAST(X'7B0A202022223A20FF2C0A202022223A20310A7D' AS TEXT)"  # {"": \xff, "": 1}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _two_reports(capsys, tmp_path) -> None:
    paths = [write_report_atomic(h100_report(bf16_tflops=600.0 + i), tmp_path / f"r{i}.json")
             for i in range(2)]
    assert run(capsys, "probe", "ingest", *map(str, paths))[0] == 0


def test_a_report_that_is_not_utf8_is_damaged_alone(capsys, tmp_path):
    _two_reports(capsys, tmp_path)
    with sqlite3.connect(db_path()) as conn:
        conn.execute(f"UPDATE reports SET report_json = {NOT_UTF8} WHERE id = 2")
    # plans go on with the other report (it said "the probe database failed" over 4 lines)
    code, out, err = run(capsys, "estimate", "--model", "llama3-8b", "--tokens", "1T", "--gpu",
                         "H100", "--gpus", "64")
    assert code == 0 and "Traceback" not in err and "decode" not in err, err
    code, _, err = run(capsys, "probe", "show", "2")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "not UTF-8" in err and "gpuplan probe remove 2" in err, err
    code, out, err = run(capsys, "probe", "show")
    assert code == 0 and "decode" not in err + out, err
    code, out, err = run(capsys, "probe", "remove", "2")
    assert code == 0, err
    assert run(capsys, "probe", "show", "1")[0] == 0


def test_an_io_error_while_creating_the_schema_is_said_as_itself(capsys, tmp_path):
    path = db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/null")  # writes vanish; the COMMIT's sync fails
    report = write_report_atomic(h100_report(bf16_tflops=600.0), tmp_path / "r.json")
    code, _, err = run(capsys, "probe", "ingest", str(report))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "cannot rollback" not in err, err  # the ROLLBACK's own error hid the disk's
    assert "To fix:" in err


@pytest.mark.parametrize("text", ["database or disk is full"])
def test_a_full_disk_says_nothing_was_changed(text, tmp_path):
    from planner.store._db import _error

    said = str(_error(sqlite3.OperationalError(text), tmp_path / "probes.db"))
    assert "nothing was changed" in said and "stored" not in said and "To fix:" in said


def test_a_database_error_quoting_stored_text_is_one_short_line(tmp_path):
    from planner.store._db import _error

    said = str(_error(sqlite3.OperationalError("Could not decode column 'x' with text '{\n"
                                               + "  \"a\": 1,\n" * 400 + "}'"),
                      tmp_path / "probes.db"))
    assert "\n" not in said and len(said) < 400, said


def test_an_interrupt_after_the_commit_says_the_report_was_stored(capsys, tmp_path,
                                                                  monkeypatch):
    """Ctrl-C just after the commit said "interrupted" of a report the database had kept
    (fault sweep 2026-12-05): what is stored is read back and said."""
    import planner.store as store

    paths = [str(write_report_atomic(h100_report(bf16_tflops=600.0 + i), tmp_path / f"r{i}.json"))
             for i in range(2)]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "load_calibration", interrupted)  # read after every commit
    code, out, err = run(capsys, "probe", "ingest", *paths)
    assert code == 130 and out == ""
    said = " ".join(err.split())
    assert f"interrupted: stored: {paths[0]} (report 1), {paths[1]} (report 2)" in said, err


def test_an_interrupt_before_any_commit_says_nothing_was_stored(capsys, tmp_path, monkeypatch):
    import planner.store as store

    path = str(write_report_atomic(h100_report(), tmp_path / "r.json"))

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "ingest", interrupted)
    code, out, err = run(capsys, "probe", "ingest", path)
    assert code == 130 and "interrupted: no report was stored" in err, err
