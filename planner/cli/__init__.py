"""The `gpuplan` command line. Commands live in one module per area; ``_main`` registers them.

``app`` (the Typer application with every command) is built on first use: ``main`` builds
only the command it runs.
"""

from ._main import main, process_settings

__all__ = ["app", "main", "process_settings"]


def __getattr__(name: str):
    if name == "app":
        from ._main import full_app

        return full_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
