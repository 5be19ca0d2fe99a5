"""Loading the active catalog: packaged snapshot or a refreshed copy, lazily and once.

A catalog directory holds ``accelerators.csv``, ``instance_types.csv``, ``offers.csv`` and
``meta.json`` (name, source, and per-cloud ``as_of``). ``load_catalog()`` reads the active one
(``gpuplan catalog use`` writes the choice to the user data dir) and caches it per directory
and file modification time, so repeated calls in one process cost nothing.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from . import _paths
from ._aliases import build_alias_index, resolve
from ._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, read_table
from ._errors import CatalogError, CatalogFileError, UnknownNameError
from ._overrides import Overrides, apply_overrides, load_overrides
from ._records import CLOUDS, PRICING_MODELS, Accelerator, InstanceType, Offer

STALE_AFTER_DAYS = 90  # prices older than a quarter are likely wrong (spot moves hourly)
FILES = ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json")


@dataclass(frozen=True, slots=True)
class Catalog:
    """An immutable, validated catalog. Look-ups resolve aliases and suggest close names."""

    name: str  # "packaged" or "refreshed"
    path: Path
    meta: dict
    accelerators: tuple[Accelerator, ...]
    instance_types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    overrides_path: str | None = None
    _acc_by_name: dict = field(default_factory=dict, repr=False, compare=False)
    _aliases: dict = field(default_factory=dict, repr=False, compare=False)
    _types: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._acc_by_name.update({a.name: a for a in self.accelerators})
        self._aliases.update(build_alias_index(self.accelerators))
        self._types.update({t.key: t for t in self.instance_types})

    # -- look-ups -------------------------------------------------------------------------
    def resolve_accelerator(self, name: str) -> str:
        names = [n for a in self.accelerators for n in (a.name, *a.aliases)]
        return resolve(name, self._aliases, names)

    def accelerator(self, name: str) -> Accelerator:
        return self._acc_by_name[self.resolve_accelerator(name)]

    def instance_type(self, name: str, cloud: str | None = None) -> InstanceType:
        matches = [t for (c, n), t in self._types.items()
                   if n == name and (cloud is None or c == cloud)]
        if not matches:
            pool = [n for c, n in self._types if cloud is None or c == cloud]
            raise UnknownNameError("instance type", name, pool,
                                   hint="run `gpuplan offers` to list instance types")
        if len(matches) > 1:
            raise CatalogError(f"instance type {name!r} exists on several clouds. To fix: pass "
                               f"--cloud ({', '.join(t.cloud for t in matches)})")
        return matches[0]

    def instance_type_by_key(self, cloud: str, name: str) -> InstanceType:
        return self._types[(cloud, name)]

    def regions(self, cloud: str | None = None) -> tuple[str, ...]:
        return tuple(sorted({o.region for o in self.offers if cloud in (None, o.cloud)}))

    # -- dating ---------------------------------------------------------------------------
    def as_of(self, cloud: str) -> _dt.date | None:
        entry = self.meta.get("clouds", {}).get(cloud)
        return _dt.date.fromisoformat(entry["as_of"]) if entry else None

    def oldest_as_of(self) -> _dt.date | None:
        dates = [d for d in (self.as_of(c) for c in CLOUDS) if d is not None]
        return min(dates) if dates else None

    def age_days(self, today: _dt.date | None = None) -> int | None:
        oldest = self.oldest_as_of()
        return None if oldest is None else ((today or _dt.date.today()) - oldest).days

    @property
    def source(self) -> str:
        return str(self.meta.get("source", ""))


def check_names(kind: str, given: Iterable[str], known: Iterable[str], hint: str = "") -> None:
    """Raise UnknownNameError for the first name in ``given`` that is not in ``known``."""
    known = set(known)
    for name in given:
        if name not in known:
            raise UnknownNameError(kind, name, known, hint)


def _cross_check(path: Path, accelerators, instance_types, offers) -> None:
    acc_names = {a.name for a in accelerators}
    seen_types = set()
    for t in instance_types:
        if t.accelerator not in acc_names:
            raise CatalogFileError(f"{path / 'instance_types.csv'}: {t.cloud}/{t.name} names "
                                   f"unknown accelerator {t.accelerator!r}")
        if t.key in seen_types:
            raise CatalogFileError(f"{path / 'instance_types.csv'}: duplicate {t.key}")
        seen_types.add(t.key)
    seen_offers = set()
    for o in offers:
        if (o.cloud, o.instance_type) not in seen_types:
            raise CatalogFileError(f"{path / 'offers.csv'}: offer for unknown instance type "
                                   f"{o.cloud}/{o.instance_type}")
        if o.key in seen_offers:
            raise CatalogFileError(f"{path / 'offers.csv'}: duplicate offer {o.key}")
        seen_offers.add(o.key)


def read_catalog_dir(path: Path, name: str) -> Catalog:
    """Read and validate one catalog directory (no caching, no overrides)."""
    missing = [f for f in FILES if not (path / f).is_file()]
    if missing:
        raise CatalogFileError(f"{path}: catalog is missing {missing}. To fix: run "
                               "`gpuplan catalog use packaged` or `gpuplan catalog refresh`")
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogFileError(f"{path / 'meta.json'}: unreadable ({exc}). To fix: run "
                               "`gpuplan catalog use packaged`") from None
    accelerators = tuple(read_table(path / "accelerators.csv", ACCELERATORS))
    instance_types = tuple(read_table(path / "instance_types.csv", INSTANCE_TYPES))
    offers = tuple(read_table(path / "offers.csv", OFFERS))
    _cross_check(path, accelerators, instance_types, offers)
    return Catalog(name=name, path=path, meta=meta, accelerators=accelerators,
                   instance_types=instance_types, offers=offers)


def active_catalog_name() -> str:
    marker = _paths.active_marker()
    try:
        name = marker.read_text(encoding="utf-8").strip()
    except OSError:
        return _paths.PACKAGED
    return name if name in (_paths.PACKAGED, _paths.REFRESHED) else _paths.PACKAGED


def catalog_dir(name: str) -> Path:
    if name == _paths.PACKAGED:
        return _paths.packaged_catalog_dir()
    if name == _paths.REFRESHED:
        return _paths.refreshed_catalog_dir()
    raise UnknownNameError("catalog", name, (_paths.PACKAGED, _paths.REFRESHED))


@functools.lru_cache(maxsize=8)
def _cached(path: str, name: str, stamp: tuple) -> Catalog:
    return read_catalog_dir(Path(path), name)


@functools.lru_cache(maxsize=8)
def _cached_overrides(path: str, stamp: float) -> Overrides:
    return load_overrides(path)


def load_catalog(name: str | None = None, *, overrides: str | Path | None = None,
                 today: _dt.date | None = None) -> Catalog:
    """The active catalog (or ``name``), with ``overrides`` applied when given."""
    name = name or active_catalog_name()
    path = catalog_dir(name)
    stamp = tuple((path / f).stat().st_mtime_ns if (path / f).exists() else 0 for f in FILES)
    base = _cached(str(path), name, stamp)
    if overrides is None:
        return base
    opath = Path(overrides).expanduser()
    ov = _cached_overrides(str(opath), opath.stat().st_mtime if opath.exists() else 0.0)
    types = {t.key: t for t in base.instance_types}
    offers = apply_overrides(base.offers, types, ov, today or _dt.date.today())
    return Catalog(name=base.name, path=base.path, meta=base.meta,
                   accelerators=base.accelerators, instance_types=base.instance_types,
                   offers=offers, overrides_path=ov.path)


__all__ = ["Catalog", "PRICING_MODELS", "STALE_AFTER_DAYS", "check_names", "load_catalog",
           "read_catalog_dir"]
