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
Quantiles invert the CDF by bisection (vectorised, 60 halvings).
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
    """P(X ≤ ratio) for X ~ LogNormal(0, σ); a step at 1 when σ = 0."""
    import numpy as np

    ratio = np.asarray(ratio, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(ratio > 0, np.log(np.maximum(ratio, 1e-300)), -np.inf) / \
            np.where(sigma > 0, sigma, 1.0)
    stepped = np.where(ratio >= 1.0, 1.0, 0.0)
    return np.where(sigma > 0, np.where(ratio > 0, normal_cdf(z), 0.0), stepped)


def probability_within(deadline_hours, *, base_hours, loss_hours, rate, sigma) -> np.ndarray:
    """P(calendar time ≤ deadline) for each candidate; arguments broadcast."""
    import numpy as np

    D, B, L, r, s = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (
        deadline_hours, base_hours, loss_hours, rate, sigma)))
    lam = np.maximum(r * B, 0.0)
    out = np.zeros(D.shape)
    small = lam <= EXACT_POISSON_BELOW
    # Terms needed: k ≤ λ + 8√λ + 8; candidates are grouped by that count (8, 16, 32, 64, 128)
    # so the many failure-only candidates (λ ≪ 1) are not summed as far as spot fleets.
    need = np.ceil(lam + 8 * np.sqrt(lam) + 8)
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
        slack = (D[sel][:, None] - k * L[sel][:, None]) / B[sel][:, None]
        out[sel] = np.sum(np.exp(logp) * _lognormal_cdf(slack, s[sel][:, None]), axis=1)
    big = ~small
    if big.any():
        lb = lam[big][:, None]
        normal_z, normal_w = _normal_points()
        kk = np.maximum(lb + normal_z * np.sqrt(lb), 0.0)
        slack = (D[big][:, None] - kk * L[big][:, None]) / B[big][:, None]
        out[big] = np.sum(normal_w * _lognormal_cdf(slack, s[big][:, None]), axis=1)
    return np.clip(out, 0.0, 1.0)


def quantile(q: float, *, base_hours, loss_hours, rate, sigma) -> np.ndarray:
    """The q-quantile of calendar time for each candidate (hours)."""
    import numpy as np

    B, L, r, s = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (
        base_hours, loss_hours, rate, sigma)))
    lam = r * B
    lo = np.zeros(B.shape)
    # an upper bound: the model's 6σ tail plus 12 standard deviations of interruptions
    hi = B * np.exp(6 * s) + (lam + 12 * np.sqrt(lam) + 12) * L + 1e-9
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        below = probability_within(mid, base_hours=B, loss_hours=L, rate=r, sigma=s) < q
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return hi
