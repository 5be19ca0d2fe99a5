"""SKU prices gpuplan must not use as they come (hostile sweep, 2026-12): EUR prices stored as
dollars; a negative price reported as "GPU SKU not found"; and two SKUs pricing the same thing
differently resolved by order (an A3's GPU from 9.80 to 0.98 $/h, the machine 43.07 → 20.23),
where docs/refresh.md says duplicate records fail the refresh. The fixture pages, changed."""

from __future__ import annotations

import copy
import json

import pytest
from sources_fixtures import load_fixture
from werkzeug.wrappers import Response

from catalog.sources import GcpSource, RefreshError
from catalog.sources._gcp_skus import SkuPrices, unit_price

SKUS = "/v1/services/6F81-5844-456A/skus"
TPU_SKUS = "/v1/services/E000-3F24-B8AA/skus"
PAGES = {"": "gcp_skus_page1.json", "page-2": "gcp_skus_page2.json",
         "page-3": "gcp_skus_page3.json"}
H100_ON_DEMAND = "H100-0001-0001"  # "Nvidia H100 80GB GPU running in Americas", OnDemand
A3 = ("a3-highgpu-8g", "us-central1", "on_demand")


def _unit_price(sku: dict) -> dict:
    return sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][-1]["unitPrice"]


def _fetch(packaged, server, change=lambda skus: skus):
    """An API-key refresh of us-central1 from the fixture pages, each page's SKUs passed
    through ``change`` (a copy) first."""
    def compute(request):
        page = load_fixture(PAGES[request.args.get("pageToken", "")])
        page["skus"] = change(copy.deepcopy(page["skus"]))
        return Response(json.dumps(page), content_type="application/json")

    server.expect_request(SKUS).respond_with_handler(compute)
    server.expect_request(TPU_SKUS).respond_with_json(load_fixture("gcp_tpu_skus.json"))
    data = GcpSource(reference=packaged, api_key="k",
                     billing_url=server.url_for("/").rstrip("/")).fetch(["us-central1"], None)
    return {(o.instance_type, o.region, o.pricing): o for o in data.offers}, data.warnings


def _set(sku_id, **fields):
    def change(skus):
        for sku in skus:
            if sku["skuId"] == sku_id:
                _unit_price(sku).update(fields)
        return skus
    return change


def test_a_price_in_another_currency_is_left_out_with_a_warning(server, packaged):
    offers, warnings = _fetch(packaged, server, _set(H100_ON_DEMAND, currencyCode="EUR",
                                                     units="100"))
    assert offers[A3].usd_per_hour is None and offers[A3].flags == ("price_unknown",)
    assert any("1 SKU left out (price in EUR, not USD): H100-0001-0001" in w for w in warnings)
    assert "gcp a3-highgpu-8g us-central1 on_demand: GPU SKU left out (price in EUR, not USD)" \
        in warnings
    # the other pricing models of the same machine keep their USD prices
    assert offers[("a3-highgpu-8g", "us-central1", "spot")].usd_per_hour == pytest.approx(
        0.01 * 208 + 0.0009 * 1872 + 2.9388 * 8, abs=1e-5)


def test_a_list_with_no_usd_price_at_all_fails(server, packaged):
    def all_eur(skus):
        for sku in skus:
            _unit_price(sku)["currencyCode"] = "EUR"
        return skus

    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server, all_eur)
    message = str(info.value)
    assert "none of the billing API's 24 SKUs for services/6F81-5844-456A has a price" in message
    assert "price in EUR, not USD" in message and "To fix:" in message


def test_a_negative_price_is_named_not_reported_as_a_missing_sku(server, packaged):
    offers, warnings = _fetch(packaged, server, _set(H100_ON_DEMAND, units="-9",
                                                     nanos=-796100000))
    assert offers[A3].usd_per_hour is None and offers[A3].flags == ("price_unknown",)
    assert any("1 SKU left out (negative price): H100-0001-0001" in w for w in warnings)
    a3 = [w for w in warnings if w.startswith("gcp a3-highgpu-8g us-central1 on_demand")]
    assert a3 == ["gcp a3-highgpu-8g us-central1 on_demand: GPU SKU left out (negative price)"]


def _duplicate(units, nanos):
    def change(skus):
        out = []
        for sku in skus:
            if sku["skuId"] == H100_ON_DEMAND:
                twin = copy.deepcopy(sku)
                twin["skuId"] = twin["name"] = "DUP-1"
                _unit_price(twin).update(units=units, nanos=nanos)
                out.append(twin)  # first, as in the sweep: first-wins took it
            out.append(sku)
        return out
    return change


def test_two_skus_pricing_the_same_thing_differently_fail_the_refresh(server, packaged):
    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server, _duplicate("0", 979610000))
    message = str(info.value)
    assert "two SKUs price 'Nvidia H100 80GB GPU' (on_demand, us-central1) differently" in message
    assert "DUP-1 at 0.97961" in message and "H100-0001-0001 at 9.7961" in message
    assert "To fix:" in message and "\n" not in message


def test_identical_duplicates_are_fine(server, packaged):
    offers, _ = _fetch(packaged, server, _duplicate("9", 796100000))
    assert offers[A3].usd_per_hour == pytest.approx(0.0335 * 208 + 0.0029 * 1872 + 9.7961 * 8,
                                                    abs=1e-5)


def test_unit_price_rules():
    def sku(*rates):
        return {"pricingInfo": [{"pricingExpression": {"tieredRates": [
            {"unitPrice": r} for r in rates]}}]}

    free_then_paid = sku({"currencyCode": "USD", "units": "0"},
                         {"currencyCode": "USD", "units": "0", "nanos": 560000000})
    assert unit_price(free_then_paid) == (pytest.approx(0.56), None)
    assert unit_price(sku({"units": "1"})) == (1.0, None)  # no currency: the API's USD
    assert unit_price(sku({"currencyCode": "", "units": "2"})) == (2.0, None)  # the SDK's ""
    assert unit_price(sku({"currencyCode": "JPY", "units": "1500"})) == (
        None, "price in JPY, not USD")
    assert unit_price(sku({"currencyCode": "USD", "units": "-1"})) == (None, "negative price")
    assert unit_price(sku({"currencyCode": "USD", "units": "0"})) == (None, None)


def test_duplicates_are_compared_within_a_description_region_and_pricing_model():
    def gpu(sku_id, usage, region, nanos):
        return {"skuId": sku_id, "description": "Nvidia L4 GPU running in Americas",
                "serviceRegions": [region],
                "category": {"resourceFamily": "Compute", "resourceGroup": "GPU",
                             "usageType": usage},
                "pricingInfo": [{"pricingExpression": {"tieredRates": [
                    {"unitPrice": {"currencyCode": "USD", "units": "0", "nanos": nanos}}]}}]}

    prices = SkuPrices()
    prices.add([gpu("a", "OnDemand", "r1", 560000000), gpu("b", "OnDemand", "r2", 600000000),
                gpu("c", "Preemptible", "r1", 220000000), gpu("d", "OnDemand", "r1", 560000000)])
    assert prices.price(["Nvidia L4 GPU"], "on_demand", "r2") == pytest.approx(0.6)
    with pytest.raises(RefreshError, match=r"a at 0.56 and e at 0.57"):
        prices.add([gpu("e", "OnDemand", "r1", 570000000)])
