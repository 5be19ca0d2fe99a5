"""``python -m probes`` and ``torchrun ... -m probes``."""

import signal
import sys

from probes._args import is_rank_zero
from probes.cli import main


class Terminated(BaseException):
    """SIGTERM, raised where the run is so that it unwinds as Ctrl-C does (a report being
    written is removed whole): torchrun stops its workers with SIGTERM, and they died without
    a word while `gpuplan probe run` said "terminated"."""


def _on_sigterm(signum, frame):
    raise Terminated


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # a closed stderr: the exit status says it
        pass


if __name__ == "__main__":
    try:
        signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # not the main thread, or no such signal here
        pass
    try:
        code = main()
    except KeyboardInterrupt:  # one line, as `gpuplan probe run` says it, not a 40-line
        # traceback from every rank; from rank 0 alone: a terminal's Ctrl-C reaches every rank
        if is_rank_zero():
            _say("error: interrupted (Ctrl-C); reports are written whole or not at all")
        code = 130
    except Terminated:  # rank 0 says it: torchrun also stops the other ranks this way after
        # one of them failed, and that failure is the line to read, said once
        if is_rank_zero():
            _say("error: terminated (SIGTERM); reports are written whole or not at all")
        code = 143
    raise SystemExit(code)
