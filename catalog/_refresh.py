"""`gpuplan catalog refresh`: rebuild the catalog from the clouds' APIs, check it, swap it in.

Steps, in order — nothing under ``catalogs/`` changes until the last two:

1. For each requested cloud, call its source (``catalog.sources``). ``SourceUnavailable`` (no
   credentials, no network) skips that cloud: its rows and ``as_of`` are kept from the active
   catalog and the reason is reported. **Any other failure — one region raising mid-refresh —
   fails the whole refresh** (``RefreshError``): no partial cloud is ever written and the
   active, refreshed and previous catalogs stay byte-for-byte as they were.
2. Merge: refreshed clouds replace their rows (when ``regions`` is given, only those regions'
   offers are replaced; the cloud's other offers are kept); clouds not asked for are kept.
3. Integrity checks on the merged catalog (``check_integrity``); any problem rejects it.
4. Write it to a temporary directory beside ``catalogs/refreshed`` (every file fsynced), read it
   back with the normal loader, then rename refreshed → previous and temp → refreshed, and
   write the ``active`` marker atomically.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import _paths
from ._csvio import ACCELERATORS, INSTANCE_TYPES, OFFERS, write_table, write_text_atomic
from ._errors import CatalogError, UnknownNameError
from ._load import FILES, Catalog, active_catalog_name, catalog_dir, load_catalog, read_catalog_dir
from ._records import CLOUDS, PRICE_UNUSABLE_FLAGS, Accelerator, InstanceType, Offer
from .sources._common import CloudData, RefreshError, Source, SourceUnavailable
from .sources._names import memory_agrees

PRICE_CHANGE_THRESHOLD = 0.10  # report offers whose price moved by more than 10 %
MAX_PROBLEMS_SHOWN = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class PriceChange:
    cloud: str
    instance_type: str
    region: str
    pricing: str
    old_usd_per_hour: float
    new_usd_per_hour: float

    @property
    def change_fraction(self) -> float:
        return self.new_usd_per_hour / self.old_usd_per_hour - 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class RefreshResult:
    """What a refresh did, against the catalog that was active before it."""

    path: Path
    refreshed: tuple[str, ...]  # clouds rebuilt from their APIs
    skipped: dict[str, str]  # cloud → one-line reason (its rows were kept)
    warnings: tuple[str, ...]
    new_instance_types: tuple[tuple[str, str], ...]  # (cloud, name)
    removed_instance_types: tuple[tuple[str, str], ...]
    price_changes: tuple[PriceChange, ...]  # |change| > PRICE_CHANGE_THRESHOLD
    counts: dict[str, dict[str, int]]  # cloud → {"instance_types": n, "offers": n}
    as_of: dict[str, str] = field(default_factory=dict)  # cloud → ISO date

    def to_dict(self) -> dict:
        return {
            "path": str(self.path), "refreshed": list(self.refreshed),
            "skipped": dict(self.skipped), "warnings": list(self.warnings),
            "new_instance_types": [list(k) for k in self.new_instance_types],
            "removed_instance_types": [list(k) for k in self.removed_instance_types],
            "price_changes": [{
                "cloud": c.cloud, "instance_type": c.instance_type, "region": c.region,
                "pricing": c.pricing, "old_usd_per_hour": c.old_usd_per_hour,
                "new_usd_per_hour": c.new_usd_per_hour,
                "change_pct": round(100 * c.change_fraction, 2)} for c in self.price_changes],
            "counts": {k: dict(v) for k, v in self.counts.items()}, "as_of": dict(self.as_of),
        }


def default_sources(reference: Catalog) -> dict[str, Source]:
    from .sources import AwsSource, AzureSource, GcpSource

    return {"aws": AwsSource(reference=reference), "gcp": GcpSource(reference=reference),
            "azure": AzureSource(reference=reference)}


def refresh_catalog(*, clouds: Sequence[str], regions: Sequence[str] | None,
                    progress: Callable[[str, str, int, int], None] | None = None,
                    sources: Mapping[str, Source] | None = None) -> RefreshResult:
    """Rebuild the catalog for ``clouds`` (``regions``: None for all) and make it active."""
    unknown = [c for c in clouds if c not in CLOUDS]
    if unknown:
        raise UnknownNameError("cloud", unknown[0], CLOUDS, hint=f"use one of {', '.join(CLOUDS)}")
    current = load_catalog()
    packaged = load_catalog(_paths.PACKAGED)
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
            results[cloud] = source.fetch(regions, progress)
        except SourceUnavailable as exc:
            skipped[cloud] = str(exc)
        except RefreshError:
            raise
        except Exception as exc:  # a record that fails validation, an SDK error, a bug
            raise RefreshError(f"{cloud} refresh failed ({type(exc).__name__}: {exc}); the "
                               "active catalog was left unchanged. To fix: retry, or leave "
                               f"{cloud} out with --cloud") from exc
    if not results:
        # Nothing came back from any cloud: writing a copy of the current catalog and calling
        # it "refreshed" would only mislead. Nothing on disk changes.
        reasons = "; ".join(skipped.values())
        raise RefreshError(f"no cloud could be refreshed, the active catalog was left "
                           f"unchanged: {reasons}")
    accelerators, types, offers, meta = _merge(current, packaged, results, regions)
    problems = check_integrity(accelerators, types, offers)
    if problems:
        more = f" (and {len(problems) - MAX_PROBLEMS_SHOWN} more)" if len(problems) > \
            MAX_PROBLEMS_SHOWN else ""
        raise RefreshError("refreshed catalog rejected, the active catalog was left unchanged: "
                           f"{'; '.join(problems[:MAX_PROBLEMS_SHOWN])}{more}. To fix: retry, "
                           "or leave the faulty cloud out with --cloud")
    path = _install(accelerators, types, offers, meta)
    return _diff(current, path, results, skipped, types, offers, meta)


def _merge(current: Catalog, packaged: Catalog, results: dict[str, CloudData],
           regions: Sequence[str] | None):
    accelerators = {a.name: a for a in packaged.accelerators}
    for a in current.accelerators:
        accelerators.setdefault(a.name, a)
    types: list[InstanceType] = []
    offers: list[Offer] = []
    meta_clouds = dict(current.meta.get("clouds", {}))
    for cloud in CLOUDS:
        data = results.get(cloud)
        kept_types = [t for t in current.instance_types if t.cloud == cloud]
        kept_offers = [o for o in current.offers if o.cloud == cloud]
        if data is None:
            types += kept_types
            offers += kept_offers
            continue
        for a in data.accelerators:
            accelerators.setdefault(a.name, a)
        new_offers = list(data.offers)
        new_types = {t.name: t for t in data.instance_types}
        if regions is not None:  # a partial refresh keeps the regions it did not cover
            covered = set(regions)
            new_offers += [o for o in kept_offers if o.region not in covered]
            for t in kept_types:
                if any(o.instance_type == t.name for o in new_offers):
                    new_types.setdefault(t.name, t)
        types += [new_types[n] for n in sorted(new_types)]
        offers += new_offers
        meta_clouds[cloud] = {"as_of": data.as_of.isoformat(), "source": data.source,
                              "approximate": False,
                              "regions": "all" if regions is None else sorted(data.regions)}
    meta = {"name": _paths.REFRESHED, "built_by": "gpuplan catalog refresh",
            "refreshed_at": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "source": "the clouds' own APIs (see per-cloud sources); datasheet accelerator "
                      "specs from the packaged catalog",
            "clouds": {c: meta_clouds[c] for c in CLOUDS if c in meta_clouds}}
    return tuple(accelerators.values()), tuple(types), tuple(offers), meta


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
        a = acc.get(t.accelerator)
        if a is None:
            problems.append(f"{t.cloud}/{t.name} names unknown accelerator {t.accelerator!r}")
        elif t.gpu_count < 1:
            problems.append(f"{t.cloud}/{t.name}: gpu_count {t.gpu_count} < 1")
        elif not memory_agrees(a.memory_gib, t.gpu_memory_gib):
            problems.append(f"{t.cloud}/{t.name}: {t.gpu_memory_gib} GiB per GPU disagrees "
                            f"with {a.name}'s {a.memory_gib} GiB")
    seen: set[tuple[str, str, str, str]] = set()
    on_demand: dict[tuple[str, str, str], float] = {}
    for o in offers:
        where = "/".join(o.key)
        if o.key in seen:
            problems.append(f"duplicate offer {where}")
        seen.add(o.key)
        if (o.cloud, o.instance_type) not in types:
            problems.append(f"offer {where} names unknown instance type")
        if o.usd_per_hour is None:
            if not PRICE_UNUSABLE_FLAGS & set(o.flags):
                problems.append(f"offer {where} has no price and no price flag")
        elif not o.usd_per_hour > 0:
            problems.append(f"offer {where} has price ${o.usd_per_hour}")
        elif o.pricing == "on_demand":
            on_demand[(o.cloud, o.instance_type, o.region)] = o.usd_per_hour
    for o in offers:
        base = on_demand.get((o.cloud, o.instance_type, o.region))
        if (o.pricing == "spot" and o.usd_per_hour is not None and base is not None
                and o.usd_per_hour > base and "spot_not_below_on_demand" not in o.flags):
            problems.append(f"offer {'/'.join(o.key)}: spot ${o.usd_per_hour} above on-demand "
                            f"${base} without the spot_not_below_on_demand flag")
    return problems


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _install(accelerators, types, offers, meta) -> Path:
    base = _paths.catalogs_dir()
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".refreshed.tmp-", dir=base))
    try:
        write_table(tmp / "accelerators.csv", accelerators, ACCELERATORS)
        write_table(tmp / "instance_types.csv", types, INSTANCE_TYPES)
        write_table(tmp / "offers.csv", offers, OFFERS)
        write_text_atomic(tmp / "meta.json", json.dumps(meta, indent=2, sort_keys=True) + "\n")
        _fsync_dir(tmp)
        read_catalog_dir(tmp, _paths.REFRESHED)  # the normal loader must accept it
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    refreshed, previous = _paths.refreshed_catalog_dir(), _paths.previous_catalog_dir()
    trash = None
    if refreshed.exists():
        if previous.exists():
            trash = base / f".previous.old-{os.getpid()}-{tmp.name[-8:]}"
            os.rename(previous, trash)
        os.rename(refreshed, previous)
    os.rename(tmp, refreshed)
    _fsync_dir(base)
    write_text_atomic(_paths.active_marker(), _paths.REFRESHED + "\n")
    if trash is not None:
        shutil.rmtree(trash, ignore_errors=True)
    return refreshed


def _diff(current: Catalog, path: Path, results, skipped, types, offers, meta) -> RefreshResult:
    old_types = {t.key for t in current.instance_types}
    new_types = {t.key for t in types}
    old_prices = {o.key: o.usd_per_hour for o in current.offers if o.usd_per_hour}
    changes = []
    for o in offers:
        old = old_prices.get(o.key)
        if old and o.usd_per_hour and abs(o.usd_per_hour / old - 1) > PRICE_CHANGE_THRESHOLD:
            changes.append(PriceChange(cloud=o.cloud, instance_type=o.instance_type,
                                       region=o.region, pricing=o.pricing,
                                       old_usd_per_hour=old, new_usd_per_hour=o.usd_per_hour))
    changes.sort(key=lambda c: (-abs(c.change_fraction), c.cloud, c.instance_type, c.region))
    counts = {c: {"instance_types": sum(t.cloud == c for t in types),
                  "offers": sum(o.cloud == c for o in offers)} for c in CLOUDS}
    warnings = tuple(w for c in CLOUDS if c in results for w in results[c].warnings)
    return RefreshResult(
        path=path, refreshed=tuple(c for c in CLOUDS if c in results), skipped=dict(skipped),
        warnings=warnings, new_instance_types=tuple(sorted(new_types - old_types)),
        removed_instance_types=tuple(sorted(old_types - new_types)),
        price_changes=tuple(changes), counts=counts,
        as_of={c: v["as_of"] for c, v in meta["clouds"].items()})


def use_catalog(name: str) -> Path:
    """Make ``name`` ("packaged" or "refreshed") the active catalog; returns its directory."""
    if name not in (_paths.PACKAGED, _paths.REFRESHED):
        raise UnknownNameError("catalog", name, (_paths.PACKAGED, _paths.REFRESHED))
    path = catalog_dir(name)
    if name == _paths.REFRESHED and not all((path / f).is_file() for f in FILES):
        raise CatalogError("no refreshed catalog. To fix: run `gpuplan catalog refresh`")
    write_text_atomic(_paths.active_marker(), name + "\n")
    return path


def catalog_status() -> dict:
    """Which catalog is active, where it lives, its per-cloud dates, what else exists."""
    name = active_catalog_name()
    path = catalog_dir(name)
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        meta = {}
    clouds = {c: {"as_of": v.get("as_of"), "source": v.get("source", "")}
              for c, v in meta.get("clouds", {}).items()}
    refreshed, previous = _paths.refreshed_catalog_dir(), _paths.previous_catalog_dir()
    return {"active": name, "path": str(path), "clouds": clouds,
            "refreshed_at": meta.get("refreshed_at"),
            "refreshed_exists": (refreshed / "meta.json").is_file(),
            "refreshed_path": str(refreshed),
            "previous_exists": (previous / "meta.json").is_file(),
            "previous_path": str(previous)}


__all__ = ["PRICE_CHANGE_THRESHOLD", "PriceChange", "RefreshResult", "catalog_status",
           "check_integrity", "refresh_catalog", "use_catalog"]
