#!/usr/bin/env python3
"""Fit the software-efficiency constants of the time model on published measured throughput.

    python benchmarks/fit_software.py            # fit, print leave-one-source-out (LOSO) error
    python benchmarks/fit_software.py --write    # … and regenerate planner/model/_fitted.py

Data: benchmarks/data/throughput.csv (sources and parsing in throughput_README.md): published
step throughput with the published configuration. Each row is predicted with the published
plan pinned (``_calibration_rows``) on a reference node of the published accelerator, with the
published inter-node network where the source states one (``inter_node_gbps``).

Method. The physics (FLOPs, bytes, link speeds, achievable matmul from MAMF) stays fixed; the
free parameters θ are the software constants of ``planner/_assumptions.py`` listed in
``PARAMS`` (per framework profile, or shared). Minimise

    Σ_rows w_r · (log(pred_r(θ) / measured_r))²  +  Σ_j ((u_j − u_j⁰) / τ_j)²

where u is each parameter in an unbounded transform (log for positive factors, logit for
shares in (0, 1)), u⁰ its physical prior (no software loss) and τ_j the prior's width, and
w_r = (mean rows per source) / (rows of r's source), so every source weighs the same however
many rows it has. The
prior keeps a constant that the data do not identify at its physical value instead of letting
it wander. A profile without calibration rows (deepspeed, hf) gets, for each constant, the
mean of the fitted profiles, and a throughput σ of the worst calibrated profile widened by the
spread between profiles.

Leave-one-source-out: for each source, fit on the others and predict it; those residuals give
the reported LOSO error and σ (the range every estimate carries). No constant here is fitted
on end-to-end runs (benchmarks/validate_published.py only validates).

MoE stage. With the dense constants above fixed, the two MoE constants (``MOE_PARAMS``:
``ep_comm_overlap``, ``moe_overhead_s_per_layer``) are fitted the same way on
benchmarks/data/throughput_moe_rows.csv (dense rows have no experts, so they cannot move
them). 45 of its 49 rows come from one organisation's harness (NVIDIA NeMo/Megatron-Bridge),
so besides leave-one-source-out (2 families) it prints leave-one-model-out (5 models: fit on
four architectures, predict the fifth), what a user's new MoE model meets; the MoE range σ is
the larger RMS of the two.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import statistics
import sys
from collections import defaultdict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _calibration_rows import DATA, MOE_DATA, ROOT, Row, load_rows

from catalog import load_catalog
from planner import Assumptions, PlannerError, estimate, reference_cluster
from planner.model import FRAMEWORKS, MAX_GPU_MEMORY_GIB

FITTED = ROOT / "planner" / "model" / "_fitted.py"
CALIBRATED = ("megatron", "fsdp")  # profiles with calibration rows; the others borrow
# the published configurations ran: do not let the memory model veto them (the most memory
# per GPU an estimate takes; no published configuration's modelled need comes near it)
BIG_MEMORY_GIB = MAX_GPU_MEMORY_GIB


@dataclass(frozen=True)
class Param:
    """One free constant: Assumptions field (and table entry), transform, prior and width."""

    field: str
    entry: str | None  # framework (or family) key for table fields; None for scalars
    kind: str  # "log" (positive factor) or "logit" (share in (0, 1))
    prior: float
    width: float  # prior width τ in the transformed space
    low: float = -math.inf
    high: float = math.inf

    @property
    def name(self) -> str:
        return f"{self.field}.{self.entry}" if self.entry else self.field

    def to_u(self, v: float) -> float:
        return math.log(v) if self.kind == "log" else math.log(v / (1 - v))

    def from_u(self, u: float) -> float:
        v = math.exp(u) if self.kind == "log" else 1 / (1 + math.exp(-u))
        return min(max(v, self.low), self.high)


def params_for(frameworks: tuple[str, ...]) -> list[Param]:
    """The fitted constants. Tried and dropped because the data did not move them from their
    priors (they are kept at the physical values in FIXED): comm_overlap (0.90 → 0.90–0.91),
    tp_comm_overlap (0.10 → 0.11), host_overhead_s_per_layer (1e-5 → 1.0e-5)."""
    out = []
    for fw in frameworks:
        out += [
            Param("gemm_efficiency", fw, "logit", 0.95, 2.0, high=1.0),
            Param("elementwise_factor", fw, "log", 1.0, 1.5, low=1.0),
        ]
    out += [
        Param("attention_efficiency", None, "log", 1.0, 0.5),
        Param("fp8_relative_fraction", None, "logit", 0.8, 1.0),
    ]
    return out


# The MoE stage's constants, one value for every profile (the MoE rows are Megatron-Core and
# NeMo AutoModel runs). ep_comm_overlap: prior 0.5 on a wide logit, the share is not known
# before the data. moe_overhead_s_per_layer: prior 100 µs (one device-to-host sync and a few
# launches), log width 3 (a factor of 20 either way).
MOE_PARAMS = (Param("ep_comm_overlap", None, "logit", 0.5, 2.0),
              Param("moe_overhead_s_per_layer", None, "log", 1e-4, 3.0))


def fit_moe(problem: Problem, idx: list[int]) -> dict[str, float]:
    """The MoE constants fitted on ``idx`` (``problem.base`` holds the dense constants)."""
    params = list(MOE_PARAMS)
    u = fit(problem, idx, params)
    return {p.name: p.from_u(x) for p, x in zip(params, u, strict=True)}


def held_out(problem: Problem, key, refit, label: str) -> np.ndarray:
    """Log residuals of every row predicted by constants refitted without its group:
    ``key(row)`` names the group, ``refit(train)`` returns the Assumptions fitted on the
    other rows. A group with no other rows to fit on stays NaN."""
    rows, idx = problem.rows, range(len(problem.rows))
    err = np.full(len(rows), np.nan)
    for group in sorted({key(r) for r in rows}):
        train = [i for i in idx if key(rows[i]) != group]
        test = [i for i in idx if key(rows[i]) == group]
        if not train:
            continue
        err[test] = problem.log_errors(refit(train), test)
        print(f"  {label}: held out {group}: median |err| "
              f"{summarize(err[test])['median_abs']:.1%}", file=sys.stderr)
    return err


def dense_held_out(problem: Problem, params: list[Param]) -> np.ndarray:
    """Leave-one-source-out log residuals of the dense fit."""
    return held_out(problem, lambda r: r.source, lambda train: base_with(
        complete(params, fit(problem, train, params)), problem.base), "LOSO")


def moe_held_out(problem: Problem) -> dict[str, np.ndarray]:
    """Log residuals of every MoE row predicted by a fit without it: leave-one-source-out
    (``by_source``) and leave-one-model-out (``by_model``)."""
    def refit(train):
        return problem.base.with_overrides(**fit_moe(problem, train))

    return {"by_source": held_out(problem, lambda r: r.source, refit, "MoE by source"),
            "by_model": held_out(problem, lambda r: r.workload.arch.name, refit,
                                 "MoE by model")}


# Not identified by the calibration data, so kept at physical values (no software loss beyond
# the old model's): 90% of overlappable data-parallel communication hidden (the previous
# dp_overlap), no tensor-parallel overlap, no extra host time.
FIXED = {"comm_overlap": 0.9, "tp_comm_overlap": 0.0, "host_overhead_s_per_layer": 0.0}


def assumptions_for(params: list[Param], u: np.ndarray, base: Assumptions) -> Assumptions:
    values = {p.name: p.from_u(x) for p, x in zip(params, u, strict=True)}
    return base.with_overrides(**values)


@dataclass
class Problem:
    rows: list[Row]
    clusters: list
    base: Assumptions

    @classmethod
    def build(cls, rows: list[Row], base: Assumptions | None = None) -> Problem:
        cat = load_catalog("packaged")
        return cls(rows=rows, clusters=[_cluster(cat, r) for r in rows],
                   base=base or Assumptions())

    def predict(self, A: Assumptions, idx) -> np.ndarray:
        out = np.empty(len(idx))
        for k, i in enumerate(idx):
            r = self.rows[i]
            a = A.with_overrides(**dict(r.overrides)) if r.overrides else A
            try:
                e = estimate(r.workload, self.clusters[i], assumptions=a,
                             memory_gib=BIG_MEMORY_GIB)
                out[k] = e.tokens_per_s / r.gpus
            except PlannerError:
                out[k] = np.nan
        return out

    def log_errors(self, A: Assumptions, idx) -> np.ndarray:
        meas = np.array([self.rows[i].measured_tokens_per_s_per_gpu for i in idx])
        return np.log(self.predict(A, idx) / meas)


def _cluster(cat, r: Row):
    """A reference node of the row's accelerator, with the row's published network if any."""
    cluster = reference_cluster(cat, r.accelerator, r.gpus)
    if r.inter_node_gbps:
        cluster = replace(cluster, inter_node_gbps=float(r.inter_node_gbps))
    return cluster


def fit(problem: Problem, idx: list[int], params: list[Param]) -> np.ndarray:
    counts = defaultdict(int)
    for i in idx:
        counts[problem.rows[i].source] += 1
    # Every source weighs as much as the average source, however many rows it has.
    per_source = len(idx) / len(counts)
    w = np.sqrt(np.array([per_source / counts[problem.rows[i].source] for i in idx]))
    u0 = np.array([p.to_u(p.prior) for p in params])
    tau = np.array([p.width for p in params])

    def residuals(u):
        A = assumptions_for(params, u, problem.base)
        e = problem.log_errors(A, idx)
        e = np.where(np.isfinite(e), e, 3.0)
        return np.concatenate([w * e, (u - u0) / tau])

    sol = least_squares(residuals, u0, method="trf", x_scale=1.0, diff_step=1e-3,
                        max_nfev=400)
    return sol.x


def complete(params: list[Param], u: np.ndarray) -> dict[str, dict[str, float] | float]:
    """Fitted values for every profile: uncalibrated profiles get the calibrated mean."""
    fitted = {p.name: p.from_u(x) for p, x in zip(params, u, strict=True)}
    out: dict = {}
    for p in params:
        if p.entry is None:
            out[p.field] = fitted[p.name]
            continue
        table = out.setdefault(p.field, {})
        table[p.entry] = fitted[p.name]
    for table in list(out.values()):
        if isinstance(table, dict):
            mean = statistics.fmean(table[f] for f in CALIBRATED if f in table)
            for fw in FRAMEWORKS:
                table.setdefault(fw, mean)
    for field, value in FIXED.items():
        out[field] = {fw: value for fw in FRAMEWORKS}
    return out


def base_with(values: dict, base: Assumptions) -> Assumptions:
    changes = {k: (dict(v) if isinstance(v, dict) else v) for k, v in values.items()}
    flat = {}
    for k, v in changes.items():
        if isinstance(v, dict):
            flat.update({f"{k}.{e}": x for e, x in v.items()})
        else:
            flat[k] = v
    return base.with_overrides(**flat)


def summarize(errors: np.ndarray) -> dict:
    a = np.abs(np.expm1(errors))
    return {"rows": int(len(errors)), "median_abs": float(np.median(a)),
            "max_abs": float(np.max(a)), "within_25": float(np.mean(a <= 0.25)),
            "median_signed": float(np.median(np.expm1(errors)))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--moe-data", type=Path, default=MOE_DATA)
    ap.add_argument("--write", action="store_true", help="regenerate planner/model/_fitted.py")
    args = ap.parse_args(argv)
    rows = load_rows(args.data)
    problem = Problem.build(rows)
    frameworks = tuple(f for f in CALIBRATED if any(r.framework == f for r in rows))
    params = params_for(frameworks)
    sources = sorted({r.source for r in rows})
    all_idx = list(range(len(rows)))
    print(f"{len(rows)} rows, {len(sources)} sources, profiles {', '.join(frameworks)}, "
          f"{len(params)} constants", file=sys.stderr)

    u = fit(problem, all_idx, params)
    values = complete(params, u)
    A = base_with(values, problem.base)
    in_sample = problem.log_errors(A, all_idx)

    loso = dense_held_out(problem, params)

    by_fw = defaultdict(list)
    for i, r in enumerate(rows):
        by_fw[r.framework].append(loso[i])
    sigma = {fw: float(np.sqrt(np.mean(np.square(v)))) for fw, v in by_fw.items()}
    # Profiles without rows: the calibrated σ widened by the spread between profiles (how
    # much predictions move when one profile's constants stand in for another's).
    between = _between_profile_spread(problem, values, all_idx, frameworks)
    # An uncalibrated profile is no better known than the worst calibrated one, and may sit
    # anywhere between the calibrated profiles.
    worst = max(sigma.values())
    for fw in FRAMEWORKS:
        sigma.setdefault(fw, math.hypot(worst, between))

    # MoE stage: the dense constants fixed, the MoE ones fitted on the MoE rows.
    moe_rows = load_rows(args.moe_data)
    moe_problem = Problem.build(moe_rows, base=A)
    moe_values = fit_moe(moe_problem, list(range(len(moe_rows))))
    moe_in = moe_problem.log_errors(A.with_overrides(**moe_values), range(len(moe_rows)))
    moe_out = moe_held_out(moe_problem)
    moe_sigma = max(float(np.sqrt(np.mean(np.square(e)))) for e in moe_out.values())
    moe = {"values": moe_values, "rows": moe_rows, "in_sample": summarize(moe_in),
           "by_source": summarize(moe_out["by_source"]),
           "by_model": summarize(moe_out["by_model"]), "sigma": moe_sigma}

    print(f"\nfitted constants ({len(rows)} rows):")
    for k, v in values.items():
        print(f"  {k}: " + (", ".join(f"{e}={x:.4g}" for e, x in v.items())
                            if isinstance(v, dict) else f"{v:.4g}"))
    print(f"in-sample: {summarize(in_sample)}")
    print(f"LOSO:      {summarize(loso)}")
    print("throughput σ (log, LOSO RMS): " + ", ".join(f"{k}={v:.3f}" for k, v in sigma.items()))
    print(f"\nMoE constants ({len(moe_rows)} rows): "
          + ", ".join(f"{k}={v:.4g}" for k, v in moe_values.items()))
    for key in ("in_sample", "by_source", "by_model"):
        print(f"MoE {key.replace('_', ' ')}: {moe[key]}")
    print(f"MoE throughput σ (log, larger held-out RMS): {moe_sigma:.3f}")
    if args.write:
        _write(values, sigma, rows, sources, summarize(in_sample), summarize(loso),
               between, moe)
        print(f"wrote {FITTED.relative_to(ROOT)}")
    return 0


def _between_profile_spread(problem, values, idx, frameworks) -> float:
    if len(frameworks) < 2:
        return 0.0
    preds = []
    for fw in frameworks:
        swapped = {k: ({f: v[fw] for f in v} if isinstance(v, dict) else v)
                   for k, v in values.items()}
        preds.append(np.log(problem.predict(base_with(swapped, problem.base), idx)))
    return float(np.sqrt(np.mean(np.var(np.array(preds), axis=0))))


def _write(values, sigma, rows, sources, ins, loso, between, moe) -> None:
    import runpy
    from types import SimpleNamespace

    old = SimpleNamespace(**runpy.run_path(str(FITTED)))  # the file as it is (no import)

    def table(v):
        return "{" + ", ".join(f'"{k}": {v[k]:.6g}' for k in FRAMEWORKS) + "}"

    counts = defaultdict(int)
    for r in rows:
        counts[r.source] += 1
    lines = [
        '"""Fitted constants of the time model, with their provenance. GENERATED — do not edit.',
        "",
        "Software layer: `python benchmarks/fit_software.py --write` on",
        f"benchmarks/data/throughput.csv ({len(rows)} rows: "
        + ", ".join(f"{s} {counts[s]}" for s in sources) + ").",
        f"In-sample median |error| {ins['median_abs']:.1%}, max {ins['max_abs']:.1%}; "
        f"leave-one-source-out median |error| {loso['median_abs']:.1%}, max "
        f"{loso['max_abs']:.1%}.",
        "Profiles without calibration rows (deepspeed, hf) use the mean of the calibrated ones",
        f"and the worst calibrated σ widened by the spread between profiles ({between:.3f}).",
        f"MoE stage (dense constants fixed) on benchmarks/data/throughput_moe_rows.csv "
        f"({len(moe['rows'])} rows):",
        f"in-sample median |error| {moe['in_sample']['median_abs']:.1%}; leave-one-source-out "
        f"{moe['by_source']['median_abs']:.1%}, leave-one-model-out "
        f"{moe['by_model']['median_abs']:.1%} (max {moe['by_model']['max_abs']:.1%}).",
        "Operations layer: `python benchmarks/fit_operations.py --write` (see its docstring).",
        f"Software layer written {dt.date.today().isoformat()}.",
        '"""',
        "",
        f"GEMM_EFFICIENCY = {table(values['gemm_efficiency'])}",
        f"ELEMENTWISE_FACTOR = {table(values['elementwise_factor'])}",
        f"COMM_OVERLAP = {table(values['comm_overlap'])}  # not identified: fixed",
        f"TP_COMM_OVERLAP = {table(values['tp_comm_overlap'])}  # not identified: fixed",
        f"HOST_OVERHEAD_S_PER_LAYER = {table(values['host_overhead_s_per_layer'])}"
        "  # not identified: fixed",
        f"ATTENTION_EFFICIENCY = {values['attention_efficiency']:.6g}",
        f"FP8_RELATIVE_FRACTION = {values['fp8_relative_fraction']:.6g}",
        f"EP_COMM_OVERLAP = {moe['values']['ep_comm_overlap']:.6g}",
        f"MOE_OVERHEAD_S_PER_LAYER = {moe['values']['moe_overhead_s_per_layer']:.6g}",
        f"MOE_THROUGHPUT_LOG_SIGMA = {moe['sigma']:.6g}",
        f"THROUGHPUT_LOG_SIGMA = {table(sigma)}",
        f"LOSO_MEDIAN_ABS_ERROR = {loso['median_abs']:.6g}",
    ]
    # The operations block is owned by fit_operations.py: keep what it wrote.
    for name in ("FAILURE_RATE_PER_GPU_HOUR", "RESTART_MINUTES", "EVALUATION_FRACTION",
                 "OPERATIONAL_LOSS_FRACTION", "OPERATIONS_LOG_SIGMA"):
        lines.append(f"{name} = {getattr(old, name)!r}")
    text = "\n".join(lines) + "\n"
    tmp = FITTED.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(FITTED)


if __name__ == "__main__":
    sys.exit(main())

