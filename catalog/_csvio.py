"""Typed CSV tables for the catalog: parse with precise errors, write atomically.

Each table is described once by a ``TableSpec`` (column name → codec). Reading checks the
header, converts every cell and builds the record; any failure names the file, line, column
and what was expected. A column whose record field has a default may be absent (a catalog
written before the field existed still loads). Writing goes through ``_files`` (temporary file
in the target directory, fsync, rename), so a reader never sees half a file.
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as _dt
import io
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from ._errors import REPLACE_CATALOG_FIX, CatalogFileError, without_fix
from ._files import read_user_text
from ._record import record
from ._records import Accelerator, InstanceType, Offer, RecordError
from ._writes import write_text_atomic

# A catalog table is a few MiB (the packaged offers.csv is the largest); anything this size is
# not one, and reading it whole would only exhaust memory.
MAX_TABLE_BYTES = 256 * 2**20


@record(kw_only=False)
class Codec:
    expected: str  # what a valid cell looks like, for error messages
    parse: Callable[[str], Any]
    format: Callable[[Any], str]


def _parse_float(raw: str) -> float:
    # float() also takes "1_3.5" and other scripts' digits; cells arrive stripped. (A check,
    # not a regex: this runs for every number of every offer when a catalog is parsed.)
    if "_" in raw or not raw.isascii():
        raise ValueError(raw)
    value = float(raw)
    if not math.isfinite(value):  # "nan", "inf" parse as floats; no catalog value may be one
        raise ValueError(raw)
    return value


def _parse_bool(raw: str) -> bool:
    if raw.lower() in ("true", "1", "yes"):
        return True
    if raw.lower() in ("false", "0", "no", ""):
        return False
    raise ValueError(raw)


def _fmt_float(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def _optional(codec: Codec) -> Codec:
    return Codec(
        expected=f"{codec.expected} or empty",
        parse=lambda raw: None if raw == "" else codec.parse(raw),
        format=lambda value: "" if value is None else codec.format(value),
    )


TEXT = Codec("text", lambda raw: raw, str)
def _parse_int(raw: str) -> int:
    if "_" in raw or not raw.isascii() or len(raw) > 40:  # as _parse_float; 40 digits is
        raise ValueError(raw)  # past any count
    return int(raw)


INT = Codec("a whole number", _parse_int, str)
FLOAT = Codec("a number", _parse_float, _fmt_float)
DATE = Codec("a date YYYY-MM-DD", _dt.date.fromisoformat, lambda d: d.isoformat())
TAGS = Codec(
    "tags separated by ';'",
    lambda raw: tuple(t for t in raw.split(";") if t),
    lambda tags: ";".join(tags),
)
BOOL = Codec("true or false", _parse_bool, lambda b: "true" if b else "false")
OPT_INT = _optional(INT)
OPT_FLOAT = _optional(FLOAT)


@record(kw_only=False)
class TableSpec:
    record: type
    columns: tuple[tuple[str, Codec], ...]
    defaults: dict  # column → default value, for columns that may be absent

    @property
    def header(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.columns)


def _spec(record: type, codecs: dict[str, Codec]) -> TableSpec:
    # Column order follows the record's field order so the files read like the records.
    names = [f.name for f in fields(record)]
    missing = set(names) ^ set(codecs)
    if missing:  # a programming error, caught by the tests
        raise AssertionError(f"{record.__name__} spec out of sync with fields: {missing}")
    defaults = {f.name: f.default for f in fields(record)
                if f.default is not dataclasses.MISSING}
    defaults.update({f.name: f.default_factory() for f in fields(record)
                     if f.default_factory is not dataclasses.MISSING})
    return TableSpec(record, tuple((n, codecs[n]) for n in names), defaults)


ACCELERATORS = _spec(Accelerator, {
    "name": TEXT, "vendor": TEXT, "architecture": TEXT, "form_factor": TEXT,
    "memory_gib": OPT_FLOAT, "memory_bandwidth_gb_per_s": OPT_FLOAT,
    "tflops_fp64": OPT_FLOAT, "tflops_fp32": OPT_FLOAT, "tflops_tf32": OPT_FLOAT,
    "tflops_bf16": OPT_FLOAT, "tflops_fp16": OPT_FLOAT, "tflops_fp8": OPT_FLOAT,
    "tops_int8": OPT_FLOAT, "intra_node_link": TEXT, "intra_node_gb_per_s_per_gpu": OPT_FLOAT,
    "tdp_w": OPT_FLOAT, "aliases": TAGS, "unverified": TAGS, "source": TEXT, "notes": TEXT,
    "sm_count": OPT_INT, "pcie_gb_per_s_per_gpu": OPT_FLOAT,
    "reference_gpus_per_node": OPT_INT, "reference_topology": TEXT,
    "reference_inter_node_gbps": OPT_INT, "reference_fabric": TEXT,
    "reference_node_source": TEXT, "peak_stand_in_tflops": OPT_FLOAT,
    "achievable_matmul_tflops": OPT_FLOAT, "skypilot_name": TEXT, "dstack_name": TEXT,
    "cloud_names": TAGS, "inference_only": BOOL, "planning_source": TEXT,
})

INSTANCE_TYPES = _spec(InstanceType, {
    "cloud": TEXT, "name": TEXT, "accelerator": TEXT, "gpu_count": INT, "vcpus": OPT_INT,
    "memory_gib": OPT_FLOAT, "gpu_memory_gib": OPT_FLOAT, "intra_node_topology": TEXT,
    "intra_node_gb_per_s_per_gpu": OPT_FLOAT, "inter_node_gbps": OPT_FLOAT, "fabric": TEXT,
    "gpudirect_rdma": TEXT, "network_source": TEXT, "flags": TAGS, "notes": TEXT,
})

OFFERS = _spec(Offer, {
    "cloud": TEXT, "instance_type": TEXT, "region": TEXT, "pricing": TEXT,
    "usd_per_hour": OPT_FLOAT, "usd_per_hour_zone_median": OPT_FLOAT,
    "usd_per_hour_zone_mean": OPT_FLOAT, "usd_per_hour_zone_max": OPT_FLOAT, "zone": TEXT,
    "zone_count": INT, "term_hours": OPT_FLOAT, "offering_class": TEXT, "upfront": TEXT,
    "interruption_rate_per_hour": OPT_FLOAT, "interruption_bucket": TEXT, "as_of": DATE,
    "as_of_approximate": BOOL, "source": TEXT, "flags": TAGS, "flag_reasons": TEXT,
})


def read_table(path: Path, spec: TableSpec, text: str | None = None) -> list[Any]:
    """Parse ``path`` (or ``text``, reported as ``path``) into records of ``spec``."""
    try:
        if text is None:  # gpuplan's own file: the fix is another catalog, not a re-save
            text = read_user_text(path, what="catalog file", max_bytes=MAX_TABLE_BYTES)
    except CatalogFileError as exc:
        raise CatalogFileError(f"{without_fix(exc)}. {REPLACE_CATALOG_FIX}") from None
    try:
        return _parse(path, spec, text)
    except csv.Error as exc:  # a NUL byte, an unterminated quote at the end
        raise CatalogFileError(f"{path}: malformed CSV ({exc}). {REPLACE_CATALOG_FIX}") from None
    except CatalogFileError as exc:  # one ending for every content error, values cut short
        message = str(exc)
        if len(message) > _MAX_MESSAGE:
            message = message[:_MAX_MESSAGE] + "…"
        if "To fix" not in message:
            message = f"{message}. {REPLACE_CATALOG_FIX}"
        raise CatalogFileError(message) from None

_MAX_MESSAGE = 400  # a 5,000-digit cell is quoted back in part


def _parse(path: Path, spec: TableSpec, text: str) -> list[Any]:
    reader = csv.reader(io.StringIO(text))
    try:
        header = next(reader)
    except StopIteration:
        raise CatalogFileError(f"{path}: file is empty; expected a header row "
                               f"{','.join(spec.header)}") from None
    missing = [c for c in spec.header if c not in header and c not in spec.defaults]
    if missing:
        raise CatalogFileError(f"{path}:1: missing columns {missing}; expected header "
                               f"{','.join(spec.header)}")
    index = {name: header.index(name) for name in spec.header if name in header}
    records = []
    for row in reader:
        line = reader.line_num
        if not row:
            continue
        if len(row) != len(header):
            raise CatalogFileError(f"{path}:{line}: expected {len(header)} cells, found "
                                   f"{len(row)}")
        values = {}
        for name, codec in spec.columns:
            if name not in index:
                values[name] = spec.defaults[name]
                continue
            raw = row[index[name]].strip()
            try:
                values[name] = codec.parse(raw)
            except (ValueError, TypeError):
                raise CatalogFileError(
                    f"{path}:{line}: column {name!r}: expected {codec.expected}, got "
                    f"{raw[:40]!r}{'…' if len(raw) > 40 else ''}"
                ) from None
        try:
            records.append(spec.record(**values))
        except RecordError as exc:
            raise CatalogFileError(f"{path}:{line}: {exc}") from None
    return records


def format_table(records: Iterable[Any], spec: TableSpec) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(spec.header)
    for row in records:
        writer.writerow([codec.format(getattr(row, name)) for name, codec in spec.columns])
    return buffer.getvalue()


def write_table(path: Path, records: Sequence[Any], spec: TableSpec) -> None:
    write_text_atomic(path, format_table(records, spec), what="catalog table")
