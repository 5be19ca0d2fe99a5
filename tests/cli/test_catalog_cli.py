"""`gpuplan gpus`, `offers`, `catalog info|use`: JSON contracts, the reference's figures, and
every bad input one line with exit 2 (issues #13 and #16)."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.cli import main

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT.parent / "shared" / "reference"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(),
                                     reason="shared reference not beside the checkout")
OFFER_FIELDS = {"cloud", "instance_type", "region", "accelerator", "gpu_count", "pricing",
                "usd_per_hour", "usd_per_gpu_hour", "as_of", "as_of_approximate", "source",
                "flags", "flag_reasons", "price_usable", "term_hours", "offering_class",
                "upfront", "interruption_bucket", "interruption_rate_per_hour", "region_kind"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_offers_json_has_p5_at_the_2026_price_with_reservations(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "aws", "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(OFFER_FIELDS <= set(r) for r in rows)
    p5 = [r for r in rows if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1"]
    od = next(r for r in p5 if r["pricing"] == "on_demand")
    assert (od["usd_per_hour"], od["as_of"], od["as_of_approximate"]) == (55.04, "2026-01-21",
                                                                          False)
    assert od["usd_per_gpu_hour"] == pytest.approx(55.04 / 8) and od["price_usable"]
    reserved = [r for r in p5 if r["pricing"].startswith("reserved")]
    assert len(reserved) == 9 and all(r["term_hours"] in (8760, 26280) for r in reserved)
    assert {r["offering_class"] for r in reserved} == {"standard", "convertible"}


def test_p6_b200_is_priced(capsys):
    code, out, _ = run(capsys, "offers", "--instance", "p6-b200.48xlarge", "--region",
                       "us-east-1", "--pricing", "on_demand", "--json")
    assert code == 0 and json.loads(out)[0]["usd_per_hour"] == pytest.approx(113.9328)


def test_offers_csv_and_table(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "a100-80gb", "--cloud", "gcp", "--pricing",
                       "spot", "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {r["pricing"] for r in rows} == {"spot"}
    code, out, _ = run(capsys, "offers", "--gpu", "L4", "--sort", "gpu_price", "--limit", "5")
    assert code == 0 and "L4" in out and "Catalog: packaged" in out


def test_flagged_offers_are_listed_with_their_reasons(capsys):
    code, out, _ = run(capsys, "offers", "--cloud", "gcp", "--instance", "a3-highgpu-8g",
                       "--flagged", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and all(not r["price_usable"] for r in rows)
    assert any("price_outlier" in r["flags"] and "z=" in (r["flag_reasons"] or "")
               for r in rows)
    code, out, _ = run(capsys, "offers", "--cloud", "gcp", "--instance", "a3-highgpu-8g",
                       "--flagged", "--limit", "3")
    flat = " ".join(out.split())  # the console wraps long lines
    assert code == 0 and "price_outlier: " in flat and "not used by `gpuplan plan`" in flat
    code, out, _ = run(capsys, "offers", "--cloud", "gcp", "--instance", "a3-highgpu-8g",
                       "--usable", "--json")
    assert all(r["price_usable"] for r in json.loads(out))


def test_the_flag_legend_says_overridden_prices_are_used(capsys, tmp_path):
    """It said "Flagged prices are not used by `gpuplan plan`" of an overridden (negotiated)
    price, which plan does use (INFORMATIONAL_FLAGS)."""
    rates = tmp_path / "rates.yaml"
    rates.write_text("prices:\n  - {cloud: aws, instance_type: p5.48xlarge, region: us-east-1,"
                     " pricing: on_demand, usd_per_hour: 40}\n")
    code, out, _ = run(capsys, "offers", "--overrides", str(rates), "--instance", "p5.48xlarge",
                       "--region", "us-east-1", "--pricing", "on_demand")
    flat = " ".join(out.split())
    assert code == 0 and "overridden = price replaced" in flat
    assert "overridden: for information; `gpuplan plan` uses those prices" in flat
    assert "Flagged prices are not used" not in flat
    if "expired" in flat:  # a dated rate under the override: that flag still keeps it out
        assert "Prices flagged expired are not used by `gpuplan plan`" in flat


def test_comma_separated_filters(capsys):
    code, out, _ = run(capsys, "offers", "--cloud", "aws,azure", "--gpu", "H100", "--json")
    assert code == 0 and {r["cloud"] for r in json.loads(out)} == {"aws", "azure"}


@pytest.mark.parametrize("argv,fragment", [
    (["offers", "--gpu", "H10O"], "Did you mean 'H100'"),
    (["offers", "--cloud", "oracle"], "unknown cloud 'oracle'"),
    (["offers", "--region", "us-easst-1"], "Did you mean 'us-east-1'"),
    (["offers", "--sort", "cheap"], "unknown sort 'cheap'"),
    (["offers", "--min-gpus", "0"], "--min-gpus must be a whole number from 1"),
    (["offers", "--min-gpus", "1000000000000"], "--min-gpus must be a whole number from 1"),
    (["offers", "--max-price", "nan"], "--max-price 'nan' is not a finite amount"),
    (["offers", "--max-price", "inf"], "--max-price 'inf' is not a finite amount"),
    (["offers", "--max-price", "-5"], "--max-price must not be negative, got -5"),
    (["offers", "--max-price", "0"], "--max-price must be a number above 0"),
    (["offers", "--max-price", "1e308"], "at most 100,000"),
    (["offers", "--limit", "-1"], "--limit must be a whole number from 0 (all) to 100,000"),
    (["offers", "--json", "--csv"], "--json and --csv are exclusive"),
    (["offers", "--flagged", "--usable"], "--flagged and --usable are exclusive"),
    (["catalog", "use", "nightly"], "unknown catalog 'nightly'"),
    (["catalog", "use", "refreshed"], "no refreshed catalog"),
])
def test_user_errors_are_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err and "Traceback" not in err and "To fix:" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv,start", [
    (["--region", "us-easst-1"], "error: --region: unknown region 'us-easst-1'"),
    (["--regions", "us-easst-1"], "error: --regions: unknown region 'us-easst-1'"),
    (["--pricing", "spott"], "error: --pricing: unknown pricing model 'spott'"),
    (["--clouds", "aws,gcpp"], "error: --clouds: unknown cloud 'gcpp'"),
    (["--gpu", "H1000"], "error: --gpu: unknown GPU 'H1000'"),
    (["--instance", "p5.48xlarg"], "error: --instance: unknown instance type 'p5.48xlarg'"),
])
def test_an_unknown_filter_name_is_said_with_its_flag(capsys, argv, start):
    """`offers --region us-easst-1` said "unknown region" alone (`plan` named --cloud): with
    several filters given, which one was wrong had to be guessed."""
    code, _, err = run(capsys, "offers", *argv)
    assert code == 2 and err.startswith(start), err


@pytest.mark.parametrize("flag,value,fixed", [
    ("--gpu", "A100-80GB,H100 A10G", "A100-80GB,H100,A10G"),
    ("--cloud", "aws,gcp azure", "aws,gcp,azure"),
])
def test_names_separated_by_a_space_are_fixed_as_the_whole_list(capsys, flag, value, fixed):
    """The fix was the spaced item alone ("H100,A10G"): pasted back, it dropped A100-80GB."""
    code, _, err = run(capsys, "offers", flag, value)
    assert code == 2 and err.rstrip().endswith(f"separate them with commas: {fixed}"), err


def test_bad_overrides_file_is_one_line(capsys, tmp_path):
    f = tmp_path / "o.yaml"
    for text, fragment in (("discounts: [{cloud: aws}]", "missing 'percent'"),
                           ("discounts: [{cloud: aws, percent: 100}]", "would make prices $0"),
                           ("discounts: [{family: '', percent: 50}]", "family must be non-empty"),
                           ("discounts: [{instance_type: p5.48xlarg, percent: 5}]",
                            "Did you mean 'p5.48xlarge'")):
        f.write_text(text)
        code, _, err = run(capsys, "offers", "--overrides", str(f))
        assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1, text
    f.write_bytes(b"\xff\xfe\xfa")
    code, _, err = run(capsys, "offers", "--overrides", str(f))
    assert code == 2 and "not UTF-8" in err


def test_overridden_prices_are_marked(capsys, tmp_path):
    f = tmp_path / "o.yaml"
    f.write_text("discounts: [{instance_type: p5.48xlarge, percent: 50}]")
    code, out, _ = run(capsys, "offers", "--instance", "p5.48xlarge", "--region", "us-east-1",
                       "--pricing", "on_demand", "--json", "--overrides", str(f))
    row = json.loads(out)[0]
    assert row["usd_per_hour"] == pytest.approx(27.52) and "overridden" in row["flags"]


def test_csv_cells_cannot_become_spreadsheet_formulas(capsys):
    """A hostile catalog (a refreshed one could hold anything) cannot plant a formula."""
    from dataclasses import replace

    from catalog import _install, load_catalog

    cat = load_catalog("packaged")
    t = replace(cat.instance_type_by_key("aws", "g5.xlarge"), name='=HYPERLINK("http://x")')
    base = next(o for o in cat.offers if o.key == ("aws", "g5.xlarge", "us-east-1",
                                                   "on_demand"))
    offer = replace(base, instance_type=t.name, source="@SUM(1+1)", flags=(), flag_reasons="")
    _install.install(cat.accelerators, (t,), (offer,), {"name": "refreshed", "clouds": {}},
                   name="refreshed-hostile")
    code, out, _ = run(capsys, "offers", "--csv")
    assert code == 0
    (row,) = list(csv.DictReader(io.StringIO(out)))
    assert row["instance_type"] == '\'=HYPERLINK("http://x")' and row["source"] == "'@SUM(1+1)"
    assert not any(v.startswith(("=", "+", "-", "@")) for v in row.values())


@needs_reference
def test_catalog_info_shows_the_new_dates_and_counts_from_the_reference(capsys):
    code, out, _ = run(capsys, "catalog", "info", "--json")
    info = json.loads(out)
    assert code == 0 and info["name"] == "packaged"
    assert info["stale"] is True and "catalog refresh" in info["warning"]
    aws = info["clouds"]["aws"]
    assert (aws["as_of"], aws["as_of_approximate"]) == ("2026-01-21", False)
    assert info["clouds"]["gcp"]["as_of_approximate"] is True
    assert info["clouds"]["azure"]["as_of"] == "2024-03-01"

    def rows(name):
        with open(REFERENCE / name, encoding="utf-8") as handle:
            return list(csv.DictReader(handle))

    new, mid = rows("aws_on_demand_2026-01-21.csv"), rows("aws_prices_2025-11-30.csv")
    old = rows("aws_accelerator_vms.csv")
    whole = [r for r in new + mid if float(r["gpu_count"]) >= 1]
    priced = {r["instance_type"] for r in whole} | {r["InstanceType"] for r in old
                                                    if r["Price"] or r["SpotPrice"]}
    assert aws["priced_instance_types"] == len(priced)
    regions = {r["region"] for r in whole} | {r["Region"] for r in old} | {"ap-southeast-4"}
    assert aws["regions"] == len(regions)  # + the capacity-block-only region
    azure = rows("azure_accelerator_vms.csv")
    assert info["clouds"]["azure"]["regions"] == len({r["Region"] for r in azure})
    gcp_regions = {r["Region"] for f in ("gcp_accelerator_vms.csv",
                                         "gcp_accelerator_vms_v8_partial.csv") for r in rows(f)}
    assert info["clouds"]["gcp"]["regions"] == len(gcp_regions)
    code, out, _ = run(capsys, "catalog", "info")
    assert code == 0 and "2026-01-21" in out and "not used by the planner" in out


def test_catalog_use_selects_any_stored_catalog(capsys):
    from catalog import _install, load_catalog

    cat = load_catalog("packaged")
    small = (cat.accelerators, cat.instance_types[:3],
             tuple(o for o in cat.offers if o.instance_type in
                   {t.name for t in cat.instance_types[:3]}))
    _install.install(*small, {"name": "refreshed", "clouds": {}}, name="refreshed-a")
    _install.install(*small, {"name": "refreshed", "clouds": {}}, name="refreshed-b")
    code, out, err = run(capsys, "catalog", "use", "refreshed-a")
    assert code == 0 and "refreshed-a" in out, err
    code, out, _ = run(capsys, "catalog", "info", "--json")
    info = json.loads(out)
    assert info["name"] == "refreshed-a"
    assert {s["name"] for s in info["store"]["stored"]} == {"refreshed-a", "refreshed-b"}
    code, _, err = run(capsys, "catalog", "use", "refreshed-c")
    assert code == 2 and "Did you mean 'refreshed-a'" in err or "refreshed-b" in err
    assert run(capsys, "catalog", "use", "packaged")[0] == 0
    # back to refreshed-a, then `previous` to the packaged snapshot: named as such, not after
    # its folder ("data")
    assert run(capsys, "catalog", "use", "refreshed-a")[0] == 0
    code, out, _ = run(capsys, "catalog", "use", "previous")
    assert code == 0 and out.startswith("active catalog: packaged ("), out


def test_the_on_demand_recommendation_uses_no_flagged_price(capsys):
    """Issue #13: the H100 recommendation was a GCP price the catalog itself flagged."""
    from catalog import load_catalog

    code, out, err = run(capsys, "plan", "--model", "llama3-8b", "--tokens", "1T",
                         "--deadline", "14d", "--pricing", "on_demand", "--json")
    assert code == 0, err
    rec = json.loads(out)["recommendation"]
    offer = next(o for o in load_catalog().offers
                 if o.key == (rec["cloud"], rec["instance_type"], rec["region"], "on_demand"))
    assert offer.price_usable and not offer.flags and offer.usd_per_hour == rec["usd_per_hour"]


def test_gpus_json_has_cheapest_usable_prices(capsys):
    code, out, _ = run(capsys, "gpus", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    h100 = rows["H100-SXM5-80GB"]
    assert code == 0 and set(h100["clouds"]) == {"aws", "gcp", "azure"}
    assert 0 < h100["cheapest_spot_usd_per_gpu_hour"] < h100["cheapest_on_demand_usd_per_gpu_hour"]
    assert not h100["cheapest_on_demand_flags"]
    assert rows["H200-SXM-141GB"]["memory_gib"] == 141


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "planner", "offers", "--gpu", "H100",
                          "--cloud", "azure", "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)


def test_unknown_command_and_option_exit_2_without_traceback(capsys):
    for argv in (["nosuch"], ["offers", "--bogus"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "Traceback" not in err and "No such" in err


def test_filters_that_only_disagree_say_which_one_to_drop(capsys):
    # `offers --instance p5.48xlarge --cloud gcp` printed "0 offers" and nothing else (that
    # pair is refused now, as a region of another cloud is: test_offers_flags_and_dates.py);
    # an instance type and an accelerator it does not have still only disagree
    code, out, err = run(capsys, "offers", "--instance", "p5.48xlarge", "--gpu", "L4")
    assert code == 0 and "0 offers" in out
    assert "no offer matches every filter together" in err
    assert "without --gpu:" in err and "without --instance:" in err


def test_a_pricing_model_the_catalog_lacks_is_named(capsys):
    # "without --pricing: 14,532 offers" left the user guessing that none is committed_1y
    code, out, err = run(capsys, "offers", "--pricing", "committed_3y")
    assert code == 0 and "0 offers" in out
    assert "the catalog has no committed_3y offers" in " ".join(err.split())
    assert "your own rates can be added with --overrides" in " ".join(err.split())


def test_a_lost_active_catalog_is_replaced_with_a_note_once(capsys):
    """A marker naming a catalog that is gone (a folder deleted by hand): the CLI says which
    catalog it uses instead — silently it could price plans with years-old prices — once, as
    the marker is repaired."""
    from catalog import _paths

    _paths.catalogs_dir().mkdir(parents=True, exist_ok=True)
    _paths.active_marker().write_text("refreshed-gone\n")
    code, out, err = run(capsys, "offers", "--gpu", "H100", "--json")
    assert code == 0 and json.loads(out), err
    notes = [line for line in err.splitlines() if line.startswith("note:")]
    assert notes == [err.splitlines()[0]] and notes[0].startswith(
        "note: the active catalog 'refreshed-gone' is missing or incomplete; using 'packaged' "
        "instead (it is now the active catalog)"), err
    code, _, err = run(capsys, "offers", "--gpu", "H100", "--json")
    assert code == 0 and "note:" not in err and err.startswith("Catalog: packaged"), err


def test_the_lost_catalog_note_is_said_once_per_command_even_when_it_cannot_be_repaired(
        capsys):
    """A marker that is a directory cannot be rewritten: `catalog info` asks the store twice
    and printed the note twice."""
    from catalog import _paths

    _paths.active_marker().mkdir(parents=True)
    code, _, err = run(capsys, "catalog", "info")
    assert code == 0 and err.count("note: the active catalog could not be read") == 1, err


def test_an_overrides_file_from_the_environment_is_named_by_its_variable(monkeypatch, capsys,
                                                                         tmp_path):
    # "overrides file …: cannot read it. To fix: give the path of an existing file", when the
    # user gave no path: the variable did
    monkeypatch.setenv("GPUPLAN_OVERRIDES", str(tmp_path / "none.yaml"))
    for argv in (["gpus"], ["offers", "--limit", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: GPUPLAN_OVERRIDES={tmp_path / 'none.yaml'}: ")
        assert "To fix: correct the file, or unset GPUPLAN_OVERRIDES" in err
    monkeypatch.setenv("GPUPLAN_OVERRIDES", " ")  # exported empty: unset, as shells mean it
    assert main(["offers", "--limit", "1", "--json"]) == 0
    capsys.readouterr()


def test_offers_csv_has_one_header_whatever_matches(capsys):
    # with nothing matching it printed 'cloud,instance_type,region' (31 columns otherwise)
    assert main(["offers", "--csv", "--limit", "1"]) == 0
    some = capsys.readouterr().out.splitlines()[0]
    main(["offers", "--csv", "--max-price", "0.0001"])
    none = capsys.readouterr().out.splitlines()
    assert none == [some] and len(some.split(",")) > 20


def test_the_stale_price_banner_writes_the_age_with_thousands_separators():
    import datetime as dt

    from catalog import load_catalog
    from planner.cli._values import catalog_banner

    cat = load_catalog("packaged")
    oldest = min(o.as_of for o in cat.offers)
    line = catalog_banner(cat, today=oldest + dt.timedelta(days=1234))
    assert "Prices are up to 1,234 days old" in line


def test_a_catalog_name_starting_with_a_dash_is_told_what_a_name_starts_with(capsys):
    # "-x" was told the allowed characters, all of which it has
    assert main(["catalog", "use", "--", "-x"]) == 2
    assert "(a letter or digit, then letters, digits" in capsys.readouterr().err


def test_catalog_info_says_the_overrides_it_counts(capsys, tmp_path):
    """The counts included the offers an overrides file added, and no line named the file
    (only --json carried it)."""
    overrides = tmp_path / "ov.yaml"
    overrides.write_text("discounts:\n  - {cloud: aws, percent: 8}\n")
    assert main(["catalog", "info", "--overrides", str(overrides)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"Overrides applied: {overrides}" in out
    assert main(["catalog", "info"]) == 0
    assert "Overrides applied" not in capsys.readouterr().out


def test_offers_and_refresh_take_the_flag_spellings_plan_takes(capsys):
    """`plan` takes --clouds/--cloud and --regions/--region; `offers --regions us-east-1` was
    "No such option", and so was `catalog refresh --clouds` (docs sweep 2026-12-06)."""
    one = run(capsys, "offers", "--cloud", "aws", "--region", "us-east-1", "--json")
    both = run(capsys, "offers", "--clouds", "aws", "--regions", "us-east-1", "--json")
    assert one[0] == both[0] == 0 and one[1] == both[1] and json.loads(one[1])


def test_refresh_reads_a_cloud_in_capitals_as_offers_does(capsys, monkeypatch):
    """`offers --cloud AWS` lists AWS; `catalog refresh --cloud AWS` was refused ("did you
    mean aws")."""
    import catalog

    asked = []

    def fake_refresh(*, clouds, **kwargs):
        asked.append(clouds)
        raise catalog.GpuplanError("stopped here by the test")

    monkeypatch.setattr(catalog, "refresh_catalog", fake_refresh)
    code, _, err = run(capsys, "catalog", "refresh", "--clouds", "AWS,Azure")
    assert code == 2 and "stopped here by the test" in err
    assert asked == [["aws", "azure"]]


@pytest.mark.parametrize("cmd", [("plan", "--model", "gpt2"), ("offers",)])
def test_an_error_spells_a_two_spelling_option_as_it_was_typed(capsys, cmd):
    """`plan --cloud aws --region eastus` answered "--regions: … not in --clouds aws. To fix:
    add azure to --clouds …", options the user never typed."""
    code, _, err = run(capsys, *cmd, "--cloud", "aws", "--region", "eastus")
    assert code == 2 and err.startswith("error: --region: region 'eastus' is azure's, not in "
                                        "--cloud aws. To fix: add azure to --cloud or drop "
                                        "eastus from --region"), err
    code, _, err = run(capsys, *cmd, "--clouds=aws", "--regions", "eastus")
    assert code == 2 and "not in --clouds aws. To fix: add azure to --clouds or drop eastus " \
        "from --regions" in err, err


@pytest.mark.parametrize(("argv", "said"), [
    (("offers", "--clouds", ""), "error: --clouds is empty"),
    (("offers", "--regions", ""), "error: --regions is empty"),
    (("plan", "--model", "gpt2", "--cloud", ""), "error: --cloud is empty"),
    (("catalog", "refresh", "--region", ""), "error: --region is empty"),
    (("catalog", "refresh", "--clouds", "AWS", "--regions", "eastus"),
     "add azure to --clouds, or leave the region out"),
])
def test_an_empty_or_misplaced_value_is_named_as_typed(capsys, argv, said):
    code, _, err = run(capsys, *argv)
    assert code == 2 and said in err, err


def test_offers_mark_prices_plan_refuses_where_the_flags_column_is_left_out(capsys,
                                                                            monkeypatch):
    """At 60 columns the flags column was left out and 40 GCP spot rows read as usable prices
    that `plan` refuses; the legend listed flags of rows past --limit too (an AWS table of no
    flagged row ended "Flags: expired = …"); "1 offers", "2599 offers"."""
    monkeypatch.setenv("COLUMNS", "60")
    code, out, _ = run(capsys, "offers", "--clouds", "gcp", "--limit", "5")
    assert code == 0
    title, header, _rule, *rows = out.splitlines()
    assert title.startswith("2,599 offers (the first 5;")
    assert "flags" not in header  # left out at this width
    priced = [line for line in rows[:5] if "spot" in line]
    assert priced and all(line.rstrip().endswith("*") for line in priced)
    assert "(marked * in $/h) are not used by `gpuplan plan`" in " ".join(out.split())
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "aws", "--limit", "4",
                       "--pricing", "on_demand")
    assert code == 0 and "Flags:" not in out and "*" not in out  # none of the 4 is flagged
    code, out, _ = run(capsys, "offers", "--instance", "p6-b200.48xlarge", "--region",
                       "us-east-1", "--pricing", "on_demand")
    assert code == 0 and out.startswith("1 B200-SXM-180GB offer\n")


def test_min_gpus_reaches_the_largest_tpu_slices(capsys):
    """--min-gpus stopped at 1,024 ("the largest instance shape has fewer chips"): the catalog
    sells TPU slices of up to 6,144 chips, which no filter could ask for."""
    code, out, _ = run(capsys, "offers", "--min-gpus", "4096", "--json")
    rows = json.loads(out)
    assert code == 0 and rows and min(r["gpu_count"] for r in rows) >= 4096


def test_a_gpu_the_catalog_never_prices_is_said_so(capsys):
    """`offers --gpu MI300X` said "no offer matches every filter together (without --gpu:
    14,532 offers)" for a single filter: the catalog lists Azure's MI300X type, unpriced."""
    code, out, err = run(capsys, "offers", "--gpu", "MI300X", "--json")
    assert code == 0 and json.loads(out) == []
    said = " ".join(err.split())
    assert "note: the catalog has no price for MI300X: it lists 1 instance type with it " \
           "(azure Standard_ND96isr_MI300X_v5) but no offer" in said
    assert "every filter together" not in said
    for more in (["--cloud", "azure"], ["--pricing", "on_demand"], ["--usable"]):  # any other
        code, _, err = run(capsys, "offers", "--gpu", "MI300X", *more)  # filter too
        assert code == 0 and "the catalog has no price for MI300X" in " ".join(err.split())


def test_one_accelerator_is_said_once_in_the_title(capsys, monkeypatch):
    """`offers --gpu H100` repeated "H100-SXM5-80GB" in an ESSENTIAL column on every row: 89
    columns wide at 80."""
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--limit", "5")
    title, header = out.splitlines()[:2]
    assert code == 0 and " H100-SXM5-80GB offers (the first 5;" in title
    assert "accelerator" not in header
    assert max(len(line) for line in out.splitlines()[:8]) <= 80
    code, out, _ = run(capsys, "offers", "--limit", "5")  # several: the column stays
    assert code == 0 and "accelerator" in out.splitlines()[1]
