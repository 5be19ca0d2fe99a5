"""The planner: workload → performance model → search/optimizer → reports.

Pure functions over data: nothing here prints, reads files at import, or mutates its inputs.
"""

from ._allocate import Allocation, AllocationInfeasibleError
from ._allocate import allocate as allocate_team
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
from ._report import render as render_report
from ._team import TeamPlan, TeamPlanError, load_actuals, load_team_plan, parse_team_plan
from ._units import parse_count, parse_deadline
from ._workload import Architecture, Workload, infer_architecture

__all__ = [
    "Allocation", "AllocationInfeasibleError", "Architecture", "Assumptions", "Calibration",
    "CalibrationError", "Cluster", "Constraints", "Estimate", "HardwareError", "Measurement",
    "NO_CALIBRATION", "NoFitError", "ParallelPlan", "PlanResult", "PlannerError", "Quotas",
    "TeamPlan", "TeamPlanError", "Workload", "WorkloadError", "WorkloadSpec", "allocate_team",
    "build_cluster", "build_workload", "cluster_for_instance", "estimate", "infer_architecture",
    "ingest_probe_report", "list_probe_reports", "load_actuals", "load_calibration",
    "load_quotas", "load_team_plan", "parse_count", "parse_deadline", "parse_team_plan", "plan",
    "preset", "preset_names", "reference_cluster", "render_report",
]
