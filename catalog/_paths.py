"""Where gpuplan keeps per-user state. Nothing is created at import; callers create on write.

``GPUPLAN_HOME`` overrides everything (tests and CI set it to a temporary folder); otherwise
``$XDG_DATA_HOME/gpuplan`` or ``~/.local/share/gpuplan``. The layout of ``catalogs/`` is
described in ``_store``.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGED = "packaged"
REFRESHED = "refreshed"  # the newest refreshed catalog, as a name users can type
PREVIOUS = "previous"  # the catalog that was active before the last switch


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


def active_marker() -> Path:
    return catalogs_dir() / "active"


def previous_marker() -> Path:
    return catalogs_dir() / "previous-active"
