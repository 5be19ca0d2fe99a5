"""The day gpuplan counts as today, in one place: a catalog's age, an override's ``as_of``, a
dated deadline and a team plan's windows all count from it."""

from __future__ import annotations

import datetime as _dt
import os
import re

from ._errors import GpuplanError, quoted

TODAY_ENV = "GPUPLAN_TODAY"
# what the message asks for, exactly: date.fromisoformat also takes 20261201 and 2026-W49-2
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def today_utc() -> _dt.date:
    """The UTC date, or ``GPUPLAN_TODAY``'s (YYYY-MM-DD: to reproduce a report or a plan as of
    a past day, or run a dated example after its dates)."""
    given = os.environ.get(TODAY_ENV, "").strip()
    if not given:
        return _dt.datetime.now(_dt.UTC).date()
    try:
        if _ISO_DAY.fullmatch(given):
            return _dt.date.fromisoformat(given)
    except ValueError:
        pass
    raise GpuplanError(f"{TODAY_ENV}={quoted(given)} is not a date. To fix: set it to "
                       "YYYY-MM-DD (the day to count as today), or unset it for today's UTC "
                       "date")
