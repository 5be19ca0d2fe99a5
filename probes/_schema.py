"""The probe report: a versioned JSON document, and the records it is read into.

This module never imports torch: `gpuplan probe ingest` reads reports on machines without it.

Units are in the field names:

- ``tflops``: TFLOP/s, 10**12 floating-point operations per second (a multiply-add counts 2).
- ``gb_per_s``: decimal gigabytes per second, 10**9 bytes/s (not GiB/s).
- ``bytes``: bytes; ``seconds``: seconds; ``mhz``: MHz.

Versioning: ``schema_version`` is an int. Adding an optional field keeps the version (readers
ignore fields they do not know); renaming, removing or changing the meaning of a field bumps it,
and `parse_report` lists the versions it supports.

Exceptions (every message is one line ending "To fix: ...")::

    ProbesError(Exception)
     +-- ReportError(ProbesError, ValueError)         a report file is unreadable, corrupt,
     |                                                incomplete or of an unknown schema_version
     +-- ProbeSetupError(ProbesError, RuntimeError)   the probes cannot start as asked (no CUDA
                                                      for --device cuda, no process group)
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import tempfile
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

SCHEMA_VERSION = 1
SUPPORTED_SCHEMA_VERSIONS: tuple[int, ...] = (1,)

# Matmul dtype names, in sweep order: fp32 with TF32 off, tf32, bf16, fp16, fp8 (e4m3).
MATMUL_DTYPES: tuple[str, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8_e4m3")

Status = Literal["measured", "skipped", "failed"]
_STATUSES = ("measured", "skipped", "failed")


class ProbesError(Exception):
    """Base of the errors a user can cause; the CLI prints the message and exits 2."""


class ReportError(ProbesError, ValueError):
    """A probe report cannot be read; the message says why and how to fix it."""


class ProbeSetupError(ProbesError, RuntimeError):
    """The probes cannot start as asked; the message says how to fix it."""


def _check_status(status: str, reason: str | None, where: str) -> None:
    if status not in _STATUSES:
        raise ValueError(f"{where}: status must be one of {_STATUSES}, got {status!r}")
    if status != "measured" and not reason:
        raise ValueError(f"{where}: a {status} entry needs a reason")


def _check_positive(where: str, **values: float | int | None) -> None:
    for name, value in values.items():
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ValueError(f"{where}.{name} must be a finite number > 0, got {value!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeFailure:
    """A probe that raised: the others still ran. ``rank`` is the process that saw it."""

    probe: str
    error_type: str
    message: str
    rank: int = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Environment:
    """Where the report was measured. ``None`` means "not available on this machine"."""

    hostname: str
    cpu_count: int
    platform: str
    python_version: str
    torch_version: str | None
    cuda_version: str | None
    nccl_version: str | None
    driver_version: str | None
    device_type: str  # "cuda" or "cpu": what the probes ran on
    gpu_model: str | None
    gpu_count: int  # GPUs visible on this node
    gpu_memory_bytes: int | None
    compute_capability: str | None  # e.g. "9.0"
    sm_clock_mhz: int | None
    sm_clock_max_mhz: int | None
    memory_clock_mhz: int | None
    memory_clock_max_mhz: int | None
    cloud: str | None  # "aws", "gcp" or "azure", from the metadata service
    instance_type: str | None
    region: str | None
    zone: str | None
    world_size: int
    local_world_size: int
    node_count: int

    def __post_init__(self) -> None:
        if self.world_size < 1 or self.local_world_size < 1 or self.node_count < 1:
            raise ValueError("environment: world_size, local_world_size, node_count must be >= 1")


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulPoint:
    """One timed shape: C[M,N] = A[M,K] @ B[K,N]; tflops = 2*M*N*K / seconds_median / 1e12."""

    dtype: str
    m: int
    n: int
    k: int
    seconds_median: float  # per matmul, median over repeats
    tflops: float

    def __post_init__(self) -> None:
        _check_positive("matmul point", m=self.m, n=self.n, k=self.k,
                        seconds_median=self.seconds_median, tflops=self.tflops)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulDtype:
    """Best achieved TFLOP/s for one dtype, or why it was not measured."""

    dtype: str  # fp32, tf32, bf16, fp16, fp8_e4m3
    status: Status
    reason: str | None = None  # for skipped/failed, or a note (e.g. shapes left out)
    best_tflops: float | None = None
    best_shape: tuple[int, int, int] | None = None  # (M, N, K)

    def __post_init__(self) -> None:
        _check_status(self.status, self.reason, f"matmul {self.dtype}")
        if self.status == "measured" and (self.best_tflops is None or self.best_shape is None):
            raise ValueError(f"matmul {self.dtype}: measured needs best_tflops and best_shape")
        _check_positive(f"matmul {self.dtype}", best_tflops=self.best_tflops)


@dataclass(frozen=True, slots=True, kw_only=True)
class MatmulSection:
    """Matmul throughput. fp32 runs with TF32 off, tf32 with it on; settings are restored."""

    device: str
    timing: str  # "cuda_events" or "perf_counter"
    flop_convention: str
    warmup_iters: int
    repeats: int
    target_seconds_per_repeat: float
    cache_bytes: int  # L2 size the buffer rotation has to exceed
    cache_bytes_source: str  # "device_properties" or "assumed"
    tf32_matmul_allowed: bool  # settings found at start (torch.backends.cuda.matmul.allow_tf32)
    cudnn_tf32_allowed: bool  # torch.backends.cudnn.allow_tf32
    float32_matmul_precision: str  # torch.get_float32_matmul_precision()
    dtypes: tuple[MatmulDtype, ...]
    points: tuple[MatmulPoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class BandwidthPoint:
    """One copy measurement: gb_per_s = counted_bytes / seconds_median / 1e9."""

    name: str  # device_copy, host_copy, h2d_pinned, h2d_pageable, d2h_pinned, d2h_pageable
    status: Status
    reason: str | None = None
    size_bytes: int | None = None  # N, the bytes of one buffer copied
    counted_bytes: int | None = None  # bytes credited per copy (see byte_convention)
    seconds_median: float | None = None
    gb_per_s: float | None = None

    def __post_init__(self) -> None:
        _check_status(self.status, self.reason, f"memory {self.name}")
        if self.status == "measured" and self.gb_per_s is None:
            raise ValueError(f"memory {self.name}: measured needs gb_per_s")
        _check_positive(f"memory {self.name}", size_bytes=self.size_bytes,
                        counted_bytes=self.counted_bytes,
                        seconds_median=self.seconds_median, gb_per_s=self.gb_per_s)


@dataclass(frozen=True, slots=True, kw_only=True)
class MemorySection:
    device: str
    timing: str
    byte_convention: str
    points: tuple[BandwidthPoint, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectivePoint:
    """One message size, nccl-tests conventions (PERFORMANCE.md).

    size_bytes: all_reduce, the buffer; all_gather, the gathered output (n x per-rank input);
    reduce_scatter, the input (n x per-rank output). algbw = size_bytes / seconds_median;
    busbw = algbw * 2(n-1)/n for all_reduce, algbw * (n-1)/n for the other two.
    seconds_median: median over iterations on each rank, then the max over ranks.
    """

    size_bytes: int
    seconds_median: float
    algbw_gb_per_s: float
    busbw_gb_per_s: float

    def __post_init__(self) -> None:
        _check_positive("collective point", size_bytes=self.size_bytes,
                        seconds_median=self.seconds_median,
                        algbw_gb_per_s=self.algbw_gb_per_s)
        if not (math.isfinite(self.busbw_gb_per_s) and self.busbw_gb_per_s >= 0):
            raise ValueError("collective point: busbw_gb_per_s must be finite and >= 0")


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectiveSeries:
    """One collective over a group of ranks, over message sizes."""

    op: str  # all_reduce, all_gather, reduce_scatter
    scope: str  # "intra_node" (each node's local ranks, all nodes at once) or "world"
    group_size: int
    status: Status
    reason: str | None = None
    implementation: str | None = None  # the torch.distributed function used
    emulated: bool = False  # True only if built from another collective
    dtype: str = "float32"
    points: tuple[CollectivePoint, ...] = ()

    def __post_init__(self) -> None:
        _check_status(self.status, self.reason, f"collective {self.op}/{self.scope}")


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectivesSection:
    backend: str | None  # "nccl" or "gloo"
    status: Status
    reason: str | None = None
    world_size: int = 1
    local_world_size: int = 1
    node_count: int = 1
    timeout_seconds: float = 0.0
    timing: str = ""
    series: tuple[CollectiveSeries, ...] = ()

    def __post_init__(self) -> None:
        _check_status(self.status, self.reason, "collectives")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbeReport:
    """Everything one probe run measured. A section is None when that probe failed or was
    not selected; its failure, if any, is in ``errors``."""

    schema_version: int
    tool_version: str
    created_utc: str  # ISO 8601, e.g. "2025-01-31T12:00:00Z"
    quick: bool
    duration_seconds: float
    environment: Environment | None = None
    matmul: MatmulSection | None = None
    memory: MemorySection | None = None
    collectives: CollectivesSection | None = None
    errors: tuple[ProbeFailure, ...] = ()


# --- JSON <-> records -----------------------------------------------------------------------

_FIX_REPORT = "To fix: re-run `python -m probes --out PATH` on the instance and use that file."


def report_to_json(report: ProbeReport) -> str:
    """Serialise a report; tuples become lists, the output is stable (sorted keys, indent 2)."""
    return json.dumps(dataclasses.asdict(report), indent=2, sort_keys=True, allow_nan=False)


def write_report_atomic(report: ProbeReport, path: str | os.PathLike[str]) -> Path:
    """Write the report so that ``path`` holds either the old file or the whole new one."""
    target = Path(path)
    text = report_to_json(report) + "\n"
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # make the rename itself durable; not every filesystem allows opening a directory
        dir_fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        return target
    try:
        os.fsync(dir_fd)
    except OSError:
        pass
    finally:
        os.close(dir_fd)
    return target


def load_report(path: str | os.PathLike[str]) -> ProbeReport:
    """Read and validate a report file; raises ReportError with a one-line "To fix" message."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"cannot read probe report {str(path)!r}: {exc}. "
                          "To fix: check the path and that the file is a probe report.") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"probe report {str(path)!r} is not valid JSON "
                          f"(line {exc.lineno}, column {exc.colno}: {exc.msg}). "
                          f"{_FIX_REPORT}") from exc
    return parse_report(data, source=str(path))


def parse_report(data: Any, *, source: str = "probe report") -> ProbeReport:
    """Validate a decoded JSON object and build the ProbeReport."""
    if not isinstance(data, dict):
        raise ReportError(f"{source}: expected a JSON object at the top level, got "
                          f"{type(data).__name__}. {_FIX_REPORT}")
    version = data.get("schema_version")
    if "schema_version" not in data:
        raise ReportError(f"{source}: missing field 'schema_version'. {_FIX_REPORT}")
    if isinstance(version, bool) or version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        raise ReportError(f"{source}: unknown schema_version {version!r}; this gpuplan reads "
                          f"version(s) {supported}. To fix: upgrade gpuplan (newer report) "
                          "or re-run the probes with this version.")
    return _build(ProbeReport, data, source, "")


def _build(cls: type, data: Any, source: str, where: str) -> Any:
    if not isinstance(data, dict):
        raise ReportError(f"{source}: {where or 'report'} must be an object, got "
                          f"{type(data).__name__}. {_FIX_REPORT}")
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        path = f"{where}.{field.name}" if where else field.name
        if field.name not in data:
            has_default = (field.default is not dataclasses.MISSING
                           or field.default_factory is not dataclasses.MISSING)
            if has_default:
                continue
            raise ReportError(f"{source}: missing field {path!r}. {_FIX_REPORT}")
        kwargs[field.name] = _convert(hints[field.name], data[field.name], source, path)
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ReportError(f"{source}: invalid {where or 'report'}: {exc}. {_FIX_REPORT}") from exc


def _convert(hint: Any, value: Any, source: str, path: str) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _convert(inner, value, source, path)
    if origin is Literal:
        if value not in args:
            raise ReportError(f"{source}: {path} must be one of {args}, got {value!r}. "
                              f"{_FIX_REPORT}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise _type_error(source, path, "a list", value)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_convert(args[0], v, source, f"{path}[{i}]") for i, v in enumerate(value))
        if len(value) != len(args):
            raise _type_error(source, path, f"a list of {len(args)} items", value)
        return tuple(_convert(a, v, source, f"{path}[{i}]")
                     for i, (a, v) in enumerate(zip(args, value, strict=True)))
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, source, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise _type_error(source, path, "true or false", value)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(source, path, "an integer", value)
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(source, path, "a number", value)
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise _type_error(source, path, "a string", value)
        return value
    raise TypeError(f"unsupported schema type {hint!r} at {path}")  # a bug in this module


def _type_error(source: str, path: str, expected: str, value: Any) -> ReportError:
    return ReportError(f"{source}: {path} must be {expected}, got {json.dumps(value)[:40]}. "
                       f"{_FIX_REPORT}")
