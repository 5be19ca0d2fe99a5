"""Faults of the one atomic writer (``catalog._writes``, and the probes' copy of its rules in
``probes._report_io``), from a hostile sweep:

1. a writer killed (SIGKILL) between creating its temp file and the rename left
   ``.NAME.xxxxxxxxxxxx.tmp`` beside the output for ever: the next write of the same target
   removes its own stale temp files, and nothing else;
2. a write refused by the process's file-size limit (``ulimit -f``, EFBIG) said "free space";
   each errno now gets the fix that can work (ENOSPC, EDQUOT, EFBIG, EROFS, EACCES);
3. `gpuplan catalog use` on a read-only file system said "chmod", which fails there too.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from catalog import CatalogError, CatalogFileError, _paths, _writes, write_text_atomic
from planner.cli import main

ROOT = Path(__file__).resolve().parents[2]
OLD = 1000.0  # a modification time long past STALE_TEMP_SECONDS


def _error(call, *args, **kwargs) -> str:
    with pytest.raises(CatalogError) as info:
        call(*args, **kwargs)
    message = str(info.value)
    assert "\n" not in message and "To fix: " in message, message
    return message


def _said(message: str) -> tuple[str, str]:
    """(what is wrong, how to fix it) of a one-line message."""
    what, _, fix = message.partition(" To fix: ")
    assert fix, message
    return what, fix


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=env, cwd=ROOT)


# ---- 1. a killed writer's temp file ------------------------------------------------------

def test_a_writer_killed_before_the_rename_leaves_a_temp_file_the_next_write_removes(tmp_path):
    target = tmp_path / "report.md"
    target.write_text("old")
    killed = _run(f"""
        import os, signal
        from catalog import write_text_atomic
        os.fsync = lambda fd: os.kill(os.getpid(), signal.SIGKILL)  # killed mid-write
        write_text_atomic({str(target)!r}, "half")
    """)
    assert killed.returncode == -9, killed.stderr
    left = [p for p in tmp_path.iterdir() if p != target]
    assert len(left) == 1 and left[0].name.startswith(".report.md."), left
    assert target.read_text() == "old"
    write_text_atomic(target, "new")
    assert left[0].exists()  # young: it could be a concurrent writer's, on its way
    os.utime(left[0], (OLD, OLD))
    write_text_atomic(target, "newer")
    assert sorted(tmp_path.iterdir()) == [target] and target.read_text() == "newer"


def test_only_the_targets_own_stale_temp_files_are_removed(tmp_path):
    target = tmp_path / "r.md"
    stale = tmp_path / ".r.md.0123456789ab.tmp"
    kept = {
        ".r.md.ba9876543210.tmp": None,  # young: a concurrent writer's
        ".other.md.0123456789ab.tmp": OLD,  # another target's
        ".r.md.0123456789ab.tmp.bak": OLD,  # not the pattern
        ".r.md.0123456789AB.tmp": OLD,
        ".r.md.0123456789a.tmp": OLD,
        "r.md.0123456789ab.tmp": OLD,
        ".x.r.md.0123456789ab.tmp": OLD,
    }
    stale.write_text("half")
    os.utime(stale, (OLD, OLD))
    for name, mtime in kept.items():
        (tmp_path / name).write_text("keep")
        if mtime is not None:
            os.utime(tmp_path / name, (mtime, mtime))
    folder = tmp_path / ".r.md.aaaaaaaaaaaa.tmp"  # right name, not a file: never removed
    folder.mkdir()
    os.utime(folder, (OLD, OLD))
    link = tmp_path / ".r.md.bbbbbbbbbbbb.tmp"
    link.symlink_to(tmp_path / ".other.md.0123456789ab.tmp")
    write_text_atomic(target, "new")
    assert not stale.exists()
    assert all((tmp_path / name).exists() for name in kept)
    assert folder.is_dir() and link.is_symlink()


def test_a_long_name_prunes_only_its_own_temp_files(tmp_path):
    """Names once were cut to 120 characters in temp names, so two targets that share them
    shared temp names too; now a name that does not fit gets a digest of the whole name."""
    first, second = "a" * 230 + "1.md", "a" * 230 + "2.md"
    prefix_first = _writes._temp_prefix(first)
    assert prefix_first != _writes._temp_prefix(second)
    assert len(os.fsencode(prefix_first)) + 16 <= 255
    theirs = tmp_path / f"{_writes._temp_prefix(second)}0123456789ab.tmp"
    ours = tmp_path / f"{prefix_first}0123456789ab.tmp"
    for p in (theirs, ours):
        p.write_text("half")
        os.utime(p, (OLD, OLD))
    write_text_atomic(tmp_path / first, "x")
    assert theirs.exists() and not ours.exists()
    assert (tmp_path / first).read_text() == "x"


def test_a_wide_character_name_that_fits_gets_a_temp_file_that_fits(tmp_path):
    name = "é" * 120 + ".md"  # 243 bytes: the 120-character cut made a 259-byte temp name
    write_text_atomic(tmp_path / name, "x")
    assert (tmp_path / name).read_text() == "x"


def test_the_cache_prunes_by_the_same_rule(tmp_path):
    from catalog import _cache

    old, young = tmp_path / ".tmp-1-0123abcd", tmp_path / ".tmp-2-4567cdef"
    for p in (old, young):
        p.write_text("half")
    os.utime(old, (OLD, OLD))
    _writes.sweep_temps(tmp_path, _cache.is_temp)
    assert not old.exists() and young.exists()


def test_a_probe_reports_stale_temp_file_is_removed_and_no_other(tmp_path):
    from probe_reports import h100_report

    from probes._report_io import write_report_atomic

    target = tmp_path / "report.json"
    stale, young = tmp_path / ".report.json.0123456789ab.tmp", tmp_path / ".report.json.a.tmp"
    other = tmp_path / ".other.json.0123456789ab.tmp"
    for p in (stale, young, other):
        p.write_text("half")
        os.utime(p, (OLD, OLD))
    write_report_atomic(h100_report(), target)
    assert not stale.exists() and young.exists() and other.exists() and target.exists()


# ---- 2. each errno its fix -----------------------------------------------------------------

FIXES = [
    (errno.EFBIG, "larger than this process's file-size limit, ulimit -f)",
     "raise the file-size limit (ulimit -f unlimited", "free space"),
    (errno.ENOSPC, "(disk full)", "free space on that disk, or", "chmod"),
    (errno.EDQUOT, "(disk quota exceeded)", "free space within your disk quota, or", "chmod"),
    (errno.EROFS, "(read-only file system)", "choose a path on a writable file system",
     "chmod"),
    (errno.EACCES, "(permission denied)", "writable (chmod u+w ", "free space"),
]


@pytest.mark.parametrize(("code", "reason", "fix", "not_said"), FIXES)
@pytest.mark.parametrize("broken", ["replace", "write"])
def test_a_failed_write_says_the_fix_for_its_errno(tmp_path, monkeypatch, broken, code,
                                                   reason, fix, not_said):
    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, broken, fail)
    said = _error(write_text_atomic, tmp_path / "r.md", "x", what="report")
    monkeypatch.undo()
    what, how = _said(said)
    assert reason in what and fix in how and not_said not in said, said
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("code", "reason", "fix", "not_said"),
                         [f for f in FIXES if f[0] in (errno.EROFS, errno.EACCES)])
def test_a_temp_file_that_cannot_be_created_says_the_fix_for_its_errno(tmp_path, monkeypatch,
                                                                       code, reason, fix,
                                                                       not_said):
    real_open = os.open

    def refuse(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise OSError(code, os.strerror(code))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    said = _error(write_text_atomic, tmp_path / "r.md", "x", what="report")
    what, how = _said(said)
    assert reason in what and fix in how and not_said not in said, said


def test_the_real_file_size_limit_gives_efbig_and_its_fix(tmp_path):
    """Python ignores SIGXFSZ (CPython does at start-up), so a write past ``ulimit -f`` fails
    with EFBIG instead of killing the process; the message must not say "free space"."""
    target = tmp_path / "big.md"
    done = _run(f"""
        import resource, signal
        from catalog import CatalogError, write_bytes_atomic
        assert signal.getsignal(signal.SIGXFSZ) == signal.SIG_IGN
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(
            resource.RLIMIT_FSIZE)[1]))
        try:
            write_bytes_atomic({str(target)!r}, b"x" * 65536, what="report")
        except CatalogError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    said = done.stdout.strip()
    assert "file-size limit, ulimit -f" in said and "ulimit -f unlimited" in said, said
    assert "free space" not in said and list(tmp_path.iterdir()) == []


def test_a_directory_on_a_read_only_mount_is_not_told_to_chmod(tmp_path, monkeypatch):
    """access() fails on a read-only mount as for a mode that forbids writing (even for root);
    statvfs tells them apart."""
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if Path(p) == tmp_path
                        else real_access(p, m, **kw))
    monkeypatch.setattr(os, "statvfs", lambda p: type("V", (), {"f_flag": os.ST_RDONLY})())
    said = _error(_writes.check_output_path, tmp_path / "r.md", what="report")
    assert "is on a read-only file system" in said and "chmod" not in said, said
    monkeypatch.setattr(os, "statvfs", lambda p: type("V", (), {"f_flag": 0})())
    said = _error(_writes.check_output_path, tmp_path / "r.md", what="report")
    assert "read-only for you" in said and f"chmod u+w {tmp_path}" in said, said


def test_a_store_that_cannot_be_created_on_a_read_only_mount_says_gpuplan_home(monkeypatch):
    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(Path, "mkdir", read_only)
    said = _error(_writes.make_directory, _paths.catalogs_dir(), what="catalog store")
    assert "(read-only file system)" in said and "make it writable" not in said, said
    assert said.endswith("To fix: set GPUPLAN_HOME to a folder on a writable file system")


@pytest.mark.parametrize(("code", "reason", "fix", "not_said"), FIXES)
def test_a_probe_report_write_says_the_fix_for_its_errno(tmp_path, monkeypatch, code, reason,
                                                        fix, not_said):
    from probe_reports import h100_report

    from probes._errors import ReportWriteError
    from probes._report_io import write_report_atomic

    def fail(*args, **kwargs):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(ReportWriteError) as info:
        write_report_atomic(h100_report(), tmp_path / "r.json")
    said = str(info.value)
    fix = {errno.ENOSPC: "free space, or", errno.EDQUOT: "free space, or",
           errno.EROFS: "choose a path on a writable file system with --out"}.get(code, fix)
    what, how = _said(said)
    assert reason in what and fix in how and not_said not in said, said


# ---- 3. `gpuplan catalog use` on a read-only location --------------------------------------

def test_catalog_use_on_a_read_only_file_system_says_gpuplan_home_not_chmod(
        capsys, read_only_filesystem):
    """Root passes access() on a read-only mount: the write itself meets EROFS."""
    assert main(["catalog", "use", "packaged"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "(read-only file system)" in err and "chmod" not in err, err
    assert err.endswith("To fix: set GPUPLAN_HOME to a folder on a writable file system"), err


def test_catalog_use_in_a_folder_the_user_may_not_write_says_chmod(capsys, monkeypatch):
    real_open = os.open

    def denied(path, flags, *args, **kwargs):
        if flags & os.O_CREAT:
            raise PermissionError(errno.EACCES, "Permission denied", path)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", denied)
    assert main(["catalog", "use", "packaged"]) == 2
    err = capsys.readouterr().err.strip()
    base = _paths.catalogs_dir()
    assert f"To fix: make {base} writable (chmod u+w {base}), or set GPUPLAN_HOME" in err, err


def test_a_catalog_install_on_a_read_only_store_is_one_error_not_a_traceback(monkeypatch):
    from catalog import _install

    _paths.catalogs_dir().mkdir(parents=True)

    def read_only(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    monkeypatch.setattr(os, "mkdir", read_only)
    with pytest.raises(CatalogFileError) as info:
        _install.install([], [], [], {}, name="mine")
    said = str(info.value)
    assert "(read-only file system)" in said and "chmod" not in said, said
    assert said.endswith("set GPUPLAN_HOME to a folder on a writable file system"), said


def test_a_dangling_link_in_the_path_is_named_not_mkdir(tmp_path):
    # "create it (mkdir -p linkdir)" failed: the link's name exists ("File exists")
    (tmp_path / "linkdir").symlink_to(tmp_path / "gone" / "dir")
    said = _error(_writes.check_output_path, tmp_path / "linkdir" / "x.html", what="report")
    assert f"{tmp_path / 'linkdir'} is a symbolic link to {tmp_path / 'gone' / 'dir'}, which " \
        "does not exist. To fix: create the folder it points to" in said, said
    assert "mkdir -p" not in said


def test_a_folder_of_another_user_is_not_told_to_chmod(tmp_path, monkeypatch):
    real_access, real_stat = os.access, os.stat
    monkeypatch.setattr(os, "access", lambda p, m, **kw: False if Path(p) == tmp_path
                        else real_access(p, m, **kw))
    monkeypatch.setattr(os, "statvfs", lambda p: type("V", (), {"f_flag": 0})())
    monkeypatch.setattr(os, "geteuid", lambda: 4242)  # not root, not the owner
    said = _error(_writes.check_output_path, tmp_path / "r.md", what="report")
    assert "read-only for you" in said and "belongs to another user" in said, said
    assert "chmod" not in said
    assert real_stat(tmp_path).st_uid != 4242


def test_a_name_too_long_says_shorter(tmp_path):
    said = _error(_writes.check_output_path, tmp_path / ("n" * 300 + ".html"), what="report")
    assert "file name too long" in said and "give shorter names (at most 255 bytes each)" \
        in said, said


def test_a_warm_cache_is_swept_of_a_killed_writers_leftover(tmp_path, monkeypatch):
    # a SIGTERM mid-write left .tmp-PID-HEX in the cache folder; only a cache write pruned
    # it, and a warm cache is never written (fault sweep 2026-12-05)
    from catalog import _cache

    monkeypatch.setattr(_cache, "_SWEPT", set())  # as a new process
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    old, young = folder / ".tmp-1-0123abcd", folder / ".tmp-2-4567cdef"
    for p in (old, young):
        p.write_text("")
    os.utime(old, (OLD, OLD))
    assert _cache._read_cache_file(folder / "catalog-x.bin") is None  # a read, no write
    assert not old.exists() and young.exists()


@pytest.mark.parametrize("name", ["\x1b]0;pwn\x07x.yaml", "a\nb.md", "tab\there.csv", "\x9bx"])
def test_an_output_name_with_control_characters_is_refused(tmp_path, name):
    """`--out $'\\e]0;pwn\\a…'` was echoed raw in "wrote …" and in the commands printed with
    it: escape sequences acting on the user's terminal."""
    from catalog import GpuplanError, check_output_path

    with pytest.raises(GpuplanError, match="the name contains control characters. To fix: "):
        check_output_path(str(tmp_path / name), what="report")
    check_output_path(str(tmp_path / "café 日本.md"), what="report")  # printable: fine


def test_reading_a_small_cache_file_needs_no_more_memory_than_the_file(tmp_path):
    """read(MAX_CACHE_BYTES + 1) set 512 MiB aside for a 192-byte file: under a 450 MB
    address-space limit every run after the first (cache filled) was a MemoryError traceback,
    where the same plan without the cache ran under 200 MB (fault sweep 2026-12-06)."""
    import subprocess
    import sys

    small = tmp_path / "small.bin"
    small.write_bytes(b"x" * 192)
    small.chmod(0o600)
    code = (
        "import resource, sys\n"
        "from pathlib import Path\n"
        "from catalog import _cache\n"
        "resource.setrlimit(resource.RLIMIT_AS, (400 * 2**20, 400 * 2**20))\n"
        "p = Path(sys.argv[1])\n"
        "assert _cache._read_cache_file(p) == b'x' * 192\n"
        "assert _cache._read_regular(p, _cache.MAX_CACHE_BYTES) == b'x' * 192\n"
        "print('ok')\n")
    done = subprocess.run([sys.executable, "-c", code, str(small)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-500:]
