"""What a stored catalog must pass before it is used, beyond each record's own bounds.

A stored catalog (``$GPUPLAN_HOME/catalogs/NAME``) is gpuplan's own output, but a partial
copy, a full disk or a hand edit can change it after the refresh that wrote and checked it.
The loader (``_load.read_catalog_dir``, so `catalog use`, every load on a cache miss, and
the read-back of an install) runs these over it; the per-user cache only ever holds what
passed them (it is written after them, keyed by the files' bytes and this module's code):

- **complete** — ``offers.csv`` holds offers, and as many per cloud and per (source, date) as
  ``meta.json`` lists (``_meta.cloud_meta`` wrote those counts from the same offers): a file
  cut at a row boundary, or left with only its header, parses cleanly but is refused;
- **dated** — every offer's date is a day a price was seen: not after today's UTC date by
  the clock (``LATEST_PRICE_DATE_SLACK``), not before 2000; and every cloud with offers has
  its ``meta.json`` entry, whose ``as_of`` (and ``oldest_as_of``) are its offers' newest (and
  oldest) dates: the "prices as of" line and the stale-price warning are read from them and
  must not go missing or be moved;
- **possible** — the specs ``check_integrity`` holds a refresh to (``spec_problems``), and
  each accelerator's datasheet figures within 2× of the packaged datasheet's (a refresh takes
  them from there; a hand-edited 100× bf16 peak priced a run at a fifth of its cost);
- **flagged** — the anomaly rules a refresh runs (``_anomalies.flag_anomalies``) run again,
  so a price a refresh would have flagged (a hand-edited $0.00001/h, a spot price above
  on-demand, 99,999 $/h) is flagged, and the planner skips it like every flagged price.

The packaged snapshot is not re-checked here: it ships with gpuplan, was checked when it was
built (tests hold it to these same rules), and its load time is the one every user pays.
"""

from __future__ import annotations

import csv
import datetime as _dt
import io
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ._anomalies import flag_anomalies
from ._clouds import CLOUDS
from ._errors import REPLACE_CATALOG_FIX, CatalogFileError, CatalogNotice
from ._records import Accelerator, InstanceType, Offer
from ._today import MIN_YEAR

# Accelerators in one machine, for all but TPU slices (sold as slices of up to thousands of
# chips): the packaged catalog's largest machines hold 16 (a2-megagpu-16g, p2.16xlarge,
# inf1.24xlarge, trn1.32xlarge, trn2.48xlarge), as ``MAX_GPUS_PER_INSTANCE`` notes.
MAX_DEVICES_PER_MACHINE = 16
MAX_PROBLEMS_SHOWN = 3
# The dates a stored offer may carry. A refresh dates what it fetched with the UTC day it ran
# by the clock (``sources._common.today``), so a later date is no price anyone saw — a hand
# edit or damage: 9999-12-31 showed "prices as of 9999-12-31" and an age of -2,912,108 days.
# The bound is the clock's day, not GPUPLAN_TODAY: that pins a past day to reproduce a report
# (the tests pin 2026-12-01), and a catalog refreshed since then is real, only newer than the
# pinned day (``_meta.newer_than_today`` says so). One day of slack: a catalog refreshed on a
# machine whose clock runs ahead, or just after UTC midnight, and read on one whose clock is
# behind is not damaged. Before 2000 (``_today.MIN_YEAR``) no cloud sold GPU hours: 0001-01-01
# made the catalog "739,950 days old".
LATEST_PRICE_DATE_SLACK = _dt.timedelta(days=1)
EARLIEST_PRICE_DATE = _dt.date(MIN_YEAR, 1, 1)


def is_pod_slice(instance_type: InstanceType) -> bool:
    """A TPU slice: many machines' chips sold as one instance type (as ``_anomalies``)."""
    return instance_type.accelerator.startswith("TPU")


def spec_problems(accelerators: Sequence[Accelerator],
                  instance_types: Sequence[InstanceType]) -> list[str]:
    """Instance types whose specs cannot be right: per-GPU memory off its datasheet by more
    than a refresh allows, or more accelerators in one machine than any machine holds."""
    from .sources._names import memory_agrees  # a refresh's own tolerance

    acc = {a.name: a for a in accelerators}
    problems = []
    for t in instance_types:
        a = acc.get(t.accelerator)
        if a is not None and not memory_agrees(a.memory_gib, t.gpu_memory_gib):
            problems.append(f"{t.cloud}/{t.name}: {t.gpu_memory_gib:g} GiB per GPU disagrees "
                            f"with {a.name}'s {a.memory_gib:g} GiB")
        if t.gpu_count > MAX_DEVICES_PER_MACHINE and not is_pod_slice(t):
            problems.append(f"{t.cloud}/{t.name}: {t.gpu_count:,} {t.accelerator} in one "
                            f"machine (machines hold at most {MAX_DEVICES_PER_MACHINE})")
    return problems


# datasheet figures a stored catalog must keep (within DATASHEET_FACTOR of the packaged ones)
DATASHEET_FIELDS = ("memory_gib", "memory_bandwidth_gb_per_s", "tflops_fp32", "tflops_tf32",
                    "tflops_bf16", "tflops_fp16", "tflops_fp8", "intra_node_gb_per_s_per_gpu",
                    "reference_inter_node_gbps")
DATASHEET_FACTOR = 2.0  # a corrected datasheet moves a figure by far less


def datasheet_problems(accelerators: Sequence[Accelerator]) -> list[str]:
    """Accelerators whose datasheet figures are more than ``DATASHEET_FACTOR`` away from the
    packaged snapshot's for the same accelerator (those the snapshot lacks are not compared)."""
    from ._csvio import ACCELERATORS, read_table
    from ._paths import packaged_catalog_dir

    # the packaged datasheets alone (one small file, not the whole snapshot)
    packaged = {a.name: a for a in read_table(packaged_catalog_dir() / "accelerators.csv",
                                              ACCELERATORS)}
    problems = []
    for a in accelerators:
        ref = packaged.get(a.name)
        for f in DATASHEET_FIELDS if ref is not None else ():
            mine, theirs = getattr(a, f), getattr(ref, f)
            if mine and theirs and not 1 / DATASHEET_FACTOR <= mine / theirs <= DATASHEET_FACTOR:
                problems.append(f"{a.name}: {f} {mine:g} against the datasheet's {theirs:g}")
    return problems


def check_stored(path: Path, meta: dict, accelerators: Sequence[Accelerator],
                 instance_types: Sequence[InstanceType], offers: Sequence[Offer], *,
                 name: str = "", notice: bool = False) -> tuple[Offer, ...]:
    """The offers of the stored catalog in ``path``, with the anomaly flags recomputed;
    CatalogFileError if the catalog is incomplete, undated or impossible (module docstring).
    ``notice``: say in a ``CatalogNotice`` which offers gained a flag (`catalog use`)."""
    if not offers:
        raise CatalogFileError(f"{path / 'offers.csv'}: holds no offers, so the catalog is "
                               f"incomplete. {REPLACE_CATALOG_FIX}")
    _check_counts(path, meta, offers)
    _check_dates(path, meta, offers)
    problems = datasheet_problems(accelerators)
    if problems:
        raise CatalogFileError(f"{path / 'accelerators.csv'}: "
                               f"{'; '.join(problems[:MAX_PROBLEMS_SHOWN])}: the file is "
                               f"damaged or was edited. {REPLACE_CATALOG_FIX}")
    problems = spec_problems(accelerators, instance_types)
    if problems:
        more = (f" (and {len(problems) - MAX_PROBLEMS_SHOWN} more)"
                if len(problems) > MAX_PROBLEMS_SHOWN else "")
        raise CatalogFileError(f"{path / 'instance_types.csv'}: "
                               f"{'; '.join(problems[:MAX_PROBLEMS_SHOWN])}{more}: the file "
                               f"is damaged or was edited. {REPLACE_CATALOG_FIX}")
    flagged = flag_anomalies(offers, {t.key: t for t in instance_types})
    if notice:
        _say_new_flags(name or path.name, offers, flagged)
    return flagged


def _cloud_entries(meta: dict) -> dict:
    clouds = meta.get("clouds")
    return clouds if isinstance(clouds, dict) else {}


def _check_counts(path: Path, meta: dict, offers: Sequence[Offer]) -> None:
    entries = _cloud_entries(meta)
    counted: Counter = Counter()
    for o in offers:
        counted[o.cloud, o.source, o.as_of, o.as_of_approximate] += 1
    for cloud in dict.fromkeys(c for c, *_ in counted):
        entry = entries.get(cloud)
        if not entry or not entry.get("sources"):
            n = sum(v for (c, *_), v in counted.items() if c == cloud)
            what = f"clouds.{cloud}" if not entry else f"clouds.{cloud}.sources"
            raise CatalogFileError(
                f"{path / 'meta.json'}: {what} is missing, so the dates and the count of "
                f"{cloud}'s {n:,} offers are unknown: the file is incomplete. "
                f"{REPLACE_CATALOG_FIX}")
    listed: Counter = Counter()
    for cloud, entry in entries.items():
        for s in entry.get("sources") or ():
            listed[cloud, s["source"], _dt.date.fromisoformat(s["as_of"]),
                   s["approximate"]] += s["offers"]
    if counted == listed:
        return
    have, want = Counter(), Counter()
    for (cloud, *_), n in counted.items():
        have[cloud] += n
    for (cloud, *_), n in listed.items():
        want[cloud] += n
    if have != want:
        clouds = [c for c in (*CLOUDS, *sorted(set(want) - set(CLOUDS))) if want[c]]
        per_cloud = ", ".join(f"{c} {want[c]:,}" for c in clouds) or "none"
        raise CatalogFileError(
            f"{path / 'offers.csv'}: {len(offers):,} offers "
            f"({', '.join(f'{c} {have[c]:,}' for c in CLOUDS if have[c])}) but meta.json "
            f"lists {sum(want.values()):,} ({per_cloud}): the catalog is incomplete. "
            f"{REPLACE_CATALOG_FIX}")
    key, n = next((k, n) for k, n in sorted(counted.items(), key=str) if listed[k] != n)
    cloud, source, as_of, _ = key
    raise CatalogFileError(
        f"{path / 'offers.csv'}: {n:,} {cloud} offers from {source[:100]!r} dated {as_of} "
        f"but meta.json lists {listed[key]:,}: the catalog is damaged or was edited. "
        f"{REPLACE_CATALOG_FIX}")


def clock_today() -> _dt.date:
    """Today's UTC date by the clock, whatever GPUPLAN_TODAY says (a refresh dates its offers
    so); the latest price date a stored catalog may carry is a day after it."""
    return _dt.datetime.now(_dt.UTC).date()


def _check_date_bounds(path: Path, offers: Sequence[Offer]) -> None:
    latest = clock_today() + LATEST_PRICE_DATE_SLACK
    for i, o in enumerate(offers):
        if EARLIEST_PRICE_DATE <= o.as_of <= latest:
            continue
        why = (f"after today by the clock ({clock_today().isoformat()} UTC): no price is seen "
               "in the future"
               if o.as_of > latest else
               f"before {EARLIEST_PRICE_DATE.year}: no cloud sold GPU hours then")
        raise CatalogFileError(
            f"{path / 'offers.csv'}{_line_of(path / 'offers.csv', i)}: the {o.cloud} offer "
            f"{'/'.join(x for x in o.key[1:] if x)} is dated {o.as_of.isoformat()}, {why}; "
            f"the catalog's dates are damaged or were edited. {REPLACE_CATALOG_FIX}")


def _line_of(path: Path, index: int) -> str:
    """":LINE" of the ``index``-th record of the CSV file ``path`` (counted as
    ``_csvio.read_table`` counts them: empty rows skipped), or "" if it cannot be re-read."""
    from ._csvio import MAX_TABLE_BYTES
    from ._files import read_user_text

    try:
        reader = csv.reader(io.StringIO(read_user_text(path, what="catalog file",
                                                       max_bytes=MAX_TABLE_BYTES)))
        next(reader)  # the header
        rows = (reader.line_num for row in reader if row)
        for n, line in enumerate(rows):
            if n == index:
                return f":{line}"
    except (CatalogFileError, csv.Error, StopIteration):
        pass
    return ""


def _check_dates(path: Path, meta: dict, offers: Sequence[Offer]) -> None:
    _check_date_bounds(path, offers)
    entries = _cloud_entries(meta)
    newest: dict[str, _dt.date] = {}
    oldest: dict[str, _dt.date] = {}
    for o in offers:
        if o.as_of > newest.get(o.cloud, _dt.date.min):
            newest[o.cloud] = o.as_of
        if o.as_of < oldest.get(o.cloud, _dt.date.max):
            oldest[o.cloud] = o.as_of
    where = path / "meta.json"
    for cloud in newest:  # the counts above made sure every such cloud has sources
        entry = entries[cloud]
        for key, want in (("as_of", newest[cloud]), ("oldest_as_of", oldest[cloud])):
            stated = entry.get(key)
            if stated is None and key == "oldest_as_of":
                continue  # optional: the banner and the age use as_of
            if stated != want.isoformat():
                said = "is missing" if stated is None else f"is {stated[:40]!r}"
                raise CatalogFileError(
                    f"{where}: clouds.{cloud}.{key} {said}, but {cloud}'s "
                    f"{'newest' if key == 'as_of' else 'oldest'} offer is dated "
                    f"{want.isoformat()}: the catalog's dates are damaged or were edited. "
                    f"{REPLACE_CATALOG_FIX}")


def _say_new_flags(name: str, before: Sequence[Offer], after: Sequence[Offer]) -> None:
    gained = [(b, a) for b, a in zip(before, after, strict=True)
              if set(a.flags) - set(b.flags)]
    if not gained:
        return
    b, a = gained[0]
    first = (f"{'/'.join(x for x in a.key if x)}: "
             f"{', '.join(sorted(set(a.flags) - set(b.flags)))}")
    warnings.warn(CatalogNotice(
        f"catalog {name[:100]!r}: {len(gained):,} offer{'s' if len(gained) > 1 else ''} "
        f"failed the price checks a refresh runs and {'are' if len(gained) > 1 else 'is'} "
        f"now flagged (first: {first}); plans skip flagged prices. `gpuplan offers --flagged` "
        "lists them with the reasons"), stacklevel=3)


__all__ = ["MAX_DEVICES_PER_MACHINE", "check_stored", "is_pod_slice", "spec_problems"]
