"""Alias resolution, filters, sorts and price overrides."""

from __future__ import annotations

import pytest

import catalog
from catalog import UnknownNameError, load_catalog, select_offers


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


@pytest.mark.parametrize("alias,canonical", [
    ("H100", "H100-SXM5-80GB"), ("h100", "H100-SXM5-80GB"), ("a100-80gb", "A100-SXM4-80GB"),
    ("A100_80GB", "A100-SXM4-80GB"), ("A100-40GB", "A100-SXM4-40GB"),
    ("v100-32gb", "V100-SXM2-32GB"),
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"), ("mi300x", "MI300X"), ("b200", "B200-SXM-180GB"),
    # GCP's accelerator types (README: "the names clouds and torch report") and torch's V100s
    ("nvidia-tesla-a100", "A100-SXM4-40GB"), ("nvidia-a100-80gb", "A100-SXM4-80GB"),
    ("nvidia-h100-mega-80gb", "H100-SXM5-80GB"), ("nvidia-h200-141gb", "H200-SXM-141GB"),
    ("nvidia-tesla-t4", "T4"), ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB"),
    ("Tesla V100-PCIE-16GB", "V100-PCIe-16GB"),
])
def test_aliases_resolve(cat, alias, canonical):
    assert cat.resolve_accelerator(alias) == canonical


def test_a_reported_gpu_name_is_matched_as_written(cat):
    """A probe report's "NVIDIA H100" may be a PCIe or an NVL card: a device's name (strict)
    is not shortened to the user alias "H100" as a typed --gpu is."""
    assert cat.resolve_accelerator("NVIDIA H100") == "H100-SXM5-80GB"
    with pytest.raises(UnknownNameError):
        cat.resolve_accelerator("NVIDIA H100", strict=True)
    assert cat.resolve_accelerator("NVIDIA H100 80GB HBM3", strict=True) == "H100-SXM5-80GB"


def test_typo_suggests_close_match(cat):
    with pytest.raises(UnknownNameError) as exc:
        cat.resolve_accelerator("H10O")
    assert "Did you mean 'H100'" in str(exc.value) and "To fix:" in str(exc.value)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"clouds": ["awz"]}, "unknown cloud 'awz'. Did you mean 'aws'"),
    ({"regions": ["us-east-9"]}, "unknown region 'us-east-9'"),
    ({"pricing": ["spott"]}, "Did you mean 'spot'"),
    # quoted as written, matched in the catalog's spelling (it echoed 'spot_instance')
    ({"pricing": ["Spot-Instance"]}, "unknown pricing model 'Spot-Instance'"),
    ({"pricing": ["ONDEMAND"]}, "unknown pricing model 'ONDEMAND'. Did you mean 'on_demand'"),
    ({"clouds": ["GCPP"]}, "unknown cloud 'GCPP'. Did you mean 'gcp'"),
])
def test_bad_filters_are_named(cat, kwargs, fragment):
    with pytest.raises(UnknownNameError, match=fragment):
        select_offers(cat, **kwargs)


@pytest.mark.parametrize("written,spelled", [
    ("ON_DEMAND", "on_demand"), ("On-Demand", "on_demand"), (" on demand ", "on_demand"),
    ("SPOT", "spot"), ("Reserved-1Y", "reserved_1y"), ("capacity block", "capacity_block"),
    ("spott", "spott"),  # unknown stays unknown: its close match is the caller's message
])
def test_pricing_models_are_taken_as_people_write_them(cat, written, spelled):
    assert catalog.canonical_pricing(written) == spelled
    if spelled in catalog.PRICING_MODELS:
        rows = select_offers(cat, pricing=[written], clouds=["AWS"])
        assert rows and {r.offer.pricing for r in rows} == {spelled}
        assert {r.offer.cloud for r in rows} == {"aws"}


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


def test_a_region_filter_matches_exactly_never_a_local_zone(cat):
    rows = select_offers(cat, clouds=["aws"], regions=["us-east-1"], instance_types=[
        "p5.48xlarge"], pricing=["on_demand"])
    assert [r.offer.region for r in rows] == ["us-east-1"]
    atl = select_offers(cat, regions=["us-east-1-atl-1"], instance_types=["p5.48xlarge"],
                        pricing=["on_demand"])
    assert atl and atl[0].as_dict()["region_kind"] == "local_zone"
    assert "us-east-1-atl-1" not in cat.regions("aws", kinds=["region"])
    assert {"us-gov-west-1", "us-east-1-wl1-bna1"} <= set(cat.regions("aws"))


def test_flagged_offers_can_be_left_out_or_listed_alone_with_their_reasons(cat):
    everything = select_offers(cat, clouds=["gcp"], gpus=["H100"])
    usable = select_offers(cat, clouds=["gcp"], gpus=["H100"], include_flagged=False)
    flagged = select_offers(cat, clouds=["gcp"], gpus=["H100"], only_flagged=True)
    assert len(usable) + len(flagged) == len(everything) and usable and flagged
    assert all(r.offer.price_usable for r in usable)
    assert all(not r.offer.price_usable and (r.offer.flag_reasons or r.offer.usd_per_hour
                                             is None) for r in flagged)
    assert {f for r in flagged for f in r.offer.flags} <= set(catalog.OFFER_FLAGS)
    assert len(cat.flagged_offers()) == sum(not o.price_usable for o in cat.offers)


@pytest.mark.parametrize("kwargs,fragment", [
    ({"max_price": float("nan")}, "--max-price must be a number above 0"),
    ({"max_price": float("inf")}, "--max-price must be a number above 0"),
    ({"max_price": -1.0}, "--max-price must be a number above 0"),
    ({"max_price": 0.0}, "--max-price must be a number above 0"),
    ({"max_price": 1e9}, "at most 100,000"),
    ({"min_gpus": 0}, "--min-gpus must be a whole number from 1"),
    ({"min_gpus": 10**12}, "--min-gpus must be a whole number from 1"),
    ({"sort": "cheap"}, "unknown sort"),
])
def test_bad_numeric_filters_are_refused(cat, kwargs, fragment):
    with pytest.raises(catalog.GpuplanError, match=fragment) as exc:
        select_offers(cat, **kwargs)
    assert "To fix:" in str(exc.value)
