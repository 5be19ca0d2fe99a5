"""The cloud registry: one place per cloud, region kinds, and the advisor-bucket conversion."""

from __future__ import annotations

import math

import pytest

import catalog
from catalog import AWS_ADVISOR_BUCKETS, CLOUDS, aws_bucket_rate


def test_clouds_iterate_as_names_and_carry_their_facts():
    assert list(CLOUDS) == ["aws", "gcp", "azure"] and "gcp" in CLOUDS
    assert ", ".join(CLOUDS) == "aws, gcp, azure"
    gcp = CLOUDS["gcp"]
    assert gcp.spot_to_on_demand_max == 0.40 and "60-91%" in gcp.spot_bound_source
    assert gcp.spot_interruptions_per_hour == pytest.approx(1 / 24)
    # from the checkout: gpuplan is on no package index ('gpuplan[aws]' installs nothing)
    assert CLOUDS["aws"].install_hint == "pip install -e '.[aws]' in the gpuplan checkout"
    for c in CLOUDS.values():
        assert c.spot_interruptions_source and c.spot_bound_source


@pytest.mark.parametrize("region,kind,parent", [
    ("us-east-1", "region", "us-east-1"),
    ("us-east-1-atl-1", "local_zone", "us-east-1"),
    ("us-west-2-lax-1", "local_zone", "us-west-2"),
    ("us-east-1-wl1", "wavelength_zone", "us-east-1"),
    ("us-east-1-wl1-bos1", "wavelength_zone", "us-east-1"),
    ("eu-west-2-wl2-man1", "wavelength_zone", "eu-west-2"),
    ("us-gov-west-1", "govcloud", "us-gov-west-1"),
    ("cn-north-1", "china", "cn-north-1"),
])
def test_aws_region_kinds(region, kind, parent):
    assert CLOUDS["aws"].region_kind(region) == kind
    assert CLOUDS["aws"].parent_region(region) == parent


def test_azure_government_is_its_own_kind():
    assert CLOUDS["azure"].region_kind("usgovvirginia") == "govcloud"
    assert CLOUDS["azure"].region_kind("eastus") == "region"
    assert CLOUDS["gcp"].region_kind("us-central1") == "region"


def test_a_monthly_bucket_becomes_an_hourly_poisson_rate_at_its_upper_edge():
    for label, edge in AWS_ADVISOR_BUCKETS.items():
        rate = aws_bucket_rate(label)
        if edge is None:
            assert rate is None  # ">20%": no upper edge, the cloud default applies
            continue
        # P(at least one interruption in a 730-hour month) equals the bucket's upper edge
        assert 1 - math.exp(-rate * 730) == pytest.approx(edge, abs=1e-4)  # rate has 8 dp
    rates = [aws_bucket_rate(b) for b in ("<5%", "5-10%", "10-15%", "15-20%")]
    assert rates == sorted(rates) and rates[-1] < CLOUDS["aws"].spot_interruptions_per_hour
    assert aws_bucket_rate("") is None and aws_bucket_rate("unknown") is None


def test_the_public_surface_has_no_private_module_names():
    assert all(not name.startswith("_") for name in catalog.__all__)
    for name in ("parse_overrides", "load_overrides", "data_dir", "Catalog", "use_catalog",
                 "refresh_catalog", "catalog_status", "stored_catalogs", "PRICING_TERM_HOURS"):
        assert name in catalog.__all__ and getattr(catalog, name)
    assert catalog.data_dir().name  # GPUPLAN_HOME in tests; nothing created
