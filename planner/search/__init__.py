"""The search: the cheapest configuration that trains a workload by its deadline.

Pure, like ``planner.model``: a workload, a catalog and constraints in, a typed ``PlanResult``
out (numpy loads on first use). The decision rule, the risk model and the frontier are written
out in ``_optimizer``'s docstring and docs/design.md.

    plan, Constraints                  the search and what it must respect (the defaults)
    PlanResult, Candidate, PlanPoint, Infeasible, FlaggedSkipped, Commitment   its answer
    plan_options, PlanOptions, Option  the same candidates, described only when asked for
    Quotas, QuotaRule, parse_quotas    GPU quotas per cloud / region / accelerator (data)
    spot_rate, run_cost_usd            what a spot offer risks and what a run costs
    clear_caches                       forget what this process kept (benchmarks, tests)
"""

from ._candidates import (
    Candidate,
    Commitment,
    FlaggedSkipped,
    Infeasible,
    Option,
    PlanOptions,
    PlanPoint,
    PlanResult,
    run_cost_usd,
)
from ._constraints import (
    CONSTRAINT_DEFAULTS,
    DEFAULT_MAX_GPUS,
    DEFAULT_MAX_SPOT_INSTANCES,
    DEFAULT_MIN_PROBABILITY,
    DEFAULT_PRICING,
    GROUP_BY,
    MAX_BUDGET_USD,
    MAX_GPUS_LIMIT,
    MAX_SPOT_INSTANCES_LIMIT,
    Constraints,
)
from ._optimizer import (
    GPU_VENDORS,
    check_exclude,
    clear_caches,
    plan,
    plan_options,
    spot_rate,
    usable_offers,
)
from ._quota import (
    MAX_QUOTA_FILE_BYTES,
    MAX_QUOTA_GPUS,
    QuotaRule,
    Quotas,
    parse_quota_rules,
    parse_quotas,
)

__all__ = [
    "CONSTRAINT_DEFAULTS", "DEFAULT_MAX_GPUS", "DEFAULT_MAX_SPOT_INSTANCES",
    "DEFAULT_MIN_PROBABILITY", "DEFAULT_PRICING", "GPU_VENDORS", "GROUP_BY", "MAX_BUDGET_USD",
    "MAX_GPUS_LIMIT",
    "MAX_QUOTA_FILE_BYTES", "MAX_SPOT_INSTANCES_LIMIT", "MAX_QUOTA_GPUS", "Candidate",
    "Commitment", "Constraints", "FlaggedSkipped", "Infeasible", "Option", "PlanOptions",
    "PlanPoint", "PlanResult", "QuotaRule", "Quotas", "check_exclude", "clear_caches",
    "parse_quota_rules",
    "parse_quotas",
    "plan", "plan_options", "run_cost_usd", "spot_rate", "usable_offers",
]
