"""Measurements on a rented GPU instance, written as one versioned JSON report.

``python -m probes`` (or ``torchrun ... -m probes``) runs them; `load_report` reads a report
back without torch. Importing this package never imports torch.
"""

from probes._runner import PROBE_NAMES, ProbeConfig, run_probes
from probes._schema import (
    SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    ProbeReport,
    ProbesError,
    ProbeSetupError,
    ReportError,
    load_report,
    parse_report,
    report_to_json,
    write_report_atomic,
)

__all__ = [
    "PROBE_NAMES",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "ProbeConfig",
    "ProbeReport",
    "ProbeSetupError",
    "ProbesError",
    "ReportError",
    "load_report",
    "parse_report",
    "report_to_json",
    "run_probes",
    "write_report_atomic",
]
