"""Link (URL) values a widget cannot take as given: a fraction for a whole-number box is
refused like any other unusable link value (the box shows its default and the warning names
the value), where Streamlit truncated it and the page used the truncation."""

from __future__ import annotations

import pytest

from ._apptest import app, warnings


@pytest.mark.parametrize("key, given, default, label", [
    ("max_gpus", "1.5", 1024, "Max GPUs"),  # `gpuplan plan`'s default
    ("top", "2.5", 10, "Candidates to list"),
    ("max_spot", "3.7", None, "Max spot instances"),
])
def test_a_fraction_for_a_whole_number_box_shows_the_default_not_a_truncation(
        key, given, default, label):
    """?max_gpus=1.5 planned with 1 GPU (Streamlit's int() of the link's value), so the plan
    changed while the warning said the value was not valid."""
    at = app(**{key: given})
    assert not at.exception
    box = at.number_input(key=key)
    if default is None:  # the constraint's default (read from the planner)
        from app_pages._shared import constraint_default
        default = constraint_default("max_spot_instances")
    assert box.value == default
    said = " ".join(warnings(at))
    # the warning says what the box takes (its range: app sweep 2026-12-05)
    assert f"{key}={given} ({label}: not a valid value: a whole number from 1 to " in said, said
    assert f"; showing {default})" in said, said


def test_a_fraction_for_an_optional_whole_number_box_shows_it_empty():
    at = app(source="params", params="7B", experts="2.5")
    assert not at.exception
    assert at.number_input(key="experts").value is None
    assert ("experts=2.5 (Experts: not a valid value: a whole number from 0 to 1,024; showing "
            "the default)") in " ".join(warnings(at))


def test_a_fraction_for_the_catalog_min_gpus_shows_any():
    at = app("app_pages/catalog.py", offers_min_gpus="2.5")
    assert not at.exception and not at.error
    assert at.number_input(key="offers_min_gpus").value is None
    assert any("offers_min_gpus=2.5" in w for w in warnings(at))


@pytest.mark.parametrize("given, value", [("8.0", 8), ("1e3", 1000), ("64", 64)])
def test_a_whole_number_written_as_a_decimal_is_still_taken(given, value):
    at = app(max_gpus=given)
    assert at.number_input(key="max_gpus").value == value
    assert not any("max_gpus=" in w for w in warnings(at))


def test_a_checkbox_link_value_it_cannot_take_is_named_in_words():
    """?allow_flagged=maybe said "showing False", a Python literal."""
    at = app(allow_flagged="maybe")
    assert not at.exception
    said = " ".join(warnings(at))
    assert "allow_flagged=maybe" in said and "showing unticked" in said
    assert "False" not in said
