"""The deadline probability without scipy (issue #19): the interruption sum against scipy's
Poisson distribution and normal CDF on a grid of values, the quantile against plain bisection
bit for bit, and plan() importing no scipy at all."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.model import probability_within, quantile

scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")


def _reference(D, B, L, r, s):
    """P(B·X + K·L ≤ D), K ~ Poisson(r·B), X ~ LogNormal(0, s), summed with scipy."""
    lam = r * B
    k = np.arange(0, int(lam + 40 * math.sqrt(lam) + 60))
    slack = (D - k * L) / B
    with np.errstate(divide="ignore"):
        z = np.where(slack > 0, np.log(np.maximum(slack, 1e-300)) / s, -np.inf)
    return float(np.sum(scipy_stats.poisson.pmf(k, lam) * scipy_special.ndtr(z)))


GRID = [(D, B, L, r, s)
        for B in (10.0, 200.0, 3000.0)
        for ratio in (0.7, 1.0, 1.3, 2.0)
        for D in (B * ratio,)
        for L in (0.5, 4.0)
        for r in (0.0, 1e-4, 3e-3, 0.02)
        for s in (0.05, 0.2)]


def _largest_difference(rows) -> float:
    """max |probability_within − the scipy reference| over (hours, base, loss, rate, σ) rows."""
    cols = np.array(rows, dtype=float).T
    got = probability_within(cols[0], base_hours=cols[1], loss_hours=cols[2], rate=cols[3],
                             sigma=cols[4])
    want = np.array([_reference(*g) for g in rows])
    return float(np.max(np.abs(got - want)))


def test_the_exact_interruption_sum_matches_scipy():
    """λ ≤ 30: the Poisson terms are exact; the only error is A&S 7.1.26's (< 1.5e-7 in erf)."""
    rows = [g for g in GRID if g[3] * g[1] <= 30]
    assert len(rows) > 100
    assert _largest_difference(rows) < 2e-7


def test_the_normal_approximation_for_many_interruptions_matches_scipy():
    """λ > 30: K is replaced by a normal on 49 points; within 2e-3 of the exact sum."""
    rows = [g for g in GRID if g[3] * g[1] > 30]
    assert rows
    assert _largest_difference(rows) < 2e-3


def test_the_probability_of_one_candidate_does_not_depend_on_the_others():
    rng = np.random.default_rng(7)
    n = 400
    B = rng.uniform(5, 5000, n)
    L = rng.uniform(0.1, 8, n)
    r = np.where(rng.random(n) < 0.5, rng.uniform(0, 1e-3, n), rng.uniform(0.01, 1.0, n))
    s = rng.uniform(0.0, 0.4, n)
    D = B * rng.uniform(0.5, 3, n)
    together = probability_within(D, base_hours=B, loss_hours=L, rate=r, sigma=s)
    alone = [float(probability_within(D[i], base_hours=B[i], loss_hours=L[i], rate=r[i],
                                      sigma=s[i])) for i in range(0, n, 7)]
    assert together[::7].tolist() == alone


def _bisection(q, B, L, r, s):
    """The quantile as it was computed before issue #19: 60 plain halvings."""
    lam = r * B
    lo = np.zeros(B.shape)
    hi = B * np.exp(6 * s) + (lam + 12 * np.sqrt(lam) + 12) * L + 1e-9
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = probability_within(mid, base_hours=B, loss_hours=L, rate=r, sigma=s) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return hi


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_quantile_is_the_bisections_to_the_last_bit(seed):
    rng = np.random.default_rng(seed)
    n = 300
    B = rng.uniform(1, 8000, n)
    L = rng.uniform(0.05, 10, n)
    r = np.select([rng.random(n) < 0.3, rng.random(n) < 0.5],
                  [np.zeros(n), rng.uniform(1e-6, 1e-3, n)], rng.uniform(0.005, 2.0, n))
    s = np.where(rng.random(n) < 0.05, 0.0, rng.uniform(0.01, 0.5, n))
    for q in (0.1, 0.5, 0.9):
        assert np.array_equal(quantile(q, base_hours=B, loss_hours=L, rate=r, sigma=s),
                              _bisection(q, B, L, r, s))
    both = quantile(np.repeat([0.1, 0.9], n), base_hours=np.tile(B, 2),
                    loss_hours=np.tile(L, 2), rate=np.tile(r, 2), sigma=np.tile(s, 2))
    assert np.array_equal(both[:n], _bisection(0.1, B, L, r, s))
    assert np.array_equal(both[n:], _bisection(0.9, B, L, r, s))


def test_a_plan_imports_no_scipy_no_statistics_and_no_numpy_ma():
    """statistics (for one normal quantile) imported decimal, fractions and random: 4 ms;
    np.unique imported numpy.ma (20–23 ms of every plan) to check for a masked array."""
    code = ("import sys, catalog\n"
            "from planner import Constraints, WorkloadSpec, build_workload, plan\n"
            "w = build_workload(WorkloadSpec(model='gpt2-xl', tokens='20B'))\n"
            "r = plan(w, catalog.load_catalog('packaged'), Constraints(deadline_hours=72,"
            " max_gpus=64))\n"
            "assert r.recommendation.wall_clock_hours_p90 > 0\n"
            "print(','.join(m for m in sys.modules if m.split('.')[0] in "
            "('scipy', 'statistics', 'fractions', 'decimal') or m == 'numpy.ma'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


@pytest.mark.parametrize("without_c", [False, True])
def test_the_quantiles_start_is_statistics_normal_quantile_to_the_bit(monkeypatch, without_c):
    from statistics import NormalDist

    from planner.model import _probability

    if without_c:  # an interpreter without the C helper falls back to statistics itself
        monkeypatch.setitem(sys.modules, "_statistics", None)
    for p in (1e-12, 1e-9, 0.001, 0.1, 0.25, 0.5, 0.5 + 1e-9, 0.9, 0.975, 1 - 1e-12):
        assert _probability._inv_cdf(p) == NormalDist().inv_cdf(p)


@given(st.lists(st.integers(-5, 5) | st.floats(-1e3, 1e3), max_size=40))
def test_distinct_gives_what_np_unique_gives(values):
    from planner.model import distinct

    got, want = distinct(np.array(values)), np.unique(np.array(values))
    assert got.dtype == want.dtype and np.array_equal(got, want)
