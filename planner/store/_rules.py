"""The rules that decide which probe measurements calibrate the model, and the ``Calibration``
(``planner.model``) they build.

``_calibrate`` turns every stored report into ``Candidate`` figures (and a ``WorkloadCandidate``
for a workload probe's layer) with the datasheet bounds each must respect; ``calibrate``
applies the rules below and returns the Calibration, listing every figure as used or refused.
Pure: no database, no files.

The rules (`calibrate`; docs/probes.md, "What calibrates the planner", says each in full):

1. The report's own facts (probes._figures): quick mode, CPU runs, schema 1, MIG, custom
   shapes, a probe that failed on any rank, a missing rank, fp8 that failed its check, a
   message short of the busbw plateau, a partial node — each refuses the figure. A GPU name
   that is not its catalog instance's GPU, and a copy of an earlier report's measurements
   (``_fingerprint``), refuse the report whole (ingest refuses both too; this covers reports
   stored before it did).
2. Physical bounds, on the median, the P90 and every GPU: above the datasheet peak is
   impossible, below MIN_FRACTION_OF_PEAK of it a broken measurement, a slowest GPU under
   MIN_GPU_FRACTION_OF_MEDIAN of the median GPU a faulty node; each refuses *every* figure of
   the report. A figure whose datasheet bound is unknown is refused alone.
3. The fabric: only multi-node runs whose world collective went over RDMA (or GCP's
   GPUDirect-TCPX on instances whose catalog fabric is gpudirect_tcpx) calibrate the
   cross-node bandwidth; plain TCP sockets never do.
4. Combination: the figures of one kind and key combine by their median over reports, p10/p90
   by their envelope; reports more than 1/MIN_GPU_FRACTION_OF_MEDIAN apart on a figure
   calibrate nothing for it (`_disagreement`, workload layers too), each listed as refused.
5. Node counts: the cross-node figure is kept per measured node count; `Calibration.inter`
   interpolates in log2(nodes) between them and returns None outside (no extrapolation).
6. Workload layers, keyed by (accelerator, framework, layer shape): only full runs (a GPU, not
   quick, every GPU of the catalog instance, every rank reporting, no failure, tp = 1). Bounds
   on the median, on every GPU and on the P10/P90 (over steps and GPUs: the range is drawn
   from them): faster than the layer's model FLOPs at the datasheet peak is impossible, over
   MAX_WORKLOAD_RATIO times the model a broken run, activations above the GPU's memory or
   below the layer's input impossible, a slowest GPU over 1/MIN_GPU_FRACTION_OF_MEDIAN times
   the median a faulty node, a P10 under MIN_GPU_FRACTION_OF_MEDIAN of the median or a P90
   over its inverse a faulty or edited run (`_spread_refusal`); each refuses the whole report.
   The modelled figures (``planner.model.model_layer``) are computed when the calibration is
   built, with the hardware figures `estimate` uses. `Calibration.workload` returns the exact
   shape, else interpolates the ratios of comparable shapes within MAX_WORKLOAD_DISTANCE.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..model import (
    Calibration,
    CalibrationNote,
    LayerModel,
    Measurement,
    WorkloadMeasurement,
    WorkloadShape,
)

# A figure below this fraction of its datasheet bound is a broken measurement (a CPU
# fallback, the wrong GPU, a unit error), not a slow machine: real GPUs under the probes reach
# 40-90% of their matmul peak, 70-95% of HBM, and NCCL busbw rarely drops under 20% of the link.
MIN_FRACTION_OF_PEAK = 0.05
# A layer this many times slower than the model is a broken run, the same 1/20 as above.
MAX_WORKLOAD_RATIO = 1 / MIN_FRACTION_OF_PEAK
# A GPU under this fraction of the median GPU of its run is faulty (stuck at a low clock, HW
# slowdown, a degraded GPU or link): healthy GPUs of one model differ by a few percent (Sinha
# et al., SC'22; the model's gpu_speed_cv is 2%), and a power- or heat-capped one loses tens
# of percent, not half. A judgement, set wide so that no healthy node is refused for its
# spread; inside it the median still stands for the node (the model adds the straggler).
MIN_GPU_FRACTION_OF_MEDIAN = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class PerGpu:
    """One figure on each GPU of a run (each rank's own figure): the extremes, with the ranks
    that measured them, and the median over the GPUs."""

    n: int
    low: float
    low_rank: int
    high: float
    high_rank: int
    median: float

    def __post_init__(self) -> None:
        if not (self.n >= 1 and self.low <= self.median <= self.high):
            raise ValueError(f"per-GPU figures: expected n >= 1 and low <= median <= high, got "
                             f"n {self.n}, {self.low}, {self.median}, {self.high}")

    @classmethod
    def of(cls, values: Iterable[tuple[int, float]]) -> PerGpu | None:
        """From (rank, value) pairs; None without any."""
        pairs = sorted(values, key=lambda rv: (rv[1], rv[0]))
        if not pairs:
            return None
        mid = len(pairs) // 2  # (a + b) / 2 overflows for b near 1e308: halve first
        median = pairs[mid][1] if len(pairs) % 2 else pairs[mid - 1][1] / 2 + pairs[mid][1] / 2
        return cls(n=len(pairs), low=pairs[0][1], low_rank=pairs[0][0], high=pairs[-1][1],
                   high_rank=pairs[-1][0], median=min(max(median, pairs[0][1]), pairs[-1][1]))


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
    per_gpu: PerGpu | None = None  # each GPU's figure (matmul, hbm), when the ranks gave one
    refusal: str | None = None  # the report's or the instance's reason, if any

    @property
    def label(self) -> str:
        return {"report": f"report {self.report_id}", "matmul": f"{self.accelerator} {self.dtype}",
                "hbm": self.accelerator,
                "intra": self.instance_type or f"{self.accelerator} x{self.gpus_per_node}",
                }.get(self.kind, f"{self.instance_type} x {self.nodes} nodes")


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
    per_gpu_seconds: PerGpu | None = None  # each GPU's forward + backward seconds per layer
    per_gpu_memory_bytes: PerGpu | None = None  # each GPU's activation bytes per layer
    attention_backend: str | None = None
    modelled: LayerModel | None = None
    peak_tflops: float | None = None  # datasheet dense peak of the precision
    memory_bytes: float | None = None  # the GPU's memory
    refusal: str | None = None

    @property
    def label(self) -> str:
        return f"{self.accelerator} {self.framework} {self.shape.label}"


# -- the rules -------------------------------------------------------------------------------
def _bounds_refusal(c: Candidate) -> tuple[str | None, bool]:
    """(reason, whole_report): a figure outside its datasheet bounds, or without one."""
    if c.value is None:
        return "no value", False
    if c.bound is None:
        return f"no datasheet figure ({c.bound_source}) to bound it", False
    bound = f"the datasheet {c.bound:,.4g} {c.unit} ({c.bound_source})"
    if c.value > c.bound:
        return f"{c.value:,.4g} {c.unit} is above {bound}: impossible", True
    if c.p90 is not None and c.p90 > c.bound:  # a median can hide GPUs reporting the impossible
        return (f"its P90 (over GPUs, or one GPU's repeats), {c.p90:,.4g} {c.unit}, is above "
                f"{bound}: impossible", True)
    g = c.per_gpu  # a P90 still hides the fastest GPU or two of ten: bound each GPU
    if g is not None and g.high > c.bound:
        return (f"rank {g.high_rank}'s {g.high:,.4g} {c.unit} is above {bound}: impossible "
                "(an edited report or a broken timer). To fix: re-run the probes", True)
    floor = MIN_FRACTION_OF_PEAK * c.bound
    if c.value < floor:
        return (f"{c.value:,.4g} {c.unit} is below {MIN_FRACTION_OF_PEAK:.0%} of {bound}: a "
                "broken measurement", True)
    if g is not None and g.low < floor:
        return (f"rank {g.low_rank}'s {g.low:,.4g} {c.unit} is below {MIN_FRACTION_OF_PEAK:.0%} "
                f"of {bound}: a broken GPU or measurement. To fix: check that GPU "
                "(nvidia-smi -q: clocks, XID errors) and re-run the probes", True)
    if g is not None and g.low < MIN_GPU_FRACTION_OF_MEDIAN * g.median:
        return (f"rank {g.low_rank}'s {g.low:,.4g} {c.unit} is under "
                f"{MIN_GPU_FRACTION_OF_MEDIAN:.0%} of the median GPU's {g.median:,.4g}: the "
                "report describes a faulty node, not this GPU model. To fix: check that GPU "
                "(nvidia-smi -q: clocks, XID errors) and re-run the probes on a healthy node",
                True)
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
    value = _median([c.value for c in group])
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
    """(reason, whole_report) for a workload layer outside what the hardware allows, on the
    median GPU, on any one GPU or in its P10/P90 (rule 6)."""
    if c.modelled is None:
        return "the planner cannot model this layer here (no datasheet figures)", False
    g = c.per_gpu_seconds
    # (seconds, who): the median, the fastest and the slowest GPU, then the P10 and P90 (over
    # steps and GPUs: what the range of every estimate is drawn from) held to the same bounds
    fast = [(c.measured_layer_seconds, "")] + ([(g.low, f"rank {g.low_rank}: ")] if g else []) \
        + ([(c.p10, _P10)] if c.p10 is not None else [])
    slow = [(c.measured_layer_seconds, "")] + ([(g.high, f"rank {g.high_rank}: ")] if g else []) \
        + ([(c.p90, _P90)] if c.p90 is not None else [])
    if c.peak_tflops:
        fastest = c.modelled.flops / (c.peak_tflops * 1e12)
        for seconds, who in fast:
            if seconds < fastest:
                return (f"{who}{seconds * 1e3:,.4g} ms per layer is faster than its "
                        f"{c.modelled.flops:.3g} FLOPs at the datasheet peak "
                        f"{c.peak_tflops:,.4g} TFLOP/s ({fastest * 1e3:,.4g} ms): impossible",
                        True)
    slowest = MAX_WORKLOAD_RATIO * c.modelled.layer_seconds
    for seconds, who in slow:
        if seconds > slowest:
            return (f"{who}{seconds * 1e3:,.4g} ms per layer is over {MAX_WORKLOAD_RATIO:g}x "
                    f"the modelled {c.modelled.layer_seconds * 1e3:,.4g} ms: a broken "
                    "measurement (a wrong device, a CPU fallback)", True)
    if g is not None and g.high * MIN_GPU_FRACTION_OF_MEDIAN > g.median:
        return (f"rank {g.high_rank}'s {g.high * 1e3:,.4g} ms per layer is over "
                f"{1 / MIN_GPU_FRACTION_OF_MEDIAN:g}x the median GPU's {g.median * 1e3:,.4g} "
                "ms: the report describes a faulty node, not this GPU model. To fix: check "
                "that GPU (nvidia-smi -q: clocks, XID errors) and re-run on a healthy node",
                True)
    if spread := _spread_refusal(c):
        return spread, True
    m = c.per_gpu_memory_bytes
    for value, who in ((c.measured_layer_memory_bytes, ""),
                       (m.high if m else None, f"rank {m.high_rank if m else 0}: ")):
        if value is not None and c.memory_bytes and value > c.memory_bytes:
            return (f"{who}{value / 2**30:,.1f} GiB of activations per layer is above the "
                    f"GPU's {c.memory_bytes / 2**30:,.0f} GiB: impossible", True)
    # every layer keeps at least its 16-bit input for backward, under any recomputation
    floor = 2.0 * c.shape.hidden * c.shape.tokens
    for value, who in ((c.measured_layer_memory_bytes, ""),
                       (m.low if m else None, f"rank {m.low_rank if m else 0}: ")):
        if value is not None and value < floor:
            return (f"{who}{value / 2**20:,.1f} MiB of activations per layer is below the "
                    f"layer's own input ({floor / 2**20:,.1f} MiB), which backward needs in "
                    "any recomputation: impossible", True)
    return None, False


_P10, _P90 = "its P10 over steps and GPUs: ", "its P90 over steps and GPUs: "


def _spread_refusal(c: WorkloadCandidate) -> str | None:
    """A P10 under MIN_GPU_FRACTION_OF_MEDIAN of the median, or a P90 over its inverse. Every
    step runs the same work: a tenth of the steps (or GPUs) twice as fast as the median is
    impossible (an edit, a broken timer), at half speed a faulty run — the factor that refuses
    a faulty GPU. An honest run's P10-P90 spans a few percent (0.99-1.02 of its median on the
    H200 of docs/probes.md)."""
    median, half = c.measured_layer_seconds, MIN_GPU_FRACTION_OF_MEDIAN
    if c.p10 is not None and c.p10 < half * median:
        return (f"{_P10}{c.p10 * 1e3:,.4g} ms per layer is under {half:.0%} of its median "
                f"{median * 1e3:,.4g} ms: steps of the same work cannot run twice as fast as "
                "the median (an edited report or a broken timer). To fix: re-run the probes")
    if c.p90 is not None and c.p90 * half > median:
        return (f"{_P90}{c.p90 * 1e3:,.4g} ms per layer is over {1 / half:g}x its median "
                f"{median * 1e3:,.4g} ms: a tenth of the steps or GPUs ran at half speed or "
                "worse, a faulty run (a throttled GPU, another process) or an edited report. "
                "To fix: check the node (nvidia-smi -q: clocks, XID errors) and re-run")
    return None


def _disagreement(pairs: list[tuple[float, int]], shown) -> str | None:
    """Why the reports of one figure ((value, report id) each; hardware or workload) calibrate
    nothing: the largest over 1/MIN_GPU_FRACTION_OF_MEDIAN times the smallest, as a faulty GPU
    within one report (two reports 15x apart gave a median nobody measured); else None."""
    if len(pairs) < 2:
        return None
    (low, low_id), (high, high_id) = min(pairs), max(pairs)
    if high <= low / MIN_GPU_FRACTION_OF_MEDIAN:
        return None
    return (f"the reports of this figure disagree more than {1 / MIN_GPU_FRACTION_OF_MEDIAN:g}x "
            f"({shown(low)} in report {low_id}, {shown(high)} in report {high_id}): none is "
            "used. To fix: remove the wrong one (`gpuplan probe remove ID`) or re-run the "
            "probes on a healthy node")


def _combine_workload(group: list[WorkloadCandidate]) -> WorkloadMeasurement:
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
        group = sorted(group, key=lambda c: c.report_id)
        mib = [(c.measured_layer_memory_bytes / 2**20, c.report_id) for c in group
               if c.measured_layer_memory_bytes is not None]
        why = _disagreement([(c.measured_layer_seconds * 1e3, c.report_id) for c in group],
                            lambda v: f"{v:,.4g} ms") or _disagreement(
            mib, lambda v: f"{v:,.1f} MiB of activations")
        if why is not None:
            refused += [CalibrationNote(kind="workload", key=c.label,
                                        value=c.measured_layer_seconds * 1e3, unit="ms/layer",
                                        report_ids=(c.report_id,), reason=why) for c in group]
            continue
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
    for kind, c, (why, whole) in [
            *((c.kind, c, _bounds_refusal(c)) for c in candidates if c.refusal is None),
            *(("workload", w, _workload_bounds(w)) for w in workloads if w.refusal is None)]:
        if whole:
            distrusted.setdefault(c.report_id, f"{kind} {c.label}: {why}")
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
        why = _disagreement([(c.value, c.report_id) for c in group], lambda v: f"{v:,.4g}")
        if why is not None:
            rejected += [CalibrationNote(kind=c.kind, key=_key_label(mapping, key),
                                         value=c.value, unit=c.unit, report_ids=(c.report_id,),
                                         reason=why) for c in group]
            continue
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

