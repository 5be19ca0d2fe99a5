"""AWS source: EC2 through moto, the Price List API through botocore's Stubber."""

from __future__ import annotations

import json

import pytest
from sources_fixtures import load_fixture

from catalog.sources import AwsSource, SourceUnavailable
from catalog.sources.aws import parse_product

boto3 = pytest.importorskip("boto3")
moto = pytest.importorskip("moto")
from botocore.stub import Stubber  # noqa: E402

PRODUCTS = load_fixture("aws_price_list.json")["products"]
FILTER_FIELDS = ("operatingSystem", "tenancy", "preInstalledSw", "capacitystatus")


def _stubbed_pricing(instance_types):
    """A pricing client that answers one GetProducts call per instance type, in order."""
    client = boto3.client("pricing", region_name="us-east-1")
    stub = Stubber(client)
    for name in instance_types:
        items = [json.dumps(p) for p in PRODUCTS
                 if p["product"]["attributes"]["instanceType"] == name]
        expected = {"ServiceCode": "AmazonEC2", "FormatVersion": "aws_v1", "MaxResults": 100,
                    "Filters": [{"Type": "TERM_MATCH", "Field": "instanceType", "Value": name},
                                *({"Type": "TERM_MATCH", "Field": f, "Value": v} for f, v in
                                  zip(FILTER_FIELDS, ("Linux", "Shared", "NA", "Used"),
                                      strict=True))]}
        stub.add_response("get_products", {"PriceList": items, "FormatVersion": "aws_v1"},
                          expected)
    stub.activate()
    return client, stub


def test_parse_product_recognises_terms_by_attributes():
    prices = parse_product(PRODUCTS[0])
    assert prices[("us-east-1", "on_demand")] == 55.04
    # standard No Upfront wins over All Upfront; convertible terms are ignored
    assert prices[("us-east-1", "reserved_1y")] == 40.18
    # only Partial Upfront for 3 years: hourly + upfront / 26,280 h
    assert prices[("us-east-1", "reserved_3y")] == pytest.approx(10.0 + 262800 / 26280)
    assert parse_product(PRODUCTS[1]) == {}  # capacity-block row is not on-demand


def test_fetch_builds_gpu_types_and_offers(aws_env, packaged):
    from catalog.sources.aws import _scan_region

    with moto.mock_aws():
        names = sorted(_scan_region(boto3.client("ec2", region_name="us-east-1"))["types"])
        pricing, stub = _stubbed_pricing(names)
        steps = []
        data = AwsSource(reference=packaged, pricing_client=pricing, max_workers=1).fetch(
            ["us-east-1", "not-a-region"], lambda *a: steps.append(a))
        stub.assert_no_pending_responses()
    types = {t.name: t for t in data.instance_types}
    p5 = types["p5.48xlarge"]
    assert (p5.accelerator, p5.gpu_count, p5.gpu_memory_gib) == ("H100-SXM5-80GB", 8, 80)
    assert (p5.fabric, p5.inter_node_gbps, p5.intra_node_topology) == ("efa", 3200, "nvswitch")
    offers = {(o.instance_type, o.pricing): o for o in data.offers}
    assert offers[("p5.48xlarge", "on_demand")].usd_per_hour == 55.04
    assert offers[("p5.48xlarge", "reserved_1y")].usd_per_hour == 40.18
    spot = offers[("p5.48xlarge", "spot")]  # moto's spot history: one price per zone
    assert spot.zone and spot.zone_count >= 1 and spot.usd_per_hour_zone_median is not None
    assert offers[("g5.xlarge", "on_demand")].usd_per_hour == 1.006
    # "A100" is 40 or 80 GB by the memory EC2 reports
    if "p4de.24xlarge" in types:
        assert types["p4de.24xlarge"].accelerator == "A100-SXM4-80GB"
    if "p4d.24xlarge" in types:
        assert types["p4d.24xlarge"].accelerator == "A100-SXM4-40GB"
    assert data.regions == ("us-east-1",)
    assert ("aws", "us-east-1", 1, 1) in steps
    assert all(o.region == "us-east-1" for o in data.offers)


def test_no_credentials_says_how_to_set_them_up(aws_env, monkeypatch, packaged):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(SourceUnavailable) as info:
        AwsSource(reference=packaged).fetch(None, None)
    assert "AWS_ACCESS_KEY_ID/AWS_PROFILE or run `aws configure`" in str(info.value)
    assert "\n" not in str(info.value)


def test_no_network_is_one_line(aws_env, monkeypatch, packaged, closed_port):
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{closed_port}")
    with pytest.raises(SourceUnavailable) as info:
        AwsSource(reference=packaged, max_attempts=1).fetch(None, None)
    assert "cannot reach AWS" in str(info.value) and "To fix:" in str(info.value)


@pytest.mark.live
def test_live_aws(packaged):
    data = AwsSource(reference=packaged).fetch(["us-east-1"], None)
    assert any(t.name.startswith("p5") for t in data.instance_types)
    assert any(o.pricing == "on_demand" for o in data.offers)
