"""Option values without pydantic: the common cases of Typer's coercion, done directly.

Typer (0.29 here) turns every option value into its annotated type with a pydantic
``TypeAdapter``, built per parameter on first use — even for an option left at its default.
Importing pydantic and building those adapters was a fifth of `gpuplan estimate`. Every option
gpuplan has is a ``str``, ``int``, ``float``, ``bool`` or ``list[str]``; for the values that
reach them in practice (what the shell passes, and the defaults) the result is plain Python:
``"12"`` → ``12``, ``"0.5"`` → ``0.5``, a tuple of strings → a list. ``install`` gives each
such parameter a coercion that does exactly that, and hands anything else (``" 12"``,
``"1_000"``, ``"1e400"``, ``"abc"``) to Typer's own coercion, built then, so every error
message and every corner stays Typer's. (When written, ``plain_value`` agreed with Typer's
adapters on ~66,000 generated values, type and sign of zero included.)

Nothing here is needed for correctness: a Typer without these internals (older or newer) is
left alone, and runs as it always did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

# Plain decimal literals, bounded so that int() and float() agree with pydantic on them
# (pydantic's lax mode accepts more — whitespace, underscores, "1.0" as an int — and those go
# to Typer's coercion, which says what it accepts).
_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]{0,17})(?:\.[0-9]{1,17})?(?:[eE][-+]?[0-9]{1,2})?")
_SKIP = object()


def plain_value(annotation: Any, value: Any) -> Any:
    """``value`` as ``annotation`` when the answer is obvious, else ``_SKIP``."""
    kind = type(value)
    if annotation is bool:
        return value if kind is bool else _SKIP
    if annotation is str:
        return value if kind is str else _SKIP
    if annotation is int:
        if kind is int:
            return value
        return int(value) if kind is str and _INT.fullmatch(value) else _SKIP
    if annotation is float:
        if kind is float:
            return value
        if kind is int and abs(value) < 2**53:
            return float(value)
        return float(value) if kind is str and _FLOAT.fullmatch(value) else _SKIP
    if annotation == list[str]:
        if kind in (tuple, list) and all(type(v) is str for v in value):
            return list(value)
        return _SKIP
    return _SKIP


def install(command) -> int:
    """Give every plain parameter of the click ``command`` tree the direct coercion; the
    number of parameters changed (0 when this Typer has no such internals)."""
    try:
        from typer._coercion import RuntimeParam, build_runtime_param
        from typer.core import _TyperParameter
    except ImportError:
        return 0

    try:
        return _install(command, RuntimeParam, build_runtime_param, _TyperParameter)
    except (TypeError, AttributeError, ValueError):  # a Typer whose internals differ
        return 0


def _install(command, runtime_param: type, build_runtime_param, typer_parameter: type) -> int:
    @dataclass(frozen=True)
    class PlainRuntimeParam(runtime_param):
        descriptor: Any = None
        _typer: list = field(default_factory=list, compare=False)  # Typer's own, on demand

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            plain = plain_value(self.annotation, value)
            if plain is not _SKIP:
                return plain
            if not self._typer:
                self._typer.append(build_runtime_param(self.descriptor))
            return self._typer[0]._coerce_value(value, param=param, ctx=ctx)

    def plain(param) -> int:
        if not isinstance(param, typer_parameter) or _plain_param(param) is None:
            return 0
        desc = param.type_descriptor
        param._runtime_param = PlainRuntimeParam(parameter_info=desc.parameter_info,
                                                 annotation=desc.annotation, descriptor=desc)
        return 1

    def with_plain_help(get_help_option):
        def get_plain_help_option(ctx):  # Typer makes `--help` when a command line is parsed
            option = get_help_option(ctx)
            try:
                if option is not None:
                    plain(option)
            except (TypeError, AttributeError, ValueError):
                pass  # Typer's own coercion, then
            return option
        return get_plain_help_option

    changed = 0
    for sub in _commands(command):
        changed += sum(plain(param) for param in getattr(sub, "params", ()))
        if callable(getattr(sub, "get_help_option", None)):
            sub.get_help_option = with_plain_help(sub.get_help_option)
    return changed


def _plain_param(param) -> Any:
    """The parameter's annotation if this module may coerce it, else None."""
    try:
        if param._runtime_param is not None:
            return None
        desc = param.type_descriptor
        info = desc.parameter_info
        if (info.parser is not None or info.min is not None or info.max is not None
                or info.clamp or desc.file_annotation is not None or desc.is_path
                or desc.is_choice):
            return None
    except AttributeError:
        return None
    annotation = desc.annotation
    return annotation if annotation in (bool, str, int, float, list[str]) else None


def _commands(command):
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)


__all__ = ["install", "plain_value"]
