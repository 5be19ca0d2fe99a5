"""An overrides file names instance types and regions as the filters take them (trimmed, any
case where one name matches so): `P5.48XLARGE` / `US-EAST-1` matched no offer and were
refused beside `offers --instance P5.48XLARGE --region US-EAST-1` taking them."""

from __future__ import annotations

import datetime as dt

import pytest

from catalog import OverrideError, load_catalog, parse_overrides


def _priced(entry: dict, kind: str = "prices"):
    cat = load_catalog("packaged")
    return cat.with_overrides(parse_overrides({kind: [entry]}, source="o.yaml"),
                              dt.date(2026, 12, 1))


def test_a_private_rate_in_capitals_replaces_the_catalog_s_offer():
    cat = _priced({"cloud": "aws", "instance_type": "P5.48XLARGE", "region": "US-EAST-1",
                   "pricing": "on_demand", "usd_per_hour": 40.0})
    (o,) = [o for o in cat.offers if (o.instance_type, o.region, o.pricing)
            == ("p5.48xlarge", "us-east-1", "on_demand")]
    assert o.usd_per_hour == 40.0 and "overridden" in o.flags
    assert not [o for o in cat.offers if o.instance_type == "P5.48XLARGE"]


def test_a_discount_in_capitals_applies():
    base = {o.key: o.usd_per_hour for o in load_catalog("packaged").offers}
    cat = _priced({"cloud": "aws", "instance_type": "P5.48XLARGE", "percent": 10},
                  kind="discounts")
    (o,) = [o for o in cat.offers if (o.instance_type, o.region, o.pricing)
            == ("p5.48xlarge", "us-east-1", "on_demand")]
    assert o.usd_per_hour == pytest.approx(base[o.key] * 0.9)


def test_a_name_that_is_none_is_still_refused_with_close_matches():
    with pytest.raises(OverrideError, match="p5.48xlarge"):
        _priced({"cloud": "aws", "instance_type": "p5.48xlargee", "region": "us-east-1",
                 "pricing": "on_demand", "usd_per_hour": 40.0})
