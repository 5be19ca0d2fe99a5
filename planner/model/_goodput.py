"""Goodput: the share of calendar time spent training rather than failing and recovering.

Failures (hardware faults, and spot interruptions when given) arrive as a Poisson process with
job rate λ = λ_gpu·GPUs + λ_spot·nodes, so the job's mean time between failures is M = 1/λ.
Checkpoints take δ = state bytes / (write bandwidth per node · nodes). Young's optimal interval
(Young 1974; Daly 2006, first order) τ = √(2·δ·M), capped at the run length. Per unit of useful
time the run loses δ/τ to checkpointing and, per failure, half an interval of lost work plus
the restart R and the checkpoint read δ_r. Evaluation (share e of calendar time) and other
operational losses (share o: loss-spike rollbacks, maintenance, slow-node swaps, data stalls),
from published effective-training-time reports, come off the top:

    overhead = δ/τ + (τ/2 + R + δ_r)/M,     goodput = (1 − e − o) / (1 + overhead)

The constants' sources are in ``_fitted`` (derived by benchmarks/fit_operations.py).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from catalog import record

from ._assumptions import Assumptions
from ._probability import probability_within, quantile
from ._shown import format_hours

if TYPE_CHECKING:
    import numpy as np


@record
class Goodput:
    fraction: float
    mtbf_hours: float
    checkpoint_interval_hours: float
    checkpoint_write_hours: float
    restart_hours: float
    expected_interruptions: float
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict:
        return {"fraction": self.fraction, "mtbf_hours": self.mtbf_hours,
                "checkpoint_interval_hours": self.checkpoint_interval_hours,
                "checkpoint_write_hours": self.checkpoint_write_hours,
                "restart_hours": self.restart_hours,
                "expected_interruptions": self.expected_interruptions}


def goodput(*, ideal_hours: float, gpus: int, nodes: int, checkpoint_bytes: float,
            A: Assumptions, interruption_rate_per_node_hour: float = 0.0,
            restart_minutes: float | None = None,
            restart_constant: str = "restart_minutes") -> Goodput:
    """``restart_minutes`` (default ``A.restart_minutes``) is named ``restart_constant`` in
    the note: a spot plan restarts after ``spot_restart_minutes``, and the note named the
    other constant, which --assume then changed to no effect."""
    rate = A.failure_rate_per_gpu_hour * gpus + interruption_rate_per_node_hour * nodes
    write_h = checkpoint_bytes / (A.checkpoint_write_gb_per_s_per_node * 1e9 * nodes) / 3600
    read_h = checkpoint_bytes / (A.checkpoint_read_gb_per_s_per_node * 1e9 * nodes) / 3600
    restart_h = (A.restart_minutes if restart_minutes is None else restart_minutes) / 60
    kept = 1.0 - A.evaluation_fraction - A.operational_loss_fraction
    ops_note = (f"evaluation {A.evaluation_fraction:.1%} (evaluation_fraction) and operational "
                f"losses {A.operational_loss_fraction:.1%} (operational_loss_fraction) of "
                "calendar time, from published effective-training-time reports")
    if rate <= 0 or ideal_hours <= 0:
        return Goodput(fraction=kept, mtbf_hours=math.inf, checkpoint_interval_hours=ideal_hours,
                       checkpoint_write_hours=write_h, restart_hours=restart_h,
                       expected_interruptions=0.0, notes=(ops_note,))
    mtbf = 1 / rate
    tau = min(math.sqrt(2 * write_h * mtbf), max(ideal_hours, write_h))
    overhead = write_h / tau + (tau / 2 + restart_h + read_h) / mtbf
    fraction = kept / (1 + overhead)
    wall = ideal_hours / fraction
    notes = (f"goodput {fraction:.3f}: training time × {1 + overhead:.3f} for failures and "
             f"checkpoints — MTBF {mtbf:,.1f} h ({A.failure_rate_per_gpu_hour:.2e} failures per "
             "GPU-hour, failure_rate_per_gpu_hour"
             + (f"; spot {interruption_rate_per_node_hour:.2g}/node-h" if
                interruption_rate_per_node_hour else "")
             # in the unit each reads in: a tiny run's said "checkpoint 0 s every 0.00 h"
             + f"), checkpoint {format_hours(write_h)} every {format_hours(tau)} (Young/Daly; "
             f"checkpoint_write_gb_per_s_per_node), restart {restart_h * 60:.0f} min "
             f"({restart_constant})", ops_note)
    return Goodput(fraction=fraction, mtbf_hours=mtbf, checkpoint_interval_hours=tau,
                   checkpoint_write_hours=write_h, restart_hours=restart_h,
                   expected_interruptions=wall / mtbf, notes=notes)


def goodput_arrays(*, ideal_hours, gpus, nodes, checkpoint_bytes: float, A: Assumptions,
                   interruption_rate_per_node_hour, restart_minutes) -> dict[str, np.ndarray]:
    """The same formulas as ``goodput``, vectorised over candidates."""
    return goodput_over(goodput_fixed(
        gpus=gpus, nodes=nodes, checkpoint_bytes=checkpoint_bytes, A=A,
        interruption_rate_per_node_hour=interruption_rate_per_node_hour,
        restart_minutes=restart_minutes), ideal_hours=ideal_hours, A=A)


def goodput_fixed(*, gpus, nodes, checkpoint_bytes: float, A: Assumptions,
                  interruption_rate_per_node_hour, restart_minutes) -> dict[str, np.ndarray]:
    """``goodput_arrays``' figures that do not depend on the training hours: kept by a plan's
    layout for every token count (``goodput_over`` finishes them; the same floats)."""
    import numpy as np

    nodes = np.asarray(nodes, dtype=np.float64)
    rate = A.failure_rate_per_gpu_hour * np.asarray(gpus, dtype=np.float64) + \
        np.asarray(interruption_rate_per_node_hour, dtype=np.float64) * nodes
    write_h = checkpoint_bytes / (A.checkpoint_write_gb_per_s_per_node * 1e9 * nodes) / 3600
    read_h = checkpoint_bytes / (A.checkpoint_read_gb_per_s_per_node * 1e9 * nodes) / 3600
    restart_h = np.asarray(restart_minutes, dtype=np.float64) / 60
    mtbf = 1 / np.maximum(rate, 1e-300)
    return {"rate": rate, "write_h": write_h, "read_h": read_h, "restart_h": restart_h,
            "mtbf": mtbf, "young": np.sqrt(2 * write_h * mtbf)}


def goodput_over(fixed: dict, *, ideal_hours, A: Assumptions) -> dict[str, np.ndarray]:
    """``goodput_arrays`` from ``goodput_fixed``'s figures and the training hours."""
    import numpy as np

    ideal = np.asarray(ideal_hours, dtype=np.float64)
    write_h, mtbf = fixed["write_h"], fixed["mtbf"]
    tau = np.minimum(fixed["young"], np.maximum(ideal, write_h))
    loss = tau / 2 + fixed["restart_h"] + fixed["read_h"]  # expected hours lost per interruption
    written = write_h / tau
    overhead = written + loss / mtbf
    kept = 1.0 - A.evaluation_fraction - A.operational_loss_fraction
    fraction = kept / (1 + overhead)
    wall = ideal / fraction
    # The failure-free calendar time: training, checkpoint writes, evaluation and other losses.
    return {"fraction": fraction, "wall_hours": wall, "mtbf_hours": mtbf, "rate": fixed["rate"],
            "tau_hours": tau, "loss_hours": loss,
            "checkpointed_hours": ideal * (1 + written) / kept}


def calendar_range(*, ideal_hours: float, gpus: int, nodes: int, checkpoint_bytes: float,
                   A: Assumptions, interruption_rate_per_node_hour: float,
                   restart_minutes: float, sigma: float) -> tuple[float, float, float, float]:
    """P10 and P90 of one run's calendar time (``_probability.quantile`` over goodput's
    failure-free hours, loss per interruption and rate), then that loss (hours) and rate (per
    hour), which ``outside_range`` explains the range with."""
    import numpy as np

    g = goodput_arrays(ideal_hours=np.array([ideal_hours]), gpus=gpus, nodes=nodes,
                       checkpoint_bytes=checkpoint_bytes, A=A,
                       interruption_rate_per_node_hour=interruption_rate_per_node_hour,
                       restart_minutes=restart_minutes)
    levels = np.array([0.1, 0.9])
    kw = {"base_hours": np.repeat(g["checkpointed_hours"], 2),
          "loss_hours": np.repeat(g["loss_hours"], 2), "rate": np.repeat(g["rate"], 2),
          "sigma": sigma}
    q = quantile(levels, **kw)
    # quantile halves [0, B·e^(6σ) + …] 60 times: a step of B·e^(6σ)/2^60, finer than any
    # answer up to σ ≈ 4 (the assumptions' bounds), coarser than P10 = B·e^(−1.28σ) beyond
    # σ ≈ 5, where P10 and P90 both came back as the first step (σ 9.4: 2,257,731,446 h
    # both). 0.1% below the answer the probability must be under its level; where not, the
    # quantiles are found again by halving in log(hours), which resolves any σ.
    below = probability_within(q * (1 - 1e-3), **kw)
    if sigma > 0 and np.any(below >= levels):
        q = _log_quantiles(levels, q, **kw)
    return (float(q[0]), float(q[1]), float(np.ravel(g["loss_hours"])[0]),
            float(np.ravel(g["rate"])[0]))


def _log_quantiles(levels, upper, *, base_hours, loss_hours, rate, sigma):
    """The ``levels`` quantiles of calendar time by bisection on log(hours) between
    B·e^(−8σ) (below it the log-normal part alone is under Φ(−8), 6e-16) and ``upper`` (an
    answer of ``quantile``: its probability is at least the level)."""
    import numpy as np

    lo = np.log(np.maximum(base_hours, 1e-300)) - 8 * sigma
    hi = np.log(np.maximum(upper, 1e-300))
    kw = {"base_hours": base_hours, "loss_hours": loss_hours, "rate": rate, "sigma": sigma}
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        below = probability_within(np.exp(mid), **kw) < levels
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.exp(hi)


def outside_range(expected: float, p10: float, p90: float, *, loss_hours: float,
                  rate: float) -> str | None:
    """Why the expected calendar time (goodput's mean, interruptions included) lies outside
    the P10–P90 of the calendar-time distribution (``planner.model._probability``); None
    inside. `estimate` and `plan` warn with it alike."""
    if p10 <= expected <= p90:
        return None
    if expected > p90:  # a rare interruption that costs more than the run: in the mean only
        return (f"range: the expected {expected:,.2f} h is above P90 {p90:,.2f} h: an "
                f"interruption is unlikely in so short a run ({rate:.2g} per hour), but each "
                f"costs {loss_hours:,.2f} h (restart, reload, lost work); the expected time "
                "and cost count that chance, the P10–P90 hardly see it")
    return (f"range: the expected {expected:,.1f} h is below P10 {p10:,.1f} h: interruptions "
            f"come every {60 / rate:,.1f} min, so often that checkpointing and restarts "
            "dominate and the goodput model (Young/Daly) no longer holds; check "
            "`failure_rate_per_gpu_hour` and the restart minutes")


GOODPUT_WARNING = 0.5  # warn when checkpoints, failures and restarts take most of the time


def goodput_warning(gp: Goodput, *, gpus: int, ideal_hours: float) -> str | None:
    """What loses most of the calendar time when goodput is below GOODPUT_WARNING: checkpoint
    writes (a run about as short as one write; it was blamed on interruptions, with 0.01
    expected) or interruptions (restart and lost work, every MTBF); None above it."""
    if gp.fraction >= GOODPUT_WARNING:
        return None
    writing = gp.checkpoint_write_hours / gp.checkpoint_interval_hours
    interrupted = (gp.checkpoint_interval_hours / 2 + gp.restart_hours) / gp.mtbf_hours
    if writing > interrupted:
        return (f"goodput {gp.fraction:.0%}: writing checkpoints adds {writing:.0%} to the "
                f"training time (one of {format_hours(gp.checkpoint_write_hours)} every "
                f"{format_hours(gp.checkpoint_interval_hours)})"
                + ("; the training itself is hardly longer than one write"
                   if ideal_hours < 2 * gp.checkpoint_write_hours else "")
                + "; faster checkpoint storage (`checkpoint_write_gb_per_s_per_node`) would "
                "lose less")
    return (f"goodput {gp.fraction:.0%}: on {gpus:,} GPUs an interruption comes every "
            f"{format_hours(gp.mtbf_hours)} and each costs the restart "
            f"({format_hours(gp.restart_hours)}) and the work since the last checkpoint, so "
            "most of the calendar time is lost; fewer GPUs would lose less (set "
            "`restart_minutes` if your restarts are faster)")
