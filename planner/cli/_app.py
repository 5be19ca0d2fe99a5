"""The Typer applications and the output helpers every command shares.

The command modules define their commands; ``_main`` registers them on these apps (explicitly,
in one table) and runs them. Errors a user can cause derive from ``catalog.GpuplanError``;
``_flags.error_line`` turns one into the line ``main`` prints on stderr (exit 2, never a
traceback), naming the input as the flag that set it (``field`` → ``--flag``). Heavy imports (numpy,
scipy, the catalog data) happen inside commands so `gpuplan --help` stays fast.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
from typing import Annotated, Any

import typer

from ._flags import say_fields


def new_apps() -> dict[str, typer.Typer]:
    """Fresh Typer applications with no commands: the root ("") and its groups ("catalog",
    "probe", "launch"). ``_main`` registers the commands (all of them, or only those of the
    command being run); the root's options are here."""
    _help_keeps_hyphenated_words()
    app = typer.Typer(
        name="gpuplan",
        help="Which cloud GPU configuration trains your model by the deadline for the least "
             "money — and how sure is that?",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback()(_root)
    catalog_app = typer.Typer(help="Show, refresh or switch the price catalog.",
                              no_args_is_help=True)
    probe_app = typer.Typer(help="Measure this machine, and feed measurements to the planner.",
                            short_help="Measure this machine; feed the planner.",
                            no_args_is_help=True)
    launch_app = typer.Typer(help="Task files for SkyPilot or dstack that provision instances "
                             "and run the probes under torchrun (a plan's own launch files: "
                             "`gpuplan plan --emit`).",
                             short_help="Task files that run the probes.",
                             no_args_is_help=True)
    return {"": app, "catalog": catalog_app, "probe": probe_app, "launch": launch_app}


def _help_keeps_hyphenated_words() -> None:
    """Help text wraps between words only: click's wrapper broke '--warmup-steps' after
    '--warmup-' and 'pre-training' after 'pre-', so a flag could not be copied from --help.
    (The wrapper click's help formatter builds, in typer's bundled click and in click itself
    where another module already imported it — importing click just to patch it cost ~5 ms
    per command — is given break_on_hyphens=False; in this process only, once.)"""
    import sys

    for module in ("typer._click._textwrap", "click._textwrap"):
        if module == "click._textwrap" and "click" not in sys.modules:
            continue
        try:
            wrapper = __import__(module, fromlist=["TextWrapper"]).TextWrapper
        except ImportError:
            continue
        if getattr(wrapper, "_gpuplan_whole_words", False):
            continue
        plain_init = wrapper.__init__

        def init(self, *args, _init=plain_init, **kwargs):
            kwargs.setdefault("break_on_hyphens", False)
            _init(self, *args, **kwargs)

        wrapper.__init__ = init
        wrapper._gpuplan_whole_words = True


EXIT_USAGE = 2


class CliExit(Exception):
    """Raised by commands to stop with a code after printing (e.g. infeasible → 2)."""

    def __init__(self, code: int) -> None:
        self.code = code


def print_json(data: Any) -> None:
    """``data`` as JSON on stdout: indented at a terminal, one line into a pipe or a file (as
    `gh --json` does: a script's parser needs no indentation, and a plan's 600 KB encode three
    times faster without it — Python's C encoder does not indent). JSON has no NaN or infinity:
    a float that is not finite is written as null (never as the invalid tokens NaN/Infinity
    that json.dumps would emit). The planner's notes name inputs as flags, as everything else
    the CLI prints does; the user's own text (job and team names, regions) is copied as given."""
    indent = 2 if _is_terminal(sys.stdout) else None
    said = _Said()
    sys.stdout.write(json.dumps(_finite(data, said=said), indent=indent, default=str,
                                allow_nan=False) + "\n")


class _Said(dict):
    """One JSON document's prose, each distinct text said as flags once (a frontier of 365
    plans repeats the same dozen notes: 1,155 rewrites, 16 ms, for 20 texts)."""

    def __missing__(self, text: str) -> str:
        said = self[text] = say_fields(text)
        return said


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):  # replaced, closed or detached
        return False


# The keys whose strings are the planner's prose (notes, warnings, reasons): only these name
# inputs as flags. Elsewhere a backtick is the user's (a job named "exp `tokens` v2" stayed
# "exp --tokens v2" in --json, so a script could not match it against the team file).
_PROSE_KEYS = frozenset({"assumptions", "warnings", "warning", "notes", "note", "reason",
                         "reasons", "fix", "message", "error", "inferred", "calibrated"})


def _finite(data: Any, prose: bool = False, *, said: _Said) -> Any:
    kind = type(data)  # the exact types first: a plan's JSON has ~15,000 values
    if kind is str:
        return said[data] if prose and "`" in data else data
    if kind is dict:  # a dict's plain numbers inline: half the calls (12 → 7 ms, 2 MB JSON)
        out = {}
        for k, v in data.items():
            t = type(v)
            if t is float:
                out[k] = v if math.isfinite(v) else None
            elif t is int or t is bool or v is None:
                out[k] = v
            else:
                out[k] = _finite(v, k in _PROSE_KEYS, said=said)
        return out
    if kind is float:
        return data if math.isfinite(data) else None
    if kind is int or kind is bool or data is None:
        return data
    if kind is list or kind is tuple:
        return [_finite(v, prose, said=said) for v in data]
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, str):
        return said[data] if prose and "`" in data else data
    if isinstance(data, dict):
        return {k: _finite(v, k in _PROSE_KEYS, said=said) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v, prose, said=said) for v in data]
    return data


def console(stderr: bool = False, *, fit: bool = False):
    """A rich console for prose. ``fit``: wrap at the width tables use (COLUMNS, else the
    terminal's, else 100 when piped; ``_tables.text_width``) instead of the terminal's or 200."""
    from rich.console import Console

    from ._tables import text_width

    stream = sys.stderr if stderr else sys.stdout
    if fit:
        width = text_width(stream)
    else:  # the width of the stream it writes to: a stderr note under `> run.sh` was
        # wrapped at 200 on an 80-column terminal; a terminal's own (rich took 80 for any
        # TERM=dumb terminal, whatever its width and COLUMNS)
        width = text_width(stream) if _is_terminal(stream) else 200
    # a height too: rich ignores the width given, for 80 columns, on a TERM=dumb terminal
    # unless both are (its "dumb terminal" size)
    height = shutil.get_terminal_size((80, 25)).lines
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width, height=height)


def print_hanging(out, text: str, *, first: str = "  ", rest: str = "    ",
                  style: str = "", first_style: str = "") -> None:
    """``text`` wrapped to ``out``'s width, its first line after ``first`` and the others
    under ``rest`` (a wrapped line at column 0 read as a new item); printed as text (a
    note's brackets are not markup), words and flags never broken — except a word wider than
    a line (a long path), cut to fit: whole, the terminal wrapped it at column 0; ``style``
    for all of it, ``first_style`` for the ``first`` prefix ("warning:" in yellow)."""
    from rich.text import Text

    line = Text(hanging_text(text, out.width, first=first, rest=rest), style=style)
    if first_style and first.strip():
        line.stylize(first_style, 0, len(first.rstrip()))
    out.print(line)


def hanging_text(text: str, width: int, *, first: str = "  ", rest: str = "    ") -> str:
    """``text`` escaped and wrapped as ``print_hanging`` prints it, as plain text."""
    import textwrap

    from ._tables import clean_cell

    # escaped first: a note quoting a file's path or a report's text cannot act on the terminal
    return textwrap.fill(clean_cell(text), width, initial_indent=first, subsequent_indent=rest,
                         break_on_hyphens=False, break_long_words=True)


def catalog_banner_on_stderr(cat) -> None:
    """``catalog_banner`` on stderr beside a --json answer, wrapped as ``print_catalog_banner``
    does but without rich, which that path does not otherwise import (~15 ms)."""
    from ._tables import text_width
    from ._values import catalog_banner

    sys.stderr.write(hanging_text(catalog_banner(cat), text_width(sys.stderr), first="",
                                  rest="  ") + "\n")


def print_catalog_banner(out, cat) -> None:
    """``catalog_banner`` printed as text — an overrides path may hold "[/red]", which rich
    took for markup and raised on after the whole plan was shown — wrapped under itself."""
    from ._values import catalog_banner

    print_hanging(out, catalog_banner(cat), first="", rest="  ")


@contextlib.contextmanager
def progress_on_stderr():
    """A progress display on stderr, shown only on a terminal (pipes, logs and CI get
    nothing) and gone when the work ends; yields ``update(task, done, total, detail="")``,
    one bar per task name, in the order first heard, each with its time so far (a team
    plan's solve sat at "0/1" for a minute and more with no sign of life)."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    err = console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), TextColumn("{task.fields[detail]}"), console=err,
                  transient=True, disable=not err.is_terminal) as bar:
        tasks: dict[str, Any] = {}

        def update(task: str, done: int, total: int, detail: str = "") -> None:
            if task not in tasks:
                tasks[task] = bar.add_task(task, total=max(total, 1), detail="")
            bar.update(tasks[task], completed=done, total=max(total, 1), detail=detail)

        yield update


def version_text() -> str:
    """"gpuplan X.Y.Z", from the installed distribution's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"gpuplan {version('gpuplan')}"
    except PackageNotFoundError:
        return "gpuplan (version unknown: not installed; pip install -e . in the checkout)"


def _show_version(value: bool) -> None:
    if value:
        sys.stdout.write(version_text() + "\n")
        raise typer.Exit(0)


def _root(
    version: Annotated[bool, typer.Option(
        "--version", help="Print gpuplan's version and exit.", is_eager=True,
        callback=_show_version)] = False,
) -> None:
    # No docstring: the app's help (Typer(help=...)) stays the text `gpuplan --help` shows.
    pass


def load_priced_catalog(overrides: str | None):
    """The active catalog with the --overrides file applied, else GPUPLAN_OVERRIDES's (an
    exported empty variable is unset, as shells treat it; --overrides '' is an error). An
    error in the variable's file names the variable: the user passed no option to look at."""
    from catalog import OverrideError, load_catalog, without_fix

    from ._values import not_empty

    if not_empty("--overrides", overrides):
        return load_catalog(overrides=overrides)
    path = _overrides_from_env()
    if not path:
        return load_catalog()
    try:
        return load_catalog(overrides=path)
    except OverrideError as exc:
        raise OverrideError(f"GPUPLAN_OVERRIDES={path}: {without_fix(exc)}. To fix: correct "
                            "the file, or unset GPUPLAN_OVERRIDES") from None


def overrides_input(overrides: str | None) -> dict:
    """The overrides file ``load_priced_catalog`` reads, as {what names it: path}, for the
    check that an output is none of a command's inputs: GPUPLAN_OVERRIDES's file was not in
    it, and `report --out` or `plan --emit-out` wrote over it (hostile sweep)."""
    if overrides:
        return {"--overrides": overrides}
    path = _overrides_from_env()
    return {"GPUPLAN_OVERRIDES": path} if path else {}


def _overrides_from_env() -> str:
    """GPUPLAN_OVERRIDES's path ("" when unset or exported empty, as shells treat it)."""
    return os.environ.get("GPUPLAN_OVERRIDES", "").strip()
