"""The probe database (SQLite, in the user's data directory) and the calibration built from it.

    ingest, ingest_bytes, StoredReport           store a probe report (a file, or its bytes)
    list_reports, get_report, report_json        what is stored
    load_calibration, load_calibration_with_notes   the Calibration the model reads
    calibrate, Candidate, WorkloadCandidate      the rules that decide what is believed (pure)
    db_path, workload_figures

The database is the one thing here that touches the disk; which figures calibrate the model is
decided when the calibration is loaded, so a rule that changes applies to stored reports.
"""

from ._calibrate import load_calibration, load_calibration_with_notes
from ._db import BUSY_TIMEOUT_SECONDS, RETRIES, SCHEMA_VERSION, db_path
from ._reports import (
    DTYPE_NAMES,
    StoredReport,
    get_report,
    ingest,
    ingest_bytes,
    list_reports,
    report_json,
    workload_figures,
)
from ._rules import (
    MAX_WORKLOAD_RATIO,
    MIN_FRACTION_OF_PEAK,
    Candidate,
    WorkloadCandidate,
    calibrate,
)

__all__ = [
    "BUSY_TIMEOUT_SECONDS", "DTYPE_NAMES", "MAX_WORKLOAD_RATIO", "MIN_FRACTION_OF_PEAK",
    "RETRIES", "SCHEMA_VERSION", "Candidate", "StoredReport", "WorkloadCandidate", "calibrate",
    "db_path", "get_report", "ingest", "ingest_bytes", "list_reports", "load_calibration",
    "load_calibration_with_notes", "report_json", "workload_figures",
]
