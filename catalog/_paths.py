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
    path, variable = folder_from_env("GPUPLAN_HOME", "XDG_DATA_HOME", (".local", "share"))
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


def folder_from_env(variable: str, xdg: str, under_home: tuple[str, ...],
                    *, below: str = "") -> tuple[Path, str]:
    """(folder, the variable it came from): ``variable`` as given (``below`` appended), else
    ``$xdg/gpuplan``, else ``~/<under_home>/gpuplan``. A ``variable`` that names no folder is
    an error saying so: ``~user`` of an unknown user (Path.expanduser raised RuntimeError, a
    traceback in every command), a relative path (it followed the working directory, so
    reports stored from one folder were missing from another), a control character (echoed
    raw to the terminal), bytes that are not UTF-8, a blank value, or a '$' the shell did not
    expand. A relative XDG value is ignored, as the XDG spec says."""
    from ._errors import CatalogFileError

    value = os.environ.get(variable)
    if value:
        # bytes that are not UTF-8 arrive as lone surrogates (surrogateescape): shown as the
        # bytes they were, and said as such, not as "a control character"
        undecodable = any("\udc80" <= c <= "\udcff" for c in value)
        shown = (os.fsencode(value).decode("utf-8", "backslashreplace") if undecodable
                 else ascii(value)[1:-1] if not value.isprintable() else value)
        why = None
        if not value.strip():  # ' ' was "a relative path", fixed by setting it to cwd + ' '
            why = "is blank"
        elif undecodable:
            why = "is not valid UTF-8 (it has undecodable bytes)"
        elif not value.isprintable():
            why = "has a control character"
        if why is None and value.startswith("$"):  # '$HOME/x' in single quotes, a .env file
            expanded = os.path.expandvars(value)
            fix = (f"{variable}={expanded}" if os.path.isabs(expanded) and expanded.isprintable()
                   else f"{variable} to the folder it means, written out")
            raise CatalogFileError(f"{variable} '{shown}' starts with '$', which the shell did "
                                   "not expand (single quotes, or a file that does not expand "
                                   f"variables). To fix: set {fix} (or write it in double "
                                   "quotes, which the shell expands)")
        try:
            path = Path(value).expanduser()
        except RuntimeError:
            user = value[1:].split("/", 1)[0]
            why = why or f"names the home of user {user!r}, whom this machine does not know"
            path = Path(value)
        if why is None and not path.is_absolute():
            why = "is a relative path, so each working directory would have its own"
        if why:
            unset = ", or unset it" if why == "is blank" else ""
            # a path of undecodable bytes is absolute already: what it lacks is UTF-8
            kind = "an absolute path in UTF-8" if undecodable else "an absolute path"
            fix = (f"{variable}={Path.cwd() / path}" if why.startswith("is a relative")
                   else f"{variable} to {kind}{unset}")
            raise CatalogFileError(f"{variable} '{shown}' {why}. To fix: set {fix}")
        return (path / below if below else path), variable
    base = os.environ.get(xdg)
    if base and os.path.isabs(base):
        return Path(base) / "gpuplan", xdg
    raw = os.environ.get("HOME")
    if raw is not None and not os.path.isabs(raw):  # Path.home() takes HOME as it is
        why = ("HOME is empty" if not raw else f"HOME '{ascii(raw)[1:-1]}' is not an absolute "
               "path, so each working directory would have its own gpuplan folder")
        fix = (f"HOME={Path.cwd() / raw}" if raw and raw[0] not in "~$" else
               "HOME to your home folder")
        raise CatalogFileError(f"{why}. To fix: set {fix}, or GPUPLAN_HOME to an absolute path")
    try:
        home = Path.home()
    except RuntimeError:  # HOME unset, and a user id without a passwd entry (containers)
        raise CatalogFileError("cannot tell the home folder (HOME is not set and this user "
                               "has no entry in the password database). To fix: set "
                               "GPUPLAN_HOME to the folder gpuplan should keep its data in, or "
                               "HOME") from None
    return home.joinpath(*under_home, "gpuplan"), "HOME"


_CACHE_OFF, _CACHE_ON = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def cache_switched_off() -> bool:
    """Whether GPUPLAN_NO_CACHE turns the cache off: 1, true, yes or on (any case) do; unset,
    empty, 0, false, no and off do not. Anything else is an error: every other value once
    turned it off, so =false and =no did the opposite of what they say."""
    value = os.environ.get("GPUPLAN_NO_CACHE", "")
    word = value.strip().lower()
    if word in _CACHE_OFF or word in _CACHE_ON:
        return word in _CACHE_OFF
    from ._errors import GpuplanError, quoted

    raise GpuplanError(f"GPUPLAN_NO_CACHE={quoted(value)} is not a yes or a no. To fix: set "
                       "it to 1, true, yes or on to turn the cache off, or to 0, false, no or "
                       "off (or unset it) to keep it on")


def is_user_data(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies in gpuplan's own data folder: the user moves those files by
    setting GPUPLAN_HOME, not by naming another path (a write error's fix says which)."""
    from ._errors import CatalogFileError

    try:
        home = os.path.realpath(user_data_dir())
    except (CatalogFileError, OSError, ValueError):  # a home no file system allows: not ours
        return False
    return _within(os.path.realpath(path), home)


def _within(real: str, place: str) -> bool:
    """Whether the resolved path ``real`` is the resolved folder ``place`` or lies in it."""
    return real == place or real.startswith(place.rstrip(os.sep) + os.sep)


def in_catalog_folders(path: str | os.PathLike[str], *,
                       loaded: str | os.PathLike[str] | None = None) -> str | None:
    """Which of gpuplan's catalog folders ``path`` lies in (links and '..' resolved), said for
    an error, or None: an output written there (a report, a task file) replaced a catalog's
    offers.csv, the packaged one included, and every later command failed. ``loaded``: the
    folder of the catalog the command read, checked first."""
    from ._errors import CatalogFileError

    real = os.path.realpath(path)
    folders = ((lambda: loaded, "the folder of the catalog this command read"),
               (packaged_catalog_dir, "the packaged catalog's folder"),
               (catalogs_dir, "gpuplan's catalog store"))
    for folder, what in folders:
        try:
            named = folder()
            place = None if named is None else os.path.realpath(named)
        except (CatalogFileError, OSError, ValueError):  # no such place can be named
            continue
        if place is not None and _within(real, place):
            return f"{what} ({place})"
    return None


def packaged_catalog_dir() -> Path:
    return Path(__file__).resolve().parent / "data"


def catalogs_dir() -> Path:
    return user_data_dir() / "catalogs"


def active_marker() -> Path:
    return catalogs_dir() / "active"


def previous_marker() -> Path:
    return catalogs_dir() / "previous-active"
