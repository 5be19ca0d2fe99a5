"""What ``plan`` returns: typed candidates, chart points, the infeasible answer, the result.

Records, not dicts, between modules; ``as_dict`` only at the JSON and cache edges (the CLI's
``--json``, the app's cache, the team allocator's worker processes). The keys of
``Candidate.as_dict`` are the documented JSON contract (README "Plan a training run").

Cost of a run on n instances at p USD per instance-hour for calendar time C:
    on-demand / spot:        n · p · C
    reserved / committed / capacity block with term T (``Offer.term_hours``): the whole terms
    are paid, n · p · (C + (⌈C/T⌉·T − C) · (1 − u)), where u is the share of the remaining term
    the user will use afterwards (``--commitment-use``, default 0: the rest is paid for nothing).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field

from catalog import HOURS_PER_MONTH, Offer, record

from ..model import Estimate, freeze, thaw

# Checkpoint storage: the newest checkpoint and the one before it (a write interrupted by a
# failure must leave one complete checkpoint), priced per month of 8,760 / 12 hours.
CHECKPOINTS_KEPT = 2


def storage_usd(hours, *, checkpoint_bytes: float, usd_per_gb_month: float | None):
    """What keeping the checkpoints costs for a run of ``hours`` (0 without a price)."""
    if not usd_per_gb_month:
        return 0.0
    return (CHECKPOINTS_KEPT * checkpoint_bytes / 1e9 * usd_per_gb_month * hours
            / HOURS_PER_MONTH)


def run_cost_usd(*, wall_hours, nodes, usd_per_hour, term_hours, commitment_use: float):
    """Cost of each run (arrays broadcast; ``term_hours`` NaN for pay-as-you-go)."""
    import numpy as np

    wall = np.asarray(wall_hours, dtype=np.float64)
    term = np.asarray(term_hours, dtype=np.float64)
    committed = np.isfinite(term) & (term > 0)
    if not committed.any() and np.isfinite(wall).all():
        # pay-as-you-go alone (most plans' arrays): billed = wall + 0 · (1 − u) = wall, the
        # same floats in 3 passes where the general formula takes 12 (issue #19: 170k rows)
        return np.asarray(nodes, dtype=np.float64) * np.asarray(usd_per_hour) * wall, wall
    safe_term = np.where(committed, term, 1.0)
    paid = np.where(committed, np.ceil(np.maximum(wall, 1e-12) / safe_term) * safe_term, wall)
    billed = wall + (paid - wall) * (1.0 - commitment_use)
    return np.asarray(nodes, dtype=np.float64) * np.asarray(usd_per_hour) * billed, paid


@record
class Commitment:
    """How a reserved / committed / capacity-block price was charged for this run."""

    term_hours: float
    terms: int
    paid_hours: float  # per instance: whole terms
    commitment_use: float  # share of the unused remainder the user said they will use
    term_cost_usd: float  # every instance's whole terms at the committed rate
    effective_usd_per_hour: float  # per instance-hour of *this run*

    def as_dict(self) -> dict:
        return {"term_hours": self.term_hours, "terms": self.terms,
                "paid_hours": self.paid_hours, "commitment_use": self.commitment_use,
                "term_cost_usd": self.term_cost_usd,
                "effective_usd_per_hour": self.effective_usd_per_hour}


@record
class Candidate:
    """One priced configuration: an offer (in one or more regions at the same price), a node
    count, the model's estimate for it, and what it costs and how likely it is to finish."""

    offer: Offer
    regions: tuple[str, ...]  # every region with this exact configuration and price
    accelerator: str
    nodes: int
    gpus: int
    estimate: Estimate
    wall_clock_hours: float  # expected calendar time (failures, spot reclaims included)
    wall_clock_hours_p10: float
    wall_clock_hours_p90: float
    cost_usd: float
    cost_usd_p10: float
    cost_usd_p90: float
    deadline_probability: float
    meets_deadline: bool  # the deadline at the minimum probability (not budget or quotas)
    within_limits: bool  # budget, quotas (whatever the deadline)
    expected_interruptions: float
    spot_interruptions_per_hour: float | None
    distribution: Mapping[str, float]  # base_hours, loss_hours, rate, sigma: _probability
    commitment: Commitment | None = None
    warnings: tuple[str, ...] = ()
    # what keeping the checkpoints costs over the expected run, part of ``cost_usd`` (None
    # without a storage price): the cost was more than $/h × hours, and nothing said why
    checkpoint_storage_usd: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "distribution", freeze(self.distribution))

    @property
    def gpu_hours(self) -> float:
        return self.wall_clock_hours * self.gpus

    @property
    def usd_per_hour_cluster(self) -> float:
        return self.offer.usd_per_hour * self.nodes

    @property
    def key(self) -> tuple:
        return (*self.offer.key, self.nodes)

    def as_dict(self) -> dict:
        d = self.estimate.as_dict()
        o = self.offer
        d.update({
            "cloud": o.cloud, "region": o.region, "regions": list(self.regions),
            "instance_type": o.instance_type, "accelerator": self.accelerator,
            "nodes": self.nodes, "gpus": self.gpus, "pricing": o.pricing,
            "usd_per_hour": o.usd_per_hour, "usd_per_hour_cluster": self.usd_per_hour_cluster,
            "total_cost_usd": self.cost_usd, "total_cost_usd_p10": self.cost_usd_p10,
            "total_cost_usd_p90": self.cost_usd_p90,
            "wall_clock_hours": self.wall_clock_hours,
            "wall_clock_hours_p10": self.wall_clock_hours_p10,
            "wall_clock_hours_p90": self.wall_clock_hours_p90,
            "gpu_hours": self.gpu_hours, "gpu_hours_p10": self.wall_clock_hours_p10 * self.gpus,
            "gpu_hours_p90": self.wall_clock_hours_p90 * self.gpus,
            "meets_deadline": self.meets_deadline, "within_limits": self.within_limits,
            "deadline_probability": self.deadline_probability,
            "expected_interruptions": self.expected_interruptions,
            "spot_interruptions_per_hour": self.spot_interruptions_per_hour,
            "distribution": dict(self.distribution),
            "commitment": self.commitment.as_dict() if self.commitment else None,
            "checkpoint_storage_usd": self.checkpoint_storage_usd,
            "price_as_of": o.as_of.isoformat(), "price_as_of_approximate": o.as_of_approximate,
            "price_source": o.source, "price_flags": list(o.flags),
            "offering_class": o.offering_class or None, "upfront": o.upfront or None,
            "warnings": list(self.warnings)})
        return d


@record
class PlanPoint:
    """A light record per (offer, node count): the best plan's time and cost, for charts.
    Its range is the model's log-normal range around the expected calendar time (the
    interruption spread is in full candidates only)."""

    cloud: str
    region: str
    instance_type: str
    accelerator: str
    pricing: str
    nodes: int
    gpus: int
    wall_clock_hours: float
    wall_clock_hours_p10: float
    wall_clock_hours_p90: float
    total_cost_usd: float
    total_cost_usd_p10: float
    total_cost_usd_p90: float
    deadline_probability: float
    meets_deadline: bool  # the deadline at the minimum probability (not budget or quotas)
    within_limits: bool  # budget, quotas, GPU limit (not the deadline)
    on_frontier: bool

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__slots__}


@record
class Infeasible:
    """Nothing meets the deadline within the limits: why, and what would."""

    reason: str
    binding: tuple[str, ...]  # deadline, budget, min_probability, quotas
    fastest: Candidate
    cheapest: Candidate
    deadline_hours: float
    # The cheapest plan that meets the deadline if that one limit were lifted.
    relaxed: Mapping[str, Candidate] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "relaxed", freeze(self.relaxed))

    @property
    def fastest_misses_by_hours(self) -> float:
        return self.fastest.wall_clock_hours - self.deadline_hours

    @property
    def cheapest_misses_by_hours(self) -> float:
        return self.cheapest.wall_clock_hours - self.deadline_hours

    def as_dict(self) -> dict:
        d = self.deadline_hours
        return {"reason": self.reason, "binding": list(self.binding),
                "fastest": self.fastest.as_dict(), "cheapest": self.cheapest.as_dict(),
                "fastest_misses_by_hours": self.fastest.wall_clock_hours - d,
                "cheapest_misses_by_hours": self.cheapest.wall_clock_hours - d,
                "relaxed": {k: v.as_dict() for k, v in self.relaxed.items()}}


@record
class FlaggedSkipped:
    count: int
    cheapest: Offer | None  # by USD per GPU-hour
    cheapest_usd_per_gpu_hour: float | None

    def as_dict(self) -> dict:
        o = self.cheapest
        return {"count": self.count, "cheapest": None if o is None else {
            "cloud": o.cloud, "instance_type": o.instance_type, "region": o.region,
            "pricing": o.pricing, "usd_per_hour": o.usd_per_hour,
            "usd_per_gpu_hour": self.cheapest_usd_per_gpu_hour, "flags": list(o.flags),
            "reasons": o.flag_reasons}}


@record
class PlanResult:
    recommendation: Candidate | None
    candidates: tuple[Candidate, ...]
    frontier: tuple[Candidate, ...]
    points: tuple[PlanPoint, ...]
    infeasible: Infeasible | None
    constraints: object  # the Constraints the plan was made under
    evaluated: int  # (instance type, nodes, parallel plan) model evaluations
    offers_considered: int
    catalog: Mapping  # where the prices come from (``Catalog.provenance``)
    spot_vs_on_demand: Mapping[str, Candidate] = field(default_factory=dict)
    by_group: Mapping[str, Candidate] = field(default_factory=dict)  # best per accelerator|cloud
    group_by: str | None = None
    flagged_skipped: FlaggedSkipped | None = None
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("catalog", "spot_vs_on_demand", "by_group"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    def as_dict(self, *, points: bool = False) -> dict:
        c = self.constraints
        d = {"recommendation": self.recommendation.as_dict() if self.recommendation else None,
             "candidates": [x.as_dict() for x in self.candidates],
             "frontier": [x.as_dict() for x in self.frontier],
             "infeasible": self.infeasible.as_dict() if self.infeasible else None,
             "spot_vs_on_demand": {k: v.as_dict() for k, v in self.spot_vs_on_demand.items()},
             "search": {"model_evaluations": self.evaluated,
                        "offers_considered": self.offers_considered},
             "constraints": c.as_dict() if hasattr(c, "as_dict") else None,
             "flagged_offers_skipped": self.flagged_skipped.as_dict()
             if self.flagged_skipped else None,
             "catalog": thaw(self.catalog), "notes": list(self.notes)}
        if self.group_by:
            d["by"] = self.group_by
            d["by_group"] = {k: v.as_dict() for k, v in self.by_group.items()}
        if points:
            d["points"] = [p.as_dict() for p in self.points]
        return d


@record
class Option:
    """A candidate of ``plan_options`` before it is described: what ranking it and choosing
    among options reads (the same figures its ``Candidate`` will carry). ``index`` and
    ``regions`` say which candidate it is to ``PlanOptions.describe``."""

    index: int
    regions: tuple[str, ...]
    cloud: str
    region: str
    instance_type: str
    pricing: str
    accelerator: str
    nodes: int
    gpus: int
    cost_usd: float
    wall_clock_hours: float


@record
class PlanOptions:
    """``plan``'s candidates and feasible frontier as light options, for a caller that keeps a
    few (the team allocator): ``describe`` gives the kept ones' full ``Candidate``, exactly as
    ``plan`` would. ``infeasible_reason`` and ``fastest_hours`` when nothing is feasible."""

    candidates: tuple[Option, ...]
    feasible_frontier: tuple[Option, ...]  # the frontier's feasible points, by cost
    infeasible_reason: str | None
    fastest_hours: float | None
    describer: Callable = field(repr=False, compare=False)

    def describe(self, options: Sequence[Option]) -> tuple[Candidate, ...]:
        return self.describer(options)
