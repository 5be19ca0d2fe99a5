"""What every record of a probe report shares: a status (measured, skipped or failed, with
why), positive finite figures, and the spread of a figure over repeats or GPUs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Status = Literal["measured", "skipped", "failed"]
STATUSES = ("measured", "skipped", "failed")


def check_status(status: str, reason: str | None, where: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"{where}: status must be one of {STATUSES}, got {status!r}")
    if status != "measured" and not reason:
        raise ValueError(f"{where}: a {status} entry needs a reason")


def check_positive(where: str, **values: float | int | None) -> None:
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"{where}.{name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class Spread:
    """How one figure is spread: its percentiles, extremes, and which rank had the lowest.

    For throughputs the lowest value is the slowest GPU, the one a synchronous job waits for.
    """

    n: int
    min: float
    p10: float
    p50: float
    p90: float
    max: float
    min_rank: int | None = None  # the rank that measured ``min`` (None: not per rank)

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ValueError("spread: n must be >= 1")
        values = (self.min, self.p10, self.p50, self.p90, self.max)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("spread: values must be finite")
        if not self.min <= self.p10 <= self.p50 <= self.p90 <= self.max:
            raise ValueError(f"spread: expected min <= p10 <= p50 <= p90 <= max, got {values}")
