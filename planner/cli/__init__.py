"""The `gpuplan` command line. Commands live in one module per area; this file wires them."""

from ._app import app, main

__all__ = ["app", "main"]
