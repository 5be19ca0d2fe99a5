"""The packaged catalog, loaded once (names are resolved against it; nothing is priced), and
a guard for tests that open FIFOs."""

from __future__ import annotations

import pytest
from time_limit import time_limit


@pytest.fixture(scope="session")
def catalog():
    from catalog import load_catalog

    return load_catalog()


@pytest.fixture
def no_hang():
    """Fail instead of hanging forever if a FIFO is ever opened for reading."""
    with time_limit(5, "blocked on a FIFO"):
        yield
