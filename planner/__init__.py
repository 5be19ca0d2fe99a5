"""The planner: workload → performance model → search/optimizer → reports.

Pure functions over data: nothing here prints, reads files at import, or mutates its inputs.
"""

from ._assumptions import Assumptions
from ._build import WorkloadSpec, build_cluster, build_workload
from ._calibration import NO_CALIBRATION, Calibration, Measurement
from ._errors import CalibrationError, HardwareError, NoFitError, PlannerError, WorkloadError
from ._estimate import Estimate, ParallelPlan, estimate
from ._hardware import Cluster, cluster_for_instance, reference_cluster
from ._optimizer import Constraints, PlanResult, plan
from ._presets import preset, preset_names
from ._probe_store import ingest as ingest_probe_report
from ._probe_store import list_reports as list_probe_reports
from ._probe_store import load_calibration
from ._quota import Quotas, load_quotas
from ._units import parse_count, parse_deadline
from ._workload import Architecture, Workload, infer_architecture

__all__ = [
    "Architecture", "Assumptions", "Calibration", "CalibrationError", "Cluster", "Constraints",
    "Estimate", "HardwareError", "Measurement", "NO_CALIBRATION", "NoFitError", "ParallelPlan",
    "PlanResult", "PlannerError", "Quotas", "Workload", "WorkloadError", "WorkloadSpec",
    "build_cluster", "build_workload", "cluster_for_instance", "estimate", "infer_architecture",
    "ingest_probe_report", "list_probe_reports", "load_calibration", "load_quotas",
    "parse_count", "parse_deadline", "plan", "preset", "preset_names", "reference_cluster",
]
