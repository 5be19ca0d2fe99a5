"""Shape evaluations kept on disk between runs, so a new process does not re-run the model.

A fresh ``gpuplan plan`` spends about a fifth of its time timing every instance shape
(``_evaluate``); the answer depends only on the ``ShapeKey`` and on the model's code. So each
evaluation is kept in the per-user cache (``catalog.read_cached``/``write_cached``: the user's
own files, checked, plain data only, written by rename) as ``eval-<name>.bin``, keyed by a
SHA-256 over

    the source of planner/model/ and of this module and ``_evaluate`` (a new gpuplan, or an
    edited checkout, never meets an old evaluation), numpy's and Python's versions, and the
    ``ShapeKey`` written canonically (sets sorted, so the hash seed changes nothing).

An entry holds the arrays' dtypes, shapes and bytes, so a loaded evaluation is the computed
one to the last bit (tests/planner/test_kept_evaluations.py). Evaluations that carry workload
probe measurements (``found``) are not kept: they are not plain data and are rare. The
entries share a budget of ``BUDGET_BYTES`` (oldest removed first); ``GPUPLAN_NO_CACHE=1``
turns this off with the catalog cache, and deleting the cache directory is always safe.
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Mapping
from dataclasses import is_dataclass
from pathlib import Path
from types import MappingProxyType

PREFIX = "eval"
FORMAT = "shape-evaluation 1"
BUDGET_BYTES = 256 * 2**20  # ~10 plans of every shape at 16,384 GPUs, ~200 at 1,024
_MODULES = ("search/_evaluate.py", "search/_kept.py")
_code: list[bytes] = []  # the code digest, computed once per process


def _code_digest() -> bytes | None:
    """SHA-256 over the model's source, these two modules', numpy's and Python's versions;
    None when a source cannot be read (no cache then)."""
    if not _code:
        import numpy as np

        root = Path(__file__).resolve().parents[1]
        digest = hashlib.sha256(f"{FORMAT}\n{sys.version_info[:2]}\n{np.__version__}\n"
                                .encode())
        try:
            files = sorted((root / "model").glob("*.py")) + [root / m for m in _MODULES]
            for path in files:
                data = path.read_bytes()
                digest.update(f"{path.name}:{len(data)}\n".encode())
                digest.update(hashlib.sha256(data).digest())
        except OSError:
            _code.append(b"")
        else:
            _code.append(digest.digest())
    return _code[0] or None


def canonical(value) -> str:
    """``value`` (``hashable``'s nested tuples) as text that is the same in every process:
    frozensets sorted (their order follows the string hash seed), everything else by repr
    (floats round-trip exactly)."""
    if isinstance(value, tuple):
        return "(" + ",".join(map(canonical, value)) + ")"
    if isinstance(value, frozenset):
        return "{" + ",".join(sorted(map(canonical, value))) + "}"
    if is_dataclass(value) or isinstance(value, Mapping | list | set):
        raise TypeError(f"not plain: {type(value).__name__}")  # ``hashable`` it first
    return repr(value)


def _entry(text: str) -> tuple[str, bytes] | None:
    """(file name, key) of the entry for the ``ShapeKey`` written as ``text`` (None: nothing
    is kept)."""
    code = _code_digest()
    if code is None:
        return None
    key = hashlib.sha256(code + text.encode()).digest()
    return key.hex()[:32], key


def _array(a):
    return (a.dtype.str, a.shape, a.tobytes())


def _from(encoded):
    import numpy as np

    dtype, shape, data = encoded
    a = np.frombuffer(data, dtype=np.dtype(dtype)).reshape(shape)  # read-only: bytes
    if a.dtype.hasobject:
        raise TypeError("object array")
    return a


def load(text: str):
    """The kept evaluation of the ``ShapeKey`` written as ``text`` (``canonical``) as the
    fields of a ``ShapeEvaluation``, ``None`` for a kept "nothing fits", or ``MISSING``."""
    from catalog import read_cached

    entry = _entry(text)
    value = read_cached(PREFIX, *entry) if entry else None
    try:
        if type(value) is not tuple or value[0] != FORMAT:
            return MISSING
        if value[1] is None:
            return None
        evaluated, nodes, grid, res, sigma, tokens = value[1:]
        fields = {"nodes": _from(nodes),
                  "grid": MappingProxyType({k: _from(v) for k, v in grid}),
                  "res": MappingProxyType({k: _from(v) for k, v in res}), "sigma": _from(sigma),
                  "tokens_per_step": _from(tokens), "evaluated": int(evaluated)}
    except (TypeError, ValueError, KeyError, IndexError):
        return MISSING
    if fields["nodes"].ndim != 1:
        return MISSING
    rows = len(fields["nodes"])
    arrays = (*fields["grid"].values(), *fields["res"].values(), fields["sigma"],
              fields["tokens_per_step"])
    if any(a.shape != (rows,) for a in arrays):
        return MISSING
    return fields


def store(text: str, ev) -> None:
    """Keep ``ev`` (a ``ShapeEvaluation`` or None) for the ``ShapeKey`` written as ``text``;
    best effort. One with workload probe measurements is not kept."""
    from catalog import write_cached

    entry = _entry(text)
    if entry is None or (ev is not None and ev.found):
        return
    arrays = () if ev is None else (ev.nodes, *ev.grid.values(), *ev.res.values(), ev.sigma,
                                    ev.tokens_per_step)
    if any(a.dtype.hasobject for a in arrays):
        return
    value = (FORMAT, None) if ev is None else (
        FORMAT, ev.evaluated, _array(ev.nodes),
        tuple((k, _array(v)) for k, v in ev.grid.items()),
        tuple((k, _array(v)) for k, v in ev.res.items()),
        _array(ev.sigma), _array(ev.tokens_per_step))
    write_cached(PREFIX, *entry, value, budget_bytes=BUDGET_BYTES)


MISSING = object()
