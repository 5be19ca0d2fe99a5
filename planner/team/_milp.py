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

Diagnosis when (1)–(3) admit no solution — elastic versions of the same programme:
  quotas   Q_q(m) + σ_qm  (σ ≥ 0, one per scope and month), min Σ σ            (GPUs)
  budgets  B_p + β_p      (β ≥ 0),                         min Σ β            (USD)
  jobs     Σ_k x_jk + u_j = 1 (u ∈ {0,1}),   min Σ_j (1 + n_jobs · rank_j) u_j
           (drop as few, and as unimportant, jobs as possible)
  both     quotas and budgets elastic together, min Σ σ + Σ β / 1000
each with a cost term scaled below one unit, so among the smallest relaxations the cheapest
schedule is found. Positive slacks name the binding rows and how much each must move.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model import PlannerError
from ..search import QuotaRule
from ._fields import period_months

TIE_USD_PER_DAY = 1e-6
DEFAULT_TIME_LIMIT_S = 60.0
DEFAULT_MIP_REL_GAP = 1e-7  # HiGHS' default (1e-4) could leave $100 on a $1M plan


class AllocationInfeasibleError(PlannerError):
    """No allocation meets every quota and budget; ``relaxations`` says what would."""

    def __init__(self, message: str, relaxations: Sequence[dict] = ()) -> None:
        super().__init__(message)
        self.relaxations = tuple(relaxations)


@dataclass(frozen=True, slots=True, kw_only=True)
class Options:
    """Run options of all jobs as flat arrays of equal length (one entry per option)."""

    job: np.ndarray          # int, index of the job
    cost_usd: np.ndarray     # expected cost of the run
    gpus: np.ndarray         # GPUs held while it runs
    start_hours: np.ndarray  # from the epoch
    end_hours: np.ndarray
    scope: tuple[tuple[str, str, str], ...]  # (cloud, region, accelerator) per option
    delay_days: np.ndarray | None = None     # start − earliest start, for the tie-break

    def __len__(self) -> int:
        return len(self.job)


@dataclass(frozen=True, slots=True, kw_only=True)
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


# ---- validation ------------------------------------------------------------------------------

def _check_inputs(options: Options, job_names: Sequence[str], quotas, budgets) -> None:
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
    if n and (options.job.min() < 0 or options.job.max() >= len(job_names)):
        raise PlannerError("allocation: options.job refers to a job that does not exist")
    if np.any(options.cost_usd < 0) or np.any(options.gpus < 0):
        raise PlannerError("allocation: costs and GPU counts must be >= 0")
    if np.any(options.end_hours <= options.start_hours):
        raise PlannerError("allocation: every option must end after it starts")
    counts = np.bincount(options.job, minlength=len(job_names)) if n else \
        np.zeros(len(job_names), dtype=int)
    for j in np.flatnonzero(counts == 0):
        raise PlannerError(f"job {job_names[j]!r}: no plan finishes between its earliest_start "
                           "and deadline. To fix: move the deadline later, raise max_gpus, or "
                           "allow more clouds, accelerators or pricing models")
    for rule in quotas:
        if not isinstance(rule, QuotaRule):
            raise PlannerError("allocation: quotas must be QuotaRule records")
    for period, usd in budgets.items():
        period_months(period)
        if not usd >= 0:
            raise PlannerError(f"allocation: budget {period} must be >= 0")


# ---- the programme ---------------------------------------------------------------------------

@dataclass(slots=True)
class _Rows:
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


def _build(options: Options, n_jobs: int, quotas, budgets, epoch: dt.date):
    n = len(options)
    s, e, g, c = options.start_hours, options.end_hours, options.gpus, options.cost_usd
    job = options.job
    months = month_edges(epoch, float(e.max()) if n else 1.0)
    labels = [m[0] for m in months]
    shares = month_shares(s, e, months)
    R = _Rows([], [], [], [], [], [])
    for j in range(n_jobs):
        cols = np.flatnonzero(job == j)
        R.add(cols, np.ones(len(cols)), 1.0, 1.0, {"kind": "job", "job": j})
    uniq = sorted(set(options.scope))
    scope_idx = np.array([uniq.index(x) for x in options.scope]) if n else np.zeros(0, int)
    month_starts = np.array([m[1] for m in months])
    for key, caps in scopes(quotas).items():
        rule = QuotaRule(gpus=0, cloud=key[0], region=key[1], accelerator=key[2])
        ok = np.array([rule.matches(*u) for u in uniq], dtype=bool)
        match = ok[scope_idx] if n else np.zeros(0, bool)
        if not match.any():
            continue
        points = np.union1d(s[match], month_starts[(month_starts > s[match].min())
                                                   & (month_starts < e[match].max())])
        for t in points:
            mi = int(np.searchsorted(month_starts, t, side="right") - 1)
            cap = caps["months"].get(labels[mi], caps["all"])
            if cap is None:
                continue
            active = match & (s <= t) & (t < e)
            cols = np.flatnonzero(active)
            if not cols.size:
                continue
            peak = np.zeros(n_jobs)
            np.maximum.at(peak, job[cols], g[cols])
            if peak.sum() <= cap:
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
        peak = np.zeros(n_jobs)
        np.maximum.at(peak, job[cols], coef[cols])
        if peak.sum() <= usd:
            continue
        R.add(cols, coef[cols], -np.inf, float(usd),
              {"kind": "budget", "period": period, "budget_usd": float(usd)})
    return R, months


def _tie(options: Options, priority_rank: np.ndarray | None) -> np.ndarray:
    if options.delay_days is None:
        return np.zeros(len(options))
    rank = priority_rank[options.job] if priority_rank is not None else 0.0
    return TIE_USD_PER_DAY * options.delay_days * (1.0 + rank)


def _milp(c, R: _Rows, n_cols: int, integrality, upper, *, time_limit_s: float, gap: float):
    from scipy.optimize import LinearConstraint, milp
    from scipy.sparse import coo_matrix

    A = coo_matrix((np.concatenate(R.vals), (np.concatenate(R.rows), np.concatenate(R.cols))),
                   shape=(len(R.lb), n_cols)).tocsr()
    return milp(c, integrality=integrality, bounds=(np.zeros(n_cols), upper),
                constraints=[LinearConstraint(A, np.array(R.lb), np.array(R.ub))],
                options={"time_limit": time_limit_s, "mip_rel_gap": gap, "presolve": True})


def solve(options: Options, *, job_names: Sequence[str], quotas: Sequence[QuotaRule] = (),
          budgets: Mapping[str, float] | None = None, epoch: dt.date,
          priority: Sequence[int] | None = None, time_limit_s: float = DEFAULT_TIME_LIMIT_S,
          mip_rel_gap: float = DEFAULT_MIP_REL_GAP) -> Solution:
    """Choose one option per job: the programme in this module's docstring."""
    budgets = dict(budgets or {})
    _check_inputs(options, job_names, quotas, budgets)
    t0 = time.perf_counter()
    n_jobs, n = len(job_names), len(options)
    rank = _priority_rank(priority, n_jobs)
    R, _months = _build(options, n_jobs, quotas, budgets, epoch)
    c = options.cost_usd + _tie(options, rank)
    res = _milp(c, R, n, np.ones(n), np.ones(n), time_limit_s=time_limit_s, gap=mip_rel_gap)
    if res.status == 2:
        raise _diagnose(options, R, job_names, rank, time_limit_s)
    if res.x is None:
        raise PlannerError(f"the allocation solver stopped without a schedule ({res.message}). "
                           "To fix: allow fewer start offsets or fewer jobs per plan, or retry")
    if res.status not in (0, 1):
        raise PlannerError(f"the allocation solver failed: {res.message}")
    x = np.round(res.x).astype(int)
    choice = _choices(x, options.job, n_jobs)
    _verify(R, x)
    return Solution(choice=choice, cost_usd=float(options.cost_usd[list(choice)].sum()),
                    optimal=res.status == 0, mip_gap=getattr(res, "mip_gap", None),
                    variables=n, rows=len(R.lb), seconds=time.perf_counter() - t0,
                    message=str(res.message))


def _priority_rank(priority, n_jobs: int) -> np.ndarray:
    if priority is None:
        return np.zeros(n_jobs)
    levels = sorted(set(priority))
    return np.array([levels.index(p) for p in priority], dtype=float)


def _choices(x: np.ndarray, job: np.ndarray, n_jobs: int) -> tuple[int, ...]:
    out = []
    for j in range(n_jobs):
        picked = np.flatnonzero((job == j) & (x[:len(job)] == 1))
        if len(picked) != 1:
            raise PlannerError(f"the allocation solver returned {len(picked)} plans for job "
                               f"{j}; expected one. To fix: report this as a bug")
        out.append(int(picked[0]))
    return tuple(out)


def _verify(R: _Rows, x: np.ndarray) -> None:
    """Check the rounded solution against every row (the solver works in floating point)."""
    for r, (lb, ub) in enumerate(zip(R.lb, R.ub, strict=True)):
        v = float(np.dot(R.vals[r], x[R.cols[r]]))
        if v < lb - 1e-6 * max(1, abs(lb)) or v > ub + 1e-6 * max(1, abs(ub)):
            raise PlannerError(f"the allocation solver returned a schedule that breaks "
                               f"{R.meta[r]} ({v:g} not in [{lb:g}, {ub:g}]). To fix: report "
                               "this as a bug")


# ---- diagnosis -------------------------------------------------------------------------------

def _elastic(options: Options, R: _Rows, mode: str, rank: np.ndarray, time_limit_s: float):
    """Solve an elastic version (see the docstring); None when even that is infeasible."""
    n, n_jobs = len(options), len(rank)
    cost_scale = 1e-3 / max(float(options.cost_usd.sum()), 1.0)
    c = list(options.cost_usd * cost_scale)
    integ, upper = [1.0] * n, [1.0] * n
    E = _Rows(list(R.rows), list(R.cols), list(R.vals), list(R.lb), list(R.ub), list(R.meta))
    slack_meta = []
    groups: dict = {}
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
        if key not in groups:
            groups[key] = n + len(slack_meta)
            slack_meta.append((key, meta))
            c.append(weight)
            integ.append(1.0 if kind == "job" else 0.0)
            upper.append(1.0 if kind == "job" else np.inf)
        col = groups[key]
        E.cols[r] = np.append(E.cols[r], col)
        E.vals[r] = np.append(E.vals[r], 1.0 if kind == "job" else -1.0)
        E.rows[r] = np.full(len(E.cols[r]), r)
    if not slack_meta:
        return None
    res = _milp(np.array(c), E, len(c), np.array(integ), np.array(upper),
                time_limit_s=time_limit_s, gap=1e-6)
    if res.x is None:
        return None
    out = []
    for i, (key, meta) in enumerate(slack_meta):
        v = float(res.x[n + i])
        if v > 1e-6:
            out.append((key, meta, v))
    x = np.round(res.x[:n]).astype(int)
    return out, float(options.cost_usd[x == 1].sum())


def _describe(key, meta, v: float, job_names) -> tuple[str, dict]:
    if key[0] == "quota":
        more = math.ceil(v - 1e-6)
        return (f"+{more:,} GPUs of {scope_label(meta['scope'])} in {meta['month']} (quota "
                f"{meta['cap']:,})", {"kind": "quota", "scope": scope_label(meta["scope"]),
                                      "month": meta["month"], "cap_gpus": meta["cap"],
                                      "more_gpus": more})
    if key[0] == "budget":
        more = math.ceil(v - 1e-6)
        return (f"+${more:,} in {meta['period']} (budget ${meta['budget_usd']:,.0f})",
                {"kind": "budget", "period": meta["period"],
                 "budget_usd": meta["budget_usd"], "more_usd": more})
    name = job_names[meta["job"]]
    return f"drop job {name!r}", {"kind": "drop_job", "job": name}


def _diagnose(options: Options, R: _Rows, job_names, rank, time_limit_s) -> PlannerError:
    kinds = {m["kind"] for m in R.meta}
    found = {}
    for mode in ("quotas", "budgets", "jobs"):
        if mode == "quotas" and "quota" not in kinds or mode == "budgets" and "budget" \
                not in kinds:
            continue
        found[mode] = _elastic(options, R, mode, rank, time_limit_s)
    if found.get("quotas") is None and found.get("budgets") is None \
            and {"quota", "budget"} <= kinds:
        found["both"] = _elastic(options, R, "both", rank, time_limit_s)
    parts, relax, binding = [], [], []
    for mode in ("quotas", "budgets", "both", "jobs"):
        got = found.get(mode)
        if not got:
            continue
        slacks, cost = got
        texts, items = zip(*(_describe(k, m, v, job_names) for k, m, v in slacks), strict=True)
        relax.append({"relax": mode, "changes": list(items), "cost_usd": cost})
        parts.append(" and ".join(texts) + f" (then ${cost:,.0f})")
        binding.extend(f"quota {scope_label(m['scope'])} in {m['month']}" if k[0] == "quota"
                       else f"budget {m['period']}" for k, m, _ in slacks if k[0] != "job")
    what = "; ".join(dict.fromkeys(binding)) or "the quotas and budgets together"
    return AllocationInfeasibleError(
        f"no allocation meets every quota and budget; binding: {what}. Cheapest relaxations: "
        + ("; or ".join(parts) or "none found") + ". To fix: raise that quota or budget in the "
        "team plan, widen a job's window, clouds or accelerators, or drop a job", relax)



# ---- from a team plan to an allocation -------------------------------------------------------
