"""Actuals: what each job of a team plan has spent so far, from a CSV for ``--actuals``.

    job,gpu_hours,cost_usd,note
    pretrain-8b,14200,21050.40,March invoice

Other columns are ignored, several rows for one job are summed and rows with no value at all
(a blank line, or ``,,`` as spreadsheets export an empty row) are skipped; errors name the
row as a spreadsheet numbers it (the header is row 1). ``parse_actuals`` takes the text;
``load_actuals`` reads a file through ``catalog.read_user_text`` (a regular file of at most
16 MiB, UTF-8). Every value is a finite number from 0 to a generous bound, and every job must
be one of the plan's (close matches are suggested). ``compare_actuals`` (``_render``)
lines the result up with the allocation.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from pathlib import Path

from catalog import CatalogFileError, UnknownNameError, read_user_text

from ..team import TeamPlanError

MAX_ACTUALS_BYTES = 16 * 2**20
MAX_ACTUAL_GPU_HOURS = 1e10
MAX_ACTUAL_USD = 1e12

ACTUALS_COLUMNS = ("job", "gpu_hours", "cost_usd")

# A number as a spreadsheet or a bill writes it: ASCII digits, a decimal point, commas only
# between thousands, an optional leading "$" and exponent. float() alone also took "2_0.5"
# (20.5), "10$", "$$20" and Arabic-Indic or full-width digits, silently.
_NUMBER = re.compile(r"-?\$?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]*)(?:\.[0-9]*)?"
                     r"(?:[eE][-+]?[0-9]+)?")


def load_actuals(path_or_text: str | Path, team_plan) -> dict[str, dict]:
    """``parse_actuals`` of a CSV file (or of CSV text: anything containing a newline)."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        return parse_actuals(path_or_text, team_plan, source="actuals.csv")
    try:  # (a leading ~ is the home folder: read_user_text)
        text = read_user_text(path_or_text, what="actuals file", max_bytes=MAX_ACTUALS_BYTES)
    except CatalogFileError as exc:
        raise TeamPlanError(str(exc)) from None
    return parse_actuals(text, team_plan, source=str(path_or_text))


def parse_actuals(text: str, team_plan, *,
                  source: str = "actuals.csv") -> dict[str, dict]:
    """Spent GPU-hours and USD per job from CSV text with columns job, gpu_hours, cost_usd
    (other columns are ignored; several rows for one job are summed)."""
    text = text.removeprefix("\ufeff")
    _check_quotes_close(text, source)
    reader = csv.reader(io.StringIO(text, newline=""))
    read = [0]  # the last line of the last whole row read

    def rows():
        for cells in reader:
            read[0] = reader.line_num
            yield cells

    try:
        return _actual_rows(rows(), team_plan, source)
    except csv.Error as exc:  # a NUL byte, an over-long field, a stray quote
        # the error is in the row after the last one read whole (line_num also counts the
        # lines of the row being read)
        raise TeamPlanError(f"{source}: line {read[0] + 1}: not valid CSV ({exc}). "
                            "To fix: save the file as plain CSV") from None


def _check_quotes_close(text: str, source: str) -> None:
    """A quote never closed swallows the rest of the file into one cell, which the rows'
    check then called "row 2 has 1 cell" — not the cause. The strict reader finds it."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    ended = 0  # the last line of the last whole row: the open quote is in the row after it
    try:
        for _ in reader:
            ended = reader.line_num
    except csv.Error as exc:
        if "unexpected end of data" not in str(exc):
            return  # other oddities: the tolerant reader below says what they are
        raise TeamPlanError(f"{source}: line {ended + 1}: a quote (\") is never closed, so "
                            "the rest of the file reads as one cell. To fix: close the quote, "
                            "or remove it") from None


def _records(reader, fields: list[str]):
    """(row number, cells by column) of every row after the header that has a value, rows
    numbered as a spreadsheet shows them: the header is row 1, a blank line is a row, a quoted
    cell over several lines is one row (they were numbered by the last physical line read, so
    a multi-line note made "row 5" of row 3). Rows with no value at all (a blank line, the
    ",," a spreadsheet exports for an empty row) are skipped. As ``csv.DictReader``: cells
    beyond the header under None, a missing cell None."""
    for number, cells in enumerate(reader, start=2):
        if not any(c.strip() for c in cells):
            continue
        row = dict(zip(fields, cells, strict=False))
        row.update({f: None for f in fields[len(cells):]})
        if len(cells) > len(fields):
            row[None] = cells[len(fields):]
        yield number, row


def _actual_rows(reader, team_plan, source: str) -> dict[str, dict]:
    # " GPU_Hours" in a hand-edited header is gpu_hours
    fields = [str(f).strip().lower() for f in next(reader, None) or ()]
    missing = [c for c in ACTUALS_COLUMNS if c not in fields]
    if missing:
        sep = next((s for s in (";", "\t", "|") if len(fields) == 1 and s in fields[0]), None)
        why = (f" (the header is one column: the file separates columns with {sep!r})"
               if sep else "")
        raise TeamPlanError(f"{source}: missing column(s) {missing}{why}. To fix: the header "
                            f"must include {', '.join(ACTUALS_COLUMNS)}, separated by commas")
    twice = [c for c in ACTUALS_COLUMNS if fields.count(c) > 1]
    if twice:  # csv keeps the last: the spend went to the second job column, silently
        raise TeamPlanError(f"{source}: column {twice[0]!r} appears {fields.count(twice[0])} "
                            "times in the header. To fix: keep one")
    known = [j.name for j in team_plan.jobs]
    # a name as the plan writes it, whichever Unicode form the CSV's tool wrote it in
    as_planned = {unicodedata.normalize("NFC", k): k for k in known}
    out: dict[str, dict] = {}
    limits = {"gpu_hours": MAX_ACTUAL_GPU_HOURS, "cost_usd": MAX_ACTUAL_USD}
    for n, row in _records(reader, fields):
        name = (row["job"] or "").strip()
        name = as_planned.get(unicodedata.normalize("NFC", name), name)
        at = f"{source}: row {n}"
        if any((c or "").strip() for c in row.get(None) or ()):  # cells beyond the header
            # (csv puts them under None; an empty one is a trailing comma, nothing shifted)
            raise TeamPlanError(f"{at}: {len(fields) + len(row[None])} cells for a header of "
                                f"{len(fields)} columns. To fix: correct the row (a comma in a "
                                "number or name must be quoted)")
        short = [c for c in ACTUALS_COLUMNS if row[c] is None]  # csv's value of a lost cell
        if short:  # (an empty cell is ""): "row 2: cost_usd '' is not a number" said less
            cells = sum(v is not None for k, v in row.items() if k is not None)
            raise TeamPlanError(f"{at} has {cells} cell{'s' if cells != 1 else ''}, "
                                f"the header has {len(fields)} columns (no {', '.join(short)})"
                                ". To fix: give every row a cell for each of "
                                f"{', '.join(ACTUALS_COLUMNS)} (an empty cell still needs its "
                                "comma)")
        if not name:  # "unknown job ''" sent the reader looking for a job named ''
            raise TeamPlanError(f"{at}: the job cell is empty. To fix: give the name of the "
                                "job from the team plan that the spending is for, or remove "
                                "the row")
        if name not in known:
            raise TeamPlanError(str(UnknownNameError("job", name, known, where=at,
                                                     hint="use a job name from the team plan")))
        values = {}
        for col, limit in limits.items():
            raw = (row[col] or "").strip()
            try:
                # commas only between thousands: "21.050,40" (a European 21,050.40) was read
                # as 21.0504 and "21,05" as 2105, silently
                if len(raw) > 40 or not _NUMBER.fullmatch(raw) or not any(
                        c.isdigit() for c in raw):
                    raise ValueError(raw)
                v = float(raw.replace(",", "").replace("$", ""))
            except ValueError:
                raise TeamPlanError(f"{at} (job {name!r}): {col} {raw[:40]!r} is not a number. "
                                    "To fix: write e.g. 1234.5 or \"1,234.5\" (a decimal "
                                    "point; commas only between thousands, quoted)") from None
            if not 0 <= v <= limit:  # NaN fails this too
                raise TeamPlanError(f"{at} (job {name!r}): {col} must be a number from 0 to "
                                    f"{limit:,.0f}, got {raw!r}. To fix: correct the row")
            values[col] = v
        acc = out.setdefault(name, {"gpu_hours": 0.0, "cost_usd": 0.0})
        acc["gpu_hours"] += values["gpu_hours"]
        acc["cost_usd"] += values["cost_usd"]
    return out
