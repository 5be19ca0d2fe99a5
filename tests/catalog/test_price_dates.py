"""Price dates as results record and show them: an approximate date (inferred from a file's
publication, not observed) keeps its "~" from the catalog's meta through ``provenance`` into
plan JSON, the CLI banner, the team reports and the app — they once dropped it everywhere
but the CLI banner (the app marked every date approximate)."""

from __future__ import annotations

import catalog
from catalog import price_dates


def test_provenance_records_which_dates_are_approximate():
    cat = catalog.load_catalog("packaged")
    info = cat.provenance()
    assert info["as_of_approximate"] == {c: cat.as_of_approximate(c) for c in info["as_of"]}
    # the packaged catalog mixes both kinds: the test means something only if it does
    assert set(info["as_of_approximate"].values()) == {True, False}


def test_price_dates_mark_approximate_dates_and_say_what_the_mark_means():
    info = {"as_of": {"aws": "2026-01-21", "gcp": "2025-04-01"},
            "as_of_approximate": {"aws": False, "gcp": True}}
    assert price_dates(info) == "aws 2026-01-21, gcp ~2025-04-01; ~ = approximate date"
    info["as_of_approximate"]["gcp"] = False
    assert price_dates(info) == "aws 2026-01-21, gcp 2025-04-01"


def test_records_written_before_the_flag_show_plain_dates_and_no_dates_say_unknown():
    assert price_dates({"as_of": {"aws": "2025-03-01"}}) == "aws 2025-03-01"
    assert price_dates({}) == "unknown"


def test_plan_json_carries_the_flag():
    from planner import Constraints, WorkloadSpec, build_workload, plan

    cat = catalog.load_catalog("packaged")
    result = plan(build_workload(WorkloadSpec(model="gpt2", tokens="1B")), cat,
                  Constraints(deadline_hours=24, max_gpus=8))
    got = result.as_dict()["catalog"]
    assert got == cat.provenance()
    assert got["as_of_approximate"]["gcp"] is cat.as_of_approximate("gcp")
