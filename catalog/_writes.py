"""Writing the user's files safely (reports, task files, probe reports' destinations):

    check_output_path   refuses '', directories, devices, FIFOs, sockets, a missing or read-only
                        directory
    make_directory      creates gpuplan's own directories, saying what is in the way
    check_can_create    a folder where a work folder and a file can be created (before a long
                        job, not after)
    check_directory_place  the same check for a reader (a missing directory is fine)
    write_bytes_atomic  temp file in the target's directory, fsync, rename: readers see the old
    write_text_atomic   file or the new one; new files get the user's umask, not 0600; the
                        target's own temp files a killed writer left are removed first
    write_fix           the fix for a write's errno (the one mapping: disk full, ulimit -f,
                        read-only mount, permissions)
    remove_if_stale     the one rule for a killed writer's temp file (STALE_TEMP_SECONDS),
                        shared with the cache's writer

All failures are ``CatalogFileError`` (a ``GpuplanError``), whose message ends "To fix: …".
"""

from __future__ import annotations

import errno
import hashlib
import os
import shlex
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from ._files import _as_path, _describe_mode, _fail, _os_reason
from ._paths import is_user_data

# A temp file older than this is a killed writer's (SIGKILL, power loss: no cleanup ran). A
# live write takes seconds (fsync of a few MiB), so an hour never removes the temp file of a
# concurrent writer still on its way to the rename, even on a slow network disk.
STALE_TEMP_SECONDS = 3600
_TEMP_HEX = 12  # random hex digits in a temp file's name
_TEMP_EXTRA = len("..") + _TEMP_HEX + len(".tmp")  # what a temp name adds to the target's
_NAME_MAX = 255  # bytes in one file name (Linux, macOS)


def shell_word(path: str | os.PathLike[str]) -> str:
    """A path as one word of a command to paste: quoted for the shell (``$(…)``, spaces and
    ``;`` would run or split) and, when it starts with '-', with ``./`` so the command does not
    read it as an option."""
    text = str(path)
    return shlex.quote(f"./{text}" if text.startswith("-") else text)


def input_clash(out_path: str | os.PathLike[str] | None,
                inputs: Mapping[str, str | os.PathLike[str] | None]) -> str | None:
    """Which of ``inputs`` (description → path) is the file ``out_path`` would replace, or
    None: an output must never overwrite what the command reads (`plan --config X.json
    --emit-out X.json` replaced the config, exit 0). Same file by inode, so a link or another
    spelling counts; an input that does not exist is its own option's error."""
    if out_path is None or not os.path.exists(out_path):
        return None
    for name, value in inputs.items():
        try:
            if value is not None and os.path.samefile(out_path, os.path.expanduser(value)):
                return name
        except OSError:
            continue
    return None


def _open_descriptor(path: Path) -> bool:
    """Whether ``path`` leads through /proc (/dev/stdout → /proc/self/fd/1): realpath would
    go on to the file or pipe behind the descriptor and make it look like any other path."""
    current = os.path.abspath(path)
    for _ in range(40):  # the kernel's own limit on links followed
        current = os.path.join(os.path.realpath(os.path.dirname(current)),
                               os.path.basename(current))
        if current.startswith("/proc/"):
            return True
        try:
            target = os.readlink(current)
        except OSError:  # not a link (or not there): an ordinary path
            return False
        current = os.path.normpath(os.path.join(os.path.dirname(current), target))
    return False


def check_output_path(path: str | os.PathLike[str], *, what: str,
                      replace_read_only: bool = False) -> Path:
    """The path to write ``what`` to, after refusing what cannot (or must not) be replaced.

    A symbolic link is followed, so the file it points to is replaced, not the link. A
    read-only file is refused (the user made it so) unless ``replace_read_only``: gpuplan's
    own files, replaced by a rename, which needs only the folder writable.
    """
    fix = "give the path of a file to create or replace."
    p = _as_path(path, what=what, fix=fix)
    # Path() drops the slash ("x.yaml/" → x.yaml) and a last "." ("x/." → x)
    text = os.fspath(path)
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in text):  # control characters: "wrote
        # …" and the commands printed with the name would act on the terminal (ESC ] …)
        raise _fail(f"{what} {text!r}: the name contains control characters. To fix: give a "
                    "name without them.")
    if text.endswith((os.sep, "/")):
        raise _fail(f"{what} {text}: ends with '/', which names a directory. To fix: "
                    "give a file name without the trailing '/'.")
    if os.path.basename(text) in (".", ".."):
        raise _fail(f"{what} {text}: names a directory. To fix: give a file name inside it, "
                    f"e.g. {shell_word(os.path.join(text, 'report.md'))}.")
    if _open_descriptor(p):
        raise _fail(f"{what} {text}: is an open file of a process (/dev/stdout, /dev/fd/N): "
                    "the file is written whole and renamed into place, which would replace or "
                    "lose what the command prints. To fix: give the path of a file (`-` prints "
                    "to standard output where the option takes it).")
    try:
        if p.is_symlink():
            p = Path(os.path.realpath(p))
        st = os.stat(p)
    except (FileNotFoundError, NotADirectoryError):
        st = None  # the directory checks below say what is missing
    except OSError as exc:
        raise _fail(f"{what} {p}: cannot write it ({_os_reason(exc)}). To fix: "
                    + ("give shorter names (at most 255 bytes each)." if exc.errno ==
                       errno.ENAMETOOLONG else fix)) from None
    if st is not None:
        kind = _describe_mode(st.st_mode)
        if kind is not None:
            hint = "give a file name inside that directory." if kind == "a directory" else fix
            raise _fail(f"{what} {p}: is {kind}; refusing to replace it. To fix: {hint}")
        if not replace_read_only and not os.access(p, os.W_OK):
            raise _fail(f"{what} {p}: {_not_writable(p, st)}")
    parent = p.parent
    try:
        parent_st = os.stat(parent)
    except NotADirectoryError:
        raise _fail(f"{what} {p}: a part of {parent} is not a directory. To fix: {fix}") from None
    except FileNotFoundError:
        link = _dangling_link(parent)
        if link is not None:  # "mkdir -p" fails there: the link's name exists
            raise _fail(f"{what} {p}: the directory {parent} does not exist: {link} is a "
                        f"symbolic link to {os.readlink(link)}, which does not exist. To fix: "
                        "create the folder it points to, or choose another path.") from None
        raise _fail(f"{what} {p}: the directory {parent} does not exist. To fix: create it "
                    f"(mkdir -p {shell_word(parent)}) or choose another path.") from None
    except OSError as exc:
        raise _fail(f"{what} {p}: cannot use the directory {parent} ({_os_reason(exc)}). "
                    f"To fix: {fix}") from None
    if not stat.S_ISDIR(parent_st.st_mode):
        raise _fail(f"{what} {p}: {parent} is not a directory. To fix: {fix}")
    if not os.access(parent, os.W_OK | os.X_OK):
        # access() fails alike for a mode that forbids it and for a read-only mount (EROFS),
        # where chmod fails too: statvfs tells them apart
        if _read_only_mount(parent):
            raise _fail(f"{what} {p}: the directory {parent} is on a read-only file system. "
                        f"To fix: {write_fix(errno.EROFS, parent)}")
        raise _fail(f"{what} {p}: the directory {parent} is read-only for you. To fix: "
                    f"{write_fix(errno.EACCES, parent)}")
    return p


def _dangling_link(folder: Path) -> Path | None:
    """The first of ``folder`` and its parents that is a symbolic link to nothing, if any."""
    for part in (folder, *folder.parents):
        if os.path.islink(part) and not os.path.exists(part):
            return part
    return None


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): the mode is all there is
        return False


def write_fix(error: int | None, folder: str | os.PathLike[str], *,
              own: bool | None = None) -> str:
    """What fixes a write into ``folder`` that failed with errno ``error``: the text after
    "To fix: ", without the final period. The one mapping for every writer, since each cause
    needs its own fix: chmod cannot make a read-only mount writable, another folder on the
    same disk does not lift ``ulimit -f``. gpuplan's own files (``own``; by default: under
    its data folder) the user moves with GPUPLAN_HOME, not by naming another path."""
    own = is_user_data(folder) if own is None else own
    elsewhere = "set GPUPLAN_HOME to a writable folder" if own else "choose another location"
    if error == errno.EFBIG:  # a limit of this process, not of the disk: nothing to free
        return ("raise the file-size limit (ulimit -f unlimited, in the shell that runs "
                "gpuplan) and run the command again")
    if error == errno.ENOSPC:
        return f"free space on that disk, or {elsewhere}"
    if error == errno.EDQUOT:
        return f"free space within your disk quota, or {elsewhere}"
    if error == errno.EROFS:  # chmod fails there too: only another file system helps
        return ("set GPUPLAN_HOME to a folder on a writable file system" if own
                else "choose a path on a writable file system")
    if error in (errno.EACCES, errno.EPERM):
        where = shell_word(folder)
        if not _owned(folder):  # only its owner (or root) may chmod it
            return f"{elsewhere} ({where} belongs to another user)"
        return f"make {where} writable (chmod u+w {where}), or {elsewhere}"
    return elsewhere


def _owned(folder: str | os.PathLike[str]) -> bool:
    """Whether this user owns ``folder`` (True where it cannot be told: chmod may work)."""
    try:
        return _owns(os.stat(folder))
    except OSError:
        return True


def _owns(st: os.stat_result) -> bool:
    """Whether this user may chmod what ``st`` describes: its owner, or root (True where
    there are no user ids)."""
    return os.geteuid() in (0, st.st_uid) if hasattr(os, "geteuid") else True


def _not_writable(p: Path, st: os.stat_result) -> str:
    """Why the existing file ``p`` cannot be written, and the fix that can work: chmod helps
    only a file whose mode forbids it, not one on a read-only mount nor an immutable one."""
    if _read_only_mount(p):
        return f"it is on a read-only file system. To fix: {write_fix(errno.EROFS, p)}"
    if not _owns(st):
        return "the file is read-only for you and belongs to another user. To fix: choose " \
               "another path."
    if st.st_mode & stat.S_IWUSR:
        return ("it cannot be written although its mode allows it (an immutable or "
                "append-only file: see lsattr). To fix: choose another path.")
    return (f"the file is read-only. To fix: make it writable (chmod u+w {shell_word(p)}) or "
            "choose another path.")


def make_directory(path: str | os.PathLike[str], *, what: str) -> Path:
    """``path`` as a directory, created with its parents if missing; an error that says which
    part is in the way (a file where a directory must be: a mistaken GPUPLAN_HOME) or what
    the system refused."""
    p = Path(path)
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        check_directory_place(p, what=what)
        # the fix names the folder that refused: the nearest one that exists
        folder = next((q for q in p.parents if os.path.isdir(q)), p.parent)
        raise _fail(f"{what} {p}: cannot create it ({_os_reason(exc)}). To fix: "
                    f"{write_fix(exc.errno, folder, own=True)}") from None
    return p


def check_directory_place(path: str | os.PathLike[str], *, what: str) -> None:
    """Nothing but a directory stands where ``path`` or one of its parents must be (a missing
    one is fine: a reader then finds nothing); else the error ``make_directory`` gives — a
    reader of a mistaken GPUPLAN_HOME (a file, /dev/null) said "nothing stored" while a
    writer said what was in the way."""
    p = Path(path)
    blocker = next((q for q in (p, *p.parents) if q.is_symlink() and not q.exists()
                    or q.exists() and not q.is_dir()), None)
    if blocker is None:
        return
    if blocker.is_symlink() and not blocker.exists():
        kind = "a symbolic link to a missing place or to itself"
    else:
        kind = "a file" if blocker.is_file() else "a device or other special file"
    fix = "point GPUPLAN_HOME at a directory" if kind.startswith("a device") else \
        "move it away, or point GPUPLAN_HOME at a directory"  # never "move /dev/null away"
    raise _fail(f"{what} {p}: {blocker} is {kind}, not a directory. To fix: {fix}")


def check_can_create(folder: Path, *, what: str) -> Path:
    """``folder`` once a work folder and a file in it could be made there (then removed): how
    a long job learns first that its result can be written (only trying tells: access()
    passes root whatever the mode). The probe is a ``.tmp-`` folder, which stores sweep."""
    probe = folder / f".tmp-check-{os.urandom(3).hex()}"
    try:
        os.mkdir(probe)
        os.close(os.open(probe / "probe", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise _fail(f"{what} {folder}: cannot create files in it ({_os_reason(exc)}). To fix: "
                    f"{write_fix(exc.errno, folder)}") from None
    finally:
        for leftover, remove in ((probe / "probe", os.unlink), (probe, os.rmdir)):
            try:
                remove(leftover)
            except OSError:
                pass
    return folder


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes, *,
                       what: str = "output file", replace_read_only: bool = False) -> Path:
    """Write ``data`` to ``path``; readers see the old file or the new one, never half.

    A new file gets the mode ``open()`` would give it (0666 less the umask); a replaced file
    keeps its mode. ``replace_read_only``: as ``check_output_path``. Returns the path written.
    """
    target = check_output_path(path, what=what, replace_read_only=replace_read_only)
    try:
        existing_mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        existing_mode = None
    except OSError as exc:
        raise _fail(f"{what} {target}: cannot write it ({_os_reason(exc)}). To fix: "
                    f"{write_fix(exc.errno, target.parent)}") from None
    # a killed writer's temp files of this target (its own name's pattern only: nothing else
    # in the user's folder)
    prefix = _temp_prefix(target.name)
    sweep_temps(target.parent, lambda name: _is_temp_of(name, prefix))
    fd, tmp = _create_temp(target, what=what)
    try:
        try:
            if existing_mode is not None:
                os.fchmod(fd, existing_mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        # Re-check just before the rename: it must never replace a device or FIFO that
        # appeared since check_output_path looked.
        try:
            kind = _describe_mode(os.stat(target).st_mode)
        except FileNotFoundError:
            kind = None
        if kind is not None:
            raise _fail(f"{what} {target}: is {kind}; refusing to replace it. To fix: give "
                        "the path of a file to create or replace.")
        os.replace(tmp, target)
    except OSError as exc:
        _unlink_quietly(tmp)
        raise _fail(f"{what} {target}: cannot write it ({_os_reason(exc)}). To fix: "
                    f"{write_fix(exc.errno, target.parent)}") from None
    except BaseException:
        _unlink_quietly(tmp)
        raise
    _fsync_directory(target.parent)
    return target


def write_text_atomic(path: str | os.PathLike[str], text: str, *,
                      what: str = "output file", replace_read_only: bool = False) -> Path:
    """``write_bytes_atomic`` for UTF-8 text."""
    return write_bytes_atomic(path, text.encode("utf-8"), what=what,
                              replace_read_only=replace_read_only)


def _temp_prefix(name: str) -> str:
    """``.NAME.``: how the temp files of the target ``name`` begin (then 12 hex digits and
    ``.tmp``). A name too long to take the 18 more bytes is shortened, with a digest of the
    whole name, so that no two targets share a prefix (the pruning removes only the temp
    files of its own target)."""
    raw = name.encode("utf-8", "surrogatepass")  # the length on disk; never raises
    if len(raw) <= _NAME_MAX - _TEMP_EXTRA:
        return f".{name}."
    return f".{name[:40]}~{hashlib.sha256(raw).hexdigest()[:16]}."  # <= 178 bytes


def _is_temp_of(name: str, prefix: str) -> bool:
    middle = name[len(prefix):-len(".tmp")]
    return (name.startswith(prefix) and name.endswith(".tmp") and len(middle) == _TEMP_HEX
            and all(c in "0123456789abcdef" for c in middle))


def remove_if_stale(path: str, now: float) -> bool:
    """Remove ``path``, a temp file of a write, if it is a regular file (never a link or a
    folder) last modified more than STALE_TEMP_SECONDS before ``now``; whether it was.
    Raises OSError. The rule of every writer of gpuplan (this module's, the cache's)."""
    st = os.lstat(path)
    if not stat.S_ISREG(st.st_mode) or now - st.st_mtime <= STALE_TEMP_SECONDS:
        return False
    os.unlink(path)
    return True


def sweep_temps(directory: str | os.PathLike[str], is_temp: Callable[[str], bool]) -> None:
    """Remove from ``directory`` every file whose name ``is_temp`` says is a write's temp file
    and that ``remove_if_stale`` finds stale (a killed writer's); best effort, a failure
    changes nothing (gone already: its writer renamed it; or not ours to remove)."""
    now = time.time()
    try:
        with os.scandir(directory) as entries:
            found = [e.path for e in entries if is_temp(e.name)]
    except OSError:
        return
    for path in found:
        try:
            remove_if_stale(path, now)
        except OSError:
            continue


def _create_temp(target: Path, *, what: str) -> tuple[int, str]:
    # Not tempfile.mkstemp: it creates files 0600. os.open(..., 0o666) lets the kernel apply
    # the user's umask, without reading (and racing on) the process-wide umask.
    prefix = _temp_prefix(target.name)
    for _ in range(16):
        # os.urandom, not secrets: the same bytes without importing random and base64
        tmp = str(target.parent / f"{prefix}{os.urandom(_TEMP_HEX // 2).hex()}.tmp")
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as exc:
            raise _fail(f"{what} {target}: cannot create a file in {target.parent} "
                        f"({_os_reason(exc)}). To fix: "
                        f"{write_fix(exc.errno, target.parent)}") from None
    raise _fail(f"{what} {target}: cannot create a temporary file in {target.parent}. "
                "To fix: remove stale .*.tmp files there.")


def _unlink_quietly(tmp: str) -> None:
    try:
        os.unlink(tmp)
    except OSError:
        pass


def _fsync_directory(directory: Path) -> None:
    # Makes the rename durable; best effort (some file systems refuse fsync on directories).
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
