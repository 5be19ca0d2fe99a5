"""The warning that a cluster is larger than its workload uses well: a step spent mostly in
the pipeline bubble or waiting on communication rather than computing.

Only the bubble was warned of, so a cluster whose steps were half data-parallel
communication went unremarked: GPT-2 on 2,048 A100s was slower than on 1,024 (MFU 6%, 7× the
GPU-hours of 8 GPUs) without a word.
"""

from __future__ import annotations

BUBBLE_WARNING = 0.25  # warn when the pipeline bubble is above this share of the step
WAIT_WARNING = 0.5  # … or communication and the bubble together are above this share
PARTS = (("dp_comm_s", "data-parallel"), ("tp_comm_s", "tensor-parallel"),
         ("ep_comm_s", "expert-parallel"), ("pp_bubble_s", "pipeline bubble"))


def cluster_size_warning(breakdown: dict, step_s: float, *, micro_batches: int, pp: int,
                         mfu: float) -> str | None:
    """The warning for a step mostly not computing (``breakdown``: the exposed seconds of each
    part of a ``step_s`` step), or None."""
    if not step_s > 0:
        return None
    share = {key: breakdown.get(key, 0.0) / step_s for key, _ in PARTS}
    if share["pp_bubble_s"] > BUBBLE_WARNING:
        return (f"the pipeline bubble is {share['pp_bubble_s']:.0%} of each step: the global "
                f"batch ({micro_batches} micro-batch{'es' if micro_batches != 1 else ''} per "
                f"{pp}-stage pipeline) is too small "
                "to feed this cluster; a larger `global_batch_tokens` or fewer GPUs would "
                "waste less")
    waiting = sum(share.values())
    if waiting <= WAIT_WARNING:
        return None
    named = ", ".join(f"{label} {share[key]:.0%}" for key, label in PARTS
                      if share[key] >= 0.005)
    return (f"communication and the pipeline bubble take {waiting:.0%} of each step ({named}"
            f"; MFU {mfu:.1%}): the cluster is larger than this model uses well; fewer GPUs "
            "or a larger `global_batch_tokens` would waste less")
