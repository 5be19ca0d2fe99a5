"""Solving the team programme (``_milp`` writes it out and builds it) and saying what to
change when nothing fits: the elastic programmes of ``_milp``'s docstring, their positive
slacks as one readable line (a handful of changes, then how many more)."""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping, Sequence

import numpy as np

from ..model import PlannerError, format_usd
from ..search import QuotaRule
from ._milp import (
    DEFAULT_MIP_REL_GAP,
    DEFAULT_TIME_LIMIT_S,
    AllocationInfeasibleError,
    Groups,
    Options,
    Rows,
    Solution,
    build,
    check_inputs,
    group_rank,
    row_matrix,
    run_milp,
    scope_label,
    tie,
)

# Changes named in an error line before "… and N more": an infeasible plan of 500 jobs may
# need 400 of them dropped, and a 10 KB line helps nobody (``relaxations`` lists them all).
MAX_LISTED = 4


def solve(options: Options, *, job_names: Sequence[str], quotas: Sequence[QuotaRule] = (),
          budgets: Mapping[str, float] | None = None, epoch: dt.date,
          priority: Sequence[int] | None = None, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
          mip_rel_gap: float = DEFAULT_MIP_REL_GAP,
          job_group: Sequence[int] | None = None) -> Solution:
    """Choose one option per job: the programme in ``_milp``'s docstring.

    ``job_group``: for every job, the group of identical jobs it belongs to; ``options.job``
    then indexes groups (a group's options are listed once). Default: every job its own group.
    ``Solution.choice`` has one option per job either way."""
    budgets = dict(budgets or {})
    groups = Groups.of(job_group, len(job_names))
    check_inputs(options, job_names, groups, quotas, budgets)
    t0 = time.perf_counter()
    n = len(options)
    rank = group_rank(priority, groups)
    R, _months = build(options, groups, quotas, budgets, epoch)
    c = options.cost_usd + tie(options, rank)
    upper = groups.copies[options.job] if n else np.zeros(0)
    res = run_milp(c, R, n, np.ones(n), upper, time_limit_s=time_limit_s, gap=mip_rel_gap)
    if res.status == 2:
        raise _diagnose(options, R, job_names, groups, rank, time_limit_s)
    if res.x is None:
        raise PlannerError(f"the allocation solver stopped without a schedule ({res.message}). "
                           "To fix: allow fewer start offsets or fewer jobs per plan, or retry")
    if res.status not in (0, 1):
        raise PlannerError(f"the allocation solver failed: {res.message}")
    x = np.round(res.x).astype(int)
    _verify(R, x)
    choice = _choices(x, options, groups)
    return Solution(choice=choice, cost_usd=float(options.cost_usd[list(choice)].sum()),
                    optimal=res.status == 0, mip_gap=res.mip_gap,
                    variables=n, rows=len(R.lb), seconds=time.perf_counter() - t0,
                    message=str(res.message))


def _choices(x: np.ndarray, options: Options, groups: Groups) -> tuple[int, ...]:
    """One option per job: a group's chosen options (each as often as the solution says),
    earliest start first, to its jobs in file order."""
    out = [0] * len(groups.of_job)
    for g, members in enumerate(groups.members):
        picked = np.flatnonzero((options.job == g) & (x[:len(options)] > 0))
        runs = sorted((float(options.start_hours[k]), int(k)) for k in picked
                      for _ in range(int(x[k])))
        if len(runs) != len(members):
            raise PlannerError(f"the allocation solver returned {len(runs)} plans for "
                               f"{len(members)} job(s) (group {g}). To fix: report this as a bug")
        for j, (_, k) in zip(members, runs, strict=True):
            out[j] = k
    return tuple(out)


def _verify(R: Rows, x: np.ndarray) -> None:
    """Check the rounded solution against every row (the solver works in floating point)."""
    for r, (lb, ub) in enumerate(zip(R.lb, R.ub, strict=True)):
        v = float(np.dot(R.vals[r], x[R.cols[r]]))
        if v < lb - 1e-6 * max(1, abs(lb)) or v > ub + 1e-6 * max(1, abs(ub)):
            raise PlannerError(f"the allocation solver returned a schedule that breaks "
                               f"{R.meta[r]} ({v:g} not in [{lb:g}, {ub:g}]). To fix: report "
                               "this as a bug")


# ---- diagnosis -------------------------------------------------------------------------------

NOT_IN_TIME = "not in time"  # an elastic programme stopped with no schedule yet


def _elastic(options: Options, R: Rows, mode: str, groups: Groups, rank: np.ndarray,
             time_limit_s: float):
    """Solve an elastic version (``_milp``'s docstring) lexicographically: first the smallest
    relaxation, then — that relaxation fixed — the cheapest schedule (a second MILP; one
    programme with the cost scaled under the slacks' weights left the cost below HiGHS'
    tolerances: "drop job 'c', then the schedule costs $2,078" where dropping 'a' cost $1,424).
    Returns (positive slacks, the schedule's cost, whether both are proven optimal); None when
    even that is infeasible; ``NOT_IN_TIME`` when its time ran out before any schedule (not a
    proof of anything). The slacks are read off the schedule (how far each row is over), so they
    say exactly what that schedule needs."""
    n, n_jobs = len(options), len(groups.of_job)
    copies = groups.copies
    c = [0.0] * n
    integ, upper = [1.0] * n, list(copies[options.job])
    E = Rows(list(R.rows), list(R.cols), list(R.vals), list(R.lb), list(R.ub), list(R.meta))
    slack_meta = []
    slack_cols: dict = {}
    for r, meta in enumerate(R.meta):
        kind = meta["kind"]
        if kind == "quota" and mode in ("quotas", "both"):
            key = ("quota", meta["scope"], meta["month"])
            weight = 1.0
        elif kind == "budget" and mode in ("budgets", "both"):
            key = ("budget", meta["period"])
            weight = 1.0 if mode == "budgets" else 1e-3
        elif kind == "job" and mode == "jobs":
            key = ("job", meta["job"])
            weight = 1.0 + n_jobs * rank[meta["job"]]
        else:
            continue
        if key not in slack_cols:
            slack_cols[key] = n + len(slack_meta)
            slack_meta.append((key, meta, []))
            c.append(weight)
            integ.append(1.0 if kind == "job" else 0.0)
            upper.append(copies[meta["job"]] if kind == "job" else np.inf)
        col = slack_cols[key]
        slack_meta[col - n][2].append(r)
        E.cols[r] = np.append(E.cols[r], col)
        E.vals[r] = np.append(E.vals[r], 1.0 if kind == "job" else -1.0)
        E.rows[r] = np.full(len(E.cols[r]), r)
    if not slack_meta:
        return None
    until = time.perf_counter() + time_limit_s
    weights = np.array(c)
    res = run_milp(weights, E, len(c), np.array(integ), np.array(upper),
                   time_limit_s=time_limit_s, gap=1e-6)
    if res.x is None:  # proven infeasible, or out of time before any schedule
        return None if res.status == 2 else NOT_IN_TIME
    x, proven = res.x, res.status == 0
    # (2) the relaxation at most its minimum (integer weights for jobs: exact; else a hair
    # above, for the solver's floating point), the cost (and the tie-break) minimised
    least = float(weights @ res.x)
    slack = np.arange(n, len(c))
    E.add(slack, weights[slack], -np.inf,
          least + 0.5 if mode == "jobs" else least * (1 + 1e-9) + 1e-6, {"kind": "relaxation"})
    left = until - time.perf_counter()
    second = None
    if left > 0:
        cost = np.concatenate([options.cost_usd + tie(options, rank), np.zeros(len(slack))])
        second = run_milp(cost, E, len(c), np.array(integ), np.array(upper),
                          time_limit_s=max(left, 1.0), gap=DEFAULT_MIP_REL_GAP)
    if second is not None and second.x is not None:
        x, proven = second.x, proven and second.status == 0
    else:  # out of time: the first schedule, whatever it costs
        proven = False
    x = np.round(x[:n])
    out = []
    for key, meta, rows in slack_meta:
        if key[0] == "job":
            v = copies[meta["job"]] - float(x[options.job == meta["job"]].sum())
        else:
            v = max(float(np.dot(R.vals[r], x[R.cols[r]])) - R.ub[r] for r in rows)
        if v > 1e-6:
            out.append((key, meta, v))
    return out, float(np.dot(options.cost_usd, x)), proven


def _greedy_drops(options: Options, R: Rows, groups: Groups, rank: np.ndarray):
    """(drop slacks, cost, the quota and budget rows that kept jobs out) of a schedule that
    always exists: jobs taken most important first (then in file order), each copy on its
    cheapest option that keeps every quota and budget row within its limit, dropped where none
    does; None if nothing had to be dropped. Milliseconds where the elastic programme
    ran out of time on thousands of start offsets (hostile sweep: "No relaxation was found"
    although dropping jobs always fits); not the cheapest set to drop."""
    limited = [r for r, m in enumerate(R.meta) if m["kind"] != "job"]
    M = row_matrix(R, len(options)).rows_kept(np.array(limited, dtype=np.int64))
    ub = np.array([R.ub[r] for r in limited], dtype=float)
    limit = ub + 1e-6 * np.maximum(1, np.abs(ub))  # the same tolerance as _verify's
    used = np.zeros(len(limited))
    x = np.zeros(len(options))
    slacks, blocked = [], set()
    for g in sorted(range(len(groups.members)), key=lambda g: (-rank[g], g)):
        ks = np.flatnonzero(options.job == g)
        ks = ks[np.argsort(options.cost_usd[ks], kind="stable")]
        sub = M.columns(ks)
        dropped = 0
        for _ in groups.members[g]:
            over = sub.data > (limit - used)[sub.indices]
            total = np.r_[0, np.cumsum(over)]  # rows each option would break
            fits = total[sub.indptr[1:]] == total[sub.indptr[:-1]]
            if not fits.any():
                dropped += 1  # what keeps out the job's cheapest option: binding
                a, b = sub.indptr[0], sub.indptr[1]
                blocked.update(limited[i] for i in sub.indices[a:b][over[a:b]])
                continue
            k = int(np.argmax(fits))  # the cheapest that fits (ks sorted by cost)
            x[ks[k]] += 1
            a, b = sub.indptr[k], sub.indptr[k + 1]
            used[sub.indices[a:b]] += sub.data[a:b]
        if dropped:
            slacks.append((("job", g), {"kind": "job", "job": g}, float(dropped)))
    # nothing dropped: every job fitted, which the solve proved impossible (its tolerances)
    if not slacks:
        return None
    return slacks, float(np.dot(options.cost_usd, x)), [R.meta[r] for r in sorted(blocked)]


def _change(key, meta, v: float, job_names, groups: Groups) -> list[dict]:
    """The record of each change one positive slack asks for."""
    if key[0] == "quota":
        return [{"kind": "quota", "scope": scope_label(meta["scope"]), "month": meta["month"],
                 "cap_gpus": meta["cap"], "more_gpus": math.ceil(v - 1e-6)}]
    if key[0] == "budget":
        # whole dollars, except below $1 (a budget of $0.50 short by $0.25)
        more = math.ceil(v - 1e-6) if v >= 1 else math.ceil(v * 100 - 1e-6) / 100
        return [{"kind": "budget", "period": meta["period"], "budget_usd": meta["budget_usd"],
                 "more_usd": more}]
    members = groups.members[meta["job"]]
    dropped = members[len(members) - min(len(members), round(v)):]  # the group's last jobs
    return [{"kind": "drop_job", "job": job_names[j]} for j in dropped]


def _text(change: dict) -> str:
    """One change as the error line says it."""
    if change["kind"] == "quota":
        more = change["more_gpus"]
        return (f"+{more:,} GPU{'' if more == 1 else 's'} of {change['scope']} in "
                f"{change['month']} (quota {change['cap_gpus']:,} → {change['cap_gpus'] + more:,})")
    if change["kind"] == "budget":
        return (f"+{format_usd(change['more_usd'])} in {change['period']} (budget "
                f"{format_usd(change['budget_usd'])} → "
                f"{format_usd(change['budget_usd'] + change['more_usd'])})")
    if change["kind"] == "start":
        d = change["offset_days"]
        return f"{change['job']!r} + {d:,} day{'' if d == 1 else 's'}"
    return change["job"]


def _limit_label(meta: dict) -> str:
    """A quota or budget row as the error names it."""
    if meta["kind"] == "quota":
        return f"quota {scope_label(meta['scope'])} in {meta['month']}"
    return f"budget {meta['period']}"


def _listed(texts: Sequence[str], sep: str = " and ", more: str = "more") -> str:
    """At most MAX_LISTED of ``texts`` joined by ``sep``, then how many are left out."""
    if len(texts) <= MAX_LISTED:
        return sep.join(texts)
    return sep.join(texts[:MAX_LISTED]) + f"{sep}… and {len(texts) - MAX_LISTED:,} {more}"


def _drops(names: Sequence[str]) -> str:
    if len(names) <= MAX_LISTED:
        return " and ".join(f"drop job {n!r}" for n in names)
    shown = ", ".join(repr(n) for n in names[:MAX_LISTED])
    return f"drop {len(names):,} jobs: {shown} … and {len(names) - MAX_LISTED:,} more"


def infeasible_error(*, binding: Sequence[str], relaxations: Sequence[dict], proven: bool,
                     time_limit_s: float, prefix: str = "") -> AllocationInfeasibleError:
    """The error an infeasible plan raises: the binding rows (labels), then each relaxation
    (``AllocationInfeasibleError.relaxations`` records) with the cost of the schedule after
    it. Its ``diagnosis`` keeps the rest, so the line can be said again after the
    relaxations were checked (``_relax``)."""
    parts = []
    for r in relaxations:
        texts = [_text(ch) for ch in r["changes"]]
        parts.append((_drops(texts) if r["relax"] == "jobs"
                      else "start_offsets_days that start " + _listed(texts, ", ", "more jobs")
                      if r["relax"] == "starts" else _listed(texts, more="more changes"))
                     + f", then the schedule costs {format_usd(r['cost_usd'])}")
    what = _listed(list(dict.fromkeys(binding)), "; ") or "the quotas and budgets together"
    which = "Cheapest relaxations" if proven else \
        "Relaxations found within the time limit (maybe not the cheapest)"
    head = f"{prefix}no allocation meets every quota and budget; binding: {what}. "
    diagnosis = {"binding": tuple(binding), "proven": proven, "time_limit_s": time_limit_s}
    if not parts and not proven:
        return AllocationInfeasibleError(
            head + f"No relaxation was found within {time_limit_s:g} s (the programme is too "
            "large to search in that time). To fix: raise that quota or budget in the team "
            "plan, drop jobs, or allow fewer start offsets", relaxations, diagnosis=diagnosis)
    starts = any(r["relax"] == "starts" for r in relaxations)
    return AllocationInfeasibleError(
        head + f"{which}: " + ("; or ".join(parts) or "none found") + ". To fix: "
        + ("add those start offsets to the jobs' start_offsets_days (inside their windows: "
           "the jobs then run one after another within the quota), " if starts else "")
        + "raise that quota or budget in the team plan, widen a job's window, clouds or "
        "accelerators, or drop a job", relaxations, diagnosis=diagnosis)


def _diagnose(options: Options, R: Rows, job_names, groups: Groups, rank,
              time_limit_s) -> PlannerError:
    kinds = {m["kind"] for m in R.meta}
    modes = [m for m in ("quotas", "budgets", "jobs")
             if not (m == "quotas" and "quota" not in kinds or m == "budgets"
                     and "budget" not in kinds)]
    # The elastic programmes share one time limit (each the rest of it divided by the
    # programmes left), so a diagnosis never takes longer than the solve that failed.
    until = time.perf_counter() + time_limit_s
    found, proven = {}, True

    def run(mode: str, left: int) -> None:
        nonlocal proven
        if time.perf_counter() >= until:  # HiGHS overruns its limit (presolve): 63 s of
            proven = False  # diagnosis after a 60 s limit; the rest are not started
            return
        share = max(1.0, (until - time.perf_counter()) / left)
        got = _elastic(options, R, mode, groups, rank, share)
        if got == NOT_IN_TIME:  # "Cheapest relaxations: none found" claimed a proof
            found[mode], proven = None, False
            return
        found[mode] = got and got[:2]
        proven = proven and (got is None or got[2])

    for i, mode in enumerate(modes):
        run(mode, len(modes) - i + ({"quota", "budget"} <= kinds))
    if found.get("quotas") is None and found.get("budgets") is None \
            and {"quota", "budget"} <= kinds:
        run("both", 1)
    greedy_binding = []
    if not found.get("jobs"):  # out of time (dropping every job always fits: never None)
        got = _greedy_drops(options, R, groups, rank)
        if got is not None:
            found["jobs"], greedy_binding = got[:2], got[2]
    relax, binding = [], []
    for mode in ("quotas", "budgets", "both", "jobs"):
        got = found.get(mode)
        if not got:
            continue
        slacks, cost = got
        changes = [ch for k, m, v in slacks for ch in _change(k, m, v, job_names, groups)]
        if mode == "jobs" and len(changes) >= len(job_names):  # "drop job 'a', then the
            continue  # schedule costs $0" of a one-job plan: no schedule is no relaxation
        relax.append({"relax": mode, "changes": changes, "cost_usd": cost})
        binding.extend(_limit_label(m) for k, m, _ in slacks if k[0] != "job")
    binding.extend(_limit_label(m) for m in greedy_binding)
    return infeasible_error(binding=binding, relaxations=relax, proven=proven,
                            time_limit_s=time_limit_s)
