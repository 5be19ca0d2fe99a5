"""A typed instance type or region name, matched to the catalog's own spelling.

A name is taken as typed; else with its surrounding spaces trimmed and its case ignored,
where exactly one known name matches so — as --gpu, --clouds and --pricing already were:
`' p5.48xlarge'` and `P5.48XLARGE` were refused ("Did you mean 'p5.48xlarge'", which looked
like the input), though AWS and GCP names are lower-case and Azure itself ignores case in
VM sizes (`standard_nd96asr_v4`). Two known names that differ only in case (none in the
packaged catalog) are told apart by their exact spelling alone: either is refused otherwise,
with both named (``CaseAmbiguousNameError``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._errors import AmbiguousNameError, CatalogError, UnknownNameError, quoted
from ._records import InstanceType

Folded = Mapping[str, tuple[str, ...]]  # case-folded name → the known names spelt so


def fold_index(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Case-folded name → the names that fold to it (sorted: two only where they differ in
    case alone)."""
    index: dict[str, set[str]] = {}
    for name in names:
        if isinstance(name, str):
            index.setdefault(name.casefold(), set()).add(name)
    return {key: tuple(sorted(spelt)) for key, spelt in index.items()}


def match_name(name: object, folded: Folded) -> str | tuple[str, ...] | None:
    """The known name ``name`` means (exact, else trimmed and ignoring case where one
    matches so); the names it could mean where several differ from it only in case; None
    where none matches (or ``name`` is no string)."""
    if not isinstance(name, str):
        return None
    key = name.strip()
    same = folded.get(key.casefold(), ())
    if key in same:
        return key
    if len(same) == 1:
        return same[0]
    return same or None


class CaseAmbiguousNameError(AmbiguousNameError):
    """``name`` matches several known names that differ only in case, and none exactly."""

    def __init__(self, kind: str, name: object, choices: Iterable[str], *,
                 where: str = "") -> None:
        choices = tuple(choices)
        listed = ", ".join(repr(c) for c in choices[:-1]) + f" and {choices[-1]!r}"
        prefix = f"{where}: " if where else ""
        CatalogError.__init__(
            self, f"{prefix}{kind} {quoted(str(name))} matches {listed}, which differ only in "
            "case. To fix: spell it exactly as one of them", value=name)
        self.kind, self.name, self.suggestions, self.known = kind, name, choices, choices


def checked_name(kind: str, name: object, folded: Folded, *, where: str = "") -> str | None:
    """``match_name``, with several matches refused; None where none matches."""
    found = match_name(name, folded)
    if isinstance(found, tuple):
        raise CaseAmbiguousNameError(kind, name, found, where=where)
    return found


def find_instance_type(types: Mapping[tuple[str, str], InstanceType], folded: dict,
                       name: str, cloud: str | None) -> InstanceType:
    """``Catalog.instance_type``: the instance type ``name`` (of ``cloud``, already spelt as
    the catalog does). ``folded``: the catalog's instance types by case-folded name, filled
    here on first use (once per catalog: a plan looks names up often, and each look-up reads
    only the types of one name, not all ~340)."""
    if not folded:
        for t in types.values():
            folded.setdefault(t.name.casefold(), []).append(t)
    key = name.strip().casefold() if isinstance(name, str) else ""
    same = folded.get(key, ())
    found = checked_name("instance type", name, {key: tuple(sorted({t.name for t in same}))})
    named = [t for t in same if t.name == found]
    matches = [t for t in named if cloud is None or t.cloud == cloud]
    if not matches:
        elsewhere = sorted(t.cloud for t in named)
        if elsewhere:  # the name is right, the cloud is not
            raise CatalogError(f"instance type {found!r} is on {', '.join(elsewhere)}, not "
                               f"{cloud}. To fix: pass --cloud {elsewhere[0]}, or a {cloud} "
                               f"instance type (`gpuplan offers --cloud {cloud}`)")
        pool = [n for c, n in types if cloud is None or c == cloud]
        raise UnknownNameError("instance type", name, pool,
                               hint="run `gpuplan offers` to list instance types")
    if len(matches) > 1:
        raise CatalogError(f"instance type {found!r} exists on several clouds. To fix: pass "
                           f"--cloud ({', '.join(t.cloud for t in matches)})")
    return matches[0]
