"""`gpuplan gpus`, `offers`, `catalog info`: JSON contracts, errors as one line with exit 2."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import pytest

from planner.cli import main

OFFER_FIELDS = {"cloud", "instance_type", "region", "accelerator", "gpu_count", "pricing",
                "usd_per_hour", "usd_per_gpu_hour", "as_of", "source", "flags"}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_offers_json_lists_p5_at_reference_price(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--cloud", "aws", "--json")
    assert code == 0
    rows = json.loads(out)
    assert rows and all(OFFER_FIELDS <= set(r) for r in rows)
    p5 = [r for r in rows if r["instance_type"] == "p5.48xlarge" and r["region"] == "us-east-1"
          and r["pricing"] == "on_demand"]
    assert p5[0]["usd_per_hour"] == pytest.approx(98.32)
    assert p5[0]["usd_per_gpu_hour"] == pytest.approx(98.32 / 8)


def test_offers_csv_and_table(capsys):
    code, out, _ = run(capsys, "offers", "--gpu", "a100-80gb", "--cloud", "gcp", "--pricing",
                       "spot", "--csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows and {r["pricing"] for r in rows} == {"spot"}
    code, out, _ = run(capsys, "offers", "--gpu", "L4", "--sort", "gpu_price", "--limit", "5")
    assert code == 0 and "L4" in out and "Catalog: packaged" in out


def test_comma_separated_filters(capsys):
    code, out, _ = run(capsys, "offers", "--cloud", "aws,azure", "--gpu", "H100", "--json")
    assert code == 0 and {r["cloud"] for r in json.loads(out)} == {"aws", "azure"}


@pytest.mark.parametrize("argv,fragment", [
    (["offers", "--gpu", "H10O"], "Did you mean 'H100'"),
    (["offers", "--cloud", "oracle"], "unknown cloud 'oracle'"),
    (["offers", "--region", "us-easst-1"], "Did you mean 'us-east-1'"),
    (["offers", "--sort", "cheap"], "unknown sort 'cheap'"),
    (["offers", "--min-gpus", "0"], "--min-gpus must be at least 1"),
])
def test_user_errors_are_one_line_exit_2(capsys, argv, fragment):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert fragment in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_bad_overrides_file_is_one_line(capsys, tmp_path):
    f = tmp_path / "o.yaml"
    f.write_text("discounts: [{cloud: aws}]")
    code, _, err = run(capsys, "offers", "--overrides", str(f))
    assert code == 2 and "missing 'percent'" in err and len(err.strip().splitlines()) == 1


def test_overridden_prices_are_marked(capsys, tmp_path):
    f = tmp_path / "o.yaml"
    f.write_text("discounts: [{instance_type: p5.48xlarge, percent: 50}]")
    code, out, _ = run(capsys, "offers", "--instance", "p5.48xlarge", "--region", "us-east-1",
                       "--pricing", "on_demand", "--json", "--overrides", str(f))
    row = json.loads(out)[0]
    assert row["usd_per_hour"] == pytest.approx(49.16) and "overridden" in row["flags"]


def test_catalog_info_counts_match_snapshot(capsys):
    code, out, _ = run(capsys, "catalog", "info", "--json")
    info = json.loads(out)
    assert code == 0 and info["active"] == "packaged"
    assert info["stale"] is True and "catalog refresh" in info["warning"]
    # reference README: AWS 72 instance types in 22 regions, Azure 41 types in 8 regions,
    # GCP 34 regions; AWS adds capacity-block and unpriced types (p6-b200, trn2).
    assert info["clouds"]["aws"]["priced_instance_types"] == 72
    assert info["clouds"]["aws"]["regions"] == 23  # 22 + ap-southeast-4 (trn1 capacity block)
    assert info["clouds"]["azure"]["regions"] == 8
    assert info["clouds"]["gcp"]["regions"] == 34
    assert info["clouds"]["azure"]["instance_types"] >= 41


def test_gpus_json_has_cheapest_prices(capsys):
    code, out, _ = run(capsys, "gpus", "--json")
    rows = {r["name"]: r for r in json.loads(out)}
    h100 = rows["H100-SXM5-80GB"]
    assert code == 0 and set(h100["clouds"]) == {"aws", "gcp", "azure"}
    assert 0 < h100["cheapest_spot_usd_per_gpu_hour"] < h100["cheapest_on_demand_usd_per_gpu_hour"]
    assert rows["H200-SXM-141GB"]["memory_gib"] == 141


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "planner", "offers", "--gpu", "H100",
                          "--cloud", "azure", "--json"], capture_output=True, text=True)
    assert out.returncode == 0 and json.loads(out.stdout)


def test_unknown_command_and_option_exit_2_without_traceback(capsys):
    for argv in (["nosuch"], ["offers", "--bogus"]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "Traceback" not in err and "No such" in err
