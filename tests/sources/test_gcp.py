"""GCP source over its REST transport against a local HTTP server (AnonymousCredentials)."""

from __future__ import annotations

import json

import pytest
from sources_fixtures import load_fixture

from catalog.sources import GcpSource, SourceUnavailable

pytest.importorskip("google.cloud.compute_v1")
pytest.importorskip("google.cloud.billing_v1")
from google.auth.credentials import AnonymousCredentials  # noqa: E402
from werkzeug.wrappers import Response  # noqa: E402

SKUS = "/v1/services/6F81-5844-456A/skus"


@pytest.fixture
def gcp_server(server):
    httpserver = server
    httpserver.expect_request("/compute/v1/projects/proj/aggregated/machineTypes") \
        .respond_with_json(load_fixture("gcp_machine_types.json"))
    httpserver.expect_request("/compute/v1/projects/proj/aggregated/acceleratorTypes") \
        .respond_with_json(load_fixture("gcp_accelerator_types.json"))
    pages = {"": load_fixture("gcp_skus_page1.json"), "page-2": load_fixture("gcp_skus_page2.json")}

    def skus(request):  # ListSkus pages by pageToken (the client adds $alt=json too)
        return Response(json.dumps(pages[request.args.get("pageToken", "")]),
                        content_type="application/json")

    httpserver.expect_request(SKUS).respond_with_handler(skus)
    return httpserver


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


def test_no_credentials_says_how_to_log_in(monkeypatch, packaged):
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def fail(**_):
        raise DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(google.auth, "default", fail)
    with pytest.raises(SourceUnavailable) as info:
        GcpSource(reference=packaged).fetch(None, None)
    assert "gcloud auth application-default login" in str(info.value)
    assert "GOOGLE_APPLICATION_CREDENTIALS" in str(info.value)


def test_no_network_is_one_line(packaged, closed_port):
    with pytest.raises(SourceUnavailable) as info:
        _source(packaged, f"http://127.0.0.1:{closed_port}").fetch(None, None)
    assert "cannot reach Google Cloud" in str(info.value) and "\n" not in str(info.value)


@pytest.mark.live
def test_live_gcp(packaged):
    data = GcpSource(reference=packaged).fetch(["us-central1"], None)
    assert any(o.instance_type.startswith("a3-") for o in data.offers)
