"""AWS source: the public bulk Price List files and the Spot Instance Advisor data, served by a
local HTTP server — no credentials anywhere. Fixture shapes: see fixtures/SOURCES.md."""

from __future__ import annotations

import gzip
import math

import pytest
from sources_fixtures import FIXTURES, load_fixture
from werkzeug.wrappers import Response

from catalog.sources import AwsSource, RefreshError, SourceUnavailable
from catalog.sources._aws_bulk import REGION_INDEX_PATH, parse_price_file, region_index

VERSION = "/offers/v1.0/aws/AmazonEC2/20260115182405"


def _csv(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


@pytest.fixture
def aws_server(server):
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data(
        _csv("aws_ec2_us-east-1.csv"), content_type="text/csv")
    server.expect_request(f"{VERSION}/us-east-1-atl-1/index.csv").respond_with_data(
        _csv("aws_ec2_us-east-1-atl-1.csv"), content_type="text/csv")
    server.expect_request("/spot-advisor-data.json").respond_with_json(
        load_fixture("aws_spot_advisor.json"))
    return server


def _source(packaged, server, **kwargs):
    return AwsSource(reference=packaged, base_url=server.url_for("/").rstrip("/"),
                     advisor_url=server.url_for("/spot-advisor-data.json"),
                     spot_from_ec2=False, max_workers=2, timeout_s=10, **kwargs)


def _offers(data):
    return {o.key: o for o in data.offers}


def test_on_demand_and_all_reserved_terms_from_the_public_files(aws_server, packaged):
    steps = []
    data = _source(packaged, aws_server).fetch(["us-east-1", "us-east-1-atl-1"],
                                               lambda *a: steps.append(a))
    by = _offers(data)
    od = by[("aws", "p5.48xlarge", "us-east-1", "on_demand")]
    # not the Windows, Dedicated, unused-reservation or Capacity Block lines of the same type
    assert od.usd_per_hour == 55.04 and od.as_of.isoformat() == "2026-01-15"
    assert "AmazonEC2 20260115182405" in od.source
    conv = by[("aws", "p5.48xlarge", "us-east-1", "reserved_1y", "convertible/partial")]
    assert conv.usd_per_hour == pytest.approx(20.639204 + 180799.57 / 8760, abs=1e-6)
    assert conv.term_hours == 8760 and (conv.offering_class, conv.upfront) == ("convertible",
                                                                              "partial")
    all_upfront = by[("aws", "p5.48xlarge", "us-east-1", "reserved_3y", "standard/all")]
    assert all_upfront.usd_per_hour == pytest.approx(543864.59 / 26280, abs=1e-6)
    assert by[("aws", "g5.xlarge", "us-east-1", "reserved_1y", "standard/none")].usd_per_hour \
        == 0.6354
    assert by[("aws", "p6-b200.48xlarge", "us-east-1", "on_demand")].usd_per_hour == 113.9328
    assert data.regions == ("us-east-1", "us-east-1-atl-1")
    assert ("aws", "us-east-1", 1, 2) in steps or ("aws", "us-east-1", 2, 2) in steps


def test_a_local_zone_is_a_region_of_its_own(aws_server, packaged):
    by = _offers(_source(packaged, aws_server).fetch(["us-east-1", "us-east-1-atl-1"], None))
    assert by[("aws", "p5.48xlarge", "us-east-1-atl-1", "on_demand")].usd_per_hour == 66.048
    assert by[("aws", "p5.48xlarge", "us-east-1", "on_demand")].usd_per_hour == 55.04


def test_what_cannot_be_an_offer_is_left_out_and_said(aws_server, packaged):
    data = _source(packaged, aws_server).fetch(["us-east-1"], None)
    names = {t.name for t in data.instance_types}
    assert "p5e.48xlarge" not in names  # its only line is priced $0.00: not sold
    assert "m5.large" not in names  # not accelerated
    assert "g6f.large" not in names  # a fraction of a GPU
    assert any("g6f.large skipped: a fraction of a GPU" in w for w in data.warnings)
    assert any("p9x.48xlarge" in w and "AWS_FAMILY_ACCELERATOR" in w for w in data.warnings)
    g7e = next(t for t in data.instance_types if t.name == "g7e.2xlarge")
    assert (g7e.accelerator, g7e.gpu_count, g7e.gpu_memory_gib) == ("RTX-PRO-6000-Blackwell",
                                                                    1, 96.0)
    p5 = next(t for t in data.instance_types if t.name == "p5.48xlarge")
    # specs the price list gives; the network collectives use comes from the catalog's row
    assert (p5.vcpus, p5.memory_gib, p5.gpu_memory_gib) == (192, 2048.0, 80.0)
    assert (p5.fabric, p5.inter_node_gbps, p5.intra_node_topology) == ("efa", 3200, "nvswitch")


def test_spot_from_the_advisor_without_credentials(aws_server, packaged):
    data = _source(packaged, aws_server).fetch(["us-east-1"], None)
    by = _offers(data)
    spot = by[("aws", "p5.48xlarge", "us-east-1", "spot")]
    assert spot.usd_per_hour == pytest.approx(55.04 * 0.43)  # "s": 57 % below on-demand
    assert "30 days" in spot.source and spot.interruption_bucket == "5-10%"
    assert spot.interruption_rate_per_hour == pytest.approx(-math.log(0.9) / 730, abs=1e-8)
    g5 = by[("aws", "g5.xlarge", "us-east-1", "spot")]
    assert g5.interruption_bucket == ">20%" and g5.interruption_rate_per_hour is None
    assert "spot" in data.covered_pricing


def test_a_missing_advisor_keeps_spot_out_of_what_the_refresh_covered(server, packaged):
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data(
        _csv("aws_ec2_us-east-1.csv"))
    server.expect_request("/spot-advisor-data.json").respond_with_data("nope", status=404)
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert not [o for o in data.offers if o.pricing == "spot"]
    assert "spot" not in data.covered_pricing  # so --prune will not drop the old spot rows
    assert any("Spot Instance Advisor data unavailable" in w for w in data.warnings)


def test_gzip_encoded_price_files_are_read(server, packaged):
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_response(Response(
        gzip.compress(_csv("aws_ec2_us-east-1.csv")), headers={"Content-Encoding": "gzip"},
        content_type="text/csv"))
    server.expect_request("/spot-advisor-data.json").respond_with_json(
        load_fixture("aws_spot_advisor.json"))
    by = _offers(_source(packaged, server).fetch(["us-east-1"], None))
    assert by[("aws", "p5.48xlarge", "us-east-1", "on_demand")].usd_per_hour == 55.04


def test_a_region_file_failing_fails_the_refresh(server, packaged, monkeypatch):
    from catalog.sources import _http

    retries = []
    monkeypatch.setattr(_http, "_sleep", retries.append)
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data(
        _csv("aws_ec2_us-east-1.csv"))
    server.expect_request(f"{VERSION}/us-east-1-atl-1/index.csv").respond_with_data(
        _csv("aws_ec2_us-east-1-atl-1.csv"))
    server.expect_request(f"{VERSION}/eu-west-1/index.csv").respond_with_data("", status=500)
    with pytest.raises(RefreshError) as info:
        _source(packaged, server).fetch(None, None)
    assert "eu-west-1" in str(info.value) and "HTTP 500" in str(info.value)
    assert "To fix:" in str(info.value)
    assert retries == [0.5, 1.0, 2.0]  # a 5xx is retried with backoff before giving up


def test_no_network_is_one_line(packaged, closed_port):
    source = AwsSource(reference=packaged, base_url=f"http://127.0.0.1:{closed_port}",
                       spot_from_ec2=False, timeout_s=2)
    with pytest.raises(SourceUnavailable) as info:
        source.fetch(None, None)
    assert "cannot reach 127.0.0.1" in str(info.value) and "To fix:" in str(info.value)
    assert "\n" not in str(info.value)


def test_region_urls_swap_json_for_csv():
    urls, _ = region_index(load_fixture("aws_region_index.json"), "https://pricing.example")
    assert urls["us-east-1"] == ("https://pricing.example/offers/v1.0/aws/AmazonEC2/"
                                 "20260115182405/us-east-1/index.csv")
    assert set(urls) == {"us-east-1", "us-east-1-atl-1", "eu-west-1"}


def test_parse_price_file_reads_metadata_and_rejects_a_headless_file():
    with open(FIXTURES / "aws_ec2_us-east-1.csv", encoding="utf-8") as handle:
        parsed = parse_price_file(handle, "us-east-1")
    assert parsed.version == "20260115182405" and parsed.published.isoformat() == "2026-01-15"
    assert ("p5.48xlarge", "on_demand", "", "") in parsed.prices
    with pytest.raises(ValueError, match="no header line"):
        parse_price_file(iter(['"FormatVersion","v1.0"\n']), "x")


def test_spot_price_history_with_credentials(aws_env, aws_server, packaged):
    moto = pytest.importorskip("moto")
    with moto.mock_aws():
        data = AwsSource(reference=packaged, base_url=aws_server.url_for("/").rstrip("/"),
                         advisor_url=aws_server.url_for("/spot-advisor-data.json"),
                         spot_from_ec2=True, max_workers=1, timeout_s=10).fetch(
            ["us-east-1"], None)
    spots = [o for o in data.offers if o.pricing == "spot"]
    from_ec2 = [o for o in spots if "DescribeSpotPriceHistory" in o.source]
    assert from_ec2, "moto answers DescribeSpotPriceHistory for the region's types"
    for o in from_ec2:
        assert o.zone and o.zone_count >= 1 and o.usd_per_hour_zone_median is not None
    p5 = next(o for o in spots if o.instance_type == "p5.48xlarge")
    assert p5.interruption_bucket == "5-10%"  # the advisor's bucket comes along either way


@pytest.mark.live
def test_live_aws(packaged):
    data = AwsSource(reference=packaged).fetch(["us-east-1"], None)
    assert any(t.name.startswith("p5") for t in data.instance_types)
    assert any(o.pricing == "on_demand" for o in data.offers)


def _fixture_lines() -> list[str]:
    with open(FIXTURES / "aws_ec2_us-east-1.csv", encoding="utf-8") as handle:
        return list(handle)


def test_a_price_file_dated_in_the_future_is_refused():
    """"Publication Date" 2099 dated every offer 2099 and the catalog looked 70 years fresh."""
    lines = [line.replace("2026-01-15T18:24:05Z", "2099-01-15T00:00:00Z")
             for line in _fixture_lines()]
    with pytest.raises(ValueError, match=r"Publication Date 2099-01-15 is in the future"):
        parse_price_file(iter(lines), "us-east-1")


def test_a_price_file_with_a_header_and_no_products_is_refused():
    """A header alone (a broken file) read as "no offers in this region": --prune then
    removed all 871 of them."""
    lines = _fixture_lines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"SKU"'))
    with pytest.raises(ValueError, match="a header but no products"):
        parse_price_file(iter(lines[: header + 1]), "us-east-1")


@pytest.mark.parametrize("bad", ["fifty", "-55.04", "NaN"])
def test_an_unreadable_price_is_kept_and_said_not_dropped(bad):
    """p5.48xlarge's on-demand price "fifty": the line was skipped with no word and the
    refresh reported 0 changes."""
    lines = [line.replace('"55.0400000000"', f'"{bad}"') for line in _fixture_lines()]
    parsed = parse_price_file(iter(lines), "us-east-1")
    assert ("p5.48xlarge", "on_demand", "", "") not in parsed.prices
    assert parsed.unreadable == [f"p5.48xlarge price {bad!r}"]


def test_the_refresh_says_how_many_prices_it_could_not_read(server, packaged):
    body = _csv("aws_ec2_us-east-1.csv").replace(b'"55.0400000000"', b'"fifty"')
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data(body)
    server.expect_request("/spot-advisor-data.json").respond_with_json(
        load_fixture("aws_spot_advisor.json"))
    data = _source(packaged, server).fetch(["us-east-1"], None)
    (said,) = [w for w in data.warnings if "could not be read" in w]
    assert said.startswith("aws: 1 price line of accelerated instance types could not be read "
                           "(us-east-1: p5.48xlarge price 'fifty')")


def test_a_region_read_failure_says_its_fix_once(server, packaged, monkeypatch):
    from catalog.sources import _http

    monkeypatch.setattr(_http, "_sleep", lambda s: None)
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data("", status=500)
    with pytest.raises(RefreshError) as info:
        _source(packaged, server).fetch(["us-east-1"], None)
    assert str(info.value).count("To fix:") == 1, str(info.value)
