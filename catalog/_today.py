"""The day gpuplan counts as today, in one place: a catalog's age, an override's ``as_of``, a
dated deadline and a team plan's windows all count from it."""

from __future__ import annotations

import datetime as _dt
import os
import re

from ._errors import GpuplanError, quoted

TODAY_ENV = "GPUPLAN_TODAY"
# the years a day may be in: today here, and every date of a team plan (planner.team): far
# beyond real use; 0001-01-01 made a catalog "740,000 days old" and deadlines that no plan's
# dates could meet
MIN_YEAR, MAX_YEAR = 2000, 2200
# what the message asks for, exactly: date.fromisoformat also takes 20261201 and 2026-W49-2
_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def today_utc() -> _dt.date:
    """The UTC date, or ``GPUPLAN_TODAY``'s (YYYY-MM-DD: to reproduce a report or a plan as of
    a past day, or run a dated example after its dates)."""
    given = os.environ.get(TODAY_ENV, "").strip()
    if not given:
        return _dt.datetime.now(_dt.UTC).date()
    try:
        day = _dt.date.fromisoformat(given) if _ISO_DAY.fullmatch(given) else None
    except ValueError:
        day = None
    if day is not None and not MIN_YEAR <= day.year <= MAX_YEAR:
        raise GpuplanError(f"{TODAY_ENV}={quoted(given)} is outside the years {MIN_YEAR}–"
                           f"{MAX_YEAR}. To fix: set it to a day in those years (YYYY-MM-DD), "
                           "or unset it for today's UTC date")
    if day is not None:
        return day
    raise GpuplanError(f"{TODAY_ENV}={quoted(given)} is not a date. To fix: set it to "
                       "YYYY-MM-DD (the day to count as today), or unset it for today's UTC "
                       "date")
