"""The probe database: ingested reports in SQLite, and the Calibration the model reads.

One file, ``<user data dir>/probes.db``, schema-versioned with ``PRAGMA user_version``:

    reports(id, sha256 UNIQUE, ingested_utc, created_utc, source_path, accelerator, gpu_model,
            device_type, gpu_count, node_count, world_size, cloud, instance_type, region,
            report_json)
    measurements(report_id -> reports.id, kind, key, value, unit)
        kind: matmul_tflops (key = catalog dtype, fp8_fast for fast accumulation),
        device_copy_gb_per_s (key copy), device_triad_gb_per_s (key triad),
        busbw_intra_gb_per_s / busbw_world_gb_per_s (key = op),
        workload_layer_ms / workload_layer_activation_mib (key = framework and layer shape,
        e.g. "fsdp h4096 a32/8 d128 F14336g s8192 b1 bf16 rc:none": the workload probe's
        forward + backward time and activations per layer, median over GPUs)
    removed_reports(id, sha256, removed_utc)
        the ids `gpuplan probe remove` took out: never given to another report (a database
        of an older gpuplan gets this table on its first write)

Every report is stored; which figures calibrate the model is decided when the calibration is
loaded, by the rules of ``_rules`` (``_calibrate``), from the report's JSON and the catalog's
datasheet (so a rule that changes applies to reports already stored). This module holds the
connections, the schema and the errors; ``_reports`` stores and reads reports.

Concurrency and faults: the schema is created inside one ``BEGIN IMMEDIATE`` transaction with
``IF NOT EXISTS`` statements (idempotent, and atomic: a crash leaves either no schema or all of
it); every write is one IMMEDIATE transaction that takes the write lock before it reads, so two
ingests of the same file cannot both insert it. Connections wait up to BUSY_TIMEOUT_SECONDS for
a lock and the write is retried RETRIES times; a write still waiting after NOTICE_AFTER_SECONDS
says so (a ``StoreNotice``: the CLI's "note:" line), so a long wait is not a silent hang.
Errors say "locked", "disk full", "read-only" or "damaged" for what SQLite actually reported,
and where SQLite's "disk I/O error" or "unable to open" hides the cause (it names no errno),
the one the file system shows (``_os_cause``: a journal that is a directory, a read-only
mount, the process's file-size limit);
``_damage`` tells a damaged file (SQLite's quick_check, run when something looked wrong) from a
damaged report.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from catalog import CatalogNotice, data_dir

from ..model import CalibrationError
from ._damage import (
    StoreConnection,
    check_rows,
    damaged_database,
    is_corrupt,
    message_of,
    raise_if_damaged,
    rebuild_fix,
    short,
)

T = TypeVar("T")

SCHEMA_VERSION = 1
_REMOVED_DDL = """CREATE TABLE IF NOT EXISTS removed_reports (
        id INTEGER PRIMARY KEY,
        sha256 TEXT,
        removed_utc TEXT NOT NULL
    )"""
_DDL = (
    """CREATE TABLE IF NOT EXISTS reports (
        id INTEGER PRIMARY KEY,
        sha256 TEXT NOT NULL UNIQUE,
        ingested_utc TEXT NOT NULL,
        created_utc TEXT NOT NULL,
        source_path TEXT,
        accelerator TEXT,
        gpu_model TEXT,
        device_type TEXT NOT NULL,
        gpu_count INTEGER,
        node_count INTEGER,
        world_size INTEGER,
        cloud TEXT,
        instance_type TEXT,
        region TEXT,
        report_json TEXT NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS measurements (
        report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS measurements_kind ON measurements(kind, key)",
    _REMOVED_DDL,
)
BUSY_TIMEOUT_SECONDS = 10.0
RETRIES = 4
# a write waits this long for the lock before saying that it waits (then the rest of its wait)
NOTICE_AFTER_SECONDS = 1.0


class StoreNotice(CatalogNotice):
    """Something about the probe database a user must know that is not an error (a write
    waiting for another process's lock): the CLI prints it as a "note:" line on stderr."""


def ensure_removed_table(conn: sqlite3.Connection) -> None:
    """The removed reports' ids (in a write transaction): added to schema 1 later, so a
    database created before it gets it on its first write, not by a schema migration."""
    conn.execute(_REMOVED_DDL)


def next_report_id(conn: sqlite3.Connection) -> int:
    """One above every id ever stored (in a write transaction): a removed report's id is never
    given to another (the app's cached plans and a user's notes name reports by id); SQLite
    alone would reuse the highest once it was deleted."""
    ensure_removed_table(conn)
    return conn.execute("SELECT MAX(COALESCE((SELECT MAX(id) FROM reports), 0), "
                        "COALESCE((SELECT MAX(id) FROM removed_reports), 0)) + 1").fetchone()[0]


def db_path() -> Path:
    return data_dir() / "probes.db"


# -- connections and errors ------------------------------------------------------------------
def _error(exc: BaseException, path: Path,
           conn: StoreConnection | None = None) -> CalibrationError:
    """The one-line error for what SQLite (or the OS) reported; with ``conn``, an error that
    is none of the known kinds is called damage when quick_check finds some."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = short(message_of(exc))  # one line, and no stored text quoted at length
    low = text.lower()
    err = getattr(exc, "errno", None)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in low:
        return CalibrationError(
            f"{path}: the probe database is locked by another process ({text}). To fix: wait "
            "for the other gpuplan command (an ingest, the app) to finish, then retry")
    if cause := _os_cause(path, name, low, err):
        what, fix = cause
        return CalibrationError(f"{path}: {what} ({text}); nothing was changed. To fix: {fix}")
    if name.startswith("SQLITE_FULL") or "full" in low or err == errno.ENOSPC:
        return CalibrationError(
            f"{path}: the disk is full ({text}); nothing was changed. To fix: free space on that "
            "disk (or point GPUPLAN_HOME at another), then retry")
    if name.startswith("SQLITE_READONLY") or "readonly" in low or err in (errno.EACCES,
                                                                         errno.EROFS):
        return CalibrationError(
            f"{path}: the probe database cannot be written ({text}). To fix: check the "
            "permissions of the gpuplan data directory (or set GPUPLAN_HOME)")
    if name.startswith("SQLITE_IOERR") or "i/o" in low:
        return CalibrationError(
            f"{path}: disk I/O error on the probe database ({text}). To fix: check the disk "
            "(space, health), then retry")
    if path.is_dir():  # "check the permissions" sent the user the wrong way
        return CalibrationError(
            f"{path} is a directory, not the probe database ({text}). To fix: move it away "
            "(or set GPUPLAN_HOME to another directory)")
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in low:
        return CalibrationError(
            f"{path}: cannot open the probe database ({text}). To fix: check the permissions "
            "of the gpuplan data directory (or set GPUPLAN_HOME)")
    if is_corrupt(exc):
        return damaged_database(path, text)
    found = conn.damage() if conn is not None else None
    if found:  # a constraint failed, or a column was missing, where a page was damaged
        return damaged_database(path, found)
    return CalibrationError(f"{path}: the probe database failed ({text}). To fix: retry; if it "
                            f"persists, {rebuild_fix('the file')}")


# What one write may add to the file and its journal: a report of at most 16 MiB (probes'
# MAX_REPORT_BYTES), its measurement rows, and the journal's copy of the pages it changes.
WRITE_HEADROOM_BYTES = 64 * 2**20


def _os_cause(path: Path, name: str, low: str, err: int | None) -> tuple[str, str] | None:
    """(what, fix) for an I/O, open or read-only failure whose cause the file system shows:
    SQLite says "disk I/O error" or "unable to open" for all of them (Python's sqlite3 keeps
    no errno), and "check the disk" or "check the permissions" sent the user the wrong way."""
    io = name.startswith(("SQLITE_IOERR", "SQLITE_FULL")) or "i/o" in low or "full" in low \
        or err in (errno.EFBIG, errno.ENOSPC)
    opening = io or name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")) or any(
        w in low for w in ("unable to open", "readonly")) or err in (errno.EROFS, errno.EACCES,
                                                                      errno.EISDIR)
    if not opening:
        return None
    journal = path.with_name(path.name + "-journal")
    if journal.is_dir():  # EISDIR when SQLite opens its rollback journal
        return (f"{journal.name} beside it is a directory, where SQLite keeps the database's "
                "rollback journal", f"move the directory {journal} away, then retry")
    try:
        read_only = bool(os.statvfs(path.parent).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        read_only = False
    if read_only:  # chmod cannot make it writable
        return (f"its folder {path.parent} is on a read-only file system",
                "set GPUPLAN_HOME to a folder on a writable file system")
    # EFBIG: Python ignores SIGXFSZ, so a write past the limit fails instead of killing the
    # process; SQLite names no errno, so a limit this write could have reached is the cause
    limit = _file_size_limit()
    over = limit is not None and limit < _size(path) + _size(journal) + WRITE_HEADROOM_BYTES
    if io and err != errno.ENOSPC and (err == errno.EFBIG or over):  # free space lifts no limit
        shown = f" of {limit:,} bytes" if limit is not None else ""
        return (f"a write reached this process's file-size limit{shown}, ulimit -f",
                "raise the file-size limit (ulimit -f unlimited, in the shell that runs "
                "gpuplan) and run the command again")
    return None


def _file_size_limit() -> int | None:
    """This process's RLIMIT_FSIZE in bytes (``ulimit -f``); None when unlimited or unknown."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
    return None if soft == resource.RLIM_INFINITY else soft


def _size(path: Path) -> int:
    try:
        return path.stat().st_size if path.is_file() else 0
    except OSError:
        return 0


def _check_kind(path: Path) -> None:
    """``path`` is the database file or nothing: a link to itself or to a missing place read
    as "no reports" (plans went uncalibrated without a word), and a FIFO or a device as a disk
    error, each with the wrong fix."""
    import stat

    try:
        st = path.stat()
    except FileNotFoundError:
        if not path.is_symlink():
            return  # no database yet
        why = f"it points at {os.readlink(path)!r}"
    except OSError as exc:  # ELOOP: a link to itself
        why = exc.strerror
    else:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):  # a folder: _error
            raise CalibrationError(
                f"{path} is not a regular file (a FIFO, socket or device), so it is not the "
                "probe database. To fix: move it away (a new database is made on the next "
                "ingest), or set GPUPLAN_HOME to another directory")
        return
    raise CalibrationError(
        f"{path} is a symbolic link to itself or a missing place, not the probe database "
        f"({why}). To fix: remove the link (a new database is made on the next ingest), or "
        "point it at the database")


def _retryable(exc: sqlite3.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def _open(path: Path) -> StoreConnection:
    """A connection in autocommit mode (transactions are explicit) that waits for locks."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None,
                           factory=StoreConnection)
    conn.path = path
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _version(conn: StoreConnection, path: Path) -> int:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version == 0 and (tables := [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY name")]) and not {"reports", "measurements"} & set(tables):
        # (a store half created by an older gpuplan has its tables at version 0: completed)
        # another program's database: ingest added gpuplan's tables to it, show read it as
        # an empty store (hostile sweep)
        shown = ", ".join(tables[:3]) + (", …" if len(tables) > 3 else "")
        raise CalibrationError(f"{path}: is another program's SQLite database (tables {shown}), "
                               "not gpuplan's probe database. To fix: move it away (the next "
                               "ingest makes a new one), or set GPUPLAN_HOME to another folder")
    if version > SCHEMA_VERSION:
        raise CalibrationError(f"{path}: probe database schema {version} is newer than this "
                               f"gpuplan understands ({SCHEMA_VERSION}). To fix: upgrade "
                               "gpuplan, or move the file away")
    return version


def _create_schema(conn: StoreConnection, path: Path) -> None:
    """Idempotent and atomic: every statement in one IMMEDIATE transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _version(conn, path) < SCHEMA_VERSION:
            for statement in _DDL:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # a failed COMMIT may have ended it: a second error here
            conn.execute("ROLLBACK")  # ("cannot rollback") would hide the disk's own
        raise


@contextmanager
def _reading(db: Path | None) -> Iterator[StoreConnection | None]:
    """A connection for reads; None when there is no database or no schema yet (a store
    whose creation never committed reads as empty). Reading never creates the file. A read
    of a damaged file raises the damaged error (``_damage``), whatever its body raised or
    returned: rows it did not see, or saw garbled, are not a smaller store."""
    path = db or db_path()
    _check_kind(path)
    if not path.exists():
        yield None
        return
    try:
        # mode=rw: never creates the file, yet can roll back a crashed writer's journal
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True,
                               timeout=BUSY_TIMEOUT_SECONDS, factory=StoreConnection)
    except sqlite3.Error as exc:
        raise _error(exc, path) from None
    conn.path = path
    try:
        if _version(conn, path) < SCHEMA_VERSION:
            yield None
        else:
            check_rows(conn, path)
            yield conn
            if conn.unreadable:  # a text that is not UTF-8 or not JSON: a report, or the file?
                raise_if_damaged(conn, path)
    except (sqlite3.Error, UnicodeDecodeError) as exc:
        raise _failure(exc, conn, path) from None
    except (CalibrationError, ValueError):  # "no probe report N", a damaged report
        raise_if_damaged(conn, path)  # or the file's damage behind it
        raise
    finally:
        conn.close()


def _failure(exc: sqlite3.Error | UnicodeDecodeError, conn: StoreConnection,
             path: Path) -> BaseException:
    """The error to raise for ``exc``, raised by a statement on ``conn``: SQLite's own, said
    by ``_error``; a UnicodeDecodeError is SQLite's message quoting a damaged schema's bytes
    when quick_check finds damage, else not the database's (raised as it is)."""
    if isinstance(exc, UnicodeDecodeError) and conn.damage() is None:
        return exc
    return _error(exc, path, conn)


def _tries() -> list[tuple[float, float]]:
    """(busy timeout, pause before it) of each try of a write: RETRIES + 1 tries of
    BUSY_TIMEOUT_SECONDS, the first cut at NOTICE_AFTER_SECONDS, where the wait is said."""
    first = min(NOTICE_AFTER_SECONDS, BUSY_TIMEOUT_SECONDS)
    tries = [(first, 0.0)]
    if BUSY_TIMEOUT_SECONDS > first:
        tries.append((BUSY_TIMEOUT_SECONDS - first, 0.0))
    return tries + [(BUSY_TIMEOUT_SECONDS, 0.05 * 2**attempt) for attempt in range(RETRIES)]


def _write(db: Path | None, work: Callable[[StoreConnection], T]) -> T:
    """Run ``work(conn)`` in one IMMEDIATE transaction, creating the schema if needed;
    retried while another process holds the lock (said once the wait is long)."""
    path = db or db_path()
    from catalog import make_directory

    make_directory(path.parent, what="probe database")  # says what is in the way
    _check_kind(path)
    tries = _tries()
    for number, (wait, pause) in enumerate(tries):
        time.sleep(pause)
        try:
            conn = _open(path)
        except sqlite3.Error as exc:
            raise _error(exc, path) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {round(wait * 1000)}")
            return _transaction(conn, path, work)
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            if number < len(tries) - 1 and isinstance(exc, sqlite3.Error) and _retryable(exc):
                if number == 0:  # said once, after the first, short wait; then the rest
                    left = sum(w + p for w, p in tries[1:])
                    shown = f"{left:.0f}" if left >= 1 else f"{left:.1f}"
                    warnings.warn(StoreNotice(
                        f"waiting for the probe database {path}: another gpuplan process is "
                        f"writing it (up to {shown} s more)…"), stacklevel=2)
                continue
            raise _failure(exc, conn, path) from None
        except (CalibrationError, ValueError):  # "no probe report N", a damaged report
            raise_if_damaged(conn, path)
            raise
        finally:
            conn.close()
    raise AssertionError("unreachable")  # the last try returns or raises


def _transaction(conn: StoreConnection, path: Path, work: Callable[[StoreConnection], T]) -> T:
    if _version(conn, path) < SCHEMA_VERSION:
        _create_schema(conn, path)
    conn.execute("BEGIN IMMEDIATE")
    try:
        check_rows(conn, path)  # a write must not add to a damaged file, nor miss a row
        result = work(conn)
        if conn.unreadable:
            raise_if_damaged(conn, path)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result
