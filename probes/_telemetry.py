"""A GPU's state as nvidia-smi reports it (clocks, power, temperature, clock-event reasons),
and the bounds every reading of a report must keep (torch-free).

The record is read back from report files (probes._report_parse builds it through its
``__post_init__``), so a reading no GPU can give is refused there, in one line with the field
named: a damaged or edited file, not a measurement. The rules that read a sound report's
telemetry for throttling are probes._gpu_state's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from probes._spread import check_non_negative

# No GPU clocks its SMs near 10 GHz: the catalog's fastest boost clocks are ~2-3 GHz (H100/H200
# 1,980 MHz, L4 2,040). Memory clocks as nvidia-smi states them reach ~14 GHz on GDDR7 (HBM3e:
# 3,201 MHz on the H200 of docs/probes.md), so their bound is set above that.
MAX_SM_CLOCK_MHZ = 10_000
MAX_MEMORY_CLOCK_MHZ = 50_000
# A GPU's temperature sensor: GPUs stop (hardware shutdown) at ~90-105 °C and data-centre air
# is 18-27 °C, so a reading above 150 °C or below -40 °C (sensor ranges end there) is no
# running GPU's: 500 °C or -273 °C is a damaged or edited file.
TEMPERATURE_RANGE_C = (-40.0, 150.0)


def check_clocks(where: str, high: int, **values: int | None) -> None:
    """Clocks in MHz at most ``high`` (below 0 is every report integer's bound, said by the
    parser: probes._report_parse)."""
    for name, value in values.items():
        if value is not None and value > high:
            raise ValueError(f"{where}.{name} must be at most {high:,} MHz (no GPU clocks "
                             f"higher), got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuTelemetry:
    """One GPU's state from nvidia-smi; ``None``: not reported by this driver or machine.

    ``clock_event_reasons`` is nvidia-smi's ``clocks_event_reasons.active`` bit mask (power
    cap 0x4, HW slowdown 0x8, thermal 0x20/0x40...), as the hex string it prints.
    """

    sampled: str  # "idle" (before the probes) or "under_load" (during the matmul warm-up)
    sm_clock_mhz: int | None = None
    memory_clock_mhz: int | None = None
    power_draw_w: float | None = None
    power_limit_w: float | None = None  # enforced limit
    power_default_limit_w: float | None = None
    temperature_c: float | None = None
    clock_event_reasons: str | None = None
    mig_mode: str | None = None  # "Enabled", "Disabled", "[N/A]"
    ecc_mode: str | None = None

    def __post_init__(self) -> None:
        where = f"telemetry ({self.sampled})"
        check_non_negative(where, power_draw_w=self.power_draw_w,
                           power_limit_w=self.power_limit_w,
                           power_default_limit_w=self.power_default_limit_w)
        check_clocks(where, MAX_SM_CLOCK_MHZ, sm_clock_mhz=self.sm_clock_mhz)
        check_clocks(where, MAX_MEMORY_CLOCK_MHZ, memory_clock_mhz=self.memory_clock_mhz)
        low, high = TEMPERATURE_RANGE_C
        t = self.temperature_c
        if t is not None and not (math.isfinite(t) and low <= t <= high):
            raise ValueError(f"{where}.temperature_c must be from {low:g} to {high:g} degrees C "
                             f"(a running GPU's sensor reads within it), got {t!r}")
