"""meta.json for a catalog: per cloud, how old its prices are and where they came from.

``clouds[c]["as_of"]`` is the newest price date of the cloud (what a "prices as of" line
shows), ``oldest_as_of`` the oldest, and ``sources`` lists every source with its date, whether
that date is approximate, and how many offers it priced — so "AWS on-demand is from
2026-01-21, its capacity blocks from 2024-12" is visible rather than averaged away.

A catalog's age (``age_in_days``) is never negative: prices dated after the day counted as today
(a GPUPLAN_TODAY pinned to a past day; the loader refuses stored dates after the clock's day,
``_checks``) are 0 days old, and ``newer_than_today`` says so in a note — "-60 days old" with
no word of why read as a bug.

Reading it back (``read_meta``, ``check_meta``): bounded in size and depth by the rules of
every JSON file gpuplan reads, and checked for the shape its readers use — a stray or broken
catalog directory gives one clear error, never a traceback from every command (a 2 KB file of
nested brackets raised RecursionError in the store's scan; `clouds` as a list raised
AttributeError). The loader and the store's cheap completeness check both use it.
"""

from __future__ import annotations

import datetime as _dt
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from ._errors import REPLACE_CATALOG_FIX, CatalogFileError, without_fix
from ._records import Offer


def cloud_meta(offers: Iterable[Offer], cloud: str, basis: dict[str, str] | None = None) -> dict:
    offers = [o for o in offers if o.cloud == cloud]
    if not offers:
        return {}
    by_source = Counter((o.source, o.as_of, o.as_of_approximate) for o in offers)
    newest = max(o.as_of for o in offers)
    sources = [{"source": s, "as_of": d.isoformat(), "approximate": a, "offers": n}
               for (s, d, a), n in sorted(by_source.items(), key=lambda kv: (kv[0][1],
                                                                            kv[0][0]),
                                          reverse=True)]
    return {
        "as_of": newest.isoformat(),
        "approximate": all(o.as_of_approximate for o in offers if o.as_of == newest),
        "oldest_as_of": min(o.as_of for o in offers).isoformat(),
        "source": sources[0]["source"],
        "basis": (basis or {}).get(cloud, ""),
        "sources": sources,
    }


def age_in_days(as_of: _dt.date | None, today: _dt.date) -> int | None:
    """Days from ``as_of`` to ``today`` (None for no date), never below 0: prices dated after
    ``today`` are 0 days old, and ``newer_than_today`` says why."""
    return None if as_of is None else max(0, (today - as_of).days)


def newer_than_today(as_of: Mapping[str, _dt.date | None], today: _dt.date) -> str | None:
    """The note for the clouds whose newest prices (``as_of``: cloud → date) are dated after
    ``today``, or None when none is. Only a day pinned before the catalog was priced does that
    (GPUPLAN_TODAY, to reproduce a past report): their ages count as 0 days, not -60."""
    import os

    from ._today import TODAY_ENV

    newer = [f"{c} {d.isoformat()}" for c, d in as_of.items() if d is not None and d > today]
    if not newer:
        return None
    pinned = f"{TODAY_ENV}={today.isoformat()}" if os.environ.get(TODAY_ENV, "").strip() \
        else today.isoformat()
    return (f"the prices are newer than today ({pinned}): {', '.join(newer)}; their age counts "
            "as 0 days, and a plan priced with them is priced as of those dates, not as of "
            "that day")


def provenance(cat) -> dict:
    """Where catalog ``cat``'s prices come from, as every result records it: its name, each
    cloud's newest price date and whether that date is approximate (inferred from a file's
    publication, not observed), its source and the overrides applied."""
    from ._clouds import CLOUDS

    dated = {c: d for c in CLOUDS if (d := cat.as_of(c))}
    return {"name": cat.name, "as_of": {c: d.isoformat() for c, d in dated.items()},
            "as_of_approximate": {c: cat.as_of_approximate(c) for c in dated},
            "source": cat.source, "overrides": cat.overrides_path}


def price_dates(info: Mapping) -> str:
    """The "prices as of" text of a ``provenance`` — "aws 2026-01-21, gcp ~2025-04-01; ~ =
    approximate date" — the one wording of the CLI banner, the reports and the app. A record
    written before dates carried ``as_of_approximate`` shows its dates unmarked."""
    as_of = info.get("as_of") or {}
    approx = info.get("as_of_approximate") or {}
    dates = ", ".join(f"{c} {'~' if approx.get(c) else ''}{d}" for c, d in as_of.items())
    legend = "; ~ = approximate date" if any(approx.get(c) for c in as_of) else ""
    return (dates or "unknown") + legend


def dates_of(dated: Iterable[tuple[str, _dt.date, bool]],
             today: _dt.date) -> tuple[str, int]:
    """The "prices as of" text of some offers, given as (cloud, as_of, approximate), and the
    age in days of the oldest (0 for a date to come): each cloud's dates, a span where they
    differ ("aws 2025-11-30 to 2026-01-21; gcp ~2025-04-01; ~ = approximate date"). `offers`
    and the app's Catalog page date the rows they show with it (a filter to one cloud read
    the whole catalog's oldest price, another cloud's)."""
    from ._clouds import CLOUDS

    spans: dict[str, list[tuple[_dt.date, bool]]] = {}
    for cloud, day, approx in dated:
        spans.setdefault(cloud, []).append((day, bool(approx)))
    order = list(CLOUDS)
    said = []
    for cloud in sorted(spans, key=lambda c: order.index(c) if c in order else len(order)):
        first, last = min(spans[cloud]), max(spans[cloud])
        shown = [("~" if approx else "") + d.isoformat() for d, approx in (first, last)]
        said.append(f"{cloud} " + (shown[1] if first[0] == last[0] else " to ".join(shown)))
    approx = any(a for days in spans.values() for _, a in days)
    oldest = min((d for days in spans.values() for d, _ in days), default=today)
    return (", ".join(said) + ("; ~ = approximate date" if approx else ""),
            max(0, (today - oldest).days))


MAX_META_BYTES = 4 * 2**20


def read_meta(path: Path) -> object:
    """The parsed meta.json of the catalog directory ``path`` (bounded in size and depth, by
    the rules of every JSON file gpuplan reads); CatalogFileError when it cannot be read."""
    from ._files import load_json_text, read_user_text

    where = path / "meta.json"
    try:
        text = read_user_text(where, what="catalog meta", max_bytes=MAX_META_BYTES)
        return load_json_text(text, what=str(where), max_depth=16)
    except CatalogFileError as exc:
        raise CatalogFileError(f"{without_fix(exc)}. {REPLACE_CATALOG_FIX}") from None


# meta.json's fields a reader relies on, with their types (absent is allowed here; the loader
# requires `clouds` with dates and counts for every cloud a stored catalog has offers of)
_META_TYPES = {"name": str, "source": str, "refreshed_at": str, "clouds": dict}
_CLOUD_META_TYPES = {"as_of": str, "oldest_as_of": str, "approximate": bool, "basis": str,
                     "source": str, "sources": list}
_SOURCE_TYPES = {"as_of": str, "approximate": bool, "offers": int, "source": str}


def check_meta(meta: object, where: Path) -> dict:
    """``meta`` if it has the shape the catalog's readers use, else CatalogFileError naming the
    first wrong field (a list where `clouds` should be a mapping broke every command)."""
    def bad(field: str, want: type, got: object) -> CatalogFileError:
        return CatalogFileError(f"{where}: {field} should be {_TYPE_WORDS[want]}, found "
                                f"{type(got).__name__}. {REPLACE_CATALOG_FIX}")

    def check(entry: dict, types: dict, prefix: str) -> None:
        for key, want in types.items():
            v = entry.get(key)
            if v is not None and (not isinstance(v, want) or want is int and
                                  isinstance(v, bool)):
                raise bad(prefix + key, want, v)
        for key in _DATES:  # a date no reader can parse lost its cloud from every banner
            v = entry.get(key)
            if isinstance(v, str) and key in types and not _is_date(v):
                raise CatalogFileError(f"{where}: {prefix}{key} should be a date "
                                       f"(YYYY-MM-DD), found {v[:40]!r}. "
                                       f"{REPLACE_CATALOG_FIX}")

    if not isinstance(meta, dict):
        raise bad("the file", dict, meta)
    check(meta, _META_TYPES, "")
    for cloud, entry in (meta.get("clouds") or {}).items():
        if not isinstance(entry, dict):
            raise bad(f"clouds.{cloud}", dict, entry)
        check(entry, _CLOUD_META_TYPES, f"clouds.{cloud}.")
        for i, src in enumerate(entry.get("sources") or ()):
            if not isinstance(src, dict):
                raise bad(f"clouds.{cloud}.sources[{i}]", dict, src)
            check(src, _SOURCE_TYPES, f"clouds.{cloud}.sources[{i}].")
            missing = [k for k in _SOURCE_TYPES if src.get(k) is None]  # null is missing
            if missing:
                raise CatalogFileError(f"{where}: clouds.{cloud}.sources[{i}] lacks "
                                       f"{', '.join(missing)}. {REPLACE_CATALOG_FIX}")
    stamp = meta.get("refreshed_at")
    if isinstance(stamp, str) and not _is_refresh_time(stamp):
        raise CatalogFileError(f"{where}: refreshed_at should be a UTC time not in the future "
                               f"(YYYY-MM-DDTHH:MM:SS+00:00), found {stamp[:40]!r}. "
                               f"{REPLACE_CATALOG_FIX}")
    return meta


_DATES = ("as_of", "oldest_as_of")


def _is_date(text: str) -> bool:
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return len(text) == 10  # YYYY-MM-DD, as cloud_meta writes (3.11 also takes 20260121)


# A clock a little ahead is not a forged time; a day more is (the slack the loader gives dates).
REFRESHED_AT_SLACK = _dt.timedelta(days=1)


def _is_refresh_time(text: str) -> bool:
    """Whether ``text`` reads as a refresh's time: ``YYYY-MM-DDTHH:MM:SS`` in UTC (the refresh
    writes ``+00:00``; ``Z`` and fractions are taken too), at most a day ahead of the clock.
    The store orders catalogs by this text for `use refreshed`, recovery and pruning: "garbage"
    or a year 2099 counted as the newest catalog for ever. The shape, not the calendar, is
    checked (a day 00 still orders right)."""
    if not _REFRESH_TIME.match(text):
        return False
    ahead = _dt.datetime.now(_dt.UTC) + REFRESHED_AT_SLACK
    return text[:19] <= ahead.strftime("%Y-%m-%dT%H:%M:%S")  # fixed width: orders as times


_REFRESH_TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]00:00)$", re.ASCII)


_TYPE_WORDS = {str: "text", dict: "a JSON object", list: "a list", bool: "true or false",
               int: "a whole number"}


def sources_of(catalog, offers: Iterable[Offer], sources: list[dict]) -> list[dict]:
    """One cloud's ``sources`` (counted when the catalog was written) with its ``offers`` an
    overrides file priced counted under a source of their own, "overrides: FILE", and no more
    under the source they replaced: `catalog info --overrides` still said "aws 1,895" for
    the on-demand prices a discount had changed."""
    moved = [o for o in offers if "overridden" in o.flags]
    if not (moved and catalog.overrides_path and catalog._layers):
        return sources
    listed = {o.key: o for o in catalog._layers[0].offers}  # the prices before any override
    gone = Counter((b.source, b.as_of.isoformat()) for o in moved
                   if (b := listed.get(o.key)) is not None)
    out = [{**s, "offers": n} for s in sources
           if (n := s.get("offers", 0) - gone[(s.get("source"), s.get("as_of"))]) > 0]
    newest = max(moved, key=lambda o: o.as_of)
    return [*out, {"approximate": newest.as_of_approximate, "as_of": newest.as_of.isoformat(),
                   "offers": len(moved), "source": f"overrides: {catalog.overrides_path}"}]


__all__ = ["MAX_META_BYTES", "age_in_days", "check_meta", "cloud_meta", "dates_of",
           "newer_than_today", "price_dates", "provenance", "read_meta", "sources_of"]
