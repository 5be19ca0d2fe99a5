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
    """The least CPU time of ``runs`` calls, on this thread alone: a ratio of two such times
    holds on a busy machine, where seconds do not (a 0.7 s read took 2 s inside the whole test
    run). ``thread_time``, not ``process_time``: a thread an earlier test left running (a
    server, a BLAS pool) would be counted in the process's time, and a 1.4× ratio read 3.7×
    once in CI."""
    best = math.inf
    for _ in range(runs):
        start = time.thread_time()
        call()
        best = min(best, time.thread_time() - start)
    return best


def cpu_ratio(ours, reference, runs: int = 3) -> tuple[float, float]:
    """The least CPU times of ``ours`` and ``reference``, measured in turn ``runs`` times, so
    that a busy stretch of the machine falls on both and not on one alone. The cyclic garbage
    collector is paused while they run (after one collection): its passes walk every object
    the earlier tests of the session left alive, and fell on the side that allocates more
    Python objects — a 5,000-job refusal read 3.7x the YAML reference inside the whole suite
    (1.73 s against 0.47 s) and 0.9–1.3x alone."""
    import gc

    best_ours = best_reference = math.inf
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(runs):
            best_ours = min(best_ours, least_cpu_s(ours, runs=1))
            best_reference = min(best_reference, least_cpu_s(reference, runs=1))
    finally:
        if was_enabled:
            gc.enable()
    return best_ours, best_reference
