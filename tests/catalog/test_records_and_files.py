"""Schema validation of the catalog files: corrupt input fails with file, line, column."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from catalog import CatalogFileError, Offer
from catalog._csvio import OFFERS, format_table, read_table
from catalog._load import read_catalog_dir
from catalog._paths import packaged_catalog_dir
from catalog._records import RecordError


def _copy_packaged(tmp_path):
    dst = tmp_path / "cat"
    shutil.copytree(packaged_catalog_dir(), dst)
    return dst


def test_packaged_catalog_loads_and_cross_checks():
    cat = read_catalog_dir(packaged_catalog_dir(), "packaged")
    assert len(cat.offers) > 4000
    assert {o.cloud for o in cat.offers} == {"aws", "gcp", "azure"}


def test_bad_number_names_file_line_and_column(tmp_path):
    d = _copy_packaged(tmp_path)
    lines = (d / "offers.csv").read_text().splitlines()
    cells = lines[5].split(",")
    cells[4] = "twelve"  # usd_per_hour
    lines[5] = ",".join(cells)
    (d / "offers.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(CatalogFileError) as exc:
        read_catalog_dir(d, "test")
    msg = str(exc.value)
    assert "offers.csv:6" in msg and "'usd_per_hour'" in msg and "expected a number" in msg
    assert "'twelve'" in msg


def test_zero_price_is_rejected_with_line(tmp_path):
    d = _copy_packaged(tmp_path)
    text = (d / "offers.csv").read_text().replace(",on_demand,98.32,", ",on_demand,0,", 1)
    (d / "offers.csv").write_text(text)
    with pytest.raises(CatalogFileError, match=r"offers\.csv:\d+: .*usd_per_hour must be > 0"):
        read_catalog_dir(d, "test")


def test_missing_column_and_missing_file(tmp_path):
    d = _copy_packaged(tmp_path)
    text = (d / "instance_types.csv").read_text().replace("gpu_count,", "gpus,", 1)
    (d / "instance_types.csv").write_text(text)
    with pytest.raises(CatalogFileError,
                       match=r"instance_types\.csv:1: missing columns \['gpu_count'\]"):
        read_catalog_dir(d, "test")
    (d / "meta.json").unlink()
    with pytest.raises(CatalogFileError, match="missing"):
        read_catalog_dir(d, "test")


def test_wrong_cell_count(tmp_path):
    d = _copy_packaged(tmp_path)
    with open(d / "accelerators.csv", "a") as f:
        f.write("X,NVIDIA\n")
    with pytest.raises(CatalogFileError, match=r"accelerators\.csv:\d+: expected \d+ cells"):
        read_catalog_dir(d, "test")


def test_offer_for_unknown_instance_type(tmp_path):
    d = _copy_packaged(tmp_path)
    with open(d / "offers.csv", "a") as f:
        f.write("aws,p9.huge,us-east-1,on_demand,1.0,,,1,,2025-01-01,test,\n")
    with pytest.raises(CatalogFileError, match="unknown instance type aws/p9.huge"):
        read_catalog_dir(d, "test")


def test_records_are_frozen_and_validated():
    offer = Offer(cloud="aws", instance_type="x", region="r", pricing="spot", usd_per_hour=1.0,
                  as_of=dt.date(2025, 1, 1), source="s")
    with pytest.raises(AttributeError):
        offer.usd_per_hour = 2.0  # type: ignore[misc]
    with pytest.raises(RecordError, match="pricing must be one of"):
        Offer(cloud="aws", instance_type="x", region="r", pricing="cheap", usd_per_hour=1.0,
              as_of=dt.date(2025, 1, 1), source="s")
    with pytest.raises(RecordError, match="missing price needs"):
        Offer(cloud="aws", instance_type="x", region="r", pricing="spot", usd_per_hour=None,
              as_of=dt.date(2025, 1, 1), source="s")


def test_format_then_read_round_trips(tmp_path):
    cat = read_catalog_dir(packaged_catalog_dir(), "packaged")
    text = format_table(cat.offers, OFFERS)
    assert tuple(read_table(tmp_path / "x.csv", OFFERS, text=text)) == cat.offers
