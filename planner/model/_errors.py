"""Errors the planner raises for things a user can fix. All derive from catalog.GpuplanError,
so the CLI prints one line and exits 2.

    GpuplanError (catalog)     .field / .value: which input was wrong (None when not one input)
    └── PlannerError
        ├── WorkloadError      bad sizes, unknown preset, unreadable config.json, bad tokens
        ├── HardwareError      unknown or unusable accelerator / instance for the model
        ├── NoFitError         no parallel plan fits in memory (says what would fit)
        └── CalibrationError   a probe report that cannot be used

``field`` is the planner's own name for the input (``seq_len``, ``tp``, ``deadline``): the
name of the record field or keyword argument the user set. Messages never name a front end's
spelling of an input (a CLI flag, a widget): they name the input by its field in backticks
(`seq_len`), and each front end translates — the CLI to a flag (``--seq-len``), the app to a
widget label, a team plan to its YAML key (``refer_to_fields``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from catalog import GpuplanError

_FIELD_REFERENCE = re.compile(r"`([a-z][a-z0-9_]*)`")


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


def refer_to_fields(text: str, name: Mapping[str, str] | Callable[[str], str | None]) -> str:
    """``text`` with every `field` reference written the front end's way: ``name`` maps a
    field to its spelling (a flag, a label); references it does not know stay as they are."""
    lookup = name.get if isinstance(name, Mapping) else name

    def one(match: re.Match) -> str:
        spelled = lookup(match[1])
        return match[0] if spelled is None else spelled

    return _FIELD_REFERENCE.sub(one, text)
