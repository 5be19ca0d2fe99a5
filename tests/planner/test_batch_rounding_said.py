"""A global batch that is not whole sequences is taken as the nearest whole count: a change of
more than a tenth is a warning (12,000 tokens of 8,192 trained 8,192, a third less, said only
among the assumptions), a small one stays a note."""

from __future__ import annotations

from planner import WorkloadSpec, build_workload


def _workload(batch: str):
    return build_workload(WorkloadSpec(model="llama3-8b", tokens="1B", seq_len=8192,
                                       global_batch_tokens=batch))


def test_a_third_less_batch_is_a_warning():
    w = _workload("12000")
    assert w.global_batch_tokens == 8192
    said = [x for x in w.warnings if x.startswith("global batch 12,000 tokens is 1.46 sequences")]
    assert said and "taken as 1 (8,192 tokens" in said[0], w.warnings
    assert not any("global batch" in x for x in w.inferred)


def test_a_small_rounding_stays_a_note():
    w = _workload("4.1M")
    assert w.global_batch_tokens == 500 * 8192
    assert not any("global batch" in x for x in w.warnings), w.warnings
    assert any(x.startswith("global batch 4,100,000 tokens is 500.49 sequences")
               for x in w.inferred)
