"""Measured numbers that replace datasheet × default fractions in the model: the calibration
record the model reads.

A ``Calibration`` is plain, frozen data: what the probes measured per accelerator (matmul
TFLOP/s per dtype, copy GB/s), per instance type or full node (intra-node all-reduce bus
bandwidth), per instance type and node count (cross-node bus bandwidth) and per workload layer
shape, plus the listing of what was used and what was refused, with why. Which measurements
are believed is decided by the rules in ``planner.store`` (``calibrate``), which builds one
from the user's probe database; tests build one directly.

Lookups: ``Calibration.inter`` interpolates linearly in log2(nodes) between measured node
counts and returns None outside them (no extrapolation: collectives slow down as jobs grow,
by an amount not measured). ``Calibration.workload`` returns the exact layer shape, else
interpolates the measured/modelled ratios of comparable shapes whose layer sizes are within
MAX_WORKLOAD_DISTANCE, at any micro-batch and recomputation (``_shape.size_distance``), with
inverse-distance weights 1/d² over the whole shape (``_shape.shape_distance``), else None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import KW_ONLY, field, replace
from types import MappingProxyType
from typing import Any

from catalog import record

from ._records import Z_P90
from ._shape import MAX_WORKLOAD_DISTANCE, WorkloadShape, shape_distance, size_distance
from ._shown import format_figure

KINDS: tuple[str, ...] = ("matmul", "hbm", "intra", "inter", "workload")
# The widest P90/P10 of a measured layer's time that a Calibration built by the store's rules
# can hold: each report's P10 at least half and its P90 at most twice its median (wider is a
# faulty run or an edit), and its reports within 2x of each other, so the envelope spans at
# most 2 x 2 x 2. ``log_sigma`` takes no wider spread: ratios of different shapes that
# disagree more, or a Calibration built by hand, must not widen an estimate's range beyond
# what a measurement can show (an edited P10 of 1e-12 s gave σ 9.4 and a P10–P90 of
# 2,257,731,446 h both; this caps σ_meas at ln 8 / 2.563 = 0.81).
MAX_SPREAD_RATIO = 8.0
_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@record(kw_only=False)
class Measurement:
    """One calibrated figure: ``value`` in ``unit`` and where it came from.

    ``p10``/``p90``: its spread (over GPUs, repeats or iterations; the envelope over reports
    when several combine); ``n_reports``: how many reports the value is the median of.
    """

    value: float
    source: str  # e.g. "probe report 3 on p5.48xlarge, 2026-11-30"
    _: KW_ONLY
    unit: str = ""
    p10: float | None = None
    p90: float | None = None
    n_reports: int = 1
    report_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.value) and self.value > 0):
            raise ValueError(f"measurement value must be finite and > 0, got {self.value!r}")
        if self.n_reports < 1:
            raise ValueError("a measurement comes from at least one report")


# The factor beyond which a measured figure is warned about: the same factor the rules use for
# a GPU against its node's median and for reports against each other (healthy GPUs of one
# model differ by a few percent, published MAMF by tens of percent; a factor of 2 is a node
# or a set-up that is broken, or a datasheet default that is badly wrong for this machine).
FAR_FROM_DEFAULT = 2.0
# The word before each of a used figure's cautions where its note is said as one line
# (``CalibrationNote.cautions``: an old report, a workload layer far from its model).
NOTE_CAUTION = "caution: "


@record
class CalibrationNote:
    """One line of `gpuplan probe show`: a figure used (how) or refused (why)."""

    kind: str  # see KINDS
    key: str  # e.g. "H100-SXM5-80GB bf16", "p5.48xlarge", "p5.48xlarge x 2 nodes"
    value: float | None
    unit: str
    report_ids: tuple[int, ...]
    reason: str
    # Why a used figure needs checking (``planner.store._rules``: a report over a year old, a
    # figure near the datasheet peak, a workload layer far from its model); the estimate
    # warns with them (``_calibration_words``), `probe show` says them after the reason.
    cautions: tuple[str, ...] = ()

    @property
    def what(self) -> str:
        """The figure named, e.g. "matmul H100-SXM5-80GB bf16"; a report refused as a whole
        is its own figure ("report 3", not "report report 3")."""
        return self.key if self.kind == "report" else f"{self.kind} {self.key}"

    def line(self) -> str:
        ids = ", ".join(map(str, self.report_ids))
        why = self.reason + "".join(f"; {NOTE_CAUTION}{c}" for c in self.cautions)
        if self.kind == "report":  # no value, and the key already names the report
            return f"{self.key}: {why}"
        val = "-" if self.value is None else f"{format_figure(self.value)} {self.unit}"
        return f"{self.what}: {val} (report{'s' if len(self.report_ids) > 1 else ''} {ids}): " \
               f"{why}"


def reasons_by_figure(notes) -> list[str]:
    """One line per distinct reason of ``notes``, naming the figures it applies to ("hbm
    H100-SXM5-80GB, intra p5.48xlarge: another figure of this report is out of bounds (…)"):
    the reasons alone read as one reason said twice. `gpuplan probe ingest` and the app's
    Probes page say refusals so."""
    by_reason: dict[str, list[str]] = {}
    for n in notes:
        by_reason.setdefault(n.reason, []).append(n.what)
    return [f"{', '.join(dict.fromkeys(what))}: {why}" for why, what in by_reason.items()]



def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.3g} ms"


@record
class WorkloadMeasurement:
    """Measured vs modelled time and activation memory of one transformer layer, forward +
    backward, one micro-batch on one GPU (tp = 1), for ``accelerator`` under ``framework``.

    ``measured_*`` and ``modelled_*`` are at ``measured_shape``, the nearest measured shape
    (``shape`` itself when ``distance`` is 0). ``time_ratio`` and ``memory_ratio`` (measured /
    modelled) are for ``shape``: the measured shape's, or interpolated between comparable
    measured shapes within MAX_WORKLOAD_DISTANCE (module docstring, rule 6). To use it, scale
    the model's per-layer compute at ``shape`` by ``time_ratio`` (`layer_seconds_at`).
    Memory is what one layer keeps for backward (the CUDA allocator after the forward minus
    before it, per layer); None when the reports could not measure it.
    """

    accelerator: str
    framework: str
    shape: WorkloadShape
    measured_shape: WorkloadShape
    distance: float
    measured_layer_seconds: float
    modelled_layer_seconds: float
    time_ratio: float
    time_ratio_p10: float | None = None
    time_ratio_p90: float | None = None
    measured_layer_memory_bytes: float | None = None
    modelled_layer_memory_bytes: float
    memory_ratio: float | None = None
    measured_optimizer_seconds: float | None = None  # one layer's AdamW step
    modelled_optimizer_seconds: float | None = None
    attention_backend: str | None = None  # the SDPA backend the probe ran
    source: str
    n_reports: int = 1
    report_ids: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("measured_layer_seconds", "modelled_layer_seconds", "time_ratio"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"workload measurement: {name} must be finite and > 0, got "
                                 f"{value!r}")
        if not (math.isfinite(self.distance) and 0 <= self.distance):
            raise ValueError("workload measurement: distance must be finite and >= 0")

    @property
    def log_sigma(self) -> float | None:
        """σ of log(time ratio) from its p10/p90 (over GPUs, steps and reports), None
        without a spread; a spread over MAX_SPREAD_RATIO counts as that. The measurement's
        own spread, not the model's."""
        if not self.time_ratio_p10 or not self.time_ratio_p90:
            return None
        ratio = min(max(self.time_ratio_p90 / self.time_ratio_p10, 1.0), MAX_SPREAD_RATIO)
        return math.log(ratio) / (2 * Z_P90)

    @property
    def memory_difference_bytes(self) -> float | None:
        """Measured minus modelled activations per layer (the memory model's error)."""
        if self.measured_layer_memory_bytes is None:
            return None
        return self.measured_layer_memory_bytes - self.modelled_layer_memory_bytes

    def layer_seconds_at(self, modelled_seconds: float) -> float:
        """The model's per-layer time at ``shape`` corrected by the measurement."""
        return modelled_seconds * self.time_ratio

    def summary(self) -> str:
        """One line: measured vs modelled time and memory, the ratio and where it comes from."""
        where = ("" if self.distance == 0 else
                 f"; interpolated to {self.shape.label} (distance {self.distance:.2f})")
        mem = ""
        if self.measured_layer_memory_bytes is not None:
            diff = self.memory_difference_bytes / self.modelled_layer_memory_bytes \
                if self.modelled_layer_memory_bytes else 0.0
            mem = (f"; activations {self.measured_layer_memory_bytes / 2**20:,.1f} MiB "
                   f"measured vs {self.modelled_layer_memory_bytes / 2**20:,.1f} MiB modelled "
                   f"({diff:+.0%})")
        return (f"{_ms(self.measured_layer_seconds)} per layer measured vs "
                f"{_ms(self.modelled_layer_seconds)} modelled (fwd+bwd, "
                f"{self.measured_shape.label}); measured/modelled {self.time_ratio:.2f}"
                f"{where}{mem}")



def _blend(pairs: list[tuple[float, float]]) -> float:
    """The geometric mean of the (distance, ratio) pairs' ratios with weights 1/distance²."""
    weights = [1.0 / d**2 for d, _ in pairs]
    return math.exp(sum(w * math.log(r) for w, (_, r) in zip(weights, pairs, strict=True))
                    / sum(weights))


def _proxy(mapping: Mapping | None) -> Mapping:
    return _EMPTY if not mapping else MappingProxyType(dict(mapping))


def _empty() -> Mapping:
    return _EMPTY


@record
class Calibration:
    """What calibrates the model. Mappings are read-only; build a new Calibration to change.

    Keys: ``matmul_tflops`` (accelerator, catalog dtype); ``hbm_gb_per_s`` accelerator (device
    copy, 2*N bytes per copy); ``intra_busbw_gb_per_s`` instance type; ``intra_node_busbw_gb_per_s``
    (accelerator, GPUs per node), only for clusters without an instance type (``intra``);
    ``inter_busbw_gb_per_s`` (instance type, nodes); ``workload_layers`` (accelerator,
    framework, measured layer shape), each entry at distance 0 (`workload` looks up).
    """

    matmul_tflops: Mapping[tuple[str, str], Measurement] = field(default_factory=_empty)
    intra_busbw_gb_per_s: Mapping[str, Measurement] = field(default_factory=_empty)
    inter_busbw_gb_per_s: Mapping[tuple[str, int], Measurement] = field(default_factory=_empty)
    hbm_gb_per_s: Mapping[str, Measurement] = field(default_factory=_empty)
    intra_node_busbw_gb_per_s: Mapping[tuple[str, int], Measurement] = field(default_factory=_empty)
    workload_layers: Mapping[tuple[str, str, WorkloadShape], WorkloadMeasurement] = field(
        default_factory=_empty)
    used_notes: tuple[CalibrationNote, ...] = ()
    rejected_notes: tuple[CalibrationNote, ...] = ()

    def __post_init__(self) -> None:
        # frozen: copy whatever mapping was given into a read-only view of a private dict
        for name in ("matmul_tflops", "intra_busbw_gb_per_s", "inter_busbw_gb_per_s",
                     "hbm_gb_per_s", "intra_node_busbw_gb_per_s", "workload_layers"):
            object.__setattr__(self, name, _proxy(getattr(self, name)))
        object.__setattr__(self, "used_notes", tuple(self.used_notes))
        object.__setattr__(self, "rejected_notes", tuple(self.rejected_notes))

    def __reduce__(self):  # mappingproxy does not pickle: rebuild from plain dicts
        return (_rebuild, ({name: (dict(v) if isinstance(v, Mapping) else v)
                            for name in self.__dataclass_fields__
                            for v in (getattr(self, name),)},))

    @staticmethod
    def key_label(mapping: str, key) -> str:
        """A key of mapping ``mapping`` as a note names it ("H100-SXM5-80GB bf16",
        "H100-SXM5-80GB x8 per node", "p5.48xlarge x 2 nodes"): the store's notes and the
        estimate's warnings about them (``_calibration_words``) both spell it here."""
        if mapping == "matmul_tflops":
            return f"{key[0]} {key[1]}"
        if mapping == "intra_node_busbw_gb_per_s":
            return f"{key[0]} x{key[1]} per node"
        if mapping == "inter_busbw_gb_per_s":
            return f"{key[0]} x {key[1]} nodes"
        return str(key)

    def matmul(self, accelerator: str, dtype: str) -> Measurement | None:
        """Achievable TFLOP/s of ``dtype`` (catalog name: bf16, fp8, ...) on ``accelerator``."""
        return self.matmul_tflops.get((accelerator, dtype))

    def hbm(self, accelerator: str) -> Measurement | None:
        """Device copy GB/s (2*N bytes per copy of N) on ``accelerator``."""
        return self.hbm_gb_per_s.get(accelerator)

    def intra(self, instance_type: str | None, accelerator: str,
              gpus_per_node: int | None = None) -> Measurement | None:
        """Intra-node all-reduce bus bandwidth: for a cluster of an instance type, that
        instance type's own measurement only; for a cluster without one (a reference node of
        `--gpu`), a full node of ``gpus_per_node`` ``accelerator`` GPUs (without
        ``gpus_per_node``, nothing: a node of another size has another bus bandwidth).

        A measurement describes the instance type it ran on (its node, the cloud's image,
        driver and NCCL build), not every instance type with the same GPUs: falling back to
        the accelerator key for any instance type made 880 GB/s measured on a p5.48xlarge
        calibrate a3-highgpu-8g, a3-megagpu-8g and Standard_ND96isr_H100_v5 estimates too
        (docs/probes.md keys it for clusters without an instance type)."""
        if instance_type:
            return self.intra_busbw_gb_per_s.get(instance_type)
        if gpus_per_node is None:
            return None
        return self.intra_node_busbw_gb_per_s.get((accelerator, gpus_per_node))

    def inter(self, instance_type: str | None, nodes: int | None = None) -> Measurement | None:
        """Cross-node all-reduce bus bandwidth of ``nodes`` x ``instance_type``: measured at that
        node count, else interpolated between the nearest measured counts (linear in log2
        nodes, stated in the source); None outside the measured counts and for one node.
        ``nodes=None`` (the older call) takes the smallest measured count and says so."""
        if not instance_type:
            return None
        measured = sorted(((n, m) for (it, n), m in self.inter_busbw_gb_per_s.items()
                           if it == instance_type), key=lambda nm: nm[0])
        if not measured:
            return None
        if nodes is None:
            n, m = measured[0]
            return Measurement(m.value, f"{m.source}; measured at {n} nodes, node count not "
                               "given", unit=m.unit, p10=m.p10, p90=m.p90,
                               n_reports=m.n_reports, report_ids=m.report_ids)
        if nodes < 2:
            return None
        for n, m in measured:
            if n == nodes:
                return m
        below = [(n, m) for n, m in measured if n < nodes]
        above = [(n, m) for n, m in measured if n > nodes]
        if not below or not above:
            return None
        (n0, m0), (n1, m1) = below[-1], above[0]
        t = (math.log2(nodes) - math.log2(n0)) / (math.log2(n1) - math.log2(n0))
        value = m0.value + t * (m1.value - m0.value)
        source = (f"interpolated in log2(nodes) between {n0} nodes ({m0.value:.0f} GB/s, "
                  f"{m0.source}) and {n1} nodes ({m1.value:.0f} GB/s, {m1.source})")
        return Measurement(value, source, unit=m0.unit, n_reports=m0.n_reports + m1.n_reports,
                           report_ids=tuple(sorted({*m0.report_ids, *m1.report_ids})))

    def workload(self, accelerator: str, framework: str, shape: WorkloadShape
                 ) -> WorkloadMeasurement | None:
        """The measured layer of ``shape`` on ``accelerator`` under ``framework``: the exact
        shape if measured; else the measured/modelled ratios of every comparable measured shape
        whose layer sizes are within MAX_WORKLOAD_DISTANCE (`size_distance`: hidden, sequence,
        heads and FFN per hidden), at any micro-batch and recomputation — the rows of one
        plan grid must all get it or none — interpolated with weights 1/d² (d =
        `shape_distance`, the whole shape, half a step per recomputation setting), next to the
        nearest one's figures; the memory ratio only from shapes of the same recomputation;
        else None (another family of shapes, or sizes too far to transfer)."""
        exact = self.workload_layers.get((accelerator, framework, shape))
        if exact is not None:
            return exact
        near = []
        for (acc, fw, measured), m in self.workload_layers.items():
            if acc != accelerator or fw != framework:
                continue
            sizes = size_distance(shape, measured)
            if sizes is not None and sizes <= MAX_WORKLOAD_DISTANCE:
                near.append((shape_distance(shape, measured), measured.label, m))
        if not near:
            return None
        near.sort(key=lambda x: (x[0], x[1]))
        weights = [1.0 / d**2 for d, _, _ in near]
        total = sum(weights)
        d0, _, nearest = near[0]
        time_ratio = _blend([(d, m.time_ratio) for d, _, m in near])
        # activations transfer across sizes but not across recomputation, which changes
        # what is kept: only shapes with the same setting give the memory ratio
        same = [(d, m) for d, _, m in near if m.measured_shape.recompute == shape.recompute]
        lows = [m.time_ratio_p10 for _, _, m in near if m.time_ratio_p10]
        highs = [m.time_ratio_p90 for _, _, m in near if m.time_ratio_p90]
        used = "; ".join(f"{m.measured_shape.label} at distance {d:.2f}, ratio "
                         f"{m.time_ratio:.2f}, weight {w / total:.2f}"
                         for (d, _, m), w in zip(near, weights, strict=True))
        ids = tuple(sorted({i for _, _, m in near for i in m.report_ids}))
        memory_ratio = (_blend([(d, m.memory_ratio) for d, m in same])
                        if same and all(m.memory_ratio is not None for _, m in same) else None)
        return replace(
            nearest, shape=shape, distance=d0, time_ratio=time_ratio,
            time_ratio_p10=min(lows) if lows else None,
            time_ratio_p90=max(highs) if highs else None, memory_ratio=memory_ratio,
            # the nearest shape's activations are printed only when the memory ratio is its
            # own kind (the same recomputation): another setting keeps other tensors
            measured_layer_memory_bytes=(nearest.measured_layer_memory_bytes
                                         if memory_ratio is not None and same[0][1] is nearest
                                         else None),
            source=f"interpolated (1/d² in log2 tokens, hidden, sequence and recomputation) "
                   f"from {used}",
            n_reports=sum(m.n_reports for _, _, m in near), report_ids=ids)

    def used(self) -> tuple[CalibrationNote, ...]:
        return self.used_notes

    def rejected(self) -> tuple[CalibrationNote, ...]:
        return self.rejected_notes

    @property
    def empty(self) -> bool:
        return not (self.matmul_tflops or self.intra_busbw_gb_per_s or self.hbm_gb_per_s
                    or self.inter_busbw_gb_per_s or self.intra_node_busbw_gb_per_s
                    or self.workload_layers)

    def notes(self) -> tuple[str, ...]:
        """Human-readable lines: what is used, then what is not and why."""
        return (*(f"used: {n.line()}" for n in self.used_notes),
                *(f"not used: {n.line()}" for n in self.rejected_notes))


def _rebuild(fields: dict) -> Calibration:
    return Calibration(**fields)


NO_CALIBRATION = Calibration()
"""The empty calibration: every mapping an immutable empty view, nothing to mutate."""

