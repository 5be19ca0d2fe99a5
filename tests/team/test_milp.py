"""The team MILP against brute force, and what it says when nothing fits.

Brute force is independent of the MILP's exact-check-point argument: starts and ends are whole
hours, so it checks the quota at every hour and attributes cost hour by hour to months."""

from __future__ import annotations

import datetime as dt
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.search import QuotaRule
from planner.team import AllocationInfeasibleError, Options, month_edges, solve

EPOCH = dt.date(2027, 3, 1)
SCOPES = (("aws", "us-east-1", "H100-SXM5-80GB"), ("gcp", "us-central1", "A100-SXM4-80GB"))


@st.composite
def instances(draw):
    n_jobs = draw(st.integers(2, 4))
    rows = []
    for j in range(n_jobs):
        for _ in range(draw(st.integers(2, 4))):
            start = draw(st.integers(0, 50)) * 24 + draw(st.integers(0, 23))
            rows.append((j, float(draw(st.integers(1, 200)) * 100 + draw(st.integers(0, 99))),
                         draw(st.sampled_from([8, 16, 32, 64])), start,
                         start + draw(st.integers(1, 40 * 24)), draw(st.integers(0, 1))))
    quotas = [QuotaRule(gpus=draw(st.sampled_from([32, 64, 96, 128])), cloud="aws")]
    if draw(st.booleans()):  # a different cap in the second month
        quotas.append(QuotaRule(gpus=draw(st.sampled_from([16, 64, 200])), cloud="aws",
                                month="2027-04"))
    period = draw(st.sampled_from(["2027-03", "2027-04", "2027Q2", "total"]))
    budget = float(draw(st.integers(1, 60)) * 1000)
    return n_jobs, rows, quotas, {period: budget}


def _options(rows) -> Options:
    job, cost, gpus, start, end, scope = zip(*rows, strict=True)
    return Options(job=np.array(job), cost_usd=np.array(cost), gpus=np.array(gpus, float),
                   start_hours=np.array(start, float), end_hours=np.array(end, float),
                   scope=tuple(SCOPES[s] for s in scope))


def _months_of_hours(horizon: int) -> list[str]:
    labels = []
    for label, lo, hi in month_edges(EPOCH, horizon):
        labels += [label] * int(hi - lo)
    return labels[:horizon]


def _period(p: str, label: str) -> bool:
    from planner.team import period_months

    ms = period_months(p)
    return ms is None or label in ms


def brute_force(n_jobs, rows, quotas, budgets) -> float | None:
    horizon = max(r[4] for r in rows)
    month = _months_of_hours(horizon)
    cap = np.array([min([q.gpus for q in quotas if q.month == m]
                        or [q.gpus for q in quotas if q.month is None]) for m in month])
    hours = np.arange(horizon)
    use, spend = {}, {}
    for k, r in enumerate(rows):  # GPUs on aws in every hour, and USD spent in each period
        active = (r[3] <= hours) & (hours < r[4])
        use[k] = active * r[2] * (SCOPES[r[5]][0] == "aws")
        spend[k] = {p: r[1] / (r[4] - r[3]) * sum(_period(p, month[t]) for t in
                                                 range(r[3], r[4])) for p in budgets}
    per_job = [[k for k, r in enumerate(rows) if r[0] == j] for j in range(n_jobs)]
    best = None
    for combo in itertools.product(*per_job):
        if np.any(sum(use[k] for k in combo) > cap):
            continue
        if any(sum(spend[k][p] for k in combo) > usd + 1e-6 for p, usd in budgets.items()):
            continue
        cost = sum(rows[k][1] for k in combo)
        if best is None or cost < best:
            best = cost
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_milp_equals_brute_force(instance):
    n_jobs, rows, quotas, budgets = instance
    expected = brute_force(n_jobs, rows, quotas, budgets)
    names = [f"job{j}" for j in range(n_jobs)]
    if expected is None:
        with pytest.raises(AllocationInfeasibleError):
            solve(_options(rows), job_names=names, quotas=quotas, budgets=budgets, epoch=EPOCH)
        return
    sol = solve(_options(rows), job_names=names, quotas=quotas, budgets=budgets, epoch=EPOCH)
    assert sol.optimal
    assert sol.cost_usd == pytest.approx(expected, rel=1e-9, abs=1e-6)


def _two_overlapping(gpus=64, cost=1000.0):
    # two jobs, one option each, both running through March on aws
    return Options(job=np.array([0, 1]), cost_usd=np.array([cost, cost]),
                   gpus=np.array([gpus, gpus], float), start_hours=np.array([0.0, 24.0]),
                   end_hours=np.array([400.0, 500.0]), scope=(SCOPES[0], SCOPES[0]))


def test_infeasible_quota_names_the_binding_rule_and_the_cheapest_relaxation():
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(_two_overlapping(), job_names=["pretrain", "finetune"], epoch=EPOCH,
              quotas=[QuotaRule(gpus=96, cloud="aws", region="us-east-1")])
    msg = str(err.value)
    assert "binding: quota aws/us-east-1/* in 2027-03" in msg
    assert "+32 GPUs of aws/us-east-1/* in 2027-03 (quota 96 → 128)" in msg
    assert "drop job 'finetune'" in msg or "drop job 'pretrain'" in msg
    kinds = {c["kind"] for r in err.value.relaxations for c in r["changes"]}
    assert {"quota", "drop_job"} <= kinds


def test_relaxations_not_found_in_time_are_not_called_the_cheapest(monkeypatch):
    """Every elastic programme out of time before any schedule read "Cheapest relaxations:
    none found" — a proof that nothing helps, where nothing had been searched (hostile sweep:
    4,000 job-offsets under tight quotas and budgets)."""
    from types import SimpleNamespace

    from planner.team import _solve

    real = _solve.run_milp
    calls = []

    def out_of_time(*args, **kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            return real(*args, **kwargs)  # the allocation itself: infeasible, proven
        return SimpleNamespace(x=None, status=1, message="Time limit reached")

    monkeypatch.setattr(_solve, "run_milp", out_of_time)
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(_two_overlapping(), job_names=["pretrain", "finetune"], epoch=EPOCH,
              quotas=[QuotaRule(gpus=96, cloud="aws", region="us-east-1")], time_limit_s=5)
    msg = str(err.value)
    assert "Cheapest" not in msg and "none found" not in msg and len(calls) > 1
    # dropping jobs always fits: a greedy schedule says which, and what binds (it read
    # "No relaxation was found within 5 s" and "binding: the quotas and budgets together")
    assert ("binding: quota aws/us-east-1/* in 2027-03. Relaxations found within the time "
            "limit (maybe not the cheapest): drop job 'finetune', then the schedule costs "
            "$1,000. To fix: ") in msg
    assert err.value.relaxations == ({"relax": "jobs", "cost_usd": 1000.0, "changes": [
        {"kind": "drop_job", "job": "finetune"}]},)


@pytest.mark.parametrize(("priority", "dropped"), [((1, 0), "finetune"), ((0, 1), "pretrain"),
                                                   (None, "finetune")])
def test_the_greedy_relaxation_drops_the_least_important_job(priority, dropped):
    from planner.team import _solve
    from planner.team._milp import Groups, build, group_rank

    options, groups = _two_overlapping(), Groups.of(None, 2)
    R, _ = build(options, groups, [QuotaRule(gpus=96, cloud="aws")], {}, EPOCH)
    slacks, cost, binding = _solve._greedy_drops(options, R, groups,
                                                 group_rank(priority, groups))
    names = ["pretrain", "finetune"]
    assert [names[m["job"]] for _, m, v in slacks] == [dropped] and cost == 1000.0
    assert [b["kind"] for b in binding] == ["quota"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(instances())
def test_the_greedy_relaxation_keeps_jobs_that_fit_together(instance):
    """Whatever the greedy relaxation keeps has a schedule within every quota and budget
    costing at most what it says (brute force over the kept jobs)."""
    from planner.team import _solve
    from planner.team._milp import Groups, build

    n_jobs, rows, quotas, budgets = instance
    options, groups = _options(rows), Groups.of(None, n_jobs)
    R, _ = build(options, groups, quotas, budgets, EPOCH)
    got = _solve._greedy_drops(options, R, groups, np.zeros(n_jobs))
    if got is None:  # nothing dropped: every job fitted, so the whole plan is feasible
        assert brute_force(n_jobs, rows, quotas, budgets) is not None
        return
    slacks, cost, _ = got
    gone = {m["job"] for _, m, _v in slacks}
    kept = [j for j in range(n_jobs) if j not in gone]
    if not kept:
        assert cost == 0.0
        return
    renumber = {j: i for i, j in enumerate(kept)}
    kept_rows = [(renumber[r[0]], *r[1:]) for r in rows if r[0] in renumber]
    best = brute_force(len(kept), kept_rows, quotas, budgets)
    assert best is not None and best <= cost + 1e-6


def test_the_diagnosis_starts_no_programme_once_its_time_is_spent(monkeypatch):
    """HiGHS overruns its time limit (its presolve): each relaxation programme still got at
    least a second, so a 60 s limit gave 63 s of diagnosis after the 23 s solve."""
    from planner.team import _solve

    real, clock, calls = _solve.run_milp, [0.0], []

    def slow(*args, **kwargs):
        calls.append(kwargs["time_limit_s"])
        result = real(*args, **kwargs)
        clock[0] += 2 * kwargs["time_limit_s"]  # every solve takes twice its limit
        return result

    monkeypatch.setattr(_solve, "run_milp", slow)
    monkeypatch.setattr(_solve.time, "perf_counter", lambda: clock[0])
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(_two_overlapping(), job_names=["pretrain", "finetune"], epoch=EPOCH,
              quotas=[QuotaRule(gpus=96, cloud="aws", region="us-east-1")], time_limit_s=10)
    assert len(calls) == 2  # the allocation, then one relaxation: its overrun spent the rest
    assert "maybe not the cheapest" in str(err.value)


def test_ctrl_c_during_a_solve_stops_the_command_at_once(monkeypatch):
    """HiGHS never returns to Python mid-solve: a Ctrl-C waited for the solve to end (20 s
    and more on a large team plan). A stand-in that, like HiGHS, releases the GIL and never
    checks for signals (hashing 3 GiB, ~2 s) is interrupted within a fraction of that."""
    import hashlib
    import os
    import signal
    import threading
    import time

    import planner.team._milp as milp_module

    zeros = bytes(3 << 30)  # the zero page: no real memory

    def deaf_solve(*args, **kwargs):
        hashlib.sha256(zeros).digest()  # one C call: signals are only seen after it
        raise AssertionError("the solve was not interrupted")

    monkeypatch.setattr(milp_module, "solve_milp", deaf_solve)
    timer = threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGINT))
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        solve(_two_overlapping(), job_names=["a", "b"], epoch=EPOCH)
    waited = time.perf_counter() - started
    timer.cancel()
    assert waited < 1.0, f"Ctrl-C took effect after {waited:.2f} s"


def test_infeasible_budget_names_the_period_and_the_missing_dollars():
    opts = _two_overlapping(gpus=8, cost=30000.0)
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(opts, job_names=["a", "b"], epoch=EPOCH, budgets={"2027Q1": 40000})
    msg = str(err.value)
    assert "binding: budget 2027Q1" in msg
    assert "+$20,000 in 2027Q1 (budget $40,000 → $60,000)" in msg


def test_dropping_every_job_is_not_offered_as_a_relaxation():
    """A one-job plan over its budget was told "or drop job 'a', then the schedule costs $0":
    no schedule at all (review, 2026-12-07)."""
    opts = Options(job=np.array([0]), cost_usd=np.array([2402.0]), gpus=np.array([8.0]),
                   start_hours=np.array([0.0]), end_hours=np.array([400.0]),
                   scope=(SCOPES[0],))
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(opts, job_names=["a"], epoch=EPOCH, budgets={"2027Q1": 1000})
    assert "drop job" not in str(err.value), str(err.value)
    assert [r["relax"] for r in err.value.relaxations] == ["budgets"]
    assert "+$1,402 in 2027Q1 (budget $1,000 → $2,402)" in str(err.value)


def test_low_priority_job_is_the_one_to_drop():
    with pytest.raises(AllocationInfeasibleError) as err:
        solve(_two_overlapping(), job_names=["important", "nice-to-have"], epoch=EPOCH,
              priority=[5, 0], quotas=[QuotaRule(gpus=64, cloud="aws")])
    drop = [r for r in err.value.relaxations if r["relax"] == "jobs"][0]
    assert drop["changes"] == [{"kind": "drop_job", "job": "nice-to-have"}]


def test_month_specific_quota_replaces_the_general_one_in_that_month():
    quotas = [QuotaRule(gpus=64, cloud="aws"), QuotaRule(gpus=128, cloud="aws",
                                                         month="2027-03")]
    sol = solve(_two_overlapping(), job_names=["a", "b"], epoch=EPOCH, quotas=quotas)
    assert sol.choice == (0, 1)


def test_equal_cost_prefers_the_earlier_start():
    opts = Options(job=np.array([0, 0]), cost_usd=np.array([100.0, 100.0]),
                   gpus=np.array([8.0, 8.0]), start_hours=np.array([168.0, 0.0]),
                   end_hours=np.array([268.0, 100.0]), scope=(SCOPES[0], SCOPES[0]),
                   delay_days=np.array([7.0, 0.0]))
    assert solve(opts, job_names=["a"], epoch=EPOCH).choice == (1,)


def test_a_job_without_options_is_named():
    opts = _two_overlapping()
    opts = Options(job=np.array([0, 0]), cost_usd=opts.cost_usd, gpus=opts.gpus,
                   start_hours=opts.start_hours, end_hours=opts.end_hours, scope=opts.scope)
    with pytest.raises(Exception, match="job 'late-job': no plan finishes"):
        solve(opts, job_names=["a", "late-job"], epoch=EPOCH)
