"""The pin checks `estimate` and `plan` run before any search: a pinned degree that cannot
work on this cluster (``check_pins_fit_cluster``) or for this model on any cluster
(``check_pins_fit_model``) is one error saying why, not an empty search."""

from __future__ import annotations

import math

from ._errors import WorkloadError
from ._grid import TP_CHOICES
from ._hardware import Cluster
from ._memory import interleaving_fits
from ._shown import either
from ._software import check_pins
from ._workload import Workload


def check_pins_fit_cluster(workload: Workload, cluster: Cluster,
                           nvlink_domain_gpus: float | None = None) -> None:
    """Pins that cannot work on this cluster → one error saying why (before any search).
    ``nvlink_domain_gpus``: the GPUs NVLink joins (``ClusterInputs``; default the node)."""
    p, a = workload.pins, workload.arch
    check_pins(p, workload.framework)
    G, N = cluster.gpus_per_node, cluster.gpus
    D = max(G, int(nvlink_domain_gpus or G))
    where = f"the {G} GPUs per node" if D == G else f"the {D} GPUs NVLink joins"
    if p.tp is not None:
        if p.tp > D:
            raise WorkloadError(f"tp={p.tp} is above {where}: tensor parallelism stays inside "
                                "an NVLink domain (its all-reduces run every layer). To fix: "
                                f"pin tp to a divisor of {D}", field="tp", value=p.tp)
        if D % p.tp or a.heads % p.tp:
            fitting = ", ".join(str(t) for t in TP_CHOICES
                                if t <= D and not D % t and not a.heads % t)
            raise WorkloadError(f"tp={p.tp} must divide both {where} and the "
                                f"{a.heads} attention heads. To fix: pin one of {fitting}",
                                field="tp", value=p.tp)
    _check_model_pins(workload)
    split = (p.tp or 1) * (p.pp or 1) * (p.cp or 1)
    if N % split:
        # named by the pins given (the error's field is the last of them: its flag leads)
        given = [(k, v) for k, v in (("tp", p.tp), ("pp", p.pp), ("cp", p.cp)) if v]
        what = " · ".join(f"{k}={v}" for k, v in given)
        product = f" = {split}" if len(given) > 1 else ""
        raise WorkloadError(f"{what}{product} does not divide the {N} GPUs (tp·pp·cp must "
                            f"divide the GPU count). To fix: pin a divisor of {N}, or change "
                            "the GPU count", field=given[-1][0], value=given[-1][1])


def check_pins_fit_model(workload: Workload) -> None:
    """Pins that cannot work for this model on any cluster → one error saying why (``plan``
    runs this before its search; ``estimate`` with the cluster's own checks)."""
    check_pins(workload.pins, workload.framework)
    _check_model_pins(workload)


def _check_model_pins(workload: Workload) -> None:
    """The model-level part of the pin checks, after the framework's (``check_pins``)."""
    p, a = workload.pins, workload.arch
    if p.pp is not None and p.pp > a.layers:
        raise WorkloadError(f"pp={p.pp} is above the model's {a.layers} layers. To fix: pin pp "
                            f"to at most {a.layers}", field="pp", value=p.pp)
    if p.cp is not None and workload.seq_len % p.cp:
        raise WorkloadError(f"cp={p.cp} must divide the sequence length {workload.seq_len}. "
                            "To fix: pin a power of two that divides it", field="cp",
                            value=p.cp)
    if p.ep is not None and p.ep > 1 and not a.is_moe:
        raise WorkloadError(f"ep={p.ep} pins expert parallelism, but this model has no "
                            "experts. To fix: drop `ep` (or give `experts` for a mixture of "
                            "experts)", field="ep", value=p.ep)
    if p.ep is not None and a.is_moe and a.experts % p.ep:
        fitting = ", ".join(str(e) for e in range(1, a.experts + 1) if not a.experts % e)
        raise WorkloadError(f"ep={p.ep} must divide the {a.experts} experts. To fix: pin one "
                            f"of {fitting}", field="ep", value=p.ep)
    if p.vp is not None and p.vp > 1 and p.pp == 1:
        raise WorkloadError(f"vp={p.vp} interleaves pipeline stages, but pp=1 has no pipeline. "
                            "To fix: drop vp, or pin pp to 2 or more", field="vp", value=p.vp)
    if p.vp is not None and p.vp > a.layers:
        raise WorkloadError(f"vp={p.vp} is above the model's {a.layers} layers: each virtual "
                            f"stage holds at least one layer. To fix: pin vp to at most "
                            f"{a.layers}", field="vp", value=p.vp)
    if p.vp is not None and p.pp and p.pp > 1 and math.ceil(a.layers / p.pp) % p.vp:
        per = math.ceil(a.layers / p.pp)
        fitting = ", ".join(str(v) for v in range(1, per + 1)
                            if not per % v and interleaving_fits(a.layers, p.pp, v))
        what = (f"the {per} layers of each of the {p.pp} pipeline stages"
                if per * p.pp == a.layers else  # uneven: the last holds fewer ("of each" lied)
                f"{per}, the layers of the fullest of the {p.pp} pipeline stages "
                f"(⌈{a.layers} / {p.pp}⌉, which the model times every stage at)")
        raise WorkloadError(f"vp={p.vp} must divide {what}. To fix: pin one of {fitting}",
                            field="vp", value=p.vp)
    if p.vp is not None and p.pp and p.pp > 1 and not interleaving_fits(a.layers, p.pp, p.vp):
        raise WorkloadError(f"pp={p.pp} × vp={p.vp} is {p.pp * p.vp} pipeline chunks for the "
                            f"model's {a.layers} layers: every chunk holds a layer, the "
                            "embedding or the loss (at most layers + 2 chunks). To fix: pin a "
                            "smaller vp or pp", field="vp", value=p.vp)


# Why one pin leaves no layout, and the values tried in its place (``no_grid_message``).
_PIN_RULES = {
    "ep": "expert parallelism spans at most the tp·dp·cp ranks, and what is not folded over "
          "the data/context-parallel ranks must divide tp",
    "vp": "vp must divide a pipeline stage's layers (⌈{L}/pp⌉) with pp·vp ≤ {L} + 2, and "
          "needs a pipeline (pp ≥ 2)",
    "micro_batch": "each data-parallel rank needs whole micro-batches of {mb} sequences",
}


def no_grid_message(workload: Workload, cluster: Cluster, ms, nvlink_domain_gpus) -> str:
    """Why no parallel layout runs ``workload`` on ``cluster``: the pin that, left to the
    search, would let one run, and the values of it that do (the message blamed micro-batches
    and the global batch for an ep or vp no layout could hold)."""
    from dataclasses import replace

    import numpy as np

    from ._grid import plan_grid

    gbs = workload.sequences_per_step(cluster.gpus)
    pins = workload.pins.as_dict()

    def runs(**changed) -> bool:
        w = replace(workload, pins=replace(workload.pins, **changed))
        return len(plan_grid(ms, cluster.gpus_per_node, np.array([cluster.nodes]),
                             workload.recompute, workload=w,
                             nvlink_domain_gpus=nvlink_domain_gpus)["tp"]) > 0

    if pins.get("vp", 1) > 1 and cluster.gpus < 2:
        return (f"vp={pins['vp']} interleaves a pipeline, which needs at least 2 GPUs (pp ≥ 2); "
                f"this cluster has {cluster.gpus}. To fix: drop vp, or use more GPUs")
    if not pins:
        return (f"no parallel plan divides {cluster.gpus} GPUs for this model (heads {ms.a}, "
                f"global batch {gbs} sequences). To fix: raise `global_batch_tokens` or change "
                "the GPU count")
    pinned = ", ".join(f"{k}={v}" for k, v in pins.items())
    head = (f"no parallel plan with {pinned} runs {workload.framework} on {cluster.gpus} GPUs "
            f"with a global batch of {gbs} sequences")
    tries = {"ep": [e for e in range(1, (ms.E or 1) + 1) if ms.E and ms.E % e == 0],
             "vp": list(range(1, 9)), "micro_batch": [1, 2, 4, 8, 16]}
    for key in ("ep", "vp", "micro_batch", "zero", "cp", "pp", "tp"):
        if key not in pins or not runs(**{key: None}):
            continue
        options = [v for v in tries.get(key, []) if v != pins[key] and runs(**{key: v})]
        rule = _PIN_RULES.get(key, "").format(L=ms.L, mb=pins.get("micro_batch"))
        shown = [str(v) for v in options[:6]]
        values = either(shown)
        fix = (f"pin `{key}` to {values} (they run here), or unpin it" if len(shown) > 1 else
               f"pin `{key}` to {values} (it runs here), or unpin it" if shown else
               f"unpin `{key}`")
        if key == "micro_batch":
            fix += ", or raise `global_batch_tokens`"
        return f"{head}" + (f": {rule}" if rule else "") + f". To fix: {fix}"
    return (f"{head} (each data-parallel rank needs whole micro-batches). To fix: lower the "
            "micro-batch, raise `global_batch_tokens`, or unpin a degree")
