"""Helpers shared by the tests of the probe store and calibration (tests/planner/
test_probe_ingest.py, test_workload_calibration.py): write a report the way the probes do,
ingest it, and read why the rules refused it."""

from __future__ import annotations

from planner import build_cluster
from planner.model import Calibration
from planner.store import ingest
from probes import write_report_atomic

H100 = "H100-SXM5-80GB"


def p5(catalog, nodes: int = 1):
    """(cluster, memory GiB) of ``nodes`` p5.48xlarge."""
    return build_cluster(catalog, instance="p5.48xlarge", nodes=nodes)


def put(tmp_path, catalog, report, name="r.json", **kw):
    """``report`` written as `python -m probes` writes it, then ingested."""
    return ingest(write_report_atomic(report, tmp_path / name), catalog, **kw)


def refused(cal: Calibration, report_id: int) -> list[str]:
    """Why the calibration refused figures of report ``report_id``."""
    return [n.reason for n in cal.rejected() if report_id in n.report_ids]
