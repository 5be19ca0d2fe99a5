"""``unmatched_pricing``: why pricing models asked have no offer while others do (the plan's
note; `plan --pricing committed_1y,on_demand` used on_demand alone and said nothing)."""

from __future__ import annotations

import re

import pytest

from catalog import load_catalog, unmatched_pricing


@pytest.fixture(scope="module")
def packaged():
    return load_catalog("packaged")


def test_models_the_catalog_lacks_are_one_clause(packaged):
    said = unmatched_pricing(packaged, {"pricing": ("committed_1y", "on_demand",
                                                    "committed_3y"),
                                        "clouds": ("gcp", "azure")},
                             ["clouds", "pricing"], {"on_demand"}, name=str)
    assert said.startswith("the catalog has no committed_1y, committed_3y offers (GCP "), said
    assert said.count("the catalog has no") == 1


def test_a_model_kept_out_by_a_filter_names_the_filter(packaged):
    said = unmatched_pricing(packaged, {"pricing": ("reserved_1y", "on_demand"),
                                        "clouds": ("gcp", "azure")},
                             ["clouds", "pricing"], {"on_demand"}, name=lambda k: f"--{k}")
    assert re.fullmatch(r"no reserved_1y offer matches the other filters \(without --clouds: "
                        r"[0-9,]+ offers\)", said), said


def test_nothing_is_said_when_every_model_has_offers(packaged):
    assert unmatched_pricing(packaged, {"pricing": ("spot", "on_demand")}, ["pricing"],
                             {"on_demand", "spot"}, name=str) == ""
