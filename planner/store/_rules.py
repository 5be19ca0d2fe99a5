"""The rules that decide which probe measurements calibrate the model, and the ``Calibration``
(``planner.model``) they build.

``_calibrate`` turns every stored report into ``Candidate`` figures (and a ``WorkloadCandidate``
for a workload probe's layer) with the datasheet bounds each must respect; ``calibrate``
applies the rules below and returns the Calibration, listing every figure as used or refused.
Pure: no database, no files.

The rules (`calibrate`; docs/probes.md, "What calibrates the planner", says each in full):

1. The report's own facts (probes._figures): quick mode, CPU runs, schema 1, MIG, custom
   shapes, a probe that failed on any rank, a missing rank, fp8 that failed its check, a
   message short of the busbw plateau, a partial node, a throttled node — each refuses the
   figure. A GPU name
   that is not its catalog instance's GPU, and a copy of an earlier report's measurements
   (``_fingerprint``), refuse the report whole (ingest refuses both too; this covers reports
   stored before it did).
2. Physical bounds, on the median, the P90 and every GPU: above the datasheet peak is
   impossible, below MIN_FRACTION_OF_PEAK of it a broken measurement, a slowest GPU under
   MIN_GPU_FRACTION_OF_MEDIAN of the median GPU a faulty node; each refuses *every* figure of
   the report (a warm-up burst over twice the sweep's best is refused as an edit by
   probes._gpu_state). A figure whose datasheet bound is unknown is refused alone.
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
   below the layer's input impossible (without full recomputation, below MIN_ACTIVATION_RATIO
   of the modelled count a broken count), a slowest GPU over 1/MIN_GPU_FRACTION_OF_MEDIAN
   times the median a faulty node, a P10 under MIN_GPU_FRACTION_OF_MEDIAN of the median or a
   P90 over its inverse a faulty or edited run (`spread_refusal`); each refuses the whole
   report (planner.store._bounds holds rules 2 and 6).
   The modelled figures (``planner.model.model_layer``) are computed when the calibration is
   built, with the hardware figures `estimate` uses. `Calibration.workload` returns the exact
   shape, else interpolates the ratios of comparable shapes within MAX_WORKLOAD_DISTANCE.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import Any

from ..model import (
    FAR_FROM_DEFAULT,
    Calibration,
    CalibrationNote,
    Measurement,
    WorkloadMeasurement,
    WorkloadShape,
)
from ._bounds import (
    MAX_WORKLOAD_RATIO,
    MIN_ACTIVATION_RATIO,
    MIN_FRACTION_OF_PEAK,
    MIN_GPU_FRACTION_OF_MEDIAN,
    Candidate,
    PerGpu,
    WorkloadCandidate,
    bounds_refusal,
    plausibility_caution,
    workload_bounds,
)

# the records and the bounds (rules 2 and 6) are planner.store._bounds'; the names stay here
__all__ = ["MAX_WORKLOAD_RATIO", "MIN_ACTIVATION_RATIO", "MIN_FRACTION_OF_PEAK",
           "MIN_GPU_FRACTION_OF_MEDIAN", "Candidate", "PerGpu", "WorkloadCandidate",
           "calibrate"]


# A report older than this is used with a caution (an estimate says so in its warnings):
# drivers, CUDA, NCCL and the framework move what the same GPU reaches by tens of percent
# within a year (a CUDA or NCCL release that changes kernels or algorithms; a driver's clocks
# and power management), and a year-old report was often made on another software stack.
MAX_REPORT_AGE_DAYS = 365


def _age_caution(group, today: dt.date | None) -> tuple[str, ...]:
    """The caution for the reports of ``group`` measured more than MAX_REPORT_AGE_DAYS before
    ``today`` (none when none is, or no day is given)."""
    if today is None:
        return ()
    old = []
    for c in group:
        try:
            day = dt.date.fromisoformat(c.created_utc[:10])
        except (TypeError, ValueError):
            continue
        if (today - day).days > MAX_REPORT_AGE_DAYS:
            old.append(f"report {c.report_id} was measured {day.isoformat()}, "
                       f"{(today - day).days / 30.44:.0f} months before {today.isoformat()}")
    if not old:
        return ()
    return (f"{'; '.join(old)}, more than {MAX_REPORT_AGE_DAYS} days: drivers, CUDA, NCCL and "
            "the framework have changed since, and so may the figure; re-run the probes on "
            "today's software stack",)


def _workload_caution(m: WorkloadMeasurement) -> tuple[str, ...]:
    """The caution for a workload layer whose measured time is outside [1/FAR_FROM_DEFAULT,
    FAR_FROM_DEFAULT] of the model, or whose activations are over FAR_FROM_DEFAULT times it:
    the honest H200 run of docs/probes.md measured 1.05 (time) and 1.00 (memory), and the
    model's own error is tens of percent, so a factor 2 is a broken, throttled or
    mis-configured run more often than the model (1/20 and 20x are refused: MAX_WORKLOAD_RATIO;
    activations over MAX_ACTIVATION_RATIO are refused too)."""
    said = []
    if not 1 / FAR_FROM_DEFAULT <= m.time_ratio <= FAR_FROM_DEFAULT:
        said.append(f"measured/modelled layer time {m.time_ratio:.2f}, outside "
                    f"{1 / FAR_FROM_DEFAULT:g}–{FAR_FROM_DEFAULT:g}")
    if m.memory_ratio is not None and m.memory_ratio > FAR_FROM_DEFAULT:
        said.append(f"measured activations {m.memory_ratio:.1f}x the modelled")
    if not said:
        return ()
    return (f"{' and '.join(said)}: more often a throttled, shared or mis-configured run than "
            "the model",)


# -- the rules -------------------------------------------------------------------------------
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


_KIND_OF = {"matmul_tflops": "matmul", "hbm_gb_per_s": "hbm", "intra_busbw_gb_per_s": "intra",
            "intra_node_busbw_gb_per_s": "intra", "inter_busbw_gb_per_s": "inter"}


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2




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


def _workload_notes(workloads: list[WorkloadCandidate], distrusted: dict[int, str],
                    today: dt.date | None = None
                    ) -> tuple[dict, list[CalibrationNote], list[CalibrationNote]]:
    """(workload_layers, used notes, refused notes) by rule 6."""
    groups: dict[tuple[str, str, WorkloadShape], list[WorkloadCandidate]] = {}
    refused = []
    for c in workloads:
        why = c.refusal or workload_bounds(c)[0]
        if why is None and c.report_id in distrusted:
            why = f"another figure of this report is out of bounds ({distrusted[c.report_id]})"
        why = why or c.copy_of
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
            unit="ms/layer", report_ids=m.report_ids,
            reason=f"{how}; {m.summary()}",
            cautions=(*_workload_caution(m), *_age_caution(group, today))))
    return layers, used, refused


def calibrate(candidates: Iterable[Candidate], *,
              workloads: Iterable[WorkloadCandidate] = (),
              today: dt.date | None = None) -> Calibration:
    """Apply the rules of the module docstring; every candidate is used or listed as refused.
    ``today``: the day reports' ages are counted to (a used figure from a report older than
    MAX_REPORT_AGE_DAYS carries a caution); None counts no age."""
    candidates = list(candidates)
    workloads = list(workloads)
    distrusted: dict[int, str] = {}
    for kind, c, (why, whole) in [
            *((c.kind, c, bounds_refusal(c)) for c in candidates if c.refusal is None),
            *(("workload", w, workload_bounds(w)) for w in workloads if w.refusal is None)]:
        if whole:
            distrusted.setdefault(c.report_id, f"{kind} {c.label}: {why}")
    used: dict[tuple[str, Any], list[Candidate]] = {}
    rejected: list[CalibrationNote] = []
    for c in candidates:
        why = c.refusal
        if why is None:
            why, _ = bounds_refusal(c)
        if why is None and c.report_id in distrusted:
            why = f"another figure of this report is out of bounds ({distrusted[c.report_id]})"
        why = why or c.copy_of
        if why is not None:
            rejected.append(CalibrationNote(kind=c.kind, key=c.label, value=c.value,
                                            unit=c.unit, report_ids=(c.report_id,),
                                            reason=why))
            continue
        for mapping, key in _keys(c):
            used.setdefault((mapping, key), []).append(c)
        if c.kind == "intra" and c.stated_instance and not c.instance_type:
            # the figure is used for its GPUs per node, not for the instance it names: say so
            rejected.append(CalibrationNote(
                kind="intra", key=c.stated_instance, value=c.value, unit=c.unit,
                report_ids=(c.report_id,),
                reason=f"instance type {c.stated_instance!r} is not in the catalog: the figure "
                       f"calibrates {c.accelerator} x{c.gpus_per_node} per node only, not an "
                       "instance type. To fix: `gpuplan catalog refresh`, or ingest with the "
                       "catalog's name of the instance"))
    maps: dict[str, dict] = {}
    notes = []
    for (mapping, key), group in sorted(used.items(), key=lambda kv: str(kv[0])):
        why = _disagreement([(c.value, c.report_id) for c in group], lambda v: f"{v:,.4g}")
        if why is not None:
            rejected += [CalibrationNote(kind=c.kind, key=Calibration.key_label(mapping, key),
                                         value=c.value, unit=c.unit, report_ids=(c.report_id,),
                                         reason=why) for c in group]
            continue
        m = _combine(group)
        maps.setdefault(mapping, {})[key] = m
        how = (f"median of {m.n_reports} reports" if m.n_reports > 1 else "one report")
        if m.p10 is not None and m.p90 is not None:
            how += f"; p10 {m.p10:,.1f}, p90 {m.p90:,.1f}"
        cautions = (*_age_caution(group, today),
                    *(said for c in group if (said := plausibility_caution(c))))
        notes.append(CalibrationNote(kind=_KIND_OF[mapping],
                                     key=Calibration.key_label(mapping, key), value=m.value,
                                     unit=m.unit, report_ids=m.report_ids, reason=how,
                                     cautions=cautions))
    layers, used_layers, refused_layers = _workload_notes(workloads, distrusted, today)
    return Calibration(**maps, workload_layers=layers, used_notes=(*notes, *used_layers),
                       rejected_notes=tuple(sorted((*rejected, *refused_layers),
                                                   key=lambda n: n.report_ids)))

