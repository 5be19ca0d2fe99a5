"""``time_limit``: a test that would hang fails instead (a FIFO opened for reading, a command
that runs instead of refusing its input); ``least_cpu_s``: a time to compare as a ratio."""

from __future__ import annotations

import contextlib
import math
import signal
import time


@contextlib.contextmanager
def time_limit(seconds: int, what: str):
    """Raise TimeoutError(``what``) in the main thread after ``seconds``."""
    def alarm(*_):
        raise TimeoutError(what)
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def least_cpu_s(call, runs: int = 3) -> float:
    """The least CPU time of ``runs`` calls: a ratio of two such times holds on a busy
    machine, where seconds do not (a 0.7 s read took 2 s inside the whole test run)."""
    best = math.inf
    for _ in range(runs):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best
