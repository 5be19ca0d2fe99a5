"""What a probe run measured, as one comparable record: a copy of a stored run (re-saved,
renamed, re-dated, relabelled, or with its figures nudged) is recognised as that run, at
ingest (``_reports._same_run``) and when the calibration loads (``_calibrate._candidates``),
so one run counts once in a median."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass

# Two real runs' timed figures differ by far more than this (timer resolution and noise are
# 1e-4 and up), and the probe's derived figures agree to float rounding (1e-15), so a report
# whose every figure is within it of a stored run's is that run, nudged (probes._consistency
# holds an honest report to the same 1e-6).
SAME_RUN_REL = 1e-6


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """What a run measured, as ``measurement_fingerprint`` reads it: the shape of its figures
    (a sha256 of them with every number left out) and the numbers, in order."""
    shape: str
    values: tuple[float, ...]

    def same_run(self, other: Fingerprint) -> str | None:
        """"" (the very figures) or the tolerance (within SAME_RUN_REL) when ``other`` is the
        same run's; None when it is another run's."""
        if self.shape != other.shape or len(self.values) != len(other.values):
            return None
        if self.values == other.values:
            return ""
        return (f", within a relative {SAME_RUN_REL:g}" if all(
            _close(a, b) for a, b in zip(self.values, other.values, strict=True)) else None)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=SAME_RUN_REL, abs_tol=1e-300)


# Numbers of a report that are settings, not measurements (the rest — times, rates, bytes
# measured, spreads — are): a copy with a setting edited (warm-up 21 s, 22 s, … on 200 copies of
# one run) is still that run's measurements, and counted 200 times it outvoted another run
_SETTING_SECONDS = frozenset({"warmup_seconds", "timeout_seconds", "target_seconds_per_repeat"})
_MEASURED_KEYS = frozenset({"value", "p10", "p50", "p90", "min", "max", "check_rel_error",
                            "tokens_per_second", "layer_activation_bytes", "layer_saved_bytes",
                            "peak_memory_bytes"})


def _measured(key: str | None) -> bool:
    """Whether a number under ``key`` is a measurement (None: inside the ranks' own lists)."""
    return (key is None or key in _MEASURED_KEYS or "tflops" in key or "gb_per_s" in key
            or "seconds" in key and key not in _SETTING_SECONDS)


def _split(value, values: list[float], key: str | None = None):
    """``value`` (a section as ``dataclasses.asdict`` gives it) with each number replaced by
    "#"; the measured ones (``_measured``) appended to ``values`` as floats, so 650 and 650.0
    (a file re-saved by hand) are the same figure."""
    if isinstance(value, dict):
        return {k: _split(v, values, k) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_split(v, values, key) for v in value]
    if isinstance(value, int | float) and not isinstance(value, bool):
        if _measured(key):
            values.append(float(value))
        return "#"
    return value


def measurement_fingerprint(report) -> Fingerprint | None:
    """What the run measured: each rank's own figures (matmul, memory, workload),
    the probes' sections (their points, spreads and checks) and the kind of device they ran
    on (the environment's device_type; none without an environment); not the file's
    formatting, nor the facts that name the run — the rest of the environment (hostname,
    instance, versions), the ranks' hosts, devices and GPU UUIDs, timestamps, duration,
    quick flag, errors, nor the values of its settings (warm-up, repeats, shapes and sizes:
    ``_measured``). So a copy of one run re-saved, renamed, re-dated, relabelled or with a
    setting edited has the same fingerprint and counts once, and so does one with its figures
    nudged within SAME_RUN_REL, while two real runs never agree: their timed figures differ
    far more.
    A copy without its environment section is another
    report: it calibrates nothing (what it measured is unknown), and taken for the GPU run
    it would have hidden that run's figures from the calibration.
    None when the report measured nothing (then only identical bytes are the same report)."""
    ranks = [[r.rank, *(sorted([nv.name, float(nv.value)] for nv in values)
                        for values in (r.matmul_best_tflops, r.memory_gb_per_s, r.workload))]
             for r in sorted(report.ranks, key=lambda r: r.rank)]
    sections = [report.matmul, report.memory, report.collectives, report.workload]
    if not (any(r[1] or r[2] or r[3] for r in ranks) or _timed(report)):
        return None
    device = report.environment.device_type if report.environment is not None else None
    content = [ranks, *(None if s is None else dataclasses.asdict(s) for s in sections),
               device]
    values: list[float] = []
    text = json.dumps(_split(content, values), separators=(",", ":"))
    return Fingerprint(hashlib.sha256(text.encode()).hexdigest(), tuple(values))


def _timed(report) -> dict[str, object]:
    """The report's timed sections that measured something (points, a series with points,
    a measured layer), by name: what a fingerprint of the run, or of one section, reads."""
    mm, mem, col, w = report.matmul, report.memory, report.collectives, report.workload
    found = {"matmul": mm is not None and bool(mm.points),
             "memory": mem is not None and bool(mem.points),
             "collectives": col is not None and any(s.points for s in col.series),
             "workload": w is not None and w.status == "measured"}
    return {name: getattr(report, name) for name, yes in found.items() if yes}


# A report's timed sections, with the ranks' own figures of each (None: the section alone)
SECTIONS = {"matmul": "matmul_best_tflops", "memory": "memory_gb_per_s", "collectives": None,
            "workload": "workload"}


def section_fingerprints(report) -> dict[str, str]:
    """A sha256 of each timed section that measured something (its points, series or layer,
    with each rank's own figures of it), by section name (SECTIONS). Two runs never time a
    section to the same bits, so a report one of whose sections is another's bit for bit (a
    partial copy: another run's matmul pasted over a copy of the rest) holds that run's
    measurements for it: they count once (``_calibrate._candidates``)."""
    out = {}
    for name, sec in _timed(report).items():
        attr = SECTIONS[name]
        ranks = [] if attr is None else [
            [r.rank, sorted([nv.name, repr(float(nv.value))] for nv in getattr(r, attr))]
            for r in sorted(report.ranks, key=lambda r: r.rank)]
        text = json.dumps([dataclasses.asdict(sec), ranks], sort_keys=True, default=repr)
        out[name] = hashlib.sha256(text.encode()).hexdigest()
    return out


def rows_close(have: list, want: list) -> bool:
    """Two reports' sorted measurement rows (kind, key, value) are one run's, within
    SAME_RUN_REL: the cheap test before their fingerprints are compared."""
    return len(have) == len(want) and all(
        (a[0], a[1]) == (b[0], b[1])
        and _close(float(a[2]), b[2])
        for a, b in zip(have, want, strict=True))
