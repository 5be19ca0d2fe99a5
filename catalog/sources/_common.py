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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from .._errors import CatalogError
from .._records import PRICING_MODELS, Accelerator, InstanceType, Offer

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
    # The pricing models this refresh looked up (an AWS refresh without credentials looks up
    # no spot prices): `--prune` only removes offers inside what was covered.
    covered_pricing: tuple[str, ...] = PRICING_MODELS
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
    from concurrent.futures import ThreadPoolExecutor, as_completed  # imports logging: lazily

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
