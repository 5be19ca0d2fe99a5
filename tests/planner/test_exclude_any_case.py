"""`--exclude` (a plan's or a team job's) matches instance types, clouds and regions as the
filters do: trimmed, in any case where one name matches so ('P5.48XLARGE' was "unknown"
beside `offers --instance P5.48XLARGE` taking it), and excludes the catalog's name."""

from __future__ import annotations

import pytest

from catalog import UnknownNameError
from planner.search import check_exclude


def test_names_in_any_case_are_the_catalog_s(catalog):
    assert check_exclude(["P5.48XLARGE", " AWS ", "US-EAST-1"], catalog) == (
        "p5.48xlarge", "aws", "us-east-1")


def test_an_unknown_name_is_still_refused_with_close_matches(catalog):
    with pytest.raises(UnknownNameError, match="Did you mean 'p5.48xlarge'"):
        check_exclude(["p5.48xlargee"], catalog)


def test_a_plan_excludes_what_was_named_in_capitals(capsys):
    import json

    from planner.cli import main

    code = main(["plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "2d",
                 "--exclude", "AWS", "--json"])
    assert code == 0
    result = json.loads(capsys.readouterr().out)
    assert all(p["cloud"] != "aws" for p in [result["recommendation"], *result["candidates"]])
