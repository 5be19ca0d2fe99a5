"""A measured report is not lost to a full disk.

The probes measure for minutes on a rented node and write the report at the end: a disk that
filled meanwhile (or a folder gone) used to leave an error and nothing else, the paid run to
be done again. ``check_out`` (the path, then ``check_space``) refuses a nearly full disk
before measuring;
``write_or_rescue`` writes the report where asked and, when that fails, to a rescue file in
the system's temporary folder or the home folder, and its error names that file.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from probes._args import is_rank_zero
from probes._errors import ReportWriteError
from probes._report_io import check_report_path, write_report_atomic

MIN_FREE_BYTES = 4 * 2**20  # a full node's report is ~100 KB; below this a disk is all but full


def check_out(path: str | os.PathLike[str], *, what: str) -> None:
    """Before minutes of measuring, not after (rank 0 only: the others write nothing): a
    report path rank 0 can create — the trial file finds what access() cannot (root passes
    it; a read-only mount, /proc) — on a disk with room for it (``check_space``)."""
    if not is_rank_zero():
        return
    check_report_path(path, what=what, try_create=True)
    check_space(path, what=what)


def check_space(path: str | os.PathLike[str], *, what: str) -> None:
    """Refuse, before measuring, a report path on a disk with under MIN_FREE_BYTES free."""
    folder = Path(os.path.abspath(path)).parent
    while not folder.exists() and folder != folder.parent:  # missing folders are created
        folder = folder.parent
    try:
        free = shutil.disk_usage(folder).free
    except OSError:  # no figure to go by: the write itself will say
        return
    if free < MIN_FREE_BYTES:
        raise ReportWriteError(f"{what} {path}: only {free // 1024:,} KiB free on that disk, "
                               f"under the {MIN_FREE_BYTES // 2**20} MiB a report is given. "
                               "To fix: free space, or choose another location with --out.")


def write_or_rescue(report, out: str | os.PathLike[str]) -> Path:
    """``write_report_atomic(report, out)``; when it fails, the report to a rescue file
    (gpuplan-probe-report-<UTC time>-<pid>.json in the temporary folder, else the home
    folder) and a ReportWriteError naming it, or the first error when no rescue worked."""
    try:
        return write_report_atomic(report, out)
    except ReportWriteError as exc:
        said, _, fix = str(exc).partition(" To fix: ")
        said = said.rstrip(".")
        # the write's own fix (free space, ulimit -f, a writable file system, chmod): "free
        # space" whatever failed sent a user with a read-only mount or a ulimit to the wrong
        # fix; the run is over, so --out is no longer the way to choose another place
        fix = fix.strip().rstrip(".").replace(" with --out", "") or "free space"
        name = f"gpuplan-probe-report-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}" \
               f"-{os.getpid()}.json"
        for folder in (tempfile.gettempdir(), os.path.expanduser("~")):
            rescue = Path(folder) / name
            try:
                write_report_atomic(report, rescue)
            except (ReportWriteError, OSError):
                continue
            raise ReportWriteError(f"{said}; the measured report was saved to {rescue} "
                                   f"instead. To fix: {fix}, then mv {rescue} {out}"
                                   ) from None
        raise
