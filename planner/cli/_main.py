"""``gpuplan``: every command registered on the Typer apps, in one table, and ``main``.

Commands are plain functions in their modules (one module per area); this module is the only
one that knows them all, so no command module imports another to register itself.
"""

from __future__ import annotations

import os
import sys

import typer

from . import _app_cmd, _catalog_cmds, _launch_cmds, _model_cmds, _probe_cmds, _report_cmds
from ._app import (
    EXIT_USAGE,
    CliExit,
    app,
    catalog_app,
    error_line,
    launch_app,
    probe_app,
)

PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}

# (app, name, function, Typer options), in the order `gpuplan --help` lists them.
COMMANDS = (
    (app, "app", _app_cmd.app_cmd, {"context_settings": PASS_THROUGH}),
    (app, "gpus", _catalog_cmds.gpus_cmd, {}),
    (app, "offers", _catalog_cmds.offers_cmd, {}),
    (catalog_app, "info", _catalog_cmds.info_cmd, {}),
    (catalog_app, "use", _catalog_cmds.use_cmd, {}),
    (catalog_app, "refresh", _catalog_cmds.refresh_cmd, {}),
    (launch_app, "probes", _launch_cmds.probes_cmd, {}),
    (app, "estimate", _model_cmds.estimate_cmd, {}),
    (app, "plan", _model_cmds.plan_cmd, {}),
    (probe_app, "run", _probe_cmds.run_cmd, {"context_settings": PASS_THROUGH}),
    (probe_app, "ingest", _probe_cmds.ingest_cmd, {}),
    (probe_app, "show", _probe_cmds.show_cmd, {}),
    (probe_app, "workload", _probe_cmds.workload_cmd, {"context_settings": PASS_THROUGH}),
    (app, "report", _report_cmds.report_cmd, {}),
)

for _owner, _name, _function, _options in COMMANDS:
    _owner.command(_name, **_options)(_function)
app.add_typer(launch_app, name="launch")  # after catalog and probe, as `--help` lists groups


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

    try:
        app(args=argv, prog_name="gpuplan", standalone_mode=False)
    except GpuplanError as exc:
        print(f"error: {error_line(exc)}", file=sys.stderr)
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
