"""A probability below a minimum never reads as that minimum, whatever the minimum's float:
0.8959999 against 0.896 read "89.6%" (89.6 / 100 is 0.8959999999999999, below 0.896)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.model import format_chance, format_requirement


@pytest.mark.parametrize(("p", "below"), [(0.8959999, 0.896), (0.99989, 0.9999),
                                          (0.8996, 0.9), (0.57999, 0.58)])
def test_a_figure_below_the_minimum_does_not_read_as_it(p, below):
    text = format_chance(p, below=below)
    assert text != format_requirement(below), text


@given(st.integers(1, 9998), st.floats(1e-12, 1e-4))
def test_no_minimum_of_four_digits_is_read_by_a_figure_below_it(k, gap):
    below = k / 10_000
    p = below - gap
    text = format_chance(p, below=below)
    if text.startswith("<"):
        return
    assert float(text.rstrip("%")) < below * 100 - 1e-9, (p, below, text)
