"""What a probe run measured, as one comparable record: a copy of a stored run (re-saved,
renamed, re-dated, relabelled, with its figures nudged, or with anything edited that no rule
reads: a warm-up burst, a point off the best, notes) is recognised as that run, at ingest
(``_reports._same_run``) and when the calibration loads (``_calibrate._candidates``), so one
run counts once in a median. Only the figures that calibrate are compared: a copy whose
burst alone was x1.01 was another run, and moved an 8-H200 estimate by +13%."""

from __future__ import annotations

import hashlib
import json
import math

from catalog import record

from ._offered import measurement_rows, workload_figures

# Two real runs' timed figures differ by far more than this (timer resolution and noise are
# 1e-4 and up), and the probe's derived figures agree to float rounding (1e-15), so a report
# whose every figure is within it of a stored run's is that run, nudged (probes._consistency
# holds an honest report to the same 1e-6).
SAME_RUN_REL = 1e-6


@record(kw_only=False)
class Fingerprint:
    """What a run measured, as ``measurement_fingerprint`` reads it: the shape of its figures
    (a sha256 of which figures it gives, with every number left out), the numbers, in order,
    and the kind of device it says it ran on (None: no environment section)."""
    shape: str
    values: tuple[float, ...]
    device: str | None = None

    def same_run(self, other: Fingerprint) -> str | None:
        """"" (the very figures) or the tolerance (within SAME_RUN_REL) when ``other``, a
        report stored or read after this one, is the same run's; None when it is another
        run's. A GPU report is never the run of one that says it measured no GPU (a copy
        relabelled "cpu", or without its environment, stored first): taken for that run, the
        GPU run's figures would calibrate nothing."""
        if self.shape != other.shape or len(self.values) != len(other.values):
            return None
        if self.device != other.device and other.device == "cuda":
            return None
        if self.values == other.values:
            return ""
        return (f", within a relative {SAME_RUN_REL:g}" if all(
            _close(a, b) for a, b in zip(self.values, other.values, strict=True)) else None)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SAME_RUN_REL, abs_tol=1e-300)


# A report's timed sections, with the ranks' own figures of each (None: the section alone)
SECTIONS = {"matmul": "matmul_best_tflops", "memory": "memory_gb_per_s", "collectives": None,
            "workload": "workload"}
_SECTION_OF_KIND = {"matmul": "matmul", "hbm": "memory", "intra": "collectives",
                    "inter": "collectives"}
_SECTION_OF_ROW = {"matmul_tflops": "matmul", "device_copy_gb_per_s": "memory",
                   "device_triad_gb_per_s": "memory", "busbw_intra_gb_per_s": "collectives",
                   "busbw_world_gb_per_s": "collectives", "workload_layer_ms": "workload",
                   "workload_layer_activation_mib": "workload"}
_WORKLOAD_FIGURES = ("seconds", "p10", "p90", "memory_bytes", "optimizer_seconds")


def _calibrating(report) -> list[tuple[str, list, float | None]]:
    """(section, key, value) of every figure of ``report`` that calibrates or is stored for
    it, as planner/store reads them: each rank's own figures, each figure ``report_figures``
    offers (its value, p10 and p90: the best matmul point's, the plateau message's), an fp8
    accuracy check's error (whether fp8 calibrates), the measurement rows ingest stores, and
    the workload layer (``workload_figures``). Nothing else: not free text (notes, reasons,
    sources), nor the figures no rule reads (the warm-up burst, points off the best and the
    plateau, settings), so a copy with those edited is still the run it was copied from."""
    from probes import report_figures

    out: list[tuple[str, list, float | None]] = []
    for r in sorted(report.ranks, key=lambda r: r.rank):
        for section, attr in SECTIONS.items():
            for nv in sorted(getattr(r, attr) if attr else (), key=lambda nv: nv.name):
                out.append((section, ["rank", r.rank, attr, nv.name], nv.value))
    for f in report_figures(report):
        for what in ("value", "p10", "p90"):
            out.append((_SECTION_OF_KIND[f.kind], ["figure", f.kind, f.name, what],
                        getattr(f, what)))
    for d in report.matmul.dtypes if report.matmul else ():  # fp8 calibrates by its check
        if d.check_rel_error is not None:
            out.append(("matmul", ["check", d.dtype], d.check_rel_error))
    for kind, key, value, _ in sorted(measurement_rows(report), key=lambda row: row[:2]):
        out.append((_SECTION_OF_ROW.get(kind, kind), ["row", kind, key], value))
    if report.workload is not None:  # a quick layer (5 steps) is refused, a full one is not
        out.append(("workload", ["workload quick", bool(report.workload.quick)], None))
    w = workload_figures(report)
    for what in _WORKLOAD_FIGURES if w is not None else ():
        out.append(("workload", ["layer", w["framework"], what], w[what]))
    return out


def _fingerprint(items, device: str | None = None) -> Fingerprint | None:
    """The items' keys (with whether each has a number) as the shape, their numbers as the
    values, as floats (650 and 650.0, a file re-saved by hand, are one figure); None when
    there is no number at all."""
    shape, values = [], []
    for _, key, value in items:  # a None value: the key alone (a figure not given, a flag)
        number = value is not None and not isinstance(value, bool)
        shape.append([*key, "#" if number else None])
        if number:
            values.append(float(value))
    if not values:
        return None
    text = json.dumps(shape, separators=(",", ":"), default=repr)
    return Fingerprint(hashlib.sha256(text.encode()).hexdigest(), tuple(values), device)


def measurement_fingerprint(report) -> Fingerprint | None:
    """What the run measured: the figures that calibrate (``_calibrating``: each rank's own
    figures, the figures the rules read from the probes' sections, the stored measurement
    rows, the workload layer) and the kind of device it says it ran on (the environment's
    device_type; None without an environment). Not the file's formatting, nor the facts that
    name the run — the rest of the environment (hostname, instance, versions), the ranks'
    hosts, devices and GPU UUIDs, timestamps, duration, quick flag, errors —, nor its
    settings (warm-up, repeats, shapes and sizes), its free text (notes, reasons, sources) or
    the figures no rule reads (the warm-up burst, the sweep's other points). So a copy of one
    run re-saved, renamed, re-dated, relabelled or with any of those edited has the same
    fingerprint and counts once, and so does one with its figures nudged within
    SAME_RUN_REL, while two real runs never agree: their timed figures differ far more.
    A GPU report is not the run of a copy without its environment section, or one that says
    it measured no GPU, stored before it (``Fingerprint.same_run``): those calibrate nothing,
    and taken for the GPU run they would hide its figures from the calibration.
    None when the report measured nothing (then only identical bytes are the same report)."""
    device = report.environment.device_type if report.environment is not None else None
    return _fingerprint(_calibrating(report), device)


def _timed(report) -> dict[str, object]:
    """The report's timed sections that measured something (points, a series with points,
    a measured layer), by name: what a fingerprint of one section reads."""
    mm, mem, col, w = report.matmul, report.memory, report.collectives, report.workload
    found = {"matmul": mm is not None and bool(mm.points),
             "memory": mem is not None and bool(mem.points),
             "collectives": col is not None and any(s.points for s in col.series),
             "workload": w is not None and w.status == "measured"}
    return {name: getattr(report, name) for name, yes in found.items() if yes}


def section_fingerprints(report) -> dict[str, Fingerprint]:
    """The fingerprint of each timed section that measured something (the figures of it that
    calibrate, with each rank's own figures of it: ``_calibrating``), by section name
    (SECTIONS). Two runs never time a section to within SAME_RUN_REL, so a report one of
    whose sections is another's (a partial copy: another run's matmul pasted over a copy of
    the rest, its warm-up burst or notes edited or not) holds that run's measurements for
    it: they count once (``_calibrate._candidates``)."""
    items = _calibrating(report)
    out = {}
    for name in _timed(report):
        found = _fingerprint([item for item in items if item[0] == name])
        if found is not None:
            out[name] = found
    return out


def rows_close(have: list, want: list) -> bool:
    """Two reports' sorted measurement rows (kind, key, value) are one run's, within
    SAME_RUN_REL: the cheap test before their fingerprints are compared."""
    return len(have) == len(want) and all(
        (a[0], a[1]) == (b[0], b[1])
        and _close(float(a[2]), b[2])
        for a, b in zip(have, want, strict=True))
