"""A decoded probe report validated into the records of probes._schema (torch-free).

`parse_report` builds the records field by field from their own type hints, so every missing
or mistyped field is named in a one-line ReportError ending "To fix: ..."; values are named as
the report's JSON spells them ("got null", "got a list"), not as Python does. Fields a reader
does not know are ignored; fields a report lacks take their defaults (how version-1 files still
read). Reading the file is probes._report_io's.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import types
import typing
from typing import Any, Literal

from probes._schema import (
    LAYOUTS,
    MATMUL_DTYPES,
    SUPPORTED_SCHEMA_VERSIONS,
    ProbeReport,
    ReportError,
)
from probes._spread import MAX_COUNT

FIX_REPORT = "To fix: re-run `python -m probes --out PATH` on the instance and use that file."
# Every integer of a report is a count, a byte size, a clock or an id: >= 0 and at most 2**53
# (8 PiB, exact in every JSON reader), so none reaches the store's 64-bit SQLite columns out
# of range; the records check tighter bounds field by field (probes._spread).
MAX_REPORT_INT = 2**53
_FLOAT_SAFE = 10**300  # an int a record may compare as a float (math.isfinite) without overflow

# The most entries of each list the probes write (a report longer than that was not written by
# them): 40,000 matmul points (6.7 MB, under the store's size limit) took a minute to ingest and
# made every later estimate, plan and `probe show` 25x slower, re-reading them each time.
# MAX_LIST: the most --shapes / --sizes entries (probes.cli); a default sweep has 9 shapes
# (probes._matmul.GPU_SHAPES) and 11 sizes (probes._collectives.GPU_SIZES).
MAX_LIST = 32
_BOUNDS: dict[tuple[str, str], tuple[int, str]] = {
    ("MatmulSection", "points"): (len(MATMUL_DTYPES) * len(LAYOUTS) * MAX_LIST,
                                  f"{len(MATMUL_DTYPES)} dtypes x {len(LAYOUTS)} layouts x "
                                  f"{MAX_LIST} shapes"),
    ("MatmulSection", "dtypes"): (len(MATMUL_DTYPES), "one per matmul dtype"),
    ("MatmulSection", "layouts"): (len(LAYOUTS), "one per weight layout"),
    ("MemorySection", "points"): (MAX_LIST, "kinds of copy and transfer, with room to spare"),
    ("CollectivesSection", "series"): (6, "3 collectives x 2 scopes"),
    ("CollectiveSeries", "points"): (MAX_LIST, f"{MAX_LIST} message sizes"),
    ("Environment", "nccl_env"): (1_000, "NCCL_* and FI_* variables"),
    ("RankResult", "matmul_best_tflops"): (len(MATMUL_DTYPES), "one per matmul dtype"),
    ("RankResult", "memory_gb_per_s"): (MAX_LIST, "kinds of copy and transfer, with room to spare"),
    ("RankResult", "workload"): (MAX_LIST, "a few layer figures"),
    ("WorkloadSection", "notes"): (MAX_LIST, "a few notes"),
}
# environment, matmul, memory, collectives, workload, gather, shutdown: one failure each
ERRORS_PER_RANK = 8


def parse_report(data: Any, *, source: str = "probe report") -> ProbeReport:
    """Validate a decoded JSON object and build the ProbeReport."""
    if not isinstance(data, dict):
        raise ReportError(f"{source}: expected a JSON object at the top level, got "
                          f"{_json_kind(data)}. {FIX_REPORT}")
    version = data.get("schema_version")
    if "schema_version" not in data:
        raise ReportError(f"{source}: missing field 'schema_version'. {FIX_REPORT}")
    if isinstance(version, bool) or version not in SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(str(v) for v in SUPPORTED_SCHEMA_VERSIONS)
        newer = type(version) is int and version > max(SUPPORTED_SCHEMA_VERSIONS)  # not '3'
        raise ReportError(f"{source}: schema_version {version} is newer than this gpuplan reads"
                          f" ({supported}). To fix: upgrade gpuplan." if newer else f"{source}:"
                          f" schema_version must be one of {supported}, got {_shown(version)}. "
                          f"{FIX_REPORT}")
    _check_rank_lists(data, source)
    return _build(ProbeReport, data, source, "")


def _world_size(data: dict) -> int:
    """The run's world size as its sections say it (the largest valid one), else one rank per
    ``ranks`` entry: what bounds ``ranks`` and ``errors`` before anything is built."""
    sizes = [section.get("world_size") for key in ("environment", "collectives", "workload")
             if isinstance(section := data.get(key), dict)]
    sizes = [n for n in sizes if type(n) is int and 1 <= n <= MAX_COUNT]
    if sizes:
        return max(sizes)
    ranks = data.get("ranks")
    return max(1, min(len(ranks), MAX_COUNT)) if isinstance(ranks, list) else 1


def _check_rank_lists(data: dict, source: str) -> None:
    world = _world_size(data)
    # ranks: twice the world at most, so that the consistency check still names a rank
    # listed twice (an edited or merged report) rather than this bound
    for key, bound, why in (("ranks", 2 * world, f"one per rank of {world:,}, twice that in "
                             "an edited file"),
                            ("errors", world * ERRORS_PER_RANK,
                             f"{ERRORS_PER_RANK} per rank x {world:,} rank(s)")):
        _check_length(data.get(key), bound, why, source, key)


def _check_length(value: Any, bound: int, why: str, source: str, path: str) -> None:
    if isinstance(value, list) and len(value) > bound:
        raise ReportError(f"{source}: {path} has {len(value):,} entries; the probes write at "
                          f"most {bound:,} ({why}). {FIX_REPORT}")


@functools.cache
def _fields(cls: type) -> tuple[tuple[dataclasses.Field, Any], ...]:
    """Each field of a record with its resolved type, once per class: get_type_hints per
    object was half of a 40,000-point report's minute of parsing."""
    hints = typing.get_type_hints(cls)
    return tuple((f, hints[f.name]) for f in dataclasses.fields(cls))


def _build(cls: type, data: Any, source: str, where: str) -> Any:
    if not isinstance(data, dict):
        raise ReportError(f"{source}: {where or 'report'} must be an object, got "
                          f"{_json_kind(data)}. {FIX_REPORT}")
    kwargs: dict[str, Any] = {}
    held: _OutOfRange | None = None
    for field, hint in _fields(cls):
        path = f"{where}.{field.name}" if where else field.name
        if field.name not in data:
            has_default = (field.default is not dataclasses.MISSING
                           or field.default_factory is not dataclasses.MISSING)
            if has_default:
                continue
            raise ReportError(f"{source}: missing field {path!r}. {FIX_REPORT}")
        if (bound := _BOUNDS.get((cls.__name__, field.name))) is not None:
            _check_length(data[field.name], *bound, source, path)
        try:
            kwargs[field.name] = _convert(hint, data[field.name], source, path)
        except _OutOfRange as exc:
            if exc.path != path:  # inside a list: no record bound to tell it
                raise
            kwargs[field.name], held = exc.value, held or exc
    try:
        record = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise ReportError(f"{source}: invalid {where or 'report'}: {exc}. {FIX_REPORT}") from exc
    if held is not None:
        raise held
    return record


class _OutOfRange(ReportError):
    """An integer out of every report's range (negative, or above 2**53), held until the record
    has said its own: "gpu_count must be 0 or more" for -3 (or "at most 2**53" for 2**60), then
    "from 1 to 1,048,576" for 0 (or 2**53), told the user a bound that was not the record's."""

    def __init__(self, message: str, *, path: str, value: Any) -> None:
        super().__init__(message)
        self.path, self.value = path, value


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
            raise ReportError(f"{source}: {path} must be one of "
                              f"{', '.join(_shown(a) for a in args)}, got {_shown(value)}. "
                              f"{FIX_REPORT}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            raise _type_error(source, path, "a list", value)
        if len(args) == 2 and args[1] is Ellipsis:
            args = (args[0],) * len(value)
        elif len(value) != len(args):
            raise _type_error(source, path, f"a list of {len(args)} items", value)
        items, held = [], None
        for i, (a, v) in enumerate(zip(args, value, strict=True)):
            try:
                items.append(_convert(a, v, source, f"{path}[{i}]"))
            except _OutOfRange as exc:
                if exc.path != f"{path}[{i}]":  # inside a record that took it: final
                    raise
                items.append(exc.value)
                held = held or exc
        if held is not None:  # the record holding the list may bound it ("M, N, K >= 1")
            raise _OutOfRange(str(held), path=path, value=tuple(items))
        return tuple(items)
    if dataclasses.is_dataclass(hint):
        return _build(hint, value, source, path)
    if hint is bool:
        if not isinstance(value, bool):
            raise _type_error(source, path, "true or false", value)
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise _type_error(source, path, "an integer", value)
        if 0 <= value <= MAX_REPORT_INT:
            return value
        bound = "0 or more" if value < 0 else f"at most {MAX_REPORT_INT:,}"
        error = f"{source}: {path} must be {bound}, got {_int_shown(value)}. {FIX_REPORT}"
        if abs(value) > _FLOAT_SAFE:  # a record's float checks would overflow: no bound of its
            raise ReportError(error)
        raise _OutOfRange(error, path=path, value=value)  # the record's own bound first
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _type_error(source, path, "a number", value)
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise _type_error(source, path, "a string", value)
        return value
    raise TypeError(f"unsupported schema type {hint!r} at {path}")  # a bug in this module


def _int_shown(value: int) -> str:
    """An integer as given, or its size where it is too long to read (str() of 5,000 digits
    raises)."""
    digits = value.bit_length() * 0.30103
    return str(value) if digits < 40 else f"{'-' if value < 0 else ''}~1e{digits:.0f}"


def _type_error(source: str, path: str, expected: str, value: Any) -> ReportError:
    return ReportError(f"{source}: {path} must be {expected}, got {_shown(value)}. "
                       f"{FIX_REPORT}")


def _shown(value: Any) -> str:
    """A value as the report's JSON spells it (null, true, "cuda"), not as Python does."""
    return json.dumps(value, default=repr)[:40]


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words ("a list", "null"), not Python's type name."""
    if value is None or isinstance(value, bool):
        return _shown(value)
    return next((kind for types_, kind in ((dict, "an object"), (list | tuple, "a list"),
                                           (str, "a string"), (int | float, "a number"))
                 if isinstance(value, types_)), type(value).__name__)
