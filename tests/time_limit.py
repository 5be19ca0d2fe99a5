"""``time_limit``: a test that would hang fails instead (a FIFO opened for reading, a command
that runs instead of refusing its input)."""

from __future__ import annotations

import contextlib
import signal


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
