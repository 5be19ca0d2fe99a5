"""Checks a refresh applies to what the clouds answered, before anything is merged.

- ``region_code``: a region name as a price list writes it, or None when it is no region name.
  The sources call it at their boundary (AWS's region-index keys, Azure's ``armRegionName``):
  a name is stored in ``offers.csv``, shown in tables and typed back with ``--region``, so
  only what the CLI accepts as a region name gets in (``planner.cli``'s ``REGION_NAME``).
- ``no_prices``: why a cloud's answer must not be merged — it priced no offer at all — or ''.
  One rule for every cloud: an empty answer (a service having a bad day, a schema that moved
  the prices elsewhere) is no evidence that every offer is gone, and ``--prune`` read it so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ._errors import without_fix

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
