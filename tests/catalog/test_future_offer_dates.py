"""A stored catalog's offers are dated on days a price was seen (``catalog/_checks.py``), and a
catalog's age is never negative (``catalog/_meta.py``).

Found by a tester: a stored catalog with every AWS offer dated 9999-12-31 (meta.json to match)
was taken by `gpuplan catalog use`, `offers` said "as of 9999-12-31" and `catalog info --json`
gave aws an age of -2,912,108 days; 2030-01-01 gave -1,127, and 0001-01-01 "739,950 days old".
A refresh dates its offers with the clock's UTC day, so the bound is that day (and a day of
slack), not GPUPLAN_TODAY: a day pinned in the past to reproduce a report must not refuse a
catalog refreshed since — it only makes the prices newer than "today", which a note says.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil

import pytest

from catalog import CatalogError, CatalogFileError, _load, _paths, load_catalog, use_catalog

AWS_NEWEST = "2026-01-21"  # the packaged catalog's AWS on-demand date (its newest)
FIX = "To fix: run `gpuplan catalog use packaged`, or `gpuplan catalog refresh`"


def clock_today() -> dt.date:
    return dt.datetime.now(dt.UTC).date()


def _stored_dated(name: str, day: str):
    """A copy of the packaged snapshot whose AWS 2026-01-21 offers are dated ``day``, with
    meta.json rewritten to match (its counts and dates agree, as a careful edit's would)."""
    from catalog._csvio import OFFERS, read_table
    from catalog._meta import cloud_meta

    path = _paths.catalogs_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(_paths.packaged_catalog_dir(), path)
    text = (path / "offers.csv").read_text(encoding="utf-8")
    assert f",{AWS_NEWEST}," in text
    (path / "offers.csv").write_text(text.replace(f",{AWS_NEWEST},", f",{day},"),
                                     encoding="utf-8")
    meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    meta["clouds"]["aws"] = cloud_meta(read_table(path / "offers.csv", OFFERS), "aws")
    (path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    return path


def _refused_line(name: str, day: str, why: str) -> None:
    with pytest.raises(CatalogError) as caught:
        use_catalog(name)
    text = str(caught.value)
    found = re.search(r"offers\.csv:(\d+): the aws offer \S+ is dated " + re.escape(day), text)
    assert found and why in text and "To fix:" in text and "\n" not in text, text
    line = int(found.group(1))  # the line named is the offer's own
    lines = (_paths.catalogs_dir() / name / "offers.csv").read_text().splitlines()
    assert f",{day}," in lines[line - 1]
    # made active behind the loader's back (an edit after `catalog use`): refused on load too
    _paths.active_marker().write_text(name + "\n")
    _load._cached.cache_clear()
    with pytest.raises(CatalogFileError, match=f"is dated {day}.*{re.escape(FIX)}"):
        load_catalog()


@pytest.mark.parametrize("day", ["9999-12-31", (clock_today() + dt.timedelta(days=2)).isoformat()])
def test_offers_dated_after_the_clocks_day_are_refused(day):
    _stored_dated("future", day)
    _refused_line("future", day, f"after today by the clock ({clock_today().isoformat()} UTC)")


@pytest.mark.parametrize("day", ["0001-01-01", "1999-12-31"])
def test_offers_dated_before_2000_are_refused(day):
    _stored_dated("ancient", day)
    _refused_line("ancient", day, "before 2000")


def test_a_day_of_clock_slack_is_allowed():
    """Refreshed on a machine whose clock runs ahead (or just past UTC midnight)."""
    _stored_dated("tomorrow", (clock_today() + dt.timedelta(days=1)).isoformat())
    use_catalog("tomorrow")
    assert load_catalog().name == "tomorrow"


def test_a_pinned_past_today_does_not_refuse_a_catalog_refreshed_since(monkeypatch):
    """GPUPLAN_TODAY reproduces a past day's report; the catalog priced today is real."""
    day = clock_today().isoformat()
    _stored_dated("fresh", day)
    monkeypatch.setenv("GPUPLAN_TODAY", "2024-01-01")
    use_catalog("fresh")
    cat = load_catalog()
    assert cat.as_of("aws") == clock_today()


def test_an_age_is_never_negative_and_a_note_says_why(monkeypatch):
    from catalog._meta import age_in_days, newer_than_today

    pinned = dt.date(2024, 1, 1)
    assert age_in_days(dt.date(2026, 1, 21), pinned) == 0  # was -751
    assert age_in_days(dt.date(2023, 12, 1), pinned) == 31
    assert age_in_days(None, pinned) is None
    dates = {"aws": dt.date(2026, 1, 21), "gcp": dt.date(2023, 6, 1), "azure": None}
    monkeypatch.setenv("GPUPLAN_TODAY", "2024-01-01")
    note = newer_than_today(dates, pinned)
    assert note.startswith("the prices are newer than today (GPUPLAN_TODAY=2024-01-01): "
                           "aws 2026-01-21;") and "0 days" in note and "gcp" not in note
    monkeypatch.delenv("GPUPLAN_TODAY")
    assert "(2024-01-01)" in newer_than_today(dates, pinned)
    assert newer_than_today(dates, dt.date(2026, 12, 1)) is None
