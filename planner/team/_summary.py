"""From a solved team programme to the Allocation the reports show: per job, per team, per
month (cost and GPU-hours pro rata of running hours), budget headroom and peak quota use, and
the warnings `plan` gives for each job's chosen plan."""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence

import numpy as np

from catalog import record

from ..model import (
    format_chance,
    format_count,
    format_params,
    format_requirement,
    freeze,
    parse_count,
    thaw,
)
from ..search import DEFAULT_MAX_SPOT_INSTANCES, QuotaRule
from ._fields import period_months
from ._milp import month_edges, month_shares, scope_label, scopes
from ._why import in_team_terms


@record
class Allocation:
    """The chosen plan of every job and what it adds up to: plain data, read-only (``jobs``
    a tuple of read-only mappings …); ``as_dict`` gives the JSON."""

    name: str
    source: str
    jobs: Sequence[Mapping]
    totals: Mapping
    by_team: Mapping
    by_month: Mapping
    budgets: Sequence[Mapping]
    quotas: Sequence[Mapping]
    catalog: Mapping
    assumptions: Sequence[str]
    solver: Mapping
    # The plan's dates against today (``check_dates``: a deadline or start that has passed,
    # said when comparing with actuals), set by who checked them: a written report lists them
    # first among its warnings (they were on stderr only, and a reader of the file never saw
    # that a job's window had passed).
    date_warnings: Sequence[str] = ()

    def __post_init__(self) -> None:
        for name in ("jobs", "totals", "by_team", "by_month", "budgets", "quotas", "catalog",
                     "assumptions", "solver", "date_warnings"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    def as_dict(self) -> dict:
        return thaw({"name": self.name, "source": self.source, "totals": self.totals,
                     "jobs": self.jobs, "by_team": self.by_team, "by_month": self.by_month,
                     "budgets": self.budgets, "quotas": self.quotas, "catalog": self.catalog,
                     "assumptions": self.assumptions, "solver": self.solver})

    def grouped_warnings(self) -> list[tuple[tuple[int, ...], str]]:
        """(the indices of the jobs that have it, warning) for each distinct warning of the
        jobs (their ``warnings``), in the order first met: 500 jobs of one workload said one
        thing 500 times."""
        who: dict[str, list[int]] = {}
        for i, job in enumerate(self.jobs):
            for w in job.get("warnings", ()):  # none in an allocation kept from before them
                who.setdefault(w, []).append(i)
        return [(tuple(idx), w) for w, idx in who.items()]

    def with_dates(self, warnings: Sequence[str]) -> Allocation:
        """This allocation with ``check_dates``' warnings as its ``date_warnings``, worded as
        its jobs' warnings are ("jobs[1] 'a': …": the plan file, its source, left out)."""
        return dataclasses.replace(self, date_warnings=tuple(
            w.removeprefix(f"{self.source}: ") for w in warnings))

    def job_warning_lines(self) -> list[str]:
        """``grouped_warnings`` as `gpuplan report` prints them, each after the jobs that have
        it: "jobs[1] 'a' and jobs[3] 'c': …", "all 5 jobs: …"."""
        return [f"{_who(self.jobs, idx)}: {w}" for idx, w in self.grouped_warnings()]

    def warning_lines(self) -> list[str]:
        """What every report lists as its warnings: the dates' (``date_warnings``), then the
        jobs' (``job_warning_lines``)."""
        return [*self.date_warnings, *self.job_warning_lines()]


def _when(epoch: dt.date, hours: float) -> str:
    t = dt.datetime(epoch.year, epoch.month, epoch.day) + dt.timedelta(hours=hours)
    return f"{t:%Y-%m-%d %H:%M}"


def workload_label(job) -> str:
    s = job.spec
    what = s.model or (f"config {s.config_name}" if s.config is not None else f"{s.params} params"
                       + (f" ({s.active_params} active)" if s.active_params else "")
                       + _modelled(job))
    # format_count: 100M tokens read "0B", 1.5B read "2B"
    return f"{what}, {format_count(job.workload.tokens)} tokens"


def _modelled(job) -> str:
    """" (modelled at 0.22B)" where sizes given beside ``params`` make a model of another size
    (the job's warnings say so): "1B params" stood beside the cost of a 0.22B model."""
    s = job.spec
    if not s.arch_overrides:
        return ""
    total = job.workload.arch.params_total()
    return (f" (modelled at {format_params(total)})"
            if abs(total / parse_count(s.params, "params") - 1) > MODELLED_OFF else "")


MODELLED_OFF = 0.05  # a shape within 5% of ``params`` is labelled by ``params`` alone


def _job_warnings(job, cand, delay: int, prob: float) -> list[str]:
    """What `plan` warns of for the job's chosen plan, in the team file's keys: the workload's
    warnings (sizes that change the model, a run shorter than one step …) and the candidate's
    (capacity, a flagged price, a term paid beyond the run, a deadline likely missed …). The
    candidate's deadline warning is that of its earliest start: a later start's is said with
    the probability the allocation computed for it."""
    said = [*job.workload.warnings, *(w for w in cand.get("warnings", ())
                                      if not (delay and w.startswith("deadline: ")))]
    if delay and job.min_probability and prob < 0.5:
        said.append(f"deadline: started {delay} days after earliest_start, this plan finishes "
                    f"by the deadline with probability {format_chance(prob)}, which meets the "
                    f"{format_requirement(job.min_probability)} asked (`min_probability`), but "
                    "it is more likely to miss it; 0.5 or more asks for a likely finish, 0 for "
                    "the expected time")
    return list(dict.fromkeys(in_team_terms(w) for w in said))


def summarise_allocation(team_plan, options, rec, sol, epoch: dt.date, catalog_info: dict,
                         job_group: Sequence[int] | None = None):
    """``job_group``: the group of identical jobs of every job (``Options.job`` indexes
    groups, ``_milp``'s docstring); default: every job its own."""
    chosen = list(sol.choice)
    group_of = list(range(len(team_plan.jobs))) if job_group is None else list(job_group)
    s, e = options.start_hours[chosen], options.end_hours[chosen]
    months = month_edges(epoch, float(e.max()))
    shares = month_shares(s, e, months)
    labels = [m[0] for m in months]
    counts = np.bincount(options.job, minlength=max(group_of) + 1)
    jobs = []
    for j, (job, k) in enumerate(zip(team_plan.jobs, chosen, strict=True)):
        cand, delay, prob = rec[k]
        cost = float(cand["total_cost_usd"])
        gpu_hours = float(cand.get("gpu_hours", cand["gpus"] * cand["wall_clock_hours"]))
        deadline_h = (job.deadline - epoch).days * 24.0
        jobs.append({
            "job": job.name, "team": job.team, "priority": job.priority,
            "workload": workload_label(job),
            "earliest_start": job.earliest_start.isoformat(),
            "deadline": job.deadline.isoformat(), "start": _when(epoch, float(s[j])),
            "end": _when(epoch, float(e[j])), "start_offset_days": int(delay),
            "slack_hours": deadline_h - float(e[j]),
            "cloud": cand["cloud"], "region": cand["region"],
            "instance_type": cand["instance_type"], "accelerator": cand["accelerator"],
            "nodes": int(cand["nodes"]), "gpus": int(cand["gpus"]), "pricing": cand["pricing"],
            "usd_per_hour": float(cand["usd_per_hour"]),
            "usd_per_hour_cluster": float(cand.get("usd_per_hour_cluster",
                                                   cand["usd_per_hour"] * cand["nodes"])),
            "price_as_of": cand.get("price_as_of"), "price_source": cand.get("price_source"),
            "price_flags": list(cand.get("price_flags", ())),
            "wall_clock_hours": float(cand["wall_clock_hours"]), "gpu_hours": gpu_hours,
            "cost_usd": cost, "deadline_probability": prob, "mfu": cand.get("mfu"),
            "plan": dict(cand.get("plan") or {}), "options_considered": int(counts[group_of[j]]),
            "calibration": list(cand.get("calibration") or ()),  # measured figures it used
            "cost_by_month": {labels[m]: cost * float(shares[j, m])
                              for m in range(len(labels)) if shares[j, m] > 0},
            "gpu_hours_by_month": {labels[m]: gpu_hours * float(shares[j, m])
                                   for m in range(len(labels)) if shares[j, m] > 0},
            "warnings": _job_warnings(job, cand, int(delay), prob),
        })
    budgets = dict(team_plan.budgets)
    by_month = {}
    for m in labels:
        cost = sum(jb["cost_by_month"].get(m, 0.0) for jb in jobs)
        if cost <= 0:
            continue
        by_month[m] = {"cost_usd": cost,
                       "gpu_hours": sum(jb["gpu_hours_by_month"].get(m, 0.0) for jb in jobs),
                       "jobs": [jb["job"] for jb in jobs if m in jb["cost_by_month"]],
                       "budget_usd": budgets.get(m)}
    by_team: dict = {}
    for jb in jobs:
        t = by_team.setdefault(jb["team"], {"jobs": 0, "gpu_hours": 0.0, "cost_usd": 0.0})
        t["jobs"] += 1
        t["gpu_hours"] += jb["gpu_hours"]
        t["cost_usd"] += jb["cost_usd"]
    by_team = dict(sorted(by_team.items()))
    budget_rows = []
    for period, usd in team_plan.budgets:
        ms = period_months(period)
        planned = sum(v["cost_usd"] for m, v in by_month.items() if ms is None or m in ms)
        budget_rows.append({"period": period, "budget_usd": usd, "planned_usd": planned,
                            "headroom_usd": usd - planned,
                            "used": planned / usd if usd else None})
    total_cost = sum(jb["cost_usd"] for jb in jobs)
    totals = {"jobs": len(jobs), "cost_usd": total_cost,
              "gpu_hours": sum(jb["gpu_hours"] for jb in jobs),
              "start": min(jb["start"] for jb in jobs), "end": max(jb["end"] for jb in jobs),
              "budget_usd": budgets.get("total")}
    return Allocation(
        name=team_plan.name, source=team_plan.source, jobs=jobs, totals=totals,
        by_team=by_team, by_month=by_month, budgets=budget_rows,
        quotas=_quota_use(team_plan, options, chosen, _quota_months(team_plan, epoch, e)),
        catalog=catalog_info,
        assumptions=[*_assumptions(team_plan, catalog_info), *_spot_fleets(jobs, s, e)],
        solver={**sol.as_dict(), "options": len(options), "epoch": epoch.isoformat()})


def _quota_months(team_plan, epoch: dt.date, end: np.ndarray) -> list[tuple[str, float, float]]:
    """The months the quota table covers: from the epoch through the last month of any job's
    window (earliest_start to deadline), chosen run (one may overrun its deadline) or month a
    rule names. The runs' months alone left out a rule for a month the plan was moved out of (a
    cap of 0 GPUs in April shaped a plan that then ended in March: the table showed no rule)."""
    named = [dt.date.fromisoformat(f"{r.month}-01") for r in team_plan.quotas if r.month]
    horizon = max([float(end.max()), *((j.deadline - epoch).days * 24.0 for j in team_plan.jobs),
                   *((first - epoch).days * 24.0 + 1.0 for first in named)])
    return month_edges(epoch, horizon)


def _quota_use(team_plan, options, chosen, months) -> list[dict]:
    """Peak GPUs in use per quota scope and month (``_quota_months``: 0 where nothing of the
    scope runs), next to the cap."""
    out = []
    s, e = options.start_hours[chosen], options.end_hours[chosen]
    g = options.gpus[chosen]
    scope = [options.scope[k] for k in chosen]
    for key, caps in scopes(team_plan.quotas).items():
        rule = QuotaRule(gpus=0, cloud=key[0], region=key[1], accelerator=key[2])
        match = np.array([rule.matches(*x) for x in scope], dtype=bool)
        for label, lo, hi in months:
            cap = caps["months"].get(label, caps["all"])
            if cap is None:
                continue
            points = [lo, *(t for t in s[match] if lo <= t < hi)]
            peak = _peak_in_use(g[match], s[match], e[match], points)
            out.append({"scope": scope_label(key), "month": label, "cap_gpus": cap,
                        "peak_gpus": int(peak)})
    return out


def _peak_in_use(amount: np.ndarray, start: np.ndarray, end: np.ndarray, points) -> float:
    """The most of ``amount`` that runs [start, end) hold at once, looked at ``points`` (the
    total in use only rises where a run starts: those starts are enough)."""
    return max(float(amount[(start <= t) & (t < end)].sum()) for t in points)


def _spot_fleets(jobs: list[dict], s: np.ndarray, e: np.ndarray) -> list[str]:
    """A warning per (cloud, region, instance type) whose spot instances in use at once exceed
    the spot fleet limit `plan` warns above (DEFAULT_MAX_SPOT_INSTANCES): the allocation adds
    up jobs that each fit under it, and clouds publish no spot capacity."""
    out = []
    fleets: dict[tuple, list[int]] = {}
    for j, jb in enumerate(jobs):
        if jb["pricing"] == "spot":
            fleets.setdefault((jb["cloud"], jb["region"], jb["instance_type"]), []).append(j)
    for (cloud, region, itype), idx in sorted(fleets.items()):
        nodes = np.array([jobs[j]["nodes"] for j in idx])
        peak = int(_peak_in_use(nodes, s[idx], e[idx], s[idx]))
        if peak > DEFAULT_MAX_SPOT_INSTANCES:
            out.append(f"Capacity: up to {peak:,} spot {itype} in {cloud} {region} at once "
                       f"(above the {DEFAULT_MAX_SPOT_INSTANCES}-instance spot fleet `gpuplan "
                       "plan` warns at); clouds publish no spot capacity, so check the "
                       "cloud's spot placement score or quota before counting on it.")
    return out


MAX_NAMED = 4  # jobs named per value when jobs differ ("'a', 'b', 'c', 'd' and 3 more")


def _who(jobs, idx: list[int]) -> str:
    """The jobs at ``idx`` as a warning names them: "jobs[2] 'b'", "jobs[1] 'a' and jobs[3]
    'c'", "jobs[1] 'a', … and 3 more", "all 5 jobs"."""
    if len(idx) == len(jobs) > 1:
        return f"all {len(jobs):,} jobs"
    names = [f"jobs[{i + 1}] {jobs[i]['job']!r}" for i in idx]
    if len(names) > MAX_NAMED:
        return ", ".join(names[:MAX_NAMED]) + f" and {len(names) - MAX_NAMED:,} more"
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _per_job(jobs, value, say) -> str:
    """Each distinct ``value(job)`` said (``say(v)``) with the jobs that have it, the value of
    the most jobs last as "every other job" — compact when one value is the rule."""
    groups: dict = {}
    for job in jobs:
        groups.setdefault(value(job), []).append(job.name)
    order = sorted(groups, key=lambda v: len(groups[v]))  # stable: file order among equals
    parts = []
    for i, v in enumerate(order):
        names = groups[v]
        if i == len(order) - 1 and len(names) > 1:
            who = "every other job"
        else:
            who = ", ".join(f"'{n}'" for n in names[:MAX_NAMED]) + (
                f" and {len(names) - MAX_NAMED:,} more" if len(names) > MAX_NAMED else "")
        parts.append(f"{say(v)} for {who}")
    return "; ".join(parts)


def _days(offsets) -> str:
    return "+ " + ", ".join(f"{d}" for d in offsets) + (" day" if offsets == (1,) else " days")


def _assumptions(team_plan, catalog_info: dict) -> list[str]:
    """What the report assumed, in words; a job's own start offsets and min_probability are
    said per job where jobs differ (a union of offsets said every job could start on each,
    and jobs asking no probability were left out of "Only plans at least 0.3 likely")."""
    jobs = team_plan.jobs
    offsets = {j.start_offsets_days for j in jobs}
    probs = {j.min_probability for j in jobs}
    if len(offsets) == 1:
        starts = "Starts considered: earliest_start " + _days(tuple(sorted(*offsets))) + "."
    else:
        starts = "Starts considered: earliest_start " + _per_job(
            jobs, lambda j: tuple(sorted(j.start_offsets_days)), _days) + "."
    out = [
        "Times are UTC; a job may start at 00:00 on earliest_start and must end by 00:00 on "
        "its deadline.",
        starts,
        "Costs are expected costs: spot interruptions and hardware failures are priced in "
        "(Young/Daly checkpointing, restart time), as in `gpuplan plan`.",
        "Cost and GPU-hours accrue to months pro rata of running hours.",
        "Quotas cap the GPUs in use at every moment across the jobs a rule matches; a rule for "
        "a month replaces the every-month rule of the same scope in that month.",
        "Prices are frozen in this report: the USD per instance-hour of each job and the "
        "catalog date below.",
    ]
    why = ("the probability includes the model's log-normal range as well as Poisson "
           "interruptions (hardware failures, and reclaims of spot capacity), as in `gpuplan "
           "plan`.")
    if len(probs) == 1 and 0 not in probs:
        out.append(f"Only plans at least {next(iter(probs)):g} likely to finish by the "
                   f"deadline were considered; {why}")
    elif len(probs) > 1:
        out.append("Plans considered: " + _per_job(
            jobs, lambda j: j.min_probability,
            lambda p: f"at least {p:g} likely to finish by the deadline" if p else
            "expected to end by the deadline (no probability asked)") + f"; {why}")
    if catalog_info.get("overrides"):
        out.append(f"Price overrides applied: {catalog_info['overrides']}.")
    return out
