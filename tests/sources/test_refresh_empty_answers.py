"""refresh_catalog and --prune against answers that priced nothing, or less than they
covered: an empty answer is no evidence that every offer is gone (hostile sweep: an empty
Azure answer plus --prune removed all 326 Azure offers, exit 0, no warning)."""

from __future__ import annotations

import datetime as _dt
from dataclasses import replace

import pytest
from sources_fixtures import FIXTURES, aws_fixture_source

from catalog import load_catalog
from catalog._refresh import catalog_status, refresh_catalog
from catalog.sources import CloudData, RefreshError

TODAY = _dt.date(2026, 2, 15)


class Answer:
    """A source that answers with what it is given: ``offers`` (the packaged ones of its
    cloud when None), ``regions`` as the regions it says it covered."""

    def __init__(self, packaged, cloud: str, *, offers=None, regions=(), warnings=()) -> None:
        self.cloud, self.packaged = cloud, packaged
        self.offers = offers if offers is not None else tuple(
            replace(o, as_of=TODAY, source="fake") for o in packaged.offers
            if o.cloud == cloud and o.usd_per_hour is not None)
        self.regions, self.warnings = tuple(regions), tuple(warnings)

    def fetch(self, regions, progress):
        used = {o.instance_type for o in self.offers}
        return CloudData(cloud=self.cloud, offers=tuple(self.offers), as_of=TODAY,
                         source="fake", regions=self.regions, warnings=self.warnings,
                         instance_types=tuple(t for t in self.packaged.instance_types
                                              if t.cloud == self.cloud and t.name in used))


def _keys(catalog, cloud: str) -> set:
    return {o.key for o in catalog.offers if o.cloud == cloud}


def test_a_cloud_that_priced_nothing_is_not_merged_even_with_prune(packaged):
    with pytest.raises(RefreshError) as info:
        refresh_catalog(clouds=["azure"], regions=None, prune=True,
                        sources={"azure": Answer(packaged, "azure", offers=())})
    text = str(info.value)
    assert text.startswith("no cloud could be refreshed, the active catalog was left "
                           "unchanged: azure returned no prices, which would read as every "
                           "offer gone; the catalog keeps its azure offers. To fix: retry "
                           "later"), text
    assert "\n" not in text
    assert load_catalog().name == "packaged" and not catalog_status()["stored"]


def test_the_other_clouds_go_on_and_the_empty_one_is_said(packaged):
    warning = "azure: 4 price items skipped (for X): 4 had a currency other than USD ('EUR')"
    result = refresh_catalog(
        clouds=["aws", "azure"], regions=["us-east-1", "eastus"], prune=True,
        sources={"aws": Answer(packaged, "aws", regions=["us-east-1"]),
                 "azure": Answer(packaged, "azure", offers=(), warnings=[warning])})
    assert result.refreshed == ("aws",)
    assert result.skipped["azure"].startswith(
        "azure returned no prices for us-east-1, eastus (azure: 4 price items skipped (for X): "
        "4 had a currency other than USD ('EUR')), which would read as every offer gone")
    assert not [c for c in result.removed if c.cloud == "azure"]
    assert _keys(load_catalog(), "azure") == _keys(packaged, "azure")


def test_offers_without_a_price_are_no_prices(packaged):
    unpriced = tuple(replace(o, usd_per_hour=None, flags=("price_unknown",))
                     for o in packaged.offers if o.cloud == "gcp")[:5]
    with pytest.raises(RefreshError, match="gcp returned no prices"):
        refresh_catalog(clouds=["gcp"], regions=None, prune=True,
                        sources={"gcp": Answer(packaged, "gcp", offers=unpriced)})


def test_prune_removes_nothing_where_the_source_names_no_region(packaged):
    """CloudData.regions () was read as "every region covered": one priced offer and no
    region named, and --prune removed every other offer of the cloud."""
    one = next(o for o in packaged.offers if o.cloud == "azure" and o.usd_per_hour)
    result = refresh_catalog(clouds=["azure"], regions=None, prune=True,
                             sources={"azure": Answer(packaged, "azure", offers=(one,))})
    assert result.removed == ()
    assert _keys(load_catalog(), "azure") == _keys(packaged, "azure")


def test_prune_stays_inside_the_regions_asked_for(packaged):
    one = next(o for o in packaged.offers if o.cloud == "azure" and o.region == "eastus"
               and o.usd_per_hour)
    other = sorted({o.region for o in packaged.offers if o.cloud == "azure"} - {"eastus"})
    result = refresh_catalog(
        clouds=["azure"], regions=["eastus"], prune=True,
        sources={"azure": Answer(packaged, "azure", offers=(one,),
                                 regions=["eastus", *other])})
    assert result.removed and {c.region for c in result.removed} == {"eastus"}


def test_an_aws_price_file_in_another_currency_keeps_its_offers_under_prune(server, packaged):
    """us-east-1's file all in CNY: dropped with no word, and --prune removed all of
    us-east-1's offers (1,315 in the sweep)."""
    source = aws_fixture_source(server, packaged, {
        "us-east-1": (FIXTURES / "aws_ec2_us-east-1.csv").read_bytes().replace(
            b'","USD"', b'","CNY"'),
        "us-east-1-atl-1": (FIXTURES / "aws_ec2_us-east-1-atl-1.csv").read_bytes()})
    result = refresh_catalog(clouds=["aws"], regions=None, prune=True, sources={"aws": source})
    assert not [c for c in result.removed if c.region == "us-east-1"]
    assert any("currency other than USD ('CNY'" in w for w in result.warnings)
    p5 = next(o for o in load_catalog().offers
              if o.key == ("aws", "p5.48xlarge", "us-east-1", "on_demand"))
    assert p5 == next(o for o in packaged.offers if o.key == p5.key)  # price and date kept


def test_a_catalog_that_does_not_load_back_is_called_a_refresh_bug(packaged):
    """Two offers that differ only by spaces around the region were written, then refused by
    the loader with "…/catalogs/.tmp-refreshed-…/offers.csv: duplicate offer … To fix: run
    `gpuplan catalog use packaged`": a temporary file, and a fix that fixes nothing."""
    from catalog import _install

    offer = next(o for o in packaged.offers if o.cloud == "azure" and o.region == "eastus")
    spaced = replace(offer, region="  eastus  ")
    types = tuple(t for t in packaged.instance_types if t.key == (offer.cloud,
                                                                 offer.instance_type))
    with pytest.raises(Exception) as info:
        _install.install(packaged.accelerators, types, (offer, spaced),
                         {"name": "refreshed", "clouds": {}}, name="refreshed-x")
    text = str(info.value)
    assert text.startswith("the new catalog does not load back (offers.csv: duplicate offer")
    assert "a bug in gpuplan's catalog refresh" in text and ".tmp-" not in text
    assert "catalog use packaged" not in text and "\n" not in text
    assert load_catalog().name == "packaged"
