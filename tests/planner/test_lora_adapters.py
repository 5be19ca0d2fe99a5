"""LoRA adapters are parameters of their own (``ModelScalars.adapter_fraction``): held in memory
beside the frozen weights, computed (2 FLOPs per parameter and token forward, 4 backward) and
trained. A rank-4,096 Llama 3 8B — adapters of 10.5B parameters — was timed within 2% of rank 1,
with the weights' memory of the bare model and its trainable share capped at "100%"."""

from __future__ import annotations

import pytest

from catalog import load_catalog
from planner import Workload, estimate, preset, reference_cluster
from planner.model import PlanPins
from planner.model._scalars import ModelScalars


@pytest.fixture(scope="module")
def cluster():
    return reference_cluster(load_catalog("packaged"), "H100", 8)


def lora(rank: int) -> Workload:
    arch, _ = preset("llama3-8b")
    return Workload(arch=arch, tokens=1e9, seq_len=4096, global_batch_tokens=64 * 4096,
                    finetune="lora", lora_rank=rank,
                    pins=PlanPins(tp=1, pp=1, zero=1, micro_batch=1))


def test_the_adapters_count_their_parameters_uncapped():
    small, large = ModelScalars.of(lora(16)), ModelScalars.of(lora(4096))
    assert large.adapter_params == pytest.approx(256 * small.adapter_params)
    assert large.adapter_fraction > 1.0  # 10.5B adapters on an 8B model: said as it is
    assert large.trainable_fraction == large.adapter_fraction


def test_a_higher_rank_costs_memory_and_time(cluster):
    low, high = estimate(lora(16), cluster), estimate(lora(1024), cluster)
    adapters = ModelScalars.of(lora(1024)).adapter_params - ModelScalars.of(lora(16)).adapter_params
    # the same plan (pinned): the weights grow by the adapters' bf16 bytes
    assert high.memory["weights_gib"] - low.memory["weights_gib"] == pytest.approx(
        adapters * 2 / 2**30, rel=1e-6)
    assert high.step_time_s > 1.15 * low.step_time_s


def test_full_fine_tuning_holds_no_adapters():
    arch, _ = preset("llama3-8b")
    full = ModelScalars.of(Workload(arch=arch, tokens=1e9, seq_len=4096, finetune="full"))
    assert full.adapter_fraction == 0 and full.trainable_fraction == 1.0
