"""Checks a refresh applies to what the clouds answered, before anything is merged.

- ``region_code``: a region name as a price list writes it, or None when it is no region name.
  The sources call it at their boundary (AWS's region-index keys, Azure's ``armRegionName``):
  a name is stored in ``offers.csv``, shown in tables and typed back with ``--region``, so
  only what the CLI accepts as a region name gets in (``planner.cli``'s ``REGION_NAME``).
- ``check_clouds``, ``check_regions``: the clouds and regions asked for, each one known,
  checked before any source is contacted.
- ``no_prices``: why a cloud's answer must not be merged — it priced no offer at all — or ''.
  One rule for every cloud: an empty answer (a service having a bad day, a schema that moved
  the prices elsewhere) is no evidence that every offer is gone, and ``--prune`` read it so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ._clouds import CLOUDS
from ._errors import CatalogError, UnknownNameError, without_fix

# Every region of the packaged catalog matches (us-east-1-atl-1, us-central1, eastus2euap);
# 63 characters is a DNS label, the longest any cloud uses in a host name.
REGION_CODE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_REGION_CHARS = 63


def region_code(name: object) -> str | None:
    """``name`` without surrounding whitespace ("  eastus  " is eastus), or None when it is not
    a region name: not a string, control characters, commas, upper case, non-ASCII, too long."""
    if not isinstance(name, str):
        return None
    name = name.strip()
    if len(name) > MAX_REGION_CHARS or not REGION_CODE.fullmatch(name):
        return None
    return name


def shown_names(names: Iterable[str], limit: int = 3) -> str:
    """A few rejected names, quoted, escaped and shortened, for a one-line warning."""
    names = list(names)
    shown = [ascii(n[:24]) + ("…" if len(n) > 24 else "") for n in names[:limit]]
    return ", ".join(shown) + (f" and {len(names) - limit:,} more" if len(names) > limit else "")


def spared_by_prune(regions: Iterable[str]) -> str:
    """"; --prune leaves a, b … alone" for a source's warning about ``regions`` (where lines
    were left out: their offers are not gone), or '' for none."""
    regions = sorted(regions)
    if not regions:
        return ""
    return f"; --prune leaves {', '.join(regions[:5])}{' …' if len(regions) > 5 else ''} alone"


def no_prices(cloud: str, offers: Sequence, regions: Sequence[str] | None,
              warnings: Sequence[str] = ()) -> str:
    """The one-line reason to leave ``cloud`` out of this refresh when its answer priced no
    offer at all (every offer unpriced or none), else ''. The source's first warning comes
    along: the cloud's warnings are not reported when it is left out, and the sources put
    first the one that says what they left out of the prices (another currency, unreadable)."""
    if any(o.usd_per_hour is not None for o in offers):
        return ""
    where = f" for {', '.join(regions)}" if regions else ""
    if warnings:
        first = without_fix(warnings[0])
        where += f" ({first[:200]}{'…' if len(first) > 200 else ''})"
    check = (f"check that {cloud} has GPU offers in the regions asked for (`gpuplan offers "
             f"--cloud {cloud}`), or leave {cloud} out with --cloud" if regions else
             f"check the {cloud} price service's status, or leave {cloud} out with --cloud")
    return (f"{cloud} returned no prices{where}, which would read as every offer gone; the "
            f"catalog keeps its {cloud} offers. To fix: retry later, or {check}")


def check_clouds(clouds: Sequence[str]) -> list[str]:
    """``clouds`` without repeats, each one of CLOUDS (else UnknownNameError, with the close
    matches); read before anything else is."""
    names = [clouds] if isinstance(clouds, str) else list(clouds)
    if not names:
        raise CatalogError(f"no cloud to refresh. To fix: name one or more of "
                           f"{', '.join(CLOUDS)} (--cloud), or leave --cloud out for all")
    for c in names:
        if not isinstance(c, str) or c not in CLOUDS:
            raise UnknownNameError("cloud", c, CLOUDS, hint=f"use one of {', '.join(CLOUDS)}")
    return list(dict.fromkeys(names))


def check_regions(clouds: Sequence[str], regions: Sequence[str] | None,
                   catalogs: Sequence) -> list[str] | None:
    """``regions`` without repeats, each a region of one of ``clouds`` in the active or the
    packaged catalog (``catalogs``), checked before any source is contacted.

    A region a cloud opened after both catalogs were built is not known yet: a refresh
    without --region fetches every region, new ones included (the hint says so).
    """
    if regions is None:
        return None
    names = [regions] if isinstance(regions, str) else list(regions)
    if not names:
        raise CatalogError("no region to refresh. To fix: name one or more regions (--region),"
                           " or leave --region out for all")
    known = {r for cat in catalogs for c in clouds for r in cat.regions(c)}
    for region in names:
        if isinstance(region, str) and region in known:
            continue
        elsewhere = [c for c in CLOUDS if c not in clouds
                     and any(region in cat.regions(c) for cat in catalogs)]
        hint = (f"{region!r} is a region of {elsewhere[0]}: add {elsewhere[0]} to `clouds`, or "
                "leave the region out; nothing was changed" if elsewhere else
                "`gpuplan catalog info` and `gpuplan offers` show the regions (a region "
                "newer than the catalog comes with a refresh without --region); nothing was "
                "changed")
        raise UnknownNameError(f"{'/'.join(clouds)} region", region, known, hint=hint)
    return list(dict.fromkeys(names))
