"""Tables for the terminal: the one way every CLI table is laid out (issue 17).

A table is a tuple of ``Column`` (a header, a priority, an alignment, whether its text may
wrap) and rows of cells. ``render_table`` lays it out in a given number of columns, and
``print_table`` does so at the terminal's width (``terminal_width``), so that:

1. every column is shown at its natural width (its widest cell) when that fits;
2. else OPTIONAL columns are dropped until it fits at natural width;
3. else wrappable columns (``wrap=True``: flags, reasons, sources) wrap at spaces, down to
   ``min_width`` each, and NORMAL columns are dropped until it fits. Within a priority the
   rightmost column goes first, and a wrappable one last (wrapping is its cheaper way to fit);
4. columns dropped in 2-3 come back, most important first, where they still fit (an OPTIONAL
   one only if nothing has to wrap for it);
5. ESSENTIAL columns (instance, region, accelerator, pricing, $/h) are never dropped, never
   wrapped and never cut: a name is never shortened. When they alone are wider than the
   terminal (``print_table``, or ``fit=True``), each row is listed as "header: value" items
   instead, wrapped at the terminal's width (at 60 columns the plan tables ran to 70 and
   `offers` to 74 columns, every row wrapping in a terminal).

No cell is ever cut or ends in "…": text too long for its column wraps onto more lines, and a
word longer than the column is broken across lines. Dropped columns are named in a last line,
which says that ``--wide`` (``width=None``) shows every column. Cells are plain text: rich
markup is not interpreted, control characters are shown as ``\\x1b`` escapes (a probe report
cannot colour or move the terminal), ``None`` is shown as "—".

Using it from a command::

    from ._tables import ESSENTIAL, OPTIONAL, Column, Wide, print_table

    COLUMNS = (Column("instance", ESSENTIAL), Column("$/h", ESSENTIAL, align="right"),
               Column("as of", OPTIONAL), Column("flags", wrap=True))

    def cmd(..., wide: Wide = False):
        print_table(COLUMNS, [(o.name, f"{o.price:,.3f}", o.as_of, ", ".join(o.flags))
                              for o in offers], title="12 offers", wide=wide)

Width (``terminal_width``): ``--wide`` → no limit; else ``COLUMNS`` when it is a whole number;
else the width of the terminal that stdout writes to; else (piped, redirected) 100. Prose
around a table wraps at the same width: ``console(fit=True)`` in ``_app``.
"""

from __future__ import annotations

import enum
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY
from typing import Annotated, Literal, TextIO

import typer

from catalog import record

PIPED_WIDTH = 100  # columns when stdout is not a terminal and COLUMNS is not set
MIN_WIDTH = 20  # COLUMNS below this is taken as this (a table needs some room)
GAP = "  "  # between columns
RULE = "─"  # under the headers
BREAK_AFTER = "_-/.,;:"  # where a word too long for its column breaks, if it can


class Priority(enum.IntEnum):
    """How much a column matters when the terminal is narrow (lower is more important)."""

    ESSENTIAL = 0  # always shown, in full, on one line
    NORMAL = 1  # dropped when wrapping long text is not enough
    OPTIONAL = 2  # dropped first


ESSENTIAL, NORMAL, OPTIONAL = Priority.ESSENTIAL, Priority.NORMAL, Priority.OPTIONAL

Wide = Annotated[bool, typer.Option(
    "--wide", help="Show every column in full, however wide the terminal (by default tables fit "
    "the terminal, or 100 columns when piped: lower-priority columns are left out, long text "
    "wraps; names, regions and prices never wrap, so a table of long names can stay wider).")]


@record(kw_only=False)
class Column:
    """One column of a table: ``Column("$/h", ESSENTIAL, align="right")``.

    ``wrap``: the column holds long text (flags, reasons, sources) that may wrap onto several
    lines, down to ``min_width`` characters (or its header, if longer). An ESSENTIAL column
    never wraps, whatever ``wrap`` says. ``rank``: among columns of one priority, a higher
    rank is left out first (a mostly blank ``term`` before ``$/GPU-h``).
    """

    header: str
    priority: Priority = NORMAL
    _: KW_ONLY
    align: Literal["left", "right"] = "left"
    wrap: bool = False
    min_width: int = 12
    rank: int = 0  # within a priority, a higher rank is left out first (then the rightmost)

    def __post_init__(self) -> None:
        if self.align not in ("left", "right"):
            raise ValueError(f"align must be 'left' or 'right', got {self.align!r}")
        if self.min_width < 1:
            raise ValueError(f"min_width must be at least 1, got {self.min_width}")
        object.__setattr__(self, "priority", Priority(self.priority))
        if self.priority == ESSENTIAL:
            object.__setattr__(self, "wrap", False)


@record(kw_only=False)
class RenderedTable:
    """A laid-out table: its lines (title, headers, rule, rows, the note naming dropped
    columns), the headers of the columns shown and of those dropped, and the width of its
    widest line."""

    lines: tuple[str, ...]
    shown: tuple[str, ...]
    hidden: tuple[str, ...]
    width: int
    as_list: bool = False  # rows as "header: value" records: no table of them fitted

    @property
    def text(self) -> str:
        return "".join(line + "\n" for line in self.lines)


# ---- width ----------------------------------------------------------------------------------


def _columns_env() -> int | None:
    raw = os.environ.get("COLUMNS", "").strip()
    if raw.isascii() and raw.isdigit() and 0 < len(raw) <= 6 and int(raw) > 0:
        return max(MIN_WIDTH, int(raw))
    return None


def text_width(stream: TextIO | None = None) -> int:
    """Columns for prose and tables: COLUMNS, else the terminal's width, else 100."""
    env = _columns_env()
    if env is not None:
        return env
    stream = sys.stdout if stream is None else stream
    try:
        if stream.isatty():
            columns = os.get_terminal_size(stream.fileno()).columns
            if columns > 0:  # 0: a pty that was never sized (`script`, `docker exec -t`)
                return max(MIN_WIDTH, columns)
    except (AttributeError, OSError, ValueError):
        pass
    return PIPED_WIDTH


def terminal_width(*, wide: bool = False, stream: TextIO | None = None) -> int | None:
    """Columns to lay a table out in: None (no limit) with ``--wide``, else ``text_width``."""
    return None if wide else text_width(stream)


# ---- cells ----------------------------------------------------------------------------------

# C0 and C1 controls (ESC starts a colour, a cursor move or a window-title change) and the
# bidirectional overrides and isolates (they reorder what follows on the line, so a name can
# display as another): shown as escapes wherever text from a file or a report reaches the
# terminal. The cell pattern keeps newlines (a cell may have lines) and tabs (made spaces).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": " "}


def _escape(match: re.Match) -> str:
    c = match.group()
    if c in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}"


def one_line(text: str) -> str:
    """``text`` as one line of a message: every control character, a newline too, as a
    visible escape, so a file name (``a\\nb\\x1b[31m.yaml``) can neither break the error line
    nor colour, move or retitle the terminal."""
    return _LINE_CONTROL.sub(_escape, text)


def _cell_len(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def clean_cell(value: object) -> str:
    """A cell's text: None → "—", control characters as visible escapes, tabs as spaces."""
    if value is None:
        return "—"
    text = str(value).replace("\r\n", "\n").replace("\r", "\n").replace("\t", " ")
    return _CONTROL.sub(_escape, text)


def _fold(word: str, width: int) -> list[str]:
    """A word longer than ``width`` in pieces of at most ``width`` cells, each broken after
    the last ``_ - / . , ; :`` that fits (snake_case flags read well), else anywhere."""
    from rich.cells import get_character_cell_size

    pieces = []
    while _cell_len(word) > width:
        used, cut = 0, 0
        for n, ch in enumerate(word):
            used += get_character_cell_size(ch)
            if used > width:
                break
            cut = n + 1
        soft = max((n + 1 for n in range(cut) if word[n] in BREAK_AFTER and n + 1 < len(word)),
                   default=0)
        cut = soft or max(cut, 1)
        pieces.append(word[:cut])
        word = word[cut:]
    pieces.append(word)
    return pieces


def wrap_text(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` cells, broken at spaces, long words folded."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line, used = "", 0
        for word in paragraph.split(" "):
            if not word:
                continue
            size = _cell_len(word)
            if line and used + 1 + size <= width:
                line, used = f"{line} {word}", used + 1 + size
                continue
            if line:
                lines.append(line)
            line, used = "", 0
            if size > width:
                *full, word = _fold(word, width)
                lines.extend(full)
                size = _cell_len(word)
            line, used = word, size
        lines.append(line)
    return lines


# ---- layout ---------------------------------------------------------------------------------


def _natural(header: str, cells: Iterable[str]) -> int:
    return max([_cell_len(header), *(_cell_len(line) for c in cells for line in c.split("\n"))])


def _floor(col: Column, natural: int) -> int:
    """The narrowest a column may get: its natural width unless it wraps."""
    if not col.wrap:
        return natural
    return max(_cell_len(col.header), min(natural, col.min_width))


def _total(widths: Iterable[int], gap: str = GAP) -> int:
    widths = list(widths)
    return sum(widths) + len(gap) * max(0, len(widths) - 1)


def _choose(columns: Sequence[Column], natural: list[int], floor: list[int],
            width: int, gap: str = GAP) -> list[int]:
    """Indexes of the columns shown at ``width`` (steps 2-4 of the module docstring)."""
    shown = list(range(len(columns)))

    def fits(idx: Iterable[int], widths: list[int]) -> bool:
        return _total((widths[i] for i in idx), gap) <= width

    def drop_order(priority: Priority) -> list[int]:
        # The highest rank first, then rightmost first; of one rank a wrapping column last
        # (wrapping is its cheaper way to shrink).
        return sorted((i for i in range(len(columns)) if columns[i].priority == priority),
                      key=lambda i: (-columns[i].rank, columns[i].wrap, -i))

    for i in drop_order(OPTIONAL):
        if not fits(shown, natural):
            shown.remove(i)
    if not fits(shown, natural):
        for i in drop_order(NORMAL):
            if not fits(shown, floor):
                shown.remove(i)
    # An OPTIONAL column comes back only where nothing has to wrap for it; a NORMAL one
    # where it fits with the wrapping columns at their narrowest.
    dropped = sorted(set(range(len(columns))) - set(shown),
                     key=lambda i: (columns[i].priority, columns[i].rank, i))
    for i in dropped:
        if fits([*shown, i], natural if columns[i].priority == OPTIONAL else floor):
            shown = sorted([*shown, i])
    return shown


def _widths(columns: Sequence[Column], shown: list[int], natural: list[int], floor: list[int],
            width: int | None, gap: str = GAP) -> dict[int, int]:
    """Each shown column's width: natural, with wrappable columns narrowed evenly (the widest
    first) until the table fits."""
    widths = {i: natural[i] for i in shown}
    if width is None or _total(widths.values(), gap) <= width:
        return widths
    wrapping = [i for i in shown if columns[i].wrap and natural[i] > floor[i]]
    budget = width - _total(widths.values(), gap) + sum(natural[i] for i in wrapping)

    def used(level: int) -> int:
        return sum(max(floor[i], min(natural[i], level)) for i in wrapping)

    lo, hi = 0, max((natural[i] for i in wrapping), default=0)
    while lo < hi:  # the highest level at which the wrapping columns fit the budget
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if used(mid) <= budget else (lo, mid - 1)
    for i in wrapping:
        widths[i] = max(floor[i], min(natural[i], lo))
    spare = budget - used(lo)
    for i in wrapping:  # what is left of the budget, one cell each, left to right
        if spare > 0 and widths[i] < natural[i]:
            widths[i] += 1
            spare -= 1
    return widths


def _pad(text: str, width: int, align: str) -> str:
    space = " " * max(0, width - _cell_len(text))
    return space + text if align == "right" else text + space


def _record(items: list[str], width: int, indent: str = "  ") -> list[str]:
    """One row as "header: value" items joined by " · ", wrapped at ``width``: an item is
    broken only where it is longer than a line, continuation lines indented."""
    lines: list[str] = []
    room = max(1, width - len(indent))
    for item in items:
        if lines and _cell_len(lines[-1]) + 3 + _cell_len(item) <= width:
            lines[-1] += " · " + item
            continue
        pieces = [item] if _cell_len(item) <= (room if lines else width) else \
            wrap_text(item, room)
        first = [] if lines else [pieces.pop(0)]  # a record's first line is not indented
        lines += first + [indent + piece for piece in pieces]
    return lines


def _fitted(columns: tuple[Column, ...], cells: list[list[str]], shown: list[int],
            width: int, title: str | None, show_header: bool) -> RenderedTable:
    """A table whose kept columns are wider than ``width``, as a list: each row a record of
    "header: value" items wrapped at ``width``, as a narrow `estimate` lists its figures.
    Nothing kept is left out, and what was left out is named."""
    hidden = tuple(columns[i].header for i in range(len(columns)) if i not in shown)
    out = wrap_text(clean_cell(title), width) if title else []
    for row in cells:
        out += _record([(f"{clean_cell(columns[i].header)}: " if show_header else "")
                        + " ".join(row[i].split("\n")).rstrip() for i in shown], width)
    if hidden:
        out += wrap_text(f"(not shown in {width} columns: {', '.join(hidden)}; --wide "
                         "shows every column)", width)
    return RenderedTable(lines=tuple(out), shown=tuple(columns[i].header for i in shown),
                         hidden=hidden, as_list=True,
                         width=max((_cell_len(x) for x in out), default=0))


def render_table(columns: Sequence[Column], rows: Iterable[Sequence[object]], *,
                 width: int | None, title: str | None = None,
                 show_header: bool = True, gap: str = GAP, fit: bool = False) -> RenderedTable:
    """Lay ``rows`` out under ``columns`` in ``width`` terminal columns (None: no limit).

    Each row has one cell per column (any value: ``str()`` of it is shown, None as "—").
    ``gap``: between columns (one space where a table has many short columns and every
    character counts, as the plan tables do). ``fit``: where the columns that must stay are
    wider than ``width``, the rows are listed as "header: value" records (``_fitted``);
    without it such a table is wider than ``width`` (``print_table`` fits).
    """
    columns = tuple(columns)
    cells = [[clean_cell(v) for v in row] for row in rows]
    for n, row in enumerate(cells):
        if len(row) != len(columns):
            raise ValueError(f"row {n} has {len(row)} cells for {len(columns)} columns")
    headers = [clean_cell(c.header) if show_header else "" for c in columns]
    natural = [_natural(headers[i], (row[i] for row in cells)) for i in range(len(columns))]
    floor = [_floor(c, n) for c, n in zip(columns, natural, strict=True)]
    shown = list(range(len(columns))) if width is None else \
        _choose(columns, natural, floor, width, gap)
    widths = _widths(columns, shown, natural, floor, width, gap)
    if fit and width is not None and cells and _total(widths.values(), gap) > width:
        return _fitted(columns, cells, shown, width, title, show_header)

    def line(parts: list[str]) -> str:
        return gap.join(_pad(p, widths[i], columns[i].align)
                        for i, p in zip(shown, parts, strict=True)).rstrip()

    body: list[str] = []
    if show_header:
        body.append(line([headers[i] for i in shown]))
        body.append(gap.join(RULE * widths[i] for i in shown))
    for row in cells:
        parts = {i: (wrap_text(row[i], widths[i]) if columns[i].wrap else row[i].split("\n"))
                 for i in shown}
        for k in range(max(len(p) for p in parts.values()) if parts else 0):
            body.append(line([parts[i][k] if k < len(parts[i]) else "" for i in shown]))
    hidden = tuple(columns[i].header for i in range(len(columns)) if i not in shown)
    # the title and the note are prose: at the terminal's width even where essential columns
    # make the table wider (at 60 columns they ran to 68); with no limit, at the table's
    limit = width if width is not None else max((_cell_len(x) for x in body), default=0)
    out = [*(wrap_text(clean_cell(title), max(limit, MIN_WIDTH)) if title else ()), *body]
    if hidden:
        out.extend(wrap_text(f"(not shown in {width} columns: {', '.join(hidden)}; --wide "
                             "shows every column)", max(limit, MIN_WIDTH)))
    return RenderedTable(lines=tuple(out), shown=tuple(columns[i].header for i in shown),
                         hidden=hidden, width=max((_cell_len(x) for x in out), default=0))


def print_table(columns: Sequence[Column], rows: Iterable[Sequence[object]], *,
                title: str | None = None, wide: bool = False, show_header: bool = True,
                file: TextIO | None = None) -> RenderedTable:
    """Render at the terminal's width (every column with ``wide``) and write to ``file``
    (stdout). Returns what was written."""
    file = sys.stdout if file is None else file
    table = render_table(columns, rows, width=terminal_width(wide=wide, stream=file),
                         title=title, show_header=show_header, fit=True)
    file.write(table.text)
    file.flush()
    return table
