"""Figures of one report that contradict each other (torch-free; probes._figures calls these
where it decides refusals, so a contradiction refuses the report's figures with its reason).

The probe writes each entry once and derives some figures from others; a report where they
disagree was edited, or stitched together from several runs, and none of its figures can be
trusted:

- repeated entries (`contradiction`): a collective series of one op and scope, a message size
  within a series, a matmul dtype, a memory point: the probe writes each once, so a second one
  (which the planner would count as a second report) was merged in or pasted;
- percentiles out of order: p10 <= median <= p90 of collective, memory and matmul points and of
  the workload's layer and step times (each triple is one set of samples);
- derived figures that are not what the raw ones give, as probes._collectives, probes._memory
  and probes._matmul compute them: algbw = size / seconds_median, busbw = algbw x 2(n-1)/n
  (all_reduce) or (n-1)/n (all_gather, reduce_scatter); counted bytes = 2N (copy), 3N (triad),
  N (transfers) and gb_per_s = counted / seconds_median; tflops = 2MNK / seconds_median and
  ``best_tflops`` = the max over the dtype's points;
- the workload's totals (probes._workload_run): per-layer figures are the all-layer ones over
  ``layers``; a step holds its forward + backward (``step_seconds`` >= ``fwd_bwd_seconds``,
  each the median over the same steps, of a sum of non-negative phases and of its first);
  the split's parts share out the layer's forward + backward; tokens per second is
  micro_batch x seq_len / step_seconds; and (`rank_0_workload_edited`) rank 0's gathered
  figures are the section's own, since the section is rank 0's;
- the run against the machine it states (`_against_environment`): a CUDA run puts local rank r
  on GPU r and stops where a rank has none (probes._timing.resolve_device), so a node runs at
  most as many ranks as CUDA shows it GPUs; and an fp8 matmul runs only at compute capability
  FP8_MIN_CAPABILITY or above.
- the run's own labels against what the probe writes (`_labels`): a CUDA run's sections time
  on a CUDA device with CUDA events under a CUDA build of torch, with NCCL; the FLOP and byte
  conventions are the probe's (another convention counts other units); no series is
  emulated (the probe never emulates a collective); nvidia-smi lists at least the GPUs the
  node's ranks ran on; a CUDA run names its GPU; schema 2 has no workload section (it came
  with schema 3); every error names a probe the runner has and a rank of the run; the
  environment's hostname is rank 0's; and the run lasted at least its warm-up.

Every reason is one line that ends with how to fix it ("To fix: re-run the probes ...").
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Hashable, Iterable

from probes._schema import ProbeReport

# How far a figure may be from what the others give. The probe derives each figure from the
# raw numbers it writes in one to three float64 operations (algbw = size / seconds / 1e9, busbw
# = algbw x factor, tflops = 2MNK / seconds / 1e12, per layer = all layers / layers) and writes
# every float with repr, which reads back bit for bit: an honest report agrees to a few ulps
# (~1e-15). The orderings hold to the same rounding: percentiles of one sample set are monotone
# (linear interpolation may overshoot an order statistic by an ulp), the median of per-step sums
# of non-negative phases is >= the median of their first phase, and split shares sum to 1.
# 1e-6 is far above that, and above float32's 6e-8 should a value pass through one (CUDA event
# times are float32), and far below any edit that would move a plan (a percent is 1e-2).
REL_TOL = 1e-6
EDITED = "the report was edited. To fix: re-run the probes and ingest the file they write"
MERGED = ("the report was edited or merged. To fix: re-run the probes and ingest the file "
          "they write")
# busbw = algbw x BUS_FACTOR[op](n) (nccl-tests' convention): probes._collectives measures
# with it and the checks below recompute with it. probes._memory's byte counting (STREAM's)
# is inline in its torch code, so COUNTED_PER_BYTE repeats it
# (tests/probes/test_report_consistency.py pins it).
BUS_FACTOR: dict[str, Callable[[int], float]] = {
    "all_reduce": lambda n: 2 * (n - 1) / n, "all_gather": lambda n: (n - 1) / n,
    "reduce_scatter": lambda n: (n - 1) / n}
_BUS_RULE = {"all_reduce": "2(n-1)/n", "all_gather": "(n-1)/n", "reduce_scatter": "(n-1)/n"}
COUNTED_PER_BYTE = {"device_copy": 2, "host_copy": 2, "device_triad": 3, "host_triad": 3,
                    "h2d_pinned": 1, "h2d_pageable": 1, "d2h_pinned": 1, "d2h_pageable": 1}
# what probes._workload_run gathers from each rank's workload section (ranks[].workload)
# fp8 tensor cores: Ada (8.9), Hopper (9.0) and later; torch's fp8 matmul refuses below (ROCm
# GPUs report gfx9 capabilities, 9.0 and up, so this never refuses an AMD run)
FP8_MIN_CAPABILITY = 8.9
RANK_WORKLOAD = ("layer_fwd_bwd_seconds", "layer_step_seconds", "layer_activation_bytes",
                 "layer_saved_bytes", "peak_memory_bytes")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-300)


def _above(a: float, b: float) -> bool:
    """``a`` exceeds ``b`` by more than rounding."""
    return a > b and not _close(a, b)


def _differs(given: float, derived: float) -> bool:
    """A figure is not what the raw ones give. A value too large to recompute in float64
    (1e308 TFLOP/s in 1e-300 s overflows) is left to the planner's datasheet bound, which
    refuses it as impossible with a clearer reason."""
    return math.isfinite(derived) and not _close(given, derived)


def _g(x: float | None) -> str:
    if x is None:
        return "none"
    return f"{x:,.0f}" if abs(x) >= 1e6 else f"{x:,.6g}"  # bytes in full, not 1.4e+09


def _twice(keys: Iterable[Hashable]) -> Hashable | None:
    return next((k for k, n in Counter(keys).items() if n > 1), None)


def contradiction(report: ProbeReport) -> str | None:
    """Why the report's figures contradict each other (None: they agree)."""
    for check in (_repeated, _out_of_order, _collectives_derived, _memory_derived,
                  _matmul_derived, _workload_derived, _against_environment, _labels):
        why = check(report)
        if why:
            return why
    return None


def _repeated(report: ProbeReport) -> str | None:
    col, mm, mem = report.collectives, report.matmul, report.memory
    series = col.series if col else ()
    key = _twice((s.op, s.scope) for s in series)
    if key:
        return (f"collective {key[0]}/{key[1]} appears twice, and the probe runs each op once "
                f"per scope: {MERGED}")
    for s in series:
        size = _twice(p.size_bytes for p in s.points)
        if size is not None:
            return (f"collective {s.op}/{s.scope}: message size {size:,} B appears twice, and "
                    f"the probe times each size once (unless --sizes repeats it): {MERGED}")
    dtype = _twice(d.dtype for d in mm.dtypes) if mm else None
    if dtype:
        return f"matmul {dtype} appears twice, and the probe sweeps each dtype once: {MERGED}"
    name = _twice(p.name for p in mem.points) if mem else None
    if name:
        return f"memory {name} appears twice, and the probe measures each once: {MERGED}"
    return None


def _out_of_order(report: ProbeReport) -> str | None:
    col, mm, mem, w = report.collectives, report.matmul, report.memory, report.workload
    triples = [(f"collective {s.op}/{s.scope} busbw at {p.size_bytes:,} B",
                p.busbw_p10_gb_per_s, p.busbw_gb_per_s, p.busbw_p90_gb_per_s)
               for s in (col.series if col else ()) for p in s.points]
    triples += [(f"memory {p.name} GB/s", p.gb_per_s_p10, p.gb_per_s, p.gb_per_s_p90)
                for p in (mem.points if mem else ()) if p.gb_per_s is not None]
    triples += [(f"matmul {p.dtype} {p.m}x{p.n}x{p.k}/{p.layout} TFLOP/s", p.tflops_p10,
                 p.tflops, p.tflops_p90) for p in (mm.points if mm else ())]
    if w is not None and w.status == "measured":
        triples += [("workload layer_fwd_bwd_seconds", w.layer_fwd_bwd_seconds_p10,
                     w.layer_fwd_bwd_seconds, w.layer_fwd_bwd_seconds_p90),
                    ("workload step_seconds", w.step_seconds_p10, w.step_seconds,
                     w.step_seconds_p90)]
    for what, p10, mid, p90 in triples:
        known = [x for x in (p10, mid, p90) if x is not None]
        if any(_above(a, b) for a, b in zip(known, known[1:], strict=False)):
            return (f"{what}: p10 {_g(p10)}, median {_g(mid)}, p90 {_g(p90)} are not in order "
                    f"(p10 <= median <= p90 of one set of samples): {EDITED}")
    return None


def _collectives_derived(report: ProbeReport) -> str | None:
    col = report.collectives
    for s in col.series if col else ():
        factor = BUS_FACTOR.get(s.op)
        for p in s.points:
            where = f"collective {s.op}/{s.scope} at {p.size_bytes:,} B"
            algbw = p.size_bytes / p.seconds_median / 1e9
            if _differs(p.algbw_gb_per_s, algbw):
                return (f"{where}: algbw {_g(p.algbw_gb_per_s)} GB/s is not size / "
                        f"seconds_median ({p.seconds_median:.6g} s) = {_g(algbw)}: {EDITED}")
            busbw = p.algbw_gb_per_s * factor(s.group_size) if factor else None
            if busbw is not None and _differs(p.busbw_gb_per_s, busbw):
                return (f"{where}: busbw {_g(p.busbw_gb_per_s)} GB/s is not algbw "
                        f"{_g(p.algbw_gb_per_s)} x {_BUS_RULE[s.op]} for {s.group_size} ranks "
                        f"= {_g(busbw)}: {EDITED}")
    return None


def _memory_derived(report: ProbeReport) -> str | None:
    for p in report.memory.points if report.memory else ():
        per_byte = COUNTED_PER_BYTE.get(p.name)
        if per_byte and p.size_bytes and p.counted_bytes \
                and p.counted_bytes != per_byte * p.size_bytes:
            return (f"memory {p.name} credits {p.counted_bytes:,} bytes to a buffer of "
                    f"{p.size_bytes:,}, and the probe credits {per_byte} x N: {EDITED}")
        if p.gb_per_s and p.counted_bytes and p.seconds_median:
            rate = p.counted_bytes / p.seconds_median / 1e9
            if _differs(p.gb_per_s, rate):
                return (f"memory {p.name}: {_g(p.gb_per_s)} GB/s is not counted_bytes / "
                        f"seconds_median = {_g(rate)}: {EDITED}")
    return None


def _matmul_derived(report: ProbeReport) -> str | None:
    mm = report.matmul
    for p in mm.points if mm else ():
        tflops = 2.0 * p.m * p.n * p.k / p.seconds_median / 1e12
        if _differs(p.tflops, tflops):
            return (f"matmul {p.dtype} {p.m}x{p.n}x{p.k}/{p.layout}: {_g(p.tflops)} TFLOP/s is "
                    f"not 2MNK / seconds_median ({p.seconds_median:.6g} s) = {_g(tflops)}: "
                    f"{EDITED}")
    for d in mm.dtypes if mm else ():
        tops = [p.tflops for p in mm.points if p.dtype == d.dtype]
        if d.status == "measured" and d.best_tflops and tops and _above(d.best_tflops,
                                                                         max(tops)):
            return (f"matmul {d.dtype}: best_tflops {_g(d.best_tflops)} is above every point "
                    f"measured (the fastest {_g(max(tops))} TFLOP/s), and the probe takes the "
                    f"max over its points: {EDITED}")
    return None


def _workload_derived(report: ProbeReport) -> str | None:
    w = report.workload
    if w is None or w.status != "measured":
        return None
    n = w.layers
    totals = (("layer_fwd_bwd_seconds", w.layer_fwd_bwd_seconds, "fwd_bwd_seconds",
               w.fwd_bwd_seconds),
              ("layer_step_seconds", w.layer_step_seconds, "step_seconds", w.step_seconds),
              ("split.optimizer_seconds", w.split and w.split.optimizer_seconds,
               "optimizer_seconds", w.optimizer_seconds))
    for per_name, per, all_name, whole in totals:
        if per is not None and whole is not None and _differs(per * n, whole):
            return (f"workload {per_name} {_g(per)} x {n} layers is {_g(per * n)} s, not "
                    f"{all_name} {_g(whole)} (the per-layer figure is the all-layer one over "
                    f"the layers): {EDITED}")
    steps = (("step_seconds", w.step_seconds, "fwd_bwd_seconds", w.fwd_bwd_seconds),
             ("layer_step_seconds", w.layer_step_seconds, "layer_fwd_bwd_seconds",
              w.layer_fwd_bwd_seconds))
    for step_name, step, part_name, part in steps:
        if step is not None and part is not None and _above(part, step):
            return (f"workload {step_name} {_g(step)} is below {part_name} {_g(part)}, a part "
                    f"of every step: {EDITED}")
    split = w.split
    parts = [x for x in (split.matmul_seconds, split.attention_seconds, split.other_seconds,
                         split.communication_seconds) if x is not None] if split else []
    if parts and _above(sum(parts), w.layer_fwd_bwd_seconds):
        return (f"workload split: matmul, attention, other and communication add up to "
                f"{_g(sum(parts))} s, more than the layer's forward + backward "
                f"({_g(w.layer_fwd_bwd_seconds)} s) they share out: {EDITED}")
    if w.tokens_per_second is not None and w.step_seconds:
        rate = w.micro_batch * w.seq_len / w.step_seconds
        if _differs(w.tokens_per_second, rate):
            return (f"workload tokens_per_second {_g(w.tokens_per_second)} is not micro_batch "
                    f"x seq_len / step_seconds = {_g(rate)}: {EDITED}")
    return None


def _against_environment(report: ProbeReport) -> str | None:
    env = report.environment
    if env is None or env.device_type != "cuda":
        return None
    # CUDA's count, not nvidia-smi's: CUDA_VISIBLE_DEVICES only lowers it, and a rank whose
    # local rank has no CUDA device stops the probe, so no run has more ranks than it
    if env.local_world_size > env.gpu_count:
        return (f"{env.local_world_size} ranks per node ran on a node that shows "
                f"{env.gpu_count} GPUs to CUDA, and the probe runs one rank per GPU: {EDITED}")
    try:
        cc = float(env.compute_capability) if env.compute_capability else None
    except ValueError:  # not a number: probes._figures refuses it with its own reason
        return None
    fp8 = next((d.dtype for d in (report.matmul.dtypes if report.matmul else ())
                if d.dtype.startswith("fp8") and d.status == "measured"), None)
    if fp8 and cc is not None and cc < FP8_MIN_CAPABILITY:
        return (f"matmul {fp8} was measured at compute capability {env.compute_capability}, "
                f"and fp8 matmuls need {FP8_MIN_CAPABILITY:g} or above: {EDITED}")
    return None


# The probes the runner writes failures for (probes._runner's _PROBES, its gather and
# shutdown steps; probes._workload_run's environment, workload and gather)
PROBE_NAMES = frozenset({"environment", "matmul", "memory", "collectives", "gather",
                         "shutdown", "workload"})
# The conventions the probe writes (probes._matmul FLOP_CONVENTION, probes._memory
# BYTE_CONVENTION; older probes wrote the short forms): a report under another counted other
# units, so its figures are not comparable to the datasheet
FLOP_CONVENTIONS = ("2*M*N*K",)
BYTE_CONVENTIONS = ("2*N", "device_copy and host_copy: 2*N bytes")
TIMINGS = frozenset({"cuda_events", "perf_counter"})  # probes._timing.timing_name
FIRST_WORKLOAD_SCHEMA = 3  # probes._schema: the workload section came with schema 3


def _labels(report: ProbeReport) -> str | None:
    """What the report says of how it measured, against what the probe writes (module
    docstring): a label the probe never writes was edited, and the figures under it may count
    other units or another device."""
    env, mm, mem, col = report.environment, report.matmul, report.memory, report.collectives
    cuda = env is not None and env.device_type == "cuda"
    for name, sec, conv, known in (("matmul", mm, mm and mm.flop_convention, FLOP_CONVENTIONS),
                                   ("memory", mem, mem and mem.byte_convention,
                                    BYTE_CONVENTIONS)):
        if sec is None:
            continue
        if not str(conv).startswith(known):
            return (f"{name} convention {_q(conv)} is not the probe's ({known[0]} ...): its "
                    f"figures count other units: {EDITED}")
        if sec.timing not in TIMINGS or (cuda and sec.timing != "cuda_events"):
            return (f"{name} timing {_q(sec.timing)} is not what the probe uses on "
                    f"{env.device_type if env else 'this device'} "
                    f"({'cuda_events' if cuda else 'perf_counter'}): {EDITED}")
        if cuda and not str(sec.device).startswith("cuda"):
            return (f"{name} ran on device {_q(sec.device)} in a CUDA run, whose probes time "
                    f"on its GPU: {EDITED}")
    if cuda and not (env.gpu_model or "").strip():  # torch names every CUDA device it opens
        return f"a CUDA run without its GPU's name (torch names every CUDA device): {EDITED}"
    if cuda and "+cpu" in (env.torch_version or ""):
        return (f"torch {_q(env.torch_version)} is a CPU-only build, and the run says it ran on "
                f"CUDA: {EDITED}")
    if cuda and col is not None and col.backend not in (None, "nccl"):
        return (f"the collectives ran over {_q(col.backend)} in a CUDA run, where the probe uses "
                f"NCCL (gloo's bus bandwidth is not the GPU link's): {EDITED}")
    if col is not None and (s := next((s for s in col.series if s.emulated), None)):
        return (f"collective {s.op}/{s.scope} is marked emulated, and the probe never emulates "
                f"a collective: {EDITED}")
    if cuda and env.gpu_count_smi is not None and env.gpu_count_smi < env.local_world_size:
        return (f"{env.local_world_size} ranks per node ran on a node where nvidia-smi lists "
                f"{env.gpu_count_smi} GPUs, and the probe runs one rank per GPU: {EDITED}")
    if report.workload is not None and report.schema_version < FIRST_WORKLOAD_SCHEMA:
        return (f"schema {report.schema_version} has no workload section (it came with schema "
                f"{FIRST_WORKLOAD_SCHEMA}): {EDITED}")
    world = env.world_size if env is not None else None
    for e in report.errors:
        if e.probe not in PROBE_NAMES:
            return f"an error names probe {_q(e.probe)}, which the probes do not have: {EDITED}"
        if world is not None and e.rank >= world:
            return (f"an error names rank {e.rank} of a run of {world} ranks: {EDITED}")
    rank0 = next((r for r in report.ranks if r.rank == 0), None)
    if env is not None and rank0 is not None and env.hostname != rank0.hostname:
        return (f"the environment's hostname {_q(env.hostname)} is not rank 0's "
                f"({_q(rank0.hostname)}), which wrote it: {MERGED}")
    warm = max((mm.warmup_seconds or 0.0) if mm is not None else 0.0, 0.0)
    if warm and report.duration_seconds < warm:
        return (f"the run lasted {_g(report.duration_seconds)} s, under its own "
                f"{_g(warm)} s matmul warm-up: {EDITED}")
    return None


def _q(text) -> str:
    """The report's text, quoted and cut (it may be anything)."""
    return repr(str(text)[:40])


def rank_0_workload_edited(report: ProbeReport) -> str | None:
    """Rank 0's gathered workload figures (``ranks[].workload``) are its section's own, which
    the report holds: one that differs was edited (None: they agree, or nothing to compare).
    Called after the byte counts are checked, so a count <= 0 is named as that."""
    w = report.workload
    if w is None or w.status != "measured":
        return None
    for r in report.ranks:
        if r.rank != 0:
            continue
        for nv in r.workload:
            own = getattr(w, nv.name) if nv.name in RANK_WORKLOAD else None
            if nv.name in RANK_WORKLOAD and (own is None or _differs(nv.value, own)):
                return (f"rank 0's workload {nv.name} ({_g(nv.value)}) is not the section's "
                        f"({_g(own)}), which is rank 0's own: {EDITED}")
    return None
