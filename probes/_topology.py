"""This process's place in a torchrun job: rank, world size, local rank and ranks per node,
from torchrun's environment."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from probes._errors import ProbeSetupError


@dataclass(frozen=True, slots=True, kw_only=True)
class Topology:
    """This process's place in a torchrun job (ranks are contiguous per node)."""

    rank: int
    world_size: int
    local_rank: int
    local_world_size: int

    def __post_init__(self) -> None:
        if not (0 <= self.rank < self.world_size and 0 <= self.local_rank
                and 1 <= self.local_world_size <= self.world_size):
            raise ValueError(f"inconsistent ranks {self}")

    @property
    def node_count(self) -> int:
        return max(1, self.world_size // self.local_world_size)


def topology_from_env(environ: Mapping[str, str] | None = None) -> Topology:
    """Ranks from torchrun's environment; a plain run is rank 0 of 1."""
    env = os.environ if environ is None else environ
    try:
        world = int(env.get("WORLD_SIZE", "1"))
        return Topology(rank=int(env.get("RANK", "0")), world_size=world,
                        local_rank=int(env.get("LOCAL_RANK", "0")),
                        local_world_size=int(env.get("LOCAL_WORLD_SIZE", str(world))))
    except ValueError as exc:
        raise ProbeSetupError(f"bad torchrun environment ({exc}). To fix: launch with torchrun "
                              "or unset RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE.") from exc
