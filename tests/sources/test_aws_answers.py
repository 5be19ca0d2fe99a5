"""AWS source: answers of the public files that are not what they should be — another
currency, duplicate records, a bad Spot Instance Advisor answer, region codes that are no
region names, a Publication Date that is no date. Each test is named after what it pins; the
scenario names (aws_all_cny, …) are those of the hostile sweep that found it."""

from __future__ import annotations

import http.client
import json
import zlib

import pytest
from sources_fixtures import FIXTURES, load_fixture

from catalog.sources import AwsSource, RefreshError
from catalog.sources._aws_bulk import REGION_INDEX_PATH, parse_price_file, region_index
from catalog.sources._aws_spot import parse_advisor

VERSION = "/offers/v1.0/aws/AmazonEC2/20260115182405"
P5_ON_DEMAND = ("p5.48xlarge", "on_demand", "", "")


def _lines() -> list[str]:
    with open(FIXTURES / "aws_ec2_us-east-1.csv", encoding="utf-8") as handle:
        return list(handle)


def _serve(server, *, csv: bytes | None = None, advisor=None, index=None) -> None:
    server.expect_request(REGION_INDEX_PATH).respond_with_json(
        index or load_fixture("aws_region_index.json"))
    server.expect_request(f"{VERSION}/us-east-1/index.csv").respond_with_data(
        csv or (FIXTURES / "aws_ec2_us-east-1.csv").read_bytes(), content_type="text/csv")
    server.expect_request("/spot-advisor-data.json").respond_with_json(
        load_fixture("aws_spot_advisor.json") if advisor is None else advisor)


def _source(packaged, server) -> AwsSource:
    return AwsSource(reference=packaged, base_url=server.url_for("/").rstrip("/"),
                     advisor_url=server.url_for("/spot-advisor-data.json"),
                     spot_from_ec2=False, max_workers=2, timeout_s=10)


# -- another currency (aws_all_cny) ------------------------------------------------------------

def test_a_line_in_another_currency_is_left_out_and_counted():
    lines = [line.replace('"55.0400000000","USD"', '"50.0","EUR"') for line in _lines()]
    parsed = parse_price_file(iter(lines), "us-east-1")
    assert P5_ON_DEMAND not in parsed.prices  # not 50 "dollars"
    assert parsed.other_currency == {"EUR": 1}


def test_a_price_file_without_a_currency_column_is_refused():
    """Without the column every price was taken for dollars, whatever its currency."""
    lines = [line.replace('"Currency"', '"CurrencyCode"') for line in _lines()]
    with pytest.raises(ValueError, match=r"lacks columns \['Currency'\] \(has the Price List's "
                                         "format changed"):
        parse_price_file(iter(lines), "us-east-1")


def test_prices_in_another_currency_are_said_and_keep_the_region_out_of_prune(server,
                                                                                 packaged):
    """Every line in CNY: the refresh said nothing, and --prune removed us-east-1's offers."""
    _serve(server, csv=(FIXTURES / "aws_ec2_us-east-1.csv").read_bytes().replace(
        b'","USD"', b'","CNY"'))
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert not data.offers
    assert data.warnings[0].startswith(
        "aws: 15 price lines of accelerated instance types in a currency other than USD "
        "('CNY': 15) left out; those offers keep the catalog's price and date; --prune leaves "
        "us-east-1 alone"), data.warnings
    assert data.regions == ()  # --prune: nothing of us-east-1 is known to be gone


def test_an_unreadable_price_keeps_its_region_out_of_prune(server, packaged):
    """docs/refresh.md: such an offer "keeps the catalog's price and date" — --prune removed
    it, as an offer the refresh had looked for and not found."""
    _serve(server, csv=(FIXTURES / "aws_ec2_us-east-1.csv").read_bytes().replace(
        b'"55.0400000000"', b'"fifty"'))
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert data.offers and "us-east-1" not in data.regions
    assert "--prune leaves us-east-1 alone" in data.warnings[0]


# -- duplicate records (aws_dup_sku) ------------------------------------------------------------

def _with_second_p5_line(price: str) -> list[str]:
    lines = _lines()
    p5 = next(line for line in lines if '"55.0400000000"' in line and '"Linux"' in line)
    return [*lines, p5.replace('"3779209980624993"', '"9999999999999999"')
            .replace('"55.0400000000"', f'"{price}"')]


def test_two_prices_for_one_offer_fail_the_price_file():
    """A second Linux/Shared on-demand line for p5.48xlarge at 5.504: the last line won, and
    the refresh reported a 90 % price cut."""
    with pytest.raises(ValueError, match=r"the us-east-1 price file has two p5.48xlarge "
                                         r"on-demand prices, 55.04 and 5.504 \(duplicate "
                                         r"records\)"):
        parse_price_file(iter(_with_second_p5_line("5.5040000000")), "us-east-1")


def test_the_same_price_twice_is_not_a_conflict():
    parsed = parse_price_file(iter(_with_second_p5_line("55.0400000000")), "us-east-1")
    assert parsed.prices[P5_ON_DEMAND] == 55.04


def test_two_reserved_prices_for_one_term_fail_the_price_file():
    lines = _lines()
    reserved = next(line for line in lines if '"Reserved"' in line and '"Linux"' in line
                    and "p5.48xlarge" in line and '"Hrs"' in line)
    price = reserved.split('"Hrs","')[1].split('"')[0]
    dearer = reserved.replace(f'"Hrs","{price}"', f'"Hrs","{float(price) + 1}"')
    with pytest.raises(ValueError, match=r"two p5.48xlarge reserved \(term \w+, Hrs\) prices"):
        parse_price_file(iter([*lines, dearer]), "us-east-1")


# -- a bad Spot Instance Advisor answer (aws_advisor_*) -----------------------------------------

@pytest.mark.parametrize("shape", ["region_is_a_list", "range_index_is_a_list",
                                   "ranges_not_a_list", "linux_is_a_list"])
def test_an_advisor_of_another_shape_is_the_advisor_unavailable(server, packaged, shape):
    """spot_advisor.us-east-1 a list (AttributeError) or ranges[].index a list (TypeError)
    failed the whole AWS refresh, on-demand prices and all."""
    advisor = load_fixture("aws_spot_advisor.json")
    if shape == "region_is_a_list":
        advisor["spot_advisor"]["us-east-1"] = ["Linux"]
    elif shape == "range_index_is_a_list":
        advisor["ranges"] = [{"index": [0], "label": "<5%"}]
    elif shape == "ranges_not_a_list":
        advisor["ranges"] = {"index": 0}
    else:
        advisor["spot_advisor"]["us-east-1"]["Linux"] = ["p5.48xlarge"]
    _serve(server, advisor=advisor)
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert any(o.pricing == "on_demand" for o in data.offers)
    assert not any(o.pricing == "spot" for o in data.offers)
    assert "spot" not in data.covered_pricing  # --prune keeps the old spot offers
    (said,) = [w for w in data.warnings if "Spot Instance Advisor data unavailable" in w]
    assert "ValueError: Spot Instance Advisor data:" in said and "\n" not in said


@pytest.mark.parametrize("error", [
    ConnectionResetError(104, "Connection reset by peer"),
    zlib.error("Error -3 while decompressing data: invalid code lengths set"),
    EOFError("Compressed file ended before the end-of-stream marker was reached"),
    http.client.IncompleteRead(b"{", 100),
], ids=["reset", "bad_gzip", "cut_gzip", "cut_chunked"])
def test_an_advisor_download_that_breaks_is_the_advisor_unavailable(server, packaged,
                                                                   monkeypatch, error):
    """A connection reset mid-body or a corrupt gzip body of the advisor file came out of
    the refresh as a raw ConnectionResetError / zlib.error."""
    from catalog.sources import _http, aws

    real = _http.get_json

    def get_json(url, **kwargs):
        if url.endswith("/spot-advisor-data.json"):
            raise error
        return real(url, **kwargs)

    monkeypatch.setattr(aws, "get_json", get_json)
    _serve(server)
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert any(o.pricing == "on_demand" for o in data.offers)
    assert any(f"Spot Instance Advisor data unavailable ({type(error).__name__}" in w
               for w in data.warnings), data.warnings


def test_an_entry_with_a_bucket_that_is_no_index_has_no_bucket():
    advisor = load_fixture("aws_spot_advisor.json")
    advisor["spot_advisor"]["us-east-1"]["Linux"]["p5.48xlarge"] = {"s": 57, "r": [1]}
    assert parse_advisor(advisor)[("us-east-1", "p5.48xlarge")] == ("", 57)


# -- region codes that are no region names (aws_new_regions) ---------------------------------

def test_region_codes_that_are_no_region_names_are_left_out():
    """Codes with an escape sequence, a comma and a newline, or non-ASCII letters were stored
    as regions: rows of offers.csv, words in every table."""
    index = load_fixture("aws_region_index.json")
    entry = index["regions"]["us-east-1"]
    for code in ["ünï-cödé-1", "evil\x1b[31mred", "a,b\nc", "x" * 5000, "US-EAST-9",
                 " zz-new-1 "]:
        index["regions"][code] = entry
    urls, rejected = region_index(index, "https://pricing.example")
    assert set(urls) == {"us-east-1", "us-east-1-atl-1", "eu-west-1", "zz-new-1"}
    assert rejected == ("ünï-cödé-1", "evil\x1b[31mred", "a,b\nc", "x" * 5000, "US-EAST-9")


def test_the_refresh_says_which_region_codes_it_left_out(server, packaged):
    index = load_fixture("aws_region_index.json")
    index["regions"]["evil\x1b[31mred"] = index["regions"]["us-east-1"]
    _serve(server, index=index)
    data = _source(packaged, server).fetch(["us-east-1"], None)
    assert ("aws: the Price List region index names 1 region that is no region name, left "
            "out: 'evil\\x1b[31mred'") in data.warnings


def test_a_region_index_that_is_not_an_object_is_one_line(server, packaged):
    server.expect_request(REGION_INDEX_PATH).respond_with_data(json.dumps([1, 2, 3]))
    with pytest.raises(RefreshError, match=r"^aws: the Price List region index has no "
                                           r"\"regions\" object. To fix: retry later"):
        _source(packaged, server).fetch(None, None)


# -- a Publication Date that is no date (aws_bad_pubdate) ---------------------------------------

def test_a_publication_date_that_is_no_date_names_the_field_and_the_file():
    """It said only "month must be in 1..12"."""
    lines = [line.replace("2026-01-15T18:24:05Z", "2026-13-45") for line in _lines()]
    with pytest.raises(ValueError, match=r"^the us-east-1 price file's Publication Date "
                                         r"'2026-13-45' is not a date \(month must be in "
                                         r"1..12\)$"):
        parse_price_file(iter(lines), "us-east-1")
