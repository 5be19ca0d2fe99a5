"""Every rank's figures into rank 0's report (torch-free; the collective call is in _runner).

Each rank summarises what it measured in a RankResult (its best TFLOP/s per dtype, its GB/s per
bandwidth point, its GPU's telemetry under load); rank 0 receives all of them and puts the
spread over GPUs (percentiles, and the slowest rank) into the sections, next to its own
detailed points. A GPU that is slower than its peers is thus visible in the report instead of
hidden behind rank 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from probes._schema import (
    MatmulSection,
    MemorySection,
    NamedValue,
    ProbeFailure,
    RankResult,
)
from probes._stats import spread


def rank_result(*, rank: int, local_rank: int, hostname: str, device: str,
                gpu_name: str | None, gpu_uuid: str | None,
                matmul: MatmulSection | None, memory: MemorySection | None) -> RankResult:
    """This rank's summary of its own sections."""
    tflops = tuple(NamedValue(name=d.dtype, value=d.best_tflops) for d in
                   (matmul.dtypes if matmul else ()) if d.status == "measured" and d.best_tflops)
    gbps = tuple(NamedValue(name=p.name, value=p.gb_per_s) for p in
                 (memory.points if memory else ()) if p.status == "measured" and p.gb_per_s)
    return RankResult(rank=rank, local_rank=local_rank, hostname=hostname, device=device,
                      gpu_name=gpu_name, gpu_uuid=gpu_uuid,
                      under_load=matmul.under_load if matmul else None,
                      matmul_best_tflops=tflops, memory_gb_per_s=gbps)


def _values(ranks: Sequence[RankResult], attr: str, name: str) -> tuple[list[float], list[int]]:
    values, who = [], []
    for r in ranks:
        for nv in getattr(r, attr):
            if nv.name == name:
                values.append(nv.value)
                who.append(r.rank)
    return values, who


def with_spreads(matmul: MatmulSection | None, memory: MemorySection | None,
                 ranks: Sequence[RankResult]) -> tuple[MatmulSection | None, MemorySection | None]:
    """The sections with ``across_ranks`` filled from every rank's summary."""
    if matmul is not None:
        dtypes = []
        for d in matmul.dtypes:
            values, who = _values(ranks, "matmul_best_tflops", d.dtype)
            dtypes.append(dataclasses.replace(d, across_ranks=spread(values, who))
                          if values else d)
        matmul = dataclasses.replace(matmul, dtypes=tuple(dtypes))
    if memory is not None:
        points = []
        for p in memory.points:
            values, who = _values(ranks, "memory_gb_per_s", p.name)
            points.append(dataclasses.replace(p, across_ranks=spread(values, who))
                          if values else p)
        memory = dataclasses.replace(memory, points=tuple(points))
    return matmul, memory


def merge_failures(per_rank: Sequence[Sequence[ProbeFailure]]) -> tuple[ProbeFailure, ...]:
    """All ranks' failures, by rank then probe order, without duplicates."""
    seen, out = set(), []
    for failures in per_rank:
        for f in failures:
            if f not in seen:
                seen.add(f)
                out.append(f)
    return tuple(sorted(out, key=lambda f: f.rank))
