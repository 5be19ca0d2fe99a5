"""Fixtures for the launch tests.

``planner.cli._launch_cmds`` registers `gpuplan launch` on import; it is imported here so the
CLI tests find the command even where ``_app._register_commands`` does not import it yet.
"""

from __future__ import annotations

import pytest

import planner.cli._launch_cmds  # noqa: F401  (registers `gpuplan launch`)


@pytest.fixture(scope="session")
def cat():
    from catalog import load_catalog

    return load_catalog("packaged")
