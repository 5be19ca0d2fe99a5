"""A team plan's dates against today: a report is a plan made now, so a window that has passed
is said, not allocated as if it were still ahead (the CLI allocated a 2020 window at today's
prices, exit 0, while the app refused it).

- a deadline on or before today has passed (a job finishes by 00:00 UTC of its deadline, so
  today's has passed too): refused — unless the report compares the plan with what was spent
  (``past_ok``: `report --actuals`), where jobs that are over are the point; then a warning;
- an ``earliest_start`` before today (deadline still ahead): a warning, since the schedule
  may start the job in the past — none for a job the actuals report spending for (it has
  started), and in an actuals report the fix allows that the job has started. A start today
  is "now";
- actuals (``spent``) for a job whose ``earliest_start`` is after today: a warning, since it
  cannot have started (a misspelt row, or the wrong plan's file, was compared silently).

Today is the UTC date, or ``GPUPLAN_TODAY`` (YYYY-MM-DD): the day to count as today, to
reproduce a report as of a past day or to run a dated example after its dates.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection
from typing import TYPE_CHECKING

import catalog
from catalog import TODAY_ENV as TODAY_ENV  # planner.team's name for it
from catalog import GpuplanError

from ._fields import TeamPlanError

if TYPE_CHECKING:
    from ._spec import TeamPlan


def today_utc() -> dt.date:
    """``catalog.today_utc`` (the UTC date, or ``GPUPLAN_TODAY``'s: one day for a report's
    deadlines and its catalog's age), a wrong value as a ``TeamPlanError``."""
    try:
        return catalog.today_utc()
    except GpuplanError as exc:
        raise TeamPlanError(str(exc)) from None


def check_dates(team_plan: TeamPlan, *, today: dt.date, past_ok: bool = False,
                past_fix: str = "", spent: Collection[str] = (),
                spent_source: str = "actuals") -> list[str]:
    """Warnings for the jobs whose window has begun or ended before ``today``; a deadline
    that has passed is a ``TeamPlanError`` unless ``past_ok`` (then a warning too), its fix
    naming ``past_fix`` too where the caller has a way to keep past jobs. ``spent``: the jobs
    that ``spent_source`` (an actuals file) reports spending for; those that start after
    ``today`` are warned about too."""
    warnings = []
    for job in team_plan.jobs:
        where = f"{team_plan.source}: {job.where}"
        if job.name in spent and job.earliest_start > today:
            warnings.append(f"{where}: {spent_source} reports spending for it, but its "
                            f"earliest_start {job.earliest_start} is after today ({today}), so "
                            "it has not started. To fix: check the job names in "
                            f"{spent_source}, or move earliest_start to {today} or earlier")
        if job.deadline <= today:
            if not past_ok:
                raise TeamPlanError(
                    f"{where}: deadline {job.deadline} is in the past (a job finishes by 00:00 "
                    f"UTC on its deadline; today is {today}). To fix: give a future date"
                    + (f", or {past_fix}" if past_fix else ""))
            warnings.append(f"{where}: deadline {job.deadline} has passed (today is {today}): "
                            "it is planned for its window at the catalog's current prices, "
                            "which may not be those it was planned at")
        elif job.earliest_start < today and job.name not in spent:
            # a job the actuals show spending has started: "move earliest_start" was wrong
            warnings.append(f"{where}: earliest_start {job.earliest_start} has passed (today "
                            f"is {today}), so the schedule may start it before today. To fix: "
                            + (f"if it has started, add its spending to {spent_source}; if "
                               f"not, move earliest_start to {today} or later" if past_ok
                               else f"move earliest_start to {today} or later"))
    return warnings
