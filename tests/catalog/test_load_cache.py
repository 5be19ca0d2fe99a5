"""The per-user cache of parsed catalogs (``catalog/_cache.py``): it gives back exactly what
parsing gives, and anything odd about it — damaged, forged, for other content, in a directory
others may write, unwritable, turned off — means parsing the files, never an error.

Every test points GPUPLAN_CACHE_DIR at its own temporary folder and loads a small catalog (the
packaged specs, 300 offers) stored under GPUPLAN_HOME, through ``load_catalog`` as a command
does."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import stat

import pytest

import catalog
from catalog import _cache, _load
from catalog._csvio import OFFERS, read_table
from catalog._meta import cloud_meta
from catalog._paths import catalogs_dir, packaged_catalog_dir

NAME = "cachetest"
OFFER_ROWS = 300
PARSE = _load.read_catalog_dir  # the parser itself, not the counting stand-in below


@pytest.fixture
def cache(tmp_path, monkeypatch):
    where = tmp_path / "cache"
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(where))
    monkeypatch.delenv("GPUPLAN_NO_CACHE", raising=False)
    return where


@pytest.fixture
def stored():
    """A small complete catalog under GPUPLAN_HOME/catalogs/NAME (the test's own home)."""
    d = catalogs_dir() / NAME
    d.mkdir(parents=True)
    for f in ("accelerators.csv", "instance_types.csv", "meta.json"):
        shutil.copy(packaged_catalog_dir() / f, d / f)
    lines = (packaged_catalog_dir() / "offers.csv").read_text().splitlines(keepends=True)
    (d / "offers.csv").write_text("".join(lines[:OFFER_ROWS + 1]))
    # meta.json states the dates and counts of these 300 offers (the loader compares them)
    offers = read_table(d / "offers.csv", OFFERS)
    meta = json.loads((d / "meta.json").read_text())
    meta["clouds"] = {c: cloud_meta(offers, c) for c in sorted({o.cloud for o in offers})}
    (d / "meta.json").write_text(json.dumps(meta))
    return d


@pytest.fixture
def parses(monkeypatch):
    """How many times the files are parsed (``read_catalog_dir``), cache misses included."""
    count = []

    def counting(path, name):
        count.append(name)
        return PARSE(path, name)

    monkeypatch.setattr(_load, "read_catalog_dir", counting)
    return count


def load(name=NAME) -> catalog.Catalog:
    """``load_catalog`` as a fresh process sees it (the in-process memo cleared)."""
    _load._cached.cache_clear()
    _load._with_overrides.cache_clear()
    return catalog.load_catalog(name)


def fresh(path, name=NAME) -> catalog.Catalog:
    return PARSE(path, name)


def same(a: catalog.Catalog, b: catalog.Catalog) -> None:
    assert a == b
    assert (a.name, a.path, a.meta) == (b.name, b.path, b.meta)
    assert a.accelerators == b.accelerators and a.instance_types == b.instance_types
    assert a.offers == b.offers and type(a.offers) is tuple
    assert [type(o.as_of) for o in a.offers] == [type(o.as_of) for o in b.offers]
    assert a.instance_type("p5.48xlarge").accelerator == "H100-SXM5-80GB"
    assert a.accelerator("h100").name == b.accelerator("h100").name


def cache_files(where) -> list:
    return sorted(p.name for p in where.glob("catalog-*.bin")) if where.exists() else []


def test_the_cached_catalog_equals_the_parsed_one(cache, stored, parses):
    first = load()
    assert parses == [NAME] and len(cache_files(cache)) == 1
    second = load()
    assert parses == [NAME], "the second load must come from the cache"
    same(second, fresh(stored))
    same(second, first)
    # the cache and its folder are the user's alone
    assert stat.S_IMODE(os.stat(cache).st_mode) & 0o077 == 0
    assert stat.S_IMODE(os.stat(_cache.cache_file(stored)).st_mode) & 0o077 == 0


def test_the_packaged_catalog_round_trips(cache, parses):
    first = load("packaged")
    second = load("packaged")
    assert parses == ["packaged"]
    same(second, first)
    assert len(second.offers) > 10_000


@pytest.mark.parametrize("damage", ["garbage", "truncated", "flipped byte", "empty",
                                    "other key"])
def test_a_damaged_cache_is_ignored_and_rebuilt(cache, stored, parses, damage):
    load()
    file = _cache.cache_file(stored)
    data = file.read_bytes()
    if damage == "garbage":
        data = os.urandom(len(data))
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "flipped byte":
        data = data[:-100] + bytes([data[-100] ^ 0x01]) + data[-99:]
    elif damage == "empty":
        data = b""
    else:  # a valid file, but made for other content
        head = len(_cache.FORMAT)
        data = data[:head] + bytes(32) + data[head + 32:]
    file.write_bytes(data)
    os.chmod(file, 0o600)
    same(load(), fresh(stored))
    assert parses == [NAME, NAME]
    same(load(), fresh(stored))  # rebuilt: the next load reads the cache again
    assert parses == [NAME, NAME]


def test_a_cache_for_other_file_contents_is_not_used(cache, stored, parses):
    before = load()
    offers = stored / "offers.csv"
    st = os.stat(offers)
    text = offers.read_text()
    price = f",{before.offers[0].usd_per_hour!r},"
    assert price in text
    # same size and modification time: only the content tells the files apart
    new_price = price[:-2] + ("1" if price[-2] != "1" else "2") + ","  # last digit changed
    changed = text.replace(price, new_price, 1)
    assert len(changed) == len(text)
    offers.write_text(changed)
    os.utime(offers, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = load()
    assert parses == [NAME, NAME]
    assert after.offers[0].usd_per_hour == float(new_price.strip(","))
    same(after, fresh(stored))


def test_an_edited_meta_file_is_not_served_from_the_cache(cache, stored, parses):
    load()
    meta = stored / "meta.json"
    meta.write_text(meta.read_text().replace("{", '{"edited": true, ', 1))
    assert load().meta["edited"] is True
    assert parses == [NAME, NAME]


def test_a_cache_others_may_write_is_not_read(cache, stored, parses):
    load()
    file = _cache.cache_file(stored)
    os.chmod(file, 0o666)
    same(load(), fresh(stored))
    assert parses == [NAME, NAME]


def test_a_cache_folder_others_may_write_is_neither_read_nor_written(cache, stored, parses):
    cache.mkdir()
    os.chmod(cache, 0o777)
    load()
    load()
    assert parses == [NAME, NAME]
    assert cache_files(cache) == []


def test_a_symbolic_link_in_place_of_the_cache_is_not_followed(cache, stored, parses, tmp_path):
    load()
    file = _cache.cache_file(stored)
    elsewhere = tmp_path / "elsewhere.bin"
    file.rename(elsewhere)
    file.symlink_to(elsewhere)
    same(load(), fresh(stored))
    assert parses == [NAME, NAME]


def test_a_forged_cache_runs_no_code(cache, stored, parses, tmp_path):
    load()
    key = _cache.source_key(stored, packaged_catalog_dir())
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.mkdir, (str(marker),))

    file = _cache.cache_file(stored)
    file.write_bytes(_cache._frame(key, stored, pickle.dumps((Payload(), 1, 2, b""))))
    same(load(), fresh(stored))
    assert not marker.exists()
    assert parses == [NAME, NAME]


def with_damaged_offers(stored, offers_blob: bytes) -> catalog.Catalog:
    """The stored catalog as parsed, after its cache was rewritten with good accelerators and
    instance types but ``offers_blob`` for the offers."""
    load()
    key = _cache.source_key(stored, packaged_catalog_dir())
    good = fresh(stored)
    memo: dict = {}
    tables = tuple(_cache._columns(t, type(t[0]), memo)
                   for t in (good.accelerators, good.instance_types))
    payload = pickle.dumps((good.meta, *tables, offers_blob))
    _cache.cache_file(stored).write_bytes(_cache._frame(key, stored, payload))
    return good


def test_offers_a_damaged_cache_cannot_build_come_from_the_files(cache, stored, parses):
    """The offers are built on first use; if their part of the cache fails then, the files
    are parsed (the digest makes this a programming error, not a disk error)."""
    good = with_damaged_offers(stored, pickle.dumps(("Offer", ("cloud",), 1,
                                                     (("plain", ("aws",)),))))
    cat = load()
    assert parses == [NAME]  # accelerators and instance types from the cache
    assert cat.offers == good.offers
    assert parses == [NAME, NAME]


@pytest.mark.parametrize("pricing", [("spot",), ("on_demand", "spot"), ("reserved_3y",),
                                     ("capacity_block", "on_demand")])
def test_offers_of_some_pricing_models_and_regions_come_from_the_cache_as_from_the_files(
        cache, parses, pricing):
    """A plan builds only its pricing models' offers and reads the regions from one column
    (issue #19); both equal what the parsed files give, in catalog order."""
    load("packaged")
    cat = load("packaged")  # from the cache, offers not built
    parsed = fresh(packaged_catalog_dir(), "packaged")
    assert parses == ["packaged"]
    assert cat.regions() == parsed.regions()
    assert cat.regions("gcp") == parsed.regions("gcp")
    assert cat.regions(kinds=("local_zone",)) == parsed.regions(kinds=("local_zone",))
    assert _load._deferred(cat) is not None, "regions() must not build the offers"
    subset = cat.offers_priced_as(pricing)
    assert subset == tuple(o for o in parsed.offers if o.pricing in pricing) and subset
    assert cat.offers_priced_as(reversed(pricing)) is subset  # built once per set
    assert _load._deferred(cat) is not None
    assert cat.offers == parsed.offers  # the whole tuple, built on its first use
    assert cat.offers_priced_as(pricing) == subset
    assert parsed.offers_priced_as(pricing) == subset  # a parsed catalog filters its tuple


@pytest.mark.parametrize("pricing, gpus, priced_only", [
    (None, None, False), (("spot",), None, True), (("on_demand", "spot"), ("H100", "A100-80GB"),
                                                   True),
    (None, ("L4",), False), (("reserved_1y",), ("H100",), True), (("spot",), ("no-such",), True)])
def test_offers_where_builds_only_its_offers_from_the_cache_as_the_files_give_them(
        cache, parses, monkeypatch, pricing, gpus, priced_only):
    """A plan builds only the offers of the GPUs it can time (issue #19: a seventh of the
    packaged catalog); they equal the parsed files' in catalog order, and an offer two calls
    both want is built once."""
    load("packaged")
    cat = load("packaged")
    parsed = fresh(packaged_catalog_dir(), "packaged")
    built = []
    real = _cache.LazyOffers.build_rows
    monkeypatch.setattr(_cache.LazyOffers, "build_rows",
                        lambda self, rows: built.extend(rows) or real(self, rows))
    types = None if gpus is None else {t.key for t in parsed.instance_types
                                       if t.accelerator in gpus}
    expect = tuple(o for o in parsed.offers
                   if (pricing is None or o.pricing in pricing)
                   and (types is None or (o.cloud, o.instance_type) in types)
                   and not (priced_only and o.usd_per_hour is None))
    got = cat.offers_where(pricing=pricing, types=types, priced_only=priced_only)
    assert got == expect
    assert parsed.offers_where(pricing=pricing, types=types, priced_only=priced_only) == expect
    assert len(built) == len(expect) == len(set(built))
    again = cat.offers_where(pricing=pricing, types=types)  # priced or not: a superset
    assert len(built) == len(again)  # only the unpriced ones were new
    kept = set(got)  # once: built per offer, it hashed 14,000 offers 14,000 times
    assert all(a is b for a, b in zip(got, (o for o in again if o in kept), strict=True))
    assert _load._deferred(cat) is not None, "offers_where must not build every offer"


def test_offer_places_come_from_the_columns_as_the_files_give_them(cache, parses):
    """A quota file's check (each rule must match some offer) built all 14,000 offers."""
    from planner.search import parse_quotas

    load("packaged")
    cat = load("packaged")
    parsed = fresh(packaged_catalog_dir(), "packaged")
    places = cat.offer_places()
    assert places == parsed.offer_places() == {(o.cloud, o.region, o.instance_type)
                                               for o in parsed.offers}
    parse_quotas({"quotas": [{"cloud": "aws", "gpus": 64}, {"accelerator": "H100",
                                                           "gpus": 8}]}, cat)
    assert _load._deferred(cat) is not None, "the quota check built the offers"


def test_select_offers_builds_only_the_offers_its_filters_keep(cache, parses, monkeypatch):
    """Filters the instance type decides (cloud, GPU, name, GPU count) and the pricing models
    choose the offers built from the cache: `plan --gpu H100` does not build 14,000."""
    load("packaged")
    cat = load("packaged")
    built = []
    real = _cache.LazyOffers.build_rows
    monkeypatch.setattr(_cache.LazyOffers, "build_rows",
                        lambda self, rows: built.extend(rows) or real(self, rows))
    rows = catalog.select_offers(cat, gpus=["H100"], clouds=["aws", "gcp"], pricing=["spot"],
                                 include_unpriced=False)
    parsed = fresh(packaged_catalog_dir(), "packaged")
    assert [r.offer for r in rows] == [r.offer for r in catalog.select_offers(
        parsed, gpus=["H100"], clouds=["aws", "gcp"], pricing=["spot"], include_unpriced=False)]
    assert rows and len(built) == len(rows)


def test_offers_of_some_pricing_models_a_damaged_cache_cannot_build_come_from_the_files(
        cache, stored, parses):
    good = with_damaged_offers(stored, b"not a pickle")
    cat = load()
    assert parses == [NAME]
    assert cat.regions() == good.regions()
    assert cat.offers_priced_as(["spot"]) == tuple(o for o in good.offers
                                                   if o.pricing == "spot")
    assert cat.offers == good.offers
    assert parses == [NAME, NAME], "the files are parsed once for every fallback"


@pytest.mark.parametrize("how", ["under a file", "a file"])
def test_an_unusable_cache_location_does_not_fail_the_load(tmp_path, monkeypatch, stored,
                                                           parses, how):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("x")
    where = blocker / "cache" if how == "under a file" else blocker
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(where))
    same(load(), fresh(stored))
    same(load(), fresh(stored))
    assert parses == [NAME, NAME]
    assert blocker.read_text() == "x"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root may write a read-only folder")
def test_a_read_only_cache_folder_does_not_fail_the_load(cache, stored, parses):
    cache.mkdir(mode=0o500)
    try:
        same(load(), fresh(stored))
        assert cache_files(cache) == []
    finally:
        os.chmod(cache, 0o700)


def test_gpuplan_no_cache_turns_it_off(cache, stored, parses, monkeypatch):
    load()  # a valid cache exists …
    monkeypatch.setenv("GPUPLAN_NO_CACHE", "1")
    same(load(), fresh(stored))  # … and is not read
    assert parses == [NAME, NAME]
    shutil.rmtree(cache)
    load()
    assert cache_files(cache) == []  # nor written
    monkeypatch.setenv("GPUPLAN_NO_CACHE", "0")  # "0" is "not turned off"
    load()
    assert len(cache_files(cache)) == 1


def test_the_default_location_follows_gpuplan_home_then_xdg(monkeypatch, tmp_path):
    monkeypatch.delenv("GPUPLAN_CACHE_DIR", raising=False)
    monkeypatch.setenv("GPUPLAN_HOME", str(tmp_path / "home"))
    assert _cache.cache_dir() == tmp_path / "home" / "cache"
    monkeypatch.delenv("GPUPLAN_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir() == tmp_path / "xdg" / "gpuplan"
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "mine"))
    assert _cache.cache_dir() == tmp_path / "mine"


def test_files_of_removed_catalogs_are_pruned_when_a_cache_is_written(cache, stored, parses,
                                                                     tmp_path):
    load()
    gone = tmp_path / "gone"
    shutil.copytree(stored, gone)
    key = _cache.source_key(gone, packaged_catalog_dir())
    cat = fresh(gone, "gone")
    _cache.store(gone, key, cat.meta, (cat.accelerators, cat.instance_types, cat.offers))
    assert len(cache_files(cache)) == 2
    shutil.rmtree(gone)
    (stored / "meta.json").write_text((stored / "meta.json").read_text() + "\n")
    load()  # content changed: the cache is rewritten, and the orphan goes
    assert cache_files(cache) == [_cache.cache_file(stored).name]


def test_records_rebuilds_any_selection_of_rows():
    offers = catalog.load_catalog("packaged").offers[:5]
    table = _cache._columns(offers, type(offers[0]), {})
    rebuild = _cache._records
    assert rebuild(table, type(offers[0])) == offers
    for rows in ([], [3], [4, 0, 2]):
        assert rebuild(table, type(offers[0]), rows) == tuple(offers[i] for i in rows)
    with pytest.raises(ValueError):
        rebuild(table, type(offers[0]), [5])
