"""What every record of a probe report shares: a status (measured, skipped or failed, with
why), positive finite figures, counts within bounds, a timestamp, and the spread of a figure
over repeats or GPUs. The records' ``__post_init__`` call these checks: a report read from a
file (probes._report_io) is built through them, so each is the one place its rule lives."""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Literal

Status = Literal["measured", "skipped", "failed"]
STATUSES = ("measured", "skipped", "failed")
MAX_SHOWN = 40  # characters of a bad value quoted back (a damaged file's 100,000-character
# string was echoed whole by every later `probe show`)
MAX_SECONDS = 86_400.0  # a probe run times out within a day (--timeout-s): a longer timing
# is a damaged file, and 1e308 s times a layer count printed "inf s"


def shown(text: str) -> str:
    """``text`` quoted for a message, cut to ``MAX_SHOWN`` characters."""
    return repr(text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN - 1] + "…")


def check_name(where: str, value: str, names: tuple[str, ...]) -> None:
    """A name from a fixed list (a dtype, a layout)."""
    if value not in names:
        got = shown(value) if isinstance(value, str) else repr(value)
        raise ValueError(f"{where} must be one of {', '.join(names)}, got {got}")


def check_seconds(where: str, **values: float | None) -> None:
    """Timings a probe run can measure: at most ``MAX_SECONDS`` (their own lower bounds are
    checked by ``check_positive`` or ``check_non_negative``)."""
    for name, value in values.items():
        if value is not None and value > MAX_SECONDS:
            raise ValueError(f"{where}.{name} must be at most {MAX_SECONDS:,.0f} seconds (a "
                             f"probe run stops within a day), got {value:g}")


def check_status(status: str, reason: str | None, where: str) -> None:
    if status not in STATUSES:
        raise ValueError(f"{where}: status must be one of {STATUSES}, got {status!r}")
    if status != "measured" and not reason:
        raise ValueError(f"{where}: a {status} entry needs a reason")


# The most processes, GPUs, CPUs or nodes a report can count: about ten times the largest
# GPU clusters built (~100,000 GPUs). A larger count is a damaged file, not a measurement,
# and would overflow what stores it (SQLite's INTEGER is 64-bit).
MAX_COUNT = 2**20


def check_positive(where: str, **values: float | int | None) -> None:
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"{where}.{name} must be a finite number > 0, got {value!r}")


def check_non_negative(where: str, **values: float | int | None) -> None:
    """Times, rates, powers and byte counts: 0 can be measured, a negative value cannot."""
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and value >= 0):
            raise ValueError(f"{where}.{name} must be a finite number >= 0, got {value!r}")


def check_count(where: str, *, low: int = 1, high: int = MAX_COUNT,
                **values: int | None) -> None:
    """Whole numbers from ``low`` to ``high`` (None: not reported)."""
    for name, value in values.items():
        if value is not None and not low <= value <= high:
            raise ValueError(f"{where}.{name} must be a whole number from {low:,} to "
                             f"{high:,}, got {value!r}")


def check_shape(where: str, shape: tuple[int, ...] | None) -> None:
    """A matmul shape (M, N, K): each dimension a whole number >= 1."""
    if shape is not None and min(shape) < 1:
        raise ValueError(f"{where} must be 3 whole numbers >= 1 (M, N, K), got {list(shape)}")


# A report's time must be one a probe run could have: none ran before 2020 (no GPU the catalog
# lists had shipped; a clock reset to 1970 or a year-1 date is damage), and none after now,
# give or take a day of clock skew between the measuring node and this machine.
EARLIEST_REPORT = dt.datetime(2020, 1, 1, tzinfo=dt.UTC)
CLOCK_SKEW = dt.timedelta(days=1)


def check_timestamp(where: str, text: str, *, now: dt.datetime | None = None) -> str:
    """An ISO 8601 time with its zone, as the probes write it ("2026-01-31T12:00:00Z"), from
    2020 to ``now`` (+ CLOCK_SKEW); returns it in UTC in that form. The store sorts and shows
    reports by it as UTC, so "12:00+14:00" is 22:00 the day before, and a time without a zone
    (or a date alone) is refused: it names no moment."""
    shown = text if len(text) <= 40 else text[:39] + "…"
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{where} must be an ISO 8601 time such as 2026-01-31T12:00:00Z, "
                         f"got {shown!r}") from None
    if when.tzinfo is None:
        raise ValueError(f"{where} {shown!r} has no time zone, so the moment it names is "
                         "unknown; the probes write UTC such as 2026-01-31T12:00:00Z")
    when = when.astimezone(dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    if when > now + CLOCK_SKEW:
        raise ValueError(f"{where} {shown!r} is after now ({now:%Y-%m-%d %H:%M} UTC): no run "
                         "measured it yet; check the measuring node's clock")
    if when < EARLIEST_REPORT:
        raise ValueError(f"{where} {shown!r} is before {EARLIEST_REPORT:%Y-%m-%d}, older than "
                         "any GPU the planner calibrates: a reset or edited clock")
    fraction = f".{when.microsecond:06d}" if when.microsecond else ""
    return f"{when:%Y-%m-%dT%H:%M:%S}{fraction}Z"


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
        check_count("spread", n=self.n)
        check_count("spread", low=0, high=MAX_COUNT - 1, min_rank=self.min_rank)
        values = (self.min, self.p10, self.p50, self.p90, self.max)
        if not all(math.isfinite(v) for v in values):
            raise ValueError("spread: values must be finite")
        if not self.min <= self.p10 <= self.p50 <= self.p90 <= self.max:
            raise ValueError(f"spread: expected min <= p10 <= p50 <= p90 <= max, got {values}")
