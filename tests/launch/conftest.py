"""Fixtures for the launch tests: the packaged catalog (the launch names of its accelerators)."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="session")
def cat():
    from catalog import load_catalog

    return load_catalog("packaged")
