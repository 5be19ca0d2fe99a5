"""Errors the planner raises for things a user can fix. All derive from catalog.GpuplanError,
so the CLI prints one line and exits 2.

    GpuplanError (catalog)
    └── PlannerError
        ├── WorkloadError      bad sizes, unknown preset, unreadable config.json, bad tokens
        ├── HardwareError      unknown or unusable accelerator / instance for the model
        ├── NoFitError         no parallel plan fits in memory (says what would fit)
        └── CalibrationError   a probe report that cannot be used
"""

from __future__ import annotations

from catalog import GpuplanError


class PlannerError(GpuplanError):
    pass


class WorkloadError(PlannerError):
    pass


class HardwareError(PlannerError):
    pass


class NoFitError(PlannerError):
    pass


class CalibrationError(PlannerError):
    pass
