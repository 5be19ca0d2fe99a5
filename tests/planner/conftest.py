"""Fixtures for the planner's tests: the packaged catalog, and probe reports built from the
probe schema's own records (the shape `python -m probes` writes, trimmed to what the planner
reads)."""

from __future__ import annotations

import pytest
from probe_reports import h100_report


@pytest.fixture
def catalog():
    from catalog import load_catalog

    return load_catalog()


@pytest.fixture
def make_report():
    return h100_report
