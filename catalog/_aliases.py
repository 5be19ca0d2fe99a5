"""Accelerator name resolution: one place that maps what people type to canonical names.

Users write ``H100``, ``h100-80gb``, ``a100-80gb``, ``A100_80GB`` or the name a cloud or torch
reports (``NVIDIA H100 80GB HBM3``). Matching is case-, space-, dash- and underscore-
insensitive; an accelerator's aliases come from its catalog row.

A name never picks one of several accelerators silently. A bare name that a cloud's own API
uses for several (AWS's ``a100``: the 40 and 80 GB SXM4 boards; ``v100``: 16 and 32 GB) is
nobody's alias, and it and every leading part of several canonical names (``A100``:
A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB; ``A100-SXM4``; ``TPU``) are refused with those
accelerators listed (``AmbiguousNameError``). ``H100`` stays the SXM5 board's alias: every
cloud that says ``h100`` means that board; the PCIe and NVL cards are ``H100-PCIe`` and
``H100-NVL``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from pathlib import Path

from ._errors import AmbiguousNameError, CatalogFileError, UnknownNameError
from ._names_match import checked_name, fold_index
from ._records import Accelerator


def normalise(name: str) -> str:
    return re.sub(r"[\s_\-()/,]+", "", name).lower()


# What torch and the clouds put before a GPU's name: torch's "Tesla V100-SXM2-32GB", GCP's
# "nvidia-tesla-a100" and "nvidia-a100-80gb" name the catalog's V100-SXM2-32GB, A100 and
# A100-80GB once the vendor words go.
_VENDOR_PREFIX = re.compile(r"^(?:nvidia)?(?:tesla)?")


def build_alias_index(accelerators: Iterable[Accelerator]) -> dict[str, str | tuple[str, ...]]:
    """normalised name → the canonical name it means, or the canonical names (a tuple, sorted)
    a family name could mean, which ``resolve`` refuses with them listed. A clash between two
    accelerators' aliases is a data error. The names the clouds' APIs use (``cloud_names``:
    GCP's ``nvidia-h100-mega-80gb``) count too where they name one accelerator; one that names
    several (AWS's ``a100``) is a family name, and an alias spelt like it (an older catalog's
    ``A100`` for the 40 GB board, ``Tesla V100``) is left out."""
    accelerators = tuple(accelerators)
    by_cloud_name: dict[str, set[str]] = {}
    for acc in accelerators:
        for cloud_name in acc.cloud_names:
            by_cloud_name.setdefault(normalise(cloud_name.split(":", 1)[1]), set()).add(acc.name)
    shared = {key for key, names in by_cloud_name.items() if len(names) > 1}
    index: dict[str, str | tuple[str, ...]] = {}
    for acc in accelerators:
        for alias in (acc.name, *acc.aliases):
            key = normalise(alias)
            if alias != acc.name and (key in shared or _VENDOR_PREFIX.sub("", key) in shared):
                continue
            other = index.get(key)
            if other is not None and other != acc.name:
                raise ValueError(f"alias {alias!r} names both {other} and {acc.name}")
            index[key] = acc.name
    families: dict[str, set[str]] = {k: set(by_cloud_name[k]) for k in shared}
    for acc in accelerators:  # "A100" and "A100-SXM4" of A100-SXM4-40GB
        parts = acc.name.split("-")
        for n in range(1, len(parts)):
            families.setdefault(normalise("-".join(parts[:n])), set()).add(acc.name)
    for key, names in by_cloud_name.items():
        if len(names) == 1:
            index.setdefault(key, next(iter(names)))
    for key, names in families.items():
        if len(names) > 1:
            index.setdefault(key, tuple(sorted(names)))
    return index


def check_aliases(where: Path, accelerators: Iterable[Accelerator]) -> None:
    """A catalog's accelerator file whose aliases clash (one alias on two accelerators) is
    refused, naming the alias."""
    try:
        build_alias_index(accelerators)
    except ValueError as exc:
        raise CatalogFileError(f"{where}: {exc}. To fix: run `gpuplan catalog use packaged`") \
            from None


def resolve(name: str, index: dict[str, str | tuple[str, ...]], display_names: Iterable[str],
            *, strict: bool = False) -> str:
    """The canonical name; ``strict``: an alias as written (a probe report's GPU name, where
    "NVIDIA H100" is not "H100": it may be a PCIe or an NVL card), not a vendor word short.
    A family name (a tuple in ``index``) is refused with its accelerators listed, each with
    its shortest alias where that is shorter than its name."""
    key = normalise(name)
    canonical = index.get(key)
    if canonical is None and not strict:
        canonical = index.get(_VENDOR_PREFIX.sub("", key))
    if isinstance(canonical, tuple):
        shorter: dict[str, str] = {}
        for alias in sorted(display_names, key=lambda a: (len(a), a)):
            owner = index.get(normalise(alias))
            if owner in canonical and len(alias) < len(owner):
                shorter.setdefault(owner, alias)
        raise AmbiguousNameError("GPU", name, canonical, aliases=shorter)
    if canonical is None:  # suggesting only names that resolve (not an older catalog's "A100")
        raise UnknownNameError(
            "GPU", name, (n for n in display_names if isinstance(index.get(normalise(n)), str)),
            hint="run `gpuplan gpus` to list accelerators and their aliases",
        )
    return canonical


def check_names(kind: str, given: Iterable[str], known: Iterable[str], hint: str = "", *,
                spell: Callable[[str], str] | None = None, where: str = "",
                field: str | None = None) -> tuple[str, ...]:
    """``given`` in ``known``'s spelling (``spell``, e.g. 'On-Demand' → 'on_demand'); raise
    UnknownNameError (prefixed by ``where``; its ``field``, the caller's name of the list) for
    the first that is not in ``known``, quoting it as it was given and matching it as spelled
    (beside the rest of ``given``: words separated by spaces are fixed as the whole list with
    commas). The one check of a list of names: the catalog's
    filters, ``Constraints`` and a team plan's lists. A name not in ``known`` as spelled is
    matched trimmed and ignoring case where one known name matches so (``_names_match``:
    'US-EAST-1', ' P5.48XLARGE'), in ``known``'s spelling."""
    given, known = tuple(given), set(known)
    folded = None  # built on the first name not known as spelled
    out = []
    for name in given:
        spelled = name if spell is None else spell(name)
        if spelled not in known:
            if folded is None:
                folded = fold_index(known)
            found = checked_name(kind, spelled, folded, where=where)
            if found is None:
                raise UnknownNameError(kind, name, known, hint, where=where, listed=given,
                                       field=field,
                                       match_as=None if spell is None else spelled)
            spelled = found
        out.append(spelled)
    return tuple(out)
