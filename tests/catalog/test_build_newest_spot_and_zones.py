"""Two builder defects the price audit found (catalog/_build), each checked on a fresh build
from the shared reference and on the packaged catalog built from it:

- AWS: 122 rows of aws_prices_2025-11-30.csv give the spot average (and the Advisor bucket)
  but no minimum; the builder skipped them, so 58 (type, region) pairs kept the v7 table's
  ~2025-03 spot price without a bucket and 64 had no spot offer at all.
- GCP: "the newest zones speak for the region" let v8's host row for asia-southeast1-a, which
  has no A100 x1/x2 GPU row in either table, make a2-highgpu-1g/2g there ``price_unknown``
  although zones b and c are priced (v8 host + v7 GPU).
"""

from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from pathlib import Path

import pytest

from catalog import aws_bucket_rate, load_catalog
from catalog._build import _gcp
from catalog._build._common import REFERENCE_FILES

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(),
                                     reason="shared reference not beside the checkout")
MID = dt.date(2025, 11, 30)
V8, V7 = dt.date(2025, 4, 1), dt.date(2025, 1, 1)


def _rows(name: str) -> list[dict[str, str]]:
    with open(REFERENCE / name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module", params=["built", "packaged"])
def offers(request):
    if request.param == "packaged":
        cat = load_catalog("packaged")
        return {o.key: o for o in cat.offers}
    if not REFERENCE.is_dir():
        pytest.skip("shared reference not beside the checkout")
    from catalog._build import build_snapshot

    return {o.key: o for o in build_snapshot(REFERENCE).offers}


# -- AWS: a spot average with no minimum is still the newest spot price -----------------------

@needs_reference
def test_aws_spot_rows_with_only_an_average_are_priced_at_it_with_their_date_and_bucket(offers):
    rows = [r for r in _rows("aws_prices_2025-11-30.csv") if float(r["gpu_count"]) >= 1
            and not r["usd_per_hour_spot_min"] and r["usd_per_hour_spot_avg"]]
    assert len(rows) == 122  # the audit's count: if the reference changes, look again
    mid_source = REFERENCE_FILES["aws_prices_2025-11-30.csv"].source
    for r in rows:
        key = ("aws", r["instance_type"], r["region"], "spot")
        assert key in offers, key  # 64 of them had no spot offer at all
        o = offers[key]
        avg, bucket = float(r["usd_per_hour_spot_avg"]), r["spot_interruption_frequency"]
        assert o.usd_per_hour == pytest.approx(avg) == o.usd_per_hour_zone_mean, key
        assert (o.as_of, o.as_of_approximate) == (MID, False), key  # not v7's ~2025-03
        assert o.interruption_bucket == bucket, key
        assert o.interruption_rate_per_hour == aws_bucket_rate(bucket), key
        # the price is the zones' average, not the cheapest zone: the source says which
        assert o.source.startswith(mid_source) and "average" in o.source, key
        assert o.usd_per_hour_zone_max is None and o.zone == "", key


@needs_reference
def test_aws_the_audits_examples(offers):
    g4 = offers[("aws", "g4dn.12xlarge", "af-south-1", "spot")]
    assert (g4.usd_per_hour, g4.as_of, g4.interruption_bucket) == (0.519, MID, "<5%")
    assert g4.interruption_rate_per_hour == pytest.approx(7.026e-05)
    for name, region in (("p5.48xlarge", "ap-southeast-3"), ("p5en.48xlarge", "eu-south-2")):
        assert offers[("aws", name, region, "spot")].as_of == MID


@needs_reference
def test_aws_spot_with_a_minimum_is_still_the_cheapest_zone(offers):
    mid_source = REFERENCE_FILES["aws_prices_2025-11-30.csv"].source
    for r in _rows("aws_prices_2025-11-30.csv"):
        if float(r["gpu_count"]) < 1 or not r["usd_per_hour_spot_min"]:
            continue
        o = offers[("aws", r["instance_type"], r["region"], "spot")]
        assert o.usd_per_hour == pytest.approx(float(r["usd_per_hour_spot_min"]))
        assert o.usd_per_hour_zone_mean == pytest.approx(float(r["usd_per_hour_spot_avg"]))
        assert o.source == mid_source


# -- GCP: a zone with no price hides no priced zone --------------------------------------------

@needs_reference
@pytest.mark.parametrize("machine, on_demand, spot", [
    ("a2-highgpu-1g", 2.61806, 1.66014), ("a2-highgpu-2g", 5.23612, 3.32027)])
def test_gcp_a2_in_asia_southeast1_is_priced_from_its_priced_zones(offers, machine, on_demand,
                                                                   spot):
    for pricing, usd in (("on_demand", on_demand), ("spot", spot)):
        o = offers[("gcp", machine, "asia-southeast1", pricing)]
        assert "price_unknown" not in o.flags, o.flag_reasons
        assert o.usd_per_hour == pytest.approx(usd, abs=1e-5)
        assert (o.as_of, o.as_of_approximate) == (V7, True)  # v8 host + v7 GPU: the older date
        assert "v7" in o.source and "v8" in o.source


@needs_reference
def test_gcp_no_machine_is_price_unknown_where_a_zone_has_host_and_gpu_prices(offers):
    """Re-derived from the two tables: a region where some zone has both a host and a GPU
    on-demand price (in either table) has an on-demand price."""
    host, gpu, region_of = set(), set(), {}
    for name in ("gcp_accelerator_vms_v8_partial.csv", "gcp_accelerator_vms.csv"):
        for r in _rows(name):
            region_of[r["AvailabilityZone"]] = r["Region"]
            if r["Price"] and r["InstanceType"]:
                host.add((r["InstanceType"], r["AvailabilityZone"]))
            elif r["Price"]:
                gpu.add((r["AcceleratorName"], int(r["AcceleratorCount"]), r["AvailabilityZone"]))
    priced = defaultdict(set)
    for machine, zone in host:
        if (*_gcp.machine_gpus(machine), zone) in gpu:
            priced[machine].add(region_of[zone])
    assert priced
    for machine, regions in priced.items():
        for region in regions:
            o = offers[("gcp", machine, region, "on_demand")]
            assert "price_unknown" not in o.flags, (machine, region, o.flag_reasons)


def _zone(usd, spot, *files, flags=None) -> _gcp.ZonePrice:
    return _gcp.ZonePrice(usd, spot, frozenset(files), flags=dict(flags or {}))


def test_gcp_region_offers_skip_newer_zones_without_a_price():
    unknown = {"price_unknown": "no 1x A100 GPU price in z-a"}
    zones = {"z-a": _zone(None, None, _gcp.F8, flags=unknown),
             "z-b": _zone(3.0, 1.2, _gcp.F8, _gcp.F7), "z-c": _zone(3.0, 1.0, _gcp.F8, _gcp.F7)}
    by = {o.pricing: o for o in _gcp._region_offers("m", "r", zones)}
    assert (by["on_demand"].usd_per_hour, by["on_demand"].zone_count) == (3.0, 2)
    assert (by["spot"].usd_per_hour, by["spot"].zone, by["spot"].zone_count) == (1.0, "z-c", 2)
    for o in by.values():
        assert (o.as_of, o.flags) == (V7, ())


def test_gcp_region_offers_newest_priced_zones_still_speak_for_the_region():
    zones = {"z-a": _zone(4.0, None, _gcp.F8), "z-b": _zone(3.0, 1.0, _gcp.F7)}
    by = {o.pricing: o for o in _gcp._region_offers("m", "r", zones)}
    assert (by["on_demand"].usd_per_hour, by["on_demand"].as_of) == (4.0, V8)
    assert "v7" not in by["on_demand"].source
    # spot: only the older zone has a price, and a zone without one hides none
    assert (by["spot"].usd_per_hour, by["spot"].as_of) == (1.0, V7)
    # no zone priced: the newest zones say why, as before
    unknown = {"price_unknown": "no GPU price"}
    zones = {"z-a": _zone(None, None, _gcp.F8, flags=unknown),
             "z-b": _zone(None, None, _gcp.F7, flags=unknown)}
    by = {o.pricing: o for o in _gcp._region_offers("m", "r", zones)}
    assert by["on_demand"].usd_per_hour is None and "price_unknown" in by["on_demand"].flags
    assert (by["on_demand"].as_of, by["on_demand"].zone_count) == (V8, 1)
