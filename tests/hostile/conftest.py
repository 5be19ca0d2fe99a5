"""The packaged catalog, loaded once (names are resolved against it; nothing is priced), and
a guard for tests that open FIFOs."""

from __future__ import annotations

import signal

import pytest


@pytest.fixture(scope="session")
def catalog():
    from catalog import load_catalog

    return load_catalog()


@pytest.fixture
def no_hang():
    """Fail instead of hanging forever if a FIFO is ever opened for reading."""
    def alarm(*_):
        raise TimeoutError("blocked on a FIFO")
    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)
