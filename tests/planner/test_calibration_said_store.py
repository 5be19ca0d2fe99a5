"""What the probe store says when one run is stored twice with other facts (the first-stored
copy wins: one without an instance type kept the cross-node bandwidth unused, and the copy
that named p5.48xlarge was only "already stored"), and what `probe remove` prints of a stored
report: its file name escaped as ingest and `probe show` escape it, its time in UTC."""

from __future__ import annotations

import json

from probe_store import put

from planner.cli import main
from planner.store import ingest, list_reports, load_calibration
from probes import report_to_json


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def two_nodes(make_report, **env):
    return make_report(world_size=16, node_count=2, net="AWS Libfabric", **env)


def test_a_copy_naming_the_instance_says_so_and_how_to_keep_it(tmp_path, catalog,
                                                               make_report):
    first = put(tmp_path, catalog, two_nodes(make_report, instance_type=None), "noinst.json")
    copy = put(tmp_path, catalog, two_nodes(make_report), "p5.json")
    assert copy.id == first.id == 1 and len(list_reports()) == 1  # one run counts once
    assert copy.ingest_status == (
        "already stored as report 1 (same measurements); but this file says instance type "
        "p5.48xlarge where report 1 says instance type none, and report 1 is kept as stored "
        "(one run counts once). To use this file's facts: `gpuplan probe remove 1`, then "
        "ingest this file again")
    assert load_calibration(catalog).inter("p5.48xlarge", 2) is None


def test_following_the_advice_calibrates_the_cross_node_bandwidth(capsys, tmp_path, catalog,
                                                                  make_report):
    put(tmp_path, catalog, two_nodes(make_report, instance_type=None), "noinst.json")
    path = tmp_path / "p5.json"
    path.write_text(report_to_json(two_nodes(make_report)))
    code, out, err = run(capsys, "probe", "ingest", str(path))
    assert code == 0, err
    said = " ".join(out.split())
    assert "where report 1 says instance type none" in said
    assert "`gpuplan probe remove 1`, then ingest this file again" in said
    assert run(capsys, "probe", "remove", "1")[0] == 0
    assert run(capsys, "probe", "ingest", str(path))[0] == 0
    assert load_calibration(catalog).inter("p5.48xlarge", 2).value == 370.0


def test_a_copy_on_another_cloud_names_both(tmp_path, catalog, make_report):
    put(tmp_path, catalog, make_report(cloud=None), "a.json")
    copy = put(tmp_path, catalog, make_report(), "b.json")
    assert "this file says cloud aws where report 1 says cloud none" in copy.ingest_status


def test_a_copy_with_the_same_facts_says_only_that_it_is_stored(tmp_path, catalog,
                                                                make_report):
    put(tmp_path, catalog, make_report(), "a.json")
    data = json.loads(report_to_json(make_report()))
    data["environment"]["hostname"] = "another-name"  # a setting, not a fact that calibrates
    path = tmp_path / "b.json"
    path.write_text(json.dumps(data))
    assert ingest(path, catalog).ingest_status == "already stored as report 1 (same " \
                                                  "measurements)"
    assert ingest(tmp_path / "a.json", catalog).ingest_status == ("already stored as report 1 "
                                                                  "(same file)")


def test_remove_escapes_the_file_name_and_says_utc(capsys, monkeypatch, tmp_path, catalog,
                                                   make_report):
    monkeypatch.setenv("COLUMNS", "200")
    put(tmp_path, catalog, make_report(), "we\nird\x1b[31m.json")
    code, out, err = run(capsys, "probe", "remove", "1")
    assert code == 0, err
    first = out.splitlines()[0]
    assert first == (f"removed probe report 1 (H100-SXM5-80GB, measured 2026-01-31T12:00:00 "
                     f"UTC, from {tmp_path}/we\\nird\\x1b[31m.json)")
    assert "\x1b" not in out
