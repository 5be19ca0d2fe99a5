"""Checking the fields of a team plan: dates, months and periods, whole numbers, names,
probabilities, start offsets and budgets (none for a month no job can run in: ``RunSpans``).
Every error names where it is (file, job, field) and ends with what to do; values are quoted
back safely (``show``: 10^400 and megabyte strings stay short).
"""

from __future__ import annotations

import bisect
import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from catalog import (
    MAX_YEAR,
    MIN_YEAR,
    Catalog,
    GpuplanError,
    UnknownNameError,
    check_names,
    record,
    unquoted_hint,
)
from catalog import number_in_file as number
from catalog import shown_as_yaml as show
from catalog import whole_number_in_file as whole_number

from ..model import PlannerError, parse_usd, refer_to_fields
from ..search import MAX_BUDGET_USD

TEAM_FORMAT = "(format: docs/team.md)"
FIX = f"To fix: correct the team plan {TEAM_FORMAT}"

# Bounds far beyond real team plans; they turn typos and hostile files into clear errors
# instead of a MILP with millions of columns or a 10^12-GPU cluster.
MAX_OFFSETS = 32
MAX_OFFSET_DAYS = 3650
MAX_NAME_CHARS = 200

# ``_allocate`` keeps a run expected to end after its deadline when the job asks a low enough
# probability of meeting it; its cost then accrues to the months after the deadline too. Below
# 0.5 the median time may pass the deadline; from 0.5 the expected end (the base time plus
# the expected interruption losses) still can where the probability of meeting it counts the
# log-normal range around it, up to about 0.55 with the default range (more with a wider one).
# Below 0.75 a job's months after its deadline are not refused; above, only a range set near
# zero with --assume lets a run end past it (seen: by seconds, every log-σ 0).
OVERRUN_BELOW = 0.75
SHOWN_SPANS = 3


class TeamPlanError(PlannerError):
    """A team plan or actuals file that cannot be used; the message names the place."""

    names_file_keys = True  # its YAML keys (``in_team_terms``), never the CLI's flags


_THOUSANDS = re.compile(r"\d{3}(?:,\d{3})*(?:\.\d+)?\s*[A-Za-z]*")  # '000B', '000,000'


def no_unknown(entry: dict, allowed: Iterable[str], at: str) -> None:
    """Every key of ``entry`` is one of ``allowed`` (the first unknown one is the error)."""
    allowed = tuple(allowed)
    # a YAML key with no name (`{null}`, `~:`) is None: named as YAML writes it
    unknown = sorted("null" if k is None else str(k) for k in set(entry) - set(allowed))
    if cut := next((k for k in unknown if _THOUSANDS.fullmatch(k) and entry.get(k) is None),
                   None):  # `{tokens: 1,000B}` is `tokens: 1` and a key '000B' in YAML
        raise TeamPlanError(f"{at}: unknown field {cut!r}: inside {{…}} a comma separates "
                            "fields, so a number written with a thousands comma (e.g. 1,000B) "
                            "was cut in two. To fix: write it without the comma (1000B), or quote "
                            "it ('1,000B')")
    if unknown:
        raise TeamPlanError(str(UnknownNameError(
            "field", unknown[0], allowed, where=at,
            hint=f"use one of {', '.join(allowed)} (format: docs/team.md)")))


def date(value, at: str) -> dt.date:
    if isinstance(value, dt.datetime):
        value = value.date()
    if not isinstance(value, dt.date):
        if not isinstance(value, str) or len(value) > 40:
            raise TeamPlanError(f"{at}: {show(value)} is not a date. To fix: write YYYY-MM-DD, "
                                "e.g. 2027-03-01")
        try:
            value = dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            # "day is out of range for month" says why 2027-02-30 is not a date.
            why = f" ({exc})" if "range" in str(exc) else ""
            raise TeamPlanError(f"{at}: {value!r} is not a date{why}. To fix: write "
                                "YYYY-MM-DD, e.g. 2027-03-01") from None
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise TeamPlanError(f"{at}: {value} is outside {MIN_YEAR}–{MAX_YEAR}. To fix: check "
                            "the year")
    return value


def whole(value, low: int, high: int) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)
            and low <= value <= high)


def text(value, at: str) -> str:
    """A name shown in reports: one printable line of at most MAX_NAME_CHARS."""
    if not isinstance(value, str) or not value.strip():
        raise TeamPlanError(f"{at}: expected a non-empty string, got {show(value)}"
                            f"{unquoted_hint(value)}. {FIX}")
    if len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise TeamPlanError(f"{at}: {show(value)} must be one printable line of at most "
                            f"{MAX_NAME_CHARS} characters. {FIX}")
    return value.strip()


def no_nulls(entry: dict, defaults: Mapping[str, str], at: str) -> None:
    """Refuse an optional key written with no value: ``clouds:`` whose items were commented
    out was read as the key left out — every cloud — where an empty list is refused.
    ``defaults``: each key's meaning when left out, for the fix."""
    for key, default in defaults.items():
        if key in entry and entry[key] is None:
            raise TeamPlanError(f"{at}: {key} is empty (the key has no value). To fix: give "
                                f"it a value, or remove the key for the default ({default})")


def probability(value, at: str) -> float | None:
    """A probability in (0, 1); 0 disables the requirement (0.0), None when not given. 1 is
    refused as ``Constraints`` refuses it: the model's range never makes a finish certain."""
    if value is None:
        return None
    value = number(value)
    if isinstance(value, int | float) and not isinstance(value, bool) and value == 0:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < 1:
        raise TeamPlanError(f"{at}: must be a number in (0, 1) (0: no probability asked; 1 "
                            "is never met: the model's range makes no finish certain), got "
                            f"{show(value)}. To fix: e.g. 0.9")
    return float(value)


# A job's later starts where neither it nor the plan gives any, for a window longer than the
# last of them (``default_offsets`` adds starts inside a shorter one).
DEFAULT_START_OFFSETS_DAYS = (0, 7, 14)


def default_offsets(window_days: int) -> tuple[int, ...]:
    """The start offsets of a job whose file gives none (docs/team.md): 0, 7 and 14 days
    where they fall inside the window, and for a window of 14 days or less also ¼, ½ and ¾ of
    it (whole days, at least 1 apart), so that short jobs sharing a quota can be staggered —
    with 0/7/14 alone a 5-day window had one start, and two jobs that fit one after the other
    were declared infeasible. At most 5 offsets: the MILP stays small (``MAX_JOB_STARTS``);
    a window over 14 days keeps 0, 7, 14 exactly."""
    if window_days > DEFAULT_START_OFFSETS_DAYS[-1]:
        return DEFAULT_START_OFFSETS_DAYS
    step = max(1, window_days // 4)
    spread = {d for d in (*DEFAULT_START_OFFSETS_DAYS, step, 2 * step, 3 * step)
              if d < window_days}
    return tuple(sorted(spread | {0}))


def _amount(value) -> str:
    """A budget as typed, or compactly: 1e13 read as a float was "got 10000000000000.0"."""
    if isinstance(value, float) and value == value and abs(value) != float("inf") \
            and value.is_integer():
        return f"{value:,.0f}" if abs(value) < 1e16 else f"{value:g}"
    return show(value)


def offsets(value, at: str) -> tuple[int, ...]:
    value = whole_number(value)
    if isinstance(value, int) and not isinstance(value, bool) and whole(value, 0, MAX_OFFSET_DAYS):
        # a bare 7 was taken as [7], a start 7 days late only, where "up to 7" was meant
        fix = ("[0] to start on earliest_start only, or e.g. [0, 7]" if value == 0 else
               f"[0, {value}] to start on earliest_start or {value} day"
               f"{'' if value == 1 else 's'} later, or [{value}] for the later start only")
        raise TeamPlanError(f"{at}: is one number ({value}), not a list of start days. To fix: "
                            + fix)
    if isinstance(value, list | tuple):
        value = [whole_number(v) for v in value]
    if (not isinstance(value, list | tuple) or not value or len(value) > MAX_OFFSETS
            or any(not whole(v, 0, MAX_OFFSET_DAYS) for v in value)):
        raise TeamPlanError(f"{at}: must be a list of at most {MAX_OFFSETS} whole days from 0 "
                            f"to {MAX_OFFSET_DAYS}, got {show(value)}. To fix: e.g. [0, 7, 14] "
                            "([0] alone: start at earliest_start only)")
    return tuple(sorted(set(value)))


def names(value, at: str, allowed: Iterable[str] | None, kind: str = "name", *,
          spell: Callable[[str], str] | None = None,
          allow_empty: bool = False) -> tuple[str, ...]:
    """A list (or comma-separated string) of names, each one of ``allowed`` when given;
    ``spell`` puts each in the spelling ``allowed`` uses (e.g. lower-case clouds). An empty
    list is refused unless ``allow_empty`` (an exclusion list): a job allowed no cloud was
    silently planned on every cloud, the meaning of leaving the key out."""
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TeamPlanError(f"{at}: expected a list of names, got {show(value)}. {FIX}")
    if not value and not allow_empty:
        raise TeamPlanError(f"{at}: is empty, which would allow no {kind} at all. To fix: "
                            f"list at least one {kind}, or leave the key out to allow every "
                            f"{kind}")
    spelling = None if spell is None else (lambda v: spell(v.strip()))
    if allowed is None:
        return tuple(value if spelling is None else map(spelling, value))
    try:  # quoted as written, matched as spelled
        return check_names(kind, value, allowed, spell=spelling, where=at)
    except UnknownNameError as exc:
        raise TeamPlanError(str(exc)) from None


def accelerator(catalog: Catalog, name: str, at: str) -> str:
    try:
        return catalog.resolve_accelerator(name)
    except GpuplanError as exc:
        raise TeamPlanError(f"{at}: {exc}") from None


def period_label(period: str) -> str:
    """The one spelling of a budget period, as reports show it and duplicates are found:
    '2027q2' → '2027Q2', 'Total' → 'total', a month as written. Raises ValueError for what
    ``period_months`` refuses (the app's Budgets table and a team file's budgets agree on
    which two rows are the same period)."""
    label = period.upper() if len(period) == 6 else "total" if period.lower() == "total" \
        else period
    period_months(label)
    return label


def period_months(period: str) -> tuple[str, ...] | None:
    """'2027-03' → ('2027-03',); '2027Q2' → ('2027-04', '2027-05', '2027-06'); 'total' → None
    (every month). Raises ValueError for anything else."""
    if period == "total":
        return None
    if len(period) == 6 and period[4] in "Qq" and period[:4].isdigit() and period[5] in "1234":
        q = int(period[5])
        return tuple(f"{period[:4]}-{m:02d}" for m in range(3 * q - 2, 3 * q + 1))
    dt.date.fromisoformat(f"{period}-01")
    if len(period) != 7:
        raise ValueError(period)
    return (period,)


def _month(label: str) -> tuple[dt.date, dt.date]:
    """[first day, first day of the next month) of "YYYY-MM"."""
    first = dt.date.fromisoformat(f"{label}-01")  # a month: its parser checked it
    y, m = first.year, first.month
    return first, dt.date(y + m // 12, m % 12 + 1, 1)


class Window(Protocol):
    """What of a job (``_spec.Job``) says when it can run."""

    earliest_start: dt.date
    deadline: dt.date
    start_offsets_days: tuple[int, ...]
    min_probability: float


@record(kw_only=False)
class RunSpans:
    """When the jobs of a plan can run, as merged [start, end) days (00:00 UTC; ``end`` None:
    no end). A job's runs start at earliest_start plus one of its start offsets (``_allocate``:
    none before the smallest) and end by its deadline — the offsets move the start, never the
    deadline — except that with 0 < min_probability < ``OVERRUN_BELOW`` a run may be expected
    to end after the deadline, so such a job's span has no end."""

    spans: tuple[tuple[dt.date, dt.date | None], ...]  # disjoint, in order
    ends: tuple[dt.date, ...]  # each span's end, date.max for none: bisected by ``runs_in``
    last_deadline: dt.date  # a guess at the month meant stays before it (not in an overrun)

    @classmethod
    def of(cls, jobs: Iterable[Window]) -> RunSpans:
        jobs = tuple(jobs)
        raw = sorted(((j.earliest_start + dt.timedelta(days=min(j.start_offsets_days)),
                       None if 0 < j.min_probability < OVERRUN_BELOW else j.deadline)
                      for j in jobs), key=lambda s: s[0])
        merged: list[tuple[dt.date, dt.date | None]] = []
        for start, end in raw:
            if merged and (merged[-1][1] is None or start <= merged[-1][1]):
                last = merged[-1][1]
                merged[-1] = (merged[-1][0], None if None in (last, end) else max(last, end))
            else:
                merged.append((start, end))
        return cls(tuple(merged), tuple(dt.date.max if e is None else e for _, e in merged),
                   max(j.deadline for j in jobs))

    def runs_in(self, months: Iterable[str]) -> bool:
        """Whether some job can run (a part of) its time in one of ``months``: the first span
        ending after a month's first day starts before its end (a bisection, as 10,000 quota
        rules × 500 jobs apart took seconds)."""
        for lo, hi in map(_month, months):
            k = bisect.bisect_right(self.ends, lo)
            if k < len(self.spans) and self.spans[k][0] < hi:
                return True
        return False

    def void(self, period: str, months: tuple[str, ...], what: str) -> str | None:
        """None when a job can run in ``months`` (the months of ``period``); else why the
        ``what`` ("budget", "quota") limits nothing, with the same month or quarter in the
        nearest year a job runs in, if any, as the close match (a typo in the year)."""
        if self.runs_in(months):
            return None
        which = period if len(months) == 1 else f"{period} ({months[0]} to {months[-1]})"
        close = self._same_period(period, months)
        guess = f" Did you mean \"{close}\"?" if close else ""
        return (f"no job can run in {which}: {self.described()}, so this {what} would limit "
                f"nothing.{guess}")

    def _same_period(self, period: str, months: tuple[str, ...]) -> str | None:
        """The same month or quarter in the nearest year a job runs in before its deadline (a
        month only an overrun reaches is no likelier meant) and a team plan may name."""
        first = max(self.spans[0][0].year, MIN_YEAR)
        last = min((self.last_deadline - dt.timedelta(days=1)).year, MAX_YEAR)
        year = int(period[:4])
        for y in sorted(range(first, last + 1), key=lambda y: (abs(y - year), -y)):
            meant = [f"{y:04d}{m[4:]}" for m in months]
            if _month(meant[0])[0] < self.last_deadline and self.runs_in(meant):
                return f"{y:04d}{period[4:]}"
        return None

    def described(self) -> str:
        """"the jobs run from 2027-03-01 to 2027-06-30 (months 2027-03 to 2027-06)": one span
        per stretch of days some job can run in (the first few), each ending at 00:00 UTC of
        its last deadline."""
        parts = []
        for start, end in self.spans[:SHOWN_SPANS]:
            if end is None:
                parts.append(f"from {start} on (a min_probability below {OVERRUN_BELOW} lets a "
                             "run end after its deadline)")
                continue
            last = f"{end - dt.timedelta(days=1):%Y-%m}"
            months = (f"month {last}" if last == f"{start:%Y-%m}"
                      else f"months {start:%Y-%m} to {last}")
            parts.append(f"from {start} to {end} ({months})")
        more = len(self.spans) - SHOWN_SPANS
        return ("the jobs run " + ", and ".join(parts)
                + (f" … and {more} more spans" if more > 0 else ""))


def budgets(value, source: str, spans: RunSpans) -> tuple[tuple[str, float], ...]:
    """The budgets, checked; a month or quarter in which no job can run (``spans``: when the
    jobs run) is refused (``RunSpans.void``)."""
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise TeamPlanError(f"{source}: budgets must be a mapping of period to USD, e.g. "
                            "{\"2027-03\": 120000, \"2027Q2\": 300000}. " + FIX)
    out = []
    seen: dict[str, str] = {}
    for key, usd in value.items():
        # the key as the file writes it: "budgets.None" for `~: 100`, "budgets.True" for yes
        period = key[:40] if isinstance(key, str) else show(key)
        at = f"{source}: budgets.{period}"
        try:
            written, period = period, period_label(period)
            months = period_months(period)
        except ValueError:
            raise TeamPlanError(f"{at}: not a period. To fix: use a month \"2027-03\", a "
                                "quarter 2027Q2, or total") from None
        if months and not MIN_YEAR <= int(months[0][:4]) <= MAX_YEAR:
            raise TeamPlanError(f"{at}: the year is outside {MIN_YEAR}–{MAX_YEAR}, as job "
                                "dates are. To fix: check the year")
        if period in seen:  # two budgets for one quarter: which binds was a guess
            raise TeamPlanError(f"{at}: the same period as budgets.{seen[period]}. To fix: "
                                "keep one of them")
        seen[period] = written
        why = spans.void(period, months, "budget") if months else None
        if why:
            raise TeamPlanError(f"{at}: {why} To fix: budget a month or quarter the jobs run in,"
                                " or remove this one")
        written_usd = usd
        if isinstance(usd, str):  # as --budget reads it: "30k", "$30,000", "1e6"
            try:
                usd = parse_usd(usd, "budget_usd")
            except PlannerError as exc:  # named by its key: "team.yaml: budgets.total is empty"
                raise TeamPlanError(f"{source}: " + refer_to_fields(
                    str(exc), lambda _, key=written: f"budgets.{key}")) from None
        # Compared before float(): float(10**400) raises, and NaN fails every comparison.
        if isinstance(usd, bool) or not isinstance(usd, int | float) \
                or not 0 <= usd <= MAX_BUDGET_USD:
            raise TeamPlanError(f"{at}: must be a number of USD >= 0 and <= {MAX_BUDGET_USD:,.0f}"
                                f", got {_amount(written_usd)}. To fix: e.g. 120000")
        out.append((period, float(usd)))
    return tuple(out)
