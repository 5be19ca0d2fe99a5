"""Where gpuplan keeps per-user state. Nothing is created at import; callers create on write.

``GPUPLAN_HOME`` overrides everything (tests and CI set it to a temporary folder); otherwise
``$XDG_DATA_HOME/gpuplan`` or ``~/.local/share/gpuplan``.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGED = "packaged"
REFRESHED = "refreshed"


def user_data_dir() -> Path:
    home = os.environ.get("GPUPLAN_HOME")
    if home:
        return Path(home).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "gpuplan"


def packaged_catalog_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def catalogs_dir() -> Path:
    return user_data_dir() / "catalogs"


def refreshed_catalog_dir() -> Path:
    return catalogs_dir() / REFRESHED


def previous_catalog_dir() -> Path:
    return catalogs_dir() / "previous"


def active_marker() -> Path:
    return catalogs_dir() / "active"
