"""Errors a user can cause while reading the catalog.

    GpuplanError                 (planner's errors derive from it too; the CLI prints one line)
    └── CatalogError
        ├── CatalogFileError     a catalog CSV/JSON is unreadable or malformed (file:line: column)
        ├── UnknownNameError     an accelerator, cloud, region or instance type that isn't there
        └── OverrideError        a price-overrides file is malformed

Every message ends with what to do ("To fix: …"), and UnknownNameError suggests close matches.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class GpuplanError(Exception):
    """Base of every error a user can cause; ``str(exc)`` is the one line to show."""


class CatalogError(GpuplanError):
    pass


class CatalogFileError(CatalogError):
    pass


class OverrideError(CatalogError):
    pass


class UnknownNameError(CatalogError):
    def __init__(self, kind: str, name: str, known: Iterable[str], hint: str = "") -> None:
        known = sorted(set(known))
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
        if not close:  # case-insensitive second chance: "h100" vs "H100-SXM5-80GB"
            lowered = {k.lower(): k for k in known}
            close = [lowered[m] for m in
                     difflib.get_close_matches(name.lower(), list(lowered), n=3, cutoff=0.6)]
        suggestion = f" Did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        fix = hint or f"use one of: {', '.join(known[:12])}{' …' if len(known) > 12 else ''}"
        super().__init__(f"unknown {kind} {name!r}.{suggestion} To fix: {fix}")
        self.kind, self.name, self.suggestions = kind, name, tuple(close)
