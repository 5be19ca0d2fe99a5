"""The probe report as JSON: serialise, write atomically, read and validate (torch-free).

`parse_report` builds the records of probes._schema from a decoded JSON object field by field,
from the records' own type hints, so every missing or mistyped field is named in a one-line
ReportError ending "To fix: ...". Fields a reader does not know are ignored; fields a report
lacks take their defaults (how version-1 files still read).
"""

from __future__ import annotations

import dataclasses
import json
import os
import tempfile
import types
import typing
from pathlib import Path
from typing import Any, Literal

from probes._schema import SUPPORTED_SCHEMA_VERSIONS, ProbeReport, ReportError

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
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise ReportError(f"cannot read probe report {str(path)!r}: {exc}. "
                          "To fix: check the path and that the file is a probe report.") from exc
    return report_from_bytes(raw, source=str(path))


def report_from_bytes(raw: bytes, *, source: str = "probe report") -> ProbeReport:
    """Validate a report given as the bytes of its file (an upload, a stored copy); ``source``
    names it in messages."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportError(f"cannot read probe report {source!r}: {exc}. "
                          "To fix: check the path and that the file is a probe report.") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(f"probe report {source!r} is not valid JSON "
                          f"(line {exc.lineno}, column {exc.colno}: {exc.msg}). "
                          f"{_FIX_REPORT}") from exc
    return parse_report(data, source=source)


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
