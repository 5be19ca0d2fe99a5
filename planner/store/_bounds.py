"""The figures a stored report offers the rules (``Candidate``, ``WorkloadCandidate``, each
GPU's figure ``PerGpu``) and the physical bounds each must respect: rules 2 and 6 of
planner.store._rules, which re-exports all of it. Pure: no database, no files.
"""

from __future__ import annotations

from collections.abc import Iterable

from catalog import record

from ..model import LayerModel, WorkloadShape

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
# Without recomputation (or with selective) a layer keeps for backward what the planner's
# model counts (the probe's eager layers against the eager count: 769.1 MiB measured vs 768.0
# modelled on the H200 of docs/probes.md; benchmarks/gpu_check.py wants its two counts within
# 25%). A measured count under half the modelled one is a broken count or an edited report,
# and its memory ratio would shrink every plan's activations (70 MiB against 1,408 modelled
# made plans that run out of memory look like they fit). Half: the factor two by which a
# report's own two counts, reports of one figure, or a GPU and its median may differ before
# they are refused. Full recomputation keeps only the layer's input, so its floor stays that.
MIN_ACTIVATION_RATIO = 0.5
# Above this multiple of the modelled count a measured activation figure is refused: the
# count then holds more than one layer keeps for backward (another process's tensors, the
# optimizer's state, an allocator pool, an edit), and its memory ratio would make every plan
# that fits look out of memory. Twice MIN_ACTIVATION_RATIO's factor two: between 2x and this
# the figure is used with a warning (planner.model._calibration_words); the honest H200 run of
# docs/probes.md measured 1.00x (769.1 of 768.0 MiB).
MAX_ACTIVATION_RATIO = 4.0
# The most of its datasheet peak a matmul or copy figure reaches on real hardware; above it
# the figure is used with a caution (an estimate warns: ``plausibility_caution``), as more
# often an edited report, another machine's or a broken timer: no real run reaches the peak.
# The best published matmul (mamf-finder's MAMF) is 93.9% of the dense peak on A100 SXM (293
# of 312 TFLOP/s) and ~80% on H100/H200 SXM (docs/probes.md: 75-80%; the H200 run measured
# 70%); a device copy reaches 85-92% of the HBM bandwidth (docs/probes.md; the H200 run 88%).
# 95% is over the best of each. Not a refusal: a bound the datasheet itself does not give.
# Bus bandwidth is bounded by its link alone (NVLS and SHARP change what reaches it).
MAX_FRACTION_OF_PEAK = {"matmul": 0.95, "hbm": 0.95}


@record
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


@record
class Candidate:
    """One figure one stored report offers, with the datasheet bound it must respect."""

    report_id: int
    created_utc: str
    kind: str  # see KINDS; "report" for a report refused as a whole before any figure
    accelerator: str
    dtype: str | None = None  # matmul: the catalog dtype (fp32, tf32, bf16, fp16, fp8)
    instance_type: str | None = None  # when the report's instance is in the catalog
    stated_instance: str | None = None  # the report's instance type when not in the catalog
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
    # why its section is an earlier report's measurements (that run's, counted once); checked
    # after the bounds, so a copy out of bounds still refuses its whole report
    copy_of: str | None = None

    @property
    def label(self) -> str:
        # a cross-node figure without a catalog instance (refused for it) names its GPUs
        inter = (f"{self.instance_type} x {self.nodes} nodes" if self.instance_type else
                 f"{self.accelerator} x {self.nodes} nodes (no instance type)")
        return {"report": f"report {self.report_id}", "matmul": f"{self.accelerator} {self.dtype}",
                "hbm": self.accelerator,
                "intra": self.instance_type or f"{self.accelerator} x{self.gpus_per_node}",
                }.get(self.kind, inter)


@record
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
    copy_of: str | None = None  # as Candidate.copy_of

    @property
    def label(self) -> str:
        return f"{self.accelerator} {self.framework} {self.shape.label}"


def bounds_refusal(c: Candidate) -> tuple[str | None, bool]:
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


def plausibility_caution(c: Candidate) -> str | None:
    """Why a used matmul or copy figure (its median or its fastest GPU) above
    MAX_FRACTION_OF_PEAK of its datasheet peak needs checking; None when it does not."""
    most = MAX_FRACTION_OF_PEAK.get(c.kind)
    if most is None or c.bound is None or c.value is None:
        return None
    g = c.per_gpu
    for value, who in ((c.value, ""), (g.high if g else None,
                                       f"rank {g.high_rank if g else 0}'s ")):
        if value is not None and value > most * c.bound:
            return (f"report {c.report_id}: {who}{value:,.4g} {c.unit} is {value / c.bound:.1%} "
                    f"of the datasheet {c.bound:,.4g} {c.unit} ({c.bound_source}), above the "
                    f"{most:.0%} no real run reaches (the best published "
                    + ("matmul is ~80% of the peak on H100, 94% on A100" if c.kind == "matmul"
                       else "copy is 85-92% of the bandwidth")
                    + "): more often an edited report, another machine's or a broken timer")
    return None


def workload_bounds(c: WorkloadCandidate) -> tuple[str | None, bool]:
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
    if spread := spread_refusal(c):
        return spread, True
    m = c.per_gpu_memory_bytes
    for value, who in ((c.measured_layer_memory_bytes, ""),
                       (m.high if m else None, f"rank {m.high_rank if m else 0}: ")):
        if value is not None and c.memory_bytes and value > c.memory_bytes:
            return (f"{who}{value / 2**30:,.1f} GiB of activations per layer is above the "
                    f"GPU's {c.memory_bytes / 2**30:,.0f} GiB: impossible", True)
        modelled = c.modelled.activation_bytes
        if value is not None and modelled and value > MAX_ACTIVATION_RATIO * modelled:
            return (f"{who}{value / 2**20:,.1f} MiB of activations per layer is "
                    f"{value / modelled:.1f}x the {modelled / 2**20:,.1f} MiB modelled, over "
                    f"{MAX_ACTIVATION_RATIO:g}x: the count holds more than the layer keeps for "
                    "backward (another process, the optimizer, an edit), and it would make "
                    "plans that fit look out of memory. To fix: re-run the workload probe "
                    "(`gpuplan probe workload`) on an otherwise idle node", True)
    # every layer keeps at least its 16-bit input for backward, under any recomputation
    floor = 2.0 * c.shape.hidden * c.shape.tokens
    least = c.modelled.activation_bytes * MIN_ACTIVATION_RATIO \
        if c.shape.recompute in ("none", "selective") else 0.0
    for value, who in ((c.measured_layer_memory_bytes, ""),
                       (m.low if m else None, f"rank {m.low_rank if m else 0}: ")):
        if value is not None and value < floor:
            return (f"{who}{value / 2**20:,.1f} MiB of activations per layer is below the "
                    f"layer's own input ({floor / 2**20:,.1f} MiB), which backward needs in "
                    "any recomputation: impossible", True)
        if value is not None and value < least:
            modelled = c.modelled.activation_bytes
            return (f"{who}{value / 2**20:,.1f} MiB of activations per layer is "
                    f"{value / modelled:.0%} of the {modelled / 2**20:,.1f} MiB modelled for "
                    f"recompute {c.shape.recompute}, under {MIN_ACTIVATION_RATIO:.0%}: the "
                    "layer keeps more than that for backward, so the count is broken or edited,"
                    " and it would make plans that run out of memory look like they fit. To "
                    "fix: re-run the workload probe (`gpuplan probe workload`) on the node",
                    True)
    return None, False


_P10, _P90 = "its P10 over steps and GPUs: ", "its P90 over steps and GPUs: "


def spread_refusal(c: WorkloadCandidate) -> str | None:
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
