"""Team allocation: one plan per job, sharing quotas and budgets over time, at least cost.

Each job j gets run options k ∈ K_j: a candidate plan from ``plan()`` (instance type, nodes,
pricing, region …) paired with a start s_jk = earliest_start_j + offset (offset from the job's
``start_offsets_days``), kept only if it ends by the deadline (e_jk = s_jk + wall_jk ≤
deadline_j) and, when the job sets min_probability, is that likely to finish by then.
Time is in hours from the epoch (00:00 UTC of the earliest earliest_start); a run occupies
[s, e).

Variables   x_jk ∈ {0, 1}             option k is job j's plan

Objective   min Σ_jk (c_jk + τ_jk) x_jk
            c_jk  expected cost in USD (spot risk priced in by plan())
            τ_jk  a tie-break below one cent: 1e-6 USD per day of delay × (1 + priority rank),
                  so equal-cost schedules start as early as possible, important jobs first

Constraints
  (1) one plan per job       Σ_k x_jk = 1                                   ∀ j
  (2) quotas over time       Σ_{jk ∈ S_q, s_jk ≤ t < e_jk} g_jk x_jk ≤ Q_q(month(t))
                             ∀ quota scope q, ∀ t ∈ T_q
      g = GPUs; S_q = options whose (cloud, region, accelerator) the scope matches (a field
      left out matches all); Q_q(m) = the scope's rule for month m, else its rule for every
      month (the smallest when several). T_q = every start of an option in S_q plus every
      month start: the GPUs in use only rise at a start, and the cap only changes at a month
      start, so checking these points is exact in continuous time — no time grid.
  (3) budgets                Σ_jk c_jk φ_jk,p x_jk ≤ B_p                      ∀ period p
      φ_jk,p = the share of the run's hours that fall in p's months (cost accrues pro rata
      of running hours); p is a month "2027-03", a quarter "2027Q2" or "total".
  (4) deadlines              by construction of K_j (above).

Rows that no choice can violate (Σ_j max_k coefficient ≤ bound) are left out.

Identical jobs are one variable per option (``job_group``). Jobs with the same candidates,
window, start offsets, min_probability and priority have the same options with the same
coefficients in every row, so a group g of n_g such jobs lists its options once and
x_gk ∈ {0, …, n_g} counts the group's jobs that take option k; (1) becomes Σ_k x_gk = n_g
and a row's bound check uses n_g × the group's largest coefficient. Exact: every row sums
over jobs, so any 0/1 choice adds up to such counts with the same cost and row values, and
any counts split back into 0/1 choices (``_solve``: the group's jobs in file order take the
chosen options earliest start first). 500 copies of one job give ~1,300 integer columns
instead of ~650,000 binaries and solve in a second, not minutes. A group of one job is the
0/1 programme above, row for row.

Diagnosis when (1)–(3) admit no solution — elastic versions of the same programme:
  quotas   Q_q(m) + σ_qm  (σ ≥ 0, one per scope and month), min Σ σ            (GPUs)
  budgets  B_p + β_p      (β ≥ 0),                         min Σ β            (USD)
  jobs     Σ_k x_gk + u_g = n_g (u ∈ {0, …, n_g}),   min Σ_g (1 + n_jobs · rank_g) u_g
           (drop as few, and as unimportant, jobs as possible; a group's last jobs first)
  both     quotas and budgets elastic together, min Σ σ + Σ β / 1000
each solved lexicographically: (i) the objective above alone, then (ii) with that objective
at most its optimum as one more row, min Σ (c_jk + τ_jk) x_jk — the cheapest schedule among
the smallest relaxations (a cost term scaled below the slacks' weights in one programme fell
under HiGHS' tolerances and was ignored). What the schedule of (ii) puts over each row names
the binding rows and how much each must move; its cost is the message's "then the schedule
costs $…".

This module builds the programme; ``_solve`` solves it and diagnoses infeasible plans.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from catalog import record

from ..model import PlannerError, distinct
from ..search import QuotaRule
from ._fields import period_months
from ._highs import Csc, MilpResult, solve_milp

TIE_USD_PER_DAY = 1e-6
DEFAULT_TIME_LIMIT_S = 60.0
DEFAULT_MIP_REL_GAP = 1e-7  # HiGHS' default (1e-4) could leave $100 on a $1M plan


class AllocationInfeasibleError(PlannerError):
    """No allocation meets every quota and budget; ``relaxations`` says what would."""

    names_file_keys = True  # as TeamPlanError: the team file's keys

    def __init__(self, message: str, relaxations: Sequence[dict] = (), *,
                 diagnosis: dict | None = None) -> None:
        super().__init__(message)
        self.relaxations = tuple(relaxations)
        # what else the line says (binding rows, proven, time limit): ``_solve.infeasible_error``
        self.diagnosis = diagnosis


@record
class Options:
    """Run options of all jobs as flat arrays of equal length (one entry per option)."""

    job: np.ndarray          # int, index of the job (of the group of identical jobs)
    cost_usd: np.ndarray     # expected cost of the run
    gpus: np.ndarray         # GPUs held while it runs
    start_hours: np.ndarray  # from the epoch
    end_hours: np.ndarray
    scope: tuple[tuple[str, str, str], ...]  # (cloud, region, accelerator) per option
    delay_days: np.ndarray | None = None     # start − earliest start, for the tie-break

    def __len__(self) -> int:
        return len(self.job)


@record
class Solution:
    choice: tuple[int, ...]  # option index chosen for each job
    cost_usd: float
    optimal: bool            # False: stopped at the time limit with a feasible schedule
    mip_gap: float | None
    variables: int
    rows: int
    seconds: float
    message: str

    def as_dict(self) -> dict:
        return {"cost_usd": self.cost_usd, "optimal": self.optimal, "mip_gap": self.mip_gap,
                "variables": self.variables, "rows": self.rows, "seconds": self.seconds,
                "message": self.message}


# ---- time ------------------------------------------------------------------------------------

def month_edges(epoch: dt.date, horizon_hours: float) -> list[tuple[str, float, float]]:
    """Calendar months (label, start, end) in hours from ``epoch`` covering [0, horizon)."""
    out = []
    y, m = epoch.year, epoch.month
    while True:
        first = dt.date(y, m, 1)
        y2, m2 = (y + 1, 1) if m == 12 else (y, m + 1)
        start = (first - epoch).days * 24.0
        end = (dt.date(y2, m2, 1) - epoch).days * 24.0
        if start >= horizon_hours and out:
            return out
        out.append((f"{y:04d}-{m:02d}", start, end))
        y, m = y2, m2


def month_shares(start: np.ndarray, end: np.ndarray,
                 months: Sequence[tuple[str, float, float]]) -> np.ndarray:
    """φ[k, m]: the share of option k's hours [start, end) in month m (rows sum to 1)."""
    lo = np.array([m[1] for m in months])
    hi = np.array([m[2] for m in months])
    overlap = np.clip(np.minimum(end[:, None], hi) - np.maximum(start[:, None], lo), 0, None)
    return overlap / np.maximum(end - start, 1e-12)[:, None]


# ---- groups of identical jobs ----------------------------------------------------------------

@record
class Groups:
    """Which jobs share one set of options (see the docstring): ``of_job[j]`` is job j's group
    (the index ``Options.job`` uses), ``members[g]`` the jobs of group g in file order."""

    of_job: np.ndarray
    members: tuple[tuple[int, ...], ...]

    @property
    def copies(self) -> np.ndarray:
        return np.array([len(m) for m in self.members], dtype=float)

    @classmethod
    def of(cls, job_group: Sequence[int] | None, n_jobs: int) -> Groups:
        if job_group is None:
            return cls(of_job=np.arange(n_jobs), members=tuple((j,) for j in range(n_jobs)))
        of_job = np.asarray(job_group, dtype=np.int64)
        if of_job.shape != (n_jobs,) or (n_jobs and of_job.min() < 0):
            raise PlannerError("allocation: job_group must give one group index >= 0 per job")
        members: list[list[int]] = [[] for _ in range(int(of_job.max()) + 1 if n_jobs else 0)]
        for j, g in enumerate(of_job):
            members[g].append(j)
        if any(not m for m in members):
            raise PlannerError("allocation: job_group leaves a group without jobs")
        return cls(of_job=of_job, members=tuple(tuple(m) for m in members))


# ---- validation ------------------------------------------------------------------------------

def check_inputs(options: Options, job_names: Sequence[str], groups: Groups, quotas,
                 budgets) -> None:
    n = len(options)
    for name in ("cost_usd", "gpus", "start_hours", "end_hours"):
        arr = getattr(options, name)
        if np.shape(arr) != (n,):
            raise PlannerError(f"allocation: options.{name} has shape {np.shape(arr)}, "
                               f"expected ({n},)")
        if not np.all(np.isfinite(arr)):
            raise PlannerError(f"allocation: options.{name} has non-finite values")
    if len(options.scope) != n:
        raise PlannerError("allocation: options.scope must have one entry per option")
    n_groups = len(groups.members)
    if n and (options.job.min() < 0 or options.job.max() >= n_groups):
        raise PlannerError("allocation: options.job refers to a job that does not exist")
    if np.any(options.cost_usd < 0) or np.any(options.gpus < 0):
        raise PlannerError("allocation: costs and GPU counts must be >= 0")
    if np.any(options.end_hours <= options.start_hours):
        raise PlannerError("allocation: every option must end after it starts")
    counts = np.bincount(options.job, minlength=n_groups) if n else \
        np.zeros(n_groups, dtype=int)
    for g in np.flatnonzero(counts == 0):
        raise PlannerError(f"job {job_names[groups.members[g][0]]!r}: no plan finishes between "
                           "its earliest_start and deadline. To fix: move the deadline later, "
                           "raise max_gpus, or allow more clouds, accelerators or pricing "
                           "models")
    for rule in quotas:
        if not isinstance(rule, QuotaRule):
            raise PlannerError("allocation: quotas must be QuotaRule records")
    for period, usd in budgets.items():
        period_months(period)
        if not usd >= 0:
            raise PlannerError(f"allocation: budget {period} must be >= 0")


# ---- the programme ---------------------------------------------------------------------------

@dataclass(slots=True)
class Rows:
    """Constraint rows (COO triplets) with what each row means, for messages."""

    rows: list
    cols: list
    vals: list
    lb: list
    ub: list
    meta: list

    def add(self, cols: np.ndarray, vals: np.ndarray, lb: float, ub: float, meta: dict) -> None:
        r = len(self.lb)
        self.rows.append(np.full(len(cols), r))
        self.cols.append(cols)
        self.vals.append(vals)
        self.lb.append(lb)
        self.ub.append(ub)
        self.meta.append(meta)


def scopes(quotas: Sequence[QuotaRule]) -> dict:
    """{(cloud, region, accelerator): {"all": cap | None, "months": {month: cap}}}."""
    out: dict = {}
    for r in quotas:
        s = out.setdefault((r.cloud, r.region, r.accelerator), {"all": None, "months": {}})
        if r.month is None:
            s["all"] = r.gpus if s["all"] is None else min(s["all"], r.gpus)
        else:
            s["months"][r.month] = min(s["months"].get(r.month, r.gpus), r.gpus)
    return out


def scope_label(scope: tuple) -> str:
    return "/".join(x or "*" for x in scope)


def _most(coef: np.ndarray, cols: np.ndarray, job: np.ndarray, copies: np.ndarray) -> float:
    """The largest value a row over ``cols`` can take: every job of every group on its
    option with the largest coefficient."""
    peak = np.zeros(len(copies))
    np.maximum.at(peak, job[cols], coef)
    return float((peak * copies).sum())


def build(options: Options, groups: Groups, quotas, budgets, epoch: dt.date):
    """The rows (1)–(3) of the docstring, with (1) per group of identical jobs."""
    n = len(options)
    s, e, g, c = options.start_hours, options.end_hours, options.gpus, options.cost_usd
    job, copies = options.job, groups.copies
    months = month_edges(epoch, float(e.max()) if n else 1.0)
    labels = [m[0] for m in months]
    shares = month_shares(s, e, months)
    R = Rows([], [], [], [], [], [])
    for j in range(len(copies)):
        cols = np.flatnonzero(job == j)
        R.add(cols, np.ones(len(cols)), copies[j], copies[j], {"kind": "job", "job": j})
    uniq = sorted(set(options.scope))
    scope_idx = np.array([uniq.index(x) for x in options.scope]) if n else np.zeros(0, int)
    month_starts = np.array([m[1] for m in months])
    for key, caps in scopes(quotas).items():
        rule = QuotaRule(gpus=0, cloud=key[0], region=key[1], accelerator=key[2])
        ok = np.array([rule.matches(*u) for u in uniq], dtype=bool)
        match = ok[scope_idx] if n else np.zeros(0, bool)
        if not match.any():
            continue
        points = distinct(np.concatenate((s[match], month_starts[
            (month_starts > s[match].min()) & (month_starts < e[match].max())])))
        for t in points:
            mi = int(np.searchsorted(month_starts, t, side="right") - 1)
            cap = caps["months"].get(labels[mi], caps["all"])
            if cap is None:
                continue
            active = match & (s <= t) & (t < e)
            cols = np.flatnonzero(active)
            if not cols.size:
                continue
            if _most(g[cols], cols, job, copies) <= cap:
                continue  # no choice can exceed it
            R.add(cols, g[cols].astype(float), -np.inf, float(cap),
                  {"kind": "quota", "scope": key, "month": labels[mi], "cap": cap,
                   "at_hours": float(t)})
    for period, usd in budgets.items():
        ms = period_months(period)
        idx = [i for i, lab in enumerate(labels) if ms is None or lab in ms]
        if not idx:
            continue
        coef = c * shares[:, idx].sum(axis=1)
        cols = np.flatnonzero(coef > 0)
        if _most(coef[cols], cols, job, copies) <= usd:
            continue
        R.add(cols, coef[cols], -np.inf, float(usd),
              {"kind": "budget", "period": period, "budget_usd": float(usd)})
    return R, months


def tie(options: Options, priority_rank: np.ndarray | None) -> np.ndarray:
    if options.delay_days is None:
        return np.zeros(len(options))
    rank = priority_rank[options.job] if priority_rank is not None else 0.0
    return TIE_USD_PER_DAY * options.delay_days * (1.0 + rank)


def group_rank(priority: Sequence[int] | None, groups: Groups) -> np.ndarray:
    """The rank of every group's priority among all jobs' priorities (0: least important);
    a group's jobs share one priority (it is part of what makes them identical)."""
    if priority is None:
        return np.zeros(len(groups.members))
    levels = sorted(set(priority))
    ranks = []
    for m in groups.members:
        p = {priority[j] for j in m}
        if len(p) != 1:
            raise PlannerError("allocation: the jobs of one job_group must share one priority")
        ranks.append(levels.index(p.pop()))
    return np.array(ranks, dtype=float)


def row_matrix(R: Rows, n_cols: int) -> Csc:
    """The rows of ``R`` as one sparse matrix (by columns: HiGHS takes it so)."""
    if not R.lb:
        return Csc.of(np.zeros(0), np.zeros(0), np.zeros(0), n_rows=0, n_cols=n_cols)
    return Csc.of(np.concatenate(R.rows), np.concatenate(R.cols), np.concatenate(R.vals),
                  n_rows=len(R.lb), n_cols=n_cols)


def run_milp(c, R: Rows, n_cols: int, integrality, upper, *, time_limit_s: float,
             gap: float) -> MilpResult:
    A = row_matrix(R, n_cols)
    return _interruptible(lambda: solve_milp(
        np.asarray(c, dtype=float), A, np.array(R.lb, dtype=float),
        np.array(R.ub, dtype=float), np.asarray(integrality), np.asarray(upper, dtype=float),
        time_limit_s=time_limit_s, gap=gap))


def _interruptible(solve):
    """``solve()`` in a thread while this one waits in short steps: HiGHS releases the GIL
    but never returns to Python mid-solve, so a Ctrl-C waited for the solve — 20 s and more
    on a large team plan (its presolve overruns the time limit). The abandoned solve ends
    with the process (a daemon thread)."""
    import threading

    done: list = []

    def work() -> None:
        try:
            done.append((True, solve()))
        except BaseException as exc:  # handed to the waiting thread, raised there
            done.append((False, exc))

    worker = threading.Thread(target=work, name="gpuplan-milp", daemon=True)
    worker.start()
    while worker.is_alive():
        worker.join(0.1)
    ok, value = done[0]
    if not ok:
        raise value
    return value
