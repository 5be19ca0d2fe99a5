"""Overrides sweep: `catalog info --overrides` counts what the file priced under a source of
its own, a reserved rate in a class the catalog does not sell the term in is noted like the
other rates that add an offer, and an entry listed twice is said to be listed twice (not
"ambiguous": both say the same)."""

from __future__ import annotations

import json
import warnings

import pytest

from catalog import CatalogNotice, OverrideError, load_catalog, parse_overrides
from planner.cli import main

P5 = {"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}
UNSOLD_CLASS = {**P5, "pricing": "reserved_1y", "offering_class": "standard",
                "upfront": "none", "usd_per_hour": 35}


def _info(capsys, tmp_path, text: str) -> dict:
    path = tmp_path / "ov.yaml"
    path.write_text(text)
    assert main(["catalog", "info", "--json", "--overrides", str(path)]) == 0
    return json.loads(capsys.readouterr().out)


def test_catalog_info_counts_overridden_offers_under_the_overrides(capsys, tmp_path):
    plain = _info(capsys, tmp_path, "discounts:\n  - {cloud: azure, percent: 1}\n")
    listed = {s["source"]: s["offers"] for s in plain["clouds"]["aws"]["sources"]}
    info = _info(capsys, tmp_path, "discounts:\n  - {cloud: aws, pricing: on_demand, "
                 "percent: 10}\nprices:\n  - {cloud: aws, instance_type: p5.48xlarge, "
                 "region: us-east-1, pricing: spot, usd_per_hour: 20}\n")
    aws = info["clouds"]["aws"]
    sources = {s["source"]: s for s in aws["sources"]}
    ours = sources[f"overrides: {tmp_path / 'ov.yaml'}"]
    on_demand = sum(o.cloud == "aws" and o.pricing == "on_demand" and o.usd_per_hour is not None
                    for o in load_catalog("packaged").offers)
    assert ours["offers"] == on_demand + 1  # every on-demand price, and the spot rate
    assert ours["as_of"] == "2026-12-01" and ours["approximate"] is False
    vantage = "instances.vantage.sh data in tsaol/aws-gpu data/all_gpu_instances.js@7412fd2"
    assert listed[vantage] == 1895 and sources[vantage]["offers"] < 1895
    assert sum(s["offers"] for s in aws["sources"]) == aws["offers"]
    # a cloud the file leaves alone keeps its sources as they were
    assert info["clouds"]["gcp"]["sources"] == plain["clouds"]["gcp"]["sources"]


def test_the_sources_table_names_the_overrides_row(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    path = tmp_path / "ov.yaml"
    path.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                    "pricing: spot, usd_per_hour: 20}\n")
    assert main(["catalog", "info", "--overrides", str(path)]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["aws", "1", "2026-12-01", "overrides:", str(path)] in rows


def test_a_reserved_class_the_term_is_not_sold_in_is_noted():
    cat = load_catalog("packaged")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = cat.with_overrides(parse_overrides({"prices": [UNSOLD_CLASS]}, source="ov.yaml"))
    said = [str(w.message) for w in caught if issubclass(w.category, CatalogNotice)]
    assert said == [
        "ov.yaml: prices[1]: the catalog sells p5.48xlarge us-east-1 reserved_1y as "
        "convertible/all, convertible/none, convertible/partial (offering_class/upfront), not "
        "standard/none: your rate adds it as a new offer. If it is a typo, correct prices[1]"]
    assert [n.text for n in out.override_notes] == said


def test_a_reserved_class_the_catalog_sells_is_replaced_without_a_note():
    cat = load_catalog("packaged")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cat.with_overrides(parse_overrides({"prices": [
            {**UNSOLD_CLASS, "offering_class": "convertible", "usd_per_hour": 38}]},
            source="ov.yaml"))
    assert not [w for w in caught if issubclass(w.category, CatalogNotice)]


def test_the_cli_notes_the_unsold_class(capsys, tmp_path):
    path = tmp_path / "ov.yaml"
    path.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                    "pricing: reserved_1y, offering_class: standard, upfront: none, "
                    "usd_per_hour: 35}\n")
    assert main(["offers", "--overrides", str(path), "--instance", "p5.48xlarge",
                 "--limit", "1"]) == 0
    assert "not standard/none: your rate adds it as a new offer" in " ".join(
        capsys.readouterr().err.split())


@pytest.mark.parametrize("key, entry, what", [
    ("prices", {**P5, "pricing": "spot", "usd_per_hour": 20}, "offer and usd_per_hour"),
    ("discounts", {"cloud": "aws", "percent": 5}, "scope and percent"),
])
def test_an_entry_listed_twice_is_said_to_be(key, entry, what):
    with pytest.raises(OverrideError) as err:
        parse_overrides({key: [entry, dict(entry)]}, source="ov.yaml")
    assert str(err.value) == (
        f"ov.yaml: {key}[2]: the same {what} as {key}[1]: listed twice. To fix: remove "
        f"{key}[2], or correct it if it was meant for another {what.split()[0]}")
    assert "ambiguous" not in str(err.value)


def test_two_prices_for_one_offer_are_still_ambiguous():
    with pytest.raises(OverrideError, match="so which price applies is ambiguous"):
        parse_overrides({"prices": [{**P5, "pricing": "spot", "usd_per_hour": 20},
                                    {**P5, "pricing": "spot", "usd_per_hour": 21}]},
                        source="ov.yaml")


def test_a_copy_spelt_in_another_case_is_listed_twice_too():
    cat = load_catalog("packaged")
    rate = {**P5, "pricing": "spot", "usd_per_hour": 20}
    with pytest.raises(OverrideError) as err:
        cat.with_overrides(parse_overrides({"prices": [rate, {**rate, "instance_type":
                                                              "P5.48XLARGE"}]},
                                           source="ov.yaml"))
    assert str(err.value) == (
        "ov.yaml: prices[2]: the same offer (aws p5.48xlarge us-east-1 spot) as prices[1], at "
        "the same value: listed twice. To fix: remove prices[2]")
