"""Errors the planner raises for things a user can fix. All derive from catalog.GpuplanError,
so the CLI prints one line and exits 2.

    GpuplanError (catalog)
    └── PlannerError           .field / .value: which input was wrong (None when not one input)
        ├── WorkloadError      bad sizes, unknown preset, unreadable config.json, bad tokens
        ├── HardwareError      unknown or unusable accelerator / instance for the model
        ├── NoFitError         no parallel plan fits in memory (says what would fit)
        └── CalibrationError   a probe report that cannot be used

``field`` is the planner's own name for the input (``seq_len``, ``tp``, ``deadline``), so each
front end can name it its own way: the CLI as a flag, the app as a widget label, the team
parser as a YAML key.
"""

from __future__ import annotations

from catalog import GpuplanError


class PlannerError(GpuplanError):
    def __init__(self, message: str, *, field: str | None = None, value: object = None) -> None:
        super().__init__(message)
        self.field = field
        self.value = value


class WorkloadError(PlannerError):
    pass


class HardwareError(PlannerError):
    pass


class NoFitError(PlannerError):
    pass


class CalibrationError(PlannerError):
    pass
