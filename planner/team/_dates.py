"""A team plan's dates against today: a report is a plan made now, so a window that has passed
is said, not allocated as if it were still ahead (the CLI allocated a 2020 window at today's
prices, exit 0, while the app refused it).

- a deadline on or before today has passed (a job finishes by 00:00 UTC of its deadline, so
  today's has passed too): refused — unless the report compares the plan with what was spent
  (``past_ok``: `report --actuals`), where jobs that are over are the point; then a warning;
- an ``earliest_start`` before today (deadline still ahead): a warning, since the schedule
  may start the job in the past. A start today is "now".

Today is the UTC date, or ``GPUPLAN_TODAY`` (YYYY-MM-DD): the day to count as today, to
reproduce a report as of a past day or to run a dated example after its dates.
"""

from __future__ import annotations

import datetime as dt
import os
from typing import TYPE_CHECKING

from ._fields import TeamPlanError

if TYPE_CHECKING:
    from ._spec import TeamPlan

TODAY_ENV = "GPUPLAN_TODAY"


def today_utc() -> dt.date:
    """Today's UTC date, or ``GPUPLAN_TODAY``'s (a wrong value is an error naming it)."""
    given = os.environ.get(TODAY_ENV, "").strip()
    if not given:
        return dt.datetime.now(dt.UTC).date()
    try:
        return dt.date.fromisoformat(given)
    except ValueError:
        raise TeamPlanError(f"{TODAY_ENV}={given!r} is not a date. To fix: set it to "
                            "YYYY-MM-DD (the day to count as today), or unset it for "
                            "today's UTC date") from None


def check_dates(team_plan: TeamPlan, *, today: dt.date, past_ok: bool = False,
                past_fix: str = "") -> list[str]:
    """Warnings for the jobs whose window has begun or ended before ``today``; a deadline
    that has passed is a ``TeamPlanError`` unless ``past_ok`` (then a warning too), its fix
    naming ``past_fix`` too where the caller has a way to keep past jobs."""
    warnings = []
    for job in team_plan.jobs:
        where = f"{team_plan.source}: {job.where}"
        if job.deadline <= today:
            if not past_ok:
                raise TeamPlanError(
                    f"{where}: deadline {job.deadline} is in the past (a job finishes by 00:00 "
                    f"UTC on its deadline; today is {today}). To fix: give a future date"
                    + (f", or {past_fix}" if past_fix else ""))
            warnings.append(f"{where}: deadline {job.deadline} has passed (today is {today}): "
                            "it is planned for its window at the catalog's current prices, "
                            "which may not be those it was planned at")
        elif job.earliest_start < today:
            warnings.append(f"{where}: earliest_start {job.earliest_start} has passed (today "
                            f"is {today}), so the schedule may start it before today. To fix: "
                            f"move earliest_start to {today} or later")
    return warnings
