"""refresh_catalog: merge, integrity checks, atomic install, diff; use_catalog; catalog_status."""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import replace
from pathlib import Path

import pytest

from catalog import _paths
from catalog._load import load_catalog
from catalog._refresh import catalog_status, check_integrity, refresh_catalog, use_catalog
from catalog.sources import AwsSource, CloudData, RefreshError, SourceUnavailable
from catalog.sources._common import run_per_region

TODAY = _dt.date(2026, 1, 15)


class PackagedCloud:
    """A source that re-emits one cloud's packaged rows unchanged."""

    def __init__(self, packaged, cloud: str) -> None:
        self.packaged, self.cloud = packaged, cloud

    def fetch(self, regions, progress):
        return CloudData(cloud=self.cloud,
                         instance_types=tuple(t for t in self.packaged.instance_types
                                              if t.cloud == self.cloud),
                         offers=tuple(o for o in self.packaged.offers if o.cloud == self.cloud),
                         as_of=TODAY, source="packaged rows (test)")


class FakeAws:
    """A source that re-emits the packaged AWS rows for two regions, with p5 price changes,
    one new instance type and one dropped; ``fail_in`` makes that region raise."""

    cloud = "aws"

    def __init__(self, packaged, *, fail_in: str | None = None, mutate=None) -> None:
        self.packaged, self.fail_in, self.mutate = packaged, fail_in, mutate or (lambda o: o)

    def _region(self, region: str):
        if region == self.fail_in:
            raise ConnectionResetError("connection reset by peer")
        out = []
        for o in self.packaged.offers:
            if o.cloud == "aws" and o.region == region and o.instance_type != "dl1.24xlarge":
                factor = 1.5 if o.instance_type == "p5.48xlarge" else 1.02
                price = None if o.usd_per_hour is None else round(o.usd_per_hour * factor, 5)
                out.append(replace(o, usd_per_hour=price, as_of=TODAY, source="fake"))
        return out

    def fetch(self, regions, progress):
        regions = ["us-east-1", "us-west-2"]
        per_region = run_per_region("aws", regions, self._region, progress, max_workers=2)
        offers = [self.mutate(o) for r in regions for o in per_region[r]]
        used = {o.instance_type for o in offers}
        types = [t for t in self.packaged.instance_types if t.cloud == "aws" and t.name in used]
        new = replace(types[0], name="p9.fake")
        offers.append(replace(offers[0], instance_type="p9.fake"))
        return CloudData(cloud="aws", instance_types=tuple([*types, new]), offers=tuple(offers),
                         as_of=TODAY, source="fake", regions=tuple(regions))


class Unavailable:
    def __init__(self, cloud: str) -> None:
        self.cloud = cloud

    def fetch(self, regions, progress):
        raise SourceUnavailable(self.cloud, "cannot reach it. To fix: check your network")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def test_refresh_installs_and_reports_the_diff(packaged):
    steps = []
    result = refresh_catalog(clouds=["aws", "gcp"], regions=None,
                             progress=lambda *a: steps.append(a),
                             sources={"aws": FakeAws(packaged), "gcp": Unavailable("gcp")})
    assert result.refreshed == ("aws",)
    assert result.skipped == {"gcp": "gcp: cannot reach it. To fix: check your network"}
    assert ("aws", "p9.fake") in result.new_instance_types
    assert ("aws", "dl1.24xlarge") in result.removed_instance_types
    changed = {(c.instance_type, c.region, c.pricing) for c in result.price_changes}
    assert ("p5.48xlarge", "us-east-1", "on_demand") in changed
    assert not any(c.instance_type != "p5.48xlarge" for c in result.price_changes)  # 2 % moves
    assert all(c.change_fraction == pytest.approx(0.5, abs=1e-3) for c in result.price_changes)
    assert json.loads(json.dumps(result.to_dict()))["price_changes"][0]["change_pct"] == 50.0
    assert ("aws", "us-east-1", 1, 2) in steps or ("aws", "us-west-2", 1, 2) in steps
    active = load_catalog()
    assert active.name == "refreshed" and active.as_of("aws") == TODAY
    # the skipped cloud and the cloud not asked for keep their rows and dates
    assert active.as_of("gcp") == packaged.as_of("gcp")
    assert sum(o.cloud == "azure" for o in active.offers) == sum(
        o.cloud == "azure" for o in packaged.offers)
    assert result.counts["gcp"]["offers"] == sum(o.cloud == "gcp" for o in packaged.offers)
    assert catalog_status()["previous_exists"] is False
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    status = catalog_status()
    assert status["active"] == "refreshed" and status["previous_exists"] is True
    assert status["clouds"]["aws"]["as_of"] == TODAY.isoformat()


def test_region_failing_mid_refresh_leaves_everything_untouched(packaged):
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    root = _paths.catalogs_dir()
    before = _snapshot(root)
    with pytest.raises(RefreshError) as info:
        refresh_catalog(clouds=["aws"], regions=None,
                        sources={"aws": FakeAws(packaged, fail_in="us-west-2")})
    assert "region us-west-2 failed" in str(info.value) and "To fix:" in str(info.value)
    assert _snapshot(root) == before  # refreshed, previous and the active marker, byte for byte
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no temp dirs left


@pytest.mark.parametrize("fault", ["zero_price", "duplicate"])
def test_integrity_failures_reject_the_refresh(packaged, fault):
    def zero(offer):
        if offer.instance_type == "p5.48xlarge" and offer.pricing == "on_demand":
            object.__setattr__(offer, "usd_per_hour", 0.0)  # a bug slipping past __post_init__
        return offer

    source = FakeAws(packaged, mutate=zero if fault == "zero_price" else None)
    if fault == "duplicate":
        original = source.fetch

        def fetch(regions, progress):
            data = original(regions, progress)
            return replace(data, offers=(*data.offers, data.offers[0]))

        source.fetch = fetch
    with pytest.raises(RefreshError) as info:
        refresh_catalog(clouds=["aws"], regions=None, sources={"aws": source})
    assert ("price $0.0" if fault == "zero_price" else "duplicate offer") in str(info.value)
    assert not _paths.refreshed_catalog_dir().exists()
    assert load_catalog().name == "packaged"


def test_integrity_checks_memory_and_references(packaged):
    p5 = packaged.instance_type_by_key("aws", "p5.48xlarge")
    wrong = replace(p5, gpu_memory_gib=40.0)
    problems = check_integrity(packaged.accelerators, [wrong], [])
    assert any("disagrees" in p for p in problems)
    offer = next(o for o in packaged.offers if o.instance_type == "p5.48xlarge")
    assert any("unknown instance type" in p for p in check_integrity(packaged.accelerators, [],
                                                                      [offer]))
    spot = next(o for o in packaged.offers if o.instance_type == "p5.48xlarge"
                and o.pricing == "spot" and o.region == offer.region)
    too_high = replace(spot, usd_per_hour=offer.usd_per_hour * 2, flags=())
    assert any("above on-demand" in p for p in check_integrity(packaged.accelerators, [p5],
                                                                [offer, too_high]))


def test_unavailable_aws_is_skipped_with_its_hint(packaged, aws_env, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    result = refresh_catalog(clouds=["aws", "azure"], regions=None,
                             sources={"aws": AwsSource(reference=packaged),
                                      "azure": PackagedCloud(packaged, "azure")})
    assert "run `aws configure`" in result.skipped["aws"]
    assert result.counts["aws"]["offers"] == sum(o.cloud == "aws" for o in packaged.offers)


def test_refresh_where_every_cloud_is_skipped_changes_nothing(packaged, aws_env, monkeypatch):
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(RefreshError, match="no cloud could be refreshed.*aws configure"):
        refresh_catalog(clouds=["aws"], regions=None,
                        sources={"aws": AwsSource(reference=packaged)})
    assert load_catalog().name == "packaged"
    assert not catalog_status()["refreshed_exists"]


def test_use_catalog_switches_and_explains_a_missing_refresh(packaged):
    with pytest.raises(Exception, match="no refreshed catalog. To fix: run `gpuplan catalog"):
        use_catalog("refreshed")
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    assert load_catalog().name == "refreshed"
    use_catalog("packaged")
    assert load_catalog().name == "packaged" and catalog_status()["active"] == "packaged"
    use_catalog("refreshed")
    assert catalog_status()["active"] == "refreshed"
    with pytest.raises(Exception, match="unknown catalog"):
        use_catalog("nightly")
