"""The planner: workload → performance model → search/optimizer → reports.

Pure functions over data: nothing here prints, reads files at import, or mutates its inputs.
Public names load on first use (PEP 562), so `gpuplan --help` and `import planner` stay cheap:
numpy and scipy load only when the model is actually used.
"""

from __future__ import annotations

import importlib

# public name → (private module, attribute)
_EXPORTS = {
    "Allocation": ("._allocate", "Allocation"),
    "AllocationInfeasibleError": ("._allocate", "AllocationInfeasibleError"),
    "allocate_team": ("._allocate", "allocate"),
    "Assumptions": ("._assumptions", "Assumptions"),
    "WorkloadSpec": ("._build", "WorkloadSpec"),
    "build_cluster": ("._build", "build_cluster"),
    "build_workload": ("._build", "build_workload"),
    "NO_CALIBRATION": ("._calibration", "NO_CALIBRATION"),
    "Calibration": ("._calibration", "Calibration"),
    "Measurement": ("._calibration", "Measurement"),
    "CalibrationError": ("._errors", "CalibrationError"),
    "HardwareError": ("._errors", "HardwareError"),
    "NoFitError": ("._errors", "NoFitError"),
    "PlannerError": ("._errors", "PlannerError"),
    "WorkloadError": ("._errors", "WorkloadError"),
    "Estimate": ("._estimate", "Estimate"),
    "ParallelPlan": ("._estimate", "ParallelPlan"),
    "estimate": ("._estimate", "estimate"),
    "Cluster": ("._hardware", "Cluster"),
    "cluster_for_instance": ("._hardware", "cluster_for_instance"),
    "reference_cluster": ("._hardware", "reference_cluster"),
    "Constraints": ("._optimizer", "Constraints"),
    "PlanResult": ("._optimizer", "PlanResult"),
    "plan": ("._optimizer", "plan"),
    "preset": ("._presets", "preset"),
    "preset_names": ("._presets", "preset_names"),
    "ingest_probe_report": ("._probe_store", "ingest"),
    "list_probe_reports": ("._probe_store", "list_reports"),
    "load_calibration": ("._probe_store", "load_calibration"),
    "Quotas": ("._quota", "Quotas"),
    "load_quotas": ("._quota", "load_quotas"),
    "render_report": ("._report", "render"),
    "TeamPlan": ("._team", "TeamPlan"),
    "TeamPlanError": ("._team", "TeamPlanError"),
    "load_actuals": ("._team", "load_actuals"),
    "load_team_plan": ("._team", "load_team_plan"),
    "parse_team_plan": ("._team", "parse_team_plan"),
    "parse_count": ("._units", "parse_count"),
    "parse_deadline": ("._units", "parse_deadline"),
    "Architecture": ("._workload", "Architecture"),
    "Workload": ("._workload", "Workload"),
    "PlanPins": ("._workload", "PlanPins"),
    "FRAMEWORKS": ("._workload", "FRAMEWORKS"),
    "FrameworkProfile": ("._software", "FrameworkProfile"),
    "framework_profiles": ("._software", "PROFILES"),
    "TimeRange": ("._estimate", "TimeRange"),
    "infer_architecture": ("._workload", "infer_architecture"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    try:
        module, attr = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module 'planner' has no attribute {name!r}") from None
    value = getattr(importlib.import_module(module, __name__), attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
