"""`probe ingest` of several files (tester's findings, 2026-12): every file is checked before
any is stored, so one refused file stores none of them whatever is wrong with it (a missing
schema_version had left the files before it stored, a bad JSON had not); every refused file is
listed with its reason, named as typed; --json prints an object on error too (it printed
nothing while report 1 was stored), and says what the ingest did as a fixed value."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from planner.cli import main

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "gpu_check_h200_2026-12-04"
RERUN = "re-run `python -m probes --out PATH` on the instance and use that file"
BAD = {
    "empty.json": ("", "not valid JSON as gpuplan reads it (is empty)"),
    "cut.json": ('{"schema_version": 3, "created', "not valid JSON as gpuplan reads it"),
    "other.json": ('{"a": 1}', "missing field 'schema_version'"),
    "list.json": ("[1]", "expected a JSON object at the top level, got a list"),
}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def stored(capsys) -> list:
    code, out, _ = run(capsys, "probe", "show", "--json")
    assert code == 0
    return json.loads(out)


@pytest.fixture
def here(tmp_path, monkeypatch):
    """A folder with the real H200 reports in it, the current directory (names as typed)."""
    shutil.copy(DATA / "probe-report.json", tmp_path / "orig.json")
    shutil.copy(DATA / "workload-report.json", tmp_path / "work.json")
    for name, (text, _) in BAD.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("bad", list(BAD))
def test_one_refused_file_stores_none_of_them(capsys, here, bad):
    code, out, err = run(capsys, "probe", "ingest", "orig.json", bad, "work.json")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: 1 of 3 probe reports is refused, so none was stored: {bad}: "
                          f"{BAD[bad][1]}"), err
    assert err.rstrip().endswith(f"To fix: {RERUN}, then ingest the 3 files again"), err
    assert stored(capsys) == []  # report 1 had been stored when the store refused the file


def test_every_refused_file_is_listed_with_its_reason(capsys, here):
    code, _, err = run(capsys, "probe", "ingest", "orig.json", "empty.json", "other.json",
                       "missing.json")
    assert code == 2 and len(err.strip().splitlines()) == 1, err  # only the first was said
    assert "3 of 4 probe reports are refused, so none was stored: " in err
    assert ("empty.json: not valid JSON as gpuplan reads it (is empty); other.json: missing "
            "field 'schema_version'; missing.json: cannot read it (no such file)") in err
    assert (f"To fix: for empty.json, other.json: {RERUN}; for missing.json: give the path of "
            "an existing file, then ingest the 4 files again") in err
    assert stored(capsys) == []


@pytest.mark.parametrize(("bad", "said"), [
    ("empty.json", "probe report empty.json: not valid JSON as gpuplan reads it (is empty)"),
    ("other.json", "probe report other.json: missing field 'schema_version'"),
])
def test_one_file_is_named_as_typed_in_one_style(capsys, here, bad, said):
    # "error: /tmp/ed/other.json: … file." beside "error: probe report empty.json is …"
    code, _, err = run(capsys, "probe", "ingest", bad)
    assert code == 2 and err == f"error: {said}. To fix: {RERUN}\n", err
    assert str(here) not in err


def test_json_says_the_refusal_as_an_object(capsys, here):
    code, out, err = run(capsys, "probe", "ingest", "--json", "orig.json", "other.json",
                         "empty.json")
    assert code == 2
    said = json.loads(out)  # had been 0 bytes on stdout
    assert said["stored"] == [] and said["error"] == err.removeprefix("error: ").rstrip("\n")
    assert said["errors"] == [
        {"path": "other.json", "error": "missing field 'schema_version'", "fix": RERUN},
        {"path": "empty.json", "error": "not valid JSON as gpuplan reads it (is empty)",
         "fix": RERUN}]
    assert stored(capsys) == []


def test_json_names_what_was_stored_before_a_store_failure(capsys, here, monkeypatch):
    # a failure only the real database meets (a full disk): the reports before it are kept,
    # and --json lists them beside the error
    import planner.store
    from catalog import GpuplanError

    real = planner.store.ingest

    def ingest(path, *a, **kw):
        if str(path).endswith("work.json"):
            raise GpuplanError("/x/probes.db: the disk is full; nothing was changed. To fix: "
                               "free space")
        return real(path, *a, **kw)

    monkeypatch.setattr(planner.store, "ingest", ingest)
    code, out, err = run(capsys, "probe", "ingest", "--json", "orig.json", "work.json")
    assert code == 2 and "The reports before work.json were stored: orig.json (report 1)" in err
    said = json.loads(out)
    assert [r["id"] for r in said["stored"]] == [1] and said["stored"][0]["used"]
    assert said["errors"][0]["path"] == "work.json" and said["errors"][0]["fix"] == "free space"


def test_json_ingest_status_is_a_fixed_value(capsys, here):
    code, out, _ = run(capsys, "probe", "ingest", "--json", "orig.json")
    (first,) = json.loads(out)
    assert code == 0 and (first["ingest_status"], first["ingest_note"]) == ("stored", None)
    assert first["source_path"] == first["stored_source_path"] == str(here / "orig.json")
    shutil.copy("orig.json", "copy.json")
    code, out, _ = run(capsys, "probe", "ingest", "--json", "copy.json")
    (again,) = json.loads(out)
    assert code == 0 and again["id"] == 1 and again["ingest_status"] == "already_stored"
    assert again["ingest_note"] == "already stored as report 1 (same file)"
    # the file given, and the one report 1 was stored from under its own key
    assert again["source_path"] == str(here / "copy.json")
    assert again["stored_source_path"] == str(here / "orig.json")
