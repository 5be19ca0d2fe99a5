"""A region in a quota file or `launch probes --region` is matched as the catalog's filters
match it (``catalog.check_names``: trimmed, any case where one region matches so): 'US-EAST-1'
was refused with "Did you mean 'us-east-1'" beside `offers --region US-EAST-1` taking it."""

from __future__ import annotations

import pytest

from catalog import UnknownNameError
from planner.launch import spec_for_instance
from planner.search import parse_quotas


def test_a_quota_region_in_capitals_is_the_catalog_s_region(catalog):
    quotas = parse_quotas({"quotas": [{"cloud": "aws", "region": "US-EAST-1", "gpus": 64}]},
                          catalog)
    assert quotas.rules[0].region == "us-east-1"


def test_a_quota_region_of_another_cloud_is_still_refused(catalog):
    with pytest.raises(UnknownNameError, match="unknown aws region 'eastus'"):
        parse_quotas({"quotas": [{"cloud": "aws", "region": "eastus", "gpus": 64}]}, catalog)


@pytest.mark.parametrize("region", ["US-EAST-1", " us-east-1 "])
def test_a_launch_region_in_any_case_is_the_catalog_s_region(catalog, region):
    spec = spec_for_instance(catalog, "p5.48xlarge", 1, region=region)
    assert spec.region == "us-east-1"


def test_a_launch_region_that_is_none_stays_refused(catalog):
    with pytest.raises(UnknownNameError, match="Did you mean 'us-east-1'"):
        spec_for_instance(catalog, "p5.48xlarge", 1, region="us-esat-1")
