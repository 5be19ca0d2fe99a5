"""Parsing the quantities people type: token counts (2T, 300B, 2e12), amounts of USD ($30,000,
30k), durations (14d, 36h), dates (2027-03-31). One clear error per bad value.

Every quantity is finite, positive and bounded. The bounds are far beyond any real training
run, so they only catch typos and hostile input (a 10^300-hour estimate is never an answer):

    tokens                  ≤ 1e15   (the largest published runs are ~4e13 tokens)
    params, active params   ≤ 1e14   (100T parameters; the largest published models are ~2e12)
    global batch tokens     ≤ 1e9    (published batches are ≤ ~6e7 tokens)
    any other count         ≤ 1e18
    deadline                ≤ 10 years from now, and at least 1 hour away
"""

from __future__ import annotations

import datetime as dt
import math
import re

from ._errors import PlannerError
from ._shown import format_usd

_SUFFIX = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
_NUMBER = re.compile(r"^ *([+-]?)([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?) *([kmbgtp]?) *$", re.I)
_NOT_FINITE = re.compile(r"^ *[+-]?(nan|inf|infinity) *$", re.I)
# Longer than any count a person types; refusing it early keeps 10^400-character input cheap.
_MAX_TEXT = 64

# (upper bound, unit noun) per quantity, keyed by the input's field name.
COUNT_LIMITS: dict[str, tuple[float, str]] = {
    "tokens": (1e15, "tokens"),
    "params": (1e14, "parameters"),
    "active_params": (1e14, "parameters"),
    "global_batch_tokens": (1e9, "tokens per step"),
}
DEFAULT_COUNT_LIMIT = (1e18, "")
MAX_DEADLINE_HOURS = 10 * 365.25 * 24  # 10 years
MIN_DEADLINE_HOURS = 1.0


def parse_count(text: str | float | int, field: str = "tokens", *,
                maximum: float | None = None) -> float:
    """'2T' → 2e12, '300B' → 3e11, '2e12' → 2e12, '4M' → 4e6 (decimal suffixes), for the input
    ``field`` (tokens, params, active_params, global_batch_tokens …).

    Refuses empty text, NaN, infinity, values below 1 and values above the quantity's bound
    (``COUNT_LIMITS`` by ``field``, or ``maximum``).
    """
    upper, noun = COUNT_LIMITS.get(field, DEFAULT_COUNT_LIMIT)
    if maximum is not None:
        upper = maximum
    what = f"`{field}`"
    example = "4M" if field == "global_batch_tokens" else "2T" if "token" in field else "7B"
    fix = f"To fix: write a number with an optional K/M/B/T suffix, e.g. {example}"

    def error(message: str) -> PlannerError:
        return PlannerError(message, field=field, value=text)

    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise error(f"{what} {_short(text)} is not a count. {fix}")
    if isinstance(text, int):
        # Compare before converting: float(10**400) raises OverflowError.
        value = float(text) if abs(text) <= 10**18 else (math.inf if text > 0 else -math.inf)
    elif isinstance(text, float):
        value = text
    else:
        if text.strip() == "":
            raise error(f"{what} is empty. {fix} (or leave it out for the default)")
        if _NOT_FINITE.match(text):
            raise error(f"{what} {_short(text)} is not a finite number. {fix}")
        match = _NUMBER.match(text) if len(text) <= _MAX_TEXT else None
        if not match:
            raise error(f"{what} {_short(text)} is not a count. {fix}")
        sign, digits, suffix = match.groups()
        value = float(digits) * _SUFFIX[suffix.lower()]
        if sign == "-" and value:
            value = -value
    if math.isnan(value):
        raise error(f"{what} {_short(text)} is not a finite number. {fix}")
    if value < 0:
        raise error(f"{what} {_short(text)} is negative: it must be positive. {fix}")
    if value == 0:
        raise error(f"{what} must be positive, got {_short(text)}. {fix}")
    if value < 1:
        raise error(f"{what} {_short(text)} is below 1: it must be at least 1. {fix}")
    if value > upper:
        unit = f" {noun}" if noun else ""
        raise error(f"{what} {_short(text)} is too large: at most {_bound(upper)}{unit}. "
                    f"To fix: check the number (e.g. {example}).")
    if abs(value - round(value)) > 1e-9 * value:  # 2.3T's float product is whole enough
        # a count is whole: 1.5 tokens ran as a whole step and read "2 tokens"; a global
        # batch of 1.5 was cut to 1 and reported back as "(1)"
        raise error(f"{what} must be a whole number{f' of {noun}' if noun else ''}, got "
                    f"{value:,.10g}. To fix: e.g. {example}")
    return value


# Money as people type it: "$30,000", "30k", "1e4". The suffixes are parse_count's (one
# table), but only K, M and B: thousand, million, billion ("$2T" or "30g" is no budget).
_USD_SUFFIXES = ("", "k", "m", "b")
_USD_FIX = ("To fix: e.g. {} (an optional $, commas between groups of three digits, K/M/B for "
            "thousand/million/billion)")
_USD_EXAMPLES = {"budget_usd": "30000, 30k or $30,000", "max_price": "40 or $40",
                "checkpoint_storage_usd_per_gb_month": "0.023"}
_USD_NUMBER = re.compile(r"([0-9][0-9_,]*(?:\.[0-9]*)?|\.[0-9]+)(e[+-]?[0-9]+)? *([a-z]?)", re.I)


def parse_usd(text: str | float | int, field: str = "budget_usd", *,
              maximum: float | None = None) -> float:
    """An amount of USD for the input ``field``: '30000', '30k' → 30000, '$1,000,000',
    '25,381.04', '1e4', '2.5M' (K/M/B case-insensitive); numbers as they are.

    Refuses empty text, NaN, infinity, negative amounts, text over 64 characters, digits other
    than 0-9, commas not between groups of three digits (a decimal comma '0,5' is told to
    use a dot) and amounts above ``maximum``. 0 is taken: whether it is allowed is the
    field's own range check (a budget must be above 0, a storage price may be 0).
    """
    what = f"`{field}`"
    fix = _USD_FIX.format(_USD_EXAMPLES.get(field, "30000"))

    def error(message: str) -> PlannerError:
        return PlannerError(message, field=field, value=text)

    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise error(f"{what} {_short(text)} is not an amount of USD. {fix}")
    if isinstance(text, int):  # compared first: float(10**400) raises OverflowError
        value = float(text) if abs(text) <= 10**18 else (math.inf if text > 0 else -math.inf)
    elif isinstance(text, float):
        value = text
    elif not text.strip():
        raise error(f"{what} is empty. To fix: leave it out, or give an amount, e.g. "
                    f"{_USD_EXAMPLES.get(field, '30000')}")
    else:
        value = _usd_text(text, what, fix, error)
    if math.isnan(value):
        raise error(f"{what} {_short(text)} is not a finite amount. {fix}")
    if value < 0:  # quoted unless a plain number: "got -5", "got '-$5'"
        plain = isinstance(text, str) and re.fullmatch(r" *[+-]?[0-9.]+ *", text)
        shown = text.strip() if plain else _short(text)
        raise error(f"{what} must not be negative, got {shown}. {fix}")
    if value > (math.inf if maximum is None else maximum) or math.isinf(value):
        most = "" if maximum is None else f": at most {format_usd(maximum)}"
        raise error(f"{what} {_short(text)} is too large{most}. To fix: check the amount "
                    f"(e.g. {_USD_EXAMPLES.get(field, '30000')})")
    return value + 0.0  # "-0" is $0


def _usd_text(text: str, what: str, fix: str, error) -> float:
    """The amount ``text`` spells (``parse_usd``), negative or infinite as typed."""
    if len(text) > _MAX_TEXT:  # refused before any regex: a megabyte of digits stays cheap
        raise error(f"{what} {_short(text)} is too long for an amount (at most {_MAX_TEXT} "
                    f"characters). {fix}")
    if not text.isascii():  # float() reads "٣٠" as 30 and the regex's [0-9] would not
        raise error(f"{what} {_short(text)} is not an amount of USD: only the digits 0-9, $ "
                    f"and K/M/B are read. {fix}")
    body = text.strip()
    sign = body[0] if body[:1] in ("+", "-") else ""
    body = body[len(sign):].lstrip()
    if body.startswith("$"):  # -$5 and $-5 alike
        body = body[1:].lstrip()
        if not sign and body[:1] in ("+", "-"):
            sign, body = body[0], body[1:].lstrip()
    if _NOT_FINITE.match(body):
        raise error(f"{what} {_short(text)} is not a finite amount. {fix}")
    lead = re.match(r"[0-9][0-9_,.]*", body)
    if lead and "," in lead[0] and "_" not in lead[0]:  # before the match: 1.000,50 fails it
        _check_commas(lead[0], what, _short(text), fix, error)
    match = _USD_NUMBER.fullmatch(body)
    if match is None or match[3].lower() not in _USD_SUFFIXES:
        raise error(f"{what} {_short(text)} is not an amount of USD. {fix}")
    digits, exponent, suffix = match.groups()
    if "_" in digits and not re.fullmatch(r"[0-9]+(_[0-9]+)*(\.[0-9]*)?", digits):  # 1_000 only
        raise error(f"{what} {_short(text)} is not an amount of USD. {fix}")
    value = float(digits.replace(",", "").replace("_", "") + (exponent or ""))
    value *= _SUFFIX[suffix.lower()]
    return -value if sign == "-" else value


def _check_commas(digits: str, what: str, shown: str, fix: str, error) -> None:
    """Commas only between groups of three digits before the decimal point ('1,000.50'): the
    place of the first that is not ('10,00,000'), a decimal comma told to be a dot ('0,5')."""
    whole, dot, decimals = digits.partition(".")
    if "," in decimals:  # 1.000,50
        raise error(f"{what} {shown} has a comma after its decimal point: use a dot for "
                    f"decimals and commas for thousands (e.g. 1,000.50). {fix}")
    groups = whole.split(",")
    if groups[0].startswith("0"):  # 0,023 is no thousand: a decimal comma
        dot_for = f" ({groups[0]}.{groups[1]})" if len(groups) == 2 and not dot else ""
        raise error(f"{what} {shown}: the comma after {groups[0]!r} is no thousands "
                    f"separator: use a dot for decimals{dot_for}. {fix}")
    if len(groups[0]) > 3:
        raise error(f"{what} {shown}: the comma after {groups[0]!r} has {len(groups[0])} "
                    f"digits before it, not 1 to 3 (1,000,000). {fix}")
    for i, group in enumerate(groups[1:], 1):
        if len(group) != 3:
            why = (f"use a dot for decimals ({groups[0]}.{group}); commas only separate "
                   "thousands (1,000)" if len(groups) == 2 and 0 < len(group) < 3 and not dot else
                   "commas go between groups of three digits (1,000,000)")
            raise error(f"{what} {shown}: the comma after {','.join(groups[:i])!r} is "
                        f"followed by {len(group)} digit{'s' * (len(group) != 1)}, not 3: "
                        f"{why}. {fix}")


def _bound(x: float) -> str:
    if x < 1e6:
        return f"{x:,.0f}"
    mantissa, exponent = f"{x:.0e}".split("e")
    return f"{mantissa}e{int(exponent)}"  # 1e9, not Python's 1e+09


def _short(value: object) -> str:
    from catalog import shown_number  # 10^400 as "~1e400"

    text = shown_number(value) if isinstance(value, int) else repr(value)
    return text if len(text) <= 40 else text[:37] + "…'"


# an exponent as `tokens` takes one (1e3B): "1e9d" was "not a duration", not "too far away"
_DURATION = re.compile(r"^ *([+-]?)([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?) *"
                       r"(h|d|w|hours?|days?|weeks?) *$", re.I)
_DEADLINE_FIX = "To fix: pass e.g. 14d, 36h, 2w or a date such as 2027-03-31"


def _now() -> dt.datetime:
    """The current UTC time on the day gpuplan counts as today (``catalog.today_utc``: the
    UTC date or GPUPLAN_TODAY's), so a dated deadline is as far away for `plan` as for a team
    report of the same day (a date past by GPUPLAN_TODAY was planned from the machine's)."""
    from catalog import today_utc

    real = dt.datetime.now(dt.UTC)
    return real + (today_utc() - real.date())


def parse_deadline(text: str, now: dt.datetime | None = None) -> float:
    """Hours from now until the deadline: '14d', '36h', '2w', or a date/datetime (UTC).

    At least an hour and at most ten years away.
    """

    def error(message: str) -> PlannerError:
        return PlannerError(message, field="deadline", value=text)

    if not isinstance(text, str):
        raise error(f"`deadline` {_short(text)} is not a duration or a date. "
                    f"{_DEADLINE_FIX}")
    if text.strip() == "":
        raise error(f"`deadline` is empty. {_DEADLINE_FIX}")
    if len(text) > _MAX_TEXT:
        raise error(f"`deadline` {_short(text)} is not a duration or a date. "
                    f"{_DEADLINE_FIX}")
    match = _DURATION.match(text)
    if match:
        sign, digits, unit = match.groups()
        hours = float(digits) * {"h": 1, "d": 24, "w": 168}[unit[0].lower()]
        if sign == "-" and hours:
            raise error(f"`deadline` {text.strip()!r} is negative: it must be in the "
                        f"future. {_DEADLINE_FIX}")
    else:
        if _NOT_FINITE.match(text):
            raise error(f"`deadline` {_short(text)} is not a finite duration. "
                        f"{_DEADLINE_FIX}")
        try:
            when = dt.datetime.fromisoformat(text.strip())
        except ValueError as exc:
            # a date's shape with a field out of range: say which ("day is out of range for
            # month" is why 2027-02-30 is not a date), as a team file's dates do
            why = f" ({exc})" if "must be in" in str(exc) or "range" in str(exc) else ""
            raise error(f"`deadline` {_short(text)} is not a duration or a date{why}. "
                        f"{_DEADLINE_FIX}") from None
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.UTC)
        now = now or _now()
        if now.tzinfo is None:
            now = now.replace(tzinfo=dt.UTC)
        hours = (when - now).total_seconds() / 3600
        if hours <= 0:
            raise error(f"`deadline` {_short(text.strip())} is in the past. To fix: pass a "
                        "future date or a duration such as 14d")
    if hours <= 0:
        raise error(f"`deadline` must be in the future. {_DEADLINE_FIX}")
    if hours < MIN_DEADLINE_HOURS:
        raise error(f"`deadline` {_short(text.strip())} is less than an hour away. To fix: "
                    "give at least 1h")
    if not hours <= MAX_DEADLINE_HOURS:
        raise error(f"`deadline` {_short(text.strip())} is more than 10 years away. To fix: "
                    "check the date or duration (at most 10 years, e.g. 3650d)")
    return hours
