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
from collections.abc import Sequence

from ._errors import PlannerError

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


def format_usd(x: float) -> str:
    """Money as every message and report shows it: whole dollars from $100, cents below (a
    $0.50 budget is not "$0"; ten gpt2 plans from $1.52 to $2.41 all read "$2", as the app
    writes them: ``app_pages._format.usd``), the sign before the dollar sign, "<$0.001" below
    a tenth of a cent; "—" for a figure that is not a number (NaN or infinite: no money)."""
    if not math.isfinite(x):
        return "—"
    x = x + 0.0  # -0.0 is $0, not "$-0"
    if 0 < abs(x) < 0.01:  # a tenth of a cent is not "$0.00", and below it not "$1e-05"
        return (">-$0.001" if x < 0 else "<$0.001") if abs(x) < 0.001 else \
            f"-${-x:.2g}" if x < 0 else f"${x:.2g}"
    digits = _usd_digits(x)
    return f"-${-x:,.{digits}f}" if x < 0 else f"${x:,.{digits}f}"


def _usd_digits(x: float) -> int:
    """The decimals ``format_usd`` shows from a cent on: cents below $100, none from it (99.995
    is "$100", as 100 is)."""
    return 2 if 0 < round(abs(x), 2) < 100 else 0


def format_usd_at_least(x: float, *, cents: bool = False) -> str:
    """``format_usd`` of ``x`` rounded up to the digits it shows: a budget to raise to must
    cover the plan ("$25,381" for $25,381.04 was refused again). ``cents``: to the cent
    whatever the amount, never below ``x`` (no slack): where the whole dollars read as the
    budget they exceed ("$25,381.05" for $25,381.0407 beside a budget of $25,381.04)."""
    if cents:
        return f"${math.ceil(x * 100) / 100:,.2f}"
    if not math.isfinite(x) or abs(x) < 0.01:
        return format_usd(x)
    scale = 10 ** _usd_digits(x)
    return format_usd(math.ceil(x * scale - 1e-9) / scale)


def duration_unit(h: float) -> tuple[float, str]:
    """The unit a duration ``h`` (hours) is shown in, as (per hour, name): "s" below a minute,
    "min" below an hour, "h" below two days, "d" from two days — judged on the figure as shown
    (59.7 s read "60 s", 0.9999 h "60.0 min" and 47.96 h "48.0 h": now "1.0 min", "1.0 h" and
    days). ``format_hours``, ``format_hours_range`` and the app's durations all pick by it."""
    if round(h * 3600) < 60:
        return 3600.0, "s"
    if round(h * 60, 1) < 60:
        return 60.0, "min"
    if round(h, 1) < 48:
        return 1.0, "h"
    return 1 / 24, "d"


def format_hours(h: float, *, decimals_from_2_days: int = 0) -> str:
    """A duration as people read it: seconds below a minute, minutes below an hour, hours with
    a decimal below 48 h, then hours (``decimals_from_2_days``) and days — a 2-minute run
    read "0.0 h"; "—" for a figure that is not a number."""
    if not math.isfinite(h):
        return "—"
    per_hour, unit = duration_unit(h)
    if unit == "s":
        s = h * 3600
        return f"{s:.2g} s" if s < 10 else f"{s:,.0f} s"
    if unit != "d":
        return f"{h * per_hour:,.1f} {unit}"
    return f"{h:,.{decimals_from_2_days}f} h ({h / 24:,.1f} d)"


def format_hours_range(lo: float, hi: float, *, decimals_from_2_days: int = 0) -> str:
    """A P10–P90 range of hours in one unit, its upper end's, with ``format_hours``'s
    precision: "1.3–2.6 h" beside a median of 1.8 h (it read "1–3 h"), "2.1–4.0 min"."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return "—"
    per_hour, unit = duration_unit(hi)
    if unit == "s":
        return f"{lo * 3600:.2g}–{hi * 3600:.2g} s"
    if unit != "d":
        return f"{lo * per_hour:,.1f}–{hi * per_hour:,.1f} {unit}"
    return f"{lo:,.{decimals_from_2_days}f}–{hi:,.{decimals_from_2_days}f} h"


def format_amount(x: float) -> str:
    """A count of GPU-hours (or the like) to a figure that shows: whole from 100, one
    decimal from 1, two significant digits below (0.31 GPU-hours read "0")."""
    if not math.isfinite(x):
        return "—"
    # judged on the figure as shown: 99.96 read "100.0" beside 100's "100", 0.999 "1"
    # beside 1.0's "1.0"
    if abs(x) >= 99.95:
        return f"{x:,.0f}"
    return f"{x:,.1f}" if abs(x) >= 0.995 else f"{x:.2g}"


def format_expected(n: float) -> str:
    """An expected count of events (interruptions) as ``format_amount`` writes it, "< 0.01"
    below that: the plan card said "0.0" and ``estimate`` "~9.8e-05" for the same run, and
    the app "2" for a CLI's "1.7"."""
    if math.isfinite(n) and 0 <= n < 0.01:  # 0.005 read "0.005" beside 0.0049's "< 0.01"
        return "< 0.01"
    return format_amount(n)


def format_count(n: float) -> str:
    """A count as people write token counts: 50e9 → '50B', 1.5e12 → '1.5T', 1e15 →
    '1,000T' (not Python's '1e+12')."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= 0.9995 * scale:  # 999.6e9 rounds to 1T, not "1,000B"
            v = n / scale
            return (f"{v:,.3g}" if v < 999.5 else f"{v:,.0f}") + suffix
    return f"{n:,.0f}"


def format_params(n: float) -> str:
    """A parameter count in billions with two decimals, as model cards write them (8.03B);
    below 5M, where that reads "0.00B", as a count (``format_count``: 1.2M, 3,072)."""
    return f"{n / 1e9:,.2f}B" if n >= 5e6 else format_count(n)


def format_requirement(p: float) -> str:
    """A probability the user asked for, as given: 0.9 → "90%", 0.99999 → "99.999%" (not
    ``format_chance``'s "> 99.99%", which describes a computed one)."""
    for digits in range(6):
        text = f"{p:.{digits}%}"
        # relative: 1e-300 "matched" "0%" within an absolute 1e-12, so P ≥ 1e-300 read P ≥ 0%
        if abs(float(text[:-1]) / 100 - p) <= 1e-9 * p:
            return text
    # below 0.0001% six decimals say 0.000000%: a tiny ask is shown (1e-298%), not rounded away
    return f"{p:.6%}" if p >= 1e-6 else f"{p * 100:.3g}%"


def either(words: Sequence[str]) -> str:
    """"a", "a or b", "a, b or c": the choices a fix offers."""
    return ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else "".join(words)


def format_figure(v: float | None) -> str:
    """A measured figure (TFLOP/s, GB/s) with at least 3 significant digits: 1 decimal from
    100 (989.5), 3 significant digits below it (a CPU run's 0.00211 is not "0.0", nor 0.1346
    "0.1" beside 0.0955) and for absurd figures (1e308 stays short); "-" for none."""
    if v is None or not math.isfinite(v):
        return "-"
    if 100 <= abs(v) < 1e6 or v == 0:
        return f"{v:,.1f}"
    return f"{v:#.3g}" if abs(v) < 100 else f"{v:.3g}"  # "#": 30.0 stays "30.0", not "30"


def format_chance(p: float, *, below: float | None = None) -> str:
    """A probability as a whole percentage, with decimals where rounding would say 100% of a
    chance below 1 (or 0% of one above 0): a plan "with probability 100%" read as no risk at
    all; "—" for NaN. 1.0 itself is "> 99.99%": the model's range makes no finish certain, so
    a computed 1.0 is a rounding of the distribution's tail. ``below``: a threshold ``p`` is
    known to miss, kept visibly missed (0.898 against 90% reads "89.8%", not "90%")."""
    if not math.isfinite(p):
        return "—"
    if p >= 1:
        return "> 99.99%"
    for digits in (0, 1, 2):
        text = f"{p:.{digits}%}"
        shown = float(text[:-1])
        if not ((p < 1 and shown >= 100) or (p > 0 and shown <= 0)
                # in percent, rounded: 89.6 / 100 is 0.8959999999999999 < 0.896
                or (below is not None and p < below and shown >= round(below * 100, 9))):
            return text
    if below is not None and p < below and p > 0.0001:  # a hair below it
        return f"< {format_requirement(below)}"
    return "> 99.99%" if p > 0.5 else "< 0.01%"


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
