"""What a report says about its GPUs themselves: facts no CUDA GPU has (an edited report), and
the state they were measured in — throttled by heat, a hardware slowdown or a lowered power
limit — in which their figures describe that node's trouble, not the GPU model (torch-free;
probes._figures refuses every figure of such a report with these reasons).

The evidence is what the probes record (docs/probes.md, "Report schema"): rank 0's GPU before
the run (``environment.idle``), every rank's GPU during the last matmul warm-up window
(``ranks[].under_load``; rank 0's is also ``matmul.under_load``), the GPU's maximum SM clock
(``environment.sm_clock_max_mhz``), and the warm-up's first and last windows
(``matmul.burst_tflops``, ``sustained_tflops``).
"""

from __future__ import annotations

from probes._consistency import EDITED as _EDITED
from probes._schema import Environment, GpuTelemetry, ProbeReport
from probes._smi import clock_event_words

# What a CUDA GPU has: the catalog's smallest has several GiB of memory (no GPU the planner
# calibrates has under 1 GiB), and compute capabilities run from 3.0 (Kepler, the oldest any
# CUDA 11+ torch build targets) to 12.x (Blackwell); 15.0 leaves room for the next few.
MIN_GPU_MEMORY_BYTES = 2**30
COMPUTE_CAPABILITY_RANGE = (3.0, 15.0)

# nvml.h's clock event (formerly "throttle") reasons that mean the GPU is slowed by trouble:
# 0x8 HW slowdown (clocks cut by a factor of 2 or more: over-temperature, the power supply's
# brake, a power spike), 0x20 SW thermal slowdown (the GPU or its memory above its maximum
# operating temperature), 0x40 HW thermal slowdown, 0x80 HW power brake (the system's
# external brake signal). 0x4, the software power cap, is left alone: a healthy GPU at its
# power limit under matmul shows it (the H200 of docs/probes.md: 0x4 at 693 of 700 W).
THROTTLE_REASONS = 0x8 | 0x20 | 0x40 | 0x80
# Under matmul load a healthy GPU holds its clock well above half its maximum: the power-bound
# H200 of docs/probes.md ran at 1,380 of 1,980 MHz (0.70). A HW slowdown halves the clock or
# more, so an SM clock under half the maximum is a slowed GPU whatever its reasons say (a
# driver that does not report them, clocks locked low).
MIN_LOAD_CLOCK_FRACTION = 0.5
# An enforced power limit under 80% of the GPU's default is a cap someone set (nvidia-smi -pl,
# a power budget): a power-bound GPU's matmul falls with its limit, so the figures describe
# the cap, not the GPU model. A few percent below the default is within the spread of healthy
# GPUs (gpu_speed_cv 2%) and left alone.
MIN_POWER_LIMIT_FRACTION = 0.8
# The warm-up times one shape back to back until it settles: its last window (sustained)
# under half its first (burst) is a GPU that lost half its speed within a minute, heating up
# or slowing down (healthy: 669 after 674 TFLOP/s on the H200 of docs/probes.md;
# benchmarks/gpu_check.py wants 85%). The first window, at boost clocks, is a few percent
# above the sweep's best of its dtype (the sweep runs the warm-up shape after it); over twice
# that best no GPU ran (1/MIN_BURST_FRACTION, the factor a faulty GPU is refused by).
MIN_BURST_FRACTION = 0.5

_FIX = ("To fix: re-run the probes on a node that is not throttled (`nvidia-smi -q -d "
        "PERFORMANCE,POWER,TEMPERATURE` says why it is; another node, or the cloud's support)")


def environment_edited(env: Environment) -> str | None:
    """GPU facts no CUDA GPU has: under MIN_GPU_MEMORY_BYTES of memory, or a compute
    capability outside COMPUTE_CAPABILITY_RANGE (or not a number)."""
    if env.gpu_memory_bytes is not None and env.gpu_memory_bytes < MIN_GPU_MEMORY_BYTES:
        return (f"the environment gives the GPU {env.gpu_memory_bytes:,} bytes of memory, "
                f"below the {MIN_GPU_MEMORY_BYTES >> 30} GiB of any GPU the planner calibrates: "
                f"{_EDITED}")
    low, high = COMPUTE_CAPABILITY_RANGE
    cc = env.compute_capability
    try:
        known = cc is None or low <= float(cc) <= high
    except ValueError:
        known = False
    if not known:
        return (f"compute capability {cc!r} is no CUDA GPU's ({low:g} to {high:g}): {_EDITED}")
    return None


def burst_edited(report: ProbeReport) -> str | None:
    """A warm-up burst over 1/MIN_BURST_FRACTION times its dtype's best over the sweep: no
    GPU runs its first second at twice its fastest shape's rate (burst_tflops does not
    calibrate, but a report that states the impossible there is not believed anywhere)."""
    m = report.matmul
    best = next((d.best_tflops for d in m.dtypes if d.dtype == m.warmup_dtype
                 and d.status == "measured" and d.best_tflops), None) if m else None
    if best is None or not m.burst_tflops or m.burst_tflops * MIN_BURST_FRACTION <= best:
        return None
    return (f"the matmul warm-up's burst, {m.burst_tflops:,.4g} TFLOP/s of {m.warmup_dtype}, is "
            f"over {1 / MIN_BURST_FRACTION:g}x the sweep's best {m.warmup_dtype} "
            f"({best:,.4g}): no GPU runs its first second twice as fast as its fastest shape: "
            f"{_EDITED}")


def _mask(telemetry: GpuTelemetry) -> int:
    """The clock-event bit mask (0 when missing or not hex: no evidence either way)."""
    try:
        bits = int(telemetry.clock_event_reasons or "", 16)
    except ValueError:
        return 0
    return max(bits, 0)


def throttle_refusal(report: ProbeReport) -> str | None:
    """Why the report's GPUs were throttled while measured (None: no sign of it): a clock
    event that means trouble (THROTTLE_REASONS) on any GPU, idle or under load; an enforced
    power limit under MIN_POWER_LIMIT_FRACTION of the default; an SM clock under load below
    MIN_LOAD_CLOCK_FRACTION of the maximum; the warm-up's sustained rate under
    MIN_BURST_FRACTION of its burst."""
    env, m = report.environment, report.matmul
    samples = [("rank 0", "before the run (idle)", env.idle)] + [
        (f"rank {r.rank}", "under load", r.under_load)
        for r in sorted(report.ranks, key=lambda r: r.rank)]
    if m is not None and m.under_load is not None:  # rank 0's, whether or not ranks kept it
        samples.append(("rank 0", "under load", m.under_load))
    samples = [(who, when, t) for who, when, t in samples if t is not None]
    world = env.world_size
    hits = [(who, when, t) for who, when, t in samples if _mask(t) & THROTTLE_REASONS]
    if hits:
        who, when, t = hits[0]
        gpus = len({w for w, _, _ in hits})
        return (f"{gpus} of {world} GPU(s) showed clock events that slow a GPU ({who} "
                f"{when}: {t.clock_event_reasons}, {clock_event_words(t.clock_event_reasons)}):"
                f" a throttled node's figures are not the GPU model's. {_FIX}")
    for who, when, t in samples:
        limit, default = t.power_limit_w, t.power_default_limit_w
        if limit and default and limit < MIN_POWER_LIMIT_FRACTION * default:
            return (f"{who}'s GPU {when} had its power limit at {limit:,.0f} W, "
                    f"{limit / default:.0%} of its default {default:,.0f} W: a capped GPU's "
                    "figures are not the GPU model's. To fix: restore the default limit "
                    f"(`nvidia-smi -pl {default:,.0f}`) and re-run the probes, or re-run them on "
                    "a node that is not throttled")
    top = env.sm_clock_max_mhz
    slow = [(who, t.sm_clock_mhz) for who, when, t in samples if when == "under load"
            and top and t.sm_clock_mhz is not None
            and t.sm_clock_mhz < MIN_LOAD_CLOCK_FRACTION * top]
    if slow:
        who, mhz = slow[0]
        gpus = len({w for w, _ in slow})
        return (f"{gpus} of {world} GPU(s) ran under load at SM clocks under "
                f"{MIN_LOAD_CLOCK_FRACTION:.0%} of the maximum {top:,} MHz ({who}: {mhz:,} MHz):"
                f" a throttled node's figures are not the GPU model's. {_FIX}")
    if m is not None and m.burst_tflops and m.sustained_tflops \
            and m.sustained_tflops < MIN_BURST_FRACTION * m.burst_tflops:
        return (f"the matmul warm-up fell from {m.burst_tflops:,.4g} to {m.sustained_tflops:,.4g}"
                f" TFLOP/s ({m.warmup_dtype}), under {MIN_BURST_FRACTION:.0%} of its first "
                f"window: the GPU slowed down within a minute (heat, a slowdown). {_FIX}")
    return None
