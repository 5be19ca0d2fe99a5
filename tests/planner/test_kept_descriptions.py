"""What describing kept per layout is keyed by a workload id that is never reused: once a
layout had kept KEPT_WORKLOADS workloads, the next one took the first one's id and its
calendar P10/P90 (a 678 h run read "P10–P90 97–190 h") in the app's reruns."""

from __future__ import annotations

import pytest

from planner import Constraints, WorkloadSpec, build_workload, plan
from planner.search import clear_caches
from planner.search._result import KEPT_WORKLOADS

C = Constraints(deadline_hours=24 * 60, max_gpus=256, gpus=("H100",))


def _figures(catalog, tokens: str) -> tuple:
    r = plan(build_workload(WorkloadSpec(model="llama2-7b", tokens=tokens)), catalog, C)
    x = r.recommendation
    return (x.nodes, x.offer.key, x.wall_clock_hours, x.wall_clock_hours_p10,
            x.wall_clock_hours_p90, x.estimate.steps, x.estimate.ideal_hours)


@pytest.mark.parametrize("extra", [0, 1, 3])
def test_more_workloads_than_kept_are_each_described_as_alone(catalog, extra):
    tokens = [f"{100 * (k + 1)}B" for k in range(KEPT_WORKLOADS + 1 + extra)]
    clear_caches()
    in_turn = [_figures(catalog, t) for t in tokens]
    for t, got in zip(tokens, in_turn, strict=True):
        clear_caches()
        assert got == _figures(catalog, t), t
    p10, expected, p90 = in_turn[-1][3], in_turn[-1][2], in_turn[-1][4]
    assert p10 < expected < p90
