"""What the Catalog page says about the offers it shows, as `gpuplan offers` says it: the
dates of those offers (not the whole catalog's), a mark beside a price the planner does not
use, and the flags split into those that only inform and those that keep a price out of
plans."""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import catalog

UNUSED_MARK = "*"  # as the CLI's `offers`: beside a price `plan` does not use


def shown_dates(rows: Sequence[dict], today: dt.date | None = None) -> tuple[str, int]:
    """(the "prices as of" text, the age in days of the oldest) of the offer rows ``rows``
    (``OfferRow.as_dict``), as `gpuplan offers` words them (``catalog.dates_of``)."""
    return catalog.dates_of(((r["cloud"], dt.date.fromisoformat(r["as_of"]),
                              bool(r.get("as_of_approximate"))) for r in rows),
                            today or catalog.today_utc())


def marked_prices(rows: Sequence[dict]) -> list[str]:
    """The mark column beside $/h: ``UNUSED_MARK`` where the price is not used in plans
    (``price_usable`` False), "" elsewhere."""
    return [UNUSED_MARK if not r.get("price_usable", True) else "" for r in rows]


def flag_groups(rows: Sequence[dict]) -> tuple[list[str], list[str]]:
    """(the flags the shown rows carry that keep a price out of plans, those that only inform:
    ``catalog.INFORMATIONAL_FLAGS``, whose prices the planner still uses), as `gpuplan
    offers` splits them (``catalog.split_flags``)."""
    return catalog.split_flags(f for r in rows for f in r["flags"])
