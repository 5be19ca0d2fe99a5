"""Accelerator name resolution: one place that maps what people type to canonical names.

Users write ``H100``, ``h100-80gb``, ``a100-80gb``, ``A100_80GB`` or the name a cloud or torch
reports (``NVIDIA H100 80GB HBM3``). Matching is case-, space-, dash- and underscore-
insensitive; an accelerator's aliases come from its catalog row.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from ._errors import UnknownNameError
from ._records import Accelerator


def normalise(name: str) -> str:
    return re.sub(r"[\s_\-()/,]+", "", name).lower()


def build_alias_index(accelerators: Iterable[Accelerator]) -> dict[str, str]:
    """normalised alias → canonical name; a clash between two accelerators is a data error.
    The names the clouds' APIs use (``cloud_names``: GCP's ``nvidia-h100-mega-80gb``) count
    too, where they name one accelerator (AWS's ``a100`` names two sizes: left out)."""
    index: dict[str, str] = {}
    accelerators = tuple(accelerators)
    for acc in accelerators:
        for alias in (acc.name, *acc.aliases):
            key = normalise(alias)
            other = index.get(key)
            if other is not None and other != acc.name:
                raise ValueError(f"alias {alias!r} names both {other} and {acc.name}")
            index[key] = acc.name
    by_cloud_name: dict[str, set[str]] = {}
    for acc in accelerators:
        for cloud_name in acc.cloud_names:
            by_cloud_name.setdefault(normalise(cloud_name.split(":", 1)[1]), set()).add(acc.name)
    for key, names in by_cloud_name.items():
        if len(names) == 1:
            index.setdefault(key, next(iter(names)))
    return index


# What torch and the clouds put before a GPU's name: torch's "Tesla V100-SXM2-32GB", GCP's
# "nvidia-tesla-a100" and "nvidia-a100-80gb" name the catalog's V100-SXM2-32GB, A100 and
# A100-80GB once the vendor words go.
_VENDOR_PREFIX = re.compile(r"^(?:nvidia)?(?:tesla)?")


def resolve(name: str, index: dict[str, str], display_names: Iterable[str], *,
            strict: bool = False) -> str:
    """The canonical name; ``strict``: an alias as written (a probe report's GPU name, where
    "NVIDIA H100" is not "H100": it may be a PCIe or an NVL card), not a vendor word short."""
    key = normalise(name)
    canonical = index.get(key)
    if canonical is None and not strict:
        canonical = index.get(_VENDOR_PREFIX.sub("", key))
    if canonical is None:
        raise UnknownNameError(
            "GPU", name, display_names,
            hint="run `gpuplan gpus` to list accelerators and their aliases",
        )
    return canonical


def check_names(kind: str, given: Iterable[str], known: Iterable[str], hint: str = "", *,
                spell: Callable[[str], str] | None = None, where: str = "") -> tuple[str, ...]:
    """``given`` in ``known``'s spelling (``spell``, e.g. 'On-Demand' → 'on_demand'); raise
    UnknownNameError (prefixed by ``where``) for the first that is not in ``known``, quoting it
    as it was given and matching it as spelled. The one check of a list of names: the catalog's
    filters, ``Constraints`` and a team plan's lists."""
    known = set(known)
    out = []
    for name in given:
        spelled = name if spell is None else spell(name)
        if spelled not in known:
            raise UnknownNameError(kind, name, known, hint, where=where,
                                   match_as=None if spell is None else spelled)
        out.append(spelled)
    return tuple(out)
