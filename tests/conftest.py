"""Shared fixtures. Every test runs with GPUPLAN_HOME in a temporary folder, so nothing reads or
writes the real user data directory, and with cloud metadata look-ups disabled."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path_factory, monkeypatch):
    home = tmp_path_factory.mktemp("gpuplan-home")
    monkeypatch.setenv("GPUPLAN_HOME", str(home))
    monkeypatch.setenv("GPUPLAN_NO_METADATA", "1")
    monkeypatch.delenv("GPUPLAN_OVERRIDES", raising=False)
    yield home
