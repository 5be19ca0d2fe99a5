"""The `gpuplan` program (the console script and ``python -m planner``): ``main`` run as the
process, which a short command then ends at once (``_stdio.end_now``). ``main`` itself returns
the exit status, to a program that embeds it as to this one."""

from __future__ import annotations

import sys


def run() -> None:
    from . import main

    code = main()
    if "planner.cli._stdio" in sys.modules:  # not when the CLI could not even be imported
        from . import _stdio

        _stdio.end_now(code, (sys.argv[1:2] or [None])[0])
    sys.exit(code)
