"""Team budgets: several jobs sharing GPU quotas and budgets over time, allocated at least cost.

    load_team_plan, parse_team_plan, TeamPlan, Job, TeamPlanError   the team plan (docs/team.md);
    team_yaml       a team plan's YAML text as data (an upload's, before its configs)
    named_configs   the config.json names its jobs give
    check_dates, today_utc   the plan's dates against today (past deadlines, past starts)
    allocate, allocate_candidates, Allocation, AllocationInfeasibleError   the allocation
    solve, Options, Solution, month_edges, month_shares   the MILP (``_milp``, ``_solve``)

``allocate`` asks ``planner.search.plan`` for every job's candidates, then solves the team MILP
(HiGHS, ``_highs``) written out in ``_milp``'s docstring. ``load_team_plan`` is the only
function here that reads files (the team plan and the configs it names).
"""

from ._allocate import (
    MAX_WORKERS,
    PER_JOB,
    TOP_N,
    allocate,
    allocate_candidates,
    build_options,
    candidate_probability,
    job_candidates,
)
from ._dates import TODAY_ENV, check_dates, today_utc
from ._fields import TeamPlanError, period_label, period_months
from ._load import MAX_TEAM_FILE_BYTES, load_team_plan, named_configs, team_yaml
from ._milp import (
    DEFAULT_TIME_LIMIT_S,
    AllocationInfeasibleError,
    Options,
    Solution,
    month_edges,
    month_shares,
)
from ._solve import solve
from ._spec import MAX_PRIORITY, Job, TeamPlan, parse_team_plan, priced_catalog
from ._summary import Allocation

__all__ = [
    "DEFAULT_TIME_LIMIT_S", "MAX_PRIORITY", "MAX_TEAM_FILE_BYTES", "MAX_WORKERS", "PER_JOB",
    "TODAY_ENV", "TOP_N",
    "Allocation", "AllocationInfeasibleError", "Job", "Options", "Solution", "TeamPlan",
    "TeamPlanError", "allocate", "allocate_candidates", "build_options", "candidate_probability",
    "check_dates", "job_candidates", "today_utc",
    "load_team_plan", "month_edges", "month_shares", "named_configs", "parse_team_plan",
    "period_label", "period_months", "priced_catalog", "solve", "team_yaml",
]
