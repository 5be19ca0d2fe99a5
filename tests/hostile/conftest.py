"""The packaged catalog, loaded once (names are resolved against it; nothing is priced)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def catalog():
    from catalog import load_catalog

    return load_catalog()
