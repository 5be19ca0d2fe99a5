"""`gpuplan probe remove`: take stored reports out of the probe database, so that estimates and
plans stop using their measurements (a run on a throttled node, a report of the wrong machine).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
from pathlib import Path

from catalog import record

from ..model import CalibrationError
from ._db import _write, db_path, ensure_removed_table

MAX_REMOVED_AT_ONCE = 900  # below SQLite's oldest limit on a statement's parameters (999)


@record
class RemovedReport:
    """A report ``remove_reports`` removed, as its row's columns say (read without parsing
    the report, so that a damaged one can be removed)."""

    id: int
    accelerator: str | None
    device_type: str | None
    created_utc: str | None
    source_path: str | None

    def as_dict(self) -> dict:
        return {"id": self.id, "accelerator": self.accelerator,
                "device_type": self.device_type, "created_utc": self.created_utc,
                "source_path": self.source_path}


def remove_reports(report_ids, *, db: Path | None = None) -> tuple[RemovedReport, ...]:
    """Remove the stored reports ``report_ids`` and their measurements, in one transaction:
    every id must be stored, or nothing is removed (CalibrationError naming the stored ids).
    The calibration is built from what is stored, so estimates and plans stop using them at
    once. Their ids are kept (``removed_reports``) so that no later report gets one."""
    ids = sorted(set(report_ids))
    if not ids or any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
        raise CalibrationError(f"report ids are whole numbers, got {list(report_ids)!r}. To "
                               "fix: pass the ids `gpuplan probe show` lists")
    if len(ids) > MAX_REMOVED_AT_ONCE:  # one SQL statement's parameters
        raise CalibrationError(f"{len(ids):,} report ids at once; at most "
                               f"{MAX_REMOVED_AT_ONCE:,}. To fix: remove them in parts")
    path = db or db_path()
    if not path.exists():  # removing from nothing creates no database
        raise CalibrationError(f"no probe report {ids[0]}: none is stored ({path}). To fix: "
                               "`gpuplan probe show` lists the stored reports")

    def work(conn: sqlite3.Connection) -> tuple[RemovedReport, ...]:
        marks = ",".join("?" * len(ids))
        rows = conn.execute("SELECT id, accelerator, device_type, created_utc, source_path, "
                            f"sha256 FROM reports WHERE id IN ({marks}) ORDER BY id",
                            ids).fetchall()
        missing = sorted(set(ids) - {r[0] for r in rows})
        if missing:
            stored = [r[0] for r in conn.execute("SELECT id FROM reports ORDER BY id")]
            listed = ", ".join(map(str, stored[:20])) + (", …" if len(stored) > 20 else "")
            raise CalibrationError(
                f"no probe report {', '.join(map(str, missing))} (stored: "
                f"{listed or 'none'}); nothing was removed. To fix: pass the ids `gpuplan "
                "probe show` lists")
        ensure_removed_table(conn)
        now = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        conn.execute(f"DELETE FROM measurements WHERE report_id IN ({marks})", ids)
        conn.execute(f"DELETE FROM reports WHERE id IN ({marks})", ids)
        conn.executemany("INSERT OR REPLACE INTO removed_reports VALUES (?,?,?)",
                         [(r[0], r[5], now) for r in rows])
        return tuple(RemovedReport(id=r[0], accelerator=r[1], device_type=r[2],
                                   created_utc=r[3], source_path=r[4]) for r in rows)

    return _write(db, work)
