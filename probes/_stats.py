"""Percentiles and spreads (torch-free: the planner reads reports with them too).

Percentiles use linear interpolation between order statistics (numpy's default "linear",
Hyndman & Fan definition 7), so p50 is the usual median and p0/p100 the extremes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from probes._schema import Spread


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) of ``values``, interpolated linearly."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in 0..100, got {q}")
    ordered = sorted(float(v) for v in values)
    pos = (len(ordered) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median(values: Sequence[float]) -> float:
    return percentile(values, 50)


def spread(values: Sequence[float], ranks: Sequence[int] | None = None) -> Spread:
    """The Spread of ``values``; ``ranks[i]`` names who measured ``values[i]``."""
    if ranks is not None and len(ranks) != len(values):
        raise ValueError("spread: one rank per value")
    low = min(range(len(values)), key=lambda i: values[i])
    # clamp the interpolated percentiles into [min, max] against float rounding
    lo, hi = float(min(values)), float(max(values))
    p10, p50, p90 = (min(hi, max(lo, percentile(values, q))) for q in (10, 50, 90))
    return Spread(n=len(values), min=lo, p10=p10, p50=p50, p90=p90, max=hi,
                  min_rank=None if ranks is None else int(ranks[low]))
