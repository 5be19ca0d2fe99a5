"""Azure source: Retail Prices answers that are not what they should be — empty, a changed
schema, another currency, prices that are no numbers or negative, region names that are no
region names, page links that end the pages. Scenario names (az_empty, …) are those of the
hostile sweep that found each."""

from __future__ import annotations

import json

import pytest
from sources_fixtures import load_fixture

from catalog.sources import AzureSource, RefreshError
from catalog.sources.azure import UnusableItem, parse_item

pytest.importorskip("azure.mgmt.compute")
from werkzeug.wrappers import Response  # noqa: E402

H100 = "Standard_ND96isr_H100_v5"
PRICES = "/api/retail/prices"
GOOD = load_fixture("azure_retail_page1.json")["Items"]  # eastus: on-demand, spot, Windows…


@pytest.fixture(autouse=True)
def _no_subscription(monkeypatch):
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)


def _serve(server, h100_page: dict, other: dict | None = None) -> None:
    """``h100_page`` for the H100 size, ``other`` (no items) for every other size."""

    def prices(request):
        body = h100_page if H100 in request.args.get("$filter", "") else (
            other if other is not None else {"Items": [], "NextPageLink": None})
        return Response(json.dumps(body), content_type="application/json")

    server.expect_request(PRICES).respond_with_handler(prices)


def _fetch(server, regions=None):
    return AzureSource(reference=server.packaged, prices_url=server.url_for(PRICES)).fetch(
        regions, None)


@pytest.fixture
def az(server, packaged):
    server.packaged = packaged
    return server


def _offers(data) -> dict:
    return {(o.instance_type, o.region, o.pricing): o.usd_per_hour for o in data.offers}


# -- an empty answer, a changed schema (az_empty, az_items_renamed) -----------------------------

def test_an_answer_with_no_price_at_all_fails_instead_of_meaning_none(az):
    """Every page {"Items": [], "NextPageLink": null}: "refreshed azure", and with --prune
    "326 removed" — the whole cloud, exit 0."""
    _serve(az, {"Items": [], "NextPageLink": None, "Count": 0})
    with pytest.raises(RefreshError) as info:
        _fetch(az)
    text = str(info.value)
    assert text.startswith("azure: the Retail Prices API returned no prices for any of the ")
    assert "the catalog keeps its azure offers. To fix: retry later" in text and "\n" not in text


def test_a_page_without_items_is_a_changed_schema(az):
    """The data under "items" (and "nextPageLink") read as a page of no prices."""
    _serve(az, {"schemaVersion": "2025-01-01", "items": GOOD, "nextPageLink": None},
           other={"schemaVersion": "2025-01-01", "items": [], "nextPageLink": None})
    with pytest.raises(RefreshError) as info:
        _fetch(az)
    text = str(info.value)
    assert "is not a page of prices (no \"Items\"; its keys: items, nextPageLink, " \
           "schemaVersion. Has the API's schema changed?). To fix:" in text, text


def test_a_page_that_is_a_list_says_so(az):
    """It said "is not a page of prices (a page of prices)"."""
    _serve(az, [{"Items": []}])
    with pytest.raises(RefreshError, match=r"is not a page of prices \(a JSON list, not an "
                                           r"object\)"):
        _fetch(az)


def test_an_empty_next_page_link_is_the_last_page(az):
    """NextPageLink "" was refused as a link "leading away from 127.0.0.1"."""
    _serve(az, {"Items": GOOD, "NextPageLink": ""})
    assert _offers(_fetch(az))[(H100, "eastus", "on_demand")] == 98.32


# -- another currency (az_currency_eur, az_currency_missing) ------------------------------------

def test_prices_in_another_currency_are_skipped_said_and_kept_from_prune(az):
    """EUR items at half the price were dropped with no word, and --prune removed the offers
    they were for."""
    eur = dict(GOOD[0], currencyCode="EUR", unitPrice=49.16, retailPrice=49.16)
    spot = GOOD[1]
    _serve(az, {"Items": [eur, spot], "NextPageLink": None})
    data = _fetch(az)
    assert _offers(data) == {(H100, "eastus", "spot"): 39.33}
    assert data.warnings[0] == (f"azure: 1 price item skipped (for {H100}): 1 had a currency "
                                "other than USD ('EUR'); those prices keep the catalog's; "
                                "--prune leaves eastus alone")
    assert data.regions == ()  # eastus was the only region, and an item of it was skipped


def test_an_item_without_a_currency_is_not_taken_for_dollars():
    item = {k: v for k, v in GOOD[0].items() if k != "currencyCode"}
    with pytest.raises(UnusableItem) as info:
        parse_item(item)
    assert (info.value.kind, info.value.detail) == ("currency", "none")


# -- prices that are no numbers, or negative (az_price_true, az_price_neg) ------------------------

@pytest.mark.parametrize("price", [True, False, "98.32", [1], {"v": 1}, 10**400, float("nan"),
                                   float("inf")])
def test_a_price_that_is_no_finite_json_number_is_unreadable(price):
    """unitPrice true was read as $1.00/h (float(True)); 10**400 raised OverflowError."""
    with pytest.raises(UnusableItem) as info:
        parse_item(dict(GOOD[0], unitPrice=price, retailPrice=price))
    assert info.value.kind == "unreadable"


def test_a_negative_price_is_counted_and_said(az):
    """A negative price was dropped with no word."""
    _serve(az, {"Items": [dict(GOOD[0], unitPrice=-5.0, retailPrice=-5.0), GOOD[1],
                          dict(GOOD[1], unitPrice=True)], "NextPageLink": None})
    data = _fetch(az)
    assert _offers(data) == {(H100, "eastus", "spot"): 39.33}
    assert data.warnings[0].startswith(f"azure: 2 price items skipped (for {H100}): 1 could "
                                       "not be read, 1 had a negative price; "), data.warnings


def test_an_integer_price_is_a_price():
    assert parse_item(dict(GOOD[0], unitPrice=98, retailPrice=98)) == ("eastus", "on_demand",
                                                                       98.0)


# -- region names (az_region*, az_regions_weird) ----------------------------------------------

def test_surrounding_spaces_are_stripped_from_a_region_name():
    """"  eastus  " became a region of its own, and the catalog written then failed to load
    ("duplicate offer … To fix: run `gpuplan catalog use packaged`")."""
    assert parse_item(dict(GOOD[0], armRegionName="  eastus  "))[0] == "eastus"


@pytest.mark.parametrize("name", ["日本東", "evil\x1b[31mred\x1b[0m", "a,b\nc", "x" * 5000,
                                  "EastUS", "eastus\u200b", "-eastus", "east--us"])
def test_a_region_name_that_is_no_region_name_is_refused(name):
    with pytest.raises(UnusableItem) as info:
        parse_item(dict(GOOD[0], armRegionName=name))
    assert info.value.kind == "region"


def test_items_in_regions_that_are_no_region_names_are_said_not_stored(az):
    weird = ["evil\x1b[31mred", "a,b\nc", "x" * 5000, "  eastus  "]
    _serve(az, {"Items": [*GOOD, *(dict(GOOD[0], armRegionName=r) for r in weird)],
                "NextPageLink": None})
    data = _fetch(az)
    assert {o.region for o in data.offers} == {"eastus"}
    (said,) = [w for w in data.warnings if "skipped" in w]
    assert said == (f"azure: 3 price items skipped (for {H100}): 3 had no valid region name "
                    "('a,b\\nc', 'evil\\x1b[31mred', "
                    "'xxxxxxxxxxxxxxxxxxxxxxxx'…); those prices keep the catalog's")
    assert data.regions == ("eastus",)  # a name that is no region is no offer to keep


def test_the_packaged_regions_are_all_region_names(packaged):
    """The pattern the sources apply must accept every region the catalog already has."""
    from catalog._refresh_checks import region_code

    for cloud in ("aws", "gcp", "azure"):
        assert all(region_code(r) == r for r in packaged.regions(cloud)), cloud
