"""The GCP SKU lists over HTTPS (API-key way) from a hostile sweep: a page token that came back
looped for ever (~4,400 requests in 6 s, memory growing); a list answered empty, or under
another name, "refreshed" nothing and `--prune` then removed every GCP offer; a refused key
said "retry later" and printed the key. Served by the local HTTP server of conftest.py."""

from __future__ import annotations

import json

import pytest
from sources_fixtures import load_fixture
from werkzeug.wrappers import Response

from catalog.sources import GcpSource, RefreshError

SKUS = "/v1/services/6F81-5844-456A/skus"
TPU_SKUS = "/v1/services/E000-3F24-B8AA/skus"
KEY = "k-s3cret"


def _fetch(packaged, server):
    return GcpSource(reference=packaged, api_key=KEY,
                     billing_url=server.url_for("/").rstrip("/")).fetch(["us-central1"], None)


def _serve_compute(server, answer, tpu=None):
    """The Compute Engine list answered by ``answer(request)`` (JSON-able, or a Response);
    the TPU list by ``tpu`` or its fixture. Returns the requests' pageTokens."""
    tokens = []

    def compute(request):
        tokens.append(request.args.get("pageToken", ""))
        got = answer(request)
        return got if isinstance(got, Response) else Response(json.dumps(got))

    server.expect_request(SKUS).respond_with_handler(compute)
    server.expect_request(TPU_SKUS).respond_with_json(
        tpu if tpu is not None else load_fixture("gcp_tpu_skus.json"))
    return tokens


ENOUGH = 20  # requests after which the servers below end their list: a loop fails, not hangs


def test_a_page_token_that_comes_back_is_a_loop(server, packaged):
    def same_token(request):
        return {**load_fixture("gcp_skus_page1.json"),
                "nextPageToken": "same" if len(tokens) < ENOUGH else ""}

    tokens = _serve_compute(server, same_token)
    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server)
    assert "returned page token 'same' twice" in str(info.value)
    assert "To fix: retry later" in str(info.value)
    assert tokens == ["", "same"]


def test_a_list_that_never_ends_stops_at_the_page_cap(server, packaged, monkeypatch):
    from catalog.sources import _gcp_pages

    monkeypatch.setattr(_gcp_pages, "MAX_SKU_PAGES", 3)

    def new_token_each_time(request):
        n = int(request.args.get("pageToken", "p0")[1:]) + 1
        return {**load_fixture("gcp_skus_page1.json"),
                "nextPageToken": f"p{n}" if n < ENOUGH else ""}

    tokens = _serve_compute(server, new_token_each_time)
    with pytest.raises(RefreshError, match=r"goes on past 3 pages"):
        _fetch(packaged, server)
    assert tokens == ["", "p1", "p2"]


@pytest.mark.parametrize("answer", [{"skus": [], "nextPageToken": ""}, {}])
def test_an_empty_sku_list_fails_instead_of_pricing_nothing(server, packaged, answer):
    _serve_compute(server, lambda request: answer)
    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server)
    message = str(info.value)
    assert "the billing API returned no SKUs for services/6F81-5844-456A" in message
    assert "To fix: retry, or check the API key's project" in message


def test_an_empty_tpu_list_fails_too(server, packaged):
    _serve_compute(server, lambda request: load_fixture("gcp_skus_page3.json"),
                   tpu={"skus": []})
    with pytest.raises(RefreshError, match=r"returned no SKUs for services/E000-3F24-B8AA"):
        _fetch(packaged, server)


@pytest.mark.parametrize("answer,said", [
    ({"skuList": [{"description": "x"}], "nextPageToken": ""}, "it has skuList"),
    ([], "a JSON list, not an object"),
    ({"skus": {"description": "x"}}, '"skus" is a dict'),
])
def test_an_answer_without_a_skus_list_says_the_format_changed(server, packaged, answer, said):
    _serve_compute(server, lambda request: answer)
    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server)
    assert 'answer for services/6F81-5844-456A has no "skus" list' in str(info.value)
    assert said in str(info.value) and "To fix:" in str(info.value)


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_key_says_to_check_the_key_and_never_shows_it(server, packaged, status):
    body = {"error": {"code": status, "message": "API key not valid", "status": "DENIED"}}
    _serve_compute(server, lambda request: Response(json.dumps(body), status=status))
    with pytest.raises(RefreshError) as info:
        _fetch(packaged, server)
    message = str(info.value)
    assert KEY not in message and "key=***" in message
    assert f"HTTP {status}. To fix: check GOOGLE_CLOUD_API_KEY" in message
    assert "Cloud Billing API enabled" in message and "retry later" not in message


def test_a_page_over_the_page_cap_is_refused(server, packaged, monkeypatch):
    # the 256 MiB default of get_json is for any document; a page of 5,000 SKUs is MBs
    from catalog.sources import _gcp_pages

    monkeypatch.setattr(_gcp_pages, "MAX_PAGE_BYTES", 1000)
    _serve_compute(server, lambda request: load_fixture("gcp_skus_page3.json"))
    with pytest.raises(RefreshError, match=r"larger than 1,000 bytes") as info:
        _fetch(packaged, server)
    assert KEY not in str(info.value)
