"""A summary fitted to the terminal: each line wrapped at spaces to the width, its
continuation indented under it (a 280-character "bytes: …" line and 140-character matmul rows
ran past an 80-column terminal). Width: COLUMNS when it is a whole number (20 at least), else
the terminal stdout writes to, else 100 — the rule `gpuplan`'s tables follow."""

from __future__ import annotations

import os
import sys
import textwrap

PIPED_WIDTH = 100
MIN_WIDTH = 20


def summary_width() -> int:
    raw = os.environ.get("COLUMNS", "").strip()  # a whole number of 1-6 digits, above 0
    if raw.isascii() and raw.isdigit() and 0 < len(raw) <= 6 and int(raw) > 0:
        return max(MIN_WIDTH, int(raw))
    try:
        if sys.stdout.isatty():  # the terminal's own size, not shutil's (it reads COLUMNS)
            columns = os.get_terminal_size(sys.stdout.fileno()).columns
            if columns > 0:  # 0: a pty never sized (`script`, `docker exec -t`)
                return max(MIN_WIDTH, columns)
    except (AttributeError, OSError, ValueError):  # replaced or closed
        pass
    return PIPED_WIDTH


def say_summary(text: str) -> None:
    """The summary on stdout, fitted to the terminal (``fit``); nothing when stdout is closed
    (`>&-`: the report is written, and the run ended in a traceback, exit 1)."""
    if sys.stdout is None:
        return
    try:
        print(fit(text))
        sys.stdout.flush()
    except (OSError, ValueError):  # a closed or broken stdout: the report is the record
        pass


def fit(text: str, width: int | None = None) -> str:
    """``text`` with every line wrapped to ``width`` (default ``summary_width()``); a word
    longer than a line (a path) is kept whole."""
    width = summary_width() if width is None else width
    out = []
    for line in text.splitlines():
        body = line.lstrip(" ")
        indent = " " * (len(line) - len(body))
        out.extend(textwrap.wrap(body, width, initial_indent=indent,
                                 subsequent_indent=indent + "    ", break_long_words=False,
                                 break_on_hyphens=False) or [line])
    return "\n".join(out)


def progress(text: str, *, rank: int = 0, started: float | None = None) -> None:
    """One line on stderr as a stage of a long run starts ("probes: [12 s] memory …"), from
    rank 0 and on a terminal only — logs, pipes and CI get nothing, the summary on stdout is
    the record: a full run said nothing for 35 s on a CPU, 2 minutes on a GPU node."""
    if rank != 0:
        return
    try:
        if sys.stderr is None or not sys.stderr.isatty():
            return
        import time

        at = f"[{time.perf_counter() - started:.0f} s] " if started is not None else ""
        print(f"probes: {at}{text} …", file=sys.stderr, flush=True)
    except (AttributeError, OSError, ValueError):  # a closed or replaced stderr
        pass
