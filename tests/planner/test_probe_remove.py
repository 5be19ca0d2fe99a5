"""`gpuplan probe remove` and ``store.remove_reports``: a report taken out stops calibrating at
once, every id must be stored or nothing is removed, a damaged report can be removed, and a
removed report's id is never given to another (the app's cached plans key on the ids)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from probe_store import H100, put

from planner import CalibrationError
from planner.cli import main
from planner.store import (
    db_path,
    get_report,
    ingest,
    list_reports,
    load_calibration,
    remove_reports,
)
from probes import write_report_atomic


def three_reports(tmp_path, catalog, make_report):
    for i, tflops in enumerate((600.0, 700.0, 640.0)):
        put(tmp_path, catalog, make_report(bf16_tflops=tflops,
                                           created_utc=f"2026-01-0{i + 1}T00:00:00Z"), f"{i}.json")


def test_a_removed_report_stops_calibrating(tmp_path, catalog, make_report):
    three_reports(tmp_path, catalog, make_report)
    assert load_calibration(catalog).matmul(H100, "bf16").value == 640.0  # median of three
    removed = remove_reports([3, 1])
    assert [r.id for r in removed] == [1, 3]
    assert removed[0].accelerator == H100 and removed[0].source_path.endswith("0.json")
    m = load_calibration(catalog).matmul(H100, "bf16")
    assert (m.value, m.report_ids) == (700.0, (2,))
    assert [r.id for r in list_reports()] == [2]
    with sqlite3.connect(db_path()) as conn:  # the measurements went with their reports
        assert {r[0] for r in conn.execute("SELECT report_id FROM measurements")} == {2}


def test_an_unknown_id_removes_nothing_and_names_the_stored_ones(tmp_path, catalog,
                                                                 make_report):
    three_reports(tmp_path, catalog, make_report)
    with pytest.raises(CalibrationError, match=r"no probe report 7 \(stored: 1, 2, 3\); "
                                               r"nothing was removed\. To fix"):
        remove_reports([2, 7])
    assert [r.id for r in list_reports()] == [1, 2, 3]


def test_removing_from_no_database_creates_none(tmp_path):
    with pytest.raises(CalibrationError, match="no probe report 1: none is stored"):
        remove_reports([1])
    assert not db_path().exists()


@pytest.mark.parametrize("ids", [[], [True], ["1"], [1.0]])
def test_ids_must_be_whole_numbers(ids):
    with pytest.raises(CalibrationError, match="report ids are whole numbers"):
        remove_reports(ids)


def test_a_removed_id_is_never_reused(tmp_path, catalog, make_report):
    three_reports(tmp_path, catalog, make_report)
    remove_reports([3])  # the highest: SQLite alone would give 3 to the next report
    again = put(tmp_path, catalog, make_report(bf16_tflops=655.0), "new.json")
    assert again.id == 4
    # and the removed file itself can come back, as a new report
    back = ingest(tmp_path / "2.json", catalog)
    assert back.ingest_status == "stored" and back.id == 5


def test_a_damaged_report_can_be_removed(tmp_path, catalog, make_report):
    three_reports(tmp_path, catalog, make_report)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = '[1]' WHERE id = 2")
    with pytest.raises(CalibrationError, match=r"damaged.*To fix: `gpuplan probe remove 2`"):
        list_reports()
    remove_reports([2])
    assert [r.id for r in list_reports()] == [1, 3]


def test_a_database_of_an_older_gpuplan_gets_the_removed_table(tmp_path, catalog,
                                                                make_report):
    three_reports(tmp_path, catalog, make_report)
    with sqlite3.connect(db_path()) as conn:  # as schema 1 was before `probe remove`
        conn.execute("DROP TABLE removed_reports")
    remove_reports([3])
    assert put(tmp_path, catalog, make_report(bf16_tflops=655.0), "new.json").id == 4


# -- the command ------------------------------------------------------------------------------
def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_the_command_removes_and_says_what_is_left(capsys, tmp_path, catalog, make_report):
    three_reports(tmp_path, catalog, make_report)
    code, out, err = run(capsys, "probe", "remove", "1", "3")
    assert code == 0, err
    assert "removed probe report 1 (H100-SXM5-80GB, measured 2026-01-01" in out
    assert "removed probe report 3" in out and "1 report left" in out
    code, out, _ = run(capsys, "probe", "remove", "2", "--json")
    assert code == 0
    data = json.loads(out)
    assert [r["id"] for r in data["removed"]] == [2] and data["reports_left"] == 0
    assert not list_reports()


IDS_FIX = "To fix: `gpuplan probe show` lists the ids"


@pytest.mark.parametrize(("arg", "says"), [
    ("0", IDS_FIX), ("x", IDS_FIX), ("1.5", IDS_FIX), ("١", IDS_FIX), ("99999999999999", IDS_FIX),
    ("", IDS_FIX), ("-1", "No such option: -1. To fix")])  # click's word for a dash
def test_the_command_refuses_a_bad_id_in_one_line(capsys, tmp_path, catalog, make_report,
                                                   arg, says):
    path = write_report_atomic(make_report(), tmp_path / "r.json")
    ingest(path, catalog)
    code, out, err = run(capsys, "probe", "remove", "1", arg)
    assert code == 2 and err.count("\n") == 1 and says in err
    assert get_report(1).id == 1  # nothing removed


def test_the_command_on_an_unknown_id_exits_2(capsys, tmp_path, catalog, make_report):
    three_reports(tmp_path, catalog, make_report)
    code, _, err = run(capsys, "probe", "remove", "4")
    assert code == 2 and "no probe report 4 (stored: 1, 2, 3)" in err


def test_removing_beside_a_damaged_report_succeeds_and_counts_it(capsys, tmp_path, catalog,
                                                                 make_report):
    """The count of reports left parsed every one: a damaged report left behind turned a
    removal that had happened into exit 2."""
    three_reports(tmp_path, catalog, make_report)
    with sqlite3.connect(db_path()) as conn:
        conn.execute("UPDATE reports SET report_json = '[1]' WHERE id = 2")
    code, out, err = run(capsys, "probe", "remove", "1", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["id"] for r in data["removed"]] == [1] and data["reports_left"] == 2
