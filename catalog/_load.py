"""Loading a catalog: the packaged snapshot or a refreshed copy, lazily and once.

A catalog directory holds ``accelerators.csv``, ``instance_types.csv``, ``offers.csv`` and
``meta.json`` (name, source, and per-cloud dates). ``load_catalog()`` reads the active one
(``_store`` keeps the pointer and recovers it after a crash) and caches it per directory and
file modification time, so repeated calls in one process cost nothing; across processes,
``_cache`` keeps the parsed records per user (keyed by the files' content).
"""

from __future__ import annotations

import datetime as _dt
import functools
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import field
from pathlib import Path

from . import _cache, _paths, _store
from ._aliases import build_alias_index, check_aliases, check_names, normalise, resolve
from ._clouds import CLOUDS
from ._errors import CatalogFileError
from ._meta import age_in_days, check_meta, newer_than_today, provenance, read_meta, sources_of
from ._names_match import find_instance_type
from ._older import with_planning_facts
from ._record import record
from ._records import PRICING_MODELS, Accelerator, InstanceType, Offer
from ._today import today_utc

STALE_AFTER_DAYS = 90  # prices older than a quarter are likely wrong (spot moves hourly)
FILES = _store.FILES
def data_dir() -> Path:
    """Where gpuplan keeps per-user state (``GPUPLAN_HOME``, else the XDG data directory)."""
    return _paths.user_data_dir()


@record(kw_only=False)
class Catalog:
    """An immutable, validated catalog. Look-ups resolve aliases and suggest close names."""

    name: str  # "packaged" or a stored catalog's name (e.g. refreshed-20260121T101500Z-3fa2c1)
    path: Path
    meta: dict
    accelerators: tuple[Accelerator, ...]
    instance_types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    overrides_path: str | None = None
    override_notes: tuple = ()  # OverrideNote: what applying the overrides noted, once
    _layers: tuple = field(default=(), repr=False, compare=False)  # _override_apply.layered
    _acc_by_name: dict = field(default_factory=dict, repr=False, compare=False)
    _aliases: dict = field(default_factory=dict, repr=False, compare=False)
    _types: dict = field(default_factory=dict, repr=False, compare=False)
    _type_names: dict = field(default_factory=dict, repr=False, compare=False)  # folded, lazily
    _priced: dict = field(default_factory=dict, repr=False, compare=False)  # offers_priced_as
    _built: dict = field(default_factory=dict, repr=False, compare=False)  # row → Offer (cache)

    def __post_init__(self) -> None:
        self._acc_by_name.update({a.name: a for a in self.accelerators})
        self._aliases.update(build_alias_index(self.accelerators))
        self._types.update({t.key: t for t in self.instance_types})

    # -- look-ups -------------------------------------------------------------------------
    def resolve_accelerator(self, name: str, *, strict: bool = False) -> str:
        """The canonical accelerator ``name`` means; ``strict`` for a name a device reported
        (no vendor-word shortening); a family name ("A100") is refused (``_aliases``)."""
        # every name and alias, listed only if ``name`` is unknown (for the close matches)
        names = (n for a in self.accelerators for n in (a.name, *a.aliases))
        return resolve(name, self._aliases, names, strict=strict)

    def aliases_of(self, acc: Accelerator) -> tuple[str, ...]:
        """``acc``'s aliases that name it: less a family name its row lists ("A100")."""
        return tuple(a for a in acc.aliases if self._aliases.get(normalise(a)) == acc.name)

    def accelerator(self, name: str) -> Accelerator:
        found = self._acc_by_name.get(name)  # a canonical name is its own alias
        return found if found is not None else self._acc_by_name[self.resolve_accelerator(name)]

    def instance_type(self, name: str, cloud: str | None = None) -> InstanceType:
        """``name`` (trimmed, any case where one type matches so) of ``cloud`` (any)."""
        if cloud is not None:  # spelled as `offers --cloud` takes it ("AWS")
            cloud = check_names("cloud", (cloud,), CLOUDS, spell=lambda c: c.strip().lower(),
                                hint=f"use one of {', '.join(CLOUDS)}")[0]
        return find_instance_type(self._types, self._type_names, name, cloud)

    def instance_type_by_key(self, cloud: str, name: str) -> InstanceType:
        return self._types[(cloud, name)]

    def offers_priced_as(self, pricing: Iterable[str]) -> tuple[Offer, ...]:
        """The offers under these pricing models, in catalog order. From the cache, only
        those are built (``offers`` builds every one)."""
        wanted = frozenset(pricing)
        if wanted not in self._priced:
            self._priced[wanted] = self.offers_where(pricing=wanted)
        return self._priced[wanted]

    def offers_where(self, *, pricing: Iterable[str] | None = None,
                     types: Collection[tuple[str, str]] | None = None,
                     priced_only: bool = False) -> tuple[Offer, ...]:
        """The offers under these pricing models, of these instance types ((cloud, name)
        keys) and, with ``priced_only``, with a price (None: any), in catalog order. From the
        cache only those are built, each offer once per catalog (``offers`` builds every one):
        a plan builds the ~1,600 offers of the GPUs it can time, not the 14,000."""
        pricing = None if pricing is None else frozenset(pricing)
        types = None if types is None else frozenset(types)
        deferred = _deferred(self)
        if deferred is not None:
            found = deferred.where(pricing, types, priced_only, self._built)
            if found is not None:
                return found
        offers = self.offers
        return tuple(offers[i] for i in _rows(
            pricing, types, priced_only, ((o.pricing, o.cloud, o.instance_type, o.usd_per_hour)
                                          for o in offers)))

    def regions(self, cloud: str | None = None, *,
                kinds: Iterable[str] | None = None) -> tuple[str, ...]:
        """Regions with offers (of ``cloud``), optionally only of the given region kinds
        ("region", "local_zone", "wavelength_zone", "govcloud", "china")."""
        wanted = set(kinds) if kinds is not None else None
        deferred = _deferred(self)
        pairs = (zip(deferred.column("cloud"), deferred.column("region"), strict=True)
                 if deferred is not None else ((o.cloud, o.region) for o in self.offers))
        return tuple(sorted({region for c, region in pairs if cloud in (None, c)
                             and (wanted is None or CLOUDS[c].region_kind(region) in wanted)}))

    def offer_places(self) -> frozenset[tuple[str, str, str]]:
        """(cloud, region, instance type) of every offer, without building any (~35 ms)."""
        deferred = _deferred(self)
        if deferred is not None:
            return frozenset(zip(deferred.column("cloud"), deferred.column("region"),
                                 deferred.column("instance_type"), strict=True))
        return frozenset((o.cloud, o.region, o.instance_type) for o in self.offers)

    def flagged_offers(self) -> tuple[Offer, ...]:
        """Offers whose price must not be used unless asked for (each with its reasons)."""
        return tuple(o for o in self.offers if not o.price_usable)

    # -- dating ---------------------------------------------------------------------------
    def _cloud_meta(self, cloud: str) -> dict:
        entry = self.meta.get("clouds", {}).get(cloud)
        return entry if isinstance(entry, dict) else {}

    def _meta_date(self, cloud: str, key: str) -> _dt.date | None:
        """``cloud``'s date ``key`` in meta.json, or None where it is missing or no date."""
        value = self._cloud_meta(cloud).get(key)
        try:
            return _dt.date.fromisoformat(value) if value else None
        except (TypeError, ValueError):
            return None

    def as_of(self, cloud: str) -> _dt.date | None:
        """The newest price date of ``cloud`` (offers carry their own dates)."""
        return self._meta_date(cloud, "as_of")

    def as_of_approximate(self, cloud: str) -> bool:
        return bool(self._cloud_meta(cloud).get("approximate", False))

    def oldest_as_of(self) -> _dt.date | None:
        """The oldest price date of any cloud (each cloud's ``oldest_as_of``, else its newest):
        a refresh keeps the prices it did not fetch with their dates, and the newest per cloud
        called a catalog still pricing from 2025 "1 day old", with no stale warning."""
        dates = (self._meta_date(c, "oldest_as_of") or self.as_of(c) for c in CLOUDS)
        return min((d for d in dates if d is not None), default=None)

    def age_days(self, today: _dt.date | None = None) -> int | None:
        oldest = self.oldest_as_of()
        return age_in_days(oldest, today or today_utc())  # never negative: see info's note

    @property
    def source(self) -> str:
        return str(self.meta.get("source", ""))

    # -- derived catalogs and summaries -------------------------------------------------------
    def with_overrides(self, overrides, today: _dt.date | None = None) -> Catalog:
        """A new catalog with ``overrides`` (``parse_overrides``/``load_overrides``) applied;
        every entry must match something in this catalog; on a catalog with overrides, as
        entries of the same file are (``_override_layers``)."""
        from ._override_apply import layered

        offers, layers, notes = layered(self, overrides, today or today_utc())
        note = "; ".join(p for p in (self.overrides_path, overrides.path) if p)
        return Catalog(name=self.name, path=self.path, meta=self.meta,
                       accelerators=self.accelerators, instance_types=self.instance_types,
                       offers=offers, overrides_path=note or None, _layers=layers,
                       override_notes=(*self.override_notes, *notes))

    def provenance(self) -> dict:
        """Where this catalog's prices come from, as every result records it (``_meta``)."""
        said = [n.text for n in self.override_notes]  # what the overrides noted, if anything
        return provenance(self) | ({"override_notes": said} if said else {})

    def info(self, *, today: _dt.date | None = None, include_store: bool = True) -> dict:
        """Everything `gpuplan catalog info` and the app show about this catalog, as data."""
        today = today or today_utc()
        per_cloud = {c: self._cloud_info(c, today) for c in CLOUDS}
        age = self.age_days(today)
        stale = age is not None and age > STALE_AFTER_DAYS
        info = {
            "name": self.name, "path": str(self.path), "source": self.source,
            "overrides": self.overrides_path, "accelerators": len(self.accelerators),
            "instance_types": len(self.instance_types), "offers": len(self.offers),
            "usable_offers": sum(o.price_usable for o in self.offers),
            "oldest_as_of": self.oldest_as_of().isoformat() if self.oldest_as_of() else None,
            "age_days": age, "stale": stale, "stale_after_days": STALE_AFTER_DAYS,
            "refreshed_at": self.meta.get("refreshed_at"), "clouds": per_cloud,
        }
        note = newer_than_today({c: self.as_of(c) for c in CLOUDS}, today)
        if note:  # a GPUPLAN_TODAY before the prices: ages 0, and why
            info["note"] = note
        if stale:  # with overrides applied, where they set no rate: not "use --overrides"
            info["warning"] = (f"the oldest prices are {age:,} days old (> {STALE_AFTER_DAYS})"
                               + (" where the overrides set no rate" if self.overrides_path
                                  else "")
                               + ": they may be wrong. Run `gpuplan catalog refresh` (AWS and "
                               "Azure need no credentials)"
                               + ("" if self.overrides_path else " or use --overrides"))
        if include_store:
            info["store"] = _store.status()
        return info

    def _cloud_info(self, cloud: str, today: _dt.date) -> dict:
        types = [t for t in self.instance_types if t.cloud == cloud]
        offers = [o for o in self.offers if o.cloud == cloud]
        entry = self._cloud_meta(cloud)
        regions = {o.region for o in offers}
        as_of = self.as_of(cloud)
        return {
            "instance_types": len(types),
            "priced_instance_types": len({o.instance_type for o in offers if o.price_usable}),
            "unpriced_instance_types": sorted({t.name for t in types} -
                                              {o.instance_type for o in offers
                                               if o.usd_per_hour is not None}),
            "regions": len(regions),
            "regions_by_kind": dict(sorted(Counter(CLOUDS[cloud].region_kind(r)
                                                   for r in regions).items())),
            "offers": len(offers),
            "offers_by_pricing": {p: n for p in PRICING_MODELS
                                  if (n := sum(o.pricing == p for o in offers))},
            "usable_offers": sum(o.price_usable for o in offers),
            "flagged_by_flag": dict(sorted(Counter(f for o in offers
                                                   for f in o.unusable_flags).items())),
            "as_of": as_of.isoformat() if as_of else None,
            "as_of_approximate": self.as_of_approximate(cloud),
            "oldest_as_of": entry.get("oldest_as_of"),
            # guessed like the newest can be: `catalog info` showed it without its "~"
            "oldest_as_of_approximate": bool(entry.get("sources")) and all(
                s.get("approximate") for s in entry["sources"]
                if s.get("as_of") == entry.get("oldest_as_of")),
            "age_days": age_in_days(as_of, today),
            "as_of_basis": entry.get("basis") or None,
            "source": entry.get("source") or None,
            "sources": sources_of(self, offers, entry.get("sources", [])),  # overrides apart
        }


class _Deferred:
    """Offers not built yet: ``Catalog.offers`` calls ``build()`` on first access (a catalog
    from the cache builds its 14,000 offers only if a command looks at them);
    ``build(pricing)`` builds those of some pricing models, ``column(name)`` reads one field
    of every offer without building any. Either falls back to ``read`` (the catalog's files)
    when the cache cannot give it."""

    __slots__ = ("lazy", "_read", "_parsed")

    def __init__(self, lazy: _cache.LazyOffers, read) -> None:
        self.lazy, self._read, self._parsed = lazy, read, None

    def read(self) -> tuple[Offer, ...]:
        """The offers parsed from the catalog's files, once (a damaged cache's fallback)."""
        if self._parsed is None:
            self._parsed = self._read()
        return self._parsed

    def build(self) -> tuple[Offer, ...]:
        try:
            return self.lazy.build()
        except ValueError:  # a damaged cache: the files themselves, as without one
            return self.read()

    def column(self, name: str) -> tuple:
        try:
            return self.lazy.column(name)
        except ValueError:
            return tuple(getattr(o, name) for o in self.read())

    def where(self, pricing, types, priced_only: bool,
              built: dict) -> tuple[Offer, ...] | None:
        """``Catalog.offers_where`` from the cache (rows already in ``built`` reused); None
        when the cache cannot give them (the caller filters the files' offers)."""
        lazy = self.lazy
        try:
            rows = _rows(pricing, types, priced_only, zip(
                lazy.column("pricing"), lazy.column("cloud"), lazy.column("instance_type"),
                lazy.column("usd_per_hour"), strict=True))
            missing = [i for i in rows if i not in built]
            if missing:
                built.update(zip(missing, lazy.build_rows(missing), strict=True))
        except ValueError:
            return None
        return tuple(built[i] for i in rows)


def _rows(pricing: frozenset | None, types: frozenset | None, priced_only: bool,
          offers: Iterable[tuple]) -> list[int]:
    """The positions of the (pricing, cloud, instance type, price) ``offers`` that
    ``offers_where`` keeps (one loop without a call per offer: it sees all 14,000)."""
    return [i for i, (p, cloud, name, usd) in enumerate(offers)
            if (pricing is None or p in pricing) and (types is None or (cloud, name) in types)
            and not (priced_only and usd is None)]


_OFFERS_SLOT = Catalog.__dict__["offers"]  # the slot the dataclass made for the field


def _deferred(catalog: Catalog) -> _Deferred | None:
    offers = _OFFERS_SLOT.__get__(catalog, Catalog)
    return offers if type(offers) is _Deferred else None


def _get_offers(catalog: Catalog) -> tuple[Offer, ...]:
    offers = _OFFERS_SLOT.__get__(catalog, Catalog)
    if type(offers) is _Deferred:
        offers = offers.build()
        _OFFERS_SLOT.__set__(catalog, offers)
    return offers


# ``offers`` reads the slot through this property: a deferred value is built once, in place.
# Everything else (the constructor, ==, repr, pickling) sees a plain tuple of offers.
Catalog.offers = property(_get_offers, _OFFERS_SLOT.__set__,
                          doc="Every offer of the catalog (built on first use).")


def _cross_check(path: Path, accelerators, instance_types, offers) -> None:
    acc_names = {a.name for a in accelerators}
    if len(acc_names) != len(accelerators):
        twice = sorted(n for n, k in Counter(a.name for a in accelerators).items() if k > 1)
        raise CatalogFileError(f"{path / 'accelerators.csv'}: duplicate accelerator "
                               f"{twice[0]!r}. To fix: run `gpuplan catalog use packaged`")
    seen_types = set()
    for t in instance_types:
        if t.accelerator not in acc_names:
            raise CatalogFileError(f"{path / 'instance_types.csv'}: {t.cloud}/{t.name} names "
                                   f"unknown accelerator {t.accelerator!r}. To fix: run "
                                   "`gpuplan catalog use packaged`")
        if t.key in seen_types:
            raise CatalogFileError(f"{path / 'instance_types.csv'}: duplicate {t.key}. To fix: "
                                   "run `gpuplan catalog use packaged`")
        seen_types.add(t.key)
    seen_offers = set()
    for o in offers:
        if (o.cloud, o.instance_type) not in seen_types:
            raise CatalogFileError(f"{path / 'offers.csv'}: offer for unknown instance type "
                                   f"{o.cloud}/{o.instance_type}. To fix: run `gpuplan catalog "
                                   "use packaged`")
        if o.key in seen_offers:
            raise CatalogFileError(f"{path / 'offers.csv'}: duplicate offer {o.key}. To fix: "
                                   "run `gpuplan catalog use packaged`")
        seen_offers.add(o.key)
    check_aliases(path / "accelerators.csv", accelerators)


def read_catalog_dir(path: Path, name: str, *, notice: bool = False) -> Catalog:
    """Read and validate one catalog directory (no caching, no overrides). A stored catalog
    is also checked as a whole and its anomaly flags recomputed (``_checks``; ``notice``:
    say which offers gained a flag)."""
    # the parser and the safe reader (which imports yaml) load only when a catalog is parsed:
    # a command served by the cache (``_cache``) needs neither
    from ._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, read_table

    missing = [f for f in FILES if not (path / f).is_file()]
    if missing:
        raise CatalogFileError(f"{path}: catalog is missing {missing}. To fix: run "
                               "`gpuplan catalog use packaged` or `gpuplan catalog refresh`")
    meta = check_meta(read_meta(path), path / "meta.json")
    accelerators = with_planning_facts(tuple(read_table(path / "accelerators.csv",
                                                        ACCELERATORS)), path)
    instance_types = tuple(read_table(path / "instance_types.csv", INSTANCE_TYPES))
    offers = tuple(read_table(path / "offers.csv", OFFERS))
    _cross_check(path, accelerators, instance_types, offers)
    if path.resolve() != _paths.packaged_catalog_dir():
        from ._checks import check_stored

        offers = check_stored(path, meta, accelerators, instance_types, offers, name=name,
                              notice=notice)
    return Catalog(name=name, path=path, meta=meta, accelerators=accelerators,
                   instance_types=instance_types, offers=offers)


def active_catalog_name() -> str:
    """The name of the active catalog (recovering a stranded pointer, see ``_store``)."""
    return _store.active()[0]


@functools.lru_cache(maxsize=8)
def _cached(path: str, name: str, stamp: tuple) -> Catalog:
    """The catalog in ``path``: from the per-user cache of parsed catalogs (``_cache``) when
    it holds this exact content, else parsed and validated (and the cache written)."""
    where = Path(path)
    if not _cache.enabled():
        return read_catalog_dir(where, name)
    packaged = _paths.packaged_catalog_dir()
    key = _cache.source_key(where, packaged)
    if key is not None:
        hit = _cache.load(where, key, (Accelerator, InstanceType, Offer))
        if hit is not None:
            meta, accelerators, instance_types, lazy = hit
            return Catalog(name=name, path=where, meta=meta, accelerators=accelerators,
                           instance_types=instance_types, offers=_Deferred(
                               lazy, lambda: read_catalog_dir(where, name).offers))
    catalog = read_catalog_dir(where, name)
    # written only if the files did not change while they were parsed
    if key is not None and _cache.source_key(where, packaged) == key:
        _cache.store(where, key, catalog.meta,
                     (catalog.accelerators, catalog.instance_types, catalog.offers))
    return catalog


def load_catalog(name: str | None = None, *, overrides: str | Path | None = None,
                 today: _dt.date | None = None) -> Catalog:
    """The active catalog (or ``name``: "packaged", "refreshed", "previous" or a stored
    catalog's name), with the ``overrides`` file applied when given."""
    name, path = _store.resolve(name)
    today = today or today_utc()  # a wrong GPUPLAN_TODAY is said before any output
    stamp = tuple((path / f).stat().st_mtime_ns if (path / f).exists() else 0 for f in FILES)
    base = _cached(str(path), name, stamp)
    if overrides is None:
        return base
    opath = Path(overrides).expanduser()
    try:
        ostamp = opath.stat().st_mtime_ns
    except OSError:
        ostamp = 0  # load_overrides says what is wrong with the path
    return _with_overrides(str(path), name, stamp, str(opath), ostamp, today)


@functools.lru_cache(maxsize=8)
def _with_overrides(path: str, name: str, stamp: tuple, opath: str, ostamp: int,
                    today: _dt.date) -> Catalog:
    from ._overrides import load_overrides

    return _cached(path, name, stamp).with_overrides(load_overrides(opath), today)


__all__ = ["STALE_AFTER_DAYS", "Catalog", "active_catalog_name", "data_dir",
           "load_catalog", "read_catalog_dir"]


# recovery switches only to a catalog that loads, checked as `catalog use` checks it
_store.use_load_check(read_catalog_dir)
