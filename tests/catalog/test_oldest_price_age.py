"""A catalog's age is that of its oldest price: a refresh keeps the prices it did not fetch
with their old dates, and the age counted from each cloud's newest date called such a catalog
"1 day old", with no stale warning (catalog audit, 2026-12-06)."""

from __future__ import annotations

import datetime as dt

from catalog import Catalog, load_catalog


def _refreshed_in_part(cat: Catalog) -> Catalog:
    clouds = {c: {**entry, "as_of": "2026-11-30"} for c, entry in cat.meta["clouds"].items()}
    clouds["gcp"]["oldest_as_of"] = "2025-01-01"  # its TPU rows were not fetched
    for c in ("aws", "azure"):
        clouds[c]["oldest_as_of"] = "2026-11-30"
    return Catalog(name=cat.name, path=cat.path, meta={**cat.meta, "clouds": clouds},
                   accelerators=cat.accelerators, instance_types=cat.instance_types,
                   offers=cat.offers)


def test_the_age_is_the_oldest_prices():
    cat = _refreshed_in_part(load_catalog("packaged"))
    today = dt.date(2026, 12, 1)
    assert cat.oldest_as_of() == dt.date(2025, 1, 1)
    info = cat.info(today=today, include_store=False)
    assert info["age_days"] == (today - dt.date(2025, 1, 1)).days and info["stale"]
    assert "the oldest prices are 699 days old" in info["warning"]


def test_a_cloud_without_an_oldest_date_counts_its_newest():
    cat = load_catalog("packaged")
    clouds = {c: {k: v for k, v in e.items() if k != "oldest_as_of"}
              for c, e in cat.meta["clouds"].items()}
    bare = Catalog(name=cat.name, path=cat.path, meta={**cat.meta, "clouds": clouds},
                   accelerators=cat.accelerators, instance_types=cat.instance_types,
                   offers=cat.offers)
    assert bare.oldest_as_of() == min(bare.as_of(c) for c in clouds if bare.as_of(c))


def test_an_oldest_date_that_is_a_guess_says_so(capsys):
    """`catalog info` showed the oldest dates without the "~" its "as of" column gives a
    guessed date (AWS 2024-12-31 and GCP 2025-01-01 are both publication-date guesses)."""
    from planner.cli import main

    info = load_catalog("packaged").info(include_store=False)["clouds"]
    assert info["aws"]["oldest_as_of_approximate"] and not info["aws"]["as_of_approximate"]
    assert main(["catalog", "info"]) == 0
    aws = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("aws "))
    assert aws.split()[-2:] == ["2026-01-21", f"~{info['aws']['oldest_as_of']}"], aws
