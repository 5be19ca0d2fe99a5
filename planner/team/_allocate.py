"""Team allocation, end to end: candidates per job from ``plan()``, then the MILP.

The mixed-integer programme itself — variables, objective, constraints and the diagnosis of
infeasible plans — is written out in ``_milp`` and solved in ``_solve``; this module turns a
team plan into its run options (once per group of identical jobs) and the solution into an
``Allocation``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import time
from collections.abc import Callable, Sequence

import numpy as np

from catalog import GpuplanError

from ..model import (
    NO_CALIBRATION,
    Assumptions,
    PlannerError,
    overrides_note,
    probability_within,
)
from ..search import Constraints, Option, plan_options
from ._milp import DEFAULT_TIME_LIMIT_S, AllocationInfeasibleError, Options
from ._relax import OutOfTime, checked_relaxations, plan_caps
from ._solve import solve
from ._spec import priced_catalog
from ._summary import Allocation, summarise_allocation
from ._why import cheapest_in_time, in_team_terms
from ._why import why_nothing as _why_nothing
from ._workers import map_forked

# The steps ``allocate`` reports to its ``progress`` callback.
PLANNING = "planning jobs"
SOLVING = "solving the team MILP"
Progress = Callable[[str, int, int], None]

TOP_N = 200      # candidates asked of plan() per job (describing them is cheap)
PER_JOB = 24     # the cheapest candidates kept per job …
PER_SCOPE = 2    # … plus the cheapest few of every (cloud, region, accelerator), so that a
MAX_PER_JOB = 60  # binding quota leaves the solver somewhere else to go, and the fastest …
SMALLER = 16     # … and the cheapest of up to 16 GPU counts below the smallest kept cluster


def allocate(team_plan, *, catalog, assumptions=None, calibration=None,
             time_limit_s: float = DEFAULT_TIME_LIMIT_S, workers: int = 1,
             progress: Progress | None = None) -> Allocation:
    """Candidates for every job from ``plan()``, then the team MILP (see the docstring).

    ``progress(step, done, total)``, when given, hears how far the work is: "planning jobs"
    once per distinct job as it finishes (``total`` distinct jobs), then "solving the team
    MILP" at 0 and 1 of 1 (the solver reports nothing in between)."""
    _check_run_options(time_limit_s=time_limit_s, workers=workers, progress=progress,
                       assumptions=assumptions)
    report = progress or _unheard
    A = assumptions or Assumptions()
    cat = priced_catalog(team_plan, catalog)
    cands = job_candidates(team_plan, cat, A, calibration or NO_CALIBRATION, workers=workers,
                           progress=report)
    report(SOLVING, 0, 1)

    def allocation_of(plan, cands, seconds=time_limit_s):
        return allocate_candidates(plan, cands, catalog_info=cat.provenance(), assumptions=A,
                                   time_limit_s=seconds)

    def replanned(plan, seconds):  # the jobs planned again, then solved, within ``seconds``
        until = time.monotonic() + seconds
        again = job_candidates(plan, cat, A, calibration or NO_CALIBRATION, workers=workers,
                               until=until)
        left = until - time.monotonic()
        if left <= 0:
            raise OutOfTime
        return allocation_of(plan, again, left)

    try:
        allocation = allocation_of(team_plan, cands)
    except AllocationInfeasibleError as exc:
        # a quota raised lets plan() offer larger clusters: say only what holds once applied
        # … and later starts, where a quota binds (the same candidates: ``with_start_offsets``)
        raise checked_relaxations(exc, team_plan, replanned, time_limit_s=time_limit_s,
                                  solve_starts=lambda plan, s: allocation_of(plan, cands, s)) \
            from None
    report(SOLVING, 1, 1)
    said = _inputs_said(A, allocation.jobs)
    return dataclasses.replace(allocation, assumptions=[*allocation.assumptions, *said]) \
        if said else allocation


def _inputs_said(A: Assumptions, jobs) -> list[str]:
    """What changed the report's numbers beyond its file: constants set with `assume` and the
    probe measurements the chosen plans used (each job's ``calibration``, by accelerator).
    Neither was said, so a shared report (`--assume restart_minutes=600` doubled its cost)
    could not be explained or reproduced; and every stored measurement was listed, an H200's
    beside jobs all on H100, whose plans had read none of them."""
    said = []
    if note := overrides_note(A):
        said.append(f"{note[0].upper()}{note[1:]}.")
    used = dict.fromkeys(f"{j['accelerator']} {line}" for j in jobs
                         for line in j.get("calibration") or ())
    if used:
        said.append("Measured on your instances (`gpuplan probe show`), used instead of "
                    "datasheet figures: " + "; ".join(used) + ".")
    return said


def _unheard(step: str, done: int, total: int) -> None:
    """The progress callback when nobody listens."""


MAX_WORKERS = 64  # processes; more only adds fork overhead (a plan is CPU-bound)
MAX_TIME_LIMIT_S = 86_400.0  # a day: the MILP of the largest team file takes minutes


def _check_run_options(*, time_limit_s, workers, progress, assumptions) -> None:
    """``allocate``'s own arguments, each wrong one a PlannerError (a negative time limit
    reached HiGHS, which warned and ignored it; workers=0 was taken)."""
    if isinstance(workers, bool) or not isinstance(workers, int) \
            or not 1 <= workers <= MAX_WORKERS:
        raise PlannerError(f"workers must be a whole number from 1 to {MAX_WORKERS}, got "
                           f"{workers!r}. To fix: e.g. workers=2")
    if isinstance(time_limit_s, bool) or not isinstance(time_limit_s, int | float) \
            or not 0 < time_limit_s <= MAX_TIME_LIMIT_S:
        raise PlannerError(f"time_limit_s must be a number of seconds above 0 and at most "
                           f"{MAX_TIME_LIMIT_S:,.0f}, got {time_limit_s!r}. To fix: e.g. 60")
    if progress is not None and not callable(progress):
        raise PlannerError(f"progress must be a function (step, done, total) or None, got "
                           f"{type(progress).__name__}. To fix: pass a function")
    if assumptions is not None and not isinstance(assumptions, Assumptions):
        raise PlannerError(f"assumptions must be an Assumptions, got "
                           f"{type(assumptions).__name__}. To fix: pass Assumptions(...) or "
                           "None")


def job_candidates(team_plan, cat, A, calibration, *, workers: int = 1,
                   progress: Progress | None = None,
                   until: float | None = None) -> list[list[dict]]:
    """For every job, plan()'s cheapest feasible candidates plus the cheapest of each scope and
    the feasible part of the frontier. Identical (workload, constraints) pairs run once; with
    ``workers`` > 1 distinct ones run in forked processes (Linux; elsewhere one by one).
    ``until`` (``time.monotonic()``): ``OutOfTime`` once a job finishes after it with others
    left (a job's own plan() is not cut short)."""
    quotas = plan_caps(team_plan)
    keys = []
    for job in team_plan.jobs:
        try:
            c = Constraints(deadline_hours=job.window_hours, max_gpus=job.max_gpus,
                            min_probability=job.min_probability, clouds=job.clouds,
                            regions=job.regions, pricing=job.pricing, gpus=job.accelerators,
                            exclude=job.exclude, allow_flagged=job.allow_flagged,
                            commitment_use=job.commitment_use, quotas=quotas)
        except PlannerError as exc:
            raise PlannerError(f"{team_plan.source}: {job.where}: {in_team_terms(str(exc))}") \
                from None
        keys.append((job.workload, c))
    results = _run_plans(list(dict.fromkeys(keys)), cat, A, calibration, workers,
                         progress or _unheard, until)
    out = []
    for job, key in zip(team_plan.jobs, keys, strict=True):
        kind, value = results[key]
        if kind == "error":
            raise PlannerError(f"{team_plan.source}: {job.where}: {in_team_terms(value)}")
        if kind == "infeasible":  # no allocation can fit: said as one (report --json)
            why = _why_nothing(team_plan, job, value, lambda key=key: cheapest_in_time(
                *key, cat, A, calibration))
            raise AllocationInfeasibleError(
                f"{team_plan.source}: {job.where}: nothing finishes between earliest_start "
                f"{job.earliest_start} and deadline {job.deadline}: {why}")
        # Identical jobs get the same list (one plan() each): allocate_candidates groups them.
        out.append(value)
    return out


def _plan_one(key, state: tuple):
    """plan() for one (workload, constraints) under state = (catalog, assumptions,
    calibration); the outcome as plain data. Only the candidates ``_diverse`` keeps are
    described (``plan_options``): the same dicts as ``plan()``'s, for a fifth of the work."""
    cat, A, calibration = state
    workload, c = key
    try:
        res = plan_options(workload, cat, c, assumptions=A, calibration=calibration,
                           top_n=TOP_N)
    except GpuplanError as exc:  # a planner or catalog error (e.g. an unknown name)
        return "error", str(exc)
    if res.infeasible_reason is not None:
        return "infeasible", {"reason": res.infeasible_reason,
                              "fastest_days": res.fastest_hours / 24}
    # Candidates cross a process boundary here: plain dicts (their JSON form) from now on.
    kept = _diverse([*res.candidates, *res.feasible_frontier])
    return "ok", [x.as_dict() for x in res.describe(kept)]


def _run_plans(keys: list, cat, A, calibration, workers: int,
               progress: Progress = _unheard, until: float | None = None) -> dict:
    results: dict = {}

    def done(key, outcome) -> None:
        results[key] = outcome
        progress(PLANNING, len(results), len(keys))
        if until is not None and len(results) < len(keys) and time.monotonic() > until:
            raise OutOfTime  # the pool's workers are ended on the way out (``map_forked``)

    progress(PLANNING, 0, len(keys))
    map_forked(_plan_one, keys, (cat, A, calibration), workers, done)
    return results


def _diverse(cands: Sequence[Option]) -> list[Option]:
    """The cheapest PER_JOB options, plus the cheapest PER_SCOPE of every (cloud, region,
    accelerator), at most MAX_PER_JOB, and the fastest; then the cheapest of every GPU count
    below the smallest of those (the SMALLER largest such counts), so that a job can shrink
    under a quota its cheapest clusters overfill (four 8-GPU jobs under a 28-GPU quota were
    "infeasible": the 4-GPU plan that fitted was dropped for more 8-GPU ones); one per
    (cloud, region, instance type, pricing, nodes), the first listed."""
    unique = {}
    for c in cands:
        unique.setdefault((c.cloud, c.region, c.instance_type, c.pricing, c.nodes), c)
    ranked = sorted(unique.values(), key=lambda c: (c.cost_usd, c.wall_clock_hours))
    keep, per_scope = [], {}
    for i, c in enumerate(ranked):
        scope = (c.cloud, c.region, c.accelerator)
        per_scope[scope] = per_scope.get(scope, 0) + 1
        if i < PER_JOB or per_scope[scope] <= PER_SCOPE:
            keep.append(c)
    fastest = min(ranked, key=lambda c: c.wall_clock_hours)
    keep = keep[:MAX_PER_JOB]
    if not any(c is fastest for c in keep):
        keep.append(fastest)
    least, smaller = min(c.gpus for c in keep), {}
    for c in ranked:  # cheapest first: the first of a count is its cheapest
        if c.gpus < least:
            smaller.setdefault(c.gpus, c)
    return keep + [smaller[g] for g in sorted(smaller, reverse=True)[:SMALLER]]


def candidate_probability(cand: dict, hours: float, A=None) -> float:
    """P(the candidate finishes within ``hours``): the same distribution plan() decides with
    (model range × interruptions, ``_probability``), from the candidate's parameters."""
    d = cand.get("distribution")
    if not d:  # a synthetic candidate (tests) without a distribution: its own figure
        return float(cand["deadline_probability"])
    return float(probability_within(hours, base_hours=d["base_hours"], loss_hours=d["loss_hours"],
                        rate=d["rate"], sigma=d["sigma"]))


def _hours(d: dt.date, epoch: dt.date) -> float:
    return (d - epoch).days * 24.0


def build_options(team_plan, candidates: Sequence[Sequence[dict]], A=None):
    """Candidates × start offsets that end by the deadline, as arrays, with their records
    (one set per job; ``allocate_candidates`` lists a group of identical jobs once)."""
    epoch = min(j.earliest_start for j in team_plan.jobs)
    options, rec = _options_of(team_plan.jobs, candidates, epoch)
    return options, rec, epoch


def identical_jobs(team_plan, candidates: Sequence[Sequence[dict]]) -> tuple[list[int],
                                                                               list[int]]:
    """(the group of every job, the first job of every group): jobs with the same candidate
    list (``job_candidates`` hands identical jobs one list), window, start offsets,
    min_probability and priority have the same run options (``_milp``'s docstring)."""
    group_of, first, seen = [], [], {}
    for j, (job, cands) in enumerate(zip(team_plan.jobs, candidates, strict=True)):
        key = (id(cands), job.earliest_start, job.deadline, job.start_offsets_days,
               job.min_probability, job.priority)
        if key not in seen:
            seen[key] = len(first)
            first.append(j)
        group_of.append(seen[key])
    return group_of, first


def _options_of(jobs, candidates, epoch: dt.date):
    """The run options of ``jobs`` (``Options.job`` indexes this sequence). The probabilities
    of later starts (a shorter window) are computed in one vectorised call over all options
    (elementwise: the same figures as one call per option)."""
    pending = []  # (job, cand, offset, start, wall, window or None)
    for j, (job, cands) in enumerate(zip(jobs, candidates, strict=True)):
        t0, t_end = _hours(job.earliest_start, epoch), _hours(job.deadline, epoch)
        for cand in cands:
            wall = float(cand["wall_clock_hours"])
            for d in job.start_offsets_days:
                start = t0 + 24.0 * d
                # as `plan` decides: a probability asked is the rule (0.4 admits a run
                # expected to end past the deadline: team refused what plan recommended), and
                # with none asked the expected end must fall in the window
                if start >= t_end or (start + wall > t_end + 1e-9 and not job.min_probability):
                    continue
                pending.append((j, cand, d, start, wall, None if d == 0 else t_end - start))
    prob = _probabilities(pending)
    rec, cols = [], {k: [] for k in ("job", "cost", "gpus", "start", "end", "delay")}
    scope = []
    for (j, cand, d, start, wall, _), p in zip(pending, prob, strict=True):
        job = jobs[j]
        if job.min_probability and p < job.min_probability:
            continue
        rec.append((cand, d, p))
        for k, v in (("job", j), ("cost", float(cand["total_cost_usd"])),
                     ("gpus", int(cand["gpus"])), ("start", start),
                     ("end", start + wall), ("delay", float(d))):
            cols[k].append(v)
        scope.append((cand["cloud"], cand["region"], cand["accelerator"]))
    options = Options(job=np.array(cols["job"], dtype=np.int64),
                      cost_usd=np.array(cols["cost"], dtype=float),
                      gpus=np.array(cols["gpus"], dtype=float),
                      start_hours=np.array(cols["start"], dtype=float),
                      end_hours=np.array(cols["end"], dtype=float), scope=tuple(scope),
                      delay_days=np.array(cols["delay"], dtype=float))
    return options, rec


def _probabilities(pending) -> list[float]:
    """P(finish within the window) of each pending option: the candidate's own figure for the
    earliest start, else ``candidate_probability`` for all of them at once."""
    out = [float(cand["deadline_probability"]) if hours is None or not cand.get("distribution")
           else None for _, cand, _, _, _, hours in pending]
    todo = [k for k, v in enumerate(out) if v is None]
    if todo:
        dists = [pending[k][1]["distribution"] for k in todo]
        p = probability_within(np.array([pending[k][5] for k in todo]),
                               base_hours=np.array([d["base_hours"] for d in dists]),
                               loss_hours=np.array([d["loss_hours"] for d in dists]),
                               rate=np.array([d["rate"] for d in dists]),
                               sigma=np.array([d["sigma"] for d in dists]))
        for k, v in zip(todo, p, strict=True):
            out[k] = float(v)
    return out


def allocate_candidates(team_plan, candidates: Sequence[Sequence[dict]], *, catalog_info: dict,
                        assumptions=None, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
                        ) -> Allocation:
    """The team MILP over given candidates (plan() dicts, or synthetic ones in tests)."""
    group_of, first = identical_jobs(team_plan, candidates)
    epoch = min(j.earliest_start for j in team_plan.jobs)
    options, rec = _options_of([team_plan.jobs[j] for j in first],
                               [candidates[j] for j in first], epoch)
    names = [j.name for j in team_plan.jobs]
    try:
        sol = solve(options, job_names=names, quotas=team_plan.quotas,
                    budgets=dict(team_plan.budgets), epoch=epoch,
                    priority=[j.priority for j in team_plan.jobs], time_limit_s=time_limit_s,
                    job_group=group_of)
    except AllocationInfeasibleError as exc:
        raise AllocationInfeasibleError(f"{team_plan.source}: {exc}", exc.relaxations,
                                        diagnosis=exc.diagnosis) from None
    except PlannerError as exc:
        raise type(exc)(f"{team_plan.source}: {exc}") from None
    return summarise_allocation(team_plan, options, rec, sol, epoch, catalog_info,
                                job_group=group_of)
