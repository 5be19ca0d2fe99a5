"""A private rate far below the same offer's list price is said (a typo is likelier than a
deal): a $0.000001/h rate for a $55/h p5.48xlarge costed a 47,885 GPU-hour team plan at $0.60
without a word. A real discount, however deep a deal goes, is taken quietly."""

from __future__ import annotations

import datetime as dt
import warnings

import pytest

from catalog import CatalogNotice, load_catalog, parse_overrides


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def _rate(usd: float) -> dict:
    return {"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                        "pricing": "on_demand", "usd_per_hour": usd}]}


def _listed(cat) -> float:
    return next(o.usd_per_hour for o in cat.offers if (o.cloud, o.instance_type, o.region,
                o.pricing) == ("aws", "p5.48xlarge", "us-east-1", "on_demand"))


def _apply(cat, data):
    return cat.with_overrides(parse_overrides(data, source="test.yaml"),
                              dt.date(2026, 12, 1)).offers


def test_a_rate_fifty_times_below_list_is_said_and_still_used(cat):
    with pytest.warns(CatalogNotice) as said:
        offers = _apply(cat, _rate(0.000001))
    (text,) = [str(w.message) for w in said]
    listed = _listed(cat)
    assert text.startswith(f"test.yaml: prices[1]: $1e-06/h for p5.48xlarge us-east-1 "
                           f"on_demand is {listed / 1e-6:,.0f}× below its listed ${listed:,.2f}/h")
    assert text.endswith("If it is a typo (cents for dollars, a per-GPU or monthly figure), "
                         "correct prices[1]")
    assert any(o.usd_per_hour == 1e-6 for o in offers)


@pytest.mark.parametrize("share", [1.0, 0.5, 0.1, 0.021])
def test_a_discount_a_deal_could_give_is_taken_quietly(cat, share):
    with warnings.catch_warnings():
        warnings.simplefilter("error", CatalogNotice)
        _apply(cat, _rate(_listed(cat) * share))
