"""Price overrides in layers (an overrides file, then a team file's inline block) follow the
rules of one file: a discount takes list prices only, never a rate an earlier layer set, and a
discount of a scope (a rate for an offer) an earlier layer gave too is refused naming both.
Layered on each other, an aws 10 % in both priced 6.88 × 0.81 and a 10 % cut a held $5.00/h
rate to $4.50/h, without a word."""

from __future__ import annotations

import datetime as dt
import warnings

import pytest

from catalog import CatalogNotice, OverrideError, load_catalog, parse_overrides

TODAY = dt.date(2026, 12, 1)
P5_4X = ("aws", "p5.4xlarge", "us-east-1", "on_demand")  # list $6.88/h
G5 = ("aws", "g5.xlarge", "us-east-1", "on_demand")
RATE = {"cloud": "aws", "instance_type": "p5.4xlarge", "region": "us-east-1",
        "pricing": "on_demand", "usd_per_hour": 5.0}
AWS_10 = {"cloud": "aws", "percent": 10}


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def _layers(cat, *layers):
    """``cat`` with each (source, data) applied in turn, as `report` applies --overrides (or
    GPUPLAN_OVERRIDES) and then the team file's inline block."""
    for source, data in layers:
        cat = cat.with_overrides(parse_overrides(data, source=source), TODAY)
    return cat


def _price(cat, key=P5_4X) -> float:
    return next(o.usd_per_hour for o in cat.offers if o.key == key)


def test_one_discount_in_two_layers_is_refused_naming_both(cat):
    assert _price(cat) == pytest.approx(6.88)
    with pytest.raises(OverrideError) as err:
        _layers(cat, ("ov.yaml", {"discounts": [AWS_10]}),
                ("team.yaml (overrides)", {"discounts": [AWS_10]}))
    assert str(err.value) == (
        "team.yaml (overrides): discounts[1]: the same scope (cloud aws) as ov.yaml: "
        "discounts[1], so which percent applies is ambiguous. To fix: keep one of them: remove "
        "discounts[1] from team.yaml (overrides), or discounts[1] from ov.yaml.")


def test_same_scope_other_percent_and_entry_index_named(cat):
    with pytest.raises(OverrideError, match=r"^team\.yaml \(overrides\): discounts\[2\]: the "
                       r"same scope \(cloud aws, instance_type p5\.4xlarge\) as ov\.yaml: "
                       r"discounts\[1\], so which percent"):
        _layers(cat, ("ov.yaml", {"discounts": [{"instance_type": "p5.4xlarge", "cloud": "aws",
                                                  "percent": 20}]}),
                ("team.yaml (overrides)", {"discounts": [
                    {"cloud": "gcp", "percent": 5},
                    {"cloud": "aws", "instance_type": "P5.4XLARGE", "percent": 25}]}))


def test_a_later_discount_leaves_an_earlier_rate_alone(cat):
    """A rate is a final price: as one file with both (5.0), not 5.0 × 0.9."""
    one_file = _layers(cat, ("one.yaml", {"prices": [RATE], "discounts": [AWS_10]}))
    layered = _layers(cat, ("ov.yaml", {"prices": [RATE]}),
                      ("team.yaml (overrides)", {"discounts": [AWS_10]}))
    assert _price(one_file) == _price(layered) == 5.0
    assert _price(layered, G5) == pytest.approx(_price(cat, G5) * 0.9)  # list prices: once
    offer = next(o for o in layered.offers if o.key == P5_4X)
    assert offer.source == "overrides: ov.yaml prices[1]"
    assert layered.overrides_path == "ov.yaml; team.yaml (overrides)"


def test_a_later_rate_replaces_an_earlier_discount(cat):
    layered = _layers(cat, ("ov.yaml", {"discounts": [AWS_10]}),
                      ("team.yaml (overrides)", {"prices": [RATE]}))
    assert _price(layered) == 5.0
    assert _price(layered, G5) == pytest.approx(_price(cat, G5) * 0.9)


def test_discounts_of_two_layers_take_the_list_price_most_specific_first(cat):
    """An aws 10 % and a p5.4xlarge 25 %, in either order: 25 % off list (5.16), never
    10 % then 25 % (4.644); every other aws offer 10 % off list."""
    general = ("ov.yaml", {"discounts": [AWS_10]})
    specific = ("team.yaml (overrides)", {"discounts": [
        {"cloud": "aws", "instance_type": "p5.4xlarge", "percent": 25}]})
    for layers in ((general, specific), (specific, general)):
        layered = _layers(cat, *layers)
        assert _price(layered) == pytest.approx(6.88 * 0.75)
        assert _price(layered, G5) == pytest.approx(_price(cat, G5) * 0.9)
        assert "team.yaml (overrides) discounts[1]" in next(
            o.source for o in layered.offers if o.key == P5_4X)


def test_one_rate_in_two_layers_is_refused(cat):
    with pytest.raises(OverrideError) as err:
        _layers(cat, ("ov.yaml", {"prices": [RATE]}),
                ("team.yaml (overrides)", {"prices": [{**RATE, "usd_per_hour": 4.0}]}))
    assert str(err.value) == (
        "team.yaml (overrides): prices[1]: the same offer (aws p5.4xlarge us-east-1 on_demand) "
        "as ov.yaml: prices[1], so which price applies is ambiguous. To fix: keep one of them: "
        "remove prices[1] from team.yaml (overrides), or prices[1] from ov.yaml.")


def test_three_layers_check_against_every_earlier_one(cat):
    with pytest.raises(OverrideError, match=r"^c\.yaml: discounts\[1\]: .* as a\.yaml: "
                                            r"discounts\[1\]"):
        _layers(cat, ("a.yaml", {"discounts": [AWS_10]}), ("b.yaml", {"prices": [RATE]}),
                ("c.yaml", {"discounts": [AWS_10]}))


def test_twin_in_one_file_spelt_in_another_case_is_refused(cat):
    """Within one file P5.4XLARGE and p5.4xlarge name one scope (they match as the filters
    do), so the second is refused as an exact twin is; it silently lost to the first."""
    with pytest.raises(OverrideError, match=r"^one\.yaml: discounts\[2\]: the same scope as "
                                            r"discounts\[1\], so which percent applies"):
        _layers(cat, ("one.yaml", {"discounts": [
            {"cloud": "aws", "instance_type": "P5.4XLARGE", "percent": 25},
            {"cloud": "aws", "instance_type": "p5.4xlarge", "percent": 20}]}))


def test_an_earlier_layers_notes_are_said_once(cat):
    """A rate far below list is said when its layer is applied, not again with every later one."""
    cheap = {**RATE, "usd_per_hour": 0.01}
    with pytest.warns(CatalogNotice, match="below its listed"):
        first = _layers(cat, ("ov.yaml", {"prices": [cheap]}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        layered = first.with_overrides(parse_overrides(
            {"discounts": [AWS_10]}, source="team.yaml (overrides)"), TODAY)
    assert _price(layered) == 0.01
