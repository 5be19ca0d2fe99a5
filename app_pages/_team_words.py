"""The Team page's words for the planner's errors about its edited tables: a team file's
messages name fields and `jobs[3]`; a table has rows and cells ("Jobs table, row 3 (newjob):
the earliest_start cell is empty. To fix: fill it in")."""

from __future__ import annotations

import ast
import re

# A team file's words for the edited tables' (a table has rows and cells, not fields)
_TABLE_WORDS = (
    (re.compile(r"^[^:]*: budgets\[(\d+)\]: "), r"Budgets table, row \1: "),
    # a job's name itself is wrong (no name to show), a period's budget, no job at all
    (re.compile(r"^[^:]*: jobs\[(\d+)\]: "), r"Jobs table, row \1: "),
    (re.compile(r"^[^:]*: budgets\.([^:]*): "), r"Budgets table, period \1: "),
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
    (re.compile(r"^table: "), ""),
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
