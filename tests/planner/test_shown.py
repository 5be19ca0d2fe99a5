"""Figures as gpuplan shows them never read in exponent notation nor as zero when they are
not (`planner.model._shown`): a team report's 1e-5 GPU-hours read "1e-05" in the terminal
summary and `plan`'s GPU-h (hostile sweep, 2026-12-08)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.model import below_shown, format_amount, format_usd

EXPONENT = re.compile(r"\de[+-]?\d")
finite = st.floats(allow_nan=False, allow_infinity=False, min_value=-1e12, max_value=1e12)


@given(finite)
def test_money_and_amounts_never_read_as_an_exponent_or_a_false_zero(x):
    for text in (format_amount(x), format_usd(x)):
        assert not EXPONENT.search(text), text
        if x != 0:
            assert text.lstrip("$-<>") not in ("0", "0.0", "0.00"), (x, text)


@pytest.mark.parametrize("x, least, prefix, rounds, shown", [
    (1e-5, 0.001, "", False, "<0.001"), (-1e-5, 0.001, "$", False, ">-$0.001"),
    (0.0, 0.001, "", False, None), (0.001, 0.001, "", False, None),
    (0.4, 1.0, "", True, "<1"), (0.6, 1.0, "", True, None),
    (0.5, 1.0, "", True, "<1"),  # "0" as an f-string writes it (half to even)
    (0.004, 0.01, "", True, "<0.01"), (0.006, 0.01, "", True, None),
    (1e-7, 1e-5, "", False, "<0.00001"),  # the bound itself not as "1e-05"
])
def test_below_shown(x, least, prefix, rounds, shown):
    assert below_shown(x, least, prefix, rounds=rounds) == shown


def test_format_amount_writes_a_tiny_count_as_its_bound():
    assert (format_amount(1e-5), format_amount(-1e-5), format_amount(0.0012)) == \
        ("<0.001", ">-0.001", "0.0012")


def test_a_report_figure_that_rounds_to_zero_is_its_bound():
    """An actuals row of 0.5 GPU-hours read "0" (half to even) in the Markdown report."""
    from planner.reports._rows import num

    assert (num(0.5), num(-0.5), num(0.49), num(1.5), num(0)) == ("<1", ">-1", "<1", "2", "0")
