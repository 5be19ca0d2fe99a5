"""What a sweep of hostile price-override files found, mended: rates far from the list price
said (a per-GPU price, a figure far above list), the notes kept on the catalog, thousands of
discounts applied in one pass (60 s before), a family prefix that also matched another
family said, the real size limit, money written as text, names of another cloud, a pricing
model the cloud does not sell, and a percent that reads as a fraction."""

from __future__ import annotations

import dataclasses
import datetime as dt
import random
import warnings

import pytest

from catalog import CatalogNotice, OverrideError, load_catalog, parse_overrides
from catalog._overrides import MAX_ENTRIES, Discount, load_overrides
from catalog._yaml import MAX_YAML_EXPANDED_NODES

TODAY = dt.date(2026, 12, 1)
P5 = {"cloud": "aws", "instance_type": "p5.48xlarge", "region": "us-east-1"}


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def _apply(cat, data, source="test.yaml"):
    return cat.with_overrides(parse_overrides(data, source=source), TODAY)


def _said(cat, data) -> tuple[list[str], object]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        applied = _apply(cat, data)
    return [str(w.message) for w in caught if issubclass(w.category, CatalogNotice)], applied


def _rate(usd: float, pricing: str = "on_demand", **more) -> dict:
    return {"prices": [{**P5, "pricing": pricing, "usd_per_hour": usd, **more}]}


def _listed(cat, pricing: str = "on_demand") -> float:
    return next(o.usd_per_hour for o in cat.offers if (o.cloud, o.instance_type, o.region,
                o.pricing) == ("aws", "p5.48xlarge", "us-east-1", pricing))


# -- 1: a rate far from the list price -------------------------------------------------------

def test_a_per_gpu_price_is_said_as_one(cat):
    listed = _listed(cat)  # $55.04/h for 8 GPUs
    said, applied = _said(cat, _rate(round(listed / 8, 2)))
    (text,) = said
    assert text.startswith("test.yaml: prices[1]: $6.88/h for p5.48xlarge us-east-1 on_demand "
                           "is about its listed $55.04/h ÷ 8 GPUs ($6.88): it looks like a "
                           "per-GPU price, but usd_per_hour is per instance-hour (8 × $6.88 = "
                           "$55.04)")
    assert text.endswith("If it is per GPU, write usd_per_hour: 55.04 in prices[1]")
    assert _price(applied, "on_demand") == 6.88  # said, still used


def test_a_spot_rate_near_the_per_gpu_share_is_taken_quietly(cat):
    said, _ = _said(cat, _rate(round(_listed(cat) / 8, 2), "spot"))
    assert said == []  # a spot price is no negotiated one: list ÷ GPUs may be what it is


def test_a_rate_far_above_the_list_price_is_said(cat):
    said, applied = _said(cat, _rate(5504))
    assert said == ["test.yaml: prices[1]: $5,504/h for p5.48xlarge us-east-1 on_demand is "
                    "100× its listed $55.04/h; plans use it. If it is a typo (a monthly figure, "
                    "cents for dollars), correct prices[1]"]
    assert _price(applied, "on_demand") == 5504


@pytest.mark.parametrize("share", [0.6, 1.0, 1.5, 4.9])
def test_a_rate_a_deal_or_a_premium_could_be_is_quiet(cat, share):
    said, _ = _said(cat, _rate(round(_listed(cat) * share, 2)))
    assert said == []


def _price(catalog, pricing: str) -> float:
    return next(o.usd_per_hour for o in catalog.offers if (o.cloud, o.instance_type, o.region,
                o.pricing, o.offering_class) == ("aws", "p5.48xlarge", "us-east-1", pricing, ""))


# -- 2: the notes are kept on the catalog ------------------------------------------------------

def test_the_notes_are_kept_on_the_catalog_and_in_its_provenance(cat):
    said, applied = _said(cat, _rate(0.5504))
    assert [n.text for n in applied.override_notes] == said and len(said) == 1
    assert applied.provenance()["override_notes"] == said
    assert "override_notes" not in cat.provenance()  # none noted: the record is as before
    quiet = _apply(cat, {"discounts": [{"cloud": "aws", "percent": 8}]})
    assert quiet.override_notes == () and "override_notes" not in quiet.provenance()


def test_a_note_names_the_offers_its_entry_priced(cat):
    _, applied = _said(cat, _rate(0.5504))
    (note,) = applied.override_notes
    priced = [o for o in applied.offers if note.about(o)]
    assert [(o.instance_type, o.region, o.pricing) for o in priced] == [
        ("p5.48xlarge", "us-east-1", "on_demand")]


def test_a_later_layer_keeps_the_earlier_notes_once(cat):
    _, first = _said(cat, _rate(0.5504))
    said, both = _said(first, {"discounts": [{"cloud": "gcp", "percent": 0.5}]})
    assert len(said) == 1 and "percent 0.5" in said[0]  # the earlier note is not said again
    assert [n.text for n in both.override_notes] == [
        *(n.text for n in first.override_notes), said[0]]


def test_many_notes_of_a_kind_are_counted_not_listed(cat):
    from catalog._override_checks import MAX_SAID

    rows = [o for o in cat.offers if o.cloud == "aws" and o.pricing == "on_demand"
            and o.usd_per_hour and o.usd_per_hour < 10][:MAX_SAID + 5]
    data = {"prices": [{"cloud": "aws", "instance_type": o.instance_type, "region": o.region,
                        "pricing": "on_demand", "usd_per_hour": round(o.usd_per_hour * 20, 4)}
                       for o in rows]}
    said, _ = _said(cat, data)
    assert len(said) == MAX_SAID + 1
    assert said[-1].startswith(f"test.yaml: 5 more rates far above their list price than the "
                               f"{MAX_SAID} said: prices[{MAX_SAID + 1}], ")


# -- 3: thousands of discounts, applied in one pass -----------------------------------------------

def _random_discounts(cat, rng: random.Random, n: int, taken: set) -> list[dict]:
    """``n`` discounts of distinct scopes, each matching a priced offer it was drawn from."""
    priced = [o for o in cat.offers if o.usd_per_hour is not None]
    out = []
    while len(out) < n:
        o = rng.choice(priced)
        keys = {k for k in ("cloud", "family", "instance_type", "region", "pricing")
                if rng.random() < 0.5}
        if not keys & {"cloud", "family", "instance_type"}:
            keys.add(rng.choice(["cloud", "family", "instance_type"]))
        if o.pricing == "spot":
            keys.add("pricing")  # a discount leaves spot alone unless it names it
        entry = {"cloud": o.cloud, "instance_type": o.instance_type, "region": o.region,
                 "pricing": o.pricing,
                 "family": o.instance_type[:rng.randint(2, max(2, len(o.instance_type) - 1))]}
        entry = {k: v for k, v in entry.items() if k in keys}
        scope = tuple(sorted(entry.items()))
        if scope in taken:
            continue
        taken.add(scope)
        out.append({**entry, "percent": rng.randint(1, 60)})
    return out


def _reference(cat, files: list[tuple[str, dict]]) -> dict:
    """Every offer's price and source as the overrides set them, comparing each offer with
    every discount of every file: the rule, written as plainly as it reads."""
    entries = [(d, path) for path, data in files
               for d in parse_overrides(data, source=path).discounts]
    out = {}
    for o in cat.offers:
        matched = [(d, p) for d, p in entries if d.matches(o)]
        if not matched or o.usd_per_hour is None:
            out[o.key] = (o.usd_per_hour, o.source)
            continue
        best, path = max(matched, key=lambda pair: pair[0].specificity)
        scaled = o.usd_per_hour * (1 - best.percent / 100)
        out[o.key] = (round(scaled, 6) or scaled,
                      f"{o.source}; -{best.percent:g}% (overrides: {path} {best.where})")
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_indexed_discounts_price_every_offer_as_the_plain_rule_does(cat, seed):
    rng = random.Random(seed)
    taken: set = set()
    one = {"discounts": _random_discounts(cat, rng, 300, taken)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CatalogNotice)
        applied = _apply(cat, one, "one.yaml")
    assert {o.key: (o.usd_per_hour, o.source) for o in applied.offers} == _reference(
        cat, [("one.yaml", one)])
    # and a second layer on it, as a team file's overrides: every layer of list prices
    two = {"discounts": _random_discounts(cat, rng, 150, taken)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CatalogNotice)
        layered = applied.with_overrides(parse_overrides(two, source="two.yaml"), TODAY)
    assert {o.key: (o.usd_per_hour, o.source) for o in layered.offers} == _reference(
        cat, [("one.yaml", one), ("two.yaml", two)])


def test_a_discount_is_compared_only_with_the_offers_it_can_match(cat, monkeypatch):
    """4,762 discounts took 60 s: every offer was compared with every discount, twice (58
    million calls of Discount.matches). Per offer, only those of its type, family prefix
    and cloud are."""
    scopes = list(dict.fromkeys((o.cloud, o.instance_type, o.region, o.pricing)
                                for o in cat.offers
                                if o.usd_per_hour is not None and o.pricing != "spot"))[:500]
    data = {"discounts": [dict(zip(("cloud", "instance_type", "region", "pricing"), scope,
                                   strict=True), percent=5) for scope in scopes]}
    calls = 0
    plain = Discount.matches

    def counted(self, offer):
        nonlocal calls
        calls += 1
        return plain(self, offer)

    monkeypatch.setattr(Discount, "matches", counted)
    applied = _apply(cat, data)
    discounted = {(o.cloud, o.instance_type, o.region, o.pricing) for o in applied.offers
                  if "-5% (overrides: test.yaml" in o.source}
    assert discounted == set(scopes)
    assert calls < 10 * len(cat.offers), calls  # was 2 × 500 × every offer: 14.5 million


def test_many_distinct_entries_parse_without_comparing_each_with_all_before(monkeypatch):
    from catalog import _overrides

    seen = []
    plain = _overrides._no_twin

    def spy(source, entry, earlier, key, what, doubt):
        seen.append(type(earlier))
        return plain(source, entry, earlier, key, what, doubt)

    monkeypatch.setattr(_overrides, "_no_twin", spy)
    data = {"discounts": [{"cloud": "aws", "region": f"r{i}", "percent": 5} for i in range(50)]}
    assert len(parse_overrides(data).discounts) == 50
    assert set(seen) == {dict}  # a look-up by scope, not a scan of every earlier entry
    with pytest.raises(OverrideError, match=r"discounts\[3\]: the same scope as discounts\[1\]"):
        parse_overrides({"discounts": [{"cloud": "aws", "percent": 5},
                                       {"cloud": "gcp", "percent": 5},
                                       {"cloud": "aws", "percent": 6}]}, source="f.yaml")


# -- 6: a family prefix that runs into another family -------------------------------------------

def test_a_family_that_also_matches_a_longer_family_says_which(cat):
    said, applied = _said(cat, {"discounts": [{"cloud": "aws", "family": "g5", "percent": 20}]})
    (text,) = said
    assert text.startswith("test.yaml: discounts[1]: family 'g5' matches g5 (A10G) and, as the "
                           "name prefix a family is, g5g (")
    assert text.endswith("too: 20% off all of them. To discount g5 alone, write family: 'g5.'")
    assert any(o.instance_type.startswith("g5g.") and "overridden" in o.flags
               for o in applied.offers)  # the documented prefix rule holds: said, not changed
    quiet, alone = _said(cat, {"discounts": [{"cloud": "aws", "family": "g5.", "percent": 20}]})
    assert quiet == []
    assert not any(o.instance_type.startswith("g5g.") and "overridden" in o.flags
                   for o in alone.offers)


def test_a_family_a_longer_one_outranks_is_not_said_to_cover_it(cat):
    said, _ = _said(cat, {"discounts": [{"cloud": "aws", "family": "p5", "percent": 30},
                                        {"cloud": "aws", "family": "p5e", "percent": 10}]})
    assert not any("family 'p5' " in s for s in said)  # p5e's 10% prices p5e, not p5's 30%
    assert any("family 'p5e' matches p5e" in s and "p5en" in s for s in said)


@pytest.mark.parametrize("family", ["a3", "p4", "Standard_ND"])
def test_a_family_matching_whole_names_or_only_longer_ones_is_quiet(cat, family):
    said, _ = _said(cat, {"discounts": [{"family": family, "percent": 10}]})
    assert said == []


# -- 7: the size limit -------------------------------------------------------------------------

def test_the_entry_limit_is_one_a_file_can_reach():
    full = 2 * 7 + 1  # a price entry of every key: its keys, values and mapping
    assert MAX_ENTRIES * full + 3 < MAX_YAML_EXPANDED_NODES
    entry = {**P5, "pricing": "on_demand", "usd_per_hour": 40}
    many = {"prices": [{**entry, "region": f"r{i}"} for i in range(MAX_ENTRIES)],
            "discounts": [{"cloud": "aws", "percent": 5}]}
    with pytest.raises(OverrideError) as exc:
        parse_overrides(many, source="big.yaml")
    assert str(exc.value).startswith(f"big.yaml: {MAX_ENTRIES + 1:,} entries under discounts "
                                     f"and prices; a file holds at most {MAX_ENTRIES:,}. To "
                                     "fix: write fewer entries")


def test_a_file_of_too_many_values_is_told_in_entries_with_a_fix_that_works(tmp_path):
    line = ("  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, pricing: "
            "on_demand, usd_per_hour: 40}\n")
    path = tmp_path / "big.yaml"
    path.write_text("prices:\n" + line * 9500, encoding="utf-8")  # 11 values each
    with pytest.raises(OverrideError) as exc:
        load_overrides(path)
    text = str(exc.value)
    assert text.startswith(f"overrides file {path}: too large: it passes 100,000 values by "
                           f"line 2, while a file holds at most {MAX_ENTRIES:,} entries")
    assert "split it into smaller files" not in text  # --overrides takes one file
    assert "To fix: write fewer entries: one discount of a cloud or family" in text


# -- 8: money written as text ------------------------------------------------------------------

@pytest.mark.parametrize("written,fix", [
    ("$12.5", "write usd_per_hour: 12.5 (no quotes, $, %, units or thousands separators)"),
    ("12.5 USD", "write usd_per_hour: 12.5 ("),
    ("1,250", "write usd_per_hour: 1250 ("),
    ("12,5", "write usd_per_hour: 12.5 ("),
    ("twelve", "write usd_per_hour as a bare number, e.g. usd_per_hour: 12.5 ("),
])
def test_a_rate_written_as_money_says_how_to_write_it(written, fix):
    with pytest.raises(OverrideError) as exc:
        parse_overrides(_rate(written), source="f.yaml")
    assert f"usd_per_hour must be a number from 1e-06 to 10,000 USD per instance-hour, got " \
           f"'{written}'. To fix: {fix}" in str(exc.value)


def test_a_percent_written_with_its_sign_says_how_to_write_it():
    with pytest.raises(OverrideError, match=r"got '10%'\. To fix: write percent: 10 \(no "):
        parse_overrides({"discounts": [{"cloud": "aws", "percent": "10%"}]}, source="f.yaml")


def test_a_decimal_comma_in_a_flow_mapping_is_said_as_one(tmp_path):
    path = tmp_path / "comma.yaml"
    path.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1, "
                    "pricing: on_demand, usd_per_hour: 12,5}\n", encoding="utf-8")
    with pytest.raises(OverrideError) as exc:
        load_overrides(path)
    assert str(exc.value) == (
        f"{path}: prices[1]: 'usd_per_hour: 12,5' reads as usd_per_hour 12 and a field '5': "
        "YAML reads no decimal comma. To fix: write usd_per_hour: 12.5 with a decimal point "
        "(or 125 without a thousands separator)")


# -- 9: a name of another cloud ------------------------------------------------------------------

def test_a_region_of_another_cloud_names_its_cloud(cat):
    with pytest.raises(OverrideError) as exc:
        _apply(cat, {"prices": [{**P5, "region": "us-central1", "pricing": "on_demand",
                                 "usd_per_hour": 3}]})
    assert str(exc.value) == ("test.yaml: prices[1]: region 'us-central1' is gcp's, not aws's. "
                              "To fix: set cloud: gcp in prices[1], or name a region of aws")
    with pytest.raises(OverrideError, match=r"discounts\[1\]: region 'eastus' is azure's, not "
                                            r"aws's\. To fix: set cloud: azure in discounts"):
        _apply(cat, {"discounts": [{"cloud": "aws", "region": "eastus", "percent": 5}]})


def test_a_family_of_another_cloud_names_its_cloud(cat):
    with pytest.raises(OverrideError) as exc:
        _apply(cat, {"discounts": [{"cloud": "azure", "family": "p5", "percent": 10}]})
    assert str(exc.value) == ("test.yaml: discounts[1]: family 'p5' is aws's, not azure's. To "
                              "fix: set cloud: aws in discounts[1], or name a family of azure")


def test_a_name_of_no_cloud_still_gets_the_closest_names(cat):
    with pytest.raises(OverrideError, match=r"region 'us-east-9' matches nothing in the catalog\."
                                            r" Did you mean 'us-east-2', 'us-east-1'"):
        _apply(cat, {"prices": [{**P5, "region": "us-east-9", "pricing": "on_demand",
                                 "usd_per_hour": 3}]})


# -- 11: a pricing model the cloud does not sell ---------------------------------------------------

def test_a_rate_under_a_pricing_model_the_cloud_has_none_of_is_said(cat):
    azure = {"cloud": "azure", "instance_type": "Standard_ND96isr_H100_v5", "region": "eastus",
             "pricing": "capacity_block", "usd_per_hour": 30}
    said, applied = _said(cat, {"prices": [azure]})
    assert said == ["test.yaml: prices[1]: the catalog has no capacity_block offer of azure (its "
                    "azure offers are on_demand, spot): your rate adds Standard_ND96isr_H100_v5 "
                    "eastus capacity_block as a new offer. If it is a typo, correct prices[1]"]
    assert any(o.pricing == "capacity_block" and o.cloud == "azure" for o in applied.offers)
    said, _ = _said(cat, _rate(40, "committed_1y"))
    assert said[0].endswith("as a new offer. If you meant reserved_1y, correct prices[1]")


def test_a_rate_for_a_term_the_cloud_sells_elsewhere_is_quiet(cat):
    rate = {"cloud": "aws", "instance_type": "g5.xlarge", "region": "ap-east-1",
            "pricing": "capacity_block", "usd_per_hour": 1.0}
    said, _ = _said(cat, {"prices": [rate]})
    assert said == []  # aws sells capacity blocks; a deal for one more offer is the user's


# -- 12: a percent that reads as a fraction -------------------------------------------------

def test_a_percent_under_one_is_said_as_a_likely_fraction(cat):
    said, applied = _said(cat, {"discounts": [{"cloud": "aws", "percent": 0.1}]})
    assert said == ["test.yaml: discounts[1]: percent 0.1 takes 0.1% off; if it is a fraction "
                    "(0.1 for 10%), write percent: 10"]
    assert _price(applied, "on_demand") == pytest.approx(_listed(cat) * 0.999)
    quiet, _ = _said(cat, {"discounts": [{"cloud": "aws", "percent": 1}]})
    assert quiet == []


def test_discount_records_are_unchanged():
    # the index relies on the scope fields a Discount has: a new one would need a bucket
    assert [f.name for f in dataclasses.fields(Discount)] == [
        "percent", "cloud", "family", "instance_type", "region", "pricing", "where"]
