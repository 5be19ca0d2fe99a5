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
from dataclasses import field
from typing import Protocol, TypeVar

from .._errors import CatalogError, without_fix
from .._record import record
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


@record
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
    """Run ``work(region)`` for every region on worker threads; the first failure propagates
    (with the region named) and no further region is started — no partial result. Results
    come in ``regions`` order.

    The workers are daemon threads, not a ``ThreadPoolExecutor``'s: an executor's workers are
    joined when the ``with`` block ends and again at interpreter exit, so a Ctrl-C printed
    "interrupted" and then waited for every download in flight (minutes for AWS price files),
    and a second Ctrl-C during that wait printed a traceback from ``threading._shutdown``. The
    main thread waits in 0.1 s steps, so the interrupt is raised at once; a worker's own
    download is abandoned with the process (files are written to a temporary name first)."""
    import queue
    import threading

    report = progress or no_progress
    regions = list(dict.fromkeys(regions))  # each once: the wait counts distinct results
    if not regions:
        return {}
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for region in regions:
        todo.put(region)
    done: queue.SimpleQueue = queue.SimpleQueue()
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            try:
                region = todo.get_nowait()
            except queue.Empty:
                return
            try:
                done.put((region, True, work(region)))
            except BaseException as exc:  # handed to the main thread, which raises it
                stop.set()  # here, before this worker takes the next region
                done.put((region, False, exc))

    for i in range(max(1, min(max_workers, len(regions)))):
        threading.Thread(target=worker, name=f"gpuplan-{cloud}-{i}", daemon=True).start()
    results: dict[str, T] = {}
    try:
        while len(results) < len(regions):
            try:
                region, ok, value = done.get(timeout=0.1)
            except queue.Empty:
                continue
            if not ok:
                if isinstance(value, SourceUnavailable) or not isinstance(value, Exception):
                    raise value  # a cloud to skip, or an interrupt: as they are
                # one fix: a RefreshError from the download already ends with it
                raise RefreshError(f"{cloud}: {what} {region} failed: {without_fix(value)}. To "
                                   f"fix: retry later, or leave {cloud} out with --cloud") \
                    from value
            results[region] = value
            report(cloud, region, len(results), len(regions))
    finally:
        stop.set()  # no region is started after a failure or an interrupt
    return {r: results[r] for r in regions}


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
