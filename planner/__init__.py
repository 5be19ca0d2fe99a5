"""The planner: workload → performance model → search/optimizer → reports.

Pure functions over data: nothing here prints, reads files at import, or mutates its inputs.
"""

from ._assumptions import Assumptions
from ._build import WorkloadSpec, build_cluster, build_workload
from ._calibration import NO_CALIBRATION, Calibration, Measurement
from ._errors import CalibrationError, HardwareError, NoFitError, PlannerError, WorkloadError
from ._estimate import Estimate, ParallelPlan, estimate
from ._hardware import Cluster, cluster_for_instance, reference_cluster
from ._presets import preset, preset_names
from ._units import parse_count, parse_deadline
from ._workload import Architecture, Workload, infer_architecture

__all__ = [
    "NO_CALIBRATION", "Architecture", "Assumptions", "Calibration", "CalibrationError",
    "Cluster", "Estimate", "HardwareError", "Measurement", "NoFitError", "ParallelPlan",
    "PlannerError", "Workload", "WorkloadError", "WorkloadSpec", "build_cluster",
    "build_workload", "cluster_for_instance", "estimate", "infer_architecture",
    "parse_count", "parse_deadline", "preset", "preset_names", "reference_cluster",
]
