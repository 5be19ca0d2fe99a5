"""Damage in the probe database: telling a damaged file from a damaged (or hand-edited) report.

SQLite reads a page whose bytes were overwritten (a bad disk, a copy cut short, a stray write)
without complaint more often than not: a table page whose cell count shrank drops rows, an
index page that lost entries hides them from a lookup, a cell pointing into other bytes yields
text that is not UTF-8 or not JSON. Each of those looked like a smaller store, "no probe report
N" or one report "not UTF-8". SQLite's ``PRAGMA quick_check`` tells damage to the file's
structure apart (pages, cells, records) but reads every page, so it runs only when something
looked wrong (``StoreConnection.damage``):

- a stored text that is not UTF-8 or not JSON (``StoreConnection.unreadable``);
- an error of SQLite's that is none of lock, full disk, permissions, I/O;
- an error raised while the store was read (a missing or damaged report);
- a table and its index that hold different numbers of rows, or a NULL in a NOT NULL column
  (``check_rows``: it reads only the b-trees' leaf pages, not the reports' text, so every
  read can afford it).

Damage inside a report's stored text alone leaves the file's structure whole: that report is
damaged (``_reports._damaged``, fixed by removing it), as a hand edit is, not the file.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from ..model import CalibrationError

# the one fix for a damaged file (what the damaged-header message said first); a damaged
# report has its own, `gpuplan probe remove N`, and this one as the alternative
REBUILD_FIX = "move {what} away and ingest the reports again"
MAX_DETAIL_CHARS = 160  # SQLite's words in a message: enough to name the page, not a report
# (table, index) pairs whose row counts must agree: the index holds one entry per row
_COUNTED = (("reports", "sqlite_autoindex_reports_1"), ("measurements", "measurements_kind"))
# NOT NULL columns (report_json aside: ``stored_json`` refuses a missing text): SQLite keeps
# NULL out of them, so a NULL read from one is a damaged record (a zeroed record header reads
# as a row of NULLs, which no report's lookup matches). Tested with typeof(): the query
# planner folds `IS NULL` on a NOT NULL column to false without reading it.
_NOT_NULL = (("reports", ("sha256", "ingested_utc", "created_utc", "device_type")),
             ("measurements", ("report_id", "kind", "key", "value", "unit")))


def rebuild_fix(what: str = "it") -> str:
    return REBUILD_FIX.format(what=what)


def short(text: str) -> str:
    """SQLite's words on one short line: a message may quote a whole stored text."""
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + "…"


def damaged_database(path: Path, detail: str) -> CalibrationError:
    return CalibrationError(f"{path}: the probe database is damaged ({short(detail)}). To fix: "
                            f"{rebuild_fix()}")


def is_corrupt(exc: BaseException) -> bool:
    """Whether SQLite's error says the file is damaged (not locked, full or unreadable)."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    low = message_of(exc).lower()
    return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in low \
        or "not a database" in low


def message_of(exc: BaseException) -> str:
    """An error's message; for SQLite's own message that quotes bytes of a damaged schema
    (Python's sqlite3 raises UnicodeDecodeError decoding it), those bytes, read leniently."""
    if isinstance(exc, UnicodeDecodeError) and isinstance(exc.object, bytes):
        return exc.object.decode("utf-8", "replace")
    return str(exc)


class NotUtf8(str):
    """A stored text that is not UTF-8 (a damaged file, a hand edit), read with U+FFFD for
    its bad bytes: SQLite's own decoding raised on the row — for every reader, with the
    row's whole text in a message over several lines — so one such report stopped every plan
    and `probe show` itself."""


class StoreConnection(sqlite3.Connection):
    """A connection to the probe database that remembers a stored text it could not read,
    and runs quick_check at most once, when asked (``damage``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.unreadable = False  # a stored text was not UTF-8 or not JSON
        self.path: Path | None = None  # the file, as messages name it (set by who opens it)
        self._checked = False
        self._damage: str | None = None
        self.text_factory = self._text

    def _text(self, raw: bytes) -> str:
        """UTF-8, else a ``NotUtf8`` (``stored_json`` refuses it, so the report reads as
        damaged and `gpuplan probe remove N` is the fix), and the connection remembers it."""
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.unreadable = True
            return NotUtf8(raw.decode("utf-8", "replace"))

    def damage(self) -> str | None:
        """What SQLite's quick_check finds wrong with the file's structure; None when nothing,
        or when it could not tell (a lock, an I/O error: said as themselves elsewhere)."""
        if not self._checked:
            self._checked = True
            self._damage = self._quick_check()
        return self._damage

    def _quick_check(self) -> str | None:
        try:
            rows = self.execute("PRAGMA quick_check").fetchall()
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            return f"SQLite: {message_of(exc)}" if is_corrupt(exc) \
                or isinstance(exc, UnicodeDecodeError) else None
        found = [line.strip() for (text,) in rows for line in str(text).splitlines()
                 if line.strip() and not line.startswith("*** in database")]
        if found in ([], ["ok"]):
            return None
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        return f"SQLite's quick_check: {found[0]}{more}"


def stored_json(text, conn: StoreConnection | None = None):
    """``json.loads`` of a stored report's text. A row nested too deep to parse (edited by
    hand: the ingest reader bounds the depth) or whose text is not UTF-8 raises ValueError,
    as other unreadable JSON does, not RecursionError: one damaged report must not stop every
    plan. ``conn``, the connection it was read with, remembers it (``StoreConnection``)."""
    try:
        if isinstance(text, NotUtf8):
            raise ValueError("its text is not UTF-8")
        if not isinstance(text, str | bytes):  # a NULL read from a damaged record, a hand edit
            raise ValueError("it has no text" if text is None else
                             f"its text is a {type(text).__name__}")
        try:
            return json.loads(text)
        except RecursionError:
            raise ValueError("its JSON is nested too deep to read") from None
    except ValueError:  # JSONDecodeError is a ValueError
        if conn is not None:
            conn.unreadable = True
        raise


def check_rows(conn: StoreConnection, path: Path) -> None:
    """CalibrationError (damaged) when quick_check finds damage after a cheap look found a sign
    of it: a table and its index that hold different numbers of rows (a page that lost cells
    drops rows silently), or a NULL in a NOT NULL column. Both read the b-trees' leaf pages
    only, not the reports' text (milliseconds for thousands of reports)."""
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master "
                                               "WHERE type = 'index'")}
    tests = [f"(SELECT COUNT(*) FROM {table} NOT INDEXED) = "
             f"(SELECT COUNT(*) FROM {table} INDEXED BY {index})"
             for table, index in _COUNTED if index in names]
    tests += [f"NOT EXISTS (SELECT 1 FROM {table} WHERE "
              + " OR ".join(f"typeof({column}) = 'null'" for column in columns) + ")"
              for table, columns in _NOT_NULL]
    if not all(conn.execute("SELECT " + ", ".join(tests)).fetchone()):
        raise_if_damaged(conn, path)


def raise_if_damaged(conn: StoreConnection, path: Path) -> None:
    """The damaged error for the file behind ``conn`` when quick_check finds damage; called
    while another error is handled too, whose context it does not carry (the file, not that
    error, is what is wrong)."""
    found = conn.damage()
    if found:
        raise damaged_database(path, found) from None
