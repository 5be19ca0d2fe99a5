"""The Typer application, error handling and the output helpers every command shares.

Errors a user can cause derive from ``catalog.GpuplanError``; ``main`` prints them as one line
on stderr and exits 2 — never a traceback. Heavy imports (numpy, scipy, the catalog data) happen
inside commands so `gpuplan --help` stays fast.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Annotated, Any

import typer

app = typer.Typer(
    name="gpuplan",
    help="Which cloud GPU configuration trains your model by the deadline for the least "
         "money — and how sure is that?",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
catalog_app = typer.Typer(help="Show, refresh or switch the price catalog.", no_args_is_help=True)
probe_app = typer.Typer(help="Measure this machine, and feed measurements to the planner.",
                        no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")
app.add_typer(probe_app, name="probe")

EXIT_USAGE = 2


class CliExit(Exception):
    """Raised by commands to stop with a code after printing (e.g. infeasible → 2)."""

    def __init__(self, code: int) -> None:
        self.code = code


def print_json(data: Any) -> None:
    """``data`` as JSON on stdout. JSON has no NaN or infinity: a float that is not finite is
    written as null (never as the invalid tokens NaN/Infinity that json.dumps would emit)."""
    sys.stdout.write(json.dumps(_finite(data), indent=2, default=str, allow_nan=False) + "\n")


def _finite(data: Any) -> Any:
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [_finite(v) for v in data]
    return data


def console(stderr: bool = False, *, fit: bool = False):
    """A rich console for prose. ``fit``: wrap at the width tables use (COLUMNS, else the
    terminal's, else 100 when piped; ``_tables.text_width``) instead of the terminal's or 200."""
    from rich.console import Console

    if fit:
        from ._tables import text_width

        width = text_width(sys.stderr if stderr else sys.stdout)
    else:
        width = None if sys.stdout.isatty() else 200
    return Console(stderr=stderr, highlight=False, soft_wrap=False, width=width)


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


@app.callback()
def _root(
    version: Annotated[bool, typer.Option(
        "--version", help="Print gpuplan's version and exit.", is_eager=True,
        callback=_show_version)] = False,
) -> None:
    # No docstring: the app's help (Typer(help=...)) stays the text `gpuplan --help` shows.
    pass


def overrides_option_default() -> str | None:
    return os.environ.get("GPUPLAN_OVERRIDES") or None


def _register_commands() -> None:
    # Imported for their side effect of adding commands to the apps above.
    from . import (
        _app_cmd,  # noqa: F401
        _catalog_cmds,  # noqa: F401
        _launch_cmds,  # noqa: F401
        _model_cmds,  # noqa: F401
        _probe_cmds,  # noqa: F401
        _report_cmds,  # noqa: F401
    )


def _is_click_exception(exc: Exception) -> bool:
    """Typer raises click's exceptions, or those of the click copy it bundles (typer._click)."""
    classes = []
    for module in ("click.exceptions", "typer._click.exceptions"):
        try:
            classes.append(__import__(module, fromlist=["ClickException"]).ClickException)
        except ImportError:
            continue
    return isinstance(exc, tuple(classes))


def main(argv: list[str] | None = None) -> int:
    from catalog import GpuplanError

    _register_commands()
    try:
        app(args=argv, prog_name="gpuplan", standalone_mode=False)
    except GpuplanError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CliExit as exc:
        return exc.code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`gpuplan offers | head`): stop quietly
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, AttributeError):
            pass
        return 1
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        if _is_click_exception(exc):
            return _show_click_error(exc)
        raise
    return 0


def _show_click_error(exc) -> int:
    """A usage error (unknown option, a value that is not a number, a missing argument) as one
    line, like every other error: what is wrong, then where the options are listed. The help
    that a bare group prints (`gpuplan catalog`) stays as it is."""
    if type(exc).__name__ == "NoArgsIsHelpError" or not hasattr(exc, "format_message"):
        exc.show()
        return exc.exit_code
    ctx = getattr(exc, "ctx", None)
    where = ctx.command_path if ctx is not None else "gpuplan"
    message = " ".join(exc.format_message().split()).rstrip(".")
    print(f"error: {where}: {message}. To fix: see `{where} --help`", file=sys.stderr)
    return exc.exit_code


if __name__ == "__main__":
    sys.exit(main())
