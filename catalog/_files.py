"""Reading and writing the user's files safely: the one place that knows the limits.

Every file a user names (team plans, quotas, price overrides, model configs, actuals, report
outputs) goes through here, so that a hostile or simply wrong file gives one line that says what
is wrong and how to fix it — never a traceback, never a hang, never an exhausted memory:

    read_user_text      regular files only (stat before open: never /dev/zero, a FIFO, a socket),
                        at most ``max_bytes``, UTF-8 with the offset of the first bad byte
    system_location     why a path is among the kernel's own files (/proc, /sys, /dev but
                        /dev/shm, a proc/sysfs/devtmpfs… mount anywhere), refused for every
                        read and write by place and file-system type (root passes access())
    load_yaml_text      (``_yaml``, so PyYAML loads only when a YAML file is read) safe_load
                        that keeps dates as strings, bounds nesting depth and alias expansion
                        (billion laughs), rejects duplicate keys
    load_json_text      bounded depth, no NaN/Infinity, no 400-digit numbers, no duplicate keys
    read_json_file      read_user_text + load_json_text: a user's JSON file (a model config)

Writing the user's files (``check_output_path``, ``write_bytes_atomic``, ``write_text_atomic``)
is ``_writes``.

All failures are ``CatalogFileError`` (a ``GpuplanError``), whose message ends "To fix: …".
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any

from ._errors import CatalogFileError
from ._text import decode_user_bytes

MAX_USER_FILE_BYTES = 4 * 2**20
# A number with more digits than this is not a size, a price or a count; Python would also
# spend quadratic time converting it (CVE-2020-10735), so refuse it before converting.
MAX_NUMBER_DIGITS = 40


def _fail(message: str) -> CatalogFileError:
    return CatalogFileError(message)


def _describe_mode(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return "no such file"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOSPC:
        return "disk full"
    if exc.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if exc.errno == errno.EFBIG:  # strerror's "File too large" read as a full disk; a file
        # system's own largest file (FAT's 4 GiB) is far above any file gpuplan writes
        return "the file is larger than this process's file-size limit, ulimit -f"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno == errno.ENAMETOOLONG:
        return "file name too long"
    if exc.errno == errno.ENOTDIR:
        return "a part of the path is not a directory"
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links"
    return exc.strerror or type(exc).__name__


def _as_path(path: str | os.PathLike[str], *, what: str, fix: str) -> Path:
    """``path`` as a Path, after refusing what no user file can be: not a string, empty, a NUL
    in it, among the kernel's own files (``system_location``). Every read and write of a
    user's file starts here (read_user_text, _writes.check_output_path): refused once for both.
    """
    raw = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    if not isinstance(raw, str):
        raise _fail(f"{what}: expected a file path, got {type(raw).__name__}. To fix: {fix}")
    if raw.strip() == "":
        raise _fail(f"{what}: the path is empty. To fix: {fix}")
    if "\x00" in raw:
        raise _fail(f"{what}: the path contains a NUL character. To fix: {fix}")
    try:
        mode = os.stat(raw).st_mode
    except (OSError, ValueError):
        mode = None
    # An existing device, FIFO or socket is left to the callers, whose message names its kind
    # ("/dev/null: is a device; refusing to replace it"), the more precise of the two.
    if mode is None or stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        where = system_location(raw)
        if where is not None:
            raise _fail(f"{what} {raw}: {where}, the kernel's own files; gpuplan neither "
                        f"reads nor writes files there. To fix: {fix}")
    return Path(raw)


# --- the kernel's own files ----------------------------------------------------------------
# Nothing a user keeps lives there, and as root a write there changes the machine ("replacing"
# /sys/kernel/mm/transparent_hugepage/enabled, creating /dev/report.md on the devtmpfs of the
# device nodes). Root passes every access() check: refused by place and file-system type.
SYSTEM_TREES = {"/proc": "processes and kernel settings", "/sys": "devices and driver settings",
                "/dev": "device nodes"}
SYSTEM_TREE_EXCEPTIONS = ("/dev/shm",)  # POSIX shared memory: an ordinary tmpfs
# The same file systems mounted elsewhere (a chroot's proc), as /proc/self/mountinfo names them.
PSEUDO_FILESYSTEMS = frozenset(
    "autofs binfmt_misc bpf cgroup cgroup2 configfs debugfs devpts devtmpfs efivarfs fusectl "
    "hugetlbfs mqueue nsfs proc pstore rpc_pipefs securityfs selinuxfs sysfs tracefs".split())
MOUNTINFO = "/proc/self/mountinfo"  # Linux only; elsewhere the trees are the rule
_OCTAL = re.compile(r"\\([0-7]{3})")  # mountinfo writes a space in a mount point as \040


def _under(path: str, tree: str) -> bool:
    return tree == "/" or path == tree or path.startswith(tree.rstrip("/") + "/")


def system_location(path: str | os.PathLike[str]) -> str | None:
    """Why ``path`` is among the kernel's own files ("is under /sys (devices and driver
    settings)"), or None. Symbolic links are resolved first: /dev/stdout redirected to a file
    is that file, a link to /sys/... is /sys."""
    try:
        real = os.path.realpath(path)
    except (OSError, ValueError):
        real = os.path.abspath(path)
    tree = next((t for t in SYSTEM_TREES if _under(real, t)), None)
    if tree and not any(_under(real, e) for e in SYSTEM_TREE_EXCEPTIONS):
        return f"is under {tree} ({SYSTEM_TREES[tree]})"
    fstype = filesystem_type(real)
    return f"is on a {fstype} file system" if fstype in PSEUDO_FILESYSTEMS else None


def filesystem_type(real_path: str) -> str | None:
    """The type ("ext4", "proc" …) of the file system holding the resolved ``real_path``, from
    /proc/self/mountinfo; None where that cannot be read."""
    try:
        with open(MOUNTINFO, "rb") as handle:  # thousands of mounts fit in 4 MiB
            lines = handle.read(4 * 2**20).decode("utf-8", "replace").splitlines()
    except OSError:
        return None
    best, best_len = None, -1
    for fields in (line.split(" ") for line in lines):
        # id parent dev root MOUNT-POINT options [optional fields…] - TYPE source options
        if "-" not in fields[6:-1]:
            continue
        point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[4])
        if _under(real_path, point) and len(point) >= best_len:  # ">=": the later is on top
            best, best_len = fields[fields.index("-", 6) + 1], len(point)
    return best


# --- reading -------------------------------------------------------------------------------


def read_user_text(path: str | os.PathLike[str], *, what: str,
                   max_bytes: int = MAX_USER_FILE_BYTES) -> str:
    """The UTF-8 text of the regular file ``path`` (a leading BOM dropped).

    ``what`` names the file for messages ("team plan", "quota file"). Refuses anything that is
    not a regular file *before* opening it, since opening a FIFO blocks and reading /dev/zero
    never ends; reads at most ``max_bytes + 1`` bytes whatever the file claims its size is.
    A leading ``~`` is the home folder (a quoted "~/q.yaml" reached here unexpanded: "cannot
    read it"); messages name the path as typed.
    """
    fix_path = "give the path of an existing file."
    typed = os.fspath(path) if isinstance(path, str | os.PathLike) else path
    # checked expanded (a ~ that is /sys is /sys); an unknown ~user stays as typed
    p = _as_path(os.path.expanduser(typed) if isinstance(typed, str) else typed, what=what,
                 fix=fix_path)
    shown = typed

    def unreadable(exc: OSError) -> CatalogFileError:
        fix = (f"make it readable for this user (chmod u+r {shown}; its folders need u+x), or "
               "copy it somewhere readable." if exc.errno in (errno.EACCES, errno.EPERM)
               else fix_path)
        return _fail(f"{what} {shown}: cannot read it ({_os_reason(exc)}). To fix: {fix}")

    try:
        st = os.stat(p)
    except OSError as exc:
        raise unreadable(exc) from None
    kind = _describe_mode(st.st_mode)
    if kind is not None:
        raise _fail(f"{what} {shown}: is {kind}, not a regular file. To fix: {fix_path}")
    limit = _size(max_bytes)
    if st.st_size > max_bytes:
        raise _fail(f"{what} {shown}: is {st.st_size:,} bytes, more than the {limit} allowed. "
                    f"To fix: give the right file (this one is too large for its kind: {what}).")
    # O_NONBLOCK: if the file was swapped for a FIFO after the stat, open must not hang.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(p, flags)
    except OSError as exc:
        raise unreadable(exc) from None
    try:
        kind = _describe_mode(os.fstat(fd).st_mode)
        if kind is not None:
            raise _fail(f"{what} {shown}: is {kind}, not a regular file. To fix: {fix_path}")
        chunks, remaining = [], max_bytes + 1
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
    except OSError as exc:
        raise unreadable(exc) from None
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > max_bytes:
        raise _fail(f"{what} {shown}: is larger than the {limit} allowed. To fix: give the right "
                    f"file (this one is too large for its kind: {what}).")
    return decode_user_bytes(data, what=f"{what} {shown}")


def _size(n: int) -> str:
    return f"{n / 2**20:g} MiB" if n >= 2**20 else f"{n:,} bytes"


# The words YAML reads as true or false when they are not quoted (YAML 1.1's, as gpuplan's
# reader keeps them: docs/team.md, allow_flagged)
_BOOL_WORDS = {True: ("on", "yes", "true"), False: ("off", "no", "false")}


def unquoted_hint(value: object) -> str:
    """For a name that YAML read as something else (`name: 1e3`, `yes`, `12:30`): how to
    keep it text; "" for any other value. For true/false, the words that read so, quoted
    (the word itself is gone once read: false is all the data holds); `region: off` in a
    quota file was told to write "1e3", the example for a number."""
    if isinstance(value, bool):
        first, second, third = _BOOL_WORDS[value]
        return (f" (YAML reads {first}, {second} and {third} without quotes as "
                f"{shown_as_yaml(value)}: write the name in quotes, e.g. \"{first}\" or "
                f"\"{second}\")")
    if isinstance(value, int | float):
        return " (YAML read it as a number: write the name in quotes, e.g. \"1e3\")"
    return ""


# YAML 1.1 reads a number in exponent form as text unless it has a dot and a signed exponent
# (1.0e+13). catalog's YAML reader reads 1e13 as a number, but data given otherwise (the app,
# JSON, a quoted "1e13") still brings strings where the CLI would accept 2e12.
_EXPONENT_FORM = re.compile(
    r"[+-]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)[eE][+-]?[0-9]+")
_WHOLE_LIMIT = 10**30  # an integral float above this stays a float (refused as not whole)


def number_in_file(value):
    """A string in exponent form ('1e13', '2.5E-1') as the float it spells; anything else
    unchanged, so the caller's own check refuses it ('1e400', 'nan', 'inf' and garbage stay
    strings and are refused there, quoted back as written)."""
    if isinstance(value, str) and len(value) <= 40 and _EXPONENT_FORM.fullmatch(value.strip()):
        text = value.strip().replace("_", "")
        x = float(text)
        mantissa = text.lower().partition("e")[0]
        # 1e-400 underflows to 0.0: as 0 it would mean "none" (a min_probability of 0 turns
        # the requirement off), so it stays a string and is refused as written
        if math.isfinite(x) and (x != 0 or not any(c in "123456789" for c in mantissa)):
            return x
    return value


def whole_number_in_file(value):
    """``number_in_file``, and a float with no fraction as an int, for a file's whole-number
    fields (max_gpus, priority, quota gpus, seq_len …): 1e3 arrives as 1000.0 and means 1000,
    as an integral float does in a config.json; 1.5 stays a float, which the caller refuses.
    The one rule for team plans and quota files (a quota file refused `gpus: 64.0`, which the
    same rule inside a team plan took)."""
    x = number_in_file(value)
    if isinstance(x, float) and x.is_integer() and abs(x) <= _WHOLE_LIMIT:
        return int(x)
    return x


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200] or type(exc).__name__


# --- JSON ----------------------------------------------------------------------------------

_JSON_STRUCTURE = re.compile(r'[\[\]{}"]')
_JSON_BRACKETS = re.compile(r"[\[\]{}]")
# the rest of a string after its opening quote: possessive runs of plain characters and
# escapes, so a failed match gives nothing back (no backtracking, no per-character stack)
_JSON_STRING_REST = re.compile(r'[^"\\]*+(?:\\.[^"\\]*+)*+"', re.DOTALL)


def _json_depth_ok(text: str, max_depth: int) -> int | None:
    """The offset where ``text`` nests deeper than ``max_depth``, or None.

    json's scanner is recursive; checking first keeps a 100,000-deep array from reaching
    Python's recursion limit at all. Strings are skipped whole (a bracket in one does not
    nest), in time linear in the text and constant memory: the tokenizer this replaces,
    ``"(?:[^"\\]|\\.)*"``, kept a backtracking point per character (1.9 GB for a 15 MiB
    string). After an unterminated string every bracket counts, as that tokenizer counted
    them (json refuses such a text anyway).
    """
    depth, pos, tokens = 0, 0, _JSON_STRUCTURE
    while (match := tokens.search(text, pos)) is not None:
        token, pos = match.group(), match.end()
        if token == '"':
            rest = _JSON_STRING_REST.match(text, pos)
            if rest is None:
                tokens = _JSON_BRACKETS
            else:
                pos = rest.end()
        elif token in "[{":
            depth += 1
            if depth > max_depth:
                return match.start()
        else:
            depth -= 1
    return None


def load_json_text(text: str, *, what: str, max_depth: int = 64) -> Any:
    """The data in JSON ``text``.

    Refuses NaN/Infinity, numbers of more than 40 digits or beyond a float's range, duplicate
    keys and nesting deeper than ``max_depth``.
    """

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not a number JSON allows")

    def parse_int(raw: str) -> int:
        if len(raw.lstrip("-")) > MAX_NUMBER_DIGITS:
            raise ValueError(f"a {len(raw)}-digit number")
        return int(raw)

    def parse_float(raw: str) -> float:
        if len(raw) > 4 * MAX_NUMBER_DIGITS:
            raise ValueError(f"a {len(raw)}-character number")
        value = float(raw)
        if not math.isfinite(value):
            raise ValueError(f"{raw} is too large for a number")
        return value

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in items:
            if key in result:
                raise ValueError(f"duplicate key {key!r}")
            result[key] = value
        return result

    if not text.strip():  # "invalid JSON at line 1, column 1: Expecting value"
        raise _fail(f"{what}: is empty. To fix: give the file meant, or write its JSON in it.")
    offset = _json_depth_ok(text, max_depth)
    if offset is not None:
        line = text.count("\n", 0, offset) + 1
        raise _fail(f"{what}: nesting deeper than {max_depth} levels at line {line}. To fix: "
                    "give the right file (a config is only a few levels deep).")
    try:
        return json.loads(text, parse_constant=constant, parse_int=parse_int,
                          parse_float=parse_float, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise _fail(f"{what}: invalid JSON at line {exc.lineno}, column {exc.colno}: "
                    f"{exc.msg}. To fix: correct the file.") from None
    except (ValueError, RecursionError) as exc:
        raise _fail(f"{what}: invalid JSON ({_one_line(exc)}). To fix: correct the "
                    "file.") from None


def read_json_file(path: str | os.PathLike[str], *, what: str,
                   max_bytes: int = MAX_USER_FILE_BYTES, max_depth: int = 64) -> Any:
    """The JSON document in the user's file at ``path`` (``read_user_text`` then
    ``load_json_text``): a regular file of at most ``max_bytes``, nested at most ``max_depth``
    deep. CatalogFileError, naming ``what`` and the path, when it cannot be used."""
    text = read_user_text(path, what=what, max_bytes=max_bytes)
    return load_json_text(text, what=f"{what} {path}", max_depth=max_depth)


MAX_SHOWN_CHARS = 60  # a value of a user's file quoted back in a message
HUGE = 10**30  # integers above this are shown by their order of magnitude (repr of 10^400 is
# long, and stops at 4,300 digits)


def shown_number(value) -> str:
    """A number an option was given, as typed: the CLI reads `--budget -5` as -5.0, and
    "got -5.0" was not what the user wrote; an integer above HUGE as "~1e400" ("a huge number
    is too large" read badly)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > HUGE:
        return f"{'-' if value < 0 else ''}~1e{math.floor(math.log10(abs(value)))}"
    if type(value) is float and value.is_integer() and abs(value) < 1e16:
        return str(int(value))
    return repr(value)


def shown_as_yaml(value) -> str:
    """A value of the file for messages, as YAML writes it (true, null, [a, b], {a: 1}: the
    file's writer read Python's True, None, ['a', 'b']); safe for 10^400 and for megabyte
    strings. A text is quoted, so a name with spaces shows where it ends."""
    text = repr(value) if isinstance(value, str) else _yaml_text(value)
    return text if len(text) <= MAX_SHOWN_CHARS else text[:MAX_SHOWN_CHARS - 3] + "…"


_PLAIN_WORD = re.compile(r"[\w.\-/]+")


def _yaml_text(value, depth: int = 0) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, int) and abs(value) > HUGE:
        return shown_number(value)
    if isinstance(value, str):  # inside a list or mapping: plain where YAML would be
        return value if _PLAIN_WORD.fullmatch(value) else repr(value)
    if depth > 3:  # the text is cut at MAX_SHOWN_CHARS anyway
        return "…"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_yaml_text(v, depth + 1) for v in value[:20]) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_yaml_text(k, depth + 1)}: {_yaml_text(v, depth + 1)}"
                               for k, v in list(value.items())[:20]) + "}"
    return repr(value)  # numbers (1e400 as written: catalog's YAML reader), a set, bytes
