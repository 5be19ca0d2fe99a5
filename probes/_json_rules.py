"""How a probe report's JSON is read: the hooks ``json.loads`` gets (``JSON_HOOKS``), so that a
damaged or hostile file is one clear error and never a value no report holds: no NaN or
Infinity (reports are written with allow_nan=False), no number longer than a real figure, no
key given twice (a second ``schema_version`` would silently win).

catalog's ``load_json_text`` applies the same rules to the user's other JSON files; they are
written again here on purpose: `gpuplan launch` copies only probes/ to a node, which reads and
writes reports without catalog installed (as ``_report_io`` repeats catalog's file rules)."""

from __future__ import annotations

import math
from typing import Any

MAX_NUMBER_DIGITS = 40  # no figure of a report has more; int() of 5,000 digits raises


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number a report may hold")


def _bounded_int(raw: str) -> int:
    if len(raw.lstrip("-")) > MAX_NUMBER_DIGITS:
        raise ValueError(f"a {len(raw.lstrip('-'))}-digit number")
    return int(raw)


def _finite_float(raw: str) -> float:
    if len(raw) > 4 * MAX_NUMBER_DIGITS:
        raise ValueError(f"a {len(raw)}-character number")
    value = float(raw)
    if not math.isfinite(value):
        raise ValueError(f"{raw} is too large for a number")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


JSON_HOOKS = {"parse_constant": _no_constant, "parse_int": _bounded_int,
              "parse_float": _finite_float, "object_pairs_hook": _unique_keys}
