"""Hostile paths and files for the probe report and the user's output files, and the names a
catalog refresh is given (the leftovers of issue 16).

- the kernel's own files (/proc, /sys, /dev but /dev/shm, or a proc/sysfs/devtmpfs mount
  anywhere) are refused for reading and writing, by place and file-system type: these tests
  run as root too, where every permission check passes;
- a probe report is read from a regular file only, at most 16 MiB whatever the file claims,
  and written atomically (temporary file in the same folder, fsync, rename, the temporary
  file removed on failure) and never over a device, FIFO, socket or directory;
- a catalog refresh checks its cloud and region names before any source is contacted.

Nothing here writes outside pytest's temporary folders: ``_writes_stay_in_tmp`` turns any
write elsewhere into a failure, so a regression fails the test instead of creating a file in
/dev. Devices are only ever stat'ed or read (/dev/null, /dev/zero).
"""

from __future__ import annotations

import errno
import os
import resource
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from probe_reports import h100_report

import catalog._files as catalog_files
import probes._report_io as report_io
from catalog import (
    CatalogFileError,
    GpuplanError,
    check_output_path,
    read_user_text,
    write_text_atomic,
)
from probes import ProbesError, ReportError, load_report, report_from_bytes, report_to_json
from probes._errors import ReportWriteError
from probes._report_io import (
    MAX_REPORT_BYTES,
    check_report_path,
    read_report_bytes,
    write_report_atomic,
)

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


@pytest.fixture(autouse=True)
def _writes_stay_in_tmp(tmp_path_factory, monkeypatch):
    """Any write, create, rename or mkdir outside pytest's temporary folders raises."""
    allowed = str(tmp_path_factory.getbasetemp().resolve())

    def inside(path) -> bool:
        if isinstance(path, int):  # an open file descriptor
            return True
        real = os.path.realpath(os.fspath(path))
        return real == allowed or real.startswith(allowed + os.sep)

    def guard(name, real, *, writes=lambda *a, **k: True, paths=(0,)):
        def call(*args, **kwargs):
            if writes(*args, **kwargs):
                for i in paths:
                    if i < len(args) and not inside(args[i]):
                        raise AssertionError(f"test guard: {name}({args[i]!r}) outside tmp")
            return real(*args, **kwargs)
        return call

    monkeypatch.setattr(os, "open", guard("os.open", os.open, writes=lambda p, flags=0, *a,
                                          **k: bool(flags & WRITE_FLAGS)))
    for name in ("replace", "rename"):
        monkeypatch.setattr(os, name, guard(f"os.{name}", getattr(os, name), paths=(0, 1)))
    for name in ("mkdir", "mkfifo", "unlink"):
        monkeypatch.setattr(os, name, guard(f"os.{name}", getattr(os, name)))


def _one_line(exc: BaseException) -> str:
    message = str(exc)
    assert "\n" not in message and "To fix:" in message, message
    return message


def _unix_socket(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    return sock


def _fake_mountinfo(tmp_path: Path, point: Path, fstype: str) -> Path:
    """A mount table where ``point`` is a ``fstype`` mount (a space in its name escaped)."""
    escaped = str(point).replace(" ", "\\040")
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        f"40 27 0:50 / {escaped} rw,relatime shared:7 - {fstype} none rw\n")
    return table


# ---- 1. catalog: the kernel's own files, for every read and write of a user's file ----------

SYSTEM_OUTPUTS = [
    "/dev/gpuplan-hostile-report.md",  # as root this would be created on devtmpfs
    "/dev/pts/gpuplan-report.md",
    "/sys/gpuplan-report.md",
    "/sys/kernel/mm/transparent_hugepage/enabled",  # a kernel setting root may "replace"
    "/proc/gpuplan-report.md",
    "/proc/sys/vm/gpuplan-report.md",
]


@pytest.mark.parametrize("path", SYSTEM_OUTPUTS)
def test_outputs_among_the_kernels_files_are_refused_before_writing(path):
    existed = os.path.lexists(path)
    tree = "/" + path.split("/")[1]
    message = _one_line(pytest.raises(CatalogFileError, check_output_path, path,
                                      what="report").value)
    assert f"is under {tree}" in message and "the kernel's own files" in message
    with pytest.raises(CatalogFileError):
        write_text_atomic(path, "x", what="report")
    assert os.path.lexists(path) == existed


def test_dev_shm_is_an_ordinary_place():
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm here")
    assert check_output_path("/dev/shm/gpuplan-report.md", what="report") == \
        Path("/dev/shm/gpuplan-report.md")


@pytest.mark.parametrize("path", ["/proc/self/status", "/proc/self/environ", "/sys"])
def test_reading_the_kernels_files_is_refused(path):
    # /proc files claim 0 bytes; environ would put secrets into an error message's context.
    message = _one_line(pytest.raises(CatalogFileError, read_user_text, path,
                                      what="team plan").value)
    assert "/" + path.split("/")[1] in message and "kernel's own files" in message


def test_a_symlink_into_sys_is_refused_where_it_points(tmp_path):
    (tmp_path / "link").symlink_to("/sys/kernel")
    message = _one_line(pytest.raises(CatalogFileError, check_output_path,
                                      tmp_path / "link" / "r.md", what="report").value)
    assert "is under /sys" in message


def test_devices_fifos_and_sockets_keep_their_precise_message(tmp_path, no_hang):
    os.mkfifo(tmp_path / "fifo")
    sock = _unix_socket(tmp_path / "sock")
    try:
        for path, kind in (("/dev/null", "a device"), (tmp_path / "fifo", "a named pipe"),
                           (tmp_path / "sock", "a socket")):
            message = _one_line(pytest.raises(CatalogFileError, write_text_atomic, path, "x",
                                              what="report").value)
            assert f"is {kind}" in message and "refusing to replace it" in message
    finally:
        sock.close()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert stat.S_ISFIFO(os.lstat(tmp_path / "fifo").st_mode)
    assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)


@pytest.mark.parametrize("fstype", ["proc", "sysfs", "devtmpfs", "debugfs", "cgroup2"])
def test_a_pseudo_file_system_mounted_anywhere_is_refused(tmp_path, monkeypatch, fstype):
    place = tmp_path / "chroot proc"  # a chroot's /proc, with a space to unescape
    place.mkdir()
    monkeypatch.setattr(catalog_files, "MOUNTINFO", str(_fake_mountinfo(tmp_path, place,
                                                                         fstype)))
    message = _one_line(pytest.raises(CatalogFileError, check_output_path, place / "r.md",
                                      what="report").value)
    assert f"is on a {fstype} file system" in message
    monkeypatch.setattr(report_io, "MOUNTINFO", catalog_files.MOUNTINFO)
    assert f"is on a {fstype} file system" in _one_line(
        pytest.raises(ReportWriteError, check_report_path, place / "r.json").value)


def test_an_ordinary_mount_is_not_refused(tmp_path, monkeypatch):
    place = tmp_path / "scratch"
    place.mkdir()
    monkeypatch.setattr(catalog_files, "MOUNTINFO", str(_fake_mountinfo(tmp_path, place,
                                                                         "tmpfs")))
    assert check_output_path(place / "r.md", what="report") == place / "r.md"
    assert catalog_files.filesystem_type(str(place / "deeper" / "r.md")) == "tmpfs"
    assert catalog_files.filesystem_type("/proc/1") == "proc"


def test_probes_and_catalog_refuse_the_same_places(tmp_path):
    # probes keeps its own copy of the rule (it runs on nodes without catalog): pin that the
    # two agree.
    (tmp_path / "to-proc").symlink_to("/proc/self")
    paths = [*SYSTEM_OUTPUTS, "/dev/shm/r.json", str(tmp_path / "r.json"),
             str(tmp_path / "to-proc" / "r.json"), "/dev", "/", str(tmp_path)]
    for path in paths:
        ours = catalog_files.system_location(path)
        theirs = report_io._system_location(path)
        assert (ours is None) == (theirs is None), path
        if ours is not None:
            assert ours.split(" (")[0] == theirs.split(" (")[0], path


# ---- 2. the probe report: reading ------------------------------------------------------------

def test_reading_a_report_from_a_fifo_is_refused_without_blocking(tmp_path, no_hang):
    os.mkfifo(tmp_path / "report.json")
    message = _one_line(pytest.raises(ReportError, load_report, tmp_path / "report.json").value)
    assert "named pipe" in message


def test_reading_dev_zero_as_a_report_is_refused_in_bounded_memory():
    # In a child with 1 GiB of address space and 60 s: the unbounded reader this replaced
    # ran out of memory here; a refusal takes a few milliseconds.
    code = ("from probes import load_report, ReportError\n"
            "try:\n    load_report('/dev/zero')\nexcept ReportError as exc:\n    print(exc)\n")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2**30, 2**30))

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, preexec_fn=limit, env=env, check=False)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert "'/dev/zero': it is a device, not a report file. To fix:" in proc.stdout


def test_a_report_larger_than_16_mib_is_refused_by_its_size(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:  # sparse: no 16 MiB written
        handle.truncate(MAX_REPORT_BYTES + 1)
    assert "larger than the 16 MiB a report can be" in _one_line(
        pytest.raises(ReportError, load_report, path).value)
    with open(path, "wb") as handle:
        handle.truncate(MAX_REPORT_BYTES)  # exactly the bound: read (and then refused as JSON)
    assert len(read_report_bytes(path)) == MAX_REPORT_BYTES


def test_the_read_stops_at_the_bound_when_the_size_lies():
    # /proc files say 0 bytes: only the bounded read stops a file that claims less than it has.
    assert os.stat("/proc/self/status").st_size == 0
    assert "larger than the" in _one_line(
        pytest.raises(ReportError, read_report_bytes, "/proc/self/status", max_bytes=64).value)


@pytest.mark.parametrize(("raw", "fragment"), [
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
    (b'{"schema_version": 3, "x": ' + b"9" * 5000 + b"}", "5000-digit number"),
    (b'{"schema_version": NaN}', "NaN is not a number a report may hold"),
    (b'{"schema_version": 3, "x": -Infinity}', "-Infinity is not a number"),
    (b'{"schema_version": 3, "x": 1e400}', "1e400 is too large for a number"),
])
def test_json_a_report_cannot_hold_is_a_report_error(raw, fragment):
    # Before: RecursionError and ValueError escaped (a traceback in `probe ingest` and the
    # app's upload), and NaN was accepted as a measurement.
    assert fragment in _one_line(pytest.raises(ReportError, report_from_bytes, raw).value)


def test_nan_in_a_measurement_is_refused():
    text = report_to_json(h100_report()).replace('"tflops": 650.0', '"tflops": NaN', 1)
    assert "NaN" in text
    with pytest.raises(ReportError, match="NaN is not a number"):
        report_from_bytes(text.encode())


# ---- 2. the probe report: writing ------------------------------------------------------------

def test_a_fifo_at_the_destination_is_refused_and_kept(tmp_path, no_hang):
    os.mkfifo(tmp_path / "report.json")
    message = _one_line(pytest.raises(ReportWriteError, write_report_atomic, h100_report(),
                                      tmp_path / "report.json").value)
    assert "is a named pipe (FIFO); refusing to replace it" in message
    assert stat.S_ISFIFO(os.lstat(tmp_path / "report.json").st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_symlink_to_a_device_is_refused_and_kept(tmp_path):
    (tmp_path / "report.json").symlink_to("/dev/null")
    message = _one_line(pytest.raises(ReportWriteError, write_report_atomic, h100_report(),
                                      tmp_path / "report.json").value)
    assert "is a device; refusing to replace it" in message
    assert os.readlink(tmp_path / "report.json") == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_socket_or_a_directory_at_the_destination_is_refused(tmp_path):
    sock = _unix_socket(tmp_path / "s")
    try:
        assert "is a socket" in _one_line(pytest.raises(
            ReportWriteError, write_report_atomic, h100_report(), tmp_path / "s").value)
    finally:
        sock.close()
    message = _one_line(pytest.raises(ReportWriteError, write_report_atomic, h100_report(),
                                      tmp_path).value)
    assert "is a directory" in message and f"e.g. {tmp_path / 'report.json'}" in message


@pytest.mark.parametrize("path", ["/dev/gpuplan-hostile-report.json", "/dev/null",
                                  "/proc/gpuplan-report.json", "/sys/gpuplan-report.json",
                                  "/dev/gpuplan-new-folder/report.json"])
def test_a_report_is_never_written_among_the_kernels_files(path):
    with pytest.raises(ReportWriteError) as info:
        write_report_atomic(h100_report(), path)
    _one_line(info.value)
    assert not os.path.lexists("/dev/gpuplan-hostile-report.json")
    assert not os.path.lexists("/dev/gpuplan-new-folder")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_the_write_is_a_temp_file_fsynced_and_renamed_in_the_same_folder(tmp_path, monkeypatch):
    steps: list[tuple] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        steps.append(("fsync",))
        return real_fsync(fd)

    def replace(src, dst):
        steps.append(("replace", Path(src).parent, Path(dst).parent, Path(src).name))
        return real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path / "sub" / "report.json"  # a missing folder is created
    write_report_atomic(h100_report(), target)
    assert steps[0] == ("fsync",)
    _, src_dir, dst_dir, name = steps[1]
    assert src_dir == dst_dir == target.parent and name.startswith(".report.json.")
    assert load_report(target) == h100_report()


@pytest.mark.parametrize("broken", ["write", "fsync", "replace"])
def test_a_failed_write_leaves_the_old_report_and_no_temp_file(tmp_path, monkeypatch, broken):
    path = tmp_path / "report.json"
    write_report_atomic(h100_report(), path)
    before = path.read_bytes()

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    working = getattr(os, broken)
    monkeypatch.setattr(os, broken, full)
    error = pytest.raises(ReportWriteError, write_report_atomic,
                          h100_report(bf16_tflops=700.0), path).value
    monkeypatch.setattr(os, broken, working)
    assert "cannot write it (disk full)" in _one_line(error)
    assert isinstance(error, ProbesError) and isinstance(error, OSError)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_a_new_report_gets_the_umask_mode_not_0600(tmp_path):
    old = os.umask(0o022)
    try:
        write_report_atomic(h100_report(), tmp_path / "report.json")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "report.json").st_mode) == 0o644


def test_a_symlink_to_a_report_is_followed_and_kept(tmp_path):
    write_report_atomic(h100_report(bf16_tflops=700.0), tmp_path / "real.json")  # an earlier
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    write_report_atomic(h100_report(), tmp_path / "link.json")
    assert (tmp_path / "link.json").is_symlink()
    assert load_report(tmp_path / "real.json") == h100_report()


def test_an_unwritable_folder_is_found_by_trying(tmp_path, read_only_filesystem):
    # Root passes access(); a read-only mount is found only by creating a file.
    message = _one_line(pytest.raises(ReportWriteError, check_report_path,
                                      tmp_path / "r.json", try_create=True).value)
    assert "cannot create a file in" in message and "read-only file system" in message


# ---- 4. catalog refresh: names checked before any source is contacted -----------------------

class _Spy:
    """A source that records being asked; it never reaches a network."""

    def __init__(self, cloud: str) -> None:
        self.cloud, self.calls = cloud, []

    def fetch(self, regions, progress):
        from catalog.sources._common import SourceUnavailable

        self.calls.append(regions)
        raise SourceUnavailable(self.cloud, "offline in tests. To fix: nothing")


@pytest.mark.parametrize(("clouds", "regions", "fragment"), [
    (["aws"], ["us-east-9"], "unknown aws region 'us-east-9'. Did you mean 'us-east-2'"),
    (["aws"], ["us-central1"], "'us-central1' is a region of gcp: add gcp to `clouds`"),
    (["aws", "gcp"], ["us-centrl1"], "Did you mean 'us-central1'"),
    (["aws"], ["us-east-1", "eu-wset-1"], "unknown aws region 'eu-wset-1'"),
    (["aws"], [], "no region to refresh"),
    (["awz"], None, "unknown cloud 'awz'. Did you mean 'aws'?"),
    ([], None, "no cloud to refresh"),
])
def test_refresh_checks_names_before_contacting_a_source(clouds, regions, fragment):
    from catalog import refresh_catalog

    spies = {c: _Spy(c) for c in ("aws", "gcp", "azure")}
    with pytest.raises(GpuplanError) as info:
        refresh_catalog(clouds=clouds, regions=regions, sources=spies)
    assert fragment in _one_line(info.value)
    assert all(not s.calls for s in spies.values()), "a source was contacted"


def test_refresh_with_known_regions_still_reaches_the_source():
    from catalog import refresh_catalog
    from catalog.sources._common import RefreshError

    spy = _Spy("aws")
    with pytest.raises(RefreshError, match="no cloud could be refreshed"):
        refresh_catalog(clouds=["aws"], regions=["us-east-1", "us-east-1"],
                        sources={"aws": spy})
    assert spy.calls == [["us-east-1"]]


def test_gpuplan_catalog_refresh_refuses_a_misspelt_region_offline(monkeypatch, capsys):
    import catalog._refresh as refresh
    from planner.cli import main

    spies = {c: _Spy(c) for c in ("aws", "gcp", "azure")}
    monkeypatch.setattr(refresh, "default_sources", lambda current: spies)
    assert main(["catalog", "refresh", "--cloud", "aws", "--region", "us-est-1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: unknown aws region 'us-est-1'. Did you mean ")
    assert "'us-east-1'" in err.split("?")[0]
    assert "\n" not in err and not spies["aws"].calls
