"""Numbers as gpuplan shows them, in every message, table and report: money (whole dollars from
$100, cents below), durations in the unit that reads best, counts, parameter sizes and chances.
A figure that is not zero never reads as zero or in exponent notation: below the digits shown
it reads as the bound it is under (``below_shown``: "<$0.001", "<0.001")."""

from __future__ import annotations

import math
from collections.abc import Sequence


def below_shown(x: float, least: float, prefix: str = "", *,
                rounds: bool = False) -> str | None:
    """``x`` as the bound it lies under where it is not zero but smaller in size than ``least``,
    the smallest figure the caller's digits show — or, with ``rounds``, where it rounds to zero
    at ``least``'s decimals, as the caller's f-string would write it (0.5 at none: half to
    even): "<{prefix}{least}", or ">-{prefix}{least}" below zero; None where the digits show
    ``x`` (zero included). The one rule for money, amounts and figures (``format_usd``,
    ``format_amount``, the app's ``usd`` and ``amount``, the reports' ``num``, the CLI's price
    cells): "$1e-05" and "0" read as no cost, or no work."""
    if x == 0:
        return None
    if not (round(x, max(0, round(-math.log10(least)))) == 0 if rounds else abs(x) < least):
        return None
    shown = f"{least:.12f}".rstrip("0").rstrip(".")  # 0.00001, not :g's "1e-05"
    return f">-{prefix}{shown}" if x < 0 else f"<{prefix}{shown}"


def format_usd(x: float) -> str:
    """Money as every message and report shows it: whole dollars from $100, cents below (a
    $0.50 budget is not "$0"; ten gpt2 plans from $1.52 to $2.41 all read "$2", as the app
    writes them: ``app_pages._format.usd``), the sign before the dollar sign, "<$0.001" below
    a tenth of a cent; "—" for a figure that is not a number (NaN or infinite: no money)."""
    if not math.isfinite(x):
        return "—"
    x = x + 0.0  # -0.0 is $0, not "$-0"
    if 0 < abs(x) < 0.01:  # a tenth of a cent is not "$0.00", and below it not "$1e-05"
        return below_shown(x, 0.001, "$") or (f"-${-x:.2g}" if x < 0 else f"${x:.2g}")
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
    # 1e-5 GPU-hours (a team report's tiny job) read "1e-05"
    return f"{x:,.1f}" if abs(x) >= 0.995 else below_shown(x, 0.001) or f"{x:.2g}"


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
