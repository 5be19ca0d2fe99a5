"""`plan`: the cheapest configuration that meets the deadline, and the cost/time frontier.

Search space: every usable offer (cloud × region × instance type × pricing model, after the
user's filters and overrides) × every node count 1 … ⌊max GPUs / GPUs per node⌋ (1 only when
the instance has no known inter-node network) × every parallel plan of the performance model
(within the workload's framework and pins). The model runs once per distinct instance type over
all its node counts and plans (vectorised); prices, risk and constraints then apply per offer.

For candidate c with n nodes at price p (USD per instance-hour):
    B_c     failure-free calendar hours (training, checkpoint writes, evaluation, other losses)
    C_c     = B_c·X + K·L: model error X ~ LogNormal(0, σ), interruptions K ~ Poisson(rate·B_c)
              (hardware failures per GPU, spot reclaims per node: the catalog's rate for the
              offer, else the cloud's default), L hours lost per interruption (_probability)
    wall_c  = E[C_c] ≈ ideal_c / goodput_c;  P_c = P(C_c ≤ deadline)
    cost_c  = n · p · wall_c, or whole commitment terms (_candidates.run_cost_usd)
Feasible: fits memory, P_c ≥ min probability (or wall_c ≤ deadline when it is 0), cost_c ≤
budget, GPUs within max GPUs and quota. Ranked by (cost, wall, a stable key) so the answer never
depends on the order offers arrive in; identical configurations at the same price in several
regions are one candidate listing its regions. The frontier is the Pareto set of (cost, wall)
over every candidate within the budget and quotas, whatever the deadline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from catalog import CLOUDS, Catalog, Offer, UnknownNameError

from ..model import (
    NO_CALIBRATION,
    Assumptions,
    Calibration,
    ModelScalars,
    PlannerError,
    Workload,
    can_time,
    check_pins,
    checkpoint_bytes,
    cluster_for_instance,
    cluster_inputs,
    goodput_arrays,
    nic_by_nodes,
    plan_grid,
    probability_within,
    prune,
    range_sigma,
    run_model,
    workload_scales,
)
from ._candidates import FlaggedSkipped, PlanResult
from ._quota import Quotas
from ._result import Arrays, build_result

GPU_VENDORS = ("NVIDIA", "AMD")  # the model's kernels and NCCL/RCCL constants apply to these
DEFAULT_MAX_GPUS = 1024
MAX_GPUS_LIMIT = 65536  # the largest cluster the search considers (as team plans)
DEFAULT_MIN_PROBABILITY = 0.9
DEFAULT_PRICING = ("on_demand", "spot")
# Spot capacity: no cloud publishes how many GPU instances a spot pool holds; AWS's Spot
# placement score is the way to check before launch. Beyond this many instances of one type in
# one region a spot plan carries a capacity warning (a policy default, --max-spot-instances).
DEFAULT_MAX_SPOT_INSTANCES = 8
MAX_SPOT_INSTANCES_LIMIT = 100_000  # far above any spot fleet: a larger value is a typo
GROUP_BY = ("accelerator", "cloud")


# The defaults of the constraints a front end may leave out (None): the one place they live.
CONSTRAINT_DEFAULTS = {"max_gpus": DEFAULT_MAX_GPUS, "min_probability": DEFAULT_MIN_PROBABILITY,
            "pricing": DEFAULT_PRICING, "commitment_use": 0.0,
            "max_spot_instances": DEFAULT_MAX_SPOT_INSTANCES}


@dataclass(frozen=True, slots=True, kw_only=True)
class Constraints:
    """What a plan must respect. Fields given as None take their default
    (``CONSTRAINT_DEFAULTS``)."""

    deadline_hours: float
    max_gpus: int | None = None
    budget_usd: float | None = None
    min_probability: float | None = None  # 0: no probability required (wall ≤ deadline)
    clouds: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    pricing: tuple[str, ...] | None = None
    gpus: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()  # instance types, clouds or regions to leave out
    quotas: Quotas | None = None
    checkpoint_storage_usd_per_gb_month: float | None = None
    commitment_use: float | None = None  # share of a commitment's remaining term used after
    max_spot_instances: int | None = None
    allow_flagged: bool = False  # use offers whose price the catalog flagged
    group_by: str | None = None  # best plan per accelerator or per cloud

    def __post_init__(self) -> None:
        for name, default in CONSTRAINT_DEFAULTS.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, default)

        def bad(field: str, msg: str) -> PlannerError:
            return PlannerError(msg, field=field, value=getattr(self, field))

        if not (isinstance(self.deadline_hours, int | float)
                and math.isfinite(self.deadline_hours) and self.deadline_hours > 0):
            raise bad("deadline", "the deadline must be in the future. To fix: pass e.g. 14d")
        if not 1 <= self.max_gpus <= MAX_GPUS_LIMIT:
            raise bad("max_gpus", f"max GPUs must be between 1 and {MAX_GPUS_LIMIT:,}, got "
                      f"{self.max_gpus}. To fix: e.g. 256")
        if self.budget_usd is not None and not (math.isfinite(self.budget_usd)
                                                and self.budget_usd > 0):
            raise bad("budget_usd", f"the budget must be a positive number of USD, got "
                      f"{self.budget_usd!r}. To fix: e.g. 250000")
        if not (math.isfinite(self.min_probability) and 0 <= self.min_probability <= 1):
            raise bad("min_probability", f"the minimum probability must be between 0 and 1, "
                      f"got {self.min_probability!r}. To fix: e.g. 0.9 (0 disables)")
        if not (math.isfinite(self.commitment_use) and 0 <= self.commitment_use <= 1):
            raise bad("commitment_use", f"the commitment use must be a share between 0 and 1,"
                      f" got {self.commitment_use!r}. To fix: e.g. 0.5 if you will use half "
                      "of the remaining term")
        if not 1 <= self.max_spot_instances <= MAX_SPOT_INSTANCES_LIMIT:
            raise bad("max_spot_instances", "the spot fleet limit must be between 1 and "
                      f"{MAX_SPOT_INSTANCES_LIMIT:,} instances, got {self.max_spot_instances}. "
                      "To fix: e.g. 8")
        s = self.checkpoint_storage_usd_per_gb_month
        if s is not None and not (math.isfinite(s) and 0 <= s <= 1000):
            raise bad("checkpoint_storage_usd_per_gb_month", "the checkpoint storage price "
                      f"must be between 0 and 1,000 USD per GB-month, got {s!r}. To fix: e.g. "
                      "0.023 (object storage)")
        if self.group_by is not None and self.group_by not in GROUP_BY:
            raise bad("group_by", f"group by {self.group_by!r} is not one of "
                      f"{', '.join(GROUP_BY)}. To fix: pick one of them")

    @property
    def probability_required(self) -> float | None:
        return self.min_probability or None

    def as_dict(self) -> dict:
        return {"deadline_hours": self.deadline_hours, "max_gpus": self.max_gpus,
                "budget_usd": self.budget_usd, "min_probability": self.min_probability or None,
                "clouds": list(self.clouds), "regions": list(self.regions),
                "pricing": list(self.pricing), "gpus": list(self.gpus),
                "exclude": list(self.exclude), "commitment_use": self.commitment_use,
                "max_spot_instances": self.max_spot_instances,
                "allow_flagged": self.allow_flagged, "quotas": self.quotas is not None,
                "checkpoint_storage_usd_per_gb_month":
                    self.checkpoint_storage_usd_per_gb_month}


def spot_rate(offer: Offer, A: Assumptions) -> float:
    """Interruptions per instance-hour: the offer's own rate (AWS advisor buckets), else the
    cloud's default."""
    if offer.pricing != "spot":
        return 0.0
    if offer.interruption_rate_per_hour is not None:
        return offer.interruption_rate_per_hour
    return A.spot_interruptions_per_hour[offer.cloud]


def usable_offers(catalog: Catalog, workload: Workload,
                  c: Constraints) -> tuple[list[Offer], FlaggedSkipped]:
    """Offers that pass the filters and whose accelerator the model can cost, and what the
    catalog's flags kept out (or let in, with ``allow_flagged``)."""
    from catalog import select_offers

    exclude = set(c.exclude)
    explicit = bool(c.gpus)
    rows = select_offers(catalog, gpus=c.gpus, clouds=c.clouds, regions=c.regions,
                         pricing=c.pricing, include_unpriced=False, include_flagged=True)
    out, skipped = [], []
    for r in rows:
        o, acc = r.offer, r.accelerator
        if o.usd_per_hour is None or {o.instance_type, o.cloud, o.region} & exclude:
            continue
        if not explicit and acc.vendor not in GPU_VENDORS:
            continue  # TPU/Trainium/Gaudi only when asked for by --gpu
        if not can_time(acc, workload.precision):
            continue
        if o.price_usable or c.allow_flagged:
            out.append(o)
        else:
            skipped.append((r.usd_per_gpu_hour, o))
    cheapest = min(skipped, key=lambda x: (x[0], x[1].key), default=None)
    return out, FlaggedSkipped(count=len(skipped), cheapest=cheapest[1] if cheapest else None,
                               cheapest_usd_per_gpu_hour=cheapest[0] if cheapest else None)


def plan(workload: Workload, catalog: Catalog, constraints: Constraints, *,
         assumptions: Assumptions | None = None, calibration: Calibration = NO_CALIBRATION,
         top_n: int = 10, points: bool = False) -> PlanResult:
    """The cheapest plans that meet the deadline (``top_n`` distinct ones), the frontier and,
    with ``points``, every (offer, node count)'s best plan for charts."""
    import numpy as np

    A = assumptions or Assumptions()
    c = constraints
    if not 1 <= top_n <= 1000:
        raise PlannerError(f"top must be between 1 and 1,000, got {top_n}. To fix: e.g. 10",
                           field="top", value=top_n)
    known = ({t.name for t in catalog.instance_types} | set(catalog.regions())
             | set(CLOUDS))
    for name in c.exclude:
        if name not in known:
            raise UnknownNameError("instance type, cloud or region", name, known,
                                   hint="`exclude` takes instance types, clouds or regions")
    check_pins(workload.pins, workload.framework)
    offers, flagged = usable_offers(catalog, workload, c)
    ms = ModelScalars.of(workload)
    ckpt = checkpoint_bytes(ms)
    # ---- 1. the model, once per instance type, over all node counts and plans ------------
    by_type: dict[tuple[str, str], list[Offer]] = {}
    for o in offers:
        by_type.setdefault((o.cloud, o.instance_type), []).append(o)
    # (instance, cluster inputs, grid, result, best rows per node count, workload measurements,
    # σ per grid row)
    per_type = []
    base_sigma = range_sigma(A, workload.framework)
    evaluated = 0
    # Instance types that look the same to the model (same accelerator, node shape, links
    # and memory) share one evaluation: GCP's -nolssd twins, AWS p5e/p5en, Azure sizes.
    shared: dict[tuple, tuple | None] = {}
    for key in sorted(by_type):
        it = catalog.instance_type_by_key(*key)
        max_nodes = c.max_gpus // it.gpu_count if it.inter_node_gbps else 1
        if max_nodes < 1:
            continue
        cluster = cluster_for_instance(catalog, it, 1)
        try:
            ci = cluster_inputs(cluster, workload, A, calibration,
                                memory_gib=it.gpu_memory_gib)
        except PlannerError:
            continue
        # A fabric measured on this instance type (per node count) makes it unlike others.
        measured_fabric = (not calibration.empty
                           and calibration.inter(it.name, 2) is not None)
        signature = (it.accelerator, it.gpu_count, max_nodes, ci.matmul_tflops,
                     ci.intra_busbw_gb_per_s, ci.nic_gb_per_s_per_gpu, ci.memory_gib,
                     ci.hbm_gb_per_s, ci.hop_latency_s, it.name if measured_fabric else None)
        if signature not in shared:
            grid = prune(ms, A, plan_grid(ms, it.gpu_count, np.arange(1, max_nodes + 1),
                                          workload.recompute, workload=workload), ci)
            if len(grid["tp"]) == 0:
                shared[signature] = None
                continue
            scale, found = workload_scales(calibration, workload, it.accelerator, grid)
            res = run_model(ms, A, grid, ci, it.gpu_count, layer_scale=scale,
                            nic=nic_by_nodes(cluster, ci, calibration, grid["nodes"]))
            evaluated += len(grid["tp"])
            step = np.where(res["fits"], res["step_s"], np.inf)
            order = np.lexsort((res["memory_gib"], step, grid["nodes"]))
            n_sorted = grid["nodes"][order]
            first = np.r_[True, n_sorted[1:] != n_sorted[:-1]]
            best = order[first]
            sigma_rows = np.full(len(grid["tp"]), base_sigma)
            for (mb, rc), m in found.items():
                rows_m = np.flatnonzero((grid["mb"] == mb) & (grid["rc"] == rc))
                covered = res["layer_s"][rows_m] / res["step_s"][rows_m]
                sigma_rows[rows_m] = [range_sigma(A, workload.framework, m, float(x))
                                      for x in covered]
            shared[signature] = (grid, res, best[np.isfinite(step[best])], found, sigma_rows)
        if shared[signature] is None:
            continue
        grid, res, best, found, sigma_rows = shared[signature]
        if best.size:
            per_type.append((it, ci, grid, res, best, found, sigma_rows))
    if not per_type:
        raise PlannerError(_nothing_fits(workload, offers, flagged))
    # ---- 2. candidates: (offer, node count) with time, cost and probability -------------
    offer_list, parts = [], []
    for ti, (it, _ci, grid, res, best, _found, _sig) in enumerate(per_type):
        tokens_per_step = res["micro_batches"][best] * grid["dp"][best] * grid["mb"][best] \
            * workload.seq_len
        ideal = np.ceil(workload.tokens / tokens_per_step) * res["step_s"][best] / 3600
        for o in by_type[(it.cloud, it.name)]:
            oi = len(offer_list)
            offer_list.append(o)
            k = len(best)
            parts.append((np.full(k, oi), np.full(k, ti), best, grid["nodes"][best],
                          grid["nodes"][best] * it.gpu_count, ideal))
    offer_idx, type_idx, rows, node_arr, gpu_arr, ideal_arr = (
        np.concatenate([p[j] for p in parts]) for j in range(6))
    rate = np.array([spot_rate(o, A) for o in offer_list])[offer_idx]
    restart = np.array([A.spot_restart_minutes if o.pricing == "spot" else A.restart_minutes
                        for o in offer_list])[offer_idx]
    nodes = node_arr.astype(np.float64)
    gpus = gpu_arr.astype(np.float64)
    gp = goodput_arrays(ideal_hours=ideal_arr, gpus=gpus, nodes=nodes, checkpoint_bytes=ckpt,
                        A=A, interruption_rate_per_node_hour=rate, restart_minutes=restart)
    sigma = np.concatenate([per_type[ti][6][per_type[ti][4]] for ti in range(len(per_type))
                            for _ in by_type[(per_type[ti][0].cloud, per_type[ti][0].name)]])
    prob = probability_within(c.deadline_hours, base_hours=gp["checkpointed_hours"],
                              loss_hours=gp["loss_hours"], rate=gp["rate"], sigma=sigma)
    caps = None
    if c.quotas is not None:
        caps = np.array([c.quotas.limit(o.cloud, o.region, catalog.instance_type_by_key(
            o.cloud, o.instance_type).accelerator) for o in offer_list])[offer_idx]
    arrays = Arrays(offer_idx=offer_idx, type_idx=type_idx, rows=rows, nodes=nodes,
                    gpus=gpus, ideal=ideal_arr, rate=rate, restart=restart, gp=gp, prob=prob,
                    quota_caps=caps, sigma=sigma, checkpoint_bytes=ckpt)
    cat_info = {"name": catalog.name, "as_of": {cl: catalog.as_of(cl).isoformat()
                                               for cl in CLOUDS if catalog.as_of(cl)},
                "source": catalog.source, "overrides": catalog.overrides_path}
    notes = (f"deadline {c.deadline_hours:,.1f} h; {len(offers)} offers"
             + (f" ({flagged.count} flagged offers skipped)" if flagged.count else "")
             + f"; up to {c.max_gpus} GPUs; model evaluated {evaluated:,} (instance type × "
             f"nodes × plan); probability includes the model's range (σ {base_sigma:.3f}"
             + (", narrowed where a workload probe measured the layers" if
                (sigma != base_sigma).any() else "") + ")",)
    return build_result(workload=workload, catalog=catalog, constraints=c, A=A, ms=ms,
                        offers=offer_list, per_type=per_type, arrays=arrays, top_n=top_n,
                        points=points, evaluated=evaluated, offers_considered=len(offers),
                        flagged=flagged, catalog_info=cat_info, notes=notes)


def _nothing_fits(workload: Workload, offers: Sequence[Offer], flagged: FlaggedSkipped) -> str:
    if not offers:
        extra = (f" ({flagged.count} offers match but their prices are flagged: see `gpuplan "
                 "offers --flagged`, or pass `allow_flagged`)") if flagged.count else ""
        return ("no offer matches the filters" + extra + ". To fix: widen `clouds`/`regions`/"
                "`pricing`/`gpu` or check `gpuplan offers`")
    pins = workload.pins.as_dict()
    if pins:
        pinned = ", ".join(f"{k}={v}" for k, v in pins.items())
        return (f"no matching offer can run the pinned plan ({pinned}) for this model within "
                f"the GPU limit (tensor parallelism must divide a node's GPUs and the heads; "
                f"the model must fit). To fix: change or drop the pins, or "
                "raise `max_gpus`")
    return (f"the model ({workload.arch.params_total() / 1e9:.1f}B parameters) fits on none of "
            f"the {len(offers)} matching offers within the GPU limit. To fix: raise `max_gpus`, "
            "allow GPUs with more memory, or use `recompute` full")
