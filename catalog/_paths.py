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


# Linux's limits (NAME_MAX, PATH_MAX), with room for the files gpuplan puts under the folder:
# beyond them every stat raises ENAMETOOLONG, which Path.exists() does not swallow.
MAX_NAME_BYTES, MAX_PATH_BYTES = 255, 3800


def user_data_dir() -> Path:
    home = os.environ.get("GPUPLAN_HOME")
    if home:
        path, variable = Path(home).expanduser(), "GPUPLAN_HOME"
    else:
        base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
        path, variable = Path(base) / "gpuplan", "XDG_DATA_HOME"
    longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
    size = len(os.fsencode(path))
    if longest > MAX_NAME_BYTES or size > MAX_PATH_BYTES:
        from ._errors import CatalogFileError

        shown = str(path) if len(str(path)) <= 80 else f"{str(path)[:60]}…"
        what = (f"a folder name of {longest:,} bytes (file systems allow {MAX_NAME_BYTES})"
                if longest > MAX_NAME_BYTES else f"a path of {size:,} bytes (gpuplan allows "
                f"{MAX_PATH_BYTES:,})")
        raise CatalogFileError(f"{variable} {shown} has {what}. To fix: set {variable} to a "
                               "shorter path")
    return path


def is_user_data(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies in gpuplan's own data folder: the user moves those files by
    setting GPUPLAN_HOME, not by naming another path (a write error's fix says which)."""
    from ._errors import CatalogFileError

    try:
        home = os.path.realpath(user_data_dir())
    except (CatalogFileError, OSError, ValueError):  # a home no file system allows: not ours
        return False
    real = os.path.realpath(path)
    return real == home or real.startswith(home.rstrip(os.sep) + os.sep)


def packaged_catalog_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def catalogs_dir() -> Path:
    return user_data_dir() / "catalogs"


def active_marker() -> Path:
    return catalogs_dir() / "active"


def previous_marker() -> Path:
    return catalogs_dir() / "previous-active"
