"""One run counts once, but a copy refused whole is not the run (planner/store/_reports.py,
_calibrate.py): a copy of the probes' file whose own bf16 figure was edited (refused: "the
report was edited") was stored first, and the probes' own file was then "already stored as
report 1 (same measurements)" and calibrated nothing, its refusal quoting a figure the file
does not hold, and its fix ("re-run the probes and ingest the file they write") what the
user had just done (hostile-input review, 2026-12-07). On 8 ranks the report's own figure is
not one that calibrates (the summary over GPUs is), so the two had one fingerprint."""

from __future__ import annotations

import json

import pytest
from probe_reports import h100_report, report_data_with
from probe_store import H100

from planner.cli import main
from planner.store import ingest, list_reports, load_calibration


def _files(tmp_path):
    real = tmp_path / "report.json"
    real.write_text(json.dumps(report_data_with(h100_report(), "ranks.0.rank", 0)))
    edited = tmp_path / "edited.json"
    edited.write_text(json.dumps(report_data_with(h100_report(), "matmul.dtypes.0.best_tflops",
                                                  1e308)))
    return real, edited


def test_the_real_run_calibrates_after_an_edited_copy_was_stored(tmp_path, catalog):
    real_path, edited_path = _files(tmp_path)
    edited = ingest(edited_path, catalog)
    assert edited.ingest_outcome == "stored"
    real = ingest(real_path, catalog)
    assert (real.id, real.ingest_outcome) == (2, "stored")
    cal = load_calibration(catalog)
    assert cal.matmul(H100, "bf16").report_ids == (real.id,)
    said = [n.line() for n in cal.rejected() if edited.id in n.report_ids]
    assert said and all("was edited" in line for line in said), said


def test_an_edited_copy_of_a_stored_run_is_that_run(tmp_path, catalog):
    """The other order is unchanged: the run is stored and calibrates, and a copy of it
    (edited or not) is that run, already stored; the real file's figures stay the ones used."""
    real_path, edited_path = _files(tmp_path)
    real = ingest(real_path, catalog)
    edited = ingest(edited_path, catalog)
    assert (edited.id, edited.ingest_outcome) == (real.id, "already_stored")
    assert len(list_reports()) == 1
    assert load_calibration(catalog).matmul(H100, "bf16").report_ids == (real.id,)


@pytest.mark.parametrize("order", ["edited first", "real first"])
def test_two_copies_of_the_real_file_still_count_once(tmp_path, catalog, order):
    real_path, edited_path = _files(tmp_path)
    data = json.loads(real_path.read_text())
    data["environment"]["hostname"] = "renamed"
    copy = tmp_path / "copy.json"
    copy.write_text(json.dumps(data))
    paths = [edited_path, real_path, copy] if order == "edited first" else [real_path, copy]
    stored = [ingest(p, catalog) for p in paths]
    assert stored[-1].ingest_outcome == "already_stored"
    assert load_calibration(catalog).matmul(H100, "bf16").report_ids == (stored[-2].id,)


def test_the_cli_says_the_real_file_calibrates(tmp_path, catalog, capsys):
    real_path, edited_path = _files(tmp_path)
    assert main(["probe", "ingest", str(edited_path)]) == 0
    capsys.readouterr()
    assert main(["probe", "ingest", str(real_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"report 2: NVIDIA H100 80GB HBM3 x8 on p5.48xlarge; calibrates {H100}")
