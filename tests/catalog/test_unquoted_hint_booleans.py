"""A name YAML read as true/false is told the words that read so, in every file that takes
names (quota files, overrides, the team file's name), not the number example "1e3"."""

from __future__ import annotations

import pytest

from catalog import load_catalog, unquoted_hint
from planner.model import PlannerError
from planner.search import parse_quotas


@pytest.mark.parametrize(("value", "words"), [(True, '"on" or "yes"'),
                                              (False, '"off" or "no"')])
def test_a_boolean_is_told_the_words(value, words):
    hint = unquoted_hint(value)
    assert f"write the name in quotes, e.g. {words}" in hint and "1e3" not in hint
    assert f"without quotes as {'true' if value else 'false'}" in hint


def test_a_number_keeps_the_number_example():
    assert unquoted_hint(1000.0) == (' (YAML read it as a number: write the name in quotes, '
                                     'e.g. "1e3")')
    assert unquoted_hint("yes") == ""


def test_a_quota_region_read_as_false_is_told_the_words():
    with pytest.raises(PlannerError) as info:  # `region: off`, as YAML reads it
        parse_quotas({"quotas": [{"cloud": "aws", "region": False, "gpus": 8}]},
                     load_catalog("packaged"))
    message = str(info.value)
    assert 'e.g. "off" or "no"' in message and "1e3" not in message, message
