"""Schema validation of the catalog files: corrupt input fails with file, line, column."""

from __future__ import annotations

import datetime as dt
import json
import shutil

import pytest

from catalog import PRICING_TERM_HOURS, CatalogFileError, Offer
from catalog._csvio import OFFERS, format_table, read_table
from catalog._load import read_catalog_dir
from catalog._meta import cloud_meta
from catalog._paths import packaged_catalog_dir
from catalog._records import RecordError


def _copy_packaged(tmp_path):
    dst = tmp_path / "cat"
    shutil.copytree(packaged_catalog_dir(), dst)
    return dst


def _restate_meta(d):
    """meta.json of ``d`` rewritten for its offers (as a refresh writes it): the loader
    compares a stored catalog's offers with the counts and dates meta.json states."""
    offers = read_table(d / "offers.csv", OFFERS)
    meta = json.loads((d / "meta.json").read_text())
    meta["clouds"] = {c: cloud_meta(offers, c) for c in sorted({o.cloud for o in offers})}
    (d / "meta.json").write_text(json.dumps(meta))


def test_packaged_catalog_loads_and_cross_checks():
    cat = read_catalog_dir(packaged_catalog_dir(), "packaged")
    assert len(cat.offers) > 10_000
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
    text = (d / "offers.csv").read_text().replace(",on_demand,55.04,", ",on_demand,0,", 1)
    (d / "offers.csv").write_text(text)
    with pytest.raises(CatalogFileError, match=r"offers\.csv:\d+: .*usd_per_hour must be "
                                               r"from 1e-06 to 100,000, got 0\.0\. To fix"):
        read_catalog_dir(d, "test")


@pytest.mark.parametrize(("table", "find", "put", "says"), [
    ("offers.csv", ",on_demand,55.04,", ",on_demand,1e300,", "usd_per_hour must be from"),
    ("offers.csv", ",on_demand,55.04,", ",on_demand,1e-300,", "usd_per_hour must be from"),
    ("offers.csv", ",on_demand,55.04,", ",on_demand,5_5.04,", "expected a number"),
])
def test_absurd_values_in_a_catalog_file_are_refused_on_load(tmp_path, table, find, put, says):
    # a placeholder or unit error (1e300 $/h) loaded unflagged and counted as usable
    d = _copy_packaged(tmp_path)
    text = (d / table).read_text()
    assert find in text
    (d / table).write_text(text.replace(find, put, 1))
    with pytest.raises(CatalogFileError, match=says + ".*To fix"):
        read_catalog_dir(d, "test")


def _set_first_row_cell(d, table: str, column: str, value: str) -> None:
    """Put ``value`` in ``column`` of the first data row of ``table`` (plain CSV rows)."""
    lines = (d / table).read_text().splitlines()
    head, row = lines[0].split(","), lines[1].split(",")
    row[head.index(column)] = value
    (d / table).write_text("\n".join([lines[0], ",".join(row), *lines[2:]]) + "\n")


def test_a_huge_cell_is_quoted_back_in_part(tmp_path):
    d = _copy_packaged(tmp_path)
    _set_first_row_cell(d, "offers.csv", "zone_count", "9" * 5000)
    with pytest.raises(CatalogFileError) as exc:
        read_catalog_dir(d, "test")
    assert len(str(exc.value)) < 600 and "To fix" in str(exc.value)


@pytest.mark.parametrize("cell", ["nan", "inf", "-inf"])
def test_non_finite_prices_are_rejected(tmp_path, cell):
    d = _copy_packaged(tmp_path)
    text = (d / "offers.csv").read_text().replace(",on_demand,55.04,", f",on_demand,{cell},", 1)
    (d / "offers.csv").write_text(text)
    with pytest.raises(CatalogFileError, match="expected a number"):
        read_catalog_dir(d, "test")


def test_a_catalog_written_before_the_new_offer_columns_still_loads(tmp_path):
    d = _copy_packaged(tmp_path)
    old = ["cloud", "instance_type", "region", "pricing", "usd_per_hour",
           "usd_per_hour_zone_median", "zone", "zone_count", "interruption_rate_per_hour",
           "as_of", "source", "flags"]
    (d / "offers.csv").write_text(",".join(old) + "\n"
                                  "aws,p5.48xlarge,us-east-1,on_demand,55.04,,,1,,2026-01-21,"
                                  "old catalog,\n")
    _restate_meta(d)
    cat = read_catalog_dir(d, "test")
    (o,) = cat.offers
    assert (o.usd_per_hour, o.term_hours, o.option, o.as_of_approximate) == (55.04, None, "",
                                                                            False)


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
    stray = Offer(cloud="aws", instance_type="p9.huge", region="us-east-1", pricing="on_demand",
                  usd_per_hour=1.0, as_of=dt.date(2025, 1, 1), source="test")
    with open(d / "offers.csv", "a") as f:
        f.write(format_table([stray], OFFERS).splitlines()[1] + "\n")
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


def test_commitments_carry_their_term_and_only_reservations_their_options():
    common = {"cloud": "aws", "instance_type": "x", "region": "r", "usd_per_hour": 1.0,
              "as_of": dt.date(2025, 1, 1), "source": "s"}
    for pricing, hours in PRICING_TERM_HOURS.items():
        assert Offer(pricing=pricing, **common).term_hours == hours
    assert PRICING_TERM_HOURS["reserved_3y"] == 3 * 8760 and \
        PRICING_TERM_HOURS["capacity_block"] == 24
    ri = Offer(pricing="reserved_1y", offering_class="convertible", upfront="partial", **common)
    assert ri.option == "convertible/partial"
    assert ri.key == ("aws", "x", "r", "reserved_1y", "convertible/partial")
    assert Offer(pricing="on_demand", **common).key == ("aws", "x", "r", "on_demand")
    for bad in ({"pricing": "on_demand", "offering_class": "standard"},
                {"pricing": "spot", "upfront": "all"},
                {"pricing": "on_demand", "term_hours": 8760.0},
                {"pricing": "reserved_1y", "offering_class": "flexible"},
                {"pricing": "on_demand", "interruption_rate_per_hour": 0.1},
                {"pricing": "reserved_1y", "interruption_bucket": "<5%"}):
        with pytest.raises(RecordError):
            Offer(**{**common, **bad})


def test_every_flag_but_the_informational_ones_makes_a_price_unusable():
    from catalog import INFORMATIONAL_FLAGS, OFFER_FLAGS

    common = {"cloud": "gcp", "instance_type": "x", "region": "r", "pricing": "on_demand",
              "usd_per_hour": 1.0, "as_of": dt.date(2025, 1, 1), "source": "s"}
    assert Offer(**common).price_usable
    for flag in OFFER_FLAGS:
        assert Offer(**common, flags=(flag,)).price_usable == (flag in INFORMATIONAL_FLAGS)


def test_format_then_read_round_trips(tmp_path):
    cat = read_catalog_dir(packaged_catalog_dir(), "packaged")
    text = format_table(cat.offers, OFFERS)
    assert tuple(read_table(tmp_path / "x.csv", OFFERS, text=text)) == cat.offers


def test_a_duplicate_accelerator_row_is_refused(tmp_path):
    d = _copy_packaged(tmp_path)
    lines = (d / "accelerators.csv").read_text().splitlines()
    (d / "accelerators.csv").write_text("\n".join([lines[0], lines[1], *lines[1:]]) + "\n")
    with pytest.raises(CatalogFileError, match="duplicate accelerator.*To fix"):
        read_catalog_dir(d, "test")


def test_an_instance_with_a_huge_gpu_count_is_refused(tmp_path):
    # 10^21 GPUs loaded and showed $0.000/GPU-h
    d = _copy_packaged(tmp_path)
    _set_first_row_cell(d, "instance_types.csv", "gpu_count", "1" + "0" * 21)
    with pytest.raises(CatalogFileError, match="gpu_count must be from 1 to 65536.*To fix"):
        read_catalog_dir(d, "test")


def test_the_fix_for_a_missing_directory_is_one_shell_command(tmp_path):
    """'a b/c.yaml' said "mkdir -p a b" (two directories when pasted)."""
    import catalog

    with pytest.raises(catalog.GpuplanError) as exc:
        catalog.check_output_path(tmp_path / "a b" / "c.yaml", what="task file")
    assert f"(mkdir -p '{tmp_path}/a b')" in str(exc.value)
    # a relative path starting with '-' would be read as an option of mkdir
    with pytest.raises(catalog.GpuplanError) as exc:
        catalog.check_output_path("-d/t.yaml", what="task file")
    assert "(mkdir -p ./-d)" in str(exc.value)
