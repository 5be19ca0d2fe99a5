"""The `gpuplan` command line. Commands live in one module per area; ``_main`` registers them.

``app`` (the Typer application with every command) is built on first use: ``main`` builds
only the command it runs.
"""

__all__ = ["app", "main", "process_settings"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: the process's arguments); the exit status
    (``_main.main``). The CLI's modules are imported here, inside the Ctrl-C handling: an
    interrupt while `gpuplan` starts (typer, numpy: ~0.1 s) exits 130 with one line, as one
    during the command does, instead of a traceback from an import.

    Run as the program (``argv`` None), SIGINT and SIGTERM are ignored once the exit status
    is known (``_stdio.exiting``): a signal as the process exits changes nothing."""
    try:
        from . import _stdio
        from ._main import main as run
    except KeyboardInterrupt:
        import sys

        # as _stdio.interrupted says it (importing _stdio here would import typer again)
        print("error: interrupted (Ctrl-C); files are written whole or not at all",
              file=sys.stderr)
        return 130
    code = None
    try:
        code = run(argv)
        return _stdio.exiting(code) if argv is None else code
    except KeyboardInterrupt:
        if code is None:  # a signal while run said an earlier one: uncaught, Python turned
            # it into a death by SIGINT (130) whatever the first was; SIGTERM says so, 143
            code = _stdio.interrupted(once=True)
        # else it came between run's return and exiting's SIG_IGN: too late, run is done
        return _stdio.exiting(code) if argv is None else code


def __getattr__(name: str):
    if name == "app":
        from ._main import full_app

        return full_app()
    if name == "process_settings":
        from ._main import process_settings

        return process_settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
