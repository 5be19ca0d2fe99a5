"""What the catalog store removes, and the lock that keeps removing apart from making active.

- ``store_lock``: an exclusive ``flock`` on the ``catalogs/`` folder itself (no lock file
  to leave behind, or to remove while another process waits on it). A refresh holds it from its
  install to its prune, and every switch, prune and removal takes it. Without it, of two
  concurrent refreshes one pruned the other's catalog between that one's install and its
  switch (fault-injection sweep, 2026-12): the slow one then reported success for a catalog
  that was gone and left ``active`` naming it. (Sparing young catalogs from the prune closes
  that window too, but keeps every catalog of an hour's refreshes, KEEP or not; the lock
  changes nothing but the order.) Re-entrant within a thread; another thread or process
  waits, up to ``LOCK_WAIT_S``, saying so on stderr after ``LOCK_NOTE_AFTER_S`` (`catalog
  use` behind a stopped refresh waited five silent minutes). Best effort where no lock can be
  had (no ``fcntl``, a read-only store, a file system without locks): the write that follows
  says what is wrong.
- ``prune_refreshed``: the refreshes' catalogs beyond the newest ``KEEP``, never the active or
  previous one, never a folder the user put there (``made_by_refresh``).
- ``clean_stale_work``: a crash's ``.tmp-`` and ``.trash-`` folders, an hour on.
- ``remove_entry``: a folder, or a symbolic link itself (never what it points to).
- ``why_not`` / ``store_fix`` / ``access_fix``: why the store cannot be reached (no access, a
  file where its folder goes) and the one fix each message gives.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
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
LOCK_NOTE_AFTER_S = 2.0  # a wait longer than a switch takes: said, once
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

    start = time.monotonic()
    deadline, note_at = start + LOCK_WAIT_S, start + LOCK_NOTE_AFTER_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            now = time.monotonic()
            if note_at is not None and now >= note_at:
                note_at = None
                pid = _lock_holder(fd)
                print(f"note: waiting for another gpuplan command that is changing the catalog "
                      f"store {base}{f' (pid {pid}?)' if pid else ''}; this one gives up after "
                      f"{LOCK_WAIT_S:g} s…", file=sys.stderr, flush=True)
            if now > deadline:
                raise CatalogError(
                    f"catalog store {base}: another gpuplan command has been changing it for "
                    f"{LOCK_WAIT_S:g} s (it holds the folder's lock). To fix: let that "
                    "command (a `gpuplan catalog refresh`?) finish, or stop it, and run this "
                    "one again") from None
            time.sleep(0.05)
        except OSError:  # ENOLCK (some network file systems): as without fcntl
            return


def _lock_holder(fd: int) -> int | None:
    """The pid holding a lock on the folder open as ``fd``, from Linux's /proc/locks (None
    elsewhere, or when it cannot be told): a hint for the note, never relied on."""
    try:
        st = os.fstat(fd)
        with open("/proc/locks", encoding="ascii", errors="replace") as handle:
            lines = handle.read(1 << 20).splitlines()
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:  # "1: FLOCK  ADVISORY  WRITE 4242 00:2f:1234 0 EOF"; waiters have "->"
        parts = line.split()
        if len(parts) >= 6 and "->" not in parts and parts[1] == "FLOCK" \
                and parts[5] == where and parts[4].isdigit():
            return int(parts[4])
    return None


def remove_entry(path: Path, rmtree: Callable[..., None] = shutil.rmtree) -> None:
    """Delete the folder ``path`` (with ``rmtree``), or, when it is a symbolic link, the link
    alone: rmtree refuses a link, and with its error ignored a pruned link stayed as
    ``.trash-…`` for ever. OSError when a link cannot be removed (the caller then does not
    report it removed)."""
    if os.path.islink(path):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
    else:
        rmtree(path, ignore_errors=True)


# -- why the store cannot be reached, and the fix (the store's messages and the lock's)
def access_fix(folder: Path) -> str:
    """The fix for a folder of gpuplan's own that refuses this user access (not "name
    another file": the marker's place is fixed)."""
    from ._writes import _owned, shell_word

    where = shell_word(folder)
    if not _owned(folder):
        return f"set GPUPLAN_HOME to a folder of your own ({where} belongs to another user)"
    return (f"give yourself access to that folder (chmod u+rwx {where}), or set GPUPLAN_HOME "
            "to another folder")


_NOT_A_FOLDER = " is not a folder"


def why_not(exc: OSError, folder: Path) -> str | None:
    """Why ``folder`` (the store) or a file in it could not be reached, in a few words; None
    when it is simply not there."""
    if isinstance(exc, FileNotFoundError):
        return None
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, NotADirectoryError):  # the first of the folder's parts that is no folder
        from ._writes import shell_word

        blocker = next((p for p in (*reversed(folder.parents), folder)
                        if os.path.lexists(p) and not os.path.isdir(p)), None)
        if blocker is not None:
            return shell_word(blocker) + _NOT_A_FOLDER
    return exc.strerror or str(exc)


def store_fix(why: str, folder: Path) -> str:
    """The fix for the store ``folder`` that ``why_not`` said ``why`` of ("" if none)."""
    if why == "permission denied":
        return access_fix(folder)
    if why.endswith(_NOT_A_FOLDER):
        return (f"move {why[:-len(_NOT_A_FOLDER)]} out of the way (gpuplan keeps a folder "
                "there), or set GPUPLAN_HOME to a folder of your own")
    return ""



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
        if not p.name.startswith((".tmp-", ".trash-")):
            continue
        try:
            st = os.lstat(p)  # a link's own age, never its target's: the link is removed alone
            # a crash's leftovers: the age every writer's temp files are pruned at
            if ((stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode))
                    and now - st.st_mtime > STALE_TEMP_SECONDS):
                remove_entry(p)
        except OSError:
            pass
