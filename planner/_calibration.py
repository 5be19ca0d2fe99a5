"""Measured numbers that replace datasheet x default fractions in the model, and the rules that
decide which measurements are believed.

A ``Calibration`` is plain, frozen data: what the probes measured per accelerator (matmul
TFLOP/s per dtype, copy GB/s), per instance type or full node (intra-node all-reduce bus
bandwidth) and per instance type and node count (cross-node bus bandwidth), plus the listing
of what was used and what was refused, with why. ``planner/_probe_store.py`` builds one from
the user's probe database with `calibrate`; tests build one directly.

The rules (`calibrate`), applied to every figure a stored report offers (probes._figures):

1. The report's own facts: quick mode, CPU runs, schema-1 reports, MIG, custom shapes, a probe
   that failed on any rank, a missing rank, fp8 that failed its check against bf16, fast-
   accumulation fp8, a message size short of the bus-bandwidth plateau, a run that did not
   use every GPU of its node (for bus bandwidth) — each refuses the figure, with the reason.
2. Physical bounds: a figure above the datasheet peak is impossible, and one below
   MIN_FRACTION_OF_PEAK of it says the measurement is broken (a wrong device, a unit error),
   not that the hardware is slow. Either refuses *every* figure of that report: a report that
   contains an impossible number is not trusted for its other numbers either. A figure whose
   datasheet bound is unknown is refused alone.
3. The fabric: only multi-node runs whose world collective went over RDMA (InfiniBand/RoCE
   verbs, EFA through libfabric) calibrate the cross-node bandwidth — or GCP's GPUDirect-TCPX
   plugin on instances whose catalog fabric is gpudirect_tcpx; plain TCP sockets never do.
4. Combination: the used figures of one kind and key combine by their median over reports,
   not the newest; p10/p90 are the envelope (lowest p10, highest p90) of the reports'.
5. Node counts: the cross-node figure is kept per measured node count; `Calibration.inter`
   interpolates linearly in log2(nodes) between measured counts and returns None outside
   them (no extrapolation: collectives slow down as jobs grow, by an amount not measured).
6. Workload layers (`gpuplan probe workload`): keyed by (accelerator, framework, layer shape —
   hidden, heads, KV heads, head dim, FFN width and kind, experts, sequence, micro-batch,
   precision, recomputation). Only full runs count: a GPU report, not quick, every GPU of the
   node running the layers, every rank reporting, the probe failing nowhere, and tp = 1 (the
   modelled reference is one GPU; a tensor-parallel shard adds communication it does not
   have). Bounds: a layer faster than its model FLOPs at the datasheet peak is impossible, one
   more than MAX_WORKLOAD_RATIO times slower than the model is a broken run (a wrong device, a
   CPU fallback); activations above the GPU's memory are impossible — each refuses the whole
   report, as rule 2. Several reports of one key combine by the median. The modelled figures
   (planner/_layer_model.py) are computed when the calibration is built, with the same
   hardware figures `estimate` uses (the probes' measurements where there are some), so
   measured/modelled is always against the current model. `Calibration.workload` returns the
   exact shape, else interpolates the measured/modelled ratios of comparable shapes within
   MAX_WORKLOAD_DISTANCE (inverse-distance weights 1/d² in log2 tokens per micro-batch,
   hidden and sequence; `_layer_model.shape_distance`), else None.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ._layer_model import MAX_WORKLOAD_DISTANCE, LayerModel, WorkloadShape, shape_distance

# A figure below this fraction of its datasheet bound is a broken measurement (a CPU
# fallback, the wrong GPU, a unit error), not a slow machine: real GPUs under the probes reach
# 40-90% of their matmul peak, 70-95% of HBM, and NCCL busbw rarely drops under 20% of the link.
MIN_FRACTION_OF_PEAK = 0.05
# A layer this many times slower than the model is a broken run, the same 1/20 as above.
MAX_WORKLOAD_RATIO = 1 / MIN_FRACTION_OF_PEAK
Z_P90 = 1.2815515655446004  # standard normal 90th percentile
KINDS: tuple[str, ...] = ("matmul", "hbm", "intra", "inter", "workload")
_EMPTY: Mapping[Any, Any] = MappingProxyType({})


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationNote:
    """One line of `gpuplan probe show`: a figure used (how) or refused (why)."""

    kind: str  # see KINDS
    key: str  # e.g. "H100-SXM5-80GB bf16", "p5.48xlarge", "p5.48xlarge x 2 nodes"
    value: float | None
    unit: str
    report_ids: tuple[int, ...]
    reason: str

    def line(self) -> str:
        what = f"{self.kind} {self.key}"
        val = "-" if self.value is None else (f"{self.value:,.1f} {self.unit}" if
                                              self.value < 1e6 else
                                              f"{self.value:.3g} {self.unit}")
        ids = ", ".join(map(str, self.report_ids))
        return f"{what}: {val} (report{'s' if len(self.report_ids) > 1 else ''} {ids}): " \
               f"{self.reason}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """One figure one stored report offers, with the datasheet bound it must respect."""

    report_id: int
    created_utc: str
    kind: str  # see KINDS; "report" for a report refused as a whole before any figure
    accelerator: str
    dtype: str | None = None  # matmul: the catalog dtype (fp32, tf32, bf16, fp16, fp8)
    instance_type: str | None = None  # when the report's instance is in the catalog
    gpus_per_node: int = 1
    nodes: int = 1
    value: float | None  # None only for a refused "report"
    unit: str
    p10: float | None = None
    p90: float | None = None
    bound: float | None = None  # the datasheet figure the value may not exceed
    bound_source: str = ""
    refusal: str | None = None  # the report's or the instance's reason, if any

    @property
    def label(self) -> str:
        if self.kind == "report":
            return f"report {self.report_id}"
        if self.kind == "matmul":
            return f"{self.accelerator} {self.dtype}"
        if self.kind == "hbm":
            return self.accelerator
        if self.kind == "intra":
            return self.instance_type or f"{self.accelerator} x{self.gpus_per_node}"
        return f"{self.instance_type} x {self.nodes} nodes"


def _ms(seconds: float) -> str:
    ms = seconds * 1e3
    return f"{ms:,.0f} ms" if ms >= 100 else f"{ms:.3g} ms"


@dataclass(frozen=True, slots=True, kw_only=True)
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
        without a spread. The measurement's own spread, not the model's."""
        if not self.time_ratio_p10 or not self.time_ratio_p90:
            return None
        return math.log(self.time_ratio_p90 / self.time_ratio_p10) / (2 * Z_P90)

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


@dataclass(frozen=True, slots=True, kw_only=True)
class WorkloadCandidate:
    """One stored report's workload measurement, with the model's figures for its shape
    (None when the planner cannot model it) and the datasheet bounds."""

    report_id: int
    created_utc: str
    accelerator: str
    framework: str
    shape: WorkloadShape
    instance_type: str | None = None
    measured_layer_seconds: float
    p10: float | None = None
    p90: float | None = None
    measured_layer_memory_bytes: float | None = None
    measured_optimizer_seconds: float | None = None
    attention_backend: str | None = None
    modelled: LayerModel | None = None
    peak_tflops: float | None = None  # datasheet dense peak of the precision
    memory_bytes: float | None = None  # the GPU's memory
    refusal: str | None = None

    @property
    def label(self) -> str:
        return f"{self.accelerator} {self.framework} {self.shape.label}"


def _proxy(mapping: Mapping | None) -> Mapping:
    return _EMPTY if not mapping else MappingProxyType(dict(mapping))


def _empty() -> Mapping:
    return _EMPTY


@dataclass(frozen=True, slots=True, kw_only=True)
class Calibration:
    """What calibrates the model. Mappings are read-only; build a new Calibration to change.

    Keys: ``matmul_tflops`` (accelerator, catalog dtype); ``hbm_gb_per_s`` accelerator (device
    copy, 2*N bytes per copy); ``intra_busbw_gb_per_s`` instance type; ``intra_node_busbw_gb_per_s``
    (accelerator, GPUs per node), for clusters without an instance type;
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

    def matmul(self, accelerator: str, dtype: str) -> Measurement | None:
        """Achievable TFLOP/s of ``dtype`` (catalog name: bf16, fp8, ...) on ``accelerator``."""
        return self.matmul_tflops.get((accelerator, dtype))

    def hbm(self, accelerator: str) -> Measurement | None:
        """Device copy GB/s (2*N bytes per copy of N) on ``accelerator``."""
        return self.hbm_gb_per_s.get(accelerator)

    def intra(self, instance_type: str | None, accelerator: str,
              gpus_per_node: int | None = None) -> Measurement | None:
        """Intra-node all-reduce bus bandwidth: the instance type's own measurement, else a
        full node of ``gpus_per_node`` ``accelerator`` GPUs. Without ``gpus_per_node`` only the
        instance type matches (a node of another size has another bus bandwidth)."""
        found = self.intra_busbw_gb_per_s.get(instance_type) if instance_type else None
        if found is None and gpus_per_node is not None:
            found = self.intra_node_busbw_gb_per_s.get((accelerator, gpus_per_node))
        return found

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
        within MAX_WORKLOAD_DISTANCE, interpolated with weights 1/d² (d = `shape_distance`, in
        log2 tokens per micro-batch, hidden and sequence), next to the nearest one's figures;
        else None (another family of shapes, or too far to transfer)."""
        exact = self.workload_layers.get((accelerator, framework, shape))
        if exact is not None:
            return exact
        near = []
        for (acc, fw, measured), m in self.workload_layers.items():
            if acc != accelerator or fw != framework:
                continue
            d = shape_distance(shape, measured)
            if d is not None and d <= MAX_WORKLOAD_DISTANCE:
                near.append((d, measured.label, m))
        if not near:
            return None
        near.sort(key=lambda x: (x[0], x[1]))
        weights = [1.0 / d**2 for d, _, _ in near]
        total = sum(weights)

        def blend(values: list[float]) -> float:
            return math.exp(sum(w * math.log(v) for w, v in zip(weights, values,
                                                                strict=True)) / total)

        d0, _, nearest = near[0]
        time_ratio = blend([m.time_ratio for _, _, m in near])
        mem = [m.memory_ratio for _, _, m in near]
        lows = [m.time_ratio_p10 for _, _, m in near if m.time_ratio_p10]
        highs = [m.time_ratio_p90 for _, _, m in near if m.time_ratio_p90]
        used = "; ".join(f"{m.measured_shape.label} at distance {d:.2f}, ratio "
                         f"{m.time_ratio:.2f}, weight {w / total:.2f}"
                         for (d, _, m), w in zip(near, weights, strict=True))
        ids = tuple(sorted({i for _, _, m in near for i in m.report_ids}))
        return replace(
            nearest, shape=shape, distance=d0, time_ratio=time_ratio,
            time_ratio_p10=min(lows) if lows else None,
            time_ratio_p90=max(highs) if highs else None,
            memory_ratio=blend(mem) if all(r is not None for r in mem) else None,
            source=f"interpolated (1/d² in log2 tokens, hidden, sequence) from {used}",
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


# -- the rules -------------------------------------------------------------------------------
def _bounds_refusal(c: Candidate) -> tuple[str | None, bool]:
    """(reason, whole_report): a figure outside its datasheet bounds, or without one."""
    if c.value is None:
        return "no value", False
    if c.bound is None:
        return f"no datasheet figure ({c.bound_source}) to bound it", False
    if c.value > c.bound:
        return (f"{c.value:,.4g} {c.unit} is above the datasheet {c.bound:,.4g} {c.unit} "
                f"({c.bound_source}): impossible", True)
    if c.value < MIN_FRACTION_OF_PEAK * c.bound:
        return (f"{c.value:,.4g} {c.unit} is below {MIN_FRACTION_OF_PEAK:.0%} of the datasheet "
                f"{c.bound:,.4g} {c.unit} ({c.bound_source}): a broken measurement", True)
    return None, False


def _source(group: list[Candidate]) -> str:
    first = group[0]
    if len(group) == 1:
        where = f" on {first.instance_type}" if first.instance_type else ""
        return f"probe report {first.report_id}{where}, {first.created_utc[:10]}"
    ids = ", ".join(str(c.report_id) for c in group)
    dates = sorted(c.created_utc[:10] for c in group)
    return f"median of probe reports {ids} ({dates[0]} .. {dates[-1]})"


def _combine(group: list[Candidate]) -> Measurement:
    group = sorted(group, key=lambda c: c.report_id)
    values = sorted(c.value for c in group)
    mid = len(values) // 2
    value = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    p10s = [c.p10 for c in group if c.p10 is not None]
    p90s = [c.p90 for c in group if c.p90 is not None]
    return Measurement(value, _source(group), unit=group[0].unit,
                       p10=min(p10s) if p10s else None, p90=max(p90s) if p90s else None,
                       n_reports=len(group), report_ids=tuple(c.report_id for c in group))


def _keys(c: Candidate) -> list[tuple[str, Any]]:
    """(mapping, key) pairs a used candidate feeds."""
    if c.kind == "matmul":
        return [("matmul_tflops", (c.accelerator, c.dtype))]
    if c.kind == "hbm":
        return [("hbm_gb_per_s", c.accelerator)]
    if c.kind == "intra":
        keys: list[tuple[str, Any]] = [("intra_node_busbw_gb_per_s",
                                        (c.accelerator, c.gpus_per_node))]
        if c.instance_type:
            keys.insert(0, ("intra_busbw_gb_per_s", c.instance_type))
        return keys
    return [("inter_busbw_gb_per_s", (c.instance_type, c.nodes))]


def _key_label(mapping: str, key: Any) -> str:
    if mapping == "matmul_tflops":
        return f"{key[0]} {key[1]}"
    if mapping == "intra_node_busbw_gb_per_s":
        return f"{key[0]} x{key[1]} per node"
    if mapping == "inter_busbw_gb_per_s":
        return f"{key[0]} x {key[1]} nodes"
    return str(key)


_KIND_OF = {"matmul_tflops": "matmul", "hbm_gb_per_s": "hbm", "intra_busbw_gb_per_s": "intra",
            "intra_node_busbw_gb_per_s": "intra", "inter_busbw_gb_per_s": "inter"}


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def _workload_bounds(c: WorkloadCandidate) -> tuple[str | None, bool]:
    """(reason, whole_report) for a workload layer outside what the hardware allows."""
    if c.modelled is None:
        return "the planner cannot model this layer here (no datasheet figures)", False
    ms = c.measured_layer_seconds * 1e3
    if c.peak_tflops:
        fastest = c.modelled.flops / (c.peak_tflops * 1e12)
        if c.measured_layer_seconds < fastest:
            return (f"{ms:,.4g} ms per layer is faster than its {c.modelled.flops:.3g} FLOPs at "
                    f"the datasheet peak {c.peak_tflops:,.4g} TFLOP/s ({fastest * 1e3:,.4g} ms): "
                    "impossible", True)
    slowest = MAX_WORKLOAD_RATIO * c.modelled.layer_seconds
    if c.measured_layer_seconds > slowest:
        return (f"{ms:,.4g} ms per layer is over {MAX_WORKLOAD_RATIO:g}x the modelled "
                f"{c.modelled.layer_seconds * 1e3:,.4g} ms: a broken measurement (a wrong "
                "device, a CPU fallback)", True)
    mem = c.measured_layer_memory_bytes
    if mem is not None and c.memory_bytes and mem > c.memory_bytes:
        return (f"{mem / 2**30:,.1f} GiB of activations per layer is above the GPU's "
                f"{c.memory_bytes / 2**30:,.0f} GiB: impossible", True)
    return None, False


def _combine_workload(group: list[WorkloadCandidate]) -> WorkloadMeasurement:
    group = sorted(group, key=lambda c: c.report_id)
    first, model = group[0], group[0].modelled
    value = _median([c.measured_layer_seconds for c in group])
    p10s = [c.p10 for c in group if c.p10 is not None]
    p90s = [c.p90 for c in group if c.p90 is not None]
    mems = [c.measured_layer_memory_bytes for c in group
            if c.measured_layer_memory_bytes is not None]
    opts = [c.measured_optimizer_seconds for c in group
            if c.measured_optimizer_seconds is not None]
    mem = _median(mems) if mems else None
    per = model.layer_seconds
    return WorkloadMeasurement(
        accelerator=first.accelerator, framework=first.framework, shape=first.shape,
        measured_shape=first.shape, distance=0.0, measured_layer_seconds=value,
        modelled_layer_seconds=per, time_ratio=value / per,
        time_ratio_p10=min(p10s) / per if p10s else None,
        time_ratio_p90=max(p90s) / per if p90s else None,
        measured_layer_memory_bytes=mem, modelled_layer_memory_bytes=model.activation_bytes,
        memory_ratio=mem / model.activation_bytes if mem and model.activation_bytes else None,
        measured_optimizer_seconds=_median(opts) if opts else None,
        modelled_optimizer_seconds=model.optimizer_seconds,
        attention_backend=first.attention_backend, source=_source(group),
        n_reports=len(group), report_ids=tuple(c.report_id for c in group))


def _workload_notes(workloads: list[WorkloadCandidate], distrusted: dict[int, str]
                    ) -> tuple[dict, list[CalibrationNote], list[CalibrationNote]]:
    """(workload_layers, used notes, refused notes) by rule 6."""
    groups: dict[tuple[str, str, WorkloadShape], list[WorkloadCandidate]] = {}
    refused = []
    for c in workloads:
        why = c.refusal or _workload_bounds(c)[0]
        if why is None and c.report_id in distrusted:
            why = f"another figure of this report is out of bounds ({distrusted[c.report_id]})"
        if why is not None:
            ms = c.measured_layer_seconds * 1e3
            refused.append(CalibrationNote(kind="workload", key=c.label,
                                           value=ms if math.isfinite(ms) else None,
                                           unit="ms/layer", report_ids=(c.report_id,),
                                           reason=why))
            continue
        groups.setdefault((c.accelerator, c.framework, c.shape), []).append(c)
    layers, used = {}, []
    for key, group in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1],
                                                             kv[0][2].label)):
        m = _combine_workload(group)
        layers[key] = m
        how = f"median of {m.n_reports} reports" if m.n_reports > 1 else "one report"
        used.append(CalibrationNote(
            kind="workload", key=group[0].label, value=m.measured_layer_seconds * 1e3,
            unit="ms/layer", report_ids=m.report_ids, reason=f"{how}; {m.summary()}"))
    return layers, used, refused


def calibrate(candidates: Iterable[Candidate], *,
              workloads: Iterable[WorkloadCandidate] = ()) -> Calibration:
    """Apply the rules of the module docstring; every candidate is used or listed as refused."""
    candidates = list(candidates)
    workloads = list(workloads)
    distrusted: dict[int, str] = {}
    for c in candidates:
        if c.refusal is None:
            why, whole = _bounds_refusal(c)
            if whole:
                distrusted.setdefault(c.report_id, f"{c.kind} {c.label}: {why}")
    for w in workloads:
        if w.refusal is None:
            why, whole = _workload_bounds(w)
            if whole:
                distrusted.setdefault(w.report_id, f"workload {w.label}: {why}")
    used: dict[tuple[str, Any], list[Candidate]] = {}
    rejected: list[CalibrationNote] = []
    for c in candidates:
        why = c.refusal
        if why is None:
            why, _ = _bounds_refusal(c)
        if why is None and c.report_id in distrusted:
            why = f"another figure of this report is out of bounds ({distrusted[c.report_id]})"
        if why is not None:
            rejected.append(CalibrationNote(kind=c.kind, key=c.label, value=c.value,
                                            unit=c.unit, report_ids=(c.report_id,),
                                            reason=why))
            continue
        for mapping, key in _keys(c):
            used.setdefault((mapping, key), []).append(c)
    maps: dict[str, dict] = {}
    notes = []
    for (mapping, key), group in sorted(used.items(), key=lambda kv: str(kv[0])):
        m = _combine(group)
        maps.setdefault(mapping, {})[key] = m
        how = (f"median of {m.n_reports} reports" if m.n_reports > 1 else "one report")
        if m.p10 is not None and m.p90 is not None:
            how += f"; p10 {m.p10:,.1f}, p90 {m.p90:,.1f}"
        notes.append(CalibrationNote(kind=_KIND_OF[mapping], key=_key_label(mapping, key),
                                     value=m.value, unit=m.unit, report_ids=m.report_ids,
                                     reason=how))
    layers, used_layers, refused_layers = _workload_notes(workloads, distrusted)
    return Calibration(**maps, workload_layers=layers, used_notes=(*notes, *used_layers),
                       rejected_notes=tuple(sorted((*rejected, *refused_layers),
                                                   key=lambda n: n.report_ids)))
