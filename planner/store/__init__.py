"""The probe database (SQLite, in the user's data directory) and the calibration built from it.

    ingest, ingest_bytes, StoredReport           store a probe report (a file, or its bytes)
    list_reports, get_report, report_json, report_count   what is stored
    stored_ids                                   which report files are stored
    remove_reports, RemovedReport                take reports out (their ids are not reused)
    load_calibration, load_calibration_with_notes   the Calibration the model reads
    calibrate, Candidate, WorkloadCandidate      the rules that decide what is believed (pure)
    db_path, workload_figures

The database is the one thing here that touches the disk; which figures calibrate the model is
decided when the calibration is loaded, so a rule that changes applies to stored reports.
"""

from ._db import BUSY_TIMEOUT_SECONDS, RETRIES, SCHEMA_VERSION, db_path

# The rest loads on first use (PEP 562): `gpuplan estimate` and `plan` only ask whether a
# database exists (``db_path``) and skip the rules, the report parser and their imports when
# none does. `from planner.store import ingest` works the same.
_LAZY = {"load_calibration": "_calibrate", "load_calibration_with_notes": "_calibrate",
         "DTYPE_NAMES": "_offered", "StoredReport": "_reports", "get_report": "_reports",
         "ingest": "_reports", "ingest_bytes": "_reports", "list_reports": "_reports",
         "report_count": "_reports", "report_json": "_reports", "stored_ids": "_reports",
         "workload_figures": "_offered",
         "RemovedReport": "_remove", "remove_reports": "_remove",
         "MAX_WORKLOAD_RATIO": "_rules", "MIN_FRACTION_OF_PEAK": "_rules",
         "Candidate": "_rules", "WorkloadCandidate": "_rules", "calibrate": "_rules"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'planner.store' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BUSY_TIMEOUT_SECONDS", "DTYPE_NAMES", "MAX_WORKLOAD_RATIO", "MIN_FRACTION_OF_PEAK",
    "RETRIES", "SCHEMA_VERSION", "Candidate", "RemovedReport", "StoredReport",
    "WorkloadCandidate", "calibrate",
    "db_path", "get_report", "ingest", "ingest_bytes", "list_reports", "load_calibration",
    "load_calibration_with_notes", "remove_reports", "report_count", "report_json",
    "stored_ids", "workload_figures",
]
