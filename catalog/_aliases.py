"""Accelerator name resolution: one place that maps what people type to canonical names.

Users write ``H100``, ``h100-80gb``, ``a100-80gb``, ``A100_80GB`` or the name a cloud or torch
reports (``NVIDIA H100 80GB HBM3``). Matching is case-, space-, dash- and underscore-
insensitive; an accelerator's aliases come from its catalog row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._errors import UnknownNameError
from ._records import Accelerator


def normalise(name: str) -> str:
    return re.sub(r"[\s_\-()/,]+", "", name).lower()


def build_alias_index(accelerators: Iterable[Accelerator]) -> dict[str, str]:
    """normalised alias → canonical name; a clash between two accelerators is a data error."""
    index: dict[str, str] = {}
    for acc in accelerators:
        for alias in (acc.name, *acc.aliases):
            key = normalise(alias)
            other = index.get(key)
            if other is not None and other != acc.name:
                raise ValueError(f"alias {alias!r} names both {other} and {acc.name}")
            index[key] = acc.name
    return index


def resolve(name: str, index: dict[str, str], display_names: Iterable[str]) -> str:
    canonical = index.get(normalise(name))
    if canonical is None:
        raise UnknownNameError(
            "GPU", name, display_names,
            hint="run `gpuplan gpus` to list accelerators and their aliases",
        )
    return canonical
