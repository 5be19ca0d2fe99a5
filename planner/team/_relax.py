"""What an infeasible team plan's relaxations change in the plan, and the check that a quota
relaxation still fits once applied.

A job's candidates depend on the quotas: ``plan()`` leaves out clusters larger than a quota
allows (``plan_caps``), and its cheapest few are kept. The elastic programmes of ``_solve``
relax the quotas over the candidates of the quotas as they are, but raised quotas admit
larger clusters, which push other candidates out — so "+20 GPUs" was quoted as enough, and
the plan with them applied was still infeasible. ``checked_relaxations`` therefore applies
each relaxation that changes a cap ``plan()`` sees, plans the jobs again and solves the plan
as the user would run it: what fits is quoted with that allocation's cost; what does not is
raised by what that run still asks for (at most MAX_ROUNDS times), else left out. Budgets and
dropped jobs change no job's candidates, so their relaxations hold as ``_solve`` found them.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable

from ..model import PlannerError
from ..search import QuotaRule, Quotas
from ._fields import MAX_OFFSETS
from ._milp import AllocationInfeasibleError, scope_label, scopes
from ._solve import infeasible_error

MAX_ROUNDS = 3  # plan-and-solve runs per relaxation (a quota raised twice more, at most)
DENSE_STARTS = 16  # starts per job tried by ``with_start_offsets`` (spread over the window)
MAX_STARTS_S = 30.0  # … within at most this many seconds, of those the checks share


class OutOfTime(Exception):
    """``allocation_of`` spent the checks' shared time re-planning the jobs, before any solve:
    the relaxation is left unchecked (planning a large team again took 32 s under a 1 s
    limit: only the solves were bounded)."""


def plan_caps(team_plan) -> Quotas | None:
    """The per-candidate GPU caps plan() may apply: a scope's largest cap over the months."""
    rules = []
    for key, caps in scopes(team_plan.quotas).items():
        if caps["all"] is not None:
            cap = max([caps["all"], *caps["months"].values()])
            rules.append(QuotaRule(gpus=cap, cloud=key[0], region=key[1], accelerator=key[2]))
    return Quotas(tuple(rules)) if rules else None


def relaxed_plan(team_plan, changes) -> object:
    """``team_plan`` with a relaxation's quota and budget changes applied: a quota change
    becomes the rule of its scope for its month (replacing one there was), a budget change
    raises the period's budget. Dropped jobs are not applied (they change no other job)."""
    keys = {scope_label(key): key for key in scopes(team_plan.quotas)}
    quotas, budgets = list(team_plan.quotas), dict(team_plan.budgets)
    for ch in changes:
        if ch["kind"] == "quota":
            cloud, region, accelerator = keys[ch["scope"]]
            quotas = [r for r in quotas if (r.cloud, r.region, r.accelerator, r.month)
                      != (cloud, region, accelerator, ch["month"])]
            quotas.append(QuotaRule(gpus=ch["cap_gpus"] + ch["more_gpus"], cloud=cloud,
                                    region=region, accelerator=accelerator, month=ch["month"]))
        elif ch["kind"] == "budget":
            budgets[ch["period"]] = ch["budget_usd"] + ch["more_usd"]
    return dataclasses.replace(team_plan, quotas=tuple(quotas), budgets=tuple(budgets.items()))


def _merged(first: dict, then: dict) -> dict:
    """A relaxation, then another asked on top of it, as one change from the original plan."""
    changes = {(ch["kind"], ch.get("scope"), ch.get("month"), ch.get("period")): dict(ch)
               for ch in first["changes"]}
    for ch in then["changes"]:
        key = (ch["kind"], ch.get("scope"), ch.get("month"), ch.get("period"))
        if key not in changes:
            changes[key] = dict(ch)
        elif ch["kind"] == "quota":
            changes[key]["more_gpus"] += ch["more_gpus"]
        elif ch["kind"] == "budget":
            changes[key]["more_usd"] += ch["more_usd"]
    return {**first, "changes": list(changes.values()), "cost_usd": then["cost_usd"]}


def checked_relaxations(exc: AllocationInfeasibleError, team_plan, allocation_of: Callable,
                        *, time_limit_s: float,
                        solve_starts: Callable | None = None) -> AllocationInfeasibleError:
    """``exc`` with every relaxation that changes what plan() sees applied and run
    (``allocation_of(plan, seconds)``: plan the jobs and solve, both within ``seconds``, or
    raise ``OutOfTime``): the module
    docstring. The runs share one ``time_limit_s``: a relaxation not checked when it is spent
    is left out, and the rest are said to be the best found, maybe not the cheapest. Then,
    within what is left of that time, ``with_start_offsets`` (``solve_starts``: solve a plan
    with the jobs' candidates as they are)."""
    diagnosis = exc.diagnosis
    if diagnosis is None:
        return exc
    until = time.monotonic() + time_limit_s
    kept, proven = [], diagnosis["proven"]
    for relax in exc.relaxations:
        if relax["relax"] in ("quotas", "both") and plan_caps(
                relaxed_plan(team_plan, relax["changes"])) != plan_caps(team_plan):
            relax, optimal = _applied(team_plan, relax, allocation_of, until)
            proven = proven and optimal
            if relax is None:
                continue
        kept.append(relax)
    checked = infeasible_error(binding=diagnosis["binding"], relaxations=kept, proven=proven,
                               time_limit_s=diagnosis["time_limit_s"],
                               prefix=f"{team_plan.source}: ")
    left = min(until - time.monotonic(), MAX_STARTS_S)
    if solve_starts is None or left <= 0:
        return checked
    return with_start_offsets(checked, team_plan, solve_starts, time_limit_s=left)


def _applied(team_plan, relax: dict, allocation_of: Callable,
             until: float) -> tuple[dict | None, bool]:
    """(the relaxation as it holds once applied, with that allocation's cost, and whether
    that allocation is proven optimal); (None, True) when MAX_ROUNDS runs do not fit (a
    proof: it is not advice), (None, False) when the time ran out first (no proof)."""
    for _ in range(MAX_ROUNDS):
        left = until - time.monotonic()
        if left <= 0:
            return None, False
        try:
            allocation = allocation_of(relaxed_plan(team_plan, relax["changes"]), left)
        except OutOfTime:
            return None, False
        except AllocationInfeasibleError as again:
            # the same kind of relaxation on top; for "both", quotas or budgets alone will do
            modes = (relax["relax"], "quotas", "budgets") if relax["relax"] == "both" else \
                (relax["relax"],)
            more = next((r for m in modes for r in again.relaxations if r["relax"] == m), None)
            if more is None:
                return None, True
            relax = _merged(relax, more)
            continue
        return ({**relax, "cost_usd": float(allocation.totals["cost_usd"])},
                bool(allocation.solver["optimal"]))
    return None, True


def _dense(job) -> tuple[int, ...]:
    """The job's offsets with up to DENSE_STARTS more spread over its window (whole days)."""
    window = (job.deadline - job.earliest_start).days
    step = max(1, -(-window // DENSE_STARTS))
    more = sorted(set(range(0, window, step)) - set(job.start_offsets_days))
    return tuple(sorted({*job.start_offsets_days, *more[:MAX_OFFSETS - len(
        job.start_offsets_days)]}))


def with_start_offsets(exc: AllocationInfeasibleError, team_plan, allocation_of: Callable,
                       *, time_limit_s: float) -> AllocationInfeasibleError:
    """``exc`` with one more relaxation where a quota binds and later starts inside the jobs'
    windows fit it: jobs that run one after another need no more GPUs, but the start offsets
    (default or given) may hold too few starts for that, and "raise that quota" alone sent the
    user to buy GPUs (``allocation_of(plan, seconds)`` solves with the same candidates: a
    start offset changes no job's candidates). The relaxation names the day each job must be
    able to start on; None of this when no quota binds or no such schedule is found."""
    diagnosis = exc.diagnosis
    if diagnosis is None or not any(b.startswith("quota ") for b in diagnosis["binding"]):
        return exc
    dense = dataclasses.replace(team_plan, jobs=tuple(
        dataclasses.replace(j, start_offsets_days=_dense(j)) for j in team_plan.jobs))
    if dense.jobs == team_plan.jobs:
        return exc
    try:
        allocation = allocation_of(dense, time_limit_s)
    except (PlannerError, OutOfTime):  # still infeasible (or out of time): nothing to say
        return exc
    changes = [{"kind": "start", "job": j.name, "offset_days": int(row["start_offset_days"])}
               for j, row in zip(team_plan.jobs, allocation.jobs, strict=True)
               if int(row["start_offset_days"]) not in j.start_offsets_days]
    if not changes:
        return exc
    relax = {"relax": "starts", "changes": changes,
             "cost_usd": float(allocation.totals["cost_usd"])}
    return infeasible_error(binding=diagnosis["binding"], relaxations=[*exc.relaxations, relax],
                            proven=diagnosis["proven"], time_limit_s=diagnosis["time_limit_s"],
                            prefix=f"{team_plan.source}: ")
