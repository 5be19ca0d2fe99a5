"""A per-user cache of parsed, validated catalogs, so a command does not parse 14,000 offers.

Parsing and validating the packaged snapshot (``_csvio`` + ``_records``) takes most of a
second; rebuilding the same records from this cache takes a few hundredths. One file per
catalog directory, ``catalog-<hash of the directory's path>.bin``, in:

    $GPUPLAN_CACHE_DIR                  when set (used as given)
    $GPUPLAN_HOME/cache                 when GPUPLAN_HOME is set (tests, CI)
    $XDG_CACHE_HOME/gpuplan, else ~/.cache/gpuplan

``GPUPLAN_NO_CACHE=1`` (or true, yes, on) turns it off: neither read nor written; 0, false,
no, off keep it on, another value is an error. Deleting the directory is always safe.

A cache file is used only when all of these hold, and is otherwise ignored (and replaced
after the next parse), never an error:

- its key matches: a SHA-256 over the bytes of the catalog's four files (and the packaged
  accelerators, from which old catalogs take planning facts) and of the modules that parse
  and validate them, so an edited catalog or a new gpuplan never meets a stale cache;
- its payload's own SHA-256 matches (a truncated or damaged file is ignored);
- on POSIX, the file and its directory belong to the current user and nobody else may write
  them, and the file is a regular file reached without a symbolic link;
- it unpickles with no global names at all (only str, int, float, bool, None, tuples, lists
  and dicts), so even a forged file cannot run code; dates are stored as ordinals.

Writes go to a temporary file in the same directory that is then renamed over the old one
(``os.replace``), so a reader sees the old file or the new one. A cache directory that is
missing, unwritable or on a read-only file system just means no cache.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import io
import os
import re
import stat
import sys
from collections import deque
from dataclasses import fields
from itertools import repeat
from operator import attrgetter, itemgetter
from pathlib import Path

from ._paths import cache_switched_off, folder_from_env
from ._writes import sweep_temps  # a killed writer's temp file: one rule for every writer

TEMP_PREFIX = ".tmp-"  # a write's temp file in the cache folder: .tmp-PID-HEX
# exactly the names _write_atomic and cache_file make: a shared GPUPLAN_CACHE_DIR is not all ours
_TEMP_NAME = re.compile(r"\.tmp-[1-9][0-9]*-[0-9a-f]{8}\Z")
_CACHE_NAME = re.compile(r"catalog-[0-9a-f]{24}\.bin\Z")


def is_temp(name: str) -> bool:
    """Whether ``name`` is a cache write's temp file (``sweep_temps``)."""
    return _TEMP_NAME.match(name) is not None

FORMAT = b"gpuplan-catalog-cache 1\n"
CATALOG_FILES = ("accelerators.csv", "instance_types.csv", "offers.csv", "meta.json")
MAX_SOURCE_BYTES = 256 * 2**20  # as _csvio.MAX_TABLE_BYTES: a larger file is not a catalog
MAX_CACHE_BYTES = 512 * 2**20
# The modules whose code decides what a parsed catalog is: a change to any of them is a new
# cache key (their source is hashed, so a development checkout never reads a stale cache).
CODE_MODULES = ("_records", "_csvio", "_load", "_older", "_clouds", "_cache", "_meta",
                "_checks", "_anomalies", "sources/_names")
_SCALARS = (str, int, float, bool, type(None))


def enabled() -> bool:
    return not cache_switched_off()


def cache_dir() -> Path:
    """Where the catalog cache lives (see the module docstring); nothing is created here."""
    if os.environ.get("GPUPLAN_CACHE_DIR"):
        return folder_from_env("GPUPLAN_CACHE_DIR", "XDG_CACHE_HOME", (".cache",))[0]
    return folder_from_env("GPUPLAN_HOME", "XDG_CACHE_HOME", (".cache",), below="cache")[0]


# -- reading the sources -------------------------------------------------------------------

def _read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``path`` (at most ``limit``), None for anything else —
    the loader proper then reads the file and says what is wrong with it."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(path, flags)
        try:
            st = os.fstat(fd)  # the file opened, which a rename may have swapped
            if not stat.S_ISREG(st.st_mode):
                return None
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = _read_upto(handle, st.st_size, limit)
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None
    return data if len(data) <= limit else None


def _code_files() -> list[Path]:
    package = Path(__file__).resolve().parent
    return [package / f"{module}.py" for module in CODE_MODULES]


def source_key(path: Path, packaged_dir: Path) -> bytes | None:
    """The SHA-256 that a cache of the catalog in ``path`` must carry, or None when a file is
    missing or odd (no cache: the loader reports the problem)."""
    digest = hashlib.sha256(FORMAT)
    digest.update(f"{sys.version_info[0]}.{sys.version_info[1]}\n".encode())
    sources = [path / f for f in CATALOG_FILES]
    if Path(path).resolve() != packaged_dir:
        sources.append(packaged_dir / "accelerators.csv")
    for source in (*sources, *_code_files()):
        data = _read_regular(source, MAX_SOURCE_BYTES)
        if data is None:
            return None
        digest.update(f"{source.name}:{len(data)}\n".encode())
        digest.update(hashlib.sha256(data).digest())
    return digest.digest()


# -- the cache file ------------------------------------------------------------------------

def cache_file(path: Path) -> Path:
    """The cache file of the catalog directory ``path``."""
    name = hashlib.sha256(os.fsencode(str(path))).hexdigest()[:24]
    return cache_dir() / f"catalog-{name}.bin"


def _owned_privately(st: os.stat_result) -> bool:
    """Ours alone: owned by this user and writable by nobody else (always true off POSIX)."""
    if not hasattr(os, "getuid"):
        return True
    return st.st_uid == os.getuid() and not st.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _usable_dir(directory: Path) -> bool:
    try:
        st = os.stat(directory)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and _owned_privately(st)


def _read_upto(handle, size: int, limit: int) -> bytes:
    """The file's bytes (one past ``limit`` where it has more), read by its own size: read(n)
    sets n bytes aside (512 MiB for a 192-byte cache file: a MemoryError under a limit the
    plan fits in). A file that grew since the stat reads short: its checksum refuses it."""
    return handle.read(min(size, limit) + 1)


def _read_cache_file(file: Path) -> bytes | None:
    if not _usable_dir(file.parent):
        return None
    _sweep_once(file.parent)
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(file, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or not _owned_privately(st)
                or st.st_size > MAX_CACHE_BYTES):
            return None
        with os.fdopen(os.dup(fd), "rb") as handle:
            data = _read_upto(handle, st.st_size, MAX_CACHE_BYTES)
    except (OSError, ValueError):
        return None
    finally:
        os.close(fd)
    return data if len(data) <= MAX_CACHE_BYTES else None


def _frame(key: bytes, source: Path, payload: bytes, fmt: bytes = FORMAT) -> bytes:
    where = os.fsencode(str(source))
    return b"".join((fmt, key, hashlib.sha256(payload).digest(),
                     len(where).to_bytes(4, "big"), where, payload))


def _unframe(data: bytes, key: bytes, fmt: bytes = FORMAT) -> bytes | None:
    """The payload of a cache file (of format ``fmt``) made for ``key``, None if it is not
    one, is for another key, or is damaged."""
    head = len(fmt)
    if not data.startswith(fmt) or data[head:head + 32] != key:
        return None
    digest = data[head + 32:head + 64]
    size = int.from_bytes(data[head + 64:head + 68], "big")
    payload = data[head + 68 + size:]
    return payload if hashlib.sha256(payload).digest() == digest else None


def _source_of(data: bytes) -> str | None:
    """The catalog directory a cache file was made for (for pruning)."""
    head = len(FORMAT) + 64
    size = int.from_bytes(data[head:head + 4], "big")
    where = data[head + 4:head + 4 + size]
    return os.fsdecode(where) if data.startswith(FORMAT) and len(where) == size else None


# -- records to plain data and back ---------------------------------------------------------

def _plain(value, memo: dict):
    """``value`` with equal strings and tuples of strings shared (a smaller, faster pickle);
    raises TypeError for anything that is not plain data. Numbers are never shared:
    0.0 == -0.0 and 1 == 1.0 == True."""
    kind = type(value)
    if kind is str:
        return memo.setdefault(value, value)
    if kind is tuple:
        if all(type(v) is str for v in value):
            shared = memo.get(value)
            if shared is None:
                shared = memo.setdefault(value, tuple(memo.setdefault(v, v) for v in value))
            return shared
        return tuple(_plain(v, memo) for v in value)
    if kind in _SCALARS:
        return value
    raise TypeError(kind.__name__)


def _columns(records, record: type, memo: dict) -> tuple:
    names = tuple(f.name for f in fields(record))
    get = attrgetter(*names)
    rows = map(get, records) if len(names) > 1 else ((get(r),) for r in records)
    columns = []
    for name, values in zip(names, zip(*rows, strict=True) if records else (), strict=True):
        kinds = set(map(type, values))
        if _dt.date in kinds:
            if kinds == {_dt.date}:
                columns.append(("date", tuple(map(_dt.date.toordinal, values))))
            elif kinds == {_dt.date, type(None)}:
                columns.append(("date", tuple(None if v is None else v.toordinal()
                                              for v in values)))
            else:
                raise TypeError(name)
        elif kinds <= {str}:
            columns.append(("plain", tuple(map(memo.setdefault, values, values))))
        elif kinds <= {int, float, bool, type(None)}:
            columns.append(("plain", values))
        else:
            columns.append(("plain", tuple(_plain(v, memo) for v in values)))
    return (record.__name__, names, len(records), tuple(columns))


def _records(table, record: type, rows: list[int] | None = None) -> tuple:
    """Rebuild the records of ``record`` from ``_columns`` output (only those at ``rows``,
    in that order, when given), without re-validating them (they were validated when the
    cache was written): each slot is set directly."""
    name, names, count, columns = table
    if (name != record.__name__ or names != tuple(f.name for f in fields(record))
            or len(columns) != len(names)):
        raise ValueError("record layout changed")
    if rows is not None and rows and not 0 <= min(rows) <= max(rows) < count:
        raise ValueError("row out of range")
    pick = None if rows is None else (lambda values: ()) if not rows else (
        (lambda values: (values[rows[0]],)) if len(rows) == 1 else itemgetter(*rows))
    objects = list(map(object.__new__, repeat(record, count if rows is None else len(rows))))
    for field_name, (kind, values) in zip(names, columns, strict=True):
        if len(values) != count:
            raise ValueError("column length")
        if pick is not None:
            values = pick(values)
        if kind == "date":
            dates = {o: _dt.date.fromordinal(o) for o in set(values) if o is not None}
            dates[None] = None
            values = map(dates.__getitem__, values)
        elif kind != "plain":
            raise ValueError("column kind")
        setter = record.__dict__[field_name].__set__  # the slot's member descriptor
        deque(map(setter, objects, values), maxlen=0)
    return tuple(objects)


def _no_globals_unpickler():
    """(an Unpickler class that refuses every global name, the errors a damaged or forged
    payload raises while it or the caller reads it): a cache file is plain data or a miss."""
    import pickle

    class NoGlobals(pickle.Unpickler):
        def find_class(self, module, name):  # plain data only: nothing to import or call
            raise pickle.UnpicklingError(f"global {module}.{name} in a gpuplan cache file")

    return NoGlobals, (pickle.UnpicklingError, ValueError, TypeError, KeyError, AttributeError,
                       EOFError, IndexError, MemoryError, OverflowError, RecursionError)


# -- the two entry points ---------------------------------------------------------------------

def load(path: Path, key: bytes, record_types: tuple[type, type, type]):
    """(meta, accelerators, instance types, offers) from the cache of ``path`` made for
    ``key``, or None (no cache, another key, damaged, not ours). The offers come as
    ``LazyOffers``: built on request (most of the work; `estimate` never needs them, `plan`
    only those of its pricing models)."""
    data = _read_cache_file(cache_file(path))
    payload = _unframe(data, key) if data is not None else None
    if payload is None:
        return None
    unpickler, errors = _no_globals_unpickler()
    accelerator, instance_type, offer = record_types
    try:
        meta, accelerators, instance_types, offers_blob = unpickler(io.BytesIO(payload)).load()
        if not isinstance(meta, dict) or type(offers_blob) is not bytes:
            return None
        accelerators = _records(accelerators, accelerator)
        instance_types = _records(instance_types, instance_type)
    except errors:
        return None

    return meta, accelerators, instance_types, LazyOffers(
        lambda: unpickler(io.BytesIO(offers_blob)).load(), offer, errors)


class LazyOffers:
    """The offers of a cache hit, built when asked for: all of them, or those at some rows
    (chosen from the columns: a plan builds only the offers of the GPUs it can time at its
    pricing models, a ninth of the packaged 14,000), and a column without building any.
    Each method raises ValueError if the cache cannot give it (the caller then reads the
    files)."""

    def __init__(self, table, record: type, errors: tuple) -> None:
        self._load, self._record, self._errors, self._table = table, record, errors, None

    def _call(self, what):
        try:
            if self._table is None:
                self._table = self._load()
            return what(self._table)
        except self._errors as exc:
            raise ValueError(f"catalog cache: {type(exc).__name__}") from None

    def build(self) -> tuple:
        """Every offer, in catalog order."""
        return self._call(lambda table: _records(table, self._record))

    def build_rows(self, rows: list[int]) -> tuple:
        """The offers at ``rows`` (catalog positions), in that order."""
        return self._call(lambda table: _records(table, self._record, rows))

    def column(self, name: str) -> tuple:
        """One field of every offer, in catalog order."""
        return self._call(lambda table: _column(table, name))


def _column(table, name: str) -> tuple:
    _, names, count, columns = table
    kind, values = columns[names.index(name)]
    if kind != "plain" or len(values) != count:
        raise ValueError("column kind")
    return values


def store(path: Path, key: bytes, meta: dict, tables: tuple) -> None:
    """Write the cache of ``path`` for ``key`` (``tables``: accelerators, instance types,
    offers). Best effort: any failure leaves no cache and no error."""
    import pickle

    protocol = pickle.HIGHEST_PROTOCOL
    try:
        if not all(tables):
            return  # an empty table is not worth caching (and has no record type to check)
        memo: dict = {}
        accelerators, instance_types, offers = (_columns(records, type(records[0]), memo)
                                                for records in tables)
        payload = pickle.dumps((meta, accelerators, instance_types,
                                pickle.dumps(offers, protocol=protocol)), protocol=protocol)
    except Exception:  # unusual data is simply not cached
        return
    file = cache_file(path)
    if _write_cache_file(file, _frame(key, path, payload)):
        _prune(file.parent, keep=file)


def _write_cache_file(file: Path, data: bytes) -> bool:
    """Write ``data`` as ``file`` in the cache directory (created private if missing), by
    rename; False when the directory cannot be made or is not the user's alone (nothing
    written). Any other failure just leaves no file."""
    directory = file.parent
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return False
    if not _usable_dir(directory):
        return False
    _write_atomic(file, data)
    return True


def _write_atomic(file: Path, data: bytes) -> None:
    import secrets

    tmp = file.with_name(f"{TEMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}")
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(tmp, flags, 0o600)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, file)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


_SWEPT: set[str] = set()  # cache folders this process has swept of crash leftovers


def _sweep_once(directory: Path) -> None:
    """Remove a killed writer's stale temp files from ``directory``, once per process: only
    writes pruned them, and a warm cache is never written, so a SIGTERM's leftover stayed."""
    if str(directory) not in _SWEPT:
        _SWEPT.add(str(directory))
        sweep_temps(directory, is_temp)


def _prune(directory: Path, keep: Path) -> None:
    """Remove cache files of catalog directories that no longer exist (refreshed catalogs
    are pruned by the store) and temporary files a crash left behind."""
    sweep_temps(directory, is_temp)
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return
    for entry in entries:
        try:
            if (not _CACHE_NAME.match(entry.name) or entry.path == str(keep)
                    or not entry.is_file(follow_symlinks=False)):
                continue
            with open(entry.path, "rb") as handle:
                head = handle.read(len(FORMAT) + 68 + 4096)
            source = _source_of(head)
            if source is not None and not os.path.isdir(source):
                os.unlink(entry.path)
        except OSError:
            continue


__all__ = ["CATALOG_FILES", "cache_dir", "cache_file", "enabled", "load", "source_key",
           "store"]
