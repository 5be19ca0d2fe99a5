"""What the catalog store removes, and the lock that keeps removing apart from making active.

- ``store_lock``: an exclusive ``flock`` on the ``catalogs/`` folder itself (no lock file
  to leave behind, or to remove while another process waits on it). A refresh holds it from its
  install to its prune, and every switch, prune and removal takes it. Without it, of two
  concurrent refreshes one pruned the other's catalog between that one's install and its
  switch (fault-injection sweep, 2026-12): the slow one then reported success for a catalog
  that was gone and left ``active`` naming it. (Sparing young catalogs from the prune closes
  that window too, but keeps every catalog of an hour's refreshes, KEEP or not; the lock
  changes nothing but the order.) Re-entrant within a thread; another thread or process
  waits, up to ``LOCK_WAIT_S``. Best effort where no lock can be had (no ``fcntl``, a
  read-only store, a file system without locks): the write that follows says what is wrong.
- ``prune_refreshed``: the refreshes' catalogs beyond the newest ``KEEP``, never the active or
  previous one, never a folder the user put there (``made_by_refresh``).
- ``clean_stale_work``: a crash's ``.tmp-`` and ``.trash-`` folders, an hour on.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from ._errors import CatalogError
from ._writes import STALE_TEMP_SECONDS

KEEP = 3  # refreshed catalogs kept besides the active and previous ones
REFRESH_PREFIX = "refreshed-"  # new_name's; a folder named otherwise is never pruned
# A holder keeps the lock for an install's writes and read-back (seconds, a minute on a slow
# disk); past this, it is a stopped process the user should know about.
LOCK_WAIT_S = 300.0
_held = threading.local()  # depth of this thread's store_lock


@contextlib.contextmanager
def store_lock(base: Path) -> Iterator[None]:
    """Hold the store's lock (see the module docstring) for the ``with`` block."""
    if getattr(_held, "depth", 0):  # this thread holds it already: a refresh's own switch
        _held.depth += 1
        try:
            yield
        finally:
            _held.depth -= 1
        return
    fd = _open_lock(base)
    try:
        if fd is not None:
            _acquire(fd, base)
        _held.depth = 1
        yield
    finally:
        _held.depth = 0
        if fd is not None:
            os.close(fd)  # releases the lock


def _open_lock(base: Path) -> int | None:
    try:
        import fcntl  # noqa: F401 (POSIX only)
    except ImportError:
        return None
    try:
        return os.open(base, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)
                       | getattr(os, "O_CLOEXEC", 0))
    except OSError:  # no store yet (or none this user may read): nothing to keep apart
        return None


def _acquire(fd: int, base: Path) -> None:
    import fcntl

    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() > deadline:
                raise CatalogError(
                    f"catalog store {base}: another gpuplan command has been changing it for "
                    f"{LOCK_WAIT_S:g} s (it holds the folder's lock). To fix: let that "
                    "command (a `gpuplan catalog refresh`?) finish, or stop it, and run this "
                    "one again") from None
            time.sleep(0.05)
        except OSError:  # ENOLCK (some network file systems): as without fcntl
            return


def made_by_refresh(c) -> bool:
    """Whether a refresh wrote the stored catalog ``c``: its name (``new_name``) and meta.json
    (``refreshed_at``). Anything else the user put there (a copy, a backup): only they delete
    it."""
    return c.name.startswith(REFRESH_PREFIX) and bool(c.refreshed_at)


def prune_refreshed(stored: Iterable, keep: set,
                    discard: Callable[[Path], None]) -> tuple[str, ...]:
    """Remove (``discard``: the store's rename, then delete) the refresh's catalogs among
    ``stored`` (newest first) beyond the newest ``KEEP``, except those named in ``keep`` (the
    active and previous one); the names removed. The caller holds ``store_lock``."""
    removed = []
    for c in [c for c in stored if made_by_refresh(c)][KEEP:]:
        if c.name not in keep:
            try:
                discard(c.path)
            except OSError:
                continue  # removed by hand meanwhile; harmless
            removed.append(c.name)
    return tuple(removed)


def clean_stale_work(base: Path) -> None:
    now = time.time()
    try:
        entries = list(base.iterdir())
    except OSError:
        return
    for p in entries:
        if p.name.startswith((".tmp-", ".trash-")) and p.is_dir():
            try:
                # a crash's leftovers: the age every writer's temp files are pruned at
                if now - p.stat().st_mtime > STALE_TEMP_SECONDS:
                    shutil.rmtree(p, ignore_errors=True)
            except OSError:
                pass
