"""Parsing the quantities people type: token counts (2T, 300B, 2e12), durations (14d, 36h),
dates (2027-03-31). One clear error per bad value."""

from __future__ import annotations

import datetime as dt
import math
import re

from ._errors import PlannerError

_SUFFIX = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_NUMBER = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbgtp]?)\s*$", re.I)


def parse_count(text: str | float | int, what: str = "--tokens") -> float:
    """'2T' → 2e12, '300B' → 3e11, '2e12' → 2e12, '4M' → 4e6 (decimal suffixes)."""
    if isinstance(text, int | float) and not isinstance(text, bool):
        value = float(text)
    else:
        match = _NUMBER.match(str(text))
        if not match:
            raise PlannerError(f"{what} {text!r} is not a count. To fix: write a number with an "
                               "optional K/M/B/T suffix, e.g. 2T, 300B, 2e12")
        value = float(match.group(1)) * _SUFFIX[match.group(2).lower()]
    if not math.isfinite(value) or value <= 0:
        raise PlannerError(f"{what} must be positive, got {text!r}. To fix: pass e.g. 2T")
    return value


_DURATION = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*(h|d|w|hours?|days?|weeks?)\s*$", re.I)


def parse_deadline(text: str, now: dt.datetime | None = None) -> float:
    """Hours from now until the deadline: '14d', '36h', '2w', or a date/datetime (UTC)."""
    match = _DURATION.match(text)
    if match:
        value = float(match.group(1))
        unit = match.group(2)[0].lower()
        hours = value * {"h": 1, "d": 24, "w": 168}[unit]
    else:
        try:
            when = dt.datetime.fromisoformat(text.strip())
        except ValueError:
            raise PlannerError(f"--deadline {text!r} is not a duration or a date. To fix: pass "
                               "e.g. 14d, 36h, 2w or 2027-03-31") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        now = now or dt.datetime.now(dt.UTC)
        hours = (when - now).total_seconds() / 3600
        if hours <= 0:
            raise PlannerError(f"--deadline {text} is in the past. To fix: pass a future date "
                               "or a duration such as 14d")
    if hours <= 0:
        raise PlannerError("--deadline must be in the future. To fix: pass e.g. 14d")
    return hours
