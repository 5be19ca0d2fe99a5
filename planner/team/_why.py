"""A team plan's words for what ``plan()`` says about one of its jobs: its messages and
warnings with the team file's keys (``in_team_terms``), and why a job has no candidate at all
(``why_nothing``), naming the team file's own quota rules.

``plan()`` numbers the quota rules it is given, and the team allocator gives it one cap per
scope (``_relax.plan_caps``: the largest of a scope's months, none for a scope with only month
rules), so its "quotas[1]" need not be the team file's quotas[1]. The rules here are found
again in the file, against the cheapest plan that meets the deadline without the quotas.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

from ..model import refer_to_fields
from ..search import plan_options
from ._milp import scope_label, scopes
from ._spec import MAX_WINDOW_DAYS

# How plan()'s messages name its inputs (`max_gpus`), in a team plan: the job's YAML keys.
# Without this the CLI would turn them into flags (--max-gpus) that `report` does not take.
TEAM_KEYS = {"max_gpus": "the job's max_gpus", "gpu": "accelerators", "gpus": "accelerators",
             "recompute": "the workload's recompute", "deadline_hours": "deadline",
             "quotas": "quotas", "min_probability": "the job's min_probability",
             "allow_flagged": "the job's allow_flagged",
             "commitment_use": "the job's commitment_use"}


def in_team_terms(message: str) -> str:
    """A plan() message with every `field` written as the team plan's key (no backticks)."""
    return refer_to_fields(message, lambda field: TEAM_KEYS.get(field, field))


def cheapest_in_time(workload, constraints, cat, A, calibration):
    """The cheapest option (``planner.search.Option``) that meets the deadline with the
    quotas left out, or None when none does: what a quota that binds keeps out."""
    unlimited = dataclasses.replace(constraints, quotas=None)
    res = plan_options(workload, cat, unlimited, assumptions=A, calibration=calibration,
                       top_n=1)
    return res.candidates[0] if res.infeasible_reason is None and res.candidates else None


def _rules_keeping_out(team_plan, option) -> list[tuple[int, object]]:
    """(1-based index, rule) of the team file's quota rules that keep ``option`` out: those of
    a scope plan() is capped by (one with an every-month rule) whose largest cap is below the
    option's GPUs, and which cover its cloud, region and accelerator."""
    caps = scopes(team_plan.quotas)
    out = []
    for k, rule in enumerate(team_plan.quotas, start=1):
        cap = caps[(rule.cloud, rule.region, rule.accelerator)]
        if cap["all"] is None or max([cap["all"], *cap["months"].values()]) >= option.gpus:
            continue
        if rule.matches(option.cloud, option.region, option.accelerator):
            out.append((k, rule))
    return out


def _rule_label(k: int, rule) -> str:
    """"quotas[2] aws/*/H100-SXM5-80GB: gpus 12" (and " in 2027-03" for a month's rule)."""
    month = f" in {rule.month}" if rule.month else ""
    return f"quotas[{k}] {scope_label((rule.cloud, rule.region, rule.accelerator))}: " \
           f"gpus {rule.gpus:,}{month}"


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def why_nothing(team_plan, job, value: dict,
                cheapest: Callable[[], object] | None = None) -> str:
    """Why a job has no candidate, and what to change. When plan() says the quotas keep its
    plans out, ``cheapest()`` (when given: the cheapest option in time without them) says
    which of the file's rules do and how many GPUs it needs — "the quotas allow too few GPUs"
    alone left the user to find the rule — else the deadline when even the fastest plan is
    too slow (a cap of 0 is said as such: "move the deadline later (the fastest plan needs
    0.0 days)" would send the user the wrong way)."""
    reason, days = value["reason"], value["fastest_days"]
    option = cheapest() if cheapest is not None and "quota" in reason else None
    rules = _rules_keeping_out(team_plan, option) if option is not None else []
    if rules:
        what = ("the quotas allow no GPUs" if all(r.gpus == 0 for _, r in rules) else
                "the quotas allow too few GPUs for any plan that meets the deadline")
        names = _listed([f"quotas[{k}]" for k, _ in rules])
        later = (f", or move the deadline later (within the quotas the fastest plan needs "
                 f"{days:,.1f} days)" if job.window_hours < days * 24 <= MAX_WINDOW_DAYS * 24
                 else "")
        return (f"{what}: {'; '.join(_rule_label(k, r) for k, r in rules)}, and the cheapest "
                f"plan in time needs {option.gpus:,} ({option.nodes:,}× {option.instance_type}"
                f" in {option.cloud} {option.region}). To fix: raise the gpus of {names} to "
                f"{option.gpus:,} or more, or allow clouds, regions or accelerators "
                f"{'it does' if len(rules) == 1 else 'they do'} not cover{later}")
    if "quota" in reason and days * 24 <= job.window_hours:
        zero = [scope_label(key) for key, caps in scopes(team_plan.quotas).items()
                if max(c for c in (caps["all"], *caps["months"].values()) if c is not None)
                == 0]
        what = (f"the quotas allow no GPUs ({', '.join(zero)}: gpus 0)" if zero else
                "the quotas allow too few GPUs for any plan that meets the deadline")
        return (f"{what}. To fix: raise the gpus of the quotas that cover this job in the team "
                "plan, or allow clouds, regions or accelerators they do not cover")
    if days > MAX_WINDOW_DAYS:  # a deadline that late is refused: do not send the user there
        return (f"{in_team_terms(reason)}. To fix: raise the job's max_gpus (the fastest plan "
                f"within it needs {math.ceil(days):,} days, more than the {MAX_WINDOW_DAYS:,} "
                "a job's window may span), allow more clouds, accelerators or pricing models, or "
                "train on fewer tokens")
    return (f"{in_team_terms(reason)}. To fix: move the deadline later (the fastest plan needs "
            f"{days:,.1f} days), raise the job's max_gpus, or allow more clouds, accelerators "
            "or pricing models")
