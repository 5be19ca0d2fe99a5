"""`plan`: the cheapest configuration that meets the deadline, and the cost/time frontier.

Search space: every usable offer (cloud × region × instance type × pricing model, after the
user's filters and overrides) × every node count 1 … ⌊max GPUs / GPUs per node⌋ (1 only when
the instance has no known inter-node network) × every parallel plan of the performance model
(within the workload's framework and pins). The model runs once per distinct instance *shape*
over all its node counts and plans (vectorised) and is kept for later calls (``_evaluate``);
time, risk and cost then apply per risk entry and cost group (``_space``), and the lists of
the answer are read off the few candidates that can enter them (``_select``).

How the work is shared (issue #19), none of it changing an answer:
    kept per process   usable offers per (catalog, filters); the model's fastest plan per node
                       count per instance shape (token-, price- and deadline-free); the
                       instance types and the candidates' layout per (offers, shape, quotas)
    per call           calendar time per risk entry (shape × spot rate × restart × nodes), not
                       per offer; probabilities only for the candidates a list reads, cheapest
                       first; full descriptions only for the candidates shown (``plan_options``
                       describes only those its caller keeps)

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

from catalog import Catalog, Offer, record

from ..model import (
    NO_CALIBRATION,
    PRECISIONS,
    Assumptions,
    Calibration,
    ModelScalars,
    PlannerError,
    Workload,
    can_time,
    check_pins_fit_model,
    checkpoint_bytes,
    cluster_for_instance,
    cluster_inputs,
    format_hours,
    inference_only_message,
    range_sigma,
    reserve_message,
)
from ._candidates import FlaggedSkipped, PlanOptions, PlanResult
from ._constraints import (
    CONSTRAINT_DEFAULTS,
    MAX_GPUS_LIMIT,
    Constraints,
    check_exclude,
    in_catalog_spelling,
)
from ._evaluate import (
    CACHE_BYTES,
    BoundedCache,
    CallContext,
    clear_cache,
    evaluation_bytes,
    shape_evaluation,
)
from ._layout import Layout, TypeEntry
from ._result import build_options, build_result
from ._select import select
from ._space import Space

GPU_VENDORS = ("NVIDIA", "AMD")  # the model's kernels and NCCL/RCCL constants apply to these


def spot_rate(offer: Offer, A: Assumptions) -> float:
    """Interruptions per instance-hour: the offer's own rate (AWS advisor buckets), else the
    cloud's default."""
    if offer.pricing != "spot":
        return 0.0
    if offer.interruption_rate_per_hour is not None:
        return offer.interruption_rate_per_hour
    return A.spot_interruptions_per_hour[offer.cloud]


def _considered(catalog: Catalog, c: Constraints, precision: str | None = None):
    """The priced offer rows the filters and `exclude` keep, GPUs only unless `gpu` names
    accelerators: what ``usable_offers`` times (and, when none can be timed, what
    ``_nothing_fits`` names). With ``precision`` and no `gpu`, only the GPUs the model
    can time at it (their offers alone are built from the catalog cache)."""
    from catalog import select_offers

    gpus = c.gpus or _default_gpus(catalog, precision)
    if not gpus:  # an empty filter would keep every accelerator
        return
    exclude = set(check_exclude(c.exclude, catalog))  # 'P5.48XLARGE' is p5.48xlarge
    for r in select_offers(catalog, gpus=gpus, clouds=c.clouds, regions=c.regions,
                           pricing=c.pricing, include_unpriced=False, include_flagged=True):
        o = r.offer
        if not {o.instance_type, o.cloud, o.region} & exclude:
            yield r


def _default_gpus(catalog: Catalog, precision: str | None) -> tuple[str, ...]:
    """The accelerators searched without `gpu`: TPU/Trainium/Gaudi by `gpu` only, and at
    ``precision`` those the model can time (if none can, all of them: the filters are still
    checked, and the caller drops what it cannot time)."""
    vendors = [a for a in catalog.accelerators if a.vendor in GPU_VENDORS]
    return tuple(a.name for a in ([a for a in vendors if precision is None
                                   or can_time(a, precision)] or vendors))


def usable_offers(catalog: Catalog, workload: Workload,
                  c: Constraints) -> tuple[list[Offer], FlaggedSkipped]:
    """Offers that pass the filters and whose accelerator the model can cost, and what the
    catalog's flags kept out (or let in, with ``allow_flagged``)."""
    out, skipped = [], []
    timed: dict[str, bool] = {}  # can_time per accelerator (thousands of offers, ~40 of them)
    for r in _considered(catalog, c, workload.precision):
        o, acc = r.offer, r.accelerator
        if acc.name not in timed:
            timed[acc.name] = can_time(acc, workload.precision)
        if not timed[acc.name]:
            continue
        if o.price_usable or c.allow_flagged:
            out.append(o)
        else:
            skipped.append((r.usd_per_gpu_hour, o))
    cheapest = min(skipped, key=lambda x: (x[0], x[1].key), default=None)
    return out, FlaggedSkipped(count=len(skipped), cheapest=cheapest[1] if cheapest else None,
                               cheapest_usd_per_gpu_hour=cheapest[0] if cheapest else None)


# Kept per process (bounded): the evaluations _TYPES and _LAYOUTS refer to stay alive with
# them, so they are bounded by the bytes of those evaluations too.
_USABLE = BoundedCache(8)
_TYPES = BoundedCache(64, max_bytes=CACHE_BYTES,
                      weigh=lambda hit: sum(evaluation_bytes(t.ev) for t in hit[1]))
_LAYOUTS = BoundedCache(64, max_bytes=CACHE_BYTES,
                        weigh=lambda hit: sum(evaluation_bytes(t.ev) for t in hit[0])
                        + hit[1].nbytes)


def clear_caches() -> None:
    """Forget everything kept in this process (filtered offers, instance types, layouts,
    shape evaluations): the next plan starts as a new process's does — reading evaluations
    kept on disk unless ``GPUPLAN_NO_CACHE=1``. For tests and benchmarks."""
    for kept in (_USABLE, _TYPES, _LAYOUTS):
        kept.clear()
    clear_cache()


def _usable_cached(catalog: Catalog, workload: Workload, c: Constraints):
    """``usable_offers`` kept per (catalog, precision, filters): team jobs and repeated plans
    filter the same catalog the same way. Also each offer's key (the ranking's tie-break)."""
    key = (id(catalog), workload.precision, c.gpus, c.clouds, c.regions, c.pricing,
           c.exclude, c.allow_flagged)
    hit = _USABLE.get(key)
    if hit is None or hit[0] is not catalog:  # an id reused by another catalog: recompute
        out, flagged = usable_offers(catalog, workload, c)
        hit = (catalog, tuple(out), flagged, {id(o): o.key for o in out})
        _USABLE.put(key, hit)
    return hit[1], hit[2], hit[3]


def _types_cached(ctx: CallContext, catalog: Catalog, offers: tuple, max_gpus: int):
    """The instance types with usable offers and their shapes' evaluations (``_evaluate``),
    and how many (instance type × nodes × plan) rows the model timed: kept per (offers,
    max GPUs, workload shape, assumptions, calibration)."""
    key = (id(offers), max_gpus, ctx.workload_key, ctx.assumptions_key, ctx.calibration_key)
    hit = _TYPES.get(key)
    if hit is None or hit[0] is not offers:
        hit = (offers, *_types(ctx, catalog, offers, max_gpus))
        _TYPES.put(key, hit)
    return hit[1], hit[2]


def _types(ctx: CallContext, catalog: Catalog, offers: tuple, max_gpus: int):
    types, used = [], {}
    for key in sorted({(o.cloud, o.instance_type) for o in offers}):
        it = catalog.instance_type_by_key(*key)
        # without a known inter-node network an instance type runs as one node
        max_nodes = max_gpus // it.gpu_count if it.inter_node_gbps else int(
            it.gpu_count <= max_gpus)
        if max_nodes < 1:
            continue
        cluster = cluster_for_instance(catalog, it, 1)
        try:
            ci = cluster_inputs(cluster, ctx.workload, ctx.A, ctx.calibration,
                                memory_gib=it.gpu_memory_gib)
        except PlannerError:
            continue
        ev = shape_evaluation(ctx, it, cluster, ci, max_nodes)
        if ev is None:
            continue
        used[id(ev)] = ev
        if len(ev.nodes):
            types.append(TypeEntry(it=it, ci=ci, ev=ev, calibration=ctx.calibration))
    return tuple(types), sum(ev.evaluated for ev in used.values())


def _layout(types, offers, offer_keys, A, c) -> Layout:
    """The candidates' static layout: offers grouped by instance type in the types' order
    (within a type, as the catalog lists them), spot rates, restarts and quota caps."""
    by_type: dict[tuple[str, str], list[Offer]] = {}
    for o in offers:
        by_type.setdefault((o.cloud, o.instance_type), []).append(o)
    pairs = [(o, ti) for ti, t in enumerate(types) for o in by_type[(t.it.cloud, t.it.name)]]
    offer_list, offer_type = [o for o, _ in pairs], [ti for _, ti in pairs]
    caps = None
    if c.quotas is not None:
        import numpy as np

        caps = np.array([c.quotas.limit(o.cloud, o.region, types[ti].it.accelerator)
                         for o, ti in zip(offer_list, offer_type, strict=True)], dtype=float)
    return Layout(offers=offer_list, keys=[offer_keys[id(o)] for o in offer_list],
                  types=types, offer_type=offer_type,
                  rate=[spot_rate(o, A) for o in offer_list],
                  restart=[A.spot_restart_minutes if o.pricing == "spot" else A.restart_minutes
                           for o in offer_list], caps=caps)


def plan(workload: Workload, catalog: Catalog, constraints: Constraints, *,
         assumptions: Assumptions | None = None, calibration: Calibration = NO_CALIBRATION,
         top_n: int = 10, points: bool = False) -> PlanResult:
    """The cheapest plans that meet the deadline (``top_n`` distinct ones), the frontier and,
    with ``points``, every (offer, node count)'s best plan for charts."""
    search = _search(workload, catalog, constraints, assumptions, calibration, top_n)
    sel = select(constraints=constraints, space=search.space, top_n=top_n, points=points)
    # the echo names regions, `exclude` and accelerators as the catalog does, not as typed
    return build_result(workload=workload, catalog=catalog,
                        constraints=in_catalog_spelling(constraints, catalog), A=search.A,
                        ms=search.ms, space=search.space, sel=sel, points=points,
                        evaluated=search.evaluated, offers_considered=search.offers_considered,
                        flagged=search.flagged, catalog_info=search.catalog_info,
                        notes=search.notes)


def plan_options(workload: Workload, catalog: Catalog, constraints: Constraints, *,
                 assumptions: Assumptions | None = None,
                 calibration: Calibration = NO_CALIBRATION, top_n: int = 10) -> PlanOptions:
    """``plan``'s candidates and feasible frontier as light options, described on request
    (``PlanOptions.describe``): the same answer for a caller that keeps a few of many."""
    search = _search(workload, catalog, constraints, assumptions, calibration, top_n)
    sel = select(constraints=constraints, space=search.space, top_n=top_n, points=False)
    return build_options(workload=workload, catalog=catalog, constraints=constraints,
                         A=search.A, ms=search.ms, space=search.space, sel=sel)


@record(kw_only=False)
class _Search:
    space: Space
    A: Assumptions
    ms: ModelScalars
    evaluated: int
    offers_considered: int
    flagged: FlaggedSkipped
    catalog_info: dict
    notes: tuple[str, ...]


def _search(workload: Workload, catalog: Catalog, c: Constraints,
            assumptions: Assumptions | None, calibration: Calibration, top_n: int) -> _Search:
    """Check the inputs, time every instance shape (``_evaluate``) and lay out the candidates
    (``Space``)."""
    A = assumptions or Assumptions()
    if not 1 <= top_n <= 1000:
        raise PlannerError(f"`top` must be between 1 and 1,000, got {top_n}. To fix: e.g. "
                           "`top` 10", field="top", value=top_n)
    check_exclude(c.exclude, catalog)
    check_pins_fit_model(workload)  # what no cluster can run, before searching any
    offers, flagged, offer_keys = _usable_cached(catalog, workload, c)
    ms = ModelScalars.of(workload)
    ctx = CallContext.of(workload, ms, A, calibration)
    types, evaluated = _types_cached(ctx, catalog, offers, c.max_gpus)
    if not types:
        raise PlannerError(_nothing_fits(workload, offers, flagged, catalog, c, A))
    key = (id(types), ctx.assumptions_key, c.quotas)
    hit = _LAYOUTS.get(key)
    if hit is None or hit[0] is not types:
        hit = (types, _layout(types, offers, offer_keys, A, c))
        _LAYOUTS.put(key, hit)
    space = Space(hit[1], workload=workload, A=A, ckpt=checkpoint_bytes(ms), constraints=c)
    base_sigma = range_sigma(A, workload.framework, moe=workload.arch.is_moe)
    notes = (f"deadline {format_hours(c.deadline_hours)}; {len(offers):,} offers"
             + (f" ({flagged.count} flagged offers skipped)" if flagged.count else "")
             + f"; up to {c.max_gpus:,} GPUs; model evaluated {evaluated:,} (instance type × "
             f"nodes × plan); probability includes the model's range (σ {base_sigma:.3f}"
             + (", narrowed where a workload probe measured the layers" if
                (space.e_sigma != base_sigma).any() else "") + ")",
             ) + _pricing_note(catalog, c, offers, workload.precision)
    return _Search(space=space, A=A, ms=ms, evaluated=evaluated, offers_considered=len(offers),
                   flagged=flagged, catalog_info=catalog.provenance(), notes=notes)


def _nothing_fits(workload: Workload, offers: Sequence[Offer], flagged: FlaggedSkipped,
                  catalog: Catalog, c: Constraints, A: Assumptions) -> str:
    if not offers:
        # the accelerators of the offers considered that the model cannot time at its precision
        untimed = sorted({r.accelerator.name for r in _considered(catalog, c)
                          if not can_time(r.accelerator, workload.precision)})
        inference = [n for n in untimed if catalog.accelerator(n).inference_only]
        if untimed and not flagged.count and inference == untimed:
            return inference_only_message(inference, "`gpu`")
        untimed = [n for n in untimed if n not in inference]
        if untimed and not flagged.count:  # the filters match: the precision is what fails
            names = ", ".join(untimed[:6]) + (", …" if len(untimed) > 6 else "")
            also = (f"; {', '.join(inference)}: inference only" if inference else "")
            # a precision that times them all; none (Gaudi: no peaks at all): "choose another
            # precision" sent the user through every one to the same error
            others = [p for p in PRECISIONS if p != workload.precision and all(
                can_time(catalog.accelerator(n), p) for n in untimed)]
            fix = (f"choose `precision` {' or '.join(others)}, or accelerators that support "
                   f"{workload.precision} with `gpu`" if others else
                   "choose accelerators with published peaks with `gpu` (e.g. H100); no "
                   "`precision` can be timed on these")
            return (f"the offers that match the filters are on accelerators that cannot run "
                    f"{workload.precision} training ({names}: no {workload.precision} or "
                    f"half-precision peak, memory or bandwidth in the catalog{also}). To fix: "
                    f"{fix}")
        if flagged.count:
            return (f"no offer matches the filters ({flagged.count} offers match but their "
                    "prices are flagged: see `gpuplan offers --flagged`, or pass "
                    f"`allow_flagged`). To fix: {_to_fix(_filters_set(c))}")
        return _no_offer_matches(catalog, c, workload.precision)
    smallest = min(catalog.instance_type_by_key(o.cloud, o.instance_type).gpu_count
                   for o in offers)
    if smallest > c.max_gpus:  # "fits on none … more memory" misled: a 1.6B model, 2 H200s
        return (f"every matching offer's instance has at least {smallest:,} GPUs, above "
                f"`max_gpus` {c.max_gpus:,}. To fix: raise `max_gpus` to {smallest:,} or "
                "more, or choose accelerators sold in smaller instances with `gpu`")
    memory = [m for o in offers if (m := catalog.instance_type_by_key(
        o.cloud, o.instance_type).gpu_memory_gib) is not None]
    largest = max(memory, default=math.inf)
    if A.runtime_reserve_gib >= largest * A.usable_memory_fraction:  # kept on every GPU: more
        # or bigger counts cannot help
        return reserve_message(A, usable_on="the largest matching GPU", memory_gib=largest)
    pins = workload.pins.as_dict()
    mb, gbt = pins.get("micro_batch"), workload.global_batch_tokens
    # the default batch grows with the GPUs: at the limit it is the largest
    seqs = workload.sequences_per_step(c.max_gpus)
    if mb and mb > seqs:  # each rank needs whole micro-batches
        batch = (f"{gbt:,} tokens" if gbt else "the model's default at "
                 f"{c.max_gpus:,} GPUs") + f": {seqs:,} sequence{'s' if seqs != 1 else ''}"
        return (f"the pinned micro_batch={mb} is larger than the global batch ({batch} of "
                f"{workload.seq_len:,}). To fix: lower `micro_batch` to "
                f"{max(seqs, 1):,} or less, or {'raise' if gbt else 'set'} "
                f"`global_batch_tokens` to {mb * workload.seq_len:,} or more")
    if pins:
        pinned = ", ".join(f"{k}={v}" for k, v in pins.items())
        return (f"no matching offer can run the pinned plan ({pinned}) for this model within "
                "the GPU limit (tensor parallelism must divide the GPUs NVLink joins and the "
                "heads; the model must fit). To fix: change or drop the pins"
                + (", or raise `max_gpus`" if c.max_gpus < MAX_GPUS_LIMIT else ""))
    types = {catalog.instance_type_by_key(o.cloud, o.instance_type) for o in offers}
    if all(not it.inter_node_gbps for it in types):  # "more memory" misled: one node each
        most = max(it.gpu_count for it in types)
        return (f"the model ({workload.arch.params_total() / 1e9:,.1f}B parameters) fits on "
                f"none of the {len(offers):,} matching offers: their instance types have no "
                f"inter-node network in the catalog, so each runs as one node (at most {most} "
                f"GPU{'s' if most != 1 else ''}). To fix: allow instance types with a cluster "
                "network (`exclude` less, or `gpu`/`clouds` wider), or GPUs with more memory")
    # at the largest limit there is nothing to raise: "raise max_gpus" sent the user in circles
    raise_limit = "raise `max_gpus`, " if c.max_gpus < MAX_GPUS_LIMIT else ""
    return (f"the model ({workload.arch.params_total() / 1e9:,.1f}B parameters) fits on none of "
            f"the {len(offers):,} matching offers within {c.max_gpus:,} "
            f"GPU{'s' if c.max_gpus != 1 else ''}. To fix: "
            f"{raise_limit}allow GPUs with more memory, "
            + ("use `recompute` full, " if workload.recompute_limited else "")
            + "or check the model's size")


# The filters of `plan` that can leave no offer, by select_offers keyword: the field each is.
_FILTER_FIELDS = {"gpus": "gpu", "clouds": "clouds", "regions": "regions",
                  "pricing": "pricing", "exclude": "exclude"}


def _filters_set(c: Constraints) -> list[str]:
    """The filters the user set (`pricing` only when not the default's models): "widen
    `clouds`/`regions`" named filters never given."""
    return [k for k in _FILTER_FIELDS if getattr(c, k) and not (
        k == "pricing" and set(c.pricing) == set(CONSTRAINT_DEFAULTS["pricing"]))]


def _to_fix(filters: Sequence[str], *, alone: bool = False) -> str:
    """"widen `clouds`/`pricing`, exclude less (`exclude`) or check `gpuplan offers`" for those
    ``filters``; ``alone``: each of them would do ("widen `clouds` or `pricing`")."""
    widen = (" or " if alone else "/").join(f"`{_FILTER_FIELDS[k]}`" for k in filters
                                            if k != "exclude")
    said = ([f"widen {widen}"] if widen else []) + (
        ["exclude less (`exclude`)"] if "exclude" in filters else []) + (
        [] if alone else ["check `gpuplan offers`"])
    return (" or " if alone else ", ").join(said[:-1]) + (" or " if len(said) > 1 else "") \
        + said[-1]


def _why_args(catalog: Catalog, c: Constraints, precision: str) -> tuple[dict, list, dict]:
    """``why_no_offers``'s filters, the filters given and its keywords, for the plan's."""
    d = _default_gpus(catalog, precision)
    # `exclude` as the filter reads it: 'P5.48XLARGE' left p5.48xlarge in, "without `gpu`"
    return ({**{k: getattr(c, k) for k in _FILTER_FIELDS}, "gpus": c.gpus or d,
             "exclude": check_exclude(c.exclude, catalog)}, _filters_set(c),
            {"include_unpriced": False, "include_flagged": c.allow_flagged,
             "left_out": {"gpus": d, "pricing": CONSTRAINT_DEFAULTS["pricing"]}})


def _pricing_note(catalog: Catalog, c: Constraints, offers, precision: str) -> tuple[str, ...]:
    """The pricing models asked that no usable offer has, and why (``unmatched_pricing``): a
    plan over committed_1y and on_demand used on_demand alone and said nothing."""
    if "pricing" not in _filters_set(c) or (present := {o.pricing for o in offers}) >= set(
            c.pricing):
        return ()
    from catalog import unmatched_pricing  # the offer queries: only when a model is missing
    filters, given, kw = _why_args(catalog, c, precision)
    why = unmatched_pricing(catalog, filters, given, present,
                            name=lambda k: f"`{_FILTER_FIELDS[k]}`", **kw)
    return (f"plans use {', '.join(p for p in c.pricing if p in present)} only: {why}",)


def _no_offer_matches(catalog: Catalog, c: Constraints, precision: str) -> str:
    """Why no offer passes the filters, as `gpuplan offers` says it (``why_no_offers``):
    "widen `clouds`/`regions`/`pricing`/`gpu`" named filters never set, and no reason (MI300X
    is listed, never priced; gcp has no reserved_1y offer)."""
    from catalog import why_no_offers  # the offer queries: only on this error's path
    filters, given, kw = _why_args(catalog, c, precision)
    why = why_no_offers(catalog, filters, given, **kw)
    if why.absent_pricing:
        return (f"no offer matches the filters: {why.absent_pricing}. To fix: choose another "
                "`pricing`")
    if why.unpriced:
        return (f"{why.unpriced_clause()}. To fix: " + ("give your own rate with `overrides`, "
                "or " if why.listed else "") + "choose another `gpu`")
    together = " together" if len(given) > 1 else ""
    if why.left_out:
        return (f"no offer matches the filters{together} ("
                + why.without(lambda k: f"`{_FILTER_FIELDS[k]}`") + "). To fix: "
                + _to_fix([k.filter for k in why.left_out], alone=True))
    return (f"no offer matches the filters{together}"
            + (", nor with any one of them left out" if together else "")
            + f". To fix: {_to_fix(given)}")
