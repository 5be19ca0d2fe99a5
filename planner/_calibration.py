"""Measured numbers that replace datasheet × default fractions in the model.

A ``Calibration`` maps an accelerator (and, for networks, an instance type) to what a probe
measured on it. It is plain data: ``planner/_probe_store.py`` builds one from the reports in the
user's probe database; tests build one directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Measurement:
    value: float
    source: str  # e.g. "probe report 3 (p5.48xlarge, 2026-11-30)"


@dataclass(frozen=True, slots=True)
class Calibration:
    # (accelerator canonical name, dtype) → achievable matmul TFLOP/s
    matmul_tflops: dict[tuple[str, str], Measurement] = field(default_factory=dict)
    # accelerator or instance type → intra-node all-reduce bus bandwidth GB/s
    intra_busbw_gb_per_s: dict[str, Measurement] = field(default_factory=dict)
    # instance type → cross-node (world) all-reduce bus bandwidth GB/s
    inter_busbw_gb_per_s: dict[str, Measurement] = field(default_factory=dict)
    # accelerator → device copy bandwidth GB/s (read+write bytes)
    hbm_gb_per_s: dict[str, Measurement] = field(default_factory=dict)

    def matmul(self, accelerator: str, dtype: str) -> Measurement | None:
        return self.matmul_tflops.get((accelerator, dtype))

    def intra(self, instance_type: str | None, accelerator: str) -> Measurement | None:
        return (self.intra_busbw_gb_per_s.get(instance_type or "")
                or self.intra_busbw_gb_per_s.get(accelerator))

    def inter(self, instance_type: str | None) -> Measurement | None:
        return self.inter_busbw_gb_per_s.get(instance_type or "")

    @property
    def empty(self) -> bool:
        return not (self.matmul_tflops or self.intra_busbw_gb_per_s
                    or self.inter_busbw_gb_per_s or self.hbm_gb_per_s)


NO_CALIBRATION = Calibration()
