"""The embedded snapshot against the shared reference it was built from.

The reference is developer data (../shared/reference); the product never reads it. These tests
rebuild the snapshot and compare, and check the facts the Foundation issue names.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

from catalog import load_catalog, select_offers
from catalog._paths import packaged_catalog_dir

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(),
                                     reason="shared reference not beside the checkout")


@needs_reference
def test_build_is_deterministic_and_matches_packaged(tmp_path):
    out = tmp_path / "data"
    subprocess.run([sys.executable, str(ROOT / "tools" / "build_snapshot.py"), "--reference",
                    str(REFERENCE), "--out", str(out)], check=True, capture_output=True)
    for name in ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json"):
        assert (out / name).read_bytes() == (packaged_catalog_dir() / name).read_bytes(), name


@needs_reference
@pytest.mark.parametrize("cloud,file", [("aws", "aws_accelerator_vms.csv"),
                                        ("gcp", "gcp_accelerator_vms.csv"),
                                        ("azure", "azure_accelerator_vms.csv")])
def test_every_reference_instance_type_and_region_is_covered(cloud, file):
    cat = load_catalog()
    rows = list(csv.DictReader(open(REFERENCE / file, encoding="utf-8")))
    ref_types = {r["InstanceType"] for r in rows if r["InstanceType"]}
    ref_regions = {r["Region"] for r in rows}
    ours = {t.name for t in cat.instance_types if t.cloud == cloud}
    assert ref_types <= ours
    assert ref_regions == {o.region for o in cat.offers
                           if o.cloud == cloud and o.pricing != "capacity_block"}
    # every (type, region) pair of the reference has an on-demand offer row
    pairs = {(r["InstanceType"], r["Region"]) for r in rows if r["InstanceType"]}
    od = {(o.instance_type, o.region) for o in cat.offers
          if o.cloud == cloud and o.pricing == "on_demand"}
    assert pairs <= od


def test_p5_in_us_east_1_at_reference_on_demand_price():
    rows = select_offers(load_catalog(), gpus=["H100"], clouds=["aws"], regions=["us-east-1"],
                         pricing=["on_demand"])
    p5 = [r for r in rows if r.offer.instance_type == "p5.48xlarge"]
    assert p5 and p5[0].offer.usd_per_hour == pytest.approx(98.32)
    assert "pre_cut_list_price" in p5[0].offer.flags


def test_gcp_gpu_machine_price_is_host_plus_gpu():
    # reference: a2-highgpu-1g host 0.73948 + 1x A100 2.93391 in us-central1 zones
    rows = select_offers(load_catalog(), clouds=["gcp"], regions=["us-central1"],
                         instance_types=["a2-highgpu-1g"])
    by_pricing = {r.offer.pricing: r.offer for r in rows}
    assert by_pricing["on_demand"].usd_per_hour == pytest.approx(0.73948 + 2.93391)
    assert by_pricing["spot"].usd_per_hour == pytest.approx(0.29576 + 1.1472)


def test_h200_machine_without_gpu_price_is_never_shown_at_host_price():
    rows = select_offers(load_catalog(), clouds=["gcp"], instance_types=["a3-ultragpu-8g"])
    assert rows and all(r.offer.usd_per_hour is None for r in rows)
    assert all("price_unknown" in r.offer.flags for r in rows)


def test_h200_memory_is_141_gib_not_80():
    cat = load_catalog()
    assert cat.accelerator("H200").memory_gib == 141
    assert cat.instance_type_by_key("aws", "p5en.48xlarge").accelerator == "H200-SXM-141GB"


def test_azure_nd_h100_v5_gpu_count_corrected_and_spot_flagged():
    cat = load_catalog()
    t = cat.instance_type_by_key("azure", "Standard_ND96isr_H100_v5")
    assert t.gpu_count == 8 and "gpu_count_corrected" in t.flags
    spot = [o for o in cat.offers if o.instance_type == t.name and o.pricing == "spot"]
    assert spot and all("no_spot_offer" in o.flags and not o.price_usable for o in spot)


def test_spot_keeps_min_and_median_across_zones():
    cat = load_catalog()
    o = next(o for o in cat.offers if o.key == ("aws", "p5.48xlarge", "us-east-1", "spot"))
    assert o.usd_per_hour == pytest.approx(23.1583) and o.zone == "use1-az3"
    assert o.zone_count == 6 and o.usd_per_hour_zone_median == pytest.approx(27.11905)


def test_every_offer_has_as_of_and_source_and_no_zero_price():
    for o in load_catalog().offers:
        assert o.as_of and o.source
        assert o.usd_per_hour is None or o.usd_per_hour > 0


def test_suspect_gcp_h100_prices_are_flagged():
    cat = load_catalog()
    flagged = [o for o in cat.offers if o.instance_type == "a3-highgpu-8g"
               and o.region in ("us-central1", "us-west1")]
    assert flagged and all("suspect_price" in o.flags for o in flagged)


def test_accelerators_that_no_cloud_sells_still_exist_for_estimates():
    cat = load_catalog()
    for name in ("H800", "MI250X", "V100-32GB", "A100-40GB", "A100-80GB", "H100", "H200",
                 "B200", "L4", "L40S", "A10G", "MI300X", "T4", "A10", "Trainium2", "Gaudi2"):
        cat.accelerator(name)
    assert cat.accelerator("B200").memory_gib == 180
    assert cat.accelerator("A10G").tflops_bf16 is None  # unverified: never a guessed peak
    assert "all compute peaks" in cat.accelerator("A10G").unverified
