"""Which existing file a report may replace: only an earlier report. `probe run --out` runs as
root on rented nodes, where access() lets anything through, and replaced whatever the path
named — /etc/passwd in a sweep, a training script after a typo (`--out train.py`)."""

from __future__ import annotations

import json
from pathlib import Path

from probes._errors import ReportWriteError


def refuse_unless_report(target: Path, *, what: str, max_bytes: int) -> None:
    """ReportWriteError unless the existing file ``target`` is a probe report (a JSON object
    with a ``schema_version``, as every report and workload report has) or empty; a file that
    cannot be read is left to the write, which says why."""
    try:
        with open(target, "rb") as handle:
            head = handle.read(max_bytes + 1)
    except OSError:
        return
    if not head.strip():  # nothing to lose (a `mktemp` name, an empty placeholder)
        return
    try:
        data = json.loads(head) if len(head) <= max_bytes else None
    except (ValueError, RecursionError):
        data = None
    if not (isinstance(data, dict) and "schema_version" in data):
        raise ReportWriteError(f"{what} {target}: exists and is not a probe report; refusing to "
                               "replace it. To fix: choose another path (e.g. --out "
                               "report.json), or move that file away first.")
