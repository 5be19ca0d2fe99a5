"""Measurements on a rented GPU instance, written as one versioned JSON report.

``python -m probes`` (or ``torchrun ... -m probes``) runs them, ``python -m probes workload``
times the user's own transformer layers (`run_workload_probe`); `load_report` reads a report
back without torch, and `report_figures` says which of its numbers are comparable to the
planner's defaults (and why not; `report_refusal`: why none is). Importing this package
never imports torch.
"""

from probes._figures import Figure, report_figures, report_refusal, workload_refusal
from probes._nccl_log import is_rdma, is_tcpx
from probes._report_io import (
    MAX_REPORT_BYTES,
    load_report,
    parse_report,
    report_from_bytes,
    report_to_json,
    write_report_atomic,
)
from probes._runner import PROBE_NAMES, ProbeConfig, run_probes
from probes._schema import (
    SCHEMA_VERSION,
    SUPPORTED_SCHEMA_VERSIONS,
    ProbeReport,
    ProbesError,
    ProbeSetupError,
    ReportError,
    WorkloadSection,
)
from probes._workload_config import WorkloadConfig
from probes._workload_run import run_workload_probe

__all__ = [
    "MAX_REPORT_BYTES",
    "PROBE_NAMES",
    "SCHEMA_VERSION",
    "SUPPORTED_SCHEMA_VERSIONS",
    "Figure",
    "ProbeConfig",
    "ProbeReport",
    "ProbeSetupError",
    "ProbesError",
    "ReportError",
    "WorkloadConfig",
    "WorkloadSection",
    "is_rdma",
    "is_tcpx",
    "load_report",
    "parse_report",
    "report_figures",
    "report_from_bytes",
    "report_refusal",
    "report_to_json",
    "run_probes",
    "run_workload_probe",
    "workload_refusal",
    "write_report_atomic",
]
