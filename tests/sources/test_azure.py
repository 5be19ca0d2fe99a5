"""Azure source: Retail Prices over two pages and resource SKUs, both from a local server."""

from __future__ import annotations

import json
import time

import pytest
from sources_fixtures import load_fixture

from catalog.sources import AzureSource, RefreshError, SourceUnavailable
from catalog.sources.azure import parse_item

pytest.importorskip("azure.mgmt.compute")
from werkzeug.wrappers import Response  # noqa: E402

H100 = "Standard_ND96isr_H100_v5"
PRICES = "/api/retail/prices"
SKUS = "/subscriptions/sub-1/providers/Microsoft.Compute/skus"


class FakeCredential:
    """Stands in for azure-identity: hands out a token without talking to Entra ID."""

    def get_token(self, *scopes, **kwargs):
        from azure.core.credentials import AccessToken

        return AccessToken("fake-token", int(time.time()) + 3600)

    def get_token_info(self, *scopes, **kwargs):
        from azure.core.credentials import AccessTokenInfo

        return AccessTokenInfo("fake-token", int(time.time()) + 3600)


@pytest.fixture
def azure_server(server):
    page1 = load_fixture("azure_retail_page1.json")
    page1["NextPageLink"] = server.url_for(PRICES) + "?$skip=100&page=2"
    page2 = load_fixture("azure_retail_page2.json")

    def prices(request):
        if request.args.get("page") == "2":
            body = page2
        elif H100 in request.args.get("$filter", ""):
            body = page1
        else:
            body = {"Items": [], "NextPageLink": None, "Count": 0}
        return Response(json.dumps(body), content_type="application/json")

    server.expect_request(PRICES).respond_with_handler(prices)
    server.expect_request(SKUS).respond_with_json(load_fixture("azure_resource_skus.json"))
    return server


def _by_key(data):
    return {(o.instance_type, o.region, o.pricing): o for o in data.offers}


def test_prices_refresh_without_credentials(azure_server, packaged, monkeypatch):
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    data = AzureSource(reference=packaged, prices_url=azure_server.url_for(PRICES)).fetch(
        None, None)
    offers = _by_key(data)
    assert offers[(H100, "eastus", "on_demand")].usd_per_hour == 98.32  # not the Windows row
    assert offers[(H100, "eastus", "spot")].usd_per_hour == 39.33  # not Low Priority
    assert offers[(H100, "eastus", "reserved_1y")].usd_per_hour == pytest.approx(62.0)
    assert offers[(H100, "eastus", "reserved_3y")].usd_per_hour == pytest.approx(43.0)
    assert (H100, "westus3", "on_demand") in offers  # from page 2: NextPageLink was followed
    assert [t.name for t in data.instance_types] == [H100]  # specs from the snapshot
    assert any("az login" in w and "prices still refreshed" in w for w in data.warnings)


def test_prices_need_no_package_beyond_the_base_install(azure_server, packaged, monkeypatch):
    """README: "AWS and Azure need no credentials" — but the price fetch imported `requests`,
    which only the [azure] extra installs, so `catalog refresh` failed whole on a base install
    ("No module named 'requests'") and "retry" was its fix."""
    import sys

    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    for name in ("requests", "urllib3"):
        monkeypatch.setitem(sys.modules, name, None)  # `import requests` raises ImportError
    data = AzureSource(reference=packaged, prices_url=azure_server.url_for(PRICES)).fetch(
        None, None)
    assert _by_key(data)[(H100, "eastus", "on_demand")].usd_per_hour == 98.32
    assert (H100, "westus3", "on_demand") in _by_key(data)  # page 2 followed


def test_resource_skus_give_specs_and_restrictions(azure_server, packaged):
    base = azure_server.url_for("/").rstrip("/")
    data = AzureSource(reference=packaged, credential=FakeCredential(), subscription_id="sub-1",
                       base_url=base, prices_url=azure_server.url_for(PRICES)).fetch(None, None)
    (h100,) = data.instance_types
    assert (h100.vcpus, h100.memory_gib, h100.gpu_count) == (96, 1900, 8)
    assert (h100.accelerator, h100.fabric) == ("H100-SXM5-80GB", "infiniband")
    offers = _by_key(data)
    assert (H100, "westus3", "on_demand") not in offers  # NotAvailableForSubscription
    assert not data.warnings


def test_parse_item_rules():
    item = load_fixture("azure_retail_page1.json")["Items"][0]
    assert parse_item(item) == ("eastus", "on_demand", 98.32)
    assert parse_item({**item, "productName": "Virtual Machines X Series Windows"}) is None
    assert parse_item({**item, "type": "DevTestConsumption"}) is None


def test_no_network_is_one_line(packaged, closed_port, monkeypatch):
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    with pytest.raises(SourceUnavailable) as info:
        AzureSource(reference=packaged,
                    prices_url=f"http://127.0.0.1:{closed_port}/api/retail/prices").fetch(
            ["eastus"], None)
    text = str(info.value)  # as AWS's public files say it (catalog/sources/_http.py)
    assert text.startswith(f"azure: cannot reach 127.0.0.1:{closed_port} (") and "\n" not in text
    assert "To fix: check your network or proxy and retry" in text


@pytest.mark.live
def test_live_azure_prices(packaged):
    data = AzureSource(reference=packaged).fetch(["eastus"], None)
    assert any(o.pricing == "on_demand" for o in data.offers)


def test_retired_sizes_are_never_asked_for_and_ncv3_is_pcie_v100(server, packaged, monkeypatch):
    from catalog.sources._names import AZURE_RETIRED, azure_accelerator

    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    asked = []

    def prices(request):
        asked.append(request.args.get("$filter", ""))
        return Response(json.dumps({"Items": [], "NextPageLink": None}),
                        content_type="application/json")

    server.expect_request(PRICES).respond_with_handler(prices)
    with pytest.raises(RefreshError, match="returned no prices"):  # every page empty
        AzureSource(reference=packaged, prices_url=server.url_for(PRICES)).fetch(None, None)
    assert asked and not any("Standard_NC6'" in f or "Standard_NV24_Promo" in f for f in asked)
    assert AZURE_RETIRED.match("Standard_NC24r_Promo") and not AZURE_RETIRED.match(
        "Standard_NC24rs_v3")
    assert azure_accelerator("Standard_NC24s_v3") == "V100-PCIe-16GB"
    assert azure_accelerator("Standard_ND40rs_v2") == "V100-SXM2-32GB"


def test_a_page_link_back_to_a_page_already_read_fails_the_refresh(server, packaged,
                                                                   monkeypatch):
    """A NextPageLink pointing at itself looped for ever (17,734 requests in 20 s)."""
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    loop = server.url_for(PRICES) + "?page=again"
    server.expect_request(PRICES).respond_with_json(
        {"Items": [], "NextPageLink": loop, "Count": 0})
    with pytest.raises(RefreshError, match="pages for .* lead back to a page already read. "
                                           "To fix: retry later"):
        AzureSource(reference=packaged, prices_url=server.url_for(PRICES)).fetch(
            ["eastus"], None)


def test_a_busy_or_dropped_first_page_of_a_size_is_retried(azure_server, packaged,
                                                           monkeypatch):
    """Each VM size's first page counted as the refresh's "first contact" and was not retried:
    one reset connection failed the whole Azure refresh; and a 429 asking to wait 3 s
    (Retry-After) was retried after 0.5, 1 and 2 s, then failed (review 2026-12-06)."""
    from catalog.sources import _http

    slept = []
    monkeypatch.setattr(_http, "_sleep", slept.append)
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    answered = {"n": 0}
    page1 = load_fixture("azure_retail_page1.json")
    page1["NextPageLink"] = None

    def prices(request):
        answered["n"] += 1
        if H100 in request.args.get("$filter", "") and answered.get("busy", 0) < 2:
            answered["busy"] = answered.get("busy", 0) + 1
            return Response("busy", status=429, headers={"Retry-After": "3"})
        body = page1 if H100 in request.args.get("$filter", "") else {
            "Items": [], "NextPageLink": None}
        return Response(json.dumps(body), content_type="application/json")

    azure_server.clear()
    azure_server.expect_request(PRICES).respond_with_handler(prices)
    data = AzureSource(reference=packaged, prices_url=azure_server.url_for(PRICES),
                       max_workers=1).fetch(None, None)
    assert _by_key(data)[(H100, "eastus", "on_demand")].usd_per_hour == 98.32
    assert slept == [3.0, 3.0]  # as the server asked


@pytest.mark.parametrize(("page", "says"), [
    ({"Items": 5}, "Items is not a list"),
    ({"Items": "abc"}, "Items is not a list"),
    ({"Items": [], "NextPageLink": ["x"]}, "NextPageLink is not a link"),
    ({"Items": [], "NextPageLink": "file:///etc/hostname"}, "NextPageLink leads away from"),
    ({"Items": [], "NextPageLink": "https://elsewhere.example/api"}, "leads away from"),
])
def test_a_page_that_is_not_a_page_of_prices_fails_in_one_line(server, packaged, monkeypatch,
                                                              page, says):
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    server.expect_request(PRICES).respond_with_json(page)
    with pytest.raises(RefreshError) as info:
        AzureSource(reference=packaged, prices_url=server.url_for(PRICES)).fetch(
            ["eastus"], None)
    text = str(info.value)
    assert says in text and "To fix:" in text and "\n" not in text, text


def test_a_page_is_read_by_its_size_not_by_the_limit():
    """get_json read(MAX_JSON_BYTES + 1): 256 MiB set aside per page, on 8 threads at once,
    failed a refresh under a 1.5 GB memory limit the old client ran within."""
    import io

    from catalog.sources import _http

    asked = []

    class Stream(io.BytesIO):
        def read(self, n=-1):
            asked.append(n)
            return super().read(n)

    assert _http.read_bounded(Stream(b"{}"), _http.MAX_JSON_BYTES) == b"{}"
    assert max(asked) <= 2**20


@pytest.mark.parametrize("link", ["https://prices.azure.com:443/api/retail/prices?$skip=100",
                                  "https://PRICES.azure.com/api/retail/prices?$skip=100"])
def test_azures_own_next_page_link_forms_are_followed(packaged, link):
    """Azure documents NextPageLink with an explicit :443; the host compared as raw text
    refused it, and every size with a second page failed the refresh (review 2026-12-06)."""
    assert AzureSource(reference=packaged)._next(link, "X") == link


def test_a_retry_after_that_is_no_number_falls_back_to_the_backoff():
    """"Retry-After: ¹" passed str.isdigit and float() raised: a raw ValueError."""
    import urllib.error
    from email.message import Message

    from catalog.sources import _http

    def busy(value):
        headers = Message()
        headers["Retry-After"] = value
        return urllib.error.HTTPError("https://x", 503, "busy", headers, None)

    assert _http._retry_after(busy("\xb9")) is None
    assert _http._retry_after(busy("0")) == 0.0
    assert _http._retry_after(busy("Wed, 31 Feb 2026 25:00:00 GMT")) is None


def test_a_retry_after_date_is_waited_for():
    """Retry-After may be an HTTP-date (RFC 9110 §10.2.3): it fell back to the backoff's
    0.5 s, and the retries hit the busy service again at once."""
    import time
    import urllib.error
    from email.message import Message
    from email.utils import formatdate

    from catalog.sources import _http

    def busy(value):
        headers = Message()
        headers["Retry-After"] = value
        return urllib.error.HTTPError("https://x", 503, "busy", headers, None)

    assert 25 <= _http._retry_after(busy(formatdate(time.time() + 30, usegmt=True))) <= 30
    assert _http._retry_after(busy(formatdate(time.time() - 600, usegmt=True))) == 0.0
    assert _http._retry_after(busy(formatdate(time.time() + 3600, usegmt=True))) == \
        _http.MAX_RETRY_AFTER_S
    # "-0000" (formatdate's default): a date without a known zone, read as UTC
    assert formatdate(0).endswith("-0000")
    assert 25 <= _http._retry_after(busy(formatdate(time.time() + 30))) <= 30


def test_unreadable_price_items_are_skipped_and_counted(server, packaged, monkeypatch):
    """unitPrice "abc" (ValueError), productName null (TypeError) and a price of 1e999
    (inf) stopped the refresh with a raw exception."""
    monkeypatch.delenv("AZURE_SUBSCRIPTION_ID", raising=False)
    good = load_fixture("azure_retail_page1.json")["Items"][0]
    items = [good, {**good, "unitPrice": "abc", "retailPrice": "abc"},
             {**good, "productName": None}, {**good, "unitPrice": "1e999"}]

    def prices(request):
        body = {"Items": items if H100 in request.args.get("$filter", "") else [],
                "NextPageLink": None}
        return Response(json.dumps(body), content_type="application/json")

    server.expect_request(PRICES).respond_with_handler(prices)
    data = AzureSource(reference=packaged, prices_url=server.url_for(PRICES)).fetch(None, None)
    assert _by_key(data)[(H100, "eastus", "on_demand")].usd_per_hour == 98.32
    assert any("3 price items skipped (for Standard_ND96isr_H100_v5): 3 could not be read"
               in w for w in data.warnings), data.warnings
