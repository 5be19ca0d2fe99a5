"""meta.json for a catalog: per cloud, how old its prices are and where they came from.

``clouds[c]["as_of"]`` is the newest price date of the cloud (what a "prices as of" line
shows), ``oldest_as_of`` the oldest, and ``sources`` lists every source with its date, whether
that date is approximate, and how many offers it priced — so "AWS on-demand is from
2026-01-21, its capacity blocks from 2024-12" is visible rather than averaged away.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

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
