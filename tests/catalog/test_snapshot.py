"""The embedded snapshot against the shared reference it was built from (issue #13).

The reference is developer data (../shared/reference); the product never reads it. These tests
rebuild the snapshot and compare, re-derive the expected rows from the reference files
independently of the builder, and pin each wrong fact the issue lists with a regression test.
"""

from __future__ import annotations

import csv
import datetime as dt
import math
import subprocess
import sys
from pathlib import Path

import pytest

from catalog import CEILING_USD_PER_GPU_HOUR, aws_bucket_rate, load_catalog, select_offers
from catalog._paths import packaged_catalog_dir

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(),
                                     reason="shared reference not beside the checkout")
NEW, MID = dt.date(2026, 1, 21), dt.date(2025, 11, 30)


@pytest.fixture(scope="module")
def cat():
    return load_catalog("packaged")


def _rows(name: str) -> list[dict[str, str]]:
    with open(REFERENCE / name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def _offer(cat, *key):
    if id(cat) not in _INDEX:
        _INDEX[id(cat)] = {o.key: o for o in cat.offers}
    return _INDEX[id(cat)][key]


_INDEX: dict[int, dict] = {}


@needs_reference
def test_build_is_deterministic_and_matches_packaged(tmp_path):
    out = tmp_path / "data"
    for _ in range(2):  # twice into the same place: byte-identical each time
        subprocess.run([sys.executable, str(ROOT / "tools" / "build_snapshot.py"),
                        "--reference", str(REFERENCE), "--out", str(out)], check=True,
                       capture_output=True)
        for name in ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json"):
            assert (out / name).read_bytes() == (packaged_catalog_dir() / name).read_bytes(), \
                name


# -- AWS: newest file first, every region code its own region ---------------------------------

@needs_reference
def test_aws_on_demand_is_the_newest_file_per_type_and_region(cat):
    new = {(r["instance_type"], r["region"]): r for r in _rows("aws_on_demand_2026-01-21.csv")
           if float(r["gpu_count"]) >= 1}
    mid = {(r["instance_type"], r["region"]): r for r in _rows("aws_prices_2025-11-30.csv")
           if float(r["gpu_count"]) >= 1}
    od = {(o.instance_type, o.region): o for o in cat.offers
          if o.cloud == "aws" and o.pricing == "on_demand"}
    for key in new.keys() | mid.keys():
        expected, date = (new[key], NEW) if key in new else (mid[key], MID)
        o = od[key]
        assert o.usd_per_hour == pytest.approx(float(expected["usd_per_hour_on_demand"])), key
        assert (o.as_of, o.as_of_approximate) == (date, False), key
    old = {(r["InstanceType"], r["Region"]) for r in _rows("aws_accelerator_vms.csv")}
    for key in old - new.keys() - mid.keys():  # dl1, f1, f2, p5e …: kept, with their old date
        assert od[key].as_of_approximate and od[key].as_of < MID, key


@needs_reference
def test_aws_reserved_spot_and_advisor_buckets_come_from_the_2025_table(cat):
    columns = [c for c in _rows("aws_prices_2025-11-30.csv")[0] if c.startswith("reserved_")]
    assert len(columns) == 12
    seen = 0
    for r in _rows("aws_prices_2025-11-30.csv"):
        if float(r["gpu_count"]) < 1:
            continue
        for col in columns:
            if not r[col]:
                continue
            _, term, cls, pay, _ = col.split("_")
            upfront = {"no": "none"}.get(pay, pay)
            o = _offer(cat, "aws", r["instance_type"], r["region"], f"reserved_{term}",
                       f"{cls}/{upfront}")
            if o.as_of == MID:
                assert o.usd_per_hour == pytest.approx(float(r[col]))
                assert o.term_hours == {"1y": 8760, "3y": 26280}[term]
                seen += 1
        if r["usd_per_hour_spot_min"]:
            s = _offer(cat, "aws", r["instance_type"], r["region"], "spot")
            assert s.usd_per_hour == pytest.approx(float(r["usd_per_hour_spot_min"]))
            assert s.usd_per_hour_zone_max == pytest.approx(float(r["usd_per_hour_spot_max"]))
            assert s.interruption_bucket == r["spot_interruption_frequency"]
            assert s.interruption_rate_per_hour == aws_bucket_rate(
                r["spot_interruption_frequency"])
    assert seen > 8000


def test_p5_in_us_east_1_is_priced_as_of_2026_with_reservations_and_spot(cat):
    rows = select_offers(cat, gpus=["H100"], clouds=["aws"], regions=["us-east-1"],
                         instance_types=["p5.48xlarge"])
    by = {(r.offer.pricing, r.offer.option): r.offer for r in rows}
    od = by[("on_demand", "")]
    assert (od.usd_per_hour, od.as_of, od.price_usable) == (55.04, NEW, True)
    assert by[("reserved_3y", "standard/none")].usd_per_hour == pytest.approx(23.77728)
    assert by[("reserved_1y", "convertible/all")].usd_per_hour == pytest.approx(40.454452)
    assert len([k for k in by if k[0].startswith("reserved")]) == 9  # no 1y standard for p5
    spot = by[("spot", "")]
    assert (spot.usd_per_hour, spot.interruption_bucket) == (13.2182, "5-10%")
    # the bucket's upper edge, 10 % a month, as a Poisson rate over 730 h (catalog._clouds)
    assert spot.interruption_rate_per_hour == pytest.approx(-math.log(0.9) / 730, abs=1e-8)
    block = by[("capacity_block", "")]
    assert block.usd_per_hour == 39.33 and "expired" in block.flags and block.term_hours == 24


def test_new_instance_types_are_priced_or_listed_unpriced_never_free(cat):
    b200 = _offer(cat, "aws", "p6-b200.48xlarge", "us-east-1", "on_demand")
    assert b200.usd_per_hour == pytest.approx(113.9328) and b200.price_usable
    assert _offer(cat, "aws", "p6-b300.48xlarge", "us-west-2", "on_demand").usd_per_hour == \
        pytest.approx(142.416)
    assert cat.instance_type_by_key("aws", "g7e.48xlarge").accelerator == \
        "RTX-PRO-6000-Blackwell"
    for cloud, name in (("aws", "trn2.48xlarge"), ("azure", "Standard_ND96isr_H200_v5"),
                        ("gcp", "a4x-highgpu-4g")):
        assert cat.instance_type_by_key(cloud, name)
        assert not [o for o in cat.offers if o.instance_type == name and o.price_usable]
    info = cat.info(include_store=False)
    assert "trn2.48xlarge" in info["clouds"]["aws"]["unpriced_instance_types"]


def test_local_and_wavelength_zones_and_govcloud_are_regions_of_their_own(cat):
    info = cat.info(include_store=False)["clouds"]["aws"]
    kinds = info["regions_by_kind"]
    assert kinds["region"] >= 27 and kinds["local_zone"] >= 33
    assert kinds["wavelength_zone"] >= 32 and kinds["govcloud"] == 2
    plain = select_offers(cat, regions=["us-east-1"], instance_types=["p5.48xlarge"])
    assert {r.offer.region for r in plain} == {"us-east-1"}
    atl = _offer(cat, "aws", "p5.48xlarge", "us-east-1-atl-1", "on_demand")
    assert atl.usd_per_hour == pytest.approx(55.04)


# -- GCP and Azure -------------------------------------------------------------------------------

@needs_reference
def test_gcp_prefers_the_v8_table_and_keeps_v7_where_v8_has_no_row(cat):
    h200 = _offer(cat, "gcp", "a3-ultragpu-8g", "us-east5", "on_demand")
    assert "v8" in h200.source and h200.as_of == dt.date(2025, 4, 1) and h200.as_of_approximate
    assert h200.usd_per_hour == pytest.approx(13.81519 + 36.60258)  # host + 8x H200, v8
    a2 = _offer(cat, "gcp", "a2-highgpu-1g", "us-central1", "on_demand")
    assert "v7" in a2.source and "v8" in a2.source  # v8 host + v7 GPU: the older date
    assert a2.as_of == dt.date(2025, 1, 1)
    v5p = _offer(cat, "gcp", "tpu-v5p-8", "us-east5", "on_demand")  # TPU v5p: v7 only
    assert "v8" not in v5p.source
    machines = {r["InstanceType"] for f in ("gcp_accelerator_vms.csv",
                                            "gcp_accelerator_vms_v8_partial.csv")
                for r in _rows(f) if r["InstanceType"]}
    assert machines <= {t.name for t in cat.instance_types if t.cloud == "gcp"}
    regions = {r["Region"] for f in ("gcp_accelerator_vms.csv",
                                     "gcp_accelerator_vms_v8_partial.csv") for r in _rows(f)}
    assert regions == set(cat.regions("gcp"))


@needs_reference
def test_gcp_placeholders_and_suspect_prices_are_flagged_never_used(cat):
    gcp = [o for o in cat.offers if o.cloud == "gcp"]
    rows = {(r["AcceleratorName"], r["Region"], which)
            for r in _rows("gcp_accelerator_vms_v8_partial.csv")
            for which, column in (("on_demand", "Price"), ("spot", "SpotPrice"))
            if r["AcceleratorName"].startswith("tpu-v6e") and r[column] == "700.0"}
    v6e = {(o.instance_type, o.region, o.pricing) for o in gcp
           if o.instance_type.startswith("tpu-v6e") and "placeholder_price" in o.flags
           and o.usd_per_hour is None}
    assert v6e == rows  # README: 32 on-demand and 40 spot placeholder rows (per zone)
    a4 = [o for o in gcp if o.instance_type == "a4-highgpu-8g"]
    assert a4 and all("placeholder_price" in o.flags and not o.price_usable for o in a4)
    low_h100 = _offer(cat, "gcp", "a3-edgegpu-8g", "us-central1", "on_demand")
    assert "suspect_price" in low_h100.flags and "4.20076" in low_h100.flag_reasons
    ultra = [o for o in gcp if o.instance_type == "a3-ultragpu-8g" and o.price_usable]
    assert not ultra  # H200 at two price levels by region: neither trusted


@needs_reference
def test_azure_is_the_reference_minus_retired_sizes(cat):
    rows = _rows("azure_accelerator_vms.csv")
    retired = {r["InstanceType"] for r in rows if r["AcceleratorName"] in ("K80", "M60")
               and not r["InstanceType"].endswith("_v3")}
    assert len(retired) == 14
    # a share of one GPU (NVv4's NV4as/NV8as/NV16as_v4: 1/8–1/2 MI25) priced as a whole one
    from catalog.sources._names import AZURE_PARTIAL_GPU

    partial = {r["InstanceType"] for r in rows} & set(AZURE_PARTIAL_GPU)
    assert partial == {"Standard_NV4as_v4", "Standard_NV8as_v4", "Standard_NV16as_v4"}
    ours = {t.name for t in cat.instance_types if t.cloud == "azure"}
    assert not (retired | partial) & ours
    assert {r["InstanceType"] for r in rows} - retired - partial <= ours
    assert set(cat.regions("azure")) == {r["Region"] for r in rows}


# -- the honesty rules -------------------------------------------------------------------------

def test_no_usable_offer_is_free_or_above_the_per_gpu_ceiling(cat):
    for o in cat.offers:
        t = cat.instance_type_by_key(o.cloud, o.instance_type)
        assert o.usd_per_hour is None or o.usd_per_hour > 0
        if o.price_usable:
            assert o.usd_per_hour / t.gpu_count <= 60.0 == CEILING_USD_PER_GPU_HOUR


def test_every_offer_has_a_date_a_source_and_a_reason_for_each_anomaly(cat):
    for o in cat.offers:
        assert o.as_of and o.source
        for flag in ("price_outlier", "spot_not_below_on_demand",
                     "spot_discount_below_documented", "placeholder_price", "suspect_price"):
            if flag in o.flags:
                assert f"{flag}: " in o.flag_reasons, (o.key, flag)


def test_meta_dates_each_cloud_by_its_sources(cat):
    assert cat.as_of("aws") == NEW and not cat.as_of_approximate("aws")
    assert cat.as_of_approximate("gcp") and cat.as_of_approximate("azure")
    sources = cat.meta["clouds"]["aws"]["sources"]
    assert [s["as_of"] for s in sources][:2] == ["2026-01-21", "2025-11-30"]
    assert sum(s["offers"] for s in sources) == sum(o.cloud == "aws" for o in cat.offers)
    assert any("g6f" in s for s in cat.meta["skipped"]["aws"])  # fractional GPUs left out


# -- wrong facts, one regression test each (issue #13, "Wrong facts") ----------------------------

def test_no_efa_and_not_nvswitch_are_not_read_as_efa_and_nvswitch(cat):
    p3 = cat.instance_type_by_key("aws", "p3.16xlarge")  # "ENA Ethernet (no EFA)", "not NVSwitch"
    assert (p3.fabric, p3.intra_node_topology) == ("ethernet", "nvlink")
    p3dn = cat.instance_type_by_key("aws", "p3dn.24xlarge")  # "NVLink 2, not NVSwitch", EFA
    assert (p3dn.fabric, p3dn.intra_node_topology) == ("efa", "nvlink")
    for name in ("Standard_NC24ads_A100_v4", "Standard_NC96ads_A100_v4",
                 "Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"):  # "no InfiniBand"
        assert cat.instance_type_by_key("azure", name).fabric == "ethernet", name
    g6 = cat.instance_type_by_key("aws", "g6.48xlarge")  # "ENA (EFA support unverified)"
    assert g6.fabric == "ethernet"


def test_azure_ncv3_carries_pcie_v100_not_sxm2(cat):
    for name in ("Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3",
                 "Standard_NC24rs_v3"):
        t = cat.instance_type_by_key("azure", name)
        assert t.accelerator == "V100-PCIe-16GB"
        assert t.intra_node_topology == ("single" if t.gpu_count == 1 else "pcie")
    v100 = cat.accelerator("V100-PCIe-16GB")
    assert (v100.tflops_fp32, v100.tflops_fp64, v100.tdp_w) == (14.0, 7.0, 250.0)
    retired = [o for o in cat.offers if o.instance_type == "Standard_NC6s_v3"]
    assert retired and all("retired" in o.flags for o in retired)


def test_azure_k80_and_m60_sizes_retired_in_2023_are_not_offered(cat):
    for name in ("Standard_NC6", "Standard_NC24r_Promo", "Standard_NV6", "Standard_NV24_Promo"):
        with pytest.raises(KeyError):
            cat.instance_type_by_key("azure", name)


def test_b200_and_gb200_fp32_fp64_match_the_current_datasheet(cat):
    b200, gb200 = cat.accelerator("B200"), cat.accelerator("GB200")
    assert (b200.tflops_fp32, b200.tflops_fp64) == (75.0, 37.0)
    assert (gb200.tflops_fp32, gb200.tflops_fp64) == (80.0, 40.0)
    assert b200.tflops_bf16 == 2250 and "current HGX B200" in b200.source


def test_azure_nd_h100_v5_gpu_count_corrected_and_spot_flagged(cat):
    t = cat.instance_type_by_key("azure", "Standard_ND96isr_H100_v5")
    assert t.gpu_count == 8 and "gpu_count_corrected" in t.flags
    spot = [o for o in cat.offers if o.instance_type == t.name and o.pricing == "spot"]
    assert spot and all("no_spot_offer" in o.flags and not o.price_usable for o in spot)


def test_h200_memory_is_141_gib_not_80(cat):
    assert cat.accelerator("H200").memory_gib == 141
    assert cat.instance_type_by_key("aws", "p5en.48xlarge").accelerator == "H200-SXM-141GB"


def test_accelerators_that_no_cloud_sells_still_exist_for_estimates(cat):
    for name in ("H800", "MI250X", "V100-32GB", "A100-40GB", "A100-80GB", "H100", "H200",
                 "B200", "L4", "L40S", "A10G", "MI300X", "T4", "A10", "Trainium2", "Gaudi2"):
        cat.accelerator(name)
    assert cat.accelerator("B200").memory_gib == 180
    assert cat.accelerator("A10G").tflops_bf16 is None  # unverified: never a guessed peak
    assert "all compute peaks" in cat.accelerator("A10G").unverified
