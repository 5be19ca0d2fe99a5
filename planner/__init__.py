"""The planner: what a training run costs in time and money, and the cheapest way to run it.

One sub-package per job; this package re-exports the pure core (``model`` and ``search``):
data in, data out, no files, no printing, no mutation of inputs. numpy loads on first use, so
``import planner`` and ``gpuplan --help`` stay cheap.

    planner.model     workload, hardware, assumptions, the performance model, ``estimate``
    planner.search    ``plan``: the cheapest configuration by the deadline, and the frontier
    planner.team      team plans, the team MILP and the allocation
    planner.reports   team budget reports (HTML, PDF, Markdown, CSV) and actuals
    planner.launch    SkyPilot / dstack task files and torchrun scripts
    planner.store     the probe database and the calibration built from it
    planner.cli       the ``gpuplan`` command line
"""

# Every name loads on first use (PEP 562): `import planner` is only this file, so `gpuplan
# offers` never imports the model (numpy) and a Ctrl-C while `gpuplan` starts is caught by
# `planner.cli.main`, not shown as a traceback from an import. `from planner import plan`
# works the same.
_FROM_MODEL = frozenset({
    "FRAMEWORKS", "NO_CALIBRATION", "PROFILES", "Architecture", "Assumptions", "Calibration",
    "CalibrationError", "Cluster", "Estimate", "FrameworkProfile", "HardwareError",
    "Measurement", "NoFitError", "ParallelPlan", "PlannerError", "PlanPins", "TimeRange",
    "Workload", "WorkloadError", "WorkloadSpec", "architecture_from_config", "build_cluster",
    "build_workload", "can_time", "cluster_for_instance", "estimate", "infer_architecture",
    "parse_count", "parse_deadline", "preset", "preset_names", "reference_cluster"})
_FROM_SEARCH = frozenset({"Candidate", "Constraints", "PlanResult", "QuotaRule", "Quotas",
                          "parse_quotas", "plan"})
_ALIASES = {"framework_profiles": "PROFILES"}  # the framework profiles by name


_SUBPACKAGES = frozenset({"model", "search", "team", "reports", "launch", "store", "cli"})


def __getattr__(name: str):
    if name in _SUBPACKAGES:  # `import planner; planner.model` worked when this file
        import importlib  # imported the model eagerly: it still does

        return importlib.import_module(f".{name}", __name__)
    source = _ALIASES.get(name, name)
    if source in _FROM_MODEL:
        from . import model as module
    elif source in _FROM_SEARCH:
        from . import search as module
    else:
        raise AttributeError(f"module 'planner' has no attribute {name!r}")
    value = getattr(module, source)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_FROM_MODEL, *_FROM_SEARCH, *_ALIASES})


__all__ = [
    "FRAMEWORKS", "NO_CALIBRATION", "Architecture", "Assumptions", "Calibration",
    "CalibrationError", "Candidate", "Cluster", "Constraints", "Estimate", "FrameworkProfile",
    "HardwareError", "Measurement", "NoFitError", "ParallelPlan", "PlanPins", "PlanResult",
    "PlannerError", "QuotaRule", "Quotas", "TimeRange", "Workload", "WorkloadError",
    "WorkloadSpec", "architecture_from_config", "build_cluster", "build_workload", "can_time",
    "cluster_for_instance", "estimate", "framework_profiles", "infer_architecture",
    "parse_count", "parse_deadline", "parse_quotas", "plan", "preset", "preset_names",
    "reference_cluster",
]
