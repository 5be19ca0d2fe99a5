"""refresh_catalog: merge by offer key (never lose rows), prune, anomaly rules, integrity checks,
atomic install, the diff; catalog_status and use_catalog."""

from __future__ import annotations

import datetime as _dt
import json
from dataclasses import replace
from pathlib import Path

import pytest
from sources_fixtures import FIXTURES, aws_fixture_source

from catalog import _paths, load_catalog
from catalog._refresh import catalog_status, check_integrity, refresh_catalog, use_catalog
from catalog.sources import CloudData, RefreshError, SourceUnavailable
from catalog.sources._common import run_per_region

TODAY = _dt.date(2026, 2, 15)  # after the packaged AWS prices (2026-01-21)


class FakeAws:
    """Re-emits the packaged AWS on-demand and spot rows of two regions, p5 50 % dearer, the
    rest 2 %, plus one new instance type; leaves out dl1. ``fail_in`` makes that region raise."""

    cloud = "aws"

    def __init__(self, packaged, *, fail_in: str | None = None, mutate=None) -> None:
        self.packaged, self.fail_in, self.mutate = packaged, fail_in, mutate or (lambda o: o)

    def _region(self, region: str):
        if region == self.fail_in:
            raise ConnectionResetError("connection reset by peer")
        out = []
        for o in self.packaged.offers:
            if (o.cloud == "aws" and o.region == region and o.instance_type != "dl1.24xlarge"
                    and o.pricing in ("on_demand", "spot") and o.usd_per_hour is not None):
                factor = 1.5 if o.instance_type == "p5.48xlarge" else 1.02
                out.append(replace(o, usd_per_hour=round(o.usd_per_hour * factor, 5),
                                   as_of=TODAY, source="fake", flags=(), flag_reasons=""))
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
                         as_of=TODAY, source="fake", regions=tuple(regions),
                         covered_pricing=("on_demand", "spot"))


class GpusOnlyGcp:
    """A GCP refresh that, like the old source, never looks at TPUs."""

    cloud = "gcp"

    def __init__(self, packaged) -> None:
        self.packaged = packaged

    def fetch(self, regions, progress):
        offers = tuple(replace(o, as_of=TODAY, source="gcp fake")
                       for o in self.packaged.offers
                       if o.cloud == "gcp" and o.instance_type.startswith("a3-"))
        used = {o.instance_type for o in offers}
        return CloudData(cloud="gcp", offers=offers, as_of=TODAY, source="gcp fake",
                         instance_types=tuple(t for t in self.packaged.instance_types
                                              if t.cloud == "gcp" and t.name in used))


class Unavailable:
    def __init__(self, cloud: str) -> None:
        self.cloud = cloud

    def fetch(self, regions, progress):
        raise SourceUnavailable(self.cloud, "cannot reach it. To fix: check your network")


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _key(o):
    return o.key


def test_refresh_installs_and_reports_the_diff(packaged):
    steps = []
    result = refresh_catalog(clouds=["aws", "gcp"], regions=None,
                             progress=lambda *a: steps.append(a),
                             sources={"aws": FakeAws(packaged), "gcp": Unavailable("gcp")})
    assert result.refreshed == ("aws",)
    assert result.skipped == {"gcp": "gcp: cannot reach it. To fix: check your network"}
    assert ("aws", "p9.fake") in result.new_instance_types
    assert result.removed_instance_types == ()  # dl1 was not fetched, so it stays
    assert [(c.instance_type, c.pricing) for c in result.added] == [("p9.fake", "on_demand")]
    large = {(c.instance_type, c.region, c.pricing) for c in result.large_price_changes}
    assert ("p5.48xlarge", "us-east-1", "on_demand") in large
    assert not any(c.instance_type != "p5.48xlarge" for c in result.large_price_changes)
    assert len(result.price_changes) > len(result.large_price_changes)  # the 2 % moves too
    assert result.removed == () and result.kept_unfetched["aws"] > 9000
    as_json = json.loads(json.dumps(result.to_dict()))
    assert as_json["price_changes"][0]["change_pct"] == 50.0
    assert ("aws", "us-east-1", 1, 2) in steps or ("aws", "us-west-2", 1, 2) in steps
    active = load_catalog()
    assert active.name == result.name and active.name.startswith("refreshed-")
    assert active.as_of("aws") == TODAY
    # the skipped cloud and the cloud not asked for keep their rows and dates
    assert active.as_of("gcp") == packaged.as_of("gcp")
    assert [o for o in active.offers if o.cloud == "azure"] == \
        [o for o in packaged.offers if o.cloud == "azure"]
    status = catalog_status()
    # the packaged snapshot was active (implicitly): `catalog use previous` goes back to it
    assert status["active"] == result.name and status["previous"] == "packaged"
    second = refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    status = catalog_status()
    assert status["active"] == second.name and status["previous"] == result.name
    assert status["clouds"]["aws"]["as_of"] == TODAY.isoformat()


def test_a_refresh_keeps_every_row_it_did_not_fetch(packaged):
    # Issue #13: one GCP refresh that never fetched TPU SKUs deleted 175 TPU types and 1,639
    # offers. Merged by offer key, every row the refresh did not return keeps price and date.
    refresh_catalog(clouds=["gcp"], regions=None, sources={"gcp": GpusOnlyGcp(packaged)})
    after = load_catalog()
    before_tpu = {o.key: o for o in packaged.offers if o.instance_type.startswith("tpu-")}
    after_tpu = {o.key: o for o in after.offers if o.instance_type.startswith("tpu-")}
    assert before_tpu == after_tpu and len(before_tpu) > 1000
    assert {t.key for t in packaged.instance_types} <= {t.key for t in after.instance_types}
    a3 = [o for o in after.offers if o.instance_type == "a3-megagpu-8g"]
    assert a3 and all(o.as_of == TODAY for o in a3)


def test_prune_removes_only_what_the_refresh_covered(packaged):
    result = refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)},
                             prune=True)
    after = load_catalog()
    removed = {(c.instance_type, c.region, c.pricing) for c in result.removed}
    assert ("dl1.24xlarge", "us-east-1", "on_demand") in removed  # covered, not returned
    assert ("p5e.48xlarge", "us-west-2", "on_demand") in removed
    kept = {o.key for o in after.offers if o.cloud == "aws"}
    # the refresh covered two regions: the others are not its to prune
    assert ("aws", "p5.48xlarge", "eu-north-1", "on_demand") in kept
    # reserved prices were not covered by this refresh: kept even with --prune
    assert ("aws", "p5.48xlarge", "us-east-1", "reserved_3y", "standard/none") in kept
    assert ("aws", "dl1.24xlarge") in result.removed_instance_types
    assert ("aws", "trn2.48xlarge") in {t.key for t in after.instance_types}  # never priced


def test_the_anomaly_rules_run_over_the_merged_catalog(packaged):
    def dear_spot(o):
        if o.instance_type == "g5.xlarge" and o.region == "us-east-1" and o.pricing == "spot":
            return replace(o, usd_per_hour=50.0)
        return o

    refresh_catalog(clouds=["aws"], regions=None,
                    sources={"aws": FakeAws(packaged, mutate=dear_spot)})
    by = {o.key: o for o in load_catalog().offers}
    spot = by[("aws", "g5.xlarge", "us-east-1", "spot")]
    assert "spot_not_below_on_demand" in spot.flags and "spot 50 >=" in spot.flag_reasons
    assert not spot.price_usable


def test_a_refresh_onto_a_damaged_active_catalog_starts_from_the_packaged_one(packaged):
    # every command refuses a damaged active catalog and names `catalog refresh` as a fix;
    # the refresh itself loaded the active catalog first and failed the same way
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    active = load_catalog()
    offers = active.path / "offers.csv"
    lines = offers.read_text().splitlines(keepends=True)
    offers.write_text("".join(lines[:-5]))  # cut at a row boundary
    from catalog import CatalogNotice

    with pytest.warns(CatalogNotice, match="the active catalog cannot be read .*incomplete.*"
                                           "starts from the packaged snapshot"):
        refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    now = load_catalog()
    assert now.name != active.name
    assert ({o.key for o in now.offers if o.cloud == "gcp"}
            == {o.key for o in packaged.offers if o.cloud == "gcp"})


def test_region_failing_mid_refresh_leaves_everything_untouched(packaged):
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    root = _paths.catalogs_dir()
    before = _snapshot(root)
    with pytest.raises(RefreshError) as info:
        refresh_catalog(clouds=["aws"], regions=None,
                        sources={"aws": FakeAws(packaged, fail_in="us-west-2")})
    assert "region us-west-2 failed" in str(info.value) and "To fix:" in str(info.value)
    assert _snapshot(root) == before  # every catalog and both markers, byte for byte
    assert not [p for p in root.iterdir() if p.name.startswith(".")]  # no work left behind


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
            return replace(data, instance_types=(*data.instance_types, data.instance_types[0]))

        source.fetch = fetch
    with pytest.raises(RefreshError) as info:
        refresh_catalog(clouds=["aws"], regions=None, sources={"aws": source})
    assert ("price $0.0" if fault == "zero_price" else "duplicate instance type") in \
        str(info.value)
    assert not catalog_status()["stored"]
    assert load_catalog().name == "packaged"


def test_integrity_checks_memory_and_references(packaged):
    p5 = packaged.instance_type_by_key("aws", "p5.48xlarge")
    wrong = replace(p5, gpu_memory_gib=40.0)
    problems = check_integrity(packaged.accelerators, [wrong], [])
    assert any("disagrees" in p for p in problems)
    offer = next(o for o in packaged.offers if o.instance_type == "p5.48xlarge"
                 and o.pricing == "on_demand")
    assert any("unknown instance type" in p for p in check_integrity(packaged.accelerators, [],
                                                                      [offer]))
    spot = next(o for o in packaged.offers if o.instance_type == "p5.48xlarge"
                and o.pricing == "spot" and o.region == offer.region)
    too_high = replace(spot, usd_per_hour=offer.usd_per_hour * 2, flags=())
    assert any("not below on-demand" in p for p in check_integrity(
        packaged.accelerators, [p5], [offer, too_high]))


def test_refresh_where_every_cloud_is_skipped_changes_nothing(packaged):
    with pytest.raises(RefreshError, match="no cloud could be refreshed.*check your network"):
        refresh_catalog(clouds=["aws"], regions=None, sources={"aws": Unavailable("aws")})
    assert load_catalog().name == "packaged"
    assert not catalog_status()["refreshed_exists"]


def test_use_catalog_switches_and_explains_a_missing_refresh(packaged):
    with pytest.raises(Exception, match="no refreshed catalog. To fix: run `gpuplan catalog"):
        use_catalog("refreshed")
    result = refresh_catalog(clouds=["aws"], regions=None, sources={"aws": FakeAws(packaged)})
    assert load_catalog().name == result.name
    use_catalog("packaged")
    assert load_catalog().name == "packaged" and catalog_status()["active"] == "packaged"
    use_catalog("refreshed")
    assert catalog_status()["active"] == result.name
    with pytest.raises(Exception, match="unknown catalog"):
        use_catalog("nightly")


def test_an_aws_refresh_from_the_public_files_end_to_end(server, packaged):
    """The real AWS source against the fixture files: no credentials, nothing else lost."""
    source = aws_fixture_source(server, packaged, {
        "us-east-1": (FIXTURES / "aws_ec2_us-east-1.csv").read_bytes()})
    result = refresh_catalog(clouds=["aws"], regions=None, sources={"aws": source})
    by = {o.key: o for o in load_catalog().offers}
    p5 = by[("aws", "p5.48xlarge", "us-east-1", "on_demand")]
    assert p5.usd_per_hour == 55.04 and p5.as_of == _dt.date(2026, 1, 15)
    assert by[("aws", "p5.48xlarge", "us-east-1", "spot")].interruption_bucket == "5-10%"
    assert by[("aws", "p5.48xlarge", "eu-north-1", "on_demand")] == next(
        o for o in packaged.offers if o.key == ("aws", "p5.48xlarge", "eu-north-1",
                                                "on_demand"))
    assert result.kept_unfetched["aws"] > 10_000
    assert sum(o.cloud == "gcp" for o in by.values()) == sum(o.cloud == "gcp"
                                                            for o in packaged.offers)


def test_a_ctrl_c_during_the_downloads_stops_at_once():
    """Ctrl-C printed "interrupted" and then waited for every download in flight (the thread
    pool's workers were joined), and a second Ctrl-C then printed a traceback (hostile sweep:
    `catalog refresh`). A download here takes 30 s; the interrupt must not wait for it."""
    import os
    import signal
    import threading
    import time

    release = threading.Event()
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            run_per_region("aws", ["us-east-1", "us-west-2"], lambda r: release.wait(30),
                           None, max_workers=2)
        assert time.perf_counter() - start < 5
    finally:
        timer.cancel()
        release.set()


def test_regions_come_back_in_order_and_none_starts_after_a_failure():
    started = []

    def work(region):
        started.append(region)
        if region == "b":
            raise ConnectionResetError("connection reset by peer")
        return region.upper()

    assert run_per_region("aws", ["c", "a", "c", "d"], lambda r: r.upper(), None,
                          max_workers=3) == {"c": "C", "a": "A", "d": "D"}
    with pytest.raises(RefreshError, match="aws: region b failed: connection reset by peer"):
        run_per_region("aws", ["a", "b", "c", "d"], work, None, max_workers=1)
    assert started == ["a", "b"]
