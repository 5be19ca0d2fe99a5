"""``python -m probes`` and ``torchrun ... -m probes``."""

import os
import signal
import sys


class Terminated(BaseException):
    """SIGTERM, raised where the run is so that it unwinds as Ctrl-C does (a report being
    written is removed whole): torchrun stops its workers with SIGTERM, and they died without
    a word while `gpuplan probe run` said "terminated"."""


def _on_sigterm(signum, frame):
    raise Terminated


def _leave(code: int) -> None:
    """Exit with ``code``. A torchrun worker of a multi-process run leaves without interpreter
    finalization, its streams flushed: by then the report is written and the process group
    destroyed, and CPU gloo runs aborted one rank in 5 of 118 loaded runs there ("terminate
    called without an active exception", a C++ thread still joinable as torch's objects are
    torn down), failing a run whose report was whole; 0 of 140 aborted leaving this way."""
    if "torch.distributed" in sys.modules and _world_size() > 1:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed stream: nothing left to lose
                pass
        os._exit(code)
    raise SystemExit(code)


def _world_size() -> int:
    """The torchrun world's size (``topology_from_env``); 1 for a plain or broken environment."""
    from probes._errors import ProbeSetupError
    from probes._topology import topology_from_env

    try:
        return topology_from_env().world_size
    except ProbeSetupError:
        return 1


def _rank_zero() -> bool:
    from probes._args import is_rank_zero

    return is_rank_zero()


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
        # imported here: a Ctrl-C while they load (seconds on a busy machine) is one line and
        # exit 130 as well, not Python's death by SIGINT (-2)
        from probes.cli import main

        code = main()
    except KeyboardInterrupt:  # one line, as `gpuplan probe run` says it, not a 40-line
        # traceback from every rank; from rank 0 alone: a terminal's Ctrl-C reaches every rank
        if _rank_zero():
            _say("error: interrupted (Ctrl-C); reports are written whole or not at all")
        code = 130
    except Terminated:  # rank 0 says it: torchrun also stops the other ranks this way after
        # one of them failed, and that failure is the line to read, said once
        if _rank_zero():
            _say("error: terminated (SIGTERM); reports are written whole or not at all")
        code = 143
    _leave(code)
