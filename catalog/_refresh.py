"""`gpuplan catalog refresh`: fetch prices from the clouds, merge, check, install.

Steps, in order — nothing under ``catalogs/`` changes until the last one:

1. For each requested cloud, call its source (``catalog.sources``). ``SourceUnavailable`` (no
   network, no credentials where a cloud needs them) skips that cloud: its rows are kept and
   the reason is reported; so does an answer that priced no offer at all (``_refresh_checks``).
   **Any other failure — one region raising mid-refresh — fails the whole refresh**
   (``RefreshError``): no partial cloud is ever written and the active catalog stays as it was.
2. Merge **by offer key** (cloud, instance type, region, pricing model, reservation option):
   a fetched offer replaces the offer with the same key; every offer the refresh did *not*
   fetch keeps its old price, date and source. Nothing is lost because a source did not look
   (a GCP refresh without TPU access keeps the TPU offers; an AWS refresh without credentials
   keeps the spot prices). ``prune=True`` removes, explicitly, the offers of a refreshed cloud
   that the refresh covered (the regions its source names, and its pricing models) but did
   not return.
3. The anomaly rules (``_anomalies``) run over the whole merged catalog, then the integrity
   checks (``check_integrity``); any problem rejects it.
4. Install as a new complete catalog directory and switch to it (``_install.install``: one
   atomic pointer switch, written last; the previous catalog stays selectable). Older
   refreshes' catalogs beyond the newest ``_store.KEEP`` are removed and listed in the result
   (never a folder the user put in ``catalogs/``).

The result lists the offers added, removed (only with ``prune``) and changed in price.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from pathlib import Path

from . import _paths, _store
from ._anomalies import flag_anomalies
from ._checks import spec_problems
from ._clouds import CLOUDS
from ._errors import CatalogError, CatalogNotice, without_fix
from ._install import activate_installed, install
from ._load import Catalog, load_catalog, read_catalog_dir
from ._meta import cloud_meta
from ._record import record
from ._records import NO_PRICE_FLAGS, Accelerator, InstanceType, Offer
from ._refresh_checks import check_clouds, check_regions, no_prices
from ._store_prune import store_lock
from .sources._common import CloudData, RefreshError, Source, SourceUnavailable

PRICE_CHANGE_THRESHOLD = 0.10  # changes above 10 % are listed first and shown by the CLI
MAX_PROBLEMS_SHOWN = 5


@record
class OfferChange:
    """One offer added, removed or repriced by a refresh (prices in USD per instance-hour)."""

    cloud: str
    instance_type: str
    region: str
    pricing: str
    option: str = ""
    old_usd_per_hour: float | None = None
    new_usd_per_hour: float | None = None

    @property
    def change_fraction(self) -> float | None:
        if not self.old_usd_per_hour or self.new_usd_per_hour is None:
            return None
        return self.new_usd_per_hour / self.old_usd_per_hour - 1.0

    def as_dict(self) -> dict:
        frac = self.change_fraction
        return {"cloud": self.cloud, "instance_type": self.instance_type,
                "region": self.region, "pricing": self.pricing, "option": self.option or None,
                "old_usd_per_hour": self.old_usd_per_hour,
                "new_usd_per_hour": self.new_usd_per_hour,
                "change_pct": None if frac is None else round(100 * frac, 2)}


PriceChange = OfferChange  # the name earlier versions used


@record
class RefreshResult:
    """What a refresh did, against the catalog that was active before it."""

    name: str  # the new catalog's name
    path: Path
    refreshed: tuple[str, ...]  # clouds rebuilt from their sources
    skipped: dict[str, str]  # cloud → one-line reason (its rows were kept)
    warnings: tuple[str, ...]
    added: tuple[OfferChange, ...]
    removed: tuple[OfferChange, ...]  # only with prune
    price_changes: tuple[OfferChange, ...]  # every changed price, largest change first
    kept_unfetched: dict[str, int]  # cloud → offers kept because the refresh did not fetch them
    new_instance_types: tuple[tuple[str, str], ...]  # (cloud, name)
    removed_instance_types: tuple[tuple[str, str], ...]
    counts: dict[str, dict[str, int]]  # cloud → {"instance_types": n, "offers": n}
    as_of: dict[str, str] = field(default_factory=dict)  # cloud → ISO date (newest)
    removed_catalogs: tuple[str, ...] = ()  # older refreshes' catalogs deleted (beyond KEEP)

    @property
    def large_price_changes(self) -> tuple[OfferChange, ...]:
        return tuple(c for c in self.price_changes
                     if abs(c.change_fraction or 0.0) > PRICE_CHANGE_THRESHOLD)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "path": str(self.path), "refreshed": list(self.refreshed),
            "skipped": dict(self.skipped), "warnings": list(self.warnings),
            "added": [c.as_dict() for c in self.added],
            "removed": [c.as_dict() for c in self.removed],
            "price_changes": [c.as_dict() for c in self.price_changes],
            "kept_unfetched": dict(self.kept_unfetched),
            "new_instance_types": [list(k) for k in self.new_instance_types],
            "removed_instance_types": [list(k) for k in self.removed_instance_types],
            "counts": {k: dict(v) for k, v in self.counts.items()}, "as_of": dict(self.as_of),
            "removed_catalogs": list(self.removed_catalogs),
        }


def default_sources(reference: Catalog) -> dict[str, Source]:
    from .sources import AwsSource, AzureSource, GcpSource

    return {"aws": AwsSource(reference=reference), "gcp": GcpSource(reference=reference),
            "azure": AzureSource(reference=reference)}


def refresh_catalog(*, clouds: Sequence[str], regions: Sequence[str] | None,
                    progress: Callable[[str, str, int, int], None] | None = None,
                    sources: Mapping[str, Source] | None = None,
                    prune: bool = False) -> RefreshResult:
    """Refresh ``clouds`` (``regions``: None for all), merge, check, install and activate.

    Every cloud and region name, and that the store can be written, is checked before any
    source is contacted (a misspelt region or a read-only GPUPLAN_HOME must not cost minutes
    of downloads first, nor hide behind "no network").
    """
    clouds = check_clouds(clouds)
    packaged = load_catalog(_paths.PACKAGED)
    try:
        current = load_catalog()
    except CatalogError as exc:
        # a damaged active catalog is refused by every command, whose fix names this one:
        # refresh onto the packaged snapshot instead of failing the same way
        import warnings

        current = packaged
        warnings.warn(CatalogNotice(
            f"the active catalog cannot be read ({without_fix(exc)}); this refresh starts "
            "from the packaged snapshot, so clouds it does not fetch have the packaged "
            "prices"), stacklevel=2)
    regions = check_regions(clouds, regions, (current, packaged))
    _store.prepare()  # a store that cannot take the result fails now, not after the downloads
    # Specs the APIs do not give (topology, network notes) come from the active catalog, with
    # datasheet accelerators from the packaged one.
    sources = dict(sources) if sources is not None else default_sources(current)
    results: dict[str, CloudData] = {}
    skipped: dict[str, str] = {}
    for cloud in dict.fromkeys(clouds):
        source = sources.get(cloud)
        if source is None:
            skipped[cloud] = f"{cloud}: no source configured"
            continue
        try:
            data = source.fetch(regions, progress)
        except SourceUnavailable as exc:
            skipped[cloud] = str(exc)
            continue
        except (RefreshError, KeyboardInterrupt):
            raise
        except Exception as exc:  # a record that fails validation, an SDK error, a bug
            raise RefreshError(f"{cloud} refresh failed ({type(exc).__name__}: {exc}); the "
                               "active catalog was left unchanged. To fix: retry, or leave "
                               f"{cloud} out with --cloud") from exc
        # an answer that priced nothing is no evidence that every offer is gone: that cloud
        # keeps its offers (and --prune removes none of them), the others go on
        if reason := no_prices(cloud, data.offers, regions, data.warnings):
            skipped[cloud] = reason
        else:
            results[cloud] = data
    for cloud, data in results.items():
        duplicates = _duplicates(data)
        if duplicates:
            raise RefreshError(f"{cloud} refresh returned duplicate records ({duplicates}); the "
                               "active catalog was left unchanged. To fix: retry, or leave "
                               f"{cloud} out with --cloud")
    if not results:
        # Nothing came back from any cloud: writing a copy of the current catalog and calling
        # it "refreshed" would only mislead. Nothing on disk changes.
        reasons = "; ".join(skipped.values())
        raise RefreshError(f"no cloud could be refreshed, the active catalog was left "
                           f"unchanged: {reasons}")
    merged = merge(current, packaged, results, regions, prune=prune)
    problems = check_integrity(merged.accelerators, merged.instance_types, merged.offers)
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS_SHOWN} more)" if len(problems) > \
            MAX_PROBLEMS_SHOWN else ""
        raise RefreshError("refreshed catalog rejected, the active catalog was left unchanged: "
                           f"{'; '.join(problems[:MAX_PROBLEMS_SHOWN])}{more}. To fix: retry, "
                           "or leave the faulty cloud out with --cloud")
    with store_lock(_paths.catalogs_dir()):  # no other refresh prunes it before it is active
        name, path = install(merged.accelerators, merged.instance_types, merged.offers,
                             merged.meta, activate=False)
        pruned = _activate(name, path)
    return _diff(current, name, path, results, skipped, merged, pruned)


def _activate(name: str, path: Path) -> tuple[str, ...]:
    """``activate_installed`` (as install() would, keeping the names it removed). When a
    marker cannot be written (a full disk), the error names the complete catalog left
    behind, not active — left unmentioned, it was the refresh's one result nobody knew of."""
    try:
        return activate_installed(name)
    except CatalogError as exc:
        if _store._read_marker(_paths.active_marker()) == name or not _store.is_complete(path):
            raise
        what, _, fix = str(exc).partition(" To fix: ")
        raise RefreshError(f"{what.rstrip('. ')}; the refreshed catalog {name} was saved but is "
                           f"not active (the active catalog is unchanged). To fix: "
                           f"{fix.rstrip('. ') or 'fix that'}; once the marker can be written "
                           f"there, `gpuplan catalog use {name}` makes it active") from None


def _duplicates(data: CloudData) -> str:
    """The first duplicate instance type or offer key in one source's result, or ''."""
    for what, keys in (("instance type", [t.key for t in data.instance_types]),
                       ("offer", [o.key for o in data.offers])):
        seen: set = set()
        for k in keys:
            if k in seen:
                return f"duplicate {what} {'/'.join(x for x in k if x)}"
            seen.add(k)
    return ""


@record(kw_only=False)
class Merged:
    accelerators: tuple[Accelerator, ...]
    instance_types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    meta: dict
    kept_unfetched: dict[str, int]
    removed: tuple[Offer, ...]


def _in_scope(o: Offer, data: CloudData, regions: Sequence[str] | None) -> bool:
    """Whether the refresh of ``o``'s cloud looked where ``o`` is (for pruning): one of the
    regions its source says it covered, and asked for. A source that names no region covered
    none — read as "every region", an empty answer pruned the whole cloud."""
    return (o.pricing in data.covered_pricing and o.region in data.regions
            and (regions is None or o.region in regions))


def merge(current: Catalog, packaged: Catalog, results: Mapping[str, CloudData],
          regions: Sequence[str] | None, *, prune: bool = False) -> Merged:
    """The current catalog with ``results`` merged in by offer key (see the module docstring)."""
    accelerators = {a.name: a for a in packaged.accelerators}
    for a in current.accelerators:
        accelerators.setdefault(a.name, a)
    types = {t.key: t for t in current.instance_types}
    offers = {o.key: o for o in current.offers}
    kept: dict[str, int] = {}
    removed: list[Offer] = []
    for cloud, data in results.items():
        for a in data.accelerators:
            accelerators.setdefault(a.name, a)
        fetched = {o.key: o for o in data.offers}
        for t in data.instance_types:
            types[t.key] = t
        unfetched = [k for k, o in offers.items() if o.cloud == cloud and k not in fetched]
        if prune:
            for k in unfetched:
                if _in_scope(offers[k], data, regions):
                    removed.append(offers.pop(k))
        kept[cloud] = sum(1 for k in unfetched if k in offers)
        offers.update(fetched)
        if prune:  # an instance type left with no offer and not seen by the refresh goes too
            priced = {(o.cloud, o.instance_type) for o in offers.values()}
            seen = {t.key for t in data.instance_types}
            for key in [k for k in types if k[0] == cloud and k not in priced and k not in seen
                        and any(o.instance_type == k[1] for o in removed)]:
                del types[key]
    type_list = tuple(types[k] for k in sorted(types))
    offer_list = flag_anomalies(tuple(offers[k] for k in sorted(offers)), types)
    meta_clouds = dict(current.meta.get("clouds", {}))
    for cloud in CLOUDS:
        entry = cloud_meta(offer_list, cloud)
        if not entry:
            meta_clouds.pop(cloud, None)
            continue
        previous = meta_clouds.get(cloud, {})
        if cloud in results:
            entry["basis"] = (f"refreshed {results[cloud].as_of.isoformat()} from "
                              f"{results[cloud].source}; offers not fetched keep their own "
                              "dates (see sources)")
        else:
            entry["basis"] = previous.get("basis", "")
        meta_clouds[cloud] = entry
    meta = {"name": "refreshed", "built_by": "gpuplan catalog refresh",
            "refreshed_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "refreshed_clouds": sorted(results),
            "source": "the clouds' public price lists and APIs (per-offer sources and dates); "
                      "datasheet accelerator specs from the packaged catalog",
            "clouds": {c: meta_clouds[c] for c in CLOUDS if c in meta_clouds}}
    return Merged(tuple(accelerators[n] for n in sorted(accelerators)), type_list, offer_list,
                  meta, kept, tuple(removed))


def check_integrity(accelerators: Sequence[Accelerator], instance_types: Sequence[InstanceType],
                    offers: Sequence[Offer]) -> list[str]:
    """Every reason the catalog must not be installed (empty when it may)."""
    problems: list[str] = []
    acc = {}
    for a in accelerators:
        if a.name in acc:
            problems.append(f"duplicate accelerator {a.name}")
        acc[a.name] = a
    types: dict[tuple[str, str], InstanceType] = {}
    for t in instance_types:
        if t.key in types:
            problems.append(f"duplicate instance type {t.cloud}/{t.name}")
        types[t.key] = t
        if t.accelerator not in acc:
            problems.append(f"{t.cloud}/{t.name} names unknown accelerator {t.accelerator!r}")
        elif t.gpu_count < 1:
            problems.append(f"{t.cloud}/{t.name}: gpu_count {t.gpu_count} < 1")
    problems += spec_problems(accelerators, instance_types)  # what loading refuses too
    seen: set[tuple] = set()
    on_demand: dict[tuple[str, str, str], float] = {}
    for o in offers:
        where = "/".join(x for x in o.key if x)
        if o.key in seen:
            problems.append(f"duplicate offer {where}")
        seen.add(o.key)
        if (o.cloud, o.instance_type) not in types:
            problems.append(f"offer {where} names unknown instance type")
        if o.usd_per_hour is None:
            if not NO_PRICE_FLAGS & set(o.flags):
                problems.append(f"offer {where} has no price and no price flag")
        elif not o.usd_per_hour > 0:
            problems.append(f"offer {where} has price ${o.usd_per_hour}")
        elif o.pricing == "on_demand":
            on_demand[(o.cloud, o.instance_type, o.region)] = o.usd_per_hour
    for o in offers:
        base = on_demand.get((o.cloud, o.instance_type, o.region))
        if (o.pricing == "spot" and o.usd_per_hour is not None and base is not None
                and o.usd_per_hour >= base and "spot_not_below_on_demand" not in o.flags):
            problems.append(f"offer {'/'.join(o.key[:4])}: spot ${o.usd_per_hour} not below "
                            f"on-demand ${base} without the spot_not_below_on_demand flag")
    return problems


def _change(o: Offer, old: float | None, new: float | None) -> OfferChange:
    return OfferChange(cloud=o.cloud, instance_type=o.instance_type, region=o.region,
                       pricing=o.pricing, option=o.option, old_usd_per_hour=old,
                       new_usd_per_hour=new)


def _diff(current: Catalog, name: str, path: Path, results, skipped, merged: Merged,
          pruned: tuple[str, ...] = ()) -> RefreshResult:
    old_types = {t.key for t in current.instance_types}
    new_types = {t.key for t in merged.instance_types}
    old = {o.key: o for o in current.offers}
    added, changes = [], []
    for o in merged.offers:
        before = old.get(o.key)
        if before is None:
            added.append(_change(o, None, o.usd_per_hour))
        elif before.usd_per_hour != o.usd_per_hour:
            changes.append(_change(o, before.usd_per_hour, o.usd_per_hour))
    changes.sort(key=lambda c: (-abs(c.change_fraction or 0.0), c.cloud, c.instance_type,
                                c.region, c.pricing, c.option))
    counts = {c: {"instance_types": sum(t.cloud == c for t in merged.instance_types),
                  "offers": sum(o.cloud == c for o in merged.offers)} for c in CLOUDS}
    warnings = tuple(w for c in CLOUDS if c in results for w in results[c].warnings)
    return RefreshResult(
        name=name, path=path, refreshed=tuple(c for c in CLOUDS if c in results),
        skipped=dict(skipped), warnings=warnings, added=tuple(added),
        removed=tuple(_change(o, o.usd_per_hour, None) for o in merged.removed),
        price_changes=tuple(changes), kept_unfetched=dict(merged.kept_unfetched),
        new_instance_types=tuple(sorted(new_types - old_types)),
        removed_instance_types=tuple(sorted(old_types - new_types)), counts=counts,
        as_of={c: v["as_of"] for c, v in merged.meta["clouds"].items()},
        removed_catalogs=pruned)


def use_catalog(name: str) -> Path:
    """Make ``name`` active: "packaged", "refreshed" (the newest), "previous", or any stored
    catalog's name (`gpuplan catalog info` lists them); returns its directory."""
    resolved, path = _store.resolve(name)
    if resolved != _paths.PACKAGED:  # never point at a catalog every command would refuse
        try:
            read_catalog_dir(path, resolved, notice=True)
        except CatalogError as exc:
            raise CatalogError(f"catalog {resolved!r} cannot be used: "
                               f"{without_fix(exc)}. The active catalog "
                               "is unchanged. To fix: `gpuplan catalog use` another one "
                               "(`gpuplan catalog info` lists them), or remove "
                               f"{path}") from None
    _store.switch(resolved)
    return path


def catalog_status() -> dict:
    """Which catalog is active, where it lives, its per-cloud dates, what else is stored."""
    status = _store.status()
    try:
        cat = load_catalog(status["active"])
        clouds = {c: {"as_of": v.get("as_of"), "source": v.get("source", "")}
                  for c, v in cat.meta.get("clouds", {}).items()}
        refreshed_at = cat.meta.get("refreshed_at")
    except CatalogError:
        clouds, refreshed_at = {}, None
    return {**status, "clouds": clouds, "refreshed_at": refreshed_at,
            "refreshed_exists": bool(status["stored"]),
            "previous_exists": status["previous"] is not None}


__all__ = ["PRICE_CHANGE_THRESHOLD", "OfferChange", "PriceChange", "RefreshResult",
           "catalog_status", "check_integrity", "merge", "refresh_catalog", "use_catalog"]
