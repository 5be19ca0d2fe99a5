"""Small derived results kept between runs in gpuplan's per-user cache directory.

The catalog cache (``_cache``) keeps parsed catalogs; other units keep what is costly to
recompute and cheap to key — the planner keeps its performance-model evaluations there
(``planner.search``) — through these two calls, with the same safety rules:

- one file per entry, ``<prefix>-<name>.bin``, in ``_cache.cache_dir()``; nothing is read or
  written when ``GPUPLAN_NO_CACHE=1``;
- a file is used only when its key (a SHA-256 the caller computes over everything the value
  depends on, its own code included) and its payload's SHA-256 match, when it and its
  directory are the user's alone, and when it unpickles with no global names (plain data:
  str, bytes, int, float, bool, None, tuples, lists, dicts) — else it is a miss, never an
  error;
- a write goes to a temporary file that is renamed over the old one; any failure (a full
  disk, a read-only directory) just means no cache. Each prefix is kept under a size budget:
  on its first write in a process and after every eighth of the budget written since, its
  oldest files (by modification time) are removed until the rest fit.
"""

from __future__ import annotations

import io
import os
import re

from . import _cache
from ._writes import sweep_temps

BLOB_FORMAT = b"gpuplan-cache-blob 1\n"
_NAME = re.compile(r"[a-z]+-[0-9a-f]{16,64}\Z")
_WRITTEN: dict[str, int] = {}  # bytes written per prefix since this process last pruned it


def _file(prefix: str, name: str):
    stem = f"{prefix}-{name}"
    if not _NAME.match(stem):
        raise ValueError(f"cache entry name {stem!r}: a lower-case prefix and a hex name")
    return _cache.cache_dir() / f"{stem}.bin"


def read_cached(prefix: str, name: str, key: bytes):
    """The plain value stored as ``prefix``/``name`` for ``key``, or None (no cache,
    disabled, another key, damaged, not the user's, not plain data)."""
    if not _cache.enabled():
        return None
    data = _cache._read_cache_file(_file(prefix, name))
    payload = _cache._unframe(data, key, BLOB_FORMAT) if data is not None else None
    if payload is None:
        return None
    unpickler, errors = _cache._no_globals_unpickler()
    try:
        return unpickler(io.BytesIO(payload)).load()
    except errors:
        return None


def write_cached(prefix: str, name: str, key: bytes, value, *, budget_bytes: int) -> None:
    """Store the plain ``value`` as ``prefix``/``name`` for ``key``; best effort (any failure
    leaves no entry and no error). Keeps the prefix's files within ``budget_bytes``."""
    import pickle

    if not _cache.enabled():
        return
    file = _file(prefix, name)
    try:
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # not plain data: simply not kept
        return
    if len(payload) > budget_bytes // 4:  # one entry may not crowd out the rest
        return
    if not _cache._write_cache_file(file, _cache._frame(key, file, payload, BLOB_FORMAT)):
        return
    # the budget is enforced on the first write of a process and after every eighth of it
    # written since (a long-lived app process keeps writing)
    written = _WRITTEN.get(prefix, budget_bytes) + len(payload)
    if written >= budget_bytes // 8:
        _prune(file.parent, prefix, budget_bytes)
        written = 0
    _WRITTEN[prefix] = written


def _prune(directory, prefix: str, budget_bytes: int) -> None:
    """Remove the oldest ``prefix`` files until the rest hold at most ``budget_bytes``, and
    temporary files a killed writer left (older than ``STALE_TEMP_SECONDS``)."""
    sweep_temps(directory, _cache.is_temp)
    try:
        found = list(os.scandir(directory))
    except OSError:
        return
    try:
        # only the names _file makes (GPUPLAN_CACHE_DIR may be shared: eval-results.csv
        # there is not ours)
        own = re.compile(re.escape(prefix) + r"-[0-9a-f]{16,64}\.bin\Z")
        entries = [e for e in found
                   if own.match(e.name) and e.is_file(follow_symlinks=False)]
        sized = sorted(((e.stat(follow_symlinks=False), e.path) for e in entries),
                       key=lambda item: item[0].st_mtime, reverse=True)
    except OSError:
        return
    total = 0
    for st, path in sized:
        total += st.st_size
        if total > budget_bytes:
            try:
                os.unlink(path)
            except OSError:
                continue
