"""The `gpuplan` command line. Commands live in one module per area; ``_main`` registers them.

``app`` (the Typer application with every command) is built on first use: ``main`` builds
only the command it runs.
"""

__all__ = ["app", "main", "process_settings"]


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: the process's arguments); the exit status
    (``_main.main``). The CLI's modules are imported here, inside the Ctrl-C handling: an
    interrupt while `gpuplan` starts (typer, numpy: ~0.1 s) exits 130 with one line, as one
    during the command does, instead of a traceback from an import."""
    try:
        from ._main import main as run
    except KeyboardInterrupt:
        import sys

        # as _stdio.interrupted says it (importing _stdio here would import typer again)
        print("error: interrupted (Ctrl-C); files are written whole or not at all",
              file=sys.stderr)
        return 130
    return run(argv)


def __getattr__(name: str):
    if name == "app":
        from ._main import full_app

        return full_app()
    if name == "process_settings":
        from ._main import process_settings

        return process_settings
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
