"""The distribution of a run's calendar time, and the chance it finishes by a deadline.

One function for ``plan`` and the team allocator alike. A run's calendar time is

    C = B·X + K·L

- B: the failure-free calendar hours the model predicts (training time plus checkpoint writes,
  evaluation and operational losses; ``_goodput``);
- X ~ LogNormal(0, σ): the model's own error, σ² = σ_throughput² + σ_operations² (the same σ as
  the estimate's P10–P90, ``_estimate.range_sigma``);
- K ~ Poisson(λ), λ = rate · B: interruptions (hardware failures, and spot reclaims when spot),
  arriving while the run computes;
- L: hours lost per interruption (half a checkpoint interval, the restart, the reload).

P(C ≤ D) = Σ_k P(K = k) · Φ(ln((D − k·L)/B) / σ). For λ ≤ 30 the sum is exact over
k = 0 … λ + 8√λ + 8; above, K is replaced by its normal approximation on 49 points (relative
error of the probability below 1e-3 there). Φ uses the Abramowitz–Stegun 7.1.26 erf
(|error| < 1.5e-7), so neither scipy nor a Python loop per candidate is needed.
Quantiles invert the CDF by bisection (60 halvings), evaluating P only inside a certified
zone around the root (``quantile``): the same floats in about half the evaluations.
"""

from __future__ import annotations

import functools
import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

EXACT_POISSON_BELOW = 30.0
NORMAL_POINTS = 49  # the normal approximation of K: points on ±6 standard deviations


@functools.cache
def _normal_points():
    """(z, weight): NORMAL_POINTS equally spaced points on [-6, 6] with normal weights."""
    import numpy as np

    z = np.linspace(-6.0, 6.0, NORMAL_POINTS)
    w = np.exp(-0.5 * z**2)
    return z, w / w.sum()


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                                                                            + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def normal_cdf(z: np.ndarray) -> np.ndarray:
    import numpy as np

    return 0.5 * (1.0 + _erf(np.asarray(z, dtype=np.float64) / math.sqrt(2.0)))


def _lognormal_cdf(ratio: np.ndarray, sigma: np.ndarray) -> np.ndarray:
    """P(X ≤ ratio) for X ~ LogNormal(0, σ); a step at 1 when σ = 0. (Φ is computed only
    where it is used: elementwise, so the same figures as computing it everywhere.)"""
    import numpy as np

    ratio = np.asarray(ratio, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    ratio, sigma = np.broadcast_arrays(ratio, sigma)
    out = np.where(ratio >= 1.0, 1.0, 0.0)
    smooth = (sigma > 0) & (ratio > 0)
    out[sigma > 0] = 0.0
    if smooth.any():
        out[smooth] = normal_cdf(np.log(np.maximum(ratio[smooth], 1e-300)) / sigma[smooth])
    return out


class _Mixture:
    """P(C ≤ D) for fixed (B, L, λ = rate·B, σ), at any deadlines: the interruption counts'
    weights (exact Poisson terms, or the normal approximation's points) and the hours k·L they
    cost are computed once, so a quantile's many evaluations only redo the log-normal part.
    The operations are those of a direct sum, so every figure is the same."""

    def __init__(self, B, L, r, s) -> None:
        import numpy as np

        self.B, self.s = B, s
        lam = np.maximum(r * B, 0.0)
        small = lam <= EXACT_POISSON_BELOW
        # Terms needed: k ≤ λ + 8√λ + 8; candidates are grouped by that count (8 … 128) so
        # the many failure-only candidates (λ ≪ 1) are not summed as far as spot fleets.
        need = np.ceil(lam + 8 * np.sqrt(lam) + 8)
        self.parts = []
        for kmax in (8, 16, 32, 64, 128):
            sel = small & (need <= kmax) & (need > kmax // 2 if kmax > 8 else True)
            if not sel.any():
                continue
            k = np.arange(kmax + 1, dtype=np.float64)
            log_fact = np.concatenate([[0.0], np.cumsum(np.log(k[1:]))])
            ls = lam[sel][:, None]
            with np.errstate(divide="ignore", invalid="ignore"):
                logp = np.where(ls > 0, -ls + k * np.log(np.maximum(ls, 1e-300)) - log_fact,
                                np.where(k == 0, 0.0, -np.inf))
            self.parts.append((np.flatnonzero(sel), k * L[sel][:, None], np.exp(logp)))
        big = ~small
        if big.any():
            lb = lam[big][:, None]
            normal_z, normal_w = _normal_points()
            kk = np.maximum(lb + normal_z * np.sqrt(lb), 0.0)
            self.parts.append((np.flatnonzero(big), kk * L[big][:, None], normal_w))
        self.part = np.zeros(len(B), dtype=np.int64)
        self.pos = np.zeros(len(B), dtype=np.int64)
        for p, (idx, _, _) in enumerate(self.parts):
            self.part[idx], self.pos[idx] = p, np.arange(len(idx))

    def cdf(self, D, rows=None):
        """P(C ≤ D) for candidates ``rows`` (default all), ``D`` one deadline per row."""
        import numpy as np

        rows = np.arange(len(self.B)) if rows is None else np.asarray(rows)
        D = np.broadcast_to(np.asarray(D, dtype=np.float64), rows.shape)
        out = np.zeros(rows.shape)
        part = self.part[rows]
        for p, (idx, kL, w) in enumerate(self.parts):
            m = np.flatnonzero(part == p)
            if not m.size:
                continue
            pos = self.pos[rows[m]]
            sub = idx[pos]
            slack = (D[m][:, None] - kL[pos]) / self.B[sub][:, None]
            weights = w[pos] if w.ndim == 2 else w
            out[m] = np.sum(weights * _lognormal_cdf(slack, self.s[sub][:, None]), axis=1)
        return np.clip(out, 0.0, 1.0)


def normal_quantile(q: float) -> float:
    """The largest z (to bisection precision) with Φ(z) < q for the model's own Φ — the
    A&S approximation ``probability_within`` uses, whose error a bound built on this must
    allow for — and inf for q ≥ 1. Bisection on a scalar, kept per probability level: it is
    ``probability_within`` at base 1, no interruptions and σ = 1 (the same figures: one
    Poisson term of weight 1), without building that call's mixture 80 times."""
    if q >= 1.0:
        return math.inf
    if q not in _QUANTILES:
        import numpy as np

        lo, hi, one = -40.0, 40.0, np.ones(1)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            p = float(_lognormal_cdf(np.array([math.exp(mid)]), one)[0])
            lo, hi = (mid, hi) if p < q else (lo, mid)
        _QUANTILES[q] = lo
    return _QUANTILES[q]


_QUANTILES: dict[float, float] = {}  # a few probability levels per process


def probability_within(deadline_hours, *, base_hours, loss_hours, rate, sigma) -> np.ndarray:
    """P(calendar time ≤ deadline) for each candidate; arguments broadcast."""
    import numpy as np

    D, B, L, r, s = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (
        deadline_hours, base_hours, loss_hours, rate, sigma)))
    shape = D.shape
    D, B, L, r, s = (x.ravel() for x in (D, B, L, r, s))
    return _Mixture(B, L, r, s).cdf(D).reshape(shape)


def quantile(q, *, base_hours, loss_hours, rate, sigma) -> np.ndarray:
    """The q-quantile of calendar time for each candidate (hours); ``q`` may vary per
    candidate (every argument broadcasts).

    The answer is the bisection's: 60 halvings of [0, hi₀] keeping P(lo) < q ≤ P(hi), hi₀ the
    model's 6σ tail plus 12 standard deviations of interruptions. The halvings are replayed
    exactly, but P is computed only where the answer is not already known: a few secant
    steps on ln x find the crossing x*, and two evaluations certify a zone [a, b] = x*(1 ∓ δ)
    with P(a) < q − 2η and P(b) ≥ q + 2η. P is a monotone function of the deadline (Φ's
    A&S approximation is monotone: its derivative e^(−x²)·(2x·S(t) + p·t²·S′(t)) ≥ 1.13·e^(−x²)
    > 0) computed with rounding noise below η = 1e-12, so every midpoint ≤ a is below q and
    every one ≥ b is not; only the ≈ 20 halvings inside the zone (and every halving of a
    candidate whose zone could not be certified) evaluate P, and only for the candidates
    inside their zone. Same floats as plain bisection, in about half the evaluations.
    (Answering several halvings per call from a tree of midpoints costs more than it saves.)"""
    import numpy as np

    args = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64)
                                 for x in (q, base_hours, loss_hours, rate, sigma)))
    shape = args[0].shape
    q, B, L, r, s = (x.ravel() for x in args)
    lam = r * B
    lo = np.zeros(B.shape)
    # an upper bound: the model's 6σ tail plus 12 standard deviations of interruptions
    hi = B * np.exp(6 * s) + (lam + 12 * np.sqrt(lam) + 12) * L + 1e-9

    mixture = _Mixture(B, L, r, s)

    def p(idx, x):
        return mixture.cdf(x, idx)

    a, b = _certified_zone(q, B, L, r, s, hi, p)
    for _ in range(BISECTIONS):
        mid = 0.5 * (lo + hi)
        below = mid <= a
        need = np.flatnonzero((mid > a) & (mid < b))
        if need.size:
            below[need] = p(need, mid[need]) < q[need]
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return hi.reshape(shape)


def _inv_cdf(p: float) -> float:
    """The standard normal quantile as ``statistics.NormalDist().inv_cdf`` gives it (the same
    floats): its C function when the interpreter has it — importing ``statistics`` for it
    imports decimal, fractions and random too (4 ms of a 0.3 s plan)."""
    try:
        from _statistics import _normal_dist_inv_cdf
    except ImportError:  # an interpreter without the C helper: statistics' own code
        from statistics import NormalDist

        return NormalDist().inv_cdf(p)
    return _normal_dist_inv_cdf(p, 0.0, 1.0)


BISECTIONS = 60
ZONE_NOISE = 1e-12  # η: bound on the rounding noise of a computed probability (≈ 1e-14)
ZONE_WIDTHS = (1e-11, 1e-8, 1e-5)  # δ tried in turn (a wider zone costs more halvings)
SECANT_STEPS = 12


def _certified_zone(q, B, L, r, s, hi, p):
    """(a, b) per candidate: below a P < q, above b P ≥ q (module docstring of ``quantile``);
    (-inf, inf) where no zone could be certified (then every halving evaluates P)."""
    import numpy as np

    n = len(q)
    a, b = np.full(n, -np.inf), np.full(n, np.inf)
    if n == 0:
        return a, b
    # start: the log-normal quantile plus the mean interruptions, and a point 0.1% above
    levels, which = np.unique(q, return_inverse=True)
    z = np.array([_inv_cdf(min(max(float(v), 1e-12), 1 - 1e-12)) for v in levels])[which]
    x0 = np.minimum(B * np.exp(s * z) + r * B * L, hi)
    y0, y1 = np.log(np.maximum(x0, 1e-300)), np.log(np.maximum(x0 * 1.001, 1e-300))
    idx = np.arange(n)
    f0 = p(idx, np.exp(y0)) - q
    f1 = p(idx, np.exp(y1)) - q
    y = y1.copy()
    active = np.ones(n, dtype=bool)
    for _ in range(SECANT_STEPS):
        act = np.flatnonzero(active)
        if not act.size:
            break
        df = f1[act] - f0[act]
        ok = df != 0
        step = np.where(ok, -f1[act] * (y1[act] - y0[act]) / np.where(ok, df, 1.0), 0.0)
        step = np.clip(step, -2.0, 2.0)  # a flat stretch must not throw the step far away
        y0[act], f0[act] = y1[act], f1[act]
        y1[act] = y1[act] + step
        y[act] = y1[act]
        done = ~ok | (np.abs(step) < 1e-13) | ~np.isfinite(y1[act])
        active[act[done]] = False
        live = act[~done]
        if live.size:
            f1[live] = p(live, np.exp(y1[live])) - q[live]
    x = np.exp(y)
    todo = np.flatnonzero(np.isfinite(x) & (x > 0))
    for delta in ZONE_WIDTHS:
        if not todo.size:
            break
        lo_x, hi_x = x[todo] * (1 - delta), x[todo] * (1 + delta)
        both = p(np.r_[todo, todo], np.r_[lo_x, hi_x])
        good = (both[:todo.size] < q[todo] - 2 * ZONE_NOISE) & \
            (both[todo.size:] >= q[todo] + 2 * ZONE_NOISE)
        a[todo[good]], b[todo[good]] = lo_x[good], hi_x[good]
        todo = todo[~good]
    return a, b
