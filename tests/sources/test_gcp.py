"""GCP source against a local HTTP server: the SDKs' REST transport (AnonymousCredentials), and
the API-key way that needs no SDK credentials. Fixture shapes: see fixtures/SOURCES.md."""

from __future__ import annotations

import json

import pytest
from sources_fixtures import load_fixture

from catalog.sources import GcpSource, RefreshError, SourceUnavailable
from catalog.sources._gcp_skus import SkuPrices, core_description, pricing_model, tpu_version

pytest.importorskip("google.cloud.compute_v1")
pytest.importorskip("google.cloud.billing_v1")
from google.auth.credentials import AnonymousCredentials  # noqa: E402
from werkzeug.wrappers import Response  # noqa: E402

SKUS = "/v1/services/6F81-5844-456A/skus"
TPU_SKUS = "/v1/services/E000-3F24-B8AA/skus"
PAGES = {"": "gcp_skus_page1.json", "page-2": "gcp_skus_page2.json",
         "page-3": "gcp_skus_page3.json"}


def _pages(request):  # ListSkus pages by pageToken (the SDK adds $alt=json too)
    return Response(json.dumps(load_fixture(PAGES[request.args.get("pageToken", "")])),
                    content_type="application/json")


def _sdk_server(httpserver, compute_skus=_pages, tpu_skus=None):
    httpserver.expect_request("/compute/v1/projects/proj/aggregated/machineTypes") \
        .respond_with_json(load_fixture("gcp_machine_types.json"))
    httpserver.expect_request("/compute/v1/projects/proj/aggregated/acceleratorTypes") \
        .respond_with_json(load_fixture("gcp_accelerator_types.json"))
    httpserver.expect_request(SKUS).respond_with_handler(compute_skus)
    httpserver.expect_request(TPU_SKUS).respond_with_json(
        load_fixture("gcp_tpu_skus.json") if tpu_skus is None else tpu_skus)
    return httpserver


@pytest.fixture
def gcp_server(server):
    return _sdk_server(server)


def _source(packaged, endpoint):
    return GcpSource(reference=packaged, credentials=AnonymousCredentials(), project="proj",
                     client_options={"api_endpoint": endpoint}, timeout_s=10)


def test_machine_price_is_host_plus_gpus(gcp_server, packaged):
    data = _source(packaged, gcp_server.url_for("/").rstrip("/")).fetch(None, None)
    offers = {(o.instance_type, o.region, o.pricing): o for o in data.offers}
    a3 = offers[("a3-highgpu-8g", "us-central1", "on_demand")]
    assert a3.usd_per_hour == pytest.approx(0.0335 * 208 + 0.0029 * 1872 + 9.7961 * 8, abs=1e-5)
    assert a3.zone_count == 2
    spot = offers[("a3-highgpu-8g", "us-central1", "spot")]
    assert spot.usd_per_hour == pytest.approx(0.01 * 208 + 0.0009 * 1872 + 2.9388 * 8, abs=1e-5)
    committed = offers[("a3-highgpu-8g", "us-central1", "committed_1y")]
    assert committed.usd_per_hour == pytest.approx(0.0211 * 208 + 0.0018 * 1872 + 6.1716 * 8,
                                                   abs=1e-5)
    assert ("a3-highgpu-8g", "us-central1", "committed_3y") not in offers  # no such SKUs
    # europe-west4 has the machine but no SKUs at all: no offer rather than a guess
    assert not [k for k in offers if k[1] == "europe-west4"]
    types = {t.name: t for t in data.instance_types}
    assert types["a3-highgpu-8g"].accelerator == "H100-SXM5-80GB"
    assert types["a3-highgpu-8g"].intra_node_topology == "nvswitch"
    assert "n1-standard-4" not in types


def test_missing_gpu_sku_never_gives_a_host_only_price(gcp_server, packaged):
    data = _source(packaged, gcp_server.url_for("/").rstrip("/")).fetch(["us-central1"], None)
    a2 = [o for o in data.offers if o.instance_type == "a2-highgpu-1g"]
    assert [(o.pricing, o.usd_per_hour, o.flags) for o in a2] == [
        ("on_demand", None, ("price_unknown",))]
    # the "A100 80GB" SKU and the "A2 Custom" SKU did not leak into the A100 40GB price
    assert any("a2-highgpu-1g" in w and "GPU SKU" in w for w in data.warnings)


def test_attached_gpus_are_priced_alone_and_flagged(gcp_server, packaged):
    data = _source(packaged, gcp_server.url_for("/").rstrip("/")).fetch(["us-central1"], None)
    t4 = {(o.instance_type, o.pricing): o for o in data.offers if o.instance_type.startswith("n1+")}
    assert t4[("n1+t4x2", "on_demand")].usd_per_hour == pytest.approx(0.70)
    assert t4[("n1+t4x1", "spot")].flags == ("host_price_missing",)
    assert ("n1+t4x8", "on_demand") not in t4  # maximumCardsPerInstance is 4
    assert not any("vws" in t.name for t in data.instance_types)


def test_tpu_slices_are_priced_where_the_catalog_lists_them(gcp_server, packaged):
    data = _source(packaged, gcp_server.url_for("/").rstrip("/")).fetch(None, None)
    offers = {(o.instance_type, o.region, o.pricing): o for o in data.offers}
    # v5p SKUs price one chip: tpu-v5p-8 has 4 chips
    assert offers[("tpu-v5p-8", "us-east5", "on_demand")].usd_per_hour == pytest.approx(16.8)
    assert offers[("tpu-v5p-8", "us-east5", "spot")].usd_per_hour == pytest.approx(8.4)
    # v2/v3/v4 SKUs price one 8-core device (4 chips); v4 and v3 slices above 8 cores use pods
    assert offers[("tpu-v4-32", "us-central2", "on_demand")].usd_per_hour == pytest.approx(
        12.88 * 16 / 4)
    assert offers[("tpu-v3-8", "us-central1", "on_demand")].usd_per_hour == pytest.approx(8.0)
    assert offers[("tpu-v3-32", "us-east1", "on_demand")].usd_per_hour == pytest.approx(32.0)
    assert ("tpu-v3-32", "us-central1", "on_demand") not in offers  # not listed there
    assert "tpu-v5p-8" in {t.name for t in data.instance_types}


def test_sdk_prices_in_another_currency_are_left_out(server, packaged):
    # the SDK's Money has a currency_code too: EUR prices were stored as dollars
    def eur_h100(request):
        page = load_fixture(PAGES[request.args.get("pageToken", "")])
        for sku in page["skus"]:
            if sku["skuId"] == "H100-0001-0001":
                sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"] = {
                    "currencyCode": "EUR", "units": "100", "nanos": 0}
        return Response(json.dumps(page), content_type="application/json")

    srv = _sdk_server(server, compute_skus=eur_h100)
    data = _source(packaged, srv.url_for("/").rstrip("/")).fetch(["us-central1"], None)
    offers = {(o.instance_type, o.region, o.pricing): o for o in data.offers}
    assert offers[("a3-highgpu-8g", "us-central1", "on_demand")].usd_per_hour is None
    assert any("(price in EUR, not USD): H100-0001-0001" in w for w in data.warnings)


def test_sdk_empty_sku_list_fails_instead_of_pricing_nothing(server, packaged):
    srv = _sdk_server(server, tpu_skus={"skus": []})
    with pytest.raises(RefreshError, match=r"returned no SKUs for services/E000-3F24-B8AA.*"
                                           r"To fix: retry, or check that the project"):
        _source(packaged, srv.url_for("/").rstrip("/")).fetch(["us-central1"], None)


@pytest.fixture
def key_server(server):
    def compute(request):
        assert request.args.get("key") == "test-key" and request.args.get("pageSize") == "5000"
        return _pages(request)

    server.expect_request(SKUS).respond_with_handler(compute)
    server.expect_request(TPU_SKUS).respond_with_json(load_fixture("gcp_tpu_skus.json"))
    return server


def test_an_api_key_is_enough_for_prices(key_server, packaged, monkeypatch):
    monkeypatch.setenv("GOOGLE_CLOUD_API_KEY", "test-key")
    data = GcpSource(reference=packaged,
                     billing_url=key_server.url_for("/").rstrip("/")).fetch(
        ["us-central1", "us-east5", "us-central2"], None)
    offers = {(o.instance_type, o.region, o.pricing): o for o in data.offers}
    # A4: the "(1 gpu slice)" SKU is the whole VM per GPU, and its spot SKU is tagged OnDemand
    a4 = {p: offers[("a4-highgpu-8g", "us-central1", p)].usd_per_hour
          for p in ("on_demand", "spot", "committed_1y")}
    assert a4 == pytest.approx({"on_demand": 8 * 16.11, "spot": 8 * 4.9542,
                                "committed_1y": 8 * 10.1493})
    # H200 is written "H200 141GB GPU", with no "Nvidia"
    h200 = offers[("a3-ultragpu-8g", "us-central1", "on_demand")]
    assert h200.usd_per_hour == pytest.approx(224 * 0.0401 + 2952 * 0.0037 + 8 * 9.31174,
                                              abs=1e-5)
    a3 = offers[("a3-highgpu-8g", "us-central1", "on_demand")]
    assert a3.usd_per_hour == pytest.approx(0.0335 * 208 + 0.0029 * 1872 + 9.7961 * 8, abs=1e-5)
    assert offers[("tpu-v5p-8", "us-east5", "on_demand")].usd_per_hour == pytest.approx(16.8)
    assert "API key" in data.source
    assert set(data.covered_pricing) == {"on_demand", "spot", "committed_1y", "committed_3y"}


def test_sku_rules():
    assert core_description("Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in "
                            "Americas") == "A4 Nvidia B200 (1 gpu slice)"
    assert core_description("Commitment v1: A4 Nvidia B200 (1 gpu slice) in Americas for 1 "
                            "Year") == "A4 Nvidia B200 (1 gpu slice)"
    assert core_description("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in "
                            "Americas") == "Nvidia H100 80GB GPU"
    spot_tagged_on_demand = {"description": "Spot Preemptible A4 Nvidia B200 (1 gpu slice) "
                                            "running in Americas",
                             "category": {"usageType": "OnDemand"}}
    assert pricing_model(spot_tagged_on_demand) == "spot"
    assert pricing_model({"description": "x", "category": {"usageType": "Commit3Yr"}}) == \
        "committed_3y"
    assert [tpu_version(d) for d in ("TpuV5p chip", "Tpu-v4 Pod", "TpuV5e", "TpuV6e",
                                     "Nvidia L4")] == ["v5p", "v4", "v5litepod", "v6e", None]
    prices = SkuPrices()
    prices.add([{"description": "Nvidia L4 GPU running in Americas", "serviceRegions": ["r"],
                 "category": {"resourceFamily": "Compute", "resourceGroup": "GPU",
                              "usageType": "OnDemand"},
                 "pricingInfo": [{"pricingExpression": {"tieredRates": [
                     {"unitPrice": {"units": "0", "nanos": 0}},
                     {"unitPrice": {"units": "0", "nanos": 560000000}}]}}]}])
    assert prices.price(["Nvidia L4 GPU"], "on_demand", "r") == pytest.approx(0.56)


@pytest.mark.parametrize("target", ["/dev/zero", "fifo", "big"])
def test_a_credentials_path_that_is_no_key_file_is_refused_before_google_auth_reads_it(
        monkeypatch, packaged, tmp_path, target):
    # google-auth read /dev/zero until 3.5 GB and hung on a named pipe
    import os

    path = {"/dev/zero": "/dev/zero", "fifo": str(tmp_path / "fifo"),
            "big": str(tmp_path / "big.json")}[target]
    if target == "fifo":
        os.mkfifo(path)
    if target == "big":
        with open(path, "wb") as f:
            f.truncate(2 * 2**20)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
    monkeypatch.delenv("GOOGLE_CLOUD_API_KEY", raising=False)
    with pytest.raises(SourceUnavailable, match="GOOGLE_APPLICATION_CREDENTIALS.*To fix"):
        GcpSource(reference=packaged, project="proj").fetch(None, None)


def test_no_credentials_says_how_to_log_in(monkeypatch, packaged):
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def fail(**_):
        raise DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(google.auth, "default", fail)
    monkeypatch.delenv("GOOGLE_CLOUD_API_KEY", raising=False)
    with pytest.raises(SourceUnavailable) as info:
        GcpSource(reference=packaged).fetch(None, None)
    assert "gcloud auth application-default login" in str(info.value)
    assert "GOOGLE_APPLICATION_CREDENTIALS" in str(info.value)
    assert "GOOGLE_CLOUD_API_KEY" in str(info.value)


@pytest.mark.parametrize("text,reason", [
    ("{bad", "is not a valid json file"),
    ('{"type": "service_account", "private_key": "x"}', "missing fields"),
])
def test_a_credentials_file_google_auth_refuses_says_why(monkeypatch, packaged, tmp_path,
                                                         text, reason):
    # google-auth's reason was dropped for "no Google Cloud credentials … set
    # GOOGLE_APPLICATION_CREDENTIALS", which the user had set
    path = tmp_path / "key.json"
    path.write_text(text)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    monkeypatch.delenv("GOOGLE_CLOUD_API_KEY", raising=False)
    with pytest.raises(SourceUnavailable) as info:
        GcpSource(reference=packaged, project="proj").fetch(None, None)
    message = str(info.value)
    assert reason in message and "no Google Cloud credentials" not in message
    assert "To fix: point it at a service-account key JSON" in message and "\n" not in message


def test_no_network_is_one_line(packaged, closed_port):
    with pytest.raises(SourceUnavailable) as info:
        _source(packaged, f"http://127.0.0.1:{closed_port}").fetch(None, None)
    assert "cannot reach Google Cloud" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.live
def test_live_gcp(packaged):
    data = GcpSource(reference=packaged).fetch(["us-central1"], None)
    assert any(o.instance_type.startswith("a3-") for o in data.offers)
