"""What an ingest did, as one fixed value beside the store's words (``ingest_outcome``):
`probe ingest --json` printed "relabelled" when the words contained "its accelerator is
now", matched as text."""

from __future__ import annotations

import json

from probe_reports import h100_report, unknown_gpu_data
from probe_store import H100

from planner.cli import main
from planner.store import ingest

PCIE = "H100-PCIe-80GB"  # the same memory: the report's 80 GB does not refuse it


def _unnamed_gpu(tmp_path):
    """The H100 fixture's report with a GPU name and instance the catalog does not know: it
    is stored as the accelerator `accelerator` names, and another ingest may name another."""
    path = tmp_path / "foo.json"
    path.write_text(json.dumps(unknown_gpu_data(h100_report())))
    return path


def test_each_outcome_with_its_words(tmp_path, catalog):
    path = _unnamed_gpu(tmp_path)
    first = ingest(path, catalog, accelerator="H100")
    assert (first.ingest_outcome, first.ingest_status, first.accelerator) == (
        "stored", "stored", H100)
    again = ingest(path, catalog, accelerator="H100")
    assert again.ingest_outcome == "already_stored"
    assert again.ingest_status == "already stored as report 1 (same file)"
    named = ingest(path, catalog, accelerator=PCIE)
    assert named.ingest_outcome == "relabelled" and named.accelerator == PCIE
    assert named.ingest_status.startswith("already stored as report 1 (same file); its "
                                          f"accelerator is now {PCIE} (was {H100})")


def test_the_cli_prints_the_outcome(tmp_path, catalog, capsys):
    path = _unnamed_gpu(tmp_path)
    assert main(["probe", "ingest", str(path), "--json", "--accelerator", "H100"]) == 0
    assert main(["probe", "ingest", str(path), "--json", "--accelerator", PCIE]) == 0
    first, second = (json.loads(line)[0] for line in capsys.readouterr().out.splitlines())
    assert (first["ingest_status"], first["ingest_note"]) == ("stored", None)
    assert second["ingest_status"] == "relabelled"
    assert "its accelerator is now" in second["ingest_note"]
