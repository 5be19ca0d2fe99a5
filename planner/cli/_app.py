"""The Typer application, error handling and the output helpers every command shares.

Errors a user can cause derive from ``catalog.GpuplanError``; ``main`` prints them as one line
on stderr and exits 2 — never a traceback. Heavy imports (numpy, scipy, the catalog data) happen
inside commands so `gpuplan --help` stays fast.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

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
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def console(stderr: bool = False):
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=False,
                   width=None if sys.stdout.isatty() else 200)


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
        app(args=argv, standalone_mode=False)
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
    except Exception as exc:  # usage errors arrive here in non-standalone mode
        if _is_click_exception(exc):
            exc.show()
            return exc.exit_code
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
