"""The Team page's edited tables as a team plan, and the planner's errors about them in their
words: a team file's messages name fields and `jobs[3]`; a table has rows and cells ("Jobs
table, row 3 (newjob): the earliest_start cell is empty. To fix: fill it in")."""

from __future__ import annotations

import ast
import re

import pandas as pd

from planner import team as teams_

# the edited tables' name as a team plan's source: the report says "Source: …" of it (the
# token "table" read as a file's name there)
TABLE_SOURCE = "the tables on the Team budget page"

# A team file's words for the edited tables' (a table has rows and cells, not fields)
_TABLE_WORDS = (
    (re.compile(r"^[^:]*: budgets\[(\d+)\]: "), r"Budgets table, row \1: "),
    # a job's name itself is wrong (no name to show), a period's budget, no job at all
    (re.compile(r"^[^:]*: jobs\[(\d+)\]: "), r"Jobs table, row \1: "),
    (re.compile(r"^[^:]*: budgets\.([^:]*): "), r"Budgets table, period \1: "),
    (re.compile(r"or remove this one$"), "or delete its row"),
    (re.compile(r"^[^:]*: 'jobs' must be a non-empty list of jobs\..*"),
     "the Jobs table has no job. To fix: add a row with a name"),
    (re.compile(r"^[^:]*: ([\d,]+) jobs; at most ([\d,]+) are allowed in one plan\..*"),
     r"the Jobs table has \1 jobs; at most \2 are allowed in one plan. To fix: delete rows"),
    (re.compile(r"missing '(\w+)'\. To fix: correct the team plan \(format: docs/team\.md\)"),
     r"the \1 cell is empty. To fix: fill it in"),
    (re.compile(r"To fix: give a value or remove the field"), "To fix: fill in the cell"),
    (re.compile(r"To fix: correct the team plan \(format: docs/team\.md\)"),
     "To fix: correct the cell"),
    (re.compile(r"e\.g\. \w+: "), "e.g. "),
    # the allocation's own refusal: the tables have budgets, no quotas
    (re.compile(r"^[^:]*: no allocation meets every quota and budget; "),
     "Budgets table: no allocation meets every budget; "),
    (re.compile(r"To fix: raise that quota or budget in the team plan, widen a job's window, "
                r"clouds or accelerators, or drop a job"),
     "To fix: raise that budget, widen a job's window (earliest_start to deadline) or its "
     "clouds, or delete a job's row"),
    (re.compile(r"\bjobs\[(\d+)\]"), r"row \1"),  # "name already used by jobs[1]"
    # a team file's other workload keys: the table has a model cell only
    (re.compile(r", or config config\.json, or params\b"), ""),
    # whatever else a message says in a team file's words
    (re.compile(rf"^{re.escape(TABLE_SOURCE)}: "), ""),
    (re.compile(r"\bin the team plan\b"), "in the tables"),
)


# a job's name as the planner quotes it (repr: 'a' or "it's"), kept out of the rewriting
_JOB_PREFIX = re.compile(r"""^[^:]*: jobs\[(\d+)\] ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"): """)


def table_words(message: str) -> str:
    """An error about the edited tables in their words: "Jobs table, row 3 (newjob): the
    earliest_start cell is empty. To fix: fill it in", not "jobs[3] 'newjob': missing
    'earliest_start'. To fix: correct the team plan (format: docs/team.md)". The job's name
    is shown as typed: a name "jobs[7]" became "row 7", one with a quote lost the prefix."""
    prefix = ""
    if m := _JOB_PREFIX.match(message):
        prefix, message = f"Jobs table, row {m[1]} ({ast.literal_eval(m[2])}): ", message[m.end():]
    for pattern, words in _TABLE_WORDS:
        message = pattern.sub(words, message)
    return prefix + message


def _cell(value) -> str:
    """A table cell as text; '' for an empty one (None, or the NaN/NaT an added row's blank
    cells hold — str() made those 'nan', read as a cloud or a date)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    return str(value).strip()


def plan_from_table(jobs: pd.DataFrame, budgets: pd.DataFrame) -> dict:
    """The edited tables as the team-plan mapping (docs/team.md's format). Empty rows are
    skipped, half-filled ones refused; an empty cell is left out of the job, so the plan's
    default (all clouds, every pricing model) or its "missing" message applies."""
    out = []
    for n, row in enumerate(jobs.to_dict("records"), start=1):
        if not _cell(row.get("name")):
            _empty_or_refused(row, f"Jobs table, row {n}: the name cell is empty")
            continue
        job = {"name": _cell(row["name"]),
               "workload": {"model": _cell(row.get("model")),
                            "tokens": _cell(row.get("tokens"))}}
        for key in ("earliest_start", "deadline"):
            if _cell(row.get(key)):
                job[key] = _cell(row[key])[:10]
        for key in ("team", "clouds", "pricing"):
            if _cell(row.get(key)):
                job[key] = _cell(row[key])
        for key in ("priority", "max_gpus"):
            if _cell(row.get(key)):
                job[key] = int(row[key])
        if _cell(row.get("commitment_use")):  # the planner bounds it and says where
            job["commitment_use"] = float(row["commitment_use"])
        out.append(job)
    data = {"name": "team plan (edited in the app)", "jobs": out}
    periods: dict[str, float] = {}
    for n, r in enumerate(budgets.to_dict("records"), start=1):
        if not (_cell(r.get("period")) and _cell(r.get("usd"))):
            _empty_or_refused(r, f"Budgets table, row {n}: the "
                              f"{'USD' if _cell(r.get('period')) else 'period'} cell is empty")
            continue
        period = _cell(r["period"])
        # a mapping would keep the last (a tighter budget vanished); 2027q1 is 2027Q1, as the
        # planner reads them (a period it refuses is left for its own message)
        if (same := next((p for p in periods if _label(p) == _label(period)), None)) is not None:
            raise teams_.TeamPlanError(
                f"Budgets table, row {n}: the period {period!r} is in an earlier row too"
                + (f" (as {same!r})" if same != period else "") + ". To fix: keep one row per "
                "period")
        periods[period] = float(r["usd"])
    if periods:
        data["budgets"] = periods
    return data


def _label(period: str) -> str:
    try:
        return teams_.period_label(period)
    except ValueError:
        return period


def _empty_or_refused(row: dict, problem: str) -> None:
    """An unusable row is skipped only when empty (an added row left blank): a half-filled
    one was dropped without a word, and its job or budget vanished."""
    if any(_cell(v) for v in row.values()):
        raise teams_.TeamPlanError(f"{problem}. To fix: fill it in, or delete the row")
