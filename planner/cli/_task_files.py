"""Where task files are written (`launch probes --out`, `plan --emit-out`): each path checked
before anything is written — a path that takes a file, none of the command's inputs, nothing of
gpuplan's own store, no file of the user's — then every file of a bundle written together, or
none of them.
"""

from __future__ import annotations

import contextlib
import os
import stat

_HEX = 12  # random hex digits in the names below
_NAME_MAX = 255  # bytes in one file name


def write_together(files) -> tuple[str, ...]:
    """Write every file or leave each as it was; what an earlier, killed write left (said).

    Each new file is written whole (``write_text_atomic``) under a second name beside its
    target first, ``.NAME.HEX.new``; then the targets are replaced one right after the other,
    so that the only moment a kill (SIGKILL, power loss) leaves a new fleet beside an old task
    is between two renames, microseconds, where it was a whole write and fsync (fault sweep:
    1 of 20 kill -9s). A replaced file is kept under a third name (``_keep``) until all are
    in place, and renamed back on failure: a failed task write (ulimit -f) had removed the
    fleet file just written, while the earlier task named it. What a kill still leaves — the
    staged and kept names, at worst a mismatched pair — the next write of the bundle
    replaces or removes (``_leftovers``), and says it did."""
    import catalog

    said = []
    staged: dict[str, str] = {}  # real path → its new file, written whole beside it
    kept: dict[str, str | None] = {}  # real path → its earlier file; None: there was none
    replaced = []
    try:
        for f in files:
            real = os.path.realpath(f.path)  # a link's target is what the write replaces
            if _leftovers(real):
                said.append(f"replaced {f.path}: an earlier write of it was killed part-way, "
                            "and left it perhaps not matching the other files written with it")
            staged[real] = _beside(real, "new")
            try:
                catalog.write_text_atomic(staged[real], f.text, what="task file")
            except catalog.GpuplanError as exc:  # it named the staged .NAME.HEX.new file,
                # which the user never asked for and which is removed below (ulimit -f)
                raise type(exc)(str(exc).replace(staged[real], f.path), field=exc.field,
                                value=exc.value) from None
            with contextlib.suppress(OSError):  # a replaced file keeps its mode
                os.chmod(staged[real], stat.S_IMODE(os.stat(real).st_mode))
        for real, new in staged.items():  # back to back: nothing else between the renames
            kept[real] = _keep(real)
            os.replace(new, real)
            replaced.append(real)
    except BaseException:
        for real in replaced:
            with contextlib.suppress(OSError):
                if kept[real] is None:
                    os.unlink(real)
                elif kept[real]:  # "": could not be kept, so the new one stays
                    os.replace(kept.pop(real), real)
        for real, new in staged.items():
            if real not in replaced:
                with contextlib.suppress(OSError):
                    os.unlink(new)
        raise
    finally:
        for name in filter(None, kept.values()):
            with contextlib.suppress(OSError):
                os.unlink(name)
    return tuple(said)


def _beside(path: str, kind: str) -> str:
    """A new name beside ``path`` for one of ``write_together``'s files: ``.NAME.HEX.KIND``
    (a name too long to take the 18 more bytes shortened, with a digest of the whole)."""
    return f"{os.path.dirname(path)}/{_prefix(os.path.basename(path))}" \
        f"{os.urandom(_HEX // 2).hex()}.{kind}"


def _prefix(name: str) -> str:
    raw = name.encode("utf-8", "surrogatepass")
    if len(raw) + _HEX + 6 <= _NAME_MAX:
        return f".{name}."
    import hashlib

    return f".{name[:40]}~{hashlib.sha256(raw).hexdigest()[:16]}."


def _leftover_names(name: str):
    """The names ``write_together`` gives beside the target ``name``: .NAME.HEX.old (the
    earlier file, kept), .NAME.HEX.new (the new one, not yet in place) and the temp file of
    the latter's write (..NAME.HEX.new.HEX.tmp)."""
    import re

    hexes, prefix = f"[0-9a-f]{{{_HEX}}}", re.escape(_prefix(name))
    return re.compile(rf"{prefix}{hexes}\.(?:old|new)|\.{prefix}{hexes}\.new\.{hexes}\.tmp")


def _leftovers(path: str) -> bool:
    """Whether a killed ``write_together`` left its names (``_leftover_names``) beside
    ``path``, that target. Those a kill left — last changed more than STALE_TEMP_SECONDS ago by
    ctime, which a link or rename sets, not by mtime, the earlier file's own age — are
    removed; a younger one may be a concurrent write's, and is left. Every one found is said:
    the files on disk may be from two writes (a new fleet beside an old task), which this
    write now replaces (the age of catalog's sweep of a killed writer's temp files: a live
    write takes seconds, so an hour never takes a concurrent writer's file)."""
    import time

    import catalog

    folder, name = os.path.split(path)
    leftover = _leftover_names(name)
    try:
        with os.scandir(folder or ".") as entries:
            found = [e.path for e in entries if leftover.fullmatch(e.name)]
    except OSError:
        return False
    now = time.time()
    for found_path in found:
        with contextlib.suppress(OSError):
            st = os.lstat(found_path)
            if stat.S_ISREG(st.st_mode) and now - st.st_ctime > catalog.STALE_TEMP_SECONDS:
                os.unlink(found_path)
    return bool(found)


def _keep(path: str) -> str | None:
    """A hard link to the file at ``path``, beside it (.NAME.HEX.old); None where there is no
    file, "" where the file system takes no second name (then it is never removed). Not
    named like a write's temp file: that write's sweep of stale temps (by mtime, the old
    file's) would take it."""
    if not os.path.lexists(path):
        return None
    name = _beside(path, "old")
    try:
        os.link(path, name)
    except OSError:
        return ""
    return name


def stale_fleet(bundle) -> str | None:
    """A dstack task without a fleet (one node) beside the fleet file an earlier run of
    several nodes wrote under the same name: `dstack apply -f` of it would start idle nodes.
    An unedited one of gpuplan's is removed; an edited one is the user's, kept; both said."""
    from planner.launch import fleet_path

    if bundle.target != "dstack" or len(bundle.files) != 1:
        return None
    path = fleet_path(bundle.files[0].path)
    try:
        state = _state_of(path)
    except OSError:
        return None
    if state == "unedited":
        with contextlib.suppress(OSError):
            os.unlink(path)
            return f"removed {path} (the fleet of an earlier run: this task needs none)"
    elif state == "edited":
        return (f"kept {path}: edited since gpuplan wrote it, and this task needs no fleet "
                "(delete it, or do not apply it)")
    return None


def _named_after(option: str) -> str:
    """Said of dstack's fleet file, which the user never named: its name comes from
    ``option``'s."""
    return f"(the fleet file, named after {option}'s)"


MAX_LAUNCH_FILE_BYTES = 1 << 20  # a launch file is a few KB: a larger one is not gpuplan's


def check_bundle_paths(bundle, *, option: str, inputs: dict | None = None) -> None:
    """Every file of ``bundle`` can be written: a path that takes a file, none of the
    ``inputs`` (option → path the command reads), not a file of the user's. The last file is
    the one ``option`` names; the others (dstack's fleet) are named after it."""
    from catalog import GpuplanError, check_output_path, input_clash, without_fix
    from planner.launch import LaunchError

    from ._files import own_store_clash

    for f in bundle.files:
        beside = f is not bundle.files[-1]
        try:
            check_output_path(f.path, what="task file")
        except GpuplanError as exc:
            if not beside:
                raise
            # the fleet file's name comes from --out's: "give a file name inside that
            # directory" could not be done, since the user never named this one
            raise LaunchError(f"{without_fix(exc)} {_named_after(option)}. To fix: "
                              f"choose another {option}") from None
        if own := own_store_clash(f.path):  # e.g. probes.db: every later command failed
            raise LaunchError(f"{f.path} {own}: gpuplan's own files are never replaced. To "
                              f"fix: choose another {option}")
        if beside and (clash := input_clash(f.path, inputs or {})) is not None:
            raise LaunchError(f"{f.path} {_named_after(option)} is the file {clash} names, "
                              "which this plan reads: it would be replaced. To fix: choose "
                              f"another {option}")
        check_replaceable(f.path, option=option, beside=beside)


def check_task_path(path: str, *, example: str, what: str = "task file") -> None:
    """``check_output_path``, with a task file's name (``example``) in the fix for a path
    that names a directory (`--out ..` said "e.g. ../report.md")."""
    from catalog import check_output_path, shell_word
    from planner.launch import LaunchError

    if os.path.basename(path) in (".", ".."):
        raise LaunchError(f"{what} {path}: names a directory. To fix: give a file name inside "
                          f"it, e.g. {shell_word(os.path.join(path, example))}")
    check_output_path(path, what=what)


def check_replaceable(path: str, *, option: str, beside: bool = False) -> None:
    """Refuse to replace an existing file that gpuplan did not write, or wrote and the user
    edited since (`launch probes` replaced a hand-edited task file, and `--out base.json` an
    unrelated JSON, exit 0: hostile sweep). An unedited file of gpuplan's (its generated-by
    line, ``planner.launch.GENERATED_MARK``, and a matching digest) is replaced silently, so
    a re-run needs no option: `report --out` replaces only a report of gpuplan's too
    (``planner.reports.is_report``, judged by its head: an edited report is replaced), and no
    --out has a --force. ``beside``: dstack's
    fleet file, whose name comes from ``option``'s."""
    from planner.launch import GENERATED_MARK, LaunchError

    fix = f"To fix: choose another {option}, or remove it"
    shown = f"{path} {_named_after(option)}" if beside else path
    try:
        state = _state_of(path)
    except FileNotFoundError:
        return  # nothing to replace (check_output_path has refused what cannot be written)
    except OSError as exc:
        raise LaunchError(f"{shown} exists and cannot be read to check that gpuplan wrote it "
                          f"({exc.strerror or exc}). {fix}") from None
    if state == "edited":
        raise LaunchError(f"{shown} was written by gpuplan and edited since: replacing it would "
                          f"lose the edits. {fix}")
    if state is None:
        raise LaunchError(f"{shown} exists and was not written by gpuplan (it has no "
                          f"'{GENERATED_MARK} …' line at the top). {fix}")


def _state_of(path: str) -> str | None:
    """``generated_state`` of the file at ``path``: "unedited", "edited", or None for one
    gpuplan did not write (or too large to be its). Only a regular file is opened: reading a
    FIFO waited for ever. OSError (FileNotFoundError: no file) as the file system says."""
    from planner.launch import generated_state

    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_LAUNCH_FILE_BYTES:
        return None
    with open(path, "rb") as fh:
        data = fh.read(MAX_LAUNCH_FILE_BYTES + 1)
    return (generated_state(data.decode("utf-8", "replace"))
            if len(data) <= MAX_LAUNCH_FILE_BYTES else None)
