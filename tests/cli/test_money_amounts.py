"""Money read as people type it, by one parser (``planner.model.parse_usd``): `plan --budget
30k`, `--budget '$1,000'`, `offers --max-price '$40'` were refused ("it takes a number in
digits") while `--tokens 30K` was taken; `--budget 1,000` was told "write 1,000 as 1000"."""

from __future__ import annotations

import json
import math

import pytest
from cli_terminal import run
from hypothesis import given
from hypothesis import strategies as st

from planner.model import PlannerError, parse_usd

PLAN = ("plan", "--model", "gpt2", "--tokens", "1B", "--deadline", "2d", "--max-gpus", "8")


@pytest.mark.parametrize(("text", "usd"), [
    ("30000", 30000), ("30k", 30000), ("30K", 30000), ("$30k", 30000), ("$30,000", 30000),
    ("1,000", 1000), ("$1,000", 1000), ("25,381.04", 25381.04), ("$1,000,000", 1e6),
    ("1e4", 1e4), ("2.5M", 2.5e6), ("1b", 1e9), ("1.5 k", 1500), (" 40 ", 40), ("0.5", 0.5),
    (".5", 0.5), ("5.", 5), ("1_000", 1000), ("0", 0), ("-0", 0), ("$0.023", 0.023),
    (250000, 250000), (0.25, 0.25)])
def test_amounts_people_type_are_read(text, usd):
    value = parse_usd(text, "budget_usd")
    assert value == pytest.approx(usd, rel=1e-12) and type(value) is float
    assert math.copysign(1, value) == 1  # "-0" is $0, not -$0


@pytest.mark.parametrize(("text", "says"), [
    ("", "`budget_usd` is empty. To fix: leave it out, or give an amount, e.g. 30000, 30k"),
    ("   ", "`budget_usd` is empty."),
    ("lots", "`budget_usd` 'lots' is not an amount of USD. To fix: e.g. 30000, 30k or "
             "$30,000 (an optional $, commas between groups of three digits, K/M/B for "
             "thousand/million/billion)"),
    ("nan", "'nan' is not a finite amount"), ("$inf", "'$inf' is not a finite amount"),
    ("-Infinity", "is not a finite amount"),
    ("-5", "`budget_usd` must not be negative, got -5. To fix:"),
    ("-$5", "must not be negative, got '-$5'"), ("$-5", "must not be negative"),
    ("1e400", "'1e400' is too large"),
    ("9" * 65, "is too long for an amount (at most 64 characters)"),
    ("\u0663\u0660", "only the digits 0-9, $ and K/M/B are read"),  # Arabic-Indic 30
    ("\uff13\uff10", "only the digits 0-9"),  # full-width 30
    ("30T", "'30T' is not an amount of USD"), ("30g", "'30g' is not an amount of USD"),
    ("US$30", "is not an amount of USD"), ("0x10", "is not an amount of USD"),
    ("1__000", "is not an amount of USD"), ("$", "is not an amount of USD"),
    # commas: where the wrong one is, and a decimal comma told to be a dot
    ("1,00", "the comma after '1' is followed by 2 digits, not 3: use a dot for decimals "
             "(1.00)"),
    ("10,00,000", "the comma after '10' is followed by 2 digits, not 3: commas go between "
                  "groups of three digits (1,000,000)"),
    ("1,000,00", "the comma after '1,000' is followed by 2 digits, not 3"),
    ("1000,000", "the comma after '1000' has 4 digits before it, not 1 to 3"),
    ("0,5", "the comma after '0' is no thousands separator: use a dot for decimals (0.5)"),
    ("0,023", "use a dot for decimals (0.023)"),  # a thousands-shaped decimal comma
    ("12,34", "use a dot for decimals (12.34)"),
    ("1.000,50", "has a comma after its decimal point: use a dot for decimals"),
    ("1,", "the comma after '1' is followed by 0 digits, not 3"),
    (True, "True is not an amount of USD"), (None, "None is not an amount of USD"),
    (float("nan"), "is not a finite amount"), (-1, "must not be negative, got -1"),
    (10**400, "~1e400 is too large")])
def test_what_is_no_amount_is_one_line_with_a_fix(text, says):
    with pytest.raises(PlannerError) as caught:
        parse_usd(text, "budget_usd")
    message = str(caught.value)
    assert says in message and "To fix:" in message and "\n" not in message, message
    assert caught.value.field == "budget_usd"


def test_the_example_is_the_fields_own_and_a_maximum_is_said():
    with pytest.raises(PlannerError, match=r"To fix: e\.g\. 40 or \$40 \(an optional"):
        parse_usd("cheap", "max_price")
    with pytest.raises(PlannerError, match=r"To fix: e\.g\. 0\.023 \("):
        parse_usd("cheap", "checkpoint_storage_usd_per_gb_month")
    with pytest.raises(PlannerError, match=r"'200k' is too large: at most \$100,000\. To fix"):
        parse_usd("200k", "max_price", maximum=1e5)
    assert parse_usd("$100,000", "max_price", maximum=1e5) == 1e5


def test_a_megabyte_of_digits_is_refused_cheaply():
    with pytest.raises(PlannerError, match="too long"):
        parse_usd("1," * 500_000 + "000")


# --- the property: what Python (and people) write for an amount reads back as it ----------

AMOUNTS = st.floats(min_value=0, max_value=1e12, allow_nan=False, allow_infinity=False)


@given(AMOUNTS)
def test_an_amount_written_with_thousands_commas_reads_back(x):
    written = f"{x:,.2f}"
    for text in (written, "$" + written, f" ${written} "):
        assert parse_usd(text) == pytest.approx(x, abs=0.005 + 1e-15 * x), text


@given(AMOUNTS)
def test_an_amount_written_with_a_suffix_reads_back(x):
    for scale, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "B"), (1, "")):
        text = f"{x / scale:g}{suffix}"  # six significant digits, maybe an exponent (1e-05k)
        assert parse_usd(text) == pytest.approx(x, rel=1e-5, abs=1e-300), text
        assert parse_usd("$" + text.lower()) == parse_usd(text)


# --- the CLI: plan --budget / --checkpoint-storage-usd-per-gb-month, offers --max-price -----

class _Planned(Exception):
    pass


@pytest.fixture
def constraints_given(monkeypatch):
    """The Constraints `plan` would search with (the search itself is not run)."""
    import planner.search

    seen = []

    def plan(workload, catalog, constraints, **kw):
        seen.append(constraints)
        raise _Planned

    monkeypatch.setattr(planner.search, "plan", plan)
    return seen


@pytest.mark.parametrize("typed", ["30000", "30k", "30K", "$30k", "$30,000", "30,000", "3e4",
                                   "$30,000.00", "0.03M"])
def test_plan_budget_takes_money_as_typed(capsys, constraints_given, typed):
    with pytest.raises(_Planned):
        run(capsys, *PLAN, "--budget", typed)
    assert constraints_given[0].budget_usd == pytest.approx(30000)


@pytest.mark.parametrize("typed", ["0.023", "$0.023", ".023"])
def test_plan_storage_price_takes_money_as_typed(capsys, constraints_given, typed):
    with pytest.raises(_Planned):
        run(capsys, *PLAN, "--checkpoint-storage-usd-per-gb-month", typed)
    assert constraints_given[0].checkpoint_storage_usd_per_gb_month == pytest.approx(0.023)


def test_a_real_plan_with_a_budget_in_thousands(capsys):
    code, out, _ = run(capsys, *PLAN, "--budget", "$1k", "--json")
    assert code == 0 and json.loads(out)["constraints"]["budget_usd"] == 1000


@pytest.mark.parametrize(("argv", "says"), [
    (("--budget", "lots"), "error: --budget 'lots' is not an amount of USD. To fix: e.g. 30000, "
                           "30k or $30,000"),
    (("--budget", "1,00"), "error: --budget '1,00': the comma after '1' is followed by 2 "
                           "digits, not 3: use a dot for decimals (1.00)"),
    (("--budget", "10,00,000"), "the comma after '10' is followed by 2 digits"),
    (("--budget", "0,5"), "error: --budget '0,5': the comma after '0' is no thousands "
                          "separator: use a dot for decimals (0.5)"),
    (("--budget", "-5"), "error: --budget must not be negative, got -5. To fix:"),
    (("--budget", "nan"), "error: --budget 'nan' is not a finite amount."),
    (("--budget", ""), "error: --budget is empty. To fix: leave it out"),
    (("--budget", "30T"), "error: --budget '30T' is not an amount of USD."),
    # the range stays the Constraints' own: a budget is above 0 and at most $1e12
    (("--budget", "0"), "error: --budget: the budget (USD) must be a number above 0"),
    (("--budget", "2000B"), "up to 1,000,000,000,000, got 2000000000000"),
    (("--checkpoint-storage-usd-per-gb-month", "cheap"),
     "error: --checkpoint-storage-usd-per-gb-month 'cheap' is not an amount of USD. To fix: "
     "e.g. 0.023"),
    (("--checkpoint-storage-usd-per-gb-month", "0,023"), "use a dot for decimals (0.023)"),
    (("--checkpoint-storage-usd-per-gb-month", "2k"), "must be a number from 0 to 1,000")])
def test_plan_money_errors_are_one_line_exit_2(capsys, argv, says):
    code, out, err = run(capsys, *PLAN, *argv)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert says in err, err
    assert "it takes a number in digits" not in err and "write" not in err


def _prices(capsys, *argv) -> list[float]:
    code, out, _ = run(capsys, "offers", "--gpu", "H100", "--json", *argv)
    assert code == 0
    return [row["usd_per_hour"] for row in json.loads(out)]


def test_offers_max_price_takes_money_as_typed(capsys):
    plain = _prices(capsys, "--max-price", "40")
    assert plain and max(plain) <= 40
    for typed in ("$40", "$40.00", " 40 ", "0.04k"):
        assert _prices(capsys, "--max-price", typed) == plain, typed
    assert _prices(capsys, "--max-price", "$1,000") == _prices(capsys, "--max-price", "1000")


@pytest.mark.parametrize(("typed", "says"), [
    ("$forty", "error: --max-price '$forty' is not an amount of USD. To fix: e.g. 40 or $40"),
    ("4,0", "error: --max-price '4,0': the comma after '4' is followed by 1 digit, not 3: "
            "use a dot for decimals (4.0)"),
    ("-40", "error: --max-price must not be negative, got -40."),
    # the range stays select_offers' own
    ("0", "error: --max-price must be a number above 0 and at most 100,000 USD per "
          "instance-hour, got 0."),
    ("$200k", "at most 100,000 USD per instance-hour")])
def test_offers_max_price_errors_are_one_line_exit_2(capsys, typed, says):
    code, out, err = run(capsys, "offers", "--max-price", typed)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert says in err, err


def test_the_help_says_the_forms_taken(capsys):
    code, out, _ = run(capsys, "plan", "--help")
    said = " ".join(out.replace("│", " ").split())
    assert code == 0 and "--budget USD" in said and "(e.g. 30000, 30k or $30,000)" in said
    code, out, _ = run(capsys, "offers", "--help")
    said = " ".join(out.replace("│", " ").split())
    assert code == 0 and "--max-price USD" in said and "e.g. 40 or $40" in said
