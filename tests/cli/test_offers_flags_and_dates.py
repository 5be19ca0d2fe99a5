"""`gpuplan offers` sweep: an instance type's own flags (a corrected GPU count) shown with its
offers, the catalog line dated by the rows printed and the date kept ahead of the flags when
narrow, an instance type of another cloud refused as a region of one is, and names separated
by spaces told to take commas."""

from __future__ import annotations

import csv
import io
import json

import pytest
from cli_terminal import run


def _said(text: str) -> str:
    return " ".join(text.split())


# -- an instance type's flags travel with its offers ----------------------------------------

@pytest.mark.parametrize("name, why", [
    ("Standard_ND96isr_H100_v5", "source lists 12 GPUs; the VM has 8"),
    ("p2.8xlarge", "the price table lists 4 GPUs of 24 GiB; the instance has 8 of 12"),
])
def test_json_offers_carry_the_corrected_gpu_count_flag_and_why(capsys, name, why):
    code, out, _ = run(capsys, "offers", "--instance", name, "--json")
    rows = json.loads(out)
    assert code == 0 and rows
    for r in rows:
        assert "gpu_count_corrected" in r["flags"], r
        assert f"gpu_count_corrected: {why}" in r["flag_reasons"]
        assert "network" not in r["flag_reasons"]  # the rest of the type's notes stays out
    on_demand = [r for r in rows if r["pricing"] == "on_demand" and r["usd_per_hour"]]
    assert on_demand and all(r["price_usable"] for r in on_demand)  # informational only


def test_csv_and_table_show_the_instance_types_flag(capsys):
    code, out, _ = run(capsys, "offers", "--instance", "Standard_ND96isr_H100_v5", "--csv")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and all("gpu_count_corrected" in r["flags"] for r in rows)
    code, out, _ = run(capsys, "offers", "--instance", "Standard_ND96isr_H100_v5",
                       "--pricing", "on_demand", "--wide")
    said = _said(out)
    assert code == 0 and "gpu_count_corrected" in out.splitlines()[3]
    # the reason once for the type, not once per row
    assert said.count("source lists 12 GPUs; the VM has 8") == 1
    assert "azure/Standard_ND96isr_H100_v5: gpu_count_corrected:" in said


def test_network_unverified_is_not_an_offer_flag(capsys):
    code, out, _ = run(capsys, "offers", "--instance", "g5.xlarge", "--region", "us-east-1",
                       "--json")
    assert code == 0 and all("network_unverified" not in r["flags"] for r in json.loads(out))


# -- the catalog line says the dates and the age of the rows printed ---------------------------

def test_the_catalog_line_is_dated_by_the_rows_shown(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "aws", "--limit", "8")
    said = _said(out)
    assert code == 0
    assert "as of" in out.splitlines()[1]  # kept at 100 columns ($/PFLOP-h goes instead)
    assert "prices as of aws 2025-11-30)" in said
    # 2026-12-01 − 2025-11-30, not Azure's 1,005 days (no Azure row is shown)
    assert "Prices are up to 366 days old" in said and "1,005" not in said


def test_the_json_banner_is_dated_by_every_row_printed(capsys):
    code, _, err = run(capsys, "offers", "--cloud", "aws", "--instance", "p5.48xlarge",
                       "--pricing", "on_demand,spot", "--json")
    said = _said(err)
    assert code == 0 and "prices as of aws 2025-11-30 to 2026-01-21" in said
    assert "Prices are up to 366 days old" in said


def test_no_row_keeps_the_catalogs_own_line(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--max-price", "0.0001")
    assert code == 0 and "prices as of aws 2026-01-21, gcp ~2025-04-01, azure" in _said(out)


def test_the_date_is_kept_ahead_of_the_flags(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "azure")
    header = out.splitlines()[1]
    assert code == 0 and "as of" in header and "flags" not in header
    assert "not shown in 100 columns: flags" in _said(out)


def test_reservations_still_keep_their_term_before_the_date(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run(capsys, "offers", "--instance", "p5.48xlarge", "--region",
                       "us-east-1", "--pricing", "reserved_1y")
    assert code == 0 and "term" in out.splitlines()[1]


# -- an instance type of another cloud ---------------------------------------------------------

def test_an_instance_type_of_another_cloud_is_refused_like_a_region(capsys):
    code, out, err = run(capsys, "offers", "--instance", "p5.48xlarge", "--cloud", "gcp")
    assert code == 2 and out == ""
    assert _said(err) == ("error: --instance: instance type 'p5.48xlarge' is aws's, not in "
                          "--cloud gcp. To fix: add aws to --cloud or drop p5.48xlarge from "
                          "--instance")
    code, out, _ = run(capsys, "offers", "--instance", "p5.48xlarge", "--cloud", "aws,gcp",
                       "--limit", "1")
    assert code == 0 and "p5.48xlarge" in out


def test_the_catalog_query_names_its_own_fields():
    from catalog import GpuplanError, load_catalog, select_offers

    with pytest.raises(GpuplanError) as err:
        select_offers(load_catalog("packaged"), instance_types=["p5.48xlarge"],
                      clouds=["azure"])
    assert err.value.field == "instance_types" and "`clouds`" in str(err.value)


# -- names separated by spaces -----------------------------------------------------------------

@pytest.mark.parametrize("argv, fix", [
    (("offers", "--cloud", "aws gcp"), "aws,gcp"),
    (("offers", "--region", "us-east-1 us-west-2"), "us-east-1,us-west-2"),
    (("offers", "--region", "us-east-1 us-west-2,eu-west-1"), "us-east-1,us-west-2"),
    (("offers", "--pricing", "spot on_demand"), "spot,on_demand"),
    (("offers", "--instance", "p5.48xlarge p4d.24xlarge"), "p5.48xlarge,p4d.24xlarge"),
    (("offers", "--gpu", "H100 A10G"), "H100,A10G"),
    (("offers", "--clouds", "aws gcp"), "aws,gcp"),
    (("catalog", "refresh", "--cloud", "aws azure"), "aws,azure"),
    (("plan", "--model", "llama3-8b", "--tokens", "1T", "--deadline", "30d", "--gpu",
      "H100 A10G"), "H100,A10G"),
])
def test_a_list_separated_by_spaces_is_told_to_take_commas(capsys, argv, fix):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert f"separated by spaces. To fix: separate them with commas: {fix}" in _said(err)


def test_words_that_are_not_names_are_one_misspelt_name(capsys):
    """"US EAST 1" is a region typed wrong, not three regions: no comma advice."""
    code, _, err = run(capsys, "offers", "--region", "US EAST 1")
    assert code == 2 and "separated by spaces" not in err


def test_a_gpu_name_with_spaces_is_still_a_name(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "NVIDIA H100 NVL", "--limit", "1")
    assert code == 0 and "H100" in out
    code, _, err = run(capsys, "offers", "--gpu", "H100 nonsense")
    assert code == 2 and "separate with commas" not in err and "unknown GPU" in err
