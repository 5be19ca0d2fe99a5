"""Every constant `--assume` takes, at either end of its allowed range, gives finite figures or
one clear error — never NaN, infinity or a numpy warning (hostile sweep 2026-12-05:
matmul_fraction.hopper=5e-324 was accepted and every figure of the estimate read nan, with
three RuntimeWarnings naming source files; 1e-300 gave a 300-digit wall-clock)."""

from __future__ import annotations

import math
import warnings

import pytest

from catalog import load_catalog
from planner import WorkloadSpec, build_workload, estimate, reference_cluster
from planner.model import Assumptions, PlannerError
from planner.model._assumptions import _bounds, assumption_names

# each GPU family a table entry can name, dense and MoE (the MoE constants act only there)
CASES = (("llama3-8b", "H100"), ("llama3-8b", "A100-80GB"), ("llama3-8b", "MI300X"),
         ("llama3-8b", "L4"), ("mixtral-8x7b", "H100"))


def _numbers(value, key=""):
    """(key, number) of every float in an ``as_dict`` tree."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, k)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _numbers(v, key)
    elif isinstance(value, float):
        yield key, value


@pytest.fixture(scope="module")
def setups():
    cat = load_catalog("packaged")
    return [(build_workload(WorkloadSpec(model=m, tokens="1T")),
             reference_cluster(cat, gpu, 16)) for m, gpu in CASES]


@pytest.mark.parametrize("name", assumption_names())
def test_each_constant_at_either_end_of_its_range_gives_finite_figures(setups, name):
    low, high = _bounds(name.partition(".")[0])
    for value in (low, high):
        try:
            A = Assumptions().with_overrides(**{name: value})
        except PlannerError:  # refused with the others it must add up with: one clear line
            continue
        for workload, cluster in setups:
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                try:
                    est = estimate(workload, cluster, assumptions=A)
                except PlannerError:  # e.g. nothing fits with a 1,024 GiB reserve
                    continue
            # no failures at all: the mean time between them is infinite (JSON null, "—")
            bad = [(k, x) for k, x in _numbers(est.as_dict()) if not math.isfinite(x)
                   and not (k == "mtbf_hours" and A.failure_rate_per_gpu_hour == 0)]
            assert not bad, (name, value, cluster.accelerator.name, bad[:3])
            assert est.wall_clock.p90 < 1e12, (name, value, est.wall_clock)


def test_a_fraction_below_one_percent_is_refused_in_one_line():
    with pytest.raises(PlannerError, match=r"outside \[0\.01, 1\]\. To fix"):
        Assumptions().with_overrides(**{"matmul_fraction.hopper": 5e-324})
