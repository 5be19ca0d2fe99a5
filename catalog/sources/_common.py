"""What every cloud source shares: its result record, its one error, and small helpers.

A *source* is any object with a ``cloud`` attribute and a ``fetch(regions, progress)`` method
that returns a ``CloudData``. It raises ``SourceUnavailable`` when it cannot even start
(no credentials, no network) — the refresh then keeps that cloud's rows from the active
catalog — and lets any other exception escape, which fails the whole refresh.

    GpuplanError
    └── CatalogError
        ├── SourceUnavailable    a cloud cannot be reached or has no credentials (skip it)
        └── RefreshError         a refresh failed or its result failed the integrity checks
"""

from __future__ import annotations

import datetime as _dt
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .._errors import CatalogError
from .._records import Accelerator, InstanceType, Offer

# progress(cloud, step, done, total): step is a region name or a phase ("pricing").
Progress = Callable[[str, str, int, int], None]
T = TypeVar("T")


class SourceUnavailable(CatalogError):
    """A cloud's API cannot be used right now; ``str(exc)`` is one line ending in "To fix: …"."""

    def __init__(self, cloud: str, message: str) -> None:
        super().__init__(f"{cloud}: {message}")
        self.cloud, self.message = cloud, message


class RefreshError(CatalogError):
    """The refresh was abandoned; the active catalog was left as it was."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CloudData:
    """Everything one cloud's refresh produced. ``accelerators`` holds only names the packaged
    catalog lacks (minimal records, no datasheet); ``warnings`` are parts that were skipped."""

    cloud: str
    instance_types: tuple[InstanceType, ...]
    offers: tuple[Offer, ...]
    as_of: _dt.date
    source: str
    accelerators: tuple[Accelerator, ...] = ()
    regions: tuple[str, ...] = ()  # the regions this refresh covered
    warnings: tuple[str, ...] = field(default=())


class Source(Protocol):
    cloud: str

    def fetch(self, regions: Sequence[str] | None, progress: Progress | None) -> CloudData: ...


def no_progress(cloud: str, step: str, done: int, total: int) -> None:
    """The default progress callback: report nothing."""


def run_per_region(cloud: str, regions: Sequence[str], work: Callable[[str], T],
                   progress: Progress | None, max_workers: int = 8,
                   what: str = "region") -> dict[str, T]:
    """Run ``work(region)`` for every region on a thread pool; the first failure propagates
    (with the region named) after the other workers are cancelled — no partial result."""
    report = progress or no_progress
    results: dict[str, T] = {}
    if not regions:
        return results
    with ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(regions)))) as pool:
        futures = {pool.submit(work, r): r for r in regions}
        for future in as_completed(futures):
            region = futures[future]
            try:
                results[region] = future.result()
            except SourceUnavailable:
                for f in futures:
                    f.cancel()
                raise
            except Exception as exc:
                for f in futures:
                    f.cancel()
                raise RefreshError(f"{cloud}: {what} {region} failed: {exc}. To fix: retry "
                                   f"later, or leave {cloud} out with --cloud") from exc
            report(cloud, region, len(results), len(regions))
    return results


def median_and_min(prices_by_zone: dict[str, float]) -> tuple[str, float, float]:
    """(cheapest zone, its price, median across zones) — the Offer's spot convention."""
    zone = min(prices_by_zone, key=lambda z: (prices_by_zone[z], z))
    return zone, prices_by_zone[zone], float(statistics.median(prices_by_zone.values()))


def flag_spot_above_on_demand(offers: Iterable[Offer]) -> tuple[Offer, ...]:
    """Add ``spot_not_below_on_demand`` to spot offers priced at or above on-demand."""
    from dataclasses import replace

    offers = tuple(offers)
    od = {(o.cloud, o.instance_type, o.region): o.usd_per_hour for o in offers
          if o.pricing == "on_demand" and o.usd_per_hour is not None}
    out = []
    for o in offers:
        base = od.get((o.cloud, o.instance_type, o.region))
        if (o.pricing == "spot" and o.usd_per_hour is not None and base is not None
                and o.usd_per_hour >= base and "spot_not_below_on_demand" not in o.flags):
            o = replace(o, flags=(*o.flags, "spot_not_below_on_demand"))
        out.append(o)
    return tuple(out)


def parse_gbps(text: str) -> float | None:
    """'3200 Gigabit' / 'Up to 25 Gigabit' / '100 Gbps' → Gbps; None when not a number."""
    match = re.search(r"([\d.]+)\s*(Gigabit|Gbps|Megabit|Mbps)", text or "", re.I)
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower().startswith("m") else value


def guess_topology(accelerator: Accelerator | None, gpu_count: int) -> str:
    """Intra-node topology when the cloud's API does not say: from the accelerator's link."""
    if gpu_count <= 1:
        return "single"
    if accelerator is None:
        return "pcie"
    link = (accelerator.intra_node_link or "").lower()
    form = (accelerator.form_factor or "").lower()
    if "neuronlink" in link or accelerator.vendor == "AWS":
        return "neuronlink"
    if "infinity fabric" in link or "xgmi" in link:
        return "xgmi"
    if "ici" in link:
        return "ici"
    if "nvswitch" in link or (("sxm" in form or "hgx" in form) and "nvlink 2" not in link):
        return "nvswitch"
    if "nvlink" in link and "no nvlink" not in link and "optional" not in link:
        return "nvlink"
    return "pcie"


def today() -> _dt.date:
    return _dt.datetime.now(_dt.UTC).date()
