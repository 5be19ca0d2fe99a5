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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import Any

# A figure below this fraction of its datasheet bound is a broken measurement (a CPU
# fallback, the wrong GPU, a unit error), not a slow machine: real GPUs under the probes reach
# 40-90% of their matmul peak, 70-95% of HBM, and NCCL busbw rarely drops under 20% of the link.
MIN_FRACTION_OF_PEAK = 0.05
KINDS: tuple[str, ...] = ("matmul", "hbm", "intra", "inter")
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
    ``inter_busbw_gb_per_s`` (instance type, nodes).
    """

    matmul_tflops: Mapping[tuple[str, str], Measurement] = field(default_factory=_empty)
    intra_busbw_gb_per_s: Mapping[str, Measurement] = field(default_factory=_empty)
    inter_busbw_gb_per_s: Mapping[tuple[str, int], Measurement] = field(default_factory=_empty)
    hbm_gb_per_s: Mapping[str, Measurement] = field(default_factory=_empty)
    intra_node_busbw_gb_per_s: Mapping[tuple[str, int], Measurement] = field(default_factory=_empty)
    used_notes: tuple[CalibrationNote, ...] = ()
    rejected_notes: tuple[CalibrationNote, ...] = ()

    def __post_init__(self) -> None:
        # frozen: copy whatever mapping was given into a read-only view of a private dict
        for name in ("matmul_tflops", "intra_busbw_gb_per_s", "inter_busbw_gb_per_s",
                     "hbm_gb_per_s", "intra_node_busbw_gb_per_s"):
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

    def used(self) -> tuple[CalibrationNote, ...]:
        return self.used_notes

    def rejected(self) -> tuple[CalibrationNote, ...]:
        return self.rejected_notes

    @property
    def empty(self) -> bool:
        return not (self.matmul_tflops or self.intra_busbw_gb_per_s or self.hbm_gb_per_s
                    or self.inter_busbw_gb_per_s or self.intra_node_busbw_gb_per_s)

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


def calibrate(candidates: Iterable[Candidate]) -> Calibration:
    """Apply the rules of the module docstring; every candidate is used or listed as refused."""
    candidates = list(candidates)
    distrusted: dict[int, str] = {}
    for c in candidates:
        if c.refusal is None:
            why, whole = _bounds_refusal(c)
            if whole:
                distrusted.setdefault(c.report_id, f"{c.kind} {c.label}: {why}")
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
    return Calibration(**maps, used_notes=tuple(notes),
                       rejected_notes=tuple(sorted(rejected, key=lambda n: n.report_ids)))
