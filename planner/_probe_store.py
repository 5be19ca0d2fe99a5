"""The probe database: ingested reports in SQLite, and the Calibration the model reads.

One file, ``<user data dir>/probes.db``, schema-versioned with ``PRAGMA user_version``:

    reports(id, sha256 UNIQUE, ingested_utc, created_utc, source_path, accelerator, gpu_model,
            gpu_count, node_count, world_size, cloud, instance_type, region, report_json)
    measurements(report_id → reports.id, kind, key, value, unit)
        kind ∈ matmul_tflops (key = dtype), busbw_intra_gb_per_s / busbw_world_gb_per_s
        (key = op), device_copy_gb_per_s

``load_calibration`` takes, per accelerator (and per instance type for networks), the newest
report's values. Reports from a CPU run are stored but never calibrate a GPU.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from catalog import Catalog, UnknownNameError
from catalog._paths import user_data_dir

from ._calibration import Calibration, Measurement
from ._errors import CalibrationError

SCHEMA_VERSION = 1
_DDL = """
CREATE TABLE reports (
    id INTEGER PRIMARY KEY,
    sha256 TEXT NOT NULL UNIQUE,
    ingested_utc TEXT NOT NULL,
    created_utc TEXT NOT NULL,
    source_path TEXT,
    accelerator TEXT,
    gpu_model TEXT,
    device_type TEXT NOT NULL,
    gpu_count INTEGER,
    node_count INTEGER,
    world_size INTEGER,
    cloud TEXT,
    instance_type TEXT,
    region TEXT,
    report_json TEXT NOT NULL
);
CREATE TABLE measurements (
    report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    value REAL NOT NULL,
    unit TEXT NOT NULL
);
CREATE INDEX measurements_kind ON measurements(kind, key);
"""
DTYPE_NAMES = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16", "fp16": "fp16",
               "fp8_e4m3": "fp8"}
LARGE_MESSAGE_BYTES = 64 * 2**20  # busbw plateau: messages of 64 MiB and more


def db_path() -> Path:
    return user_data_dir() / "probes.db"


@contextmanager
def _connect(path: Path | None = None, *, create: bool = True) -> Iterator[sqlite3.Connection]:
    path = path or db_path()
    if not create and not path.exists():
        yield None
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        conn = sqlite3.connect(path)
    except sqlite3.Error as exc:
        raise CalibrationError(f"{path}: cannot open the probe database ({exc}). To fix: "
                               "check the permissions of the gpuplan data directory") from None
    try:
        conn.execute("PRAGMA foreign_keys = ON")
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            with conn:
                conn.executescript(_DDL)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise CalibrationError(f"{path}: probe database schema {version} is newer than this "
                                   f"gpuplan understands ({SCHEMA_VERSION}). To fix: upgrade "
                                   "gpuplan, or move the file away")
        yield conn
    except sqlite3.DatabaseError as exc:
        raise CalibrationError(f"{path}: the probe database is damaged ({exc}). To fix: move "
                               "it away and ingest the reports again") from None
    finally:
        conn.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredReport:
    id: int
    created_utc: str
    ingested_utc: str
    accelerator: str | None
    gpu_model: str | None
    device_type: str
    gpu_count: int | None
    node_count: int | None
    instance_type: str | None
    cloud: str | None
    region: str | None
    source_path: str | None
    measurements: dict

    def as_dict(self) -> dict:
        return {"id": self.id, "created_utc": self.created_utc,
                "ingested_utc": self.ingested_utc, "accelerator": self.accelerator,
                "gpu_model": self.gpu_model, "device_type": self.device_type,
                "gpu_count": self.gpu_count, "node_count": self.node_count,
                "instance_type": self.instance_type, "cloud": self.cloud,
                "region": self.region, "source_path": self.source_path,
                "measurements": self.measurements}


def _measurements(report) -> list[tuple[str, str, float, str]]:
    rows = []
    if report.matmul:
        for d in report.matmul.dtypes:
            if d.status == "measured" and d.best_tflops and d.dtype in DTYPE_NAMES:
                rows.append(("matmul_tflops", DTYPE_NAMES[d.dtype], d.best_tflops, "TFLOP/s"))
    if report.memory:
        for p in report.memory.points:
            if p.status == "measured" and p.name == "device_copy" and p.gb_per_s:
                rows.append(("device_copy_gb_per_s", "copy", p.gb_per_s, "GB/s"))
    if report.collectives and report.collectives.status == "measured":
        for s in report.collectives.series:
            if s.status != "measured" or not s.points:
                continue
            large = [p.busbw_gb_per_s for p in s.points if p.size_bytes >= LARGE_MESSAGE_BYTES]
            best = max(large or [p.busbw_gb_per_s for p in s.points])
            kind = "busbw_intra_gb_per_s" if s.scope == "intra_node" else "busbw_world_gb_per_s"
            rows.append((kind, s.op, best, "GB/s"))
    return rows


def _accelerator_of(report, catalog: Catalog, override: str | None) -> str | None:
    env = report.environment
    if override:
        return catalog.resolve_accelerator(override)
    if env is None or env.device_type != "cuda":
        return None
    if env.gpu_model:
        try:
            return catalog.resolve_accelerator(env.gpu_model)
        except UnknownNameError:
            pass
    if env.instance_type:
        try:
            return catalog.instance_type(env.instance_type, env.cloud).accelerator
        except Exception:  # noqa: BLE001 - an unknown type just means "not from the catalog"
            pass
    raise CalibrationError(
        f"cannot tell which catalog accelerator {env.gpu_model!r} is. To fix: pass "
        "--accelerator NAME (see `gpuplan gpus`)")


def ingest(path: str | Path, catalog: Catalog, *, accelerator: str | None = None,
           db: Path | None = None) -> StoredReport:
    """Validate a probe report and store it; re-ingesting the same file is a no-op."""
    from probes import ReportError, load_report

    path = Path(path)
    try:
        report = load_report(path)
    except ReportError as exc:
        raise CalibrationError(str(exc)) from None
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    acc = _accelerator_of(report, catalog, accelerator)
    env = report.environment
    rows = _measurements(report)
    with _connect(db) as conn:
        existing = conn.execute("SELECT id FROM reports WHERE sha256 = ?", (digest,)).fetchone()
        if existing:
            return get_report(existing[0], db=db)
        with conn:
            cur = conn.execute(
                "INSERT INTO reports (sha256, ingested_utc, created_utc, source_path, "
                "accelerator, gpu_model, device_type, gpu_count, node_count, world_size, cloud,"
                " instance_type, region, report_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (digest, dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                 report.created_utc, str(path.resolve()), acc,
                 env.gpu_model if env else None, env.device_type if env else "unknown",
                 env.gpu_count if env else None, env.node_count if env else None,
                 env.world_size if env else None, env.cloud if env else None,
                 env.instance_type if env else None, env.region if env else None,
                 raw.decode("utf-8")))
            rid = cur.lastrowid
            conn.executemany("INSERT INTO measurements VALUES (?,?,?,?,?)",
                             [(rid, *r) for r in rows])
    return get_report(rid, db=db)


def _row_to_report(conn, row) -> StoredReport:
    meas: dict = {}
    for kind, key, value in conn.execute(
            "SELECT kind, key, value FROM measurements WHERE report_id = ?", (row[0],)):
        meas.setdefault(kind, {})[key] = value
    return StoredReport(id=row[0], created_utc=row[1], ingested_utc=row[2], accelerator=row[3],
                        gpu_model=row[4], device_type=row[5], gpu_count=row[6],
                        node_count=row[7], instance_type=row[8], cloud=row[9], region=row[10],
                        source_path=row[11], measurements=meas)


_COLUMNS = ("id, created_utc, ingested_utc, accelerator, gpu_model, device_type, gpu_count, "
            "node_count, instance_type, cloud, region, source_path")


def get_report(report_id: int, *, db: Path | None = None) -> StoredReport:
    with _connect(db) as conn:
        row = conn.execute(f"SELECT {_COLUMNS} FROM reports WHERE id = ?",
                           (report_id,)).fetchone()
        if row is None:
            raise CalibrationError(f"no probe report {report_id}. To fix: see `gpuplan probe "
                                   "show`")
        return _row_to_report(conn, row)


def list_reports(*, db: Path | None = None) -> list[StoredReport]:
    with _connect(db, create=False) as conn:
        if conn is None:
            return []
        rows = conn.execute(f"SELECT {_COLUMNS} FROM reports ORDER BY id").fetchall()
        return [_row_to_report(conn, r) for r in rows]


def calibration_from(reports: list[StoredReport]) -> Calibration:
    """Newest report wins per accelerator (matmul, copy, intra-node) and per instance type
    (cross-node bus bandwidth)."""
    cal = Calibration()
    for r in sorted(reports, key=lambda r: (r.created_utc, r.id)):
        if r.device_type != "cuda" or not r.accelerator:
            continue
        where = f"probe report {r.id}" + (f" on {r.instance_type}" if r.instance_type else "") \
            + f", {r.created_utc[:10]}"
        for dtype, value in r.measurements.get("matmul_tflops", {}).items():
            cal.matmul_tflops[(r.accelerator, dtype)] = Measurement(value, where)
        copy = r.measurements.get("device_copy_gb_per_s", {}).get("copy")
        if copy:
            cal.hbm_gb_per_s[r.accelerator] = Measurement(copy, where)
        intra = r.measurements.get("busbw_intra_gb_per_s", {}).get("all_reduce")
        if intra:
            cal.intra_busbw_gb_per_s[r.instance_type or r.accelerator] = Measurement(intra, where)
        world = r.measurements.get("busbw_world_gb_per_s", {}).get("all_reduce")
        if world and r.instance_type and (r.node_count or 1) > 1:
            cal.inter_busbw_gb_per_s[r.instance_type] = Measurement(world, where)
    return cal


def load_calibration(catalog: Catalog | None = None, *, db: Path | None = None) -> Calibration:
    del catalog  # accelerators were resolved against the catalog at ingest time
    return calibration_from(list_reports(db=db))


def report_json(report_id: int, *, db: Path | None = None) -> dict:
    with _connect(db) as conn:
        row = conn.execute("SELECT report_json FROM reports WHERE id = ?",
                           (report_id,)).fetchone()
        if row is None:
            raise CalibrationError(f"no probe report {report_id}")
        return json.loads(row[0])
