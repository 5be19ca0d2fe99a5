"""A damaged or hand-edited stored catalog is never used silently (``catalog/_checks.py``).

Each test copies the packaged snapshot under GPUPLAN_HOME/catalogs/ (as a user or a partial
copy would), damages it the way the fuzzing report did, and checks that `catalog use` and the
loader refuse it with one clear line, or flag what a refresh would have flagged — on a cached
load as on a parse.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import warnings

import pytest

from catalog import (
    CatalogError,
    CatalogFileError,
    CatalogNotice,
    _cache,
    _install,
    _load,
    _paths,
    _store,
    load_catalog,
    use_catalog,
)
from catalog._checks import MAX_DEVICES_PER_MACHINE, check_stored
from catalog._refresh import check_integrity

FIX = "To fix: run `gpuplan catalog use packaged`, or `gpuplan catalog refresh`"
P5_ON_DEMAND = "aws,p5.48xlarge,us-east-1,on_demand,55.04,"


def _fresh_process():
    _load._cached.cache_clear()
    _load._with_overrides.cache_clear()


def _stored(name="mine"):
    """A copy of the packaged snapshot, stored under ``name`` (not made active)."""
    path = _paths.catalogs_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(_paths.packaged_catalog_dir(), path)
    return path


def _edit(path, f, old, new, count=1):
    text = (path / f).read_text()
    assert text.count(old) >= 1, old
    (path / f).write_text(text.replace(old, new, count))


def _edit_line(path, f, pattern, change):
    """``change`` applied to the one line of ``f`` that matches ``pattern``."""
    lines = (path / f).read_text().splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if re.match(pattern, line)]
    assert len(hits) == 1, (pattern, len(hits))
    lines[hits[0]] = change(lines[hits[0]])
    (path / f).write_text("".join(lines))


def _refused(name, fragment, *, unchanged=True):
    with pytest.raises(CatalogError, match=fragment) as caught:
        use_catalog(name)
    if unchanged:  # read, then refused (a catalog not even complete is not read)
        assert "The active catalog is unchanged. To fix:" in str(caught.value)
    assert _store.active()[0] == "packaged"


def _activate_bypassing_checks(name):
    _paths.active_marker().write_text(name + "\n")
    _fresh_process()


# -- a copy of the packaged snapshot is a valid stored catalog, with the same answers -------------

def test_a_copy_of_the_packaged_snapshot_passes_and_keeps_every_flag():
    path = _stored()
    packaged = load_catalog("packaged")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing newly flagged: no notice
        use_catalog("mine")
    cat = load_catalog()
    assert cat.name == "mine"
    assert cat.offers == packaged.offers and cat.instance_types == packaged.instance_types
    offers = check_stored(path, packaged.meta, packaged.accelerators,
                          packaged.instance_types, packaged.offers)
    assert offers == packaged.offers


# -- finding 1: cut short at a row boundary, or only the header ----------------------------------

def test_offers_cut_at_a_row_boundary_are_refused():
    path = _stored("cut")
    lines = (path / "offers.csv").read_text().splitlines(keepends=True)
    (path / "offers.csv").write_text("".join(lines[:3000]))
    _refused("cut", r"offers.csv: 2,999 offers \(aws 2,999\) but meta.json lists 14,493 "
                    r"\(aws 11,607, gcp 2,599, azure 287\): the catalog is incomplete")
    _activate_bypassing_checks("cut")  # e.g. cut after it was made active
    with pytest.raises(CatalogFileError, match=f"the catalog is incomplete. {re.escape(FIX)}"):
        load_catalog()


def test_a_header_only_offers_file_is_refused():
    path = _stored("hdr")
    header = (path / "offers.csv").read_text().splitlines(keepends=True)[0]
    (path / "offers.csv").write_text(header)
    _refused("hdr", "offers.csv: holds no offers, so the catalog is incomplete")


def test_one_missing_row_is_named_by_its_source():
    path = _stored("minus1")
    _edit_line(path, "offers.csv", re.escape(P5_ON_DEMAND), lambda line: "")
    _refused("minus1", "14,492 offers .aws 11,606, gcp 2,599, azure 287. but meta.json lists "
                       "14,493")
    # the same total, but one row moved from one source to another
    _stored("moved")
    _edit_line(_paths.catalogs_dir() / "moved", "offers.csv", re.escape(P5_ON_DEMAND),
               lambda line: line.replace("instances.vantage.sh data", "hand edit"))
    _refused("moved", "1 aws offers from 'hand edit in tsaol.* dated 2026-01-21 but meta.json "
                      "lists 0: the catalog is damaged or was edited")


# -- finding 2: prices a refresh would flag, specs it would reject -------------------------------

def _offer(cat, key):
    return next(o for o in cat.offers if o.key == key)


@pytest.mark.parametrize("cached", [False, True])
def test_a_hand_edited_absurd_price_is_flagged_and_not_usable(cached):
    path = _stored("bad")
    _edit(path, "offers.csv", P5_ON_DEMAND, "aws,p5.48xlarge,us-east-1,on_demand,0.00001,")
    with pytest.warns(CatalogNotice, match=r"catalog 'bad': 2 offers failed the price checks a "
                                           r"refresh runs and are now flagged \(first: "
                                           r"aws/p5.48xlarge/us-east-1/on_demand: "
                                           r"price_outlier\); plans skip flagged prices"):
        use_catalog("bad")
    if cached:  # a first load writes the cache; the second is served from it
        _fresh_process()
        load_catalog()
        assert _cache.source_key(path, _paths.packaged_catalog_dir()) is not None
    _fresh_process()
    cat = load_catalog()
    if cached:
        assert type(_load._deferred(cat)) is _load._Deferred, "not from the cache"
    o = _offer(cat, ("aws", "p5.48xlarge", "us-east-1", "on_demand"))
    assert "price_outlier" in o.flags and not o.price_usable
    assert "price_outlier: 0.000 $/accelerator-hour" in o.flag_reasons
    usable = cat.offers_priced_as(["on_demand"])
    assert all(p.usd_per_hour > 0.01 for p in usable if p.price_usable)


def test_spot_above_on_demand_and_a_price_above_the_ceiling_are_flagged():
    path = _stored("odd")
    _edit_line(path, "offers.csv", r"aws,p5\.48xlarge,us-east-1,spot,",
               lambda line: re.sub(r"^(aws,p5\.48xlarge,us-east-1,spot,)[^,]*,", r"\g<1>80.00,",
                                   line))
    _edit_line(path, "offers.csv", r"aws,p5\.48xlarge,us-west-2,on_demand,",
               lambda line: re.sub(r"^(aws,p5\.48xlarge,us-west-2,on_demand,)[^,]*,",
                                   r"\g<1>99999,", line))
    with pytest.warns(CatalogNotice, match="now flagged"):
        use_catalog("odd")
    cat = load_catalog()
    spot = next(o for o in cat.offers if o.key[:4] == ("aws", "p5.48xlarge", "us-east-1",
                                                       "spot"))
    assert "spot_not_below_on_demand" in spot.flags and not spot.price_usable
    dear = _offer(cat, ("aws", "p5.48xlarge", "us-west-2", "on_demand"))
    assert "price_above_ceiling" in dear.flags and not dear.price_usable


def test_gpu_memory_far_from_the_datasheet_is_refused():
    path = _stored("mem")
    _edit_line(path, "instance_types.csv", r"aws,p5\.48xlarge,",
               lambda line: line.replace(",8,192,2048,80,", ",8,192,2048,8,", 1))
    _refused("mem", r"instance_types.csv: aws/p5.48xlarge: 8 GiB per GPU disagrees with "
                    r"H100-SXM5-80GB's 80 GiB: the file is damaged or was edited")
    _activate_bypassing_checks("mem")
    with pytest.raises(CatalogFileError, match=re.escape(FIX)):
        load_catalog()


@pytest.mark.parametrize("factor,refused", [(100.0, True), (2.5, True), (1.5, False)])
def test_a_datasheet_figure_far_from_the_packaged_one_is_refused(factor, refused):
    # H100's bf16 peak × 100 passed and priced a llama3-8b plan at $885 instead of $3,899
    import csv

    path = _stored("sheet")
    rows = list(csv.DictReader((path / "accelerators.csv").open()))
    for r in rows:
        if r["name"] == "H100-SXM5-80GB":
            r["tflops_bf16"] = f"{float(r['tflops_bf16']) * factor:g}"
    with (path / "accelerators.csv").open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    if refused:
        _refused("sheet", r"accelerators.csv: H100-SXM5-80GB: tflops_bf16 [\d.]+ against the "
                          r"datasheet's 989.5: the file is damaged or was edited")
    else:  # a corrected datasheet moves a figure by less: still taken
        use_catalog("sheet")
        assert _store.active()[0] == "sheet"


def test_an_impossible_gpu_count_is_refused_here_and_by_a_refresh():
    path = _stored("many")
    _edit_line(path, "instance_types.csv", r"aws,p5\.48xlarge,",
               lambda line: line.replace(",8,192,2048,80,", ",800,192,2048,80,", 1))
    _refused("many", rf"aws/p5.48xlarge: 800 H100-SXM5-80GB in one machine \(machines hold at "
                     rf"most {MAX_DEVICES_PER_MACHINE}\)")
    cat = load_catalog("packaged")
    from dataclasses import replace

    types = tuple(replace(t, gpu_count=800) if t.key == ("aws", "p5.48xlarge") else t
                  for t in cat.instance_types)
    assert any("800 H100-SXM5-80GB in one machine" in p
               for p in check_integrity(cat.accelerators, types, cat.offers))


# -- finding 3: meta.json without its dates ------------------------------------------------------

def test_an_empty_meta_is_refused():
    path = _stored("nometa")
    (path / "meta.json").write_text("{}")
    _refused("nometa", r"meta.json: clouds.aws is missing, so the dates and the count of aws's "
                       r"11,607 offers are unknown: the file is incomplete")


def test_a_meta_without_sources_is_refused():
    path = _stored("nosrc")
    meta = json.loads((path / "meta.json").read_text())
    del meta["clouds"]["gcp"]["sources"]
    (path / "meta.json").write_text(json.dumps(meta))
    _refused("nosrc", "clouds.gcp.sources is missing")


@pytest.mark.parametrize("field", ["as_of", "oldest_as_of"])
def test_an_unreadable_date_in_meta_is_refused(field):
    path = _stored("baddate")
    meta = json.loads((path / "meta.json").read_text())
    meta["clouds"]["azure"][field] = "yesterday"
    (path / "meta.json").write_text(json.dumps(meta))
    _refused("baddate", rf"catalog 'baddate' is incomplete \(meta.json: clouds.azure.{field} "
                        r"should be a date \(YYYY-MM-DD\), found 'yesterday'\). To fix: remove "
                        ".*baddate, or run `gpuplan catalog use packaged`", unchanged=False)


@pytest.mark.parametrize("field", ["as_of", "offers", "source", "approximate"])
def test_a_null_source_field_in_meta_is_refused_not_a_traceback(field):
    # null got past the shape check and was a TypeError in every command
    path = _stored("nullsrc")
    meta = json.loads((path / "meta.json").read_text())
    meta["clouds"]["gcp"]["sources"][0][field] = None
    (path / "meta.json").write_text(json.dumps(meta))
    _refused("nullsrc", rf"meta.json: clouds.gcp.sources\[0\] lacks {field}", unchanged=False)


def test_a_moved_date_cannot_hide_stale_prices():
    path = _stored("fresh")
    meta = json.loads((path / "meta.json").read_text())
    meta["clouds"]["azure"]["as_of"] = "2026-01-21"
    (path / "meta.json").write_text(json.dumps(meta))
    _refused("fresh", r"meta.json: clouds.azure.as_of is '2026-01-21', but azure's newest offer "
                      r"is dated 2024-03-01: the catalog's dates are damaged or were edited")


def test_install_states_the_dates_of_clouds_its_meta_leaves_out():
    cat = load_catalog("packaged")
    offers = tuple(o for o in cat.offers if o.cloud == "azure")
    types = tuple(t for t in cat.instance_types if t.cloud == "azure")
    name, path = _install.install(cat.accelerators, types, offers,
                                  {"name": "refreshed", "clouds": {}}, name="refreshed-x")
    meta = json.loads((path / "meta.json").read_text())
    assert meta["clouds"]["azure"]["as_of"] == "2024-03-01"
    _fresh_process()
    info = load_catalog().info()
    assert info["stale"] is True and info["clouds"]["azure"]["as_of"] == "2024-03-01"


# -- finding 4: a marker that is a dangling or looping symbolic link ----------------------------

@pytest.mark.parametrize("target", ["active", "gone"])
def test_a_marker_that_is_a_broken_link_is_recovered_with_a_notice(target):
    _stored("mine")
    use_catalog("mine")
    marker = _paths.active_marker()
    marker.unlink()
    os.symlink(target, marker)
    _fresh_process()
    with pytest.warns(CatalogNotice, match="the active catalog could not be read; using 'mine' "
                                           "instead .it is now the active catalog"):
        assert load_catalog().name == "mine"
    assert not marker.is_symlink() and marker.read_text() == "mine\n"
    assert not (_paths.catalogs_dir() / "gone").exists()


@pytest.mark.parametrize("target", ["active", "gone"])
def test_catalog_use_replaces_a_broken_link_marker(target):
    _stored("mine")
    marker = _paths.active_marker()
    marker.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, marker)
    assert use_catalog("mine").name == "mine"
    assert not marker.is_symlink() and marker.read_text() == "mine\n"
    assert not (_paths.catalogs_dir() / "gone").exists()
    assert use_catalog("packaged") and marker.read_text() == "packaged\n"


def test_a_read_only_store_says_what_the_user_can_change(monkeypatch):
    _stored("mine")
    real = os.access
    base = _paths.catalogs_dir()
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: (
        False if os.fspath(p) == os.fspath(base) and mode & os.W_OK else real(p, mode, **kw)))
    fix = (rf"read-only for you. To fix: make {re.escape(str(base))} writable \(chmod u\+w "
           r".*\), or set GPUPLAN_HOME to a writable folder$")
    with pytest.raises(CatalogError, match=fix):
        use_catalog("mine")


# -- finding 6b: the active catalog's unreadable CSV gives the catalog's fix ----------------------

def test_a_non_utf8_catalog_file_says_to_use_another_catalog():
    path = _stored("latin1")
    data = (path / "offers.csv").read_bytes()
    (path / "offers.csv").write_bytes(data[:-200] + b"\xe9" + data[-199:])
    _activate_bypassing_checks("latin1")
    with pytest.raises(CatalogFileError, match=r"offers.csv: is not UTF-8 text .*\. "
                                               + re.escape(FIX) + "$"):
        load_catalog()


# -- finding 6d: a private rate for an instance type of another cloud -----------------------------

def test_a_private_rate_on_the_wrong_cloud_names_the_right_one():
    from catalog import OverrideError, parse_overrides

    overrides = parse_overrides({"prices": [{"cloud": "gcp", "instance_type": "p5.48xlarge",
                                             "region": "us-east-1", "pricing": "on_demand",
                                             "usd_per_hour": 5}]}, source="ov.yaml")
    with pytest.raises(OverrideError, match=r"^ov.yaml: prices\[1\]: instance type "
                                            r"'p5.48xlarge' is on aws, not gcp. To fix: set "
                                            r"cloud: aws in prices\[1\]"):
        load_catalog("packaged").with_overrides(overrides)


def test_the_cache_key_covers_the_code_that_checks_a_stored_catalog():
    """A cached catalog passed these checks when it was written: a change to them must not
    meet a cache written by the old ones."""
    names = {p.name for p in _cache._code_files()}
    assert {"_checks.py", "_anomalies.py", "_meta.py", "_names.py", "_load.py"} <= names
    assert all(p.is_file() for p in _cache._code_files())


def test_catalog_info_still_lists_the_catalogs_when_the_active_one_is_damaged(capsys):
    # the command other errors point to for the list failed with the same error
    from planner.cli import main

    path = _stored("cutinfo")
    lines = (path / "offers.csv").read_text().splitlines(keepends=True)
    (path / "offers.csv").write_text("".join(lines[:-5]))
    _activate_bypassing_checks("cutinfo")
    assert main(["catalog", "info"]) == 2
    err = capsys.readouterr().err
    assert "the catalog is incomplete" in err
    assert "The catalogs present: packaged, cutinfo (`gpuplan catalog use NAME`)" in err
