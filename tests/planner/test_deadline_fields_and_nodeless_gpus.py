"""Two dead ends a user met (a report-only sweep):

- a deadline written as a date with a field out of range ("2026-02-30", "2027-13-01") was "not
  a duration or a date" without saying which field; a duration with an exponent ("1e9d", as
  `tokens` takes 1e3B) was "not a duration" instead of "more than 10 years away";
- `estimate --gpu H100-PCIe` (an accelerator the catalog knows with no instance type and no
  reference node) said "To fix: pass --instance TYPE instead", and no instance has it.
"""

from __future__ import annotations

import pytest

from planner import PlannerError, parse_deadline
from planner.model import reference_cluster


@pytest.mark.parametrize("text, why", [
    ("2026-02-30", "(day is out of range for month)"),
    ("2027-13-01", "(month must be in 1..12)"),
    ("2027-01-01T25:00", "(hour must be in 0..23)")])
def test_a_date_with_a_field_out_of_range_says_which(text, why):
    with pytest.raises(PlannerError) as err:
        parse_deadline(text)
    assert why in str(err.value) and "To fix: " in str(err.value)


def test_a_shape_that_is_no_date_says_no_more_than_before():
    with pytest.raises(PlannerError) as err:
        parse_deadline("2027-3-5")
    assert "is not a duration or a date. To fix" in str(err.value)


@pytest.mark.parametrize("text, hours", [("1e2h", 100.0), ("2E1D", 480.0), ("1.5e1w", 2520.0)])
def test_a_duration_may_have_an_exponent(text, hours):
    assert parse_deadline(text) == hours


@pytest.mark.parametrize("text", ["1e9d", "1e400d"])
def test_a_duration_too_far_away_says_so(text):
    with pytest.raises(PlannerError) as err:
        parse_deadline(text)
    assert "is more than 10 years away" in str(err.value)


@pytest.mark.parametrize("gpu, near", [("H100-PCIe", "H100-SXM5-80GB"),
                                       ("Gaudi2", "Gaudi-HL-205")])
def test_an_accelerator_without_a_node_names_ones_with_nodes(catalog, gpu, near):
    with pytest.raises(PlannerError) as err:
        reference_cluster(catalog, gpu, 8)
    msg = str(err.value)
    assert "the catalog has no node with" in msg and near in msg
    assert "`instance`" not in msg  # no instance type has it: that fix led nowhere
    # every accelerator it names does have a node
    named = msg.split("e.g. ")[1].split(" or ")
    for name in named:
        reference_cluster(catalog, name.strip(), 1)
