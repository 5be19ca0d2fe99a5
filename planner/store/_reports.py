"""Probe reports in the database: ingest (from a file, or bytes already in memory), read back,
and the figures a report offers (the measurements table; the workload layer it measured).

A report is validated by the probes' own parser, its accelerator resolved against the catalog
(or given), and stored whole (its JSON) with one row per measured figure. Re-ingesting the same
bytes, or another copy of the same run's measurements, stores nothing new; a different
``accelerator`` relabels the stored report, when that report's own GPU name, instance and
memory allow it (as they must the file's).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path

from catalog import Catalog, GpuplanError, quoted, record

from ..model import CalibrationError, freeze, thaw
from ._copy_facts import other_facts
from ._damage import StoreConnection, rebuild_fix, stored_json
from ._db import _reading, _write, next_report_id
from ._facts import instance_contradiction, memory_contradiction
from ._fingerprint import Fingerprint, measurement_fingerprint, rows_close
from ._offered import measurement_rows


@record
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
    measurements: Mapping = field(default_factory=dict)  # kind -> {key: value}, read-only
    quick: bool = False
    schema_version: int = 1
    world_size: int | None = None
    gpus_per_node: int | None = None  # ranks per node in the run
    ingest_status: str = "stored"  # what the last ingest did: stored / already stored ...
    # the same as one fixed value: "stored" (new), "already_stored" (this file, or a copy of
    # its run, was stored before) or "relabelled" (already stored, and `accelerator` changed
    # the stored report's accelerator)
    ingest_outcome: str = "stored"

    def __post_init__(self) -> None:
        object.__setattr__(self, "measurements", freeze(self.measurements))

    def as_dict(self) -> dict:
        return {"id": self.id, "created_utc": self.created_utc,
                "ingested_utc": self.ingested_utc, "accelerator": self.accelerator,
                "gpu_model": self.gpu_model, "device_type": self.device_type,
                "gpu_count": self.gpu_count, "node_count": self.node_count,
                "instance_type": self.instance_type, "cloud": self.cloud,
                "region": self.region, "source_path": self.source_path,
                "quick": self.quick, "schema_version": self.schema_version,
                "world_size": self.world_size, "gpus_per_node": self.gpus_per_node,
                "measurements": thaw(self.measurements)}


def _same_run(conn: StoreConnection, fingerprint: Fingerprint | None,
              rows: list[tuple[str, str, float, str]],
              new_report) -> tuple[int, str, str, object] | None:
    """(id, accelerator, how: ``Fingerprint.same_run``, the parsed report) of a stored report
    with the same measurements, if any. Only reports whose measurement rows are the same as
    ``rows`` (a copy's are, within SAME_RUN_REL) are parsed, so an ingest does not re-read
    every stored report. A stored copy refused whole (``probes.report_refusal``: edited, a
    quick run's settings, no GPU) is not the run of ``new_report`` where that one is not
    refused: an edited copy stored first made the probes' own file "already stored" and
    calibrate nothing. (Either refusal is judged only for a copy found: most ingests find
    none.)"""
    from probes import ReportError, parse_report, report_refusal

    if fingerprint is None:
        return None
    want = sorted((kind, key, float(value)) for kind, key, value, _ in rows)
    stored: dict[int, list] = {}
    for rid, kind, key, value in conn.execute("SELECT report_id, kind, key, value FROM "
                                              "measurements"):
        stored.setdefault(rid, []).append((kind, key, value))
    for rid, acc in conn.execute("SELECT id, accelerator FROM reports ORDER BY id").fetchall():
        try:
            if not rows_close(sorted(stored.get(rid, [])), want):
                continue
        except TypeError:  # a hand-edited row of another type: not a copy of this report
            continue
        text = conn.execute("SELECT report_json FROM reports WHERE id = ?", (rid,)).fetchone()[0]
        try:
            report = parse_report(stored_json(text, conn), source=f"probe report {rid}")
        except (ReportError, TypeError, ValueError):  # JSONDecodeError is a ValueError
            continue  # an unreadable row is refused when the calibration loads
        stored_print = measurement_fingerprint(report)
        how = None if stored_print is None else stored_print.same_run(fingerprint)
        if how is not None and (report_refusal(report) is None
                                or report_refusal(new_report) is not None):
            return rid, acc, how, report
    return None


def _accelerator_of(report, catalog: Catalog, override: str | None) -> str | None:
    """The catalog accelerator the report's figures calibrate (None: a CPU run's), held to
    its memory: a report of another GPU is refused before it is stored."""
    name = _accelerator_named(report, catalog, override)
    if name is not None and (why := memory_contradiction(report.environment,
                                                         catalog.accelerator(name))):
        raise CalibrationError(why)
    return name


def _accelerator_named(report, catalog: Catalog, override: str | None) -> str | None:
    env = report.environment
    named = where = None  # the catalog accelerator the report's GPU name (or instance) is
    said = quoted(None if env is None else env.gpu_model)  # the report's text, cut
    if env is not None and env.device_type == "cuda":
        try:  # an unknown type just means "not from the catalog"
            on = catalog.instance_type(env.instance_type or "", env.cloud).accelerator
        except GpuplanError:
            on = None
        try:
            named = catalog.resolve_accelerator(env.gpu_model or "", strict=True)
            where = said
        except GpuplanError:
            named, where = on, f"the GPUs of a {env.instance_type}"
        if on is not None and named != on:  # an A100 on a p5 would calibrate A100 plans
            raise CalibrationError(instance_contradiction(env.gpu_model, env.instance_type,
                                                          named, on))
    if override:
        chosen = catalog.resolve_accelerator(override)
        if env is not None and env.device_type != "cuda":  # a CPU run's figures as an H100's
            raise CalibrationError(
                f"the report is a {quoted(env.device_type)} run: it measured no GPU, and its "
                f"figures would calibrate {chosen} plans. To fix: leave `accelerator` out (a "
                "CPU run is stored, and calibrates nothing)", field="accelerator",
                value=override)
        if named is not None and chosen != named:  # H100 figures would calibrate H200 plans
            raise CalibrationError(
                f"the report measured {where} ({named}), not {chosen}: its figures would "
                f"calibrate {chosen} plans. To fix: name {named} in `accelerator`, or leave it "
                "out (it is for GPUs whose name and instance the catalog does not know)",
                field="accelerator",
                value=override)
        return chosen
    if env is None or env.device_type != "cuda":
        return None
    if named is not None:
        return named
    raise CalibrationError(
        f"cannot tell which catalog accelerator {said} is. To fix: pass "
        "`accelerator` NAME (see `gpuplan gpus`)", field="accelerator", value=env.gpu_model)


def _check_relabel(stored, rid: int, catalog: Catalog, accelerator: str) -> None:
    """``accelerator`` held to the stored report ``rid`` it would relabel (a copy of it is
    being ingested): its own GPU name, instance and memory, as ingest held the copy's. An
    edited copy (another GPU name, no instance) relabelled a genuine H100 report H200."""
    try:
        _accelerator_of(stored, catalog, accelerator)
    except CalibrationError as exc:
        why = str(exc).split(" To fix: ")[0].rstrip(". ")
        raise CalibrationError(
            f"this file has the measurements of stored report {rid}, and `accelerator` would "
            f"relabel that report, but {why}. To fix: leave report {rid} as it is (it is "
            f"already stored), or remove it first (`gpuplan probe remove {rid}`) if it is the "
            "wrong one and ingest the run's own file", field="accelerator",
            value=accelerator) from None


def ingest(path: str | Path, catalog: Catalog, *, accelerator: str | None = None,
           db: Path | None = None) -> StoredReport:
    """Validate the probe report file at ``path`` and store it (``ingest_bytes``)."""
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise CalibrationError(f"cannot read {str(path)!r}: {exc}. To fix: check the "
                               "path") from None
    return ingest_bytes(raw, catalog, source=str(path.resolve()), accelerator=accelerator,
                        db=db)


def ingest_bytes(raw: bytes, catalog: Catalog, *, source: str,
                 accelerator: str | None = None, db: Path | None = None) -> StoredReport:
    """Validate a probe report (its file's bytes, e.g. an upload) and store it. ``source``
    names where it came from (a path, an upload's name). Re-ingesting the same bytes stores
    nothing new, and so does a copy of a stored run (the same measurements, re-saved or with
    another hostname or time: ``measurement_fingerprint``), but an ``accelerator`` that
    differs from the stored one replaces it (and says so in ``ingest_status``)."""
    from probes import ReportError, report_from_bytes

    try:
        report = report_from_bytes(raw, source=source)
    except ReportError as exc:
        raise CalibrationError(str(exc)) from None
    digest = _digest(raw)
    raw = raw.removeprefix(_BOM)  # stored as text without it
    acc = _accelerator_of(report, catalog, accelerator)
    env = report.environment
    rows = measurement_rows(report)
    fingerprint = measurement_fingerprint(report)

    def work(conn: StoreConnection) -> tuple[int, str, str]:
        existing = conn.execute("SELECT id, accelerator FROM reports WHERE sha256 = ?",
                                (digest,)).fetchone()
        same, stored = "same file", None
        if existing is None:  # a copy of a stored run (re-saved, renamed, re-dated, nudged)
            run = _same_run(conn, fingerprint, rows, report)
            existing, same = run and run[:2], f"same measurements{run[2]}" if run else ""
            stored = run and run[3]
        if existing:
            rid, old = existing
            facts = other_facts(stored, report, rid)
            if accelerator and acc != old:
                if stored:  # a copy: the stored report is the one relabelled, not this file
                    _check_relabel(stored, rid, catalog, accelerator)
                conn.execute("UPDATE reports SET accelerator = ? WHERE id = ?", (acc, rid))
                return rid, "relabelled", (
                    f"already stored as report {rid} ({same}); its accelerator is now {acc} "
                    f"(was {old or 'none'}), as `accelerator` asked{facts}")
            return rid, "already_stored", f"already stored as report {rid} ({same}){facts}"
        cur = conn.execute(
            "INSERT INTO reports (id, sha256, ingested_utc, created_utc, source_path, "
            "accelerator, gpu_model, device_type, gpu_count, node_count, world_size, cloud,"
            " instance_type, region, report_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (next_report_id(conn), digest, _now(),
             report.created_utc, source, acc,
             env.gpu_model if env else None, env.device_type if env else "unknown",
             env.gpu_count if env else None, env.node_count if env else None,
             env.world_size if env else None, env.cloud if env else None,
             env.instance_type if env else None, env.region if env else None,
             raw.decode("utf-8")))
        rid = cur.lastrowid
        conn.executemany("INSERT INTO measurements VALUES (?,?,?,?,?)",
                         [(rid, *r) for r in rows])
        return rid, "stored", "stored"

    rid, outcome, status = _write(db, work)
    return dataclasses.replace(get_report(rid, db=db), ingest_status=status,
                               ingest_outcome=outcome)


_BOM = b"\xef\xbb\xbf"


def _digest(raw: bytes) -> str:
    """The key a report's bytes are stored under: the same report with a BOM is the same."""
    return hashlib.sha256(raw.removeprefix(_BOM)).hexdigest()


def stored_ids(paths, *, db: Path | None = None) -> dict[str, int]:
    """The stored report id of each of ``paths`` whose very bytes are stored (their SHA-256,
    as ``ingest_bytes`` keys them): what an interrupted ingest had stored — a Ctrl-C after
    the commit said "interrupted" of a report it had kept."""
    digests = {}
    for p in paths:
        try:
            raw = Path(p).read_bytes()
        except OSError:
            continue
        digests[str(p)] = _digest(raw)
    found: dict[str, int] = {}
    with _reading(db) as conn:
        for p, digest in digests.items() if conn is not None else ():
            row = conn.execute("SELECT id FROM reports WHERE sha256 = ?", (digest,)).fetchone()
            if row:
                found[p] = int(row[0])
    return found


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


_COLUMNS = ("id, created_utc, ingested_utc, accelerator, gpu_model, device_type, gpu_count, "
            "node_count, instance_type, cloud, region, source_path, world_size, report_json")


def _row_to_report(conn: StoreConnection, row: tuple) -> StoredReport:
    """A stored report; CalibrationError ("damaged") for a row of the wrong types (a database
    edited by hand or written by something else: SQLite keeps any type in any column)."""
    def damaged(why: str) -> CalibrationError:
        return _damaged(conn.path, row[0], why)

    meas: dict = {}
    for kind, key, value in conn.execute(
            "SELECT kind, key, value FROM measurements WHERE report_id = ?", (row[0],)):
        if isinstance(value, bool) or not isinstance(value, int | float) \
                or not isinstance(kind, str) or not isinstance(key, str):
            raise damaged(f"measurement {kind!r}/{key!r} is {value!r}, not a number")
        meas.setdefault(kind, {})[key] = value
    try:
        data = stored_json(row[13], conn)
    except ValueError:  # JSONDecodeError, or nested too deep; `_reading` then asks whether the
        data = {}  # file is damaged, else the calibration lists the report as unreadable
    if not isinstance(data, dict):
        raise damaged(f"its report is a JSON {type(data).__name__}, not an object")
    env = data.get("environment") if isinstance(data.get("environment"), dict) else {}
    if not env:  # an older `--probes` run without one: the run's shape as its collectives
        # state it, else one process per rank ("1 process" was said of a 2-rank run)
        col = data.get("collectives") if isinstance(data.get("collectives"), dict) else {}
        ranks = data.get("ranks") if isinstance(data.get("ranks"), list) else []
        env = {"world_size": _count(col.get("world_size")) or len(ranks) or None,
               "local_world_size": _count(col.get("local_world_size"))}
    for i, name in ((0, "id"), (6, "gpu_count"), (7, "node_count")):
        if row[i] is not None and (isinstance(row[i], bool) or not isinstance(row[i], int)):
            raise damaged(f"{name} is {row[i]!r}, not a whole number")
    return StoredReport(id=row[0], created_utc=row[1], ingested_utc=row[2], accelerator=row[3],
                        gpu_model=row[4], device_type=row[5], gpu_count=row[6],
                        node_count=row[7], instance_type=row[8], cloud=row[9], region=row[10],
                        source_path=row[11], measurements=meas,
                        quick=bool(data.get("quick")),
                        schema_version=int(data.get("schema_version") or 1),
                        world_size=row[12] if row[12] is not None else env.get("world_size"),
                        gpus_per_node=env.get("local_world_size"))


def _count(value) -> int | None:
    """A count read from a stored report's JSON (a hand-edited database may hold anything)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 \
        else None


def get_report(report_id: int, *, db: Path | None = None) -> StoredReport:
    with _reading(db) as conn:
        row = conn.execute(f"SELECT {_COLUMNS} FROM reports WHERE id = ?",
                           (report_id,)).fetchone() if conn else None
        if row is None:
            raise CalibrationError(f"no probe report {report_id}. To fix: see `gpuplan probe "
                                   "show`")
        return _row_to_report(conn, row)


def list_reports(*, db: Path | None = None) -> list[StoredReport]:
    with _reading(db) as conn:
        if conn is None:
            return []
        rows = conn.execute(f"SELECT {_COLUMNS} FROM reports ORDER BY id").fetchall()
        return [_row_to_report(conn, r) for r in rows]


def report_count(*, db: Path | None = None) -> int:
    """How many reports are stored, read without parsing any (a damaged one is counted)."""
    with _reading(db) as conn:
        return conn.execute("SELECT COUNT(*) FROM reports").fetchone()[0] if conn else 0


def report_json(report_id: int, *, db: Path | None = None) -> dict:
    with _reading(db) as conn:
        row = conn.execute("SELECT report_json FROM reports WHERE id = ?",
                           (report_id,)).fetchone() if conn else None
        if row is None:
            raise CalibrationError(f"no probe report {report_id}. To fix: see `gpuplan probe "
                                   "show`")
        try:
            return stored_json(row[0], conn)
        except (TypeError, ValueError) as exc:  # a hand-edited or older database
            raise _damaged(conn.path, report_id, f"its report does not parse: {exc}") from None


def _damaged(path: Path | None, report_id, why: str) -> CalibrationError:
    """One damaged report (a hand edit, or damage inside its stored text alone: SQLite's
    quick_check found the file whole): removing it is the fix, or rebuilding the store."""
    return CalibrationError(f"{path}: the probe database is damaged (report {report_id!r}: "
                            f"{why}). To fix: `gpuplan probe remove {report_id}`, or "
                            f"{rebuild_fix()}")
