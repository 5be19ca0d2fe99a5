"""Alias resolution, filters, sorts and price overrides."""

from __future__ import annotations

import pytest

from catalog import OverrideError, UnknownNameError, load_catalog, select_offers


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


@pytest.mark.parametrize("alias,canonical", [
    ("H100", "H100-SXM5-80GB"), ("h100", "H100-SXM5-80GB"), ("a100-80gb", "A100-SXM4-80GB"),
    ("A100_80GB", "A100-SXM4-80GB"), ("A100", "A100-SXM4-40GB"), ("v100-32gb", "V100-SXM2-32GB"),
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"), ("mi300x", "MI300X"), ("b200", "B200-SXM-180GB"),
])
def test_aliases_resolve(cat, alias, canonical):
    assert cat.resolve_accelerator(alias) == canonical


def test_typo_suggests_close_match(cat):
    with pytest.raises(UnknownNameError) as exc:
        cat.resolve_accelerator("H10O")
    assert "Did you mean 'H100'" in str(exc.value) and "To fix:" in str(exc.value)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"clouds": ["awz"]}, "unknown cloud 'awz'. Did you mean 'aws'"),
    ({"regions": ["us-east-9"]}, "unknown region 'us-east-9'"),
    ({"pricing": ["spott"]}, "Did you mean 'spot'"),
])
def test_bad_filters_are_named(cat, kwargs, fragment):
    with pytest.raises(UnknownNameError, match=fragment):
        select_offers(cat, **kwargs)


def test_filters_combine(cat):
    rows = select_offers(cat, gpus=["A100-80GB"], clouds=["gcp"], pricing=["spot"], min_gpus=8,
                         max_price=50)
    assert rows
    for r in rows:
        assert r.offer.cloud == "gcp" and r.offer.pricing == "spot"
        assert r.instance.gpu_count >= 8 and r.offer.usd_per_hour <= 50
        assert r.accelerator.name == "A100-SXM4-80GB"


@pytest.mark.parametrize("sort,attr", [("price", lambda r: r.offer.usd_per_hour),
                                       ("gpu_price", lambda r: r.usd_per_gpu_hour),
                                       ("pflop_price", lambda r: r.usd_per_bf16_pflop_hour)])
def test_sorts_are_ascending_with_unknowns_last(cat, sort, attr):
    rows = select_offers(cat, clouds=["aws"], sort=sort)
    values = [attr(r) for r in rows]
    known = [v for v in values if v is not None]
    assert known == sorted(known)
    assert all(v is None for v in values[len(known):])


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
     usd_per_hour: 55.5}
  - {cloud: gcp, instance_type: a3-ultragpu-8g, region: us-central1, pricing: on_demand,
     usd_per_hour: 80}
""")
    ov = load_catalog("packaged", overrides=f)
    by = {o.key: o for o in ov.offers}
    base = {o.key: o for o in cat.offers}
    p5 = ("aws", "p5.48xlarge", "us-east-1", "on_demand")
    assert by[p5].usd_per_hour == pytest.approx(98.32 * 0.7)  # most specific discount wins
    assert "overridden" in by[p5].flags and str(f) in by[p5].source
    g5 = ("aws", "g5.xlarge", "us-east-1", "on_demand")
    assert by[g5].usd_per_hour == pytest.approx(base[g5].usd_per_hour * 0.9)
    spot = ("aws", "p5.48xlarge", "us-east-1", "spot")
    assert by[spot].usd_per_hour == base[spot].usd_per_hour  # spot is not negotiated
    assert by[("aws", "p5.48xlarge", "us-east-1", "reserved_1y")].usd_per_hour == 55.5
    h200 = by[("gcp", "a3-ultragpu-8g", "us-central1", "on_demand")]
    assert h200.usd_per_hour == 80 and h200.price_usable
    assert cat.offers == tuple(base.values())  # the packaged catalog is untouched


@pytest.mark.parametrize("text,fragment", [
    ("discounts: [{cloud: aws}]", "missing 'percent'"),
    ("discounts: [{cloud: aws, percent: 150}]", "percent must be a number"),
    ("discounts: [{cloud: oracle, percent: 5}]", "cloud 'oracle' is not one of"),
    ("prices: [{cloud: aws, instance_type: p5.48xlarge}]", "missing"),
    ("prices: [{cloud: aws, instance_type: p5.48xlarge, region: us-east-1, pricing: spot, "
     "usd_per_hour: -1}]", "usd_per_hour must be"),
    ("foo: 1", "expected only the keys"),
    ("discounts: [{cloud: aws, percent: 5", "invalid YAML"),
])
def test_bad_override_files_are_explained(tmp_path, text, fragment):
    f = tmp_path / "ov.yaml"
    f.write_text(text)
    with pytest.raises(OverrideError, match=fragment) as exc:
        load_catalog("packaged", overrides=f)
    assert "To fix:" in str(exc.value)


def test_override_for_unknown_instance_type(tmp_path):
    f = tmp_path / "ov.yaml"
    f.write_text("prices: [{cloud: aws, instance_type: p5.48xlarg, region: us-east-1, "
                 "pricing: on_demand, usd_per_hour: 1}]")
    with pytest.raises(UnknownNameError, match="Did you mean 'p5.48xlarge'"):
        load_catalog("packaged", overrides=f)
