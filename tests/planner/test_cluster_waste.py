"""A cluster larger than its workload uses well is warned of, whether the step waits in the
pipeline bubble or on communication (only the bubble was: GPT-2 on 2,048 A100s ran slower
than on 1,024, at 7× the GPU-hours of 8 GPUs, without a word)."""

from __future__ import annotations

import pytest

import catalog
from planner.model import WorkloadSpec, build_workload, estimate, reference_cluster
from planner.model._waste import BUBBLE_WARNING, WAIT_WARNING, cluster_size_warning


@pytest.fixture(scope="module")
def gpt2_on():
    cat = catalog.load_catalog("packaged")
    w = build_workload(WorkloadSpec(model="gpt2", tokens="1T"))
    return lambda gpus: estimate(w, reference_cluster(cat, "A100-SXM4-80GB", gpus))


def test_a_communication_bound_cluster_is_warned_of(gpt2_on):
    small, large = gpt2_on(8), gpt2_on(2048)
    mid = gpt2_on(1024)
    assert large.step_time_s * large.steps > mid.step_time_s * mid.steps  # more GPUs: slower
    said = [w for w in large.warnings if w.startswith("communication and the pipeline bubble")]
    assert len(said) == 1 and "data-parallel" in said[0] and "fewer GPUs" in said[0], said
    assert not any("larger than this model uses well" in w or "bubble is" in w
                   for w in small.warnings)


def _step(**shares):
    return {k: shares.get(k, 0.0) for k in ("compute_s", "tp_comm_s", "dp_comm_s", "ep_comm_s",
                                           "pp_bubble_s", "other_s")}


@pytest.mark.parametrize("shares,starts", [
    ({"pp_bubble_s": BUBBLE_WARNING + 0.01}, "the pipeline bubble is 26%"),
    ({"dp_comm_s": 0.3, "tp_comm_s": 0.15, "pp_bubble_s": 0.1},
     "communication and the pipeline bubble take 55% of each step (data-parallel 30%, "
     "tensor-parallel 15%, pipeline bubble 10%"),
    ({"dp_comm_s": WAIT_WARNING}, None),  # at the threshold: not above it
    ({"dp_comm_s": 0.2, "pp_bubble_s": 0.2}, None),
])
def test_the_thresholds(shares, starts):
    said = cluster_size_warning(_step(**shares), 1.0, micro_batches=1, pp=2, mfu=0.1)
    assert (said is None) if starts is None else said.startswith(starts), said
    if said and "bubble is" in said:
        assert "(1 micro-batch per 2-stage pipeline)" in said  # was "1 micro-batches"


def test_no_step_no_warning():
    assert cluster_size_warning(_step(dp_comm_s=1.0), 0.0, micro_batches=1, pp=1,
                                mfu=0.0) is None
