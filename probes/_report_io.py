"""The probe report as JSON: serialise, write atomically, read and validate (torch-free).

`parse_report` (probes._report_parse) builds the records of probes._schema from a decoded JSON
object, naming every missing or mistyped field in a one-line ReportError ending "To fix: ...".

Files as gpuplan treats every file a user names (issue 16), without importing catalog:
`gpuplan launch` copies this package alone to the nodes. So catalog._files/_writes' rules are
kept here in short (a test pins that both refuse the same places):

    load_report            a regular file only (a FIFO blocks, /dev/zero never ends), at most
                           MAX_REPORT_BYTES read whatever its size claims, JSON without
                           NaN/Infinity, 400-digit numbers or nesting that overflows the parser
    check_report_path      not empty, not a directory, device, FIFO or socket (nor a symlink
                           to one), not the kernel's own files (/proc, /sys, /dev: by place and
                           file-system type, root passes access()), a creatable folder
    write_report_atomic    check_report_path, a temporary file in the same folder, fsync,
                           os.replace, folder fsync; the temporary file removed on any failure
                           (and a killed writer's, once stale); a new file gets the user's umask

Write failures are ReportWriteError (a ProbesError and an OSError), read failures ReportError.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import secrets
import stat
import time
from pathlib import Path

from probes._errors import ReportWriteError
from probes._json_rules import JSON_HOOKS
from probes._replace import refuse_unless_report
from probes._report_parse import FIX_REPORT as _FIX_REPORT
from probes._report_parse import parse_report
from probes._schema import ProbeReport, ReportError

_FIX_OUT = "To fix: give the path of a file to create or replace, e.g. --out report.json."
MAX_REPORT_BYTES = 16 * 2**20  # ~9 KB for 8 GPUs, ~0.6 MB for 1,024 ranks (as probe ingest)
STALE_TEMP_SECONDS = 3600  # an older temp file is a killed writer's: a live write takes seconds


def report_to_json(report: ProbeReport) -> str:
    """Serialise a report; tuples become lists, the output is stable (sorted keys, indent 2)."""
    return json.dumps(dataclasses.asdict(report), indent=2, sort_keys=True, allow_nan=False)


# --- where a report may go -----------------------------------------------------------------

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
          (stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    return next((words for test, words in _KINDS if test(mode)), "not a regular file")


def _reason(exc: OSError) -> str:
    reasons = {errno.ENOENT: "no such file", errno.EACCES: "permission denied",
               errno.EPERM: "permission denied", errno.ENOSPC: "disk full",
               errno.EFBIG: "the file is larger than this process's file-size limit, ulimit -f",
               errno.EDQUOT: "disk quota exceeded", errno.EROFS: "read-only file system",
               errno.EISDIR: "is a directory", errno.ENAMETOOLONG: "file name too long",
               errno.ENOTDIR: "a part of the path is not a directory"}
    return reasons.get(exc.errno, "") or exc.strerror or str(exc) or type(exc).__name__


# The kernel's own files, as catalog._files.system_location has them (see the module doc).
_SYSTEM_TREES = {"/proc": "processes and kernel settings", "/sys": "devices and driver settings",
                 "/dev": "device nodes"}
_SYSTEM_TREE_EXCEPTIONS = ("/dev/shm",)  # POSIX shared memory: an ordinary tmpfs
_PSEUDO_FILESYSTEMS = frozenset(
    "autofs binfmt_misc bpf cgroup cgroup2 configfs debugfs devpts devtmpfs efivarfs fusectl "
    "hugetlbfs mqueue nsfs proc pstore rpc_pipefs securityfs selinuxfs sysfs tracefs".split())
MOUNTINFO = "/proc/self/mountinfo"
_OCTAL = re.compile(r"\\([0-7]{3})")  # a space in a mount point is written \040


def _under(path: str, tree: str) -> bool:
    return tree == "/" or path == tree or path.startswith(tree.rstrip("/") + "/")


def _filesystem_type(real: str) -> str | None:
    try:
        with open(MOUNTINFO, "rb") as handle:
            lines = handle.read(4 * 2**20).decode("utf-8", "replace").splitlines()
    except OSError:
        return None  # not Linux: the trees are the rule
    best, best_len = None, -1
    for fields in (line.split(" ") for line in lines):
        # id parent dev root MOUNT-POINT options [optional fields…] - TYPE source options
        if "-" not in fields[6:-1]:
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        if _under(real, point) and len(point) >= best_len:  # ">=": the later is on top
            best, best_len = fields[fields.index("-", 6) + 1], len(point)
    return best


def _system_location(path: str) -> str | None:
    try:
        real = os.path.realpath(path)  # /dev/stdout redirected to a file is that file
    except (OSError, ValueError):
        real = os.path.abspath(path)
    tree = next((t for t in _SYSTEM_TREES if _under(real, t)), None)
    if tree and not any(_under(real, e) for e in _SYSTEM_TREE_EXCEPTIONS):
        return f"is under {tree} ({_SYSTEM_TREES[tree]})"
    fstype = _filesystem_type(real)
    return f"is on a {fstype} file system" if fstype in _PSEUDO_FILESYSTEMS else None


def check_report_path(path: str | os.PathLike[str], *, what: str = "probe report",
                      try_create: bool = False) -> Path:
    """The file a report written to ``path`` replaces (an earlier report only), after refusing
    what it must not. A symbolic link is followed (its file replaced, the link kept); missing
    folders are allowed (the writer creates them) under a writable directory. ``try_create``:
    also create and remove a file there — root passes access(), only a real attempt finds a
    read-only mount — as the command line does before minutes of measuring. Raises
    ReportWriteError."""
    raw = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    if bad := (f"expected a file path, got {type(raw).__name__}" if not isinstance(raw, str)
               else "the path is empty" if not raw.strip()
               else "the path contains a NUL character" if "\x00" in raw else None):
        raise ReportWriteError(f"{what}: {bad}. {_FIX_OUT}")
    try:
        mode: int | None = os.stat(raw).st_mode  # follows a symlink to what it names
    except (FileNotFoundError, NotADirectoryError):
        mode = None
    except OSError as exc:
        raise ReportWriteError(f"{what} {raw}: cannot use it ({_reason(exc)}). "
                               f"{_FIX_OUT}") from None
    kind = _kind(mode) if mode is not None else None
    if kind not in (None, "a directory"):  # a device, FIFO or socket: say exactly which
        raise ReportWriteError(f"{what} {raw}: is {kind}; refusing to replace it. {_FIX_OUT}")
    where = _system_location(raw)
    if where is not None:
        raise ReportWriteError(f"{what} {raw}: {where}, the kernel's own files; refusing to "
                               f"write there. {_FIX_OUT}")
    if kind == "a directory":
        raise ReportWriteError(f"{what} {raw}: is a directory; refusing to replace it. To fix: "
                               "give a file name inside that directory, e.g. "
                               f"{os.path.join(raw, 'report.json')}.")
    target = Path(os.path.realpath(raw)) if os.path.islink(raw) else Path(raw)
    if mode is not None and not os.access(target, os.W_OK):
        raise ReportWriteError(f"{what} {target}: the file is read-only. To fix: make it "
                               f"writable (chmod u+w {target}) or choose another path.")
    if mode is not None:  # an earlier report, nothing else (_replace)
        refuse_unless_report(target, what=what, max_bytes=MAX_REPORT_BYTES)
    folder = Path(os.path.abspath(target)).parent
    while not os.path.lexists(folder):  # write_report_atomic creates the missing folders
        folder = folder.parent
    if not folder.is_dir():
        raise ReportWriteError(f"{what} {raw}: {folder} is not a directory. {_FIX_OUT}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ReportWriteError(f"{what} {raw}: the directory {folder} is read-only for you. "
                               "To fix: choose a writable location, e.g. --out report.json.")
    if try_create:
        trial = folder / f".probes-write-check-{secrets.token_hex(6)}"
        try:
            os.close(os.open(trial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(trial)
        except OSError as exc:
            raise ReportWriteError(f"{what} {raw}: cannot create a file in {folder} "
                                   f"({_reason(exc)}). To fix: choose a writable location, "
                                   "e.g. --out report.json.") from None
    return target


def write_report_atomic(report: ProbeReport, path: str | os.PathLike[str]) -> Path:
    """Write the report so that ``path`` holds either the old file or the whole new one.

    Refuses (ReportWriteError, before writing anything) a directory, device, FIFO or socket at
    ``path`` or behind a symlink there, and the kernel's own files; creates missing folders;
    a failure at any step leaves the old file and no temporary file.
    """
    target = check_report_path(path)
    data = (report_to_json(report) + "\n").encode("utf-8")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        existing = os.stat(target) if os.path.lexists(target) else None
    except OSError as exc:
        raise _write_error(target, exc) from exc
    fd, tmp = _create_temp(target)
    try:
        try:
            if existing is not None:  # a replaced report keeps its mode
                os.fchmod(fd, stat.S_IMODE(existing.st_mode))
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        # Looked at again before the rename: a device or FIFO that appeared meanwhile neither.
        try:
            kind = _kind(os.stat(target).st_mode)
        except FileNotFoundError:
            kind = None
        if kind is not None:
            raise ReportWriteError(f"probe report {target}: is {kind}; refusing to replace it. "
                                   f"{_FIX_OUT}")
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, ReportWriteError):
            raise _write_error(target, exc) from exc
        raise
    _fsync_directory(target.parent)
    return target


def _write_error(target: Path, exc: OSError) -> ReportWriteError:
    # catalog._writes.write_fix's rule: no chmod on a read-only mount, no room lifts ulimit -f
    other, e = "choose another location with --out", exc.errno
    fix = ("raise the file-size limit (ulimit -f unlimited) and run again" if e == errno.EFBIG
           else "choose a path on a writable file system with --out" if e == errno.EROFS
           else f"make {target.parent} writable (chmod u+w {target.parent}), or {other}"
           if e in (errno.EACCES, errno.EPERM) else f"free space, or {other}")
    return ReportWriteError(f"probe report {target}: cannot write it ({_reason(exc)}). To fix: "
                            f"{fix}.")


def _create_temp(target: Path) -> tuple[int, str]:
    # First the temp files a killed writer left for this target, once STALE_TEMP_SECONDS old:
    # its names only, none when shortened below (not this target's alone then); best effort.
    own = re.compile(re.escape(f".{target.name}.") + r"[0-9a-f]{12}\.tmp")
    with contextlib.suppress(OSError), os.scandir(target.parent) as entries:
        for e in (e for e in entries if len(target.name) <= 120 and own.fullmatch(e.name)):
            if e.is_file(follow_symlinks=False) and time.time() - e.stat(
                    follow_symlinks=False).st_mtime > STALE_TEMP_SECONDS:
                os.unlink(e.path)
    # Not tempfile.mkstemp (files 0600): os.open(..., 0o666) lets the kernel apply the umask.
    for _ in range(16):
        tmp = str(target.parent / f".{target.name[:120]}.{secrets.token_hex(6)}.tmp")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise _write_error(target, exc) from exc
    raise ReportWriteError(f"probe report {target}: cannot create a temporary file in "
                           f"{target.parent}. To fix: remove stale .*.tmp files there.")


def _fsync_directory(folder: Path) -> None:
    # Makes the rename durable; best effort (not every file system allows opening a folder).
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


# --- reading -------------------------------------------------------------------------------

def read_report_bytes(path: str | os.PathLike[str], *,
                      max_bytes: int = MAX_REPORT_BYTES) -> bytes:
    """The bytes of the report file ``path``: a regular file, at most ``max_bytes``.

    The file is looked at before it is opened (opening a FIFO blocks, /dev/zero never ends)
    and opened non-blocking (a FIFO swapped in after the look must not hang either); at most
    ``max_bytes + 1`` bytes are read whatever its size claims (/proc files say 0).
    """
    raw = os.fspath(path) if isinstance(path, str | os.PathLike) else path

    def refused(why: str) -> ReportError:
        return ReportError(f"cannot read probe report {raw!r}: {why}. To fix: check the path "
                           "and that the file is a probe report.")

    if not isinstance(raw, str) or not raw.strip() or "\x00" in raw:
        raise refused("not a file path")
    too_big = refused(f"it is larger than the {max_bytes / 2**20:g} MiB a report can be")
    try:
        st = os.stat(raw)
        if _kind(st.st_mode) is not None:
            raise refused(f"it is {_kind(st.st_mode)}, not a report file")
        if st.st_size > max_bytes:
            raise too_big
        fd = os.open(raw, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise refused(_reason(exc)) from None
    chunks: list[bytes] = []
    try:
        if _kind(os.fstat(fd).st_mode) is not None:
            raise refused(f"it is {_kind(os.fstat(fd).st_mode)}, not a report file")
        remaining = max_bytes + 1
        while remaining > 0 and (chunk := os.read(fd, min(remaining, 1 << 20))):
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise refused(_reason(exc)) from None
    finally:
        os.close(fd)
    if sum(len(c) for c in chunks) > max_bytes:
        raise too_big
    return b"".join(chunks)


def load_report(path: str | os.PathLike[str]) -> ProbeReport:
    """Read and validate a report file; raises ReportError with a one-line "To fix" message."""
    return report_from_bytes(read_report_bytes(path), source=str(path))


def _utf16_or_32(data: bytes) -> int | None:
    """16 or 32 for text in that UTF (a byte-order mark, or ASCII with one or three NULs to each
    letter), not a binary's scattered NULs: catalog's ``_text.utf_width`` (probes run without
    catalog; a test pins both)."""
    if data.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return 32
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return 16
    head = data[:64]
    if len(head) >= 16 and any(all(head[k::4].count(0) == len(head[k::4]) for k in nuls)
                               and head[letter::4].count(0) == 0
                               for letter, nuls in ((0, (1, 2, 3)), (3, (0, 1, 2)))):
        return 32
    even, odd = head[0::2], head[1::2]
    return 16 if len(head) >= 8 and any(a.count(0) >= 0.8 * len(a) and b.count(0) == 0
                                        for a, b in ((even, odd), (odd, even))) else None


def report_from_bytes(raw: bytes, *, source: str = "probe report") -> ProbeReport:
    """Validate a report given as the bytes of its file (an upload, a stored copy); ``source``
    names it in messages."""
    if width := _utf16_or_32(raw):
        # a BOM, or NULs between the letters: an editor re-saved the report as UTF-16 or -32
        raise ReportError(f"probe report {source!r} is UTF-{width} text, not the UTF-8 JSON the "
                          "probes write. To fix: use the file the probes wrote, or save this "
                          "one as UTF-8")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportError(f"probe report {source!r} is not UTF-8 text (byte 0x"
                          f"{raw[exc.start]:02x} at offset {exc.start}): not a file the probes "
                          f"wrote. {_FIX_REPORT}") from None
    try:
        data = json.loads(text.removeprefix("\ufeff"), **JSON_HOOKS)  # a BOM is not damage
    except json.JSONDecodeError as exc:
        raise ReportError(f"probe report {source!r} is not valid JSON "
                          f"(line {exc.lineno}, column {exc.colno}: {exc.msg}). "
                          f"{_FIX_REPORT}") from exc
    except ValueError as exc:  # from the hooks: a number no report holds, a key twice
        raise ReportError(f"probe report {source!r} is not valid JSON as a report ({exc}). "
                          f"{_FIX_REPORT}") from None
    except RecursionError:  # json's parser is recursive; a report is a few levels deep
        raise ReportError(f"probe report {source!r} is not a report: its JSON nests too "
                          f"deeply. {_FIX_REPORT}") from None
    return parse_report(data, source=source)
