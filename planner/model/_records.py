"""What ``estimate`` returns: the parallel plan, the time range and the estimate itself.

Frozen records; ``as_dict`` is the JSON contract (``gpuplan estimate --json``, and each
candidate of ``gpuplan plan --json``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field

from catalog import record

from ._frozen import freeze
from ._goodput import Goodput
from ._hardware import Cluster
from ._workload import Workload

Z_P90 = 1.2815515655446004  # standard normal 90th percentile


@record
class ParallelPlan:
    tp: int
    pp: int
    dp: int
    zero_stage: int
    micro_batch: int
    recompute: str
    micro_batches: int
    cp: int = 1
    expert_parallel: int = 1
    virtual_stages: int = 1

    def as_dict(self) -> dict:
        d = {"tp": self.tp, "pp": self.pp, "cp": self.cp, "dp": self.dp,
             "zero_stage": self.zero_stage, "micro_batch": self.micro_batch,
             "recompute": self.recompute, "grad_accumulation": self.micro_batches}
        if self.expert_parallel > 1:
            d["ep"] = self.expert_parallel
        if self.pp > 1:
            d["virtual_stages"] = self.virtual_stages
        return d

    @classmethod
    def from_dict(cls, d: Mapping) -> ParallelPlan:
        """The plan of an ``as_dict`` (a candidate's JSON, an allocation's job)."""
        return cls(tp=int(d["tp"]), pp=int(d["pp"]), dp=int(d["dp"]),
                   zero_stage=int(d["zero_stage"]), micro_batch=int(d["micro_batch"]),
                   recompute=str(d["recompute"]), micro_batches=int(d["grad_accumulation"]),
                   cp=int(d.get("cp", 1)), expert_parallel=int(d.get("ep", 1)),
                   virtual_stages=int(d.get("virtual_stages", 1)))

    def __str__(self) -> str:
        """One line, the same everywhere a plan is shown (CLI, app, reports, launch files)."""
        return f"{self.layout()} " + {"none": "no-recompute", "selective": "sel-recompute",
                                       "full": "full-recompute"}[self.recompute]

    def layout(self) -> str:
        """The parallel layout and batching of ``str(plan)``, without its recomputation (for
        tables that show recomputation in a column of its own)."""
        parts = [f"tp{self.tp}", f"pp{self.pp}"]
        if self.pp > 1 and self.virtual_stages > 1:
            parts[-1] += f"×v{self.virtual_stages}"
        if self.cp > 1:
            parts.append(f"cp{self.cp}")
        if self.expert_parallel > 1:
            parts.append(f"ep{self.expert_parallel}")
        parts += [f"dp{self.dp}", f"zero{self.zero_stage}",
                  f"mb{self.micro_batch}×{self.micro_batches}"]
        return " ".join(parts)


@record
class TimeRange:
    """P10/P50/P90 of a duration: the calendar time's quantiles around the model's median
    (``calendar_range``); ``around`` is the log-normal alone (a chart's many points)."""

    p10: float
    p50: float
    p90: float
    log_sigma: float

    @classmethod
    def around(cls, median: float, log_sigma: float) -> TimeRange:
        k = math.exp(Z_P90 * log_sigma)
        return cls(p10=median / k, p50=median, p90=median * k, log_sigma=log_sigma)

    def scaled(self, factor: float) -> TimeRange:
        return TimeRange(p10=self.p10 * factor, p50=self.p50 * factor, p90=self.p90 * factor,
                         log_sigma=self.log_sigma)


@record
class Estimate:
    workload: Workload
    cluster: Cluster
    plan: ParallelPlan
    step_time_s: float
    steps: int
    tokens_per_step: int
    breakdown: Mapping[str, float]  # seconds per step by part (read-only)
    memory: Mapping[str, float]  # GiB per GPU by part (read-only)
    mfu: float
    model_tflops_per_gpu: float
    tokens_per_s: float
    ideal_hours: float  # training time: steps × step time, nothing lost
    goodput: Goodput
    wall_clock: TimeRange  # calendar time
    assumptions: tuple[str, ...] = field(default=())
    warnings: tuple[str, ...] = field(default=())
    calibrated: tuple[str, ...] = field(default=())  # measured figures used (probe reports)

    def __post_init__(self) -> None:
        object.__setattr__(self, "breakdown", freeze(self.breakdown))
        object.__setattr__(self, "memory", freeze(self.memory))

    @property
    def training_hours(self) -> float:
        return self.ideal_hours

    @property
    def wall_clock_hours(self) -> float:
        return self.wall_clock.p50

    @property
    def gpu_hours(self) -> float:
        return self.wall_clock_hours * self.cluster.gpus

    def as_dict(self) -> dict:
        c, w = self.cluster, self.workload
        r = self.wall_clock
        workload, pinned = _workload_parts(w)
        return {
            "wall_clock_hours": r.p50, "wall_clock_hours_p10": r.p10,
            "wall_clock_hours_p90": r.p90, "gpu_hours": self.gpu_hours,
            "gpu_hours_p10": r.p10 * c.gpus, "gpu_hours_p90": r.p90 * c.gpus,
            "training_hours": self.ideal_hours, "ideal_wall_clock_hours": self.ideal_hours,
            # quantiles of C = B·X + K·L: log-normal model error X, Poisson interruptions K
            "range": {"distribution": "log-normal error with Poisson interruptions",
                      "log_sigma": r.log_sigma,
                      "p10_factor": r.p10 / r.p50, "p90_factor": r.p90 / r.p50},
            "mfu": self.mfu, "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "tokens_per_second": self.tokens_per_s,
            "tokens_per_second_per_gpu": self.tokens_per_s / c.gpus,
            "memory_per_gpu_gib": self.memory["total_gib"], "memory": dict(self.memory),
            "step_time_s": self.step_time_s, "steps": self.steps,
            "tokens_per_step": self.tokens_per_step,
            "goodput": self.goodput.fraction, "goodput_detail": self.goodput.as_dict(),
            "framework": w.framework, "attention": w.attention,
            "pinned": pinned,
            "plan": self.plan.as_dict(), "breakdown": dict(self.breakdown),
            "hardware": {"accelerator": c.accelerator.name, "gpus": c.gpus,
                         "gpus_per_node": c.gpus_per_node, "nodes": c.nodes,
                         "instance_type": c.instance_type, "cloud": c.cloud,
                         "topology": c.topology, "fabric": c.fabric,
                         "inter_node_gbps": c.inter_node_gbps},
            "workload": workload,
            "assumptions": list(self.assumptions),
            "warnings": list(self.warnings),
            "calibration": list(self.calibrated),
        }


# A plan describes hundreds of candidates of one workload: its dicts are built once (the
# last workload's, by identity: hashing the record cost more than building them) and each
# candidate gets its own copies. One tuple, read and replaced whole: the app's sessions run
# in threads, and each reader gets one workload's pair.
_LAST_WORKLOAD: tuple = (None, None, None)


def _workload_parts(w: Workload) -> tuple[dict, dict]:
    """(``workload_dict(w)``, the pinned values) as fresh copies."""
    global _LAST_WORKLOAD
    last, d, pinned = _LAST_WORKLOAD
    if last is not w:
        d = workload_dict(w)
        pinned = w.pins.as_dict() | ({"recompute": w.recompute} if w.recompute != "auto"
                                     else {})
        _LAST_WORKLOAD = (w, d, pinned)
    return dict(d), dict(pinned)


def workload_dict(w: Workload) -> dict:
    a = w.arch
    return {"model": a.name, "params_total": a.params_total(),
            "params_active": a.params_active(), "layers": a.layers, "hidden": a.hidden,
            "heads": a.heads, "kv_heads": a.kv_heads, "ffn_hidden": a.ffn_hidden,
            "vocab": a.vocab, "experts": a.experts, "experts_per_token": a.experts_per_token,
            # attention narrower than causal over the whole sequence (0: none), as timed
            "window_tokens": a.window_tokens, "windowed_layers": a.windowed_layers,
            "chunk_tokens": a.chunk_tokens, "chunked_layers": a.chunked_layers,
            "tokens": w.tokens, "seq_len": w.seq_len,
            "global_batch_tokens": w.global_batch_tokens, "precision": w.precision,
            "optimizer": w.optimizer, "finetune": w.finetune,
            "lora_rank": w.lora_rank if w.finetune == "lora" else None, "framework": w.framework,
            "attention": w.attention}

