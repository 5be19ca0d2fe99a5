"""A run of cents and minutes reads as cents and minutes everywhere on the page: "$0 · 0.0 h",
"P10–P90 $0–$0", "0 GPU-hours" and "To fix: raise the budget to $0" came from amounts and
durations formatted for large runs (app sweep 2026-12-04)."""

from __future__ import annotations

import re

import pytest

from ._apptest import app, everything


def test_amounts_keep_their_figures():
    from app_pages import _format as F

    assert [F.usd(x) for x in (20570.4, 99.5, 0.31, 0.0084, 0.0)] == [
        "$20,570", "$99.50", "$0.31", "$0.0084", "$0.00"]
    assert F.usd(1234.5, 2) == "$1,234.50"  # explicit decimals stay
    assert F.usd_range(0.006, 0.0117) == "$0.0060–$0.0117"  # the smaller end's decimals
    assert F.usd_range(222.4, 440.2) == "$222–$440"
    assert F.usd_at_least(0.00843) == 0.0085 and F.usd_at_least(250.2) == 251
    assert F.usd_at_least(0.31) == 0.31  # exact at the shown decimals: not raised


@pytest.mark.parametrize(("hours", "shown"), [
    (36.0, "36.0 h"), (96.0, "4.0 days"), (0.02, "1.2 min"), (0.0008, "2.9 s"),
    (1.0, "1.0 h")])
def test_durations_switch_units_instead_of_reading_zero(hours, shown):
    from app_pages import _format as F

    assert F.duration(hours) == shown
    # as the CLI writes it (a 1 h deadline read "1.0 h (0.0 d)"; 217 h "217.0 h (9.0 d)")
    from planner.model import format_hours

    assert F.hours(hours) == format_hours(hours)
    assert "(0.0 d)" not in F.hours(hours)


def test_a_small_count_keeps_a_figure():
    from app_pages import _format as F

    assert [F.amount(x) for x in (1234.4, 7.46, 0.021, 0.0)] == ["1,234", "7.5", "0.021", "0.0"]


def test_a_one_token_run_reads_in_cents_and_minutes():
    at = app(tokens="1", budget="0.001")  # infeasible by the budget: the cheapest is < 1 cent
    assert not at.exception
    text = everything(at).replace("\\", "")
    needed = float(re.search(r"Without the budget:\*\* .*? for \$([0-9.]+) in [0-9.]+ min",
                             text).group(1))
    raise_to = float(re.search(r"raise “Budget, USD” to \$([0-9.]+)", text).group(1))
    assert 0 < needed <= raise_to < 0.01  # raising the budget to what it says suffices
    assert "$0–$0" not in text and "0.0 h (0.0 d)" not in text and "0.0 min" not in text


def test_the_total_cost_metric_reads_like_the_amounts_beside_it():
    """The metric had its own rule (cents below $100): a $0.0084 plan read "$0.01" above a
    caption and a fix that said $0.0084."""
    at = app(tokens="1")
    assert not at.exception
    (total,) = [m.value for m in at.metric if m.label == "Total cost"]
    assert re.fullmatch(r"\$0\.00[0-9]{2}", total), total


def test_the_apps_figures_follow_the_clis_rules():
    """The card's metric said "0.1 h" beside its help's "6.0 min" and "60.0 s" for a minute;
    9.96 GPU-hours read "10.0" beside 10's "10"; a $0.00001 cost read "$0.0000" and an
    infinite one "$inf"."""
    from app_pages import _format as F

    assert [F.duration(h) for h in (0.1, 1 / 60, 0.9999, 47.0, 96.0)] == \
        ["6.0 min", "1.0 min", "1.0 h", "47.0 h", "4.0 days"]
    assert [F.amount(x) for x in (9.96, 10.0, 0.0996, 0.05)] == ["10", "10", "0.1", "0.05"]
    # below the four decimals shown, a bound: "$1e-05" read as code (review, 2026-12-07)
    assert [F.usd(x) for x in (1e-5, float("inf"), 0.0084, 250.2, -1e-7)] == \
        ["<$0.0001", "—", "$0.0084", "$250", ">-$0.0001"]
    assert [F.amount(x) for x in (1e-5, 0.0012)] == ["<0.001", "0.0012"]
