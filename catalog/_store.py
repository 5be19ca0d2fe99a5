"""Catalogs on disk: complete directories, one pointer, and a swap that survives a crash.

Layout of ``$GPUPLAN_HOME/catalogs/``::

    active                  marker: the name of the active catalog ("packaged" or a directory)
    previous-active         marker: the catalog that was active before the last switch
    refreshed-20260121T101500Z-3fa2c1/    complete catalogs, one per refresh
    mine/                   a complete catalog the user put there (listed, never removed)
    .tmp-…/  .trash-…/      work in progress / on its way out (never read)

A catalog directory only ever appears under its final name *complete*: it is written as
``.tmp-<name>`` (every file fsynced, read back with the normal loader), then renamed — one
atomic step. The switch is one more atomic step: the ``active`` marker is replaced
(temporary file + fsync + rename), written last. So at every instant the marker names either
the old catalog or the new one, both complete:

    install(…)  1 mkdir .tmp   2 write + fsync the four files   3 read back   4 rename to the
                final name   5 write previous-active   6 write active   7 remove the
                refresh's catalogs beyond the newest ``KEEP`` (renamed to .trash first, then
                deleted): only ``refreshed-…`` folders whose meta.json has ``refreshed_at``,
                never the active or previous one, never a folder the user put there
                (``_store_prune``; a refresh holds its lock from 4 to 7, so no other one
                prunes its catalog before it is active)

A crash before step 4 leaves a ``.tmp`` directory nobody reads (removed an hour on by a later
refresh); between 4 and 6 a complete catalog that is not active ("stranded": listed by
``catalog info``, selectable with ``gpuplan catalog use NAME``); after 6 it is active.

No marker means the packaged snapshot (as before the first refresh). Recovery at the next
start (``active()``): if the marker is unreadable or names a directory that is not a complete
catalog — a crash of an older gpuplan, a directory deleted by hand — the catalog named in
``previous-active`` is used if complete (and not the packaged snapshot), else the newest
complete refreshed catalog, else the packaged snapshot — each only if it loads, as `catalog
use` checks (a complete folder can hold a price the loader refuses: switching to it failed
every command after); the marker is repaired (best effort: a
read-only data directory just means the repair is done again next time), and a
``CatalogNotice`` warning says which catalog replaced which (the CLI prints it as a note: a
silent switch could price a plan with years-old prices). A marker that is not a regular file
(a named pipe would block its read) reads as unreadable, and switching says to remove it.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from . import _paths, _store_prune
from ._errors import CatalogError, CatalogNotice, UnknownNameError, without_fix
from ._meta import check_meta, read_meta
from ._record import record
from ._store_prune import KEEP, made_by_refresh, prune_refreshed, remove_entry, store_lock
from ._store_prune import clean_stale_work as _clean_stale_work

FILES = ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json")
MARKER_MAX_BYTES = 4096
# at most 100 characters, as `gpuplan catalog use NAME` takes (a longer one was listed but
# could not be selected)
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


@record
class StoredCatalog:
    """One complete catalog directory under ``catalogs/``."""

    name: str
    path: Path
    refreshed_at: str  # from its meta.json ("" if none)


def is_complete(path: Path) -> bool:
    """All four files present (non-empty) and a readable meta.json of the right shape. The
    loader does the full validation; this is the cheap check that decides what may be
    pointed at."""
    return _meta_of(path) is not None


def _meta_of(path: Path) -> dict | None:
    """The meta.json of the complete catalog directory ``path``, None if it is not one."""
    try:
        if not all((path / f).is_file() and (path / f).stat().st_size > 0 for f in FILES):
            return None
        return check_meta(read_meta(path), path / "meta.json")
    except (OSError, CatalogError):
        return None


def _valid_name(name: str) -> bool:
    return bool(_NAME.match(name)) and name not in (_paths.PACKAGED, _paths.REFRESHED,
                                                     _paths.PREVIOUS)


def stored_catalogs(*, legacy: bool = False) -> list[StoredCatalog]:
    """Complete refreshed catalogs, newest first; none named as a keyword (`catalog use` reads
    it as the keyword: listed, it could not be selected) but, with ``legacy``, the
    ``refreshed`` and ``previous`` of gpuplan before the store (`use refreshed`, recovery)."""
    base = _paths.catalogs_dir()
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return []
    out = []
    for p in entries:
        if p.name.startswith(".") or not p.is_dir() or not (
                _valid_name(p.name) or legacy and p.name in (_paths.REFRESHED, _paths.PREVIOUS)):
            continue
        meta = _meta_of(p)
        if meta is None:
            continue
        out.append(StoredCatalog(name=p.name, path=p,
                                 refreshed_at=str(meta.get("refreshed_at") or "")))
    # refreshed_at (checked: a UTC time, not in the future) orders them; names embed the same
    # UTC time (refreshed-YYYYmmddTHHMMSSZ-…) and break ties.
    return sorted(out, key=lambda c: (c.refreshed_at, c.name), reverse=True)


def _read_marker(path: Path) -> str | None:
    """The name in a marker file; None when there is none or it is not a small regular file
    (a named pipe would block the read for ever; a device could be endless)."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return None
        with open(path, "rb") as handle:
            raw = handle.read(MARKER_MAX_BYTES + 1)
        name = raw.decode("utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return name if len(raw) <= MARKER_MAX_BYTES else None


def _write_marker(path: Path, name: str) -> None:
    from ._writes import make_directory, write_text_atomic

    make_directory(path.parent, what="catalog store")
    mode = _marker_mode(path)
    if mode is not None and stat.S_ISLNK(mode):
        # gpuplan's own marker, never a link it made: replaced by a file (writing through a
        # dangling link created its target; a loop could not be written at all)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise CatalogError(f"catalog marker {path} is a symbolic link gpuplan cannot "
                               f"replace ({exc.strerror or exc}). To fix: remove it (rm "
                               f"{path}) and run the command again") from None
    # the writer's fix already names what the user can change here (chmod, or GPUPLAN_HOME:
    # the marker is under gpuplan's own folder, which no command option moves); a read-only
    # marker is replaced like any other (a rename needs its folder writable, not the file)
    write_text_atomic(path, name + "\n", what="catalog marker", replace_read_only=True)


def _marker_mode(path: Path) -> int | None:
    """The marker's mode (None: none there); CatalogError when it is something ``_write_marker``
    cannot replace — checked by ``prepare`` too, before a refresh's downloads."""
    try:
        mode = os.lstat(path).st_mode
    except PermissionError:  # the writer's fix would say to name another file
        raise CatalogError(f"catalog marker {path}: cannot reach it (permission denied). "
                           f"To fix: {_store_prune.access_fix(path.parent)}") from None
    except OSError:
        return None  # missing: written as new
    # not the user's output: the fix is to remove what is in the way, not to rename ours
    if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        kind = "a directory" if stat.S_ISDIR(mode) else (
            "a named pipe" if stat.S_ISFIFO(mode) else "not a regular file")
        remove = f"rmdir {path}" if stat.S_ISDIR(mode) else f"rm {path}"
        raise CatalogError(f"catalog marker {path} is {kind}; gpuplan keeps a one-line "
                           f"file there. To fix: remove it ({remove}) and run the command "
                           "again")
    return mode


def _catalog_path(name: str) -> Path | None:
    """The directory of a stored or packaged catalog ``name`` if it is complete."""
    if name == _paths.PACKAGED:
        return _paths.packaged_catalog_dir()
    if not _NAME.match(name):
        return None
    path = _paths.catalogs_dir() / name
    return path if is_complete(path) else None


def _unreadable(marker: Path) -> str | None:
    """None when there is no ``marker`` (packaged is active); else why it could not be read
    ("" when it is there). Not os.path.lexists, which is False on EACCES too: an unreadable
    catalogs/ folder silently meant the packaged snapshot. A dangling or looping link is a
    marker that cannot be read (recovered with a notice), not "no marker"; so is a
    GPUPLAN_HOME (or ``catalogs``) that is a file, which silently meant the snapshot too."""
    try:
        os.lstat(marker)
    except OSError as exc:
        return _store_prune.why_not(exc, marker.parent)
    return ""


def _check_store() -> None:
    """CatalogError when the store is there but cannot be read: without this check an
    unreadable ``catalogs/`` read as an empty one, and `catalog use NAME` said "unknown catalog",
    `use previous` "no previous catalog"."""
    base = _paths.catalogs_dir()
    try:
        os.listdir(base)  # read permission, and a folder at all
        os.lstat(_paths.active_marker())  # search permission
    except OSError as exc:
        if why := _store_prune.why_not(exc, base):
            fix = _store_prune.store_fix(why, base) or "set GPUPLAN_HOME to another folder"
            raise CatalogError(f"catalog store {base}: cannot read it ({why}). To fix: {fix}"
                               ) from None


def active() -> tuple[str, Path]:
    """(name, directory) of the active catalog, recovering a stranded marker (see above)."""
    marker = _paths.active_marker()
    name = _read_marker(marker)
    why = _unreadable(marker) if name is None else ""
    if why is None:
        return _paths.PACKAGED, _paths.packaged_catalog_dir()
    path = _catalog_path(name) if name else None
    if path is not None:
        return name, path
    return _recover(name, why=why)


_load_check: Callable[[Path, str], object] | None = None  # see use_load_check


def use_load_check(check: Callable[[Path, str], object]) -> None:
    """Have recovery switch only to a catalog ``check(path, name)`` loads (no CatalogError):
    the loader's ``read_catalog_dir``, which `catalog use` runs too, given by the loader (the
    store sits below it and cannot import it). Only recovery runs it: a start stays cheap."""
    global _load_check
    _load_check = check


def _loads(name: str, path: Path) -> bool:
    if _load_check is None or name == _paths.PACKAGED:  # packaged: held to it by the tests
        return True
    try:
        _load_check(path, name)
    except (CatalogError, OSError):
        return False
    return True


def _recover(lost: str | None, *, why: str = "") -> tuple[str, Path]:
    """The catalog to use instead of the marker's ``lost`` one (None: unreadable), said in a
    ``CatalogNotice``: its prices may be far older than those the user chose."""
    candidates = []
    previous = _read_marker(_paths.previous_marker())
    if previous and previous != _paths.PACKAGED:  # packaged stays the last resort: the first
        candidates.append(previous)  # refresh records it as previous (`use previous` works)
    candidates += [c.name for c in stored_catalogs(legacy=True)]
    refused: list[str] = []  # complete, but the loader refuses them: every command would fail
    for name in dict.fromkeys((*candidates, _paths.PACKAGED)):
        path = _catalog_path(name)
        if path is not None and not _loads(name, path):
            refused.append(name)
        elif path is not None:
            try:
                _write_marker(_paths.active_marker(), name)
                kept = "it is now the active catalog"
            except (OSError, CatalogError):  # read-only data directory: recover again next time
                kept = "the marker could not be rewritten, so this happens at every start"
            if refused:  # said, or the user would wonder why their previous one was not taken
                kept += (f"; passed over {', '.join(map(repr, refused[:3]))}"
                         f"{' …' if len(refused) > 3 else ''}, which cannot be loaded")
            said = "is missing or incomplete" if lost else "could not be read"
            if why:  # a folder that refuses access: no `catalog use` helps until it is fixed
                marker = _paths.active_marker()
                fix = f". To fix: {f}" if (f := _store_prune.store_fix(why, marker.parent)) else ""
                warnings.warn(CatalogNotice(f"the active catalog {said} ({marker}: {why}); "
                                            f"using {name!r} instead ({kept}){fix}"),
                              stacklevel=2)
                return name, path
            warnings.warn(CatalogNotice(
                f"the active catalog{f' {lost[:100]!r}' if lost else ''} {said}; using "
                f"{name!r} instead ({kept}). `gpuplan catalog info` lists the catalogs present; "
                "`gpuplan catalog use NAME` picks another"), stacklevel=2)
            return name, path
    raise AssertionError("the packaged catalog is always complete")  # pragma: no cover


def known_names() -> list[str]:
    return [_paths.PACKAGED, _paths.REFRESHED, _paths.PREVIOUS,
            *(c.name for c in stored_catalogs())]


def resolve(name: str | None) -> tuple[str, Path]:
    """(name, directory) of ``name``: "packaged", "refreshed" (the newest refreshed catalog),
    "previous" (active before the last switch), a stored catalog's name, or None (active)."""
    if name is None:
        return active()
    if name == _paths.PACKAGED:
        return name, _paths.packaged_catalog_dir()
    _check_store()  # not "no such catalog" when the store cannot be read
    if name == _paths.REFRESHED:
        stored = stored_catalogs(legacy=True)
        if not stored:
            raise CatalogError("no refreshed catalog. To fix: run `gpuplan catalog refresh`")
        return stored[0].name, stored[0].path
    if name == _paths.PREVIOUS:
        previous = _read_marker(_paths.previous_marker())
        path = _catalog_path(previous) if previous else None
        if path is None:
            raise CatalogError("no previous catalog. To fix: see `gpuplan catalog info` for "
                               "the catalogs present")
        return previous, path
    path = _catalog_path(name)
    if path is None:
        where = _paths.catalogs_dir() / name if _NAME.match(name) else None
        if (where is not None and os.path.lexists(where)  # there, but not a catalog
                and where not in (_paths.active_marker(), _paths.previous_marker())):
            raise CatalogError(f"catalog {name!r} is incomplete ({_why_incomplete(where)}). "
                               f"To fix: remove {where}, or run `gpuplan catalog use "
                               "packaged` or `gpuplan catalog refresh`")
        raise UnknownNameError("catalog", name, known_names(),
                               hint="`gpuplan catalog info` lists the catalogs present")
    return name, path


def _why_incomplete(path: Path) -> str:
    """Why ``path`` is not a complete catalog (``_meta_of`` returned None), in a few words."""
    if not path.is_dir():
        return "it is not a directory"
    for f in FILES:
        try:
            st = os.stat(path / f)
        except OSError as exc:
            return f"{f} is missing" if isinstance(exc, FileNotFoundError) else (
                f"{f} cannot be read: {exc.strerror or exc}")
        if not stat.S_ISREG(st.st_mode):
            return f"{f} is not a regular file"
        if not st.st_size:
            return f"{f} is empty"
    try:
        check_meta(read_meta(path), path / "meta.json")
    except CatalogError as exc:
        return without_fix(exc).replace(f"{path / 'meta.json'}: ", "meta.json: ")
    return "it changed while it was read"


def switch(name: str) -> None:
    """Make the complete catalog ``name`` active: previous-active first, active last."""
    with store_lock(_paths.catalogs_dir()):  # no prune or removal of another process between
        marker = _paths.active_marker()
        current = _read_marker(marker)
        if current is None and _unreadable(marker) is None:  # no marker: packaged is active
            current = _paths.PACKAGED
        if current and current != name and _catalog_path(current) is not None:
            _write_marker(_paths.previous_marker(), current)
        _write_marker(marker, name)
        if _catalog_path(name) is None:  # deleted meanwhile (by hand): no marker naming it
            if current is not None:  # put back; else (or failing) recovered at the next start
                with contextlib.suppress(OSError, CatalogError):
                    _write_marker(marker, current)
            raise CatalogError(f"catalog {name!r} was removed while it was being made active; "
                               "the active catalog is unchanged. To fix: see `gpuplan catalog "
                               "info` for the catalogs present, and run the command again")


def new_name(now: float | None = None) -> str:
    import secrets  # here, not at the top: reading the active catalog does not need it

    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
    return f"refreshed-{stamp}-{secrets.token_hex(3)}"


def remove(name: str) -> None:
    """Delete a stored catalog that is neither active nor previous (rename, then delete)."""
    with store_lock(_paths.catalogs_dir()):  # not while a switch makes it active
        _remove(name)


def _remove(name: str) -> None:
    if name in (_read_marker(_paths.active_marker()), _read_marker(_paths.previous_marker())):
        raise CatalogError(f"catalog {name!r} is in use. To fix: switch first with "
                           "`gpuplan catalog use …`")
    path = _catalog_path(name)
    if path is None or name == _paths.PACKAGED:
        raise UnknownNameError("catalog", name, [c.name for c in stored_catalogs()])
    _discard(path)


def _discard(path: Path) -> None:
    import secrets

    trash = path.parent / f".trash-{path.name}-{secrets.token_hex(3)}"
    os.rename(path, trash)  # atomic: the catalog vanishes whole, never half-deleted
    remove_entry(trash, shutil.rmtree)  # a link: the link alone, never what it points to


def _prune_old(base: Path) -> tuple[str, ...]:
    """Remove the refresh's catalogs beyond the newest ``KEEP``, except the active and the
    previous one; the names removed (a refresh reports them)."""
    with store_lock(base):  # markers read and folders removed with no switch in between
        keep = {_read_marker(_paths.active_marker()), _read_marker(_paths.previous_marker())}
        return prune_refreshed(stored_catalogs(), keep, _discard)


def prepare() -> Path:
    """The store's folder (created if missing) once a catalog could be written there and both
    markers replaced, its stale work swept: a refresh calls it before any download (a
    read-only GPUPLAN_HOME, or a directory where a marker goes, failed after up to 30 minutes
    of them; a failed refresh kept a crash's .tmp- folders)."""
    from ._writes import check_can_create, make_directory

    base = make_directory(_paths.catalogs_dir(), what="catalog store")
    _clean_stale_work(base)
    for marker in (_paths.previous_marker(), _paths.active_marker()):
        _marker_mode(marker)
    return check_can_create(base, what="catalog store")


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse fsync on directories; the rename is still atomic
    finally:
        os.close(fd)


def status() -> dict:
    """Which catalog is active, what else is stored, and what the markers say."""
    name, path = active()
    previous = _read_marker(_paths.previous_marker())
    return {
        "active": name, "path": str(path),
        "previous": previous if previous and _catalog_path(previous) else None,
        "stored": [{"name": c.name, "path": str(c.path), "refreshed_at": c.refreshed_at or None,
                    "active": c.name == name} for c in stored_catalogs()],
        "catalogs_dir": str(_paths.catalogs_dir()),
    }


__all__ = ["FILES", "KEEP", "StoredCatalog", "active", "is_complete", "known_names",
           "made_by_refresh", "new_name", "prepare", "remove", "resolve", "status",
           "stored_catalogs", "switch", "use_load_check"]
