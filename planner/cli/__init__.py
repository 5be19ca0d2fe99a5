"""The `gpuplan` command line. Commands live in one module per area; ``_main`` registers them."""

from ._main import app, main

__all__ = ["app", "main"]
