"""Price overrides: what they do, and every way a wrong file is one clear error (issue #16)."""

from __future__ import annotations

import datetime as dt

import pytest

from catalog import OverrideError, load_catalog, load_overrides, parse_overrides

TODAY = dt.date(2026, 2, 1)
P5 = ("aws", "p5.48xlarge", "us-east-1", "on_demand")


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def _apply(cat, data):
    return {o.key: o for o in cat.with_overrides(parse_overrides(data, source="test.yaml"),
                                                 TODAY).offers}


def test_discount_and_private_rate(tmp_path, cat):
    f = tmp_path / "ov.yaml"
    f.write_text("""
discounts:
  - cloud: aws
    percent: 10
  - cloud: aws
    instance_type: p5.48xlarge
    percent: 30
prices:
  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, pricing: reserved_1y,
     offering_class: standard, upfront: none, usd_per_hour: 38.5}
  - {cloud: gcp, instance_type: a3-ultragpu-8g, region: us-central1, pricing: on_demand,
     usd_per_hour: 80}
""")
    ov = load_catalog("packaged", overrides=f, today=TODAY)
    by = {o.key: o for o in ov.offers}
    base = {o.key: o for o in cat.offers}
    assert by[P5].usd_per_hour == pytest.approx(55.04 * 0.7)  # the most specific discount wins
    assert "overridden" in by[P5].flags and str(f) in by[P5].source and by[P5].price_usable
    g5 = ("aws", "g5.xlarge", "us-east-1", "on_demand")
    assert by[g5].usd_per_hour == pytest.approx(base[g5].usd_per_hour * 0.9)
    spot = ("aws", "p5.48xlarge", "us-east-1", "spot")
    assert by[spot].usd_per_hour == base[spot].usd_per_hour  # spot is not negotiated
    ri = by[("aws", "p5.48xlarge", "us-east-1", "reserved_1y", "standard/none")]
    assert (ri.usd_per_hour, ri.term_hours, ri.as_of) == (38.5, 8760.0, TODAY)
    h200 = by[("gcp", "a3-ultragpu-8g", "us-central1", "on_demand")]
    assert h200.usd_per_hour == 80 and h200.price_usable  # a rate you hold is trusted
    assert cat.offers == tuple(base.values())  # the packaged catalog is untouched


def test_parse_overrides_takes_data_not_a_path(cat):
    ov = parse_overrides({"discounts": [{"instance_type": "p5.48xlarge", "percent": 50}]},
                         source="team.yaml (overrides)")
    assert ov.path == "team.yaml (overrides)" and ov.discounts[0].percent == 50
    assert _apply(cat, {"discounts": [{"instance_type": "p5.48xlarge",
                                       "percent": 50}]})[P5].usd_per_hour == pytest.approx(27.52)
    # data without an entry is refused, as an empty file is (test_overrides_messages.py)
    for empty in (None, {}, {"prices": [], "discounts": None}):
        with pytest.raises(OverrideError, match="has no entries"):
            parse_overrides(empty, source="x")


@pytest.mark.parametrize("data,fragment", [
    ({"discounts": [{"cloud": "aws"}]}, "missing 'percent'"),
    ({"discounts": [{"cloud": "aws", "percent": 150}]}, "percent must be a number > 0 and < 100"),
    # 100 % would make every matched price $0, which the catalog never shows (issue #16)
    ({"discounts": [{"cloud": "aws", "percent": 100}]}, "100 would make prices $0"),
    ({"discounts": [{"cloud": "aws", "percent": float("nan")}]}, "percent must be a number"),
    ({"discounts": [{"cloud": "aws", "percent": True}]}, "percent must be a number"),
    ({"discounts": [{"cloud": "aws", "percent": "10"}]}, "percent must be a number"),
    # an empty family is a prefix of every name: it must not discount every instance
    ({"discounts": [{"family": "", "percent": 50}]}, "family must be non-empty text"),
    ({"discounts": [{"family": " p5", "percent": 50}]}, "leading or trailing spaces"),
    ({"discounts": [{"instance_type": 5, "percent": 50}]}, "instance_type must be non-empty"),
    ({"discounts": [{"region": "us-east-1", "percent": 5}]}, "needs at least one of"),
    ({"discounts": [{"cloud": "oracle", "percent": 5}]}, "unknown cloud 'oracle'"),
    ({"discounts": [{"cloud": "aws", "pricing": "cheap", "percent": 5}]},
     "unknown pricing model 'cheap'"),
    ({"discounts": [{"cloud": "aws", "percent": 5, "colour": "red"}]}, "unknown field 'colour'"),
    ({"discounts": {"cloud": "aws"}}, "expected a list of entries"),
    ({"discounts": ["aws"]}, "expected a mapping of fields"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge"}]}, "missing"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                  "pricing": "spot", "usd_per_hour": -1}]}, "usd_per_hour must be"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                  "pricing": "spot", "usd_per_hour": float("inf")}]}, "usd_per_hour must be"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                  "pricing": "on_demand", "usd_per_hour": 1e7}]}, "from 1e-06 to 10,000"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                  "pricing": "on_demand", "usd_per_hour": 5, "upfront": "all"}]},
     "only for reserved_1y"),
    ({"foo": 1}, "unknown field 'foo'"),
    (["discounts"], "expected a mapping with the keys 'discounts' and/or 'prices', found a list"),
])
def test_bad_entries_are_explained(data, fragment):
    with pytest.raises(OverrideError) as exc:
        parse_overrides(data, source="ov.yaml")
    assert fragment in str(exc.value) and str(exc.value).startswith("ov.yaml: ")
    assert "To fix:" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("data,fragment", [
    ({"discounts": [{"instance_type": "p5.48xlarg", "percent": 10}]},
     "instance type 'p5.48xlarg' matches nothing in the catalog. Did you mean 'p5.48xlarge'"),
    ({"discounts": [{"cloud": "aws", "family": "p55", "percent": 10}]},
     "family 'p55' matches nothing"),
    ({"discounts": [{"cloud": "aws", "region": "us-east-9", "percent": 10}]},
     "region 'us-east-9' matches nothing in the catalog. Did you mean"),
    # the name is right, the cloud is not: say so (it did say "matches nothing")
    ({"discounts": [{"cloud": "azure", "instance_type": "p5.48xlarge", "percent": 10}]},
     "instance type 'p5.48xlarge' is on aws, not azure. To fix: set cloud: aws in discounts[1]"),
    ({"discounts": [{"instance_type": "p5.48xlarge", "region": "eastus", "percent": 10}]},
     "no offer has instance_type=p5.48xlarge, region=eastus"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarg", "region": "us-east-1",
                  "pricing": "on_demand", "usd_per_hour": 1}]}, "Did you mean 'p5.48xlarge'"),
    ({"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-esat-1",
                  "pricing": "on_demand", "usd_per_hour": 1}]}, "'us-east-1'"),
])
def test_an_entry_that_matches_nothing_is_an_error_naming_close_matches(cat, data, fragment):
    with pytest.raises(OverrideError) as exc:
        _apply(cat, data)
    assert fragment in str(exc.value) and "To fix:" in str(exc.value)


def test_an_overrides_file_takes_clouds_and_pricing_as_the_cli_does(cat):
    by = _apply(cat, {"prices": [{"cloud": "AWS", "instance_type": "p5.48xlarge",
                                  "region": "us-east-1", "pricing": "On-Demand",
                                  "usd_per_hour": 40}]})
    assert by[("aws", "p5.48xlarge", "us-east-1", "on_demand")].usd_per_hour == 40


def test_a_discount_of_offers_without_a_price_is_an_error_not_a_no_op(cat):
    # a4-highgpu-8g's packaged offers have no price: 30% off nothing changed nothing, exit 0
    unpriced = [o for o in cat.offers if o.instance_type == "a4-highgpu-8g"]
    assert unpriced and all(o.usd_per_hour is None for o in unpriced)
    with pytest.raises(OverrideError, match=r"discounts\[1\]: the \d+ offers it matches have "
                                            r"no price to discount.*To fix: give your rate"):
        _apply(cat, {"discounts": [{"cloud": "gcp", "instance_type": "a4-highgpu-8g",
                                    "percent": 30}]})


def test_a_discount_below_a_cent_never_becomes_a_zero_price(cat):
    by = _apply(cat, {"discounts": [{"cloud": "aws", "percent": 99.99}]})
    assert all(o.usd_per_hour is None or o.usd_per_hour > 0 for o in by.values())
    # a price below what any offer can hold ($0.000001/h) is the entry's error, not a crash
    # named with the percent that works (it named an offer the user never mentioned, a raw
    # 1.3109026530688795e-09 and the record's bound)
    with pytest.raises(OverrideError) as info:
        _apply(cat, {"discounts": [{"cloud": "aws", "percent": 99.9999999}]})
    text = str(info.value)
    assert "discounts[1]: percent 99.9999999 would price aws/" in text
    assert "below $1e-06/h" in text and "e-09" not in text
    most = float(text.split("To fix: a percent of at most ")[1].split()[0])
    assert 99 < most < 99.9999999
    assert _apply(cat, {"discounts": [{"cloud": "aws", "percent": most}]})
    # and a private rate below it (it was a RecordError traceback in plan, offers and report)
    rate = {"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
            "pricing": "on_demand"}
    with pytest.raises(OverrideError, match=r"prices\[1\]: usd_per_hour must be a number "
                                            r"from 1e-06 to 10,000 USD per instance-hour"):
        _apply(cat, {"prices": [{**rate, "usd_per_hour": 1e-7}]})
    # one range in every message: 1e-7 was told "from 1e-06 to 100,000" (the record's bound),
    # then 50,000 "> 0 and <= 10000" (the file's)
    with pytest.raises(OverrideError, match=r"from 1e-06 to 10,000 USD per instance-hour, "
                                            r"got 50000"):
        _apply(cat, {"prices": [{**rate, "usd_per_hour": 50000}]})
    from catalog import CatalogNotice

    with pytest.warns(CatalogNotice, match="below its listed"):  # taken, said as a likely typo
        assert _apply(cat, {"prices": [{**rate, "usd_per_hour": 1e-6}]})


@pytest.mark.parametrize("content,fragment", [
    (b"discounts: [{cloud: aws, percent: 5", "invalid YAML"),
    (b"discounts:\n  - cloud: aws\n    percent: 5\n    percent: 6\n", "duplicate key"),
    (b"\xff\xfe discounts: []", "is UTF-16 text, not UTF-8"),
    (b"discounts: " + b"[" * 200 + b"]" * 200, "nesting deeper than"),
    (b"a: &a [1]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
     b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
     b"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
     b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
     b"f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n", "aliases"),
    (b"discounts: [{cloud: aws, percent: " + b"9" * 500 + b"}]", "digit number"),
])
def test_hostile_files_are_one_line_errors(tmp_path, content, fragment):
    f = tmp_path / "ov.yaml"
    f.write_bytes(content)
    with pytest.raises(OverrideError) as exc:
        load_overrides(f)
    assert fragment in str(exc.value) and "To fix:" in str(exc.value)
    assert "\n" not in str(exc.value)


def test_devices_directories_and_oversize_files_are_refused(tmp_path):
    with pytest.raises(OverrideError, match="a device"):
        load_overrides("/dev/zero")
    with pytest.raises(OverrideError, match="a directory"):
        load_overrides(tmp_path)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"# " + b"x" * (2 * 2**20))
    with pytest.raises(OverrideError, match="more than the 1 MiB allowed"):
        load_overrides(big)
    with pytest.raises(OverrideError, match="no such file"):
        load_overrides(tmp_path / "missing.yaml")


def test_dates_stay_text_so_a_bad_date_is_not_a_crash(tmp_path):
    f = tmp_path / "ov.yaml"
    f.write_text("discounts: [{cloud: aws, family: 2027-02-30, percent: 5}]")
    with pytest.raises(OverrideError, match="family '2027-02-30' matches nothing"):
        load_catalog("packaged", overrides=f)


def test_a_reserved_rate_without_its_class_is_refused_where_the_term_has_classes(cat):
    """The README's own example added a fourth, unclassified p5.48xlarge reserved_1y offer
    at $55/h beside the three convertible ones, replacing none (docs sweep, 2026-12)."""
    rate = {"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
            "pricing": "reserved_1y", "usd_per_hour": 35.0}
    with pytest.raises(OverrideError) as exc:
        _apply(cat, {"prices": [rate]})
    said = str(exc.value)
    assert "prices[1]" in said and "convertible/none" in said and "To fix:" in said, said
    assert "offering_class: convertible" in said
    by = _apply(cat, {"prices": [{**rate, "offering_class": "convertible", "upfront": "none"}]})
    held = [o for k, o in by.items() if k[:4] == ("aws", "p5.48xlarge", "us-east-1",
                                                  "reserved_1y")]
    assert len(held) == 3 and sum(o.usd_per_hour == 35.0 for o in held) == 1


def test_the_longer_family_prefix_wins_whatever_the_order():
    """`family: p5` also matches p5e.48xlarge: with `family: p5e` beside it, the line that
    came first won (-30% or -10% by the file's order)."""
    cat = load_catalog("packaged")
    key = next(o.key for o in cat.offers if o.instance_type == "p5e.48xlarge"
               and o.pricing != "spot" and o.usd_per_hour)
    listed = next(o for o in cat.offers if o.key == key).usd_per_hour
    rules = [{"cloud": "aws", "family": "p5", "percent": 30},
             {"cloud": "aws", "family": "p5e", "percent": 10}]
    for order in (rules, rules[::-1]):
        assert _apply(cat, {"discounts": order})[key].usd_per_hour == pytest.approx(
            listed * 0.9)


def test_a_rate_where_the_catalog_sells_the_type_nowhere_adds_it_with_a_note(cat):
    """A private rate for p5.48xlarge in eu-west-3 (a region the catalog sells p5 nowhere in,
    perhaps a typo of eu-west-2) added an offer there without a word; a rate for a term the
    catalog does not list, in a region where the type is sold, adds one quietly as before."""
    import warnings

    from catalog import CatalogNotice

    typo = {"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "eu-west-3",
                        "pricing": "on_demand", "usd_per_hour": 40}]}
    with pytest.warns(CatalogNotice) as said:
        offers = _apply(cat, typo)
    assert ("aws", "p5.48xlarge", "eu-west-3", "on_demand") in offers  # a rate is still added
    (text,) = [str(w.message) for w in said]
    assert text.startswith("test.yaml: prices[1]: the catalog sells p5.48xlarge in "
                           "ap-northeast-1, ap-northeast-2,") and "and 9 more" in text
    assert text.endswith("not eu-west-3: your rate adds it there as a new offer. If eu-west-3 "
                         "is a typo, correct prices[1]")
    sold = {"prices": [{"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1",
                        "pricing": "on_demand", "usd_per_hour": 40}]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", CatalogNotice)
        _apply(cat, sold)
