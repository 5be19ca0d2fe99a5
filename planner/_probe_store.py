"""The probe database: ingested reports in SQLite, and the Calibration the model reads.

One file, ``<user data dir>/probes.db``, schema-versioned with ``PRAGMA user_version``:

    reports(id, sha256 UNIQUE, ingested_utc, created_utc, source_path, accelerator, gpu_model,
            device_type, gpu_count, node_count, world_size, cloud, instance_type, region,
            report_json)
    measurements(report_id -> reports.id, kind, key, value, unit)
        kind: matmul_tflops (key = catalog dtype, fp8_fast for fast accumulation),
        device_copy_gb_per_s (key copy), device_triad_gb_per_s (key triad),
        busbw_intra_gb_per_s / busbw_world_gb_per_s (key = op),
        workload_layer_ms / workload_layer_activation_mib (key = framework and layer shape,
        e.g. "fsdp h4096 a32/8 d128 F14336g s8192 b1 bf16 rc:none": the workload probe's
        forward + backward time and activations per layer, median over GPUs)

Every report is stored; which figures calibrate the model is decided when the calibration is
loaded, by the rules of planner/_calibration.py, from the report's JSON and the catalog's
datasheet (so a rule that changes applies to reports already stored).

Concurrency and faults: the schema is created inside one ``BEGIN IMMEDIATE`` transaction with
``IF NOT EXISTS`` statements (idempotent, and atomic: a crash leaves either no schema or all of
it); every write is one IMMEDIATE transaction that takes the write lock before it reads, so two
ingests of the same file cannot both insert it. Connections wait up to BUSY_TIMEOUT_SECONDS for
a lock and the write is retried RETRIES times; errors say "locked", "disk full", "read-only" or
"damaged" for what SQLite actually reported.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import errno
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from catalog import Catalog, GpuplanError
from catalog._paths import user_data_dir

from ._calibration import (
    NO_CALIBRATION,
    Calibration,
    Candidate,
    WorkloadCandidate,
    calibrate,
)
from ._errors import CalibrationError, PlannerError

SCHEMA_VERSION = 1
_DDL = (
    """CREATE TABLE IF NOT EXISTS reports (
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
    )""",
    """CREATE TABLE IF NOT EXISTS measurements (
        report_id INTEGER NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        value REAL NOT NULL,
        unit TEXT NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS measurements_kind ON measurements(kind, key)",
)
BUSY_TIMEOUT_SECONDS = 10.0
RETRIES = 4
# probe dtype -> catalog dtype (catalog.DTYPES); fp8 with fast accumulation keeps its own key
DTYPE_NAMES = {"fp32": "fp32", "tf32": "tf32", "bf16": "bf16", "fp16": "fp16",
               "fp8_e4m3": "fp8", "fp8_e4m3_fast": "fp8_fast"}
LARGE_MESSAGE_BYTES = 64 * 2**20  # busbw plateau: messages of 64 MiB and more
PCIE_BIDIR_GB_PER_S = 128.0  # PCIe 5.0 x16, both directions: the bound without a GPU link


def db_path() -> Path:
    return user_data_dir() / "probes.db"


# -- connections and errors ------------------------------------------------------------------
def _error(exc: BaseException, path: Path) -> CalibrationError:
    """The one-line error for what SQLite (or the OS) reported."""
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc)
    low = text.lower()
    err = getattr(exc, "errno", None)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in low:
        return CalibrationError(
            f"{path}: the probe database is locked by another process ({text}). To fix: wait "
            "for the other gpuplan command (an ingest, the app) to finish, then retry")
    if name.startswith("SQLITE_FULL") or "full" in low or err == errno.ENOSPC:
        return CalibrationError(
            f"{path}: the disk is full ({text}); nothing was stored. To fix: free space on that "
            "disk (or point GPUPLAN_HOME at another), then retry")
    if name.startswith("SQLITE_READONLY") or "readonly" in low or err in (errno.EACCES,
                                                                         errno.EROFS):
        return CalibrationError(
            f"{path}: the probe database cannot be written ({text}). To fix: check the "
            "permissions of the gpuplan data directory (or set GPUPLAN_HOME)")
    if name.startswith("SQLITE_IOERR") or "i/o" in low:
        return CalibrationError(
            f"{path}: disk I/O error on the probe database ({text}). To fix: check the disk "
            "(space, health), then retry")
    if name.startswith("SQLITE_CANTOPEN") or "unable to open" in low:
        return CalibrationError(
            f"{path}: cannot open the probe database ({text}). To fix: check the permissions "
            "of the gpuplan data directory (or set GPUPLAN_HOME)")
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "malformed" in low \
            or "not a database" in low:
        return CalibrationError(
            f"{path}: the probe database is damaged ({text}). To fix: move it away and "
            "ingest the reports again")
    return CalibrationError(f"{path}: the probe database failed ({text}). To fix: retry; if it "
                            "persists, move the file away and ingest the reports again")


def _retryable(exc: sqlite3.Error) -> bool:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def _open(path: Path) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit) that waits for locks."""
    conn = sqlite3.connect(path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    return conn


def _version(conn: sqlite3.Connection, path: Path) -> int:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise CalibrationError(f"{path}: probe database schema {version} is newer than this "
                               f"gpuplan understands ({SCHEMA_VERSION}). To fix: upgrade "
                               "gpuplan, or move the file away")
    return version


def _create_schema(conn: sqlite3.Connection, path: Path) -> None:
    """Idempotent and atomic: every statement in one IMMEDIATE transaction."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _version(conn, path) < SCHEMA_VERSION:
            for statement in _DDL:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


@contextmanager
def _reading(db: Path | None) -> Iterator[sqlite3.Connection | None]:
    """A connection for reads; None when there is no database or no schema yet (a store
    whose creation never committed reads as empty). Reading never creates the file."""
    path = db or db_path()
    if not path.exists():
        yield None
        return
    try:
        # mode=rw: never creates the file, yet can roll back a crashed writer's journal
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=rw", uri=True,
                               timeout=BUSY_TIMEOUT_SECONDS)
    except sqlite3.Error as exc:
        raise _error(exc, path) from None
    try:
        if _version(conn, path) < SCHEMA_VERSION:
            yield None
        else:
            yield conn
    except sqlite3.Error as exc:
        raise _error(exc, path) from None
    finally:
        conn.close()


def _write(db: Path | None, work):
    """Run ``work(conn)`` in one IMMEDIATE transaction, creating the schema if needed;
    retried while another process holds the lock."""
    path = db or db_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _error(exc, path) from None
    for attempt in range(RETRIES + 1):
        try:
            conn = _open(path)
        except sqlite3.Error as exc:
            raise _error(exc, path) from None
        try:
            if _version(conn, path) < SCHEMA_VERSION:
                _create_schema(conn, path)
            conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return result
        except sqlite3.Error as exc:
            if attempt < RETRIES and _retryable(exc):
                time.sleep(0.05 * 2**attempt)
                continue
            raise _error(exc, path) from None
        finally:
            conn.close()
    raise AssertionError("unreachable")  # the loop returns or raises


# -- records ---------------------------------------------------------------------------------
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
    measurements: dict = field(default_factory=dict)  # kind -> {key: value}
    quick: bool = False
    schema_version: int = 1
    world_size: int | None = None
    gpus_per_node: int | None = None  # ranks per node in the run
    ingest_status: str = "stored"  # what the last ingest did: stored / already stored ...

    def as_dict(self) -> dict:
        return {"id": self.id, "created_utc": self.created_utc,
                "ingested_utc": self.ingested_utc, "accelerator": self.accelerator,
                "gpu_model": self.gpu_model, "device_type": self.device_type,
                "gpu_count": self.gpu_count, "node_count": self.node_count,
                "instance_type": self.instance_type, "cloud": self.cloud,
                "region": self.region, "source_path": self.source_path,
                "quick": self.quick, "schema_version": self.schema_version,
                "world_size": self.world_size, "gpus_per_node": self.gpus_per_node,
                "measurements": self.measurements}


def _measurements(report) -> list[tuple[str, str, float, str]]:
    from probes import report_figures

    rows = []
    for f in report_figures(report):
        if f.kind == "matmul" and f.name in DTYPE_NAMES:
            rows.append(("matmul_tflops", DTYPE_NAMES[f.name], f.value, "TFLOP/s"))
    for p in report.memory.points if report.memory else ():
        if p.status == "measured" and p.name in ("device_copy", "device_triad") and p.gb_per_s:
            value = p.across_ranks.p50 if p.across_ranks and p.across_ranks.n > 1 else p.gb_per_s
            rows.append((f"{p.name}_gb_per_s", p.name.split("_")[1], value, "GB/s"))
    col = report.collectives
    for s in col.series if col and col.status == "measured" else ():
        if s.status != "measured" or not s.points:
            continue
        large = [p.busbw_gb_per_s for p in s.points if p.size_bytes >= LARGE_MESSAGE_BYTES]
        best = max(large or [p.busbw_gb_per_s for p in s.points])
        kind = "busbw_intra_gb_per_s" if s.scope == "intra_node" else "busbw_world_gb_per_s"
        rows.append((kind, s.op, best, "GB/s"))
    w = workload_figures(report)
    if w is not None:
        key = f"{w['framework']} {w['shape'].label}"
        rows.append(("workload_layer_ms", key, w["seconds"] * 1e3, "ms"))
        if w["memory_bytes"] is not None:
            rows.append(("workload_layer_activation_mib", key, w["memory_bytes"] / 2**20,
                         "MiB"))
    return rows


def _rank_median(report, name: str) -> float | None:
    values = [nv.value for r in report.ranks for nv in r.workload if nv.name == name]
    if not values:
        return None
    values.sort()
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def workload_figures(report) -> dict | None:
    """The workload layer a report measured: its shape, forward + backward seconds per layer
    (the median over GPUs, p10/p90 the wider of over GPUs and over steps), activation bytes
    per layer (the CUDA allocator's, else the saved tensors') and the optimizer per layer.
    None without a measured workload section."""
    from ._layer_model import WorkloadShape

    w = report.workload
    if w is None or w.status != "measured" or not w.layer_fwd_bwd_seconds:
        return None
    spread = w.across_ranks
    seconds = spread.p50 if spread is not None and spread.n > 1 else w.layer_fwd_bwd_seconds
    p10s = [x for x in (w.layer_fwd_bwd_seconds_p10, spread.p10 if spread else None) if x]
    p90s = [x for x in (w.layer_fwd_bwd_seconds_p90, spread.p90 if spread else None) if x]
    memory = (_rank_median(report, "layer_activation_bytes") or w.layer_activation_bytes
              or _rank_median(report, "layer_saved_bytes") or w.layer_saved_bytes)
    shape = WorkloadShape(hidden=w.hidden, heads=w.heads, kv_heads=w.kv_heads,
                          head_dim=w.head_dim, ffn_hidden=w.ffn_hidden, gated=w.gated,
                          seq_len=w.seq_len, micro_batch=w.micro_batch, precision=w.precision,
                          recompute=w.recompute, experts=w.experts,
                          experts_per_token=w.experts_per_token,
                          shared_experts=w.shared_experts)
    split = w.split
    return {"shape": shape, "framework": w.framework, "seconds": seconds,
            "p10": min(p10s) if p10s else None, "p90": max(p90s) if p90s else None,
            "memory_bytes": memory if memory and memory > 0 else None,
            "memory_source": "allocator" if w.layer_activation_bytes else "saved tensors",
            "optimizer_seconds": split.optimizer_seconds if split else None,
            "attention_backend": w.attention_backend}


def _accelerator_of(report, catalog: Catalog, override: str | None) -> str | None:
    env = report.environment
    if override:
        return catalog.resolve_accelerator(override)
    if env is None or env.device_type != "cuda":
        return None
    if env.gpu_model:
        try:
            return catalog.resolve_accelerator(env.gpu_model)
        except GpuplanError:
            pass
    if env.instance_type:
        try:
            return catalog.instance_type(env.instance_type, env.cloud).accelerator
        except GpuplanError:  # an unknown type just means "not from the catalog"
            pass
    raise CalibrationError(
        f"cannot tell which catalog accelerator {env.gpu_model!r} is. To fix: pass "
        "--accelerator NAME (see `gpuplan gpus`)")


def ingest(path: str | Path, catalog: Catalog, *, accelerator: str | None = None,
           db: Path | None = None) -> StoredReport:
    """Validate a probe report and store it. Re-ingesting the same file stores nothing new,
    but an ``accelerator`` that differs from the stored one replaces it (and says so in
    ``ingest_status``)."""
    from probes import ReportError, load_report

    path = Path(path)
    try:
        report = load_report(path)
        raw = path.read_bytes()
    except ReportError as exc:
        raise CalibrationError(str(exc)) from None
    except OSError as exc:
        raise CalibrationError(f"cannot read {str(path)!r}: {exc}. To fix: check the "
                               "path") from None
    digest = hashlib.sha256(raw).hexdigest()
    acc = _accelerator_of(report, catalog, accelerator)
    env = report.environment
    rows = _measurements(report)

    def work(conn: sqlite3.Connection) -> tuple[int, str]:
        existing = conn.execute("SELECT id, accelerator FROM reports WHERE sha256 = ?",
                                (digest,)).fetchone()
        if existing:
            rid, old = existing
            if accelerator and acc != old:
                conn.execute("UPDATE reports SET accelerator = ? WHERE id = ?", (acc, rid))
                return rid, (f"already stored as report {rid}; its accelerator is now {acc} "
                             f"(was {old or 'none'}), as --accelerator asked")
            return rid, f"already stored as report {rid} (same file)"
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
        return rid, "stored"

    rid, status = _write(db, work)
    return dataclasses.replace(get_report(rid, db=db), ingest_status=status)


_COLUMNS = ("id, created_utc, ingested_utc, accelerator, gpu_model, device_type, gpu_count, "
            "node_count, instance_type, cloud, region, source_path, world_size, report_json")


def _row_to_report(conn, row) -> StoredReport:
    meas: dict = {}
    for kind, key, value in conn.execute(
            "SELECT kind, key, value FROM measurements WHERE report_id = ?", (row[0],)):
        meas.setdefault(kind, {})[key] = value
    try:
        data = json.loads(row[13])
    except json.JSONDecodeError:
        data = {}
    env = data.get("environment") or {}
    return StoredReport(id=row[0], created_utc=row[1], ingested_utc=row[2], accelerator=row[3],
                        gpu_model=row[4], device_type=row[5], gpu_count=row[6],
                        node_count=row[7], instance_type=row[8], cloud=row[9], region=row[10],
                        source_path=row[11], measurements=meas,
                        quick=bool(data.get("quick")),
                        schema_version=int(data.get("schema_version") or 1),
                        world_size=row[12], gpus_per_node=env.get("local_world_size"))


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


def report_json(report_id: int, *, db: Path | None = None) -> dict:
    with _reading(db) as conn:
        row = conn.execute("SELECT report_json FROM reports WHERE id = ?",
                           (report_id,)).fetchone() if conn else None
        if row is None:
            raise CalibrationError(f"no probe report {report_id}. To fix: see `gpuplan probe "
                                   "show`")
        return json.loads(row[0])


# -- calibration -----------------------------------------------------------------------------
def load_calibration(catalog: Catalog | None = None, *, db: Path | None = None) -> Calibration:
    """The calibration from every stored report, by the rules of planner/_calibration.py."""
    with _reading(db) as conn:
        rows = conn.execute("SELECT id, created_utc, accelerator, report_json FROM reports "
                            "ORDER BY id").fetchall() if conn else []
    if not rows:
        return NO_CALIBRATION
    if catalog is None:
        from catalog import load_catalog

        catalog = load_catalog()
    found, layers = [], []
    for rid, created, acc, text in rows:
        figures, layer = _candidates(rid, created, acc, text, catalog)
        found.extend(figures)
        if layer is not None:
            layers.append(layer)
    if not layers:
        return calibrate(found)
    # the layers are modelled with the hardware figures `estimate` will use: the probes'
    # measurements (a first pass of the rules) where there are some
    hardware = calibrate(found)
    return calibrate(found, workloads=[_modelled(c, catalog, hardware) for c in layers])


def _instance(catalog: Catalog, env):
    if env is None or not env.instance_type:
        return None
    try:
        return catalog.instance_type(env.instance_type, env.cloud)
    except GpuplanError:  # not in this catalog: the figures key by accelerator only
        return None


def _bound(kind: str, f, acc, instance, dtype: str | None) -> tuple[float | None, str]:
    """The datasheet figure ``f`` may not exceed, and where it comes from."""
    if kind == "matmul":
        if dtype not in ("fp32", "tf32", "bf16", "fp16", "fp8"):
            return None, f"{acc.name} {dtype}: not a catalog dtype"
        return acc.peak_tflops(dtype), f"{acc.name} dense {dtype} peak"
    if kind == "hbm":
        return acc.memory_bandwidth_gb_per_s, f"{acc.name} memory bandwidth"
    if kind == "intra":
        from ._hardware import intra_link_for

        # busbw of an all-reduce is below 2(n-1)/n < 2 times one direction of the per-GPU
        # link, so the bidirectional figure vendors state bounds it (NVLS included)
        if instance is not None:
            return intra_link_for(instance, acc), f"{instance.name} GPU link, both directions"
        if acc.intra_node_gb_per_s_per_gpu:
            return acc.intra_node_gb_per_s_per_gpu, f"{acc.name} GPU link, both directions"
        return PCIE_BIDIR_GB_PER_S, "PCIe 5.0 x16, both directions"
    if instance is None or not instance.inter_node_gbps:
        return None, "the instance's network rating in the catalog"
    # a ring all-reduce's busbw across nodes approaches the node's total NIC bandwidth;
    # in-network reduction (SHARP) halves the traffic, hence the factor 2
    return (2 * instance.inter_node_gbps / 8,
            f"2 x {instance.name}'s {instance.inter_node_gbps:g} Gb/s network (in-network "
            "reduction)")


def _instance_refusal(f, instance) -> str | None:
    if f.kind not in ("intra", "inter"):
        return None
    if f.kind == "inter" and instance is None:
        return ("no catalog instance type in the report: the fabric is a property of the "
                "instance; run where the cloud's metadata service answers (AWS, GCP, Azure)")
    if instance is not None and f.gpus_per_node != instance.gpu_count:
        return (f"the run used {f.gpus_per_node} of {instance.name}'s {instance.gpu_count} GPUs "
                "per node; bus bandwidth depends on the group, so only full nodes calibrate")
    if f.kind == "inter":
        from probes import is_tcpx

        if f.net is None:
            return ("the NCCL log did not say which network the world group used, so a TCP "
                    "fall-back cannot be ruled out; re-run with the probes' NCCL log capture "
                    "(do not set NCCL_DEBUG_SUBSYS without INIT)")
        if not f.rdma and not (is_tcpx(f.net) and instance.fabric == "gpudirect_tcpx"):
            return (f"the world all-reduce went over {f.net} ({f.transport}), not RDMA: a TCP "
                    "fall-back is not the fabric's speed; check the EFA/InfiniBand set-up "
                    "(docs/probes.md)")
    return None


def _workload_candidate(rid: int, created: str, acc, acc_name: str | None, report,
                        instance) -> WorkloadCandidate | None:
    """The report's workload layer for the rules, not yet modelled (`_modelled`)."""
    from probes._figures import workload_refusal

    w = workload_figures(report)
    if w is None:
        if report.workload is None:
            return None
        # a failed run: listed as refused, with why
        sec = report.workload
        from ._layer_model import WorkloadShape

        w = {"shape": WorkloadShape(
            hidden=sec.hidden, heads=sec.heads, kv_heads=sec.kv_heads, head_dim=sec.head_dim,
            ffn_hidden=sec.ffn_hidden, gated=sec.gated, seq_len=sec.seq_len,
            micro_batch=sec.micro_batch, precision=sec.precision, recompute=sec.recompute,
            experts=sec.experts, experts_per_token=sec.experts_per_token,
            shared_experts=sec.shared_experts), "framework": sec.framework,
            "seconds": float("nan"), "p10": None, "p90": None, "memory_bytes": None,
            "optimizer_seconds": None, "attention_backend": sec.attention_backend}
    refusal = workload_refusal(report)
    if refusal is None and acc is None:
        refusal = (f"accelerator {acc_name!r} is not in the catalog" if acc_name else
                   "no catalog accelerator: re-ingest with --accelerator NAME")
    env = report.environment
    return WorkloadCandidate(
        report_id=rid, created_utc=created,
        accelerator=acc.name if acc else (acc_name or (env.device_type if env else "-")),
        framework=w["framework"], shape=w["shape"],
        instance_type=instance.name if instance else None,
        measured_layer_seconds=w["seconds"], p10=w["p10"], p90=w["p90"],
        measured_layer_memory_bytes=w["memory_bytes"],
        measured_optimizer_seconds=w["optimizer_seconds"],
        attention_backend=w["attention_backend"], refusal=refusal)


def _modelled(c: WorkloadCandidate, catalog: Catalog, hardware: Calibration
              ) -> WorkloadCandidate:
    """The candidate with the planner's figures for its shape on its accelerator."""
    from ._layer_model import hardware_for, model_attention, model_layer

    if c.refusal is not None:
        return c
    acc = catalog.accelerator(c.accelerator)
    attention = model_attention(c.attention_backend)
    try:
        hw = hardware_for(acc, c.shape, framework=c.framework, attention=attention,
                          calibration=hardware)
        model = model_layer(c.shape, hardware=hw, framework=c.framework, attention=attention)
    except (PlannerError, ValueError, KeyError) as exc:
        return dataclasses.replace(c, refusal=f"the planner cannot model this layer on "
                                              f"{acc.name}: {exc}")
    return dataclasses.replace(c, modelled=model, peak_tflops=hw.peak_tflops,
                               memory_bytes=hw.memory_gib * 2**30)


def _candidates(rid: int, created: str, acc_name: str | None, text: str,
                catalog: Catalog) -> tuple[list[Candidate], WorkloadCandidate | None]:
    """Every figure of one stored report as a Candidate for the rules, and its workload
    layer (None when it has none)."""
    from probes import ReportError, parse_report, report_figures

    try:
        report = parse_report(json.loads(text), source=f"probe report {rid}")
    except (ReportError, json.JSONDecodeError) as exc:
        return [Candidate(report_id=rid, created_utc=created, kind="report",
                          accelerator=acc_name or "-", value=None, unit="",
                          refusal=f"this gpuplan cannot read it: {exc}")], None
    acc = None
    if acc_name:
        try:
            acc = catalog.accelerator(acc_name)
        except GpuplanError:
            acc = None
    instance = _instance(catalog, report.environment)
    if instance is not None and acc is not None and instance.accelerator != acc.name:
        instance = None  # the report was re-labelled: its instance type no longer applies
    out = []
    for f in report_figures(report):
        dtype = DTYPE_NAMES.get(f.name) if f.kind == "matmul" else None
        refusal = f.refusal
        if refusal is None and acc is None:
            refusal = (f"accelerator {acc_name!r} is not in the catalog" if acc_name else
                       "no catalog accelerator: re-ingest with --accelerator NAME")
        bound, bound_source = (None, "") if acc is None else _bound(f.kind, f, acc, instance,
                                                                      dtype)
        refusal = refusal or _instance_refusal(f, instance)
        out.append(Candidate(
            report_id=rid, created_utc=created, kind=f.kind,
            accelerator=acc.name if acc else (acc_name or (
                report.environment.device_type if report.environment else "-")),
            dtype=dtype, instance_type=instance.name if instance else None,
            gpus_per_node=f.gpus_per_node, nodes=f.nodes, value=f.value, unit=f.unit,
            p10=f.p10, p90=f.p90, bound=bound, bound_source=bound_source, refusal=refusal))
    return out, _workload_candidate(rid, created, acc, acc_name, report, instance)


def load_calibration_with_notes(catalog: Catalog | None = None, *,
                                db: Path | None = None) -> tuple[Calibration, tuple[str, ...]]:
    """(calibration, lines saying what is used and what is not, with why) for the CLI."""
    cal = load_calibration(catalog, db=db)
    return cal, cal.notes()


__all__ = ["StoredReport", "db_path", "get_report", "ingest", "list_reports",
           "load_calibration", "load_calibration_with_notes", "report_json",
           "workload_figures"]
