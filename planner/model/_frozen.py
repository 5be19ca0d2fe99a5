"""Read-only views for the mappings frozen records carry (a frozen dataclass holding a dict is
not frozen): ``freeze`` turns dicts into read-only mappings and lists into tuples, all the way
down; ``thaw`` turns them back into plain dicts and lists for JSON (``as_dict``)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any


def freeze(value: Any) -> Any:
    """``value`` with every dict a read-only mapping and every list a tuple (recursively)."""
    kind = type(value)  # the exact types first: a plan freezes ~1,000 small dicts of floats
    if kind is float or kind is int or kind is str or value is None:
        return value
    if kind is dict:
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """The plain dicts and lists of a frozen value (what JSON and callers that edit expect)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value
