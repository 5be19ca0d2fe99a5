"""A plan in a process that has planned other things answers as a fresh process does: every
cache (usable offers, shape evaluations, layouts, kept descriptions, described clusters) is
keyed by everything it depends on. A random history of plans and plan_options calls, each
answer compared with the same request after ``clear_caches`` (the history once found a fifth
workload on a layout taking the first one's calendar range)."""

from __future__ import annotations

import json
import random

from planner import Assumptions, Constraints, PlannerError, WorkloadSpec, build_workload, plan
from planner.search import clear_caches, plan_options
from planner.search._quota import parse_quotas

MODELS = ("llama2-7b", "gpt2-xl", "llama3-8b")
TOKENS = ("50B", "100B", "300B", "1T", "2T", "3T")


def _requests(catalog, seed: int, n: int) -> list:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        if k % 6 == 0:  # one shape and layout through every token count: more workloads
            # than a layout keeps
            out.append(({"model": "llama2-7b", "tokens": TOKENS[k // 6 % len(TOKENS)]},
                        {"deadline_hours": 24 * 60, "max_gpus": 256, "gpus": ("H100",)}, None,
                        False, 10))
            continue
        ws = {"model": rng.choice(MODELS), "tokens": rng.choice(TOKENS)}
        kw = {"deadline_hours": rng.choice([24, 72, 24 * 14, 24 * 60]),
              "max_gpus": rng.choice([64, 256, 1024])}
        if rng.random() < .3:
            kw["budget_usd"] = rng.choice([2e3, 5e4, 1e6])
        if rng.random() < .4:
            kw["min_probability"] = rng.choice([0.0, 0.5, 0.9])
        if rng.random() < .3:
            kw["gpus"] = (rng.choice(["H100", "A100-80GB", "L4", "H200"]),)
        if rng.random() < .2:
            kw["pricing"] = ("on_demand", "reserved_1y")
        if rng.random() < .15:
            kw["quotas"] = parse_quotas({"quotas": [{"cloud": "aws", "gpus": 64}]}, catalog)
        a = Assumptions(restart_minutes=rng.choice([10.0, 30.0])) if rng.random() < .2 else None
        out.append((ws, kw, a, rng.random() < .2, rng.choice([3, 10])))
    return out


def _answer(catalog, ws, kw, a, options: bool, top: int) -> str:
    try:
        w, c = build_workload(WorkloadSpec(**ws)), Constraints(**kw)
        if options:
            o = plan_options(w, catalog, c, assumptions=a, top_n=top)
            described = o.describe(o.candidates[:3]) if o.candidates else ()
            return json.dumps({"described": [x.as_dict() for x in described],
                               "frontier": [(x.nodes, x.instance_type, x.cost_usd,
                                             x.wall_clock_hours)
                                            for x in o.feasible_frontier]},
                              sort_keys=True, default=str)
        r = plan(w, catalog, c, assumptions=a, top_n=top, points=True)
        return json.dumps(r.as_dict(points=True), sort_keys=True, default=str)
    except PlannerError as exc:
        return f"error: {exc}"


def test_a_warm_process_answers_as_a_fresh_one(catalog):
    requests = _requests(catalog, seed=2, n=72)
    clear_caches()
    warm = [_answer(catalog, *r) for r in requests]
    for k, r in enumerate(requests):
        clear_caches()
        assert _answer(catalog, *r) == warm[k], (k, r[0], r[1])
