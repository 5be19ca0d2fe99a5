#!/usr/bin/env python3
"""How the code is shared out: non-blank, non-comment lines of the .py files of each unit.

    python tools/code_shares.py

Units: ``catalog``, each sub-package of ``planner`` (``planner.model``, ``planner.search`` …;
the package's own ``__init__``/``__main__`` count as ``planner``), ``probes`` and ``app``
(``app.py`` and ``app_pages/``). No unit should hold more than MAX_SHARE of the code and no
module should be longer than MAX_MODULE_LINES (tools/check_imports.py enforces both).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_SHARE = 0.30
MAX_MODULE_LINES = 450


def code_lines(path: Path) -> int:
    """Lines that are neither blank nor a comment (docstrings count: they are the maths)."""
    return sum(1 for line in path.read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.lstrip().startswith("#"))


def unit_of_path(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    if parts[0] in ("app.py", "app_pages"):
        return "app"
    if parts[0] == "planner":
        if parts[1] == "__main__.py":  # `python -m planner` is the command line
            return "planner.cli"
        return f"planner.{parts[1]}" if len(parts) > 2 else "planner"
    return parts[0]


def shares() -> tuple[list[tuple[str, int]], int]:
    """([(unit, lines)] largest first, total lines)."""
    by_unit: dict[str, int] = {}
    files = [ROOT / "app.py", *(p for top in ("catalog", "planner", "probes", "app_pages")
                                for p in sorted((ROOT / top).rglob("*.py")))]
    for path in files:
        unit = unit_of_path(path)
        by_unit[unit] = by_unit.get(unit, 0) + code_lines(path)
    total = sum(by_unit.values())
    return sorted(by_unit.items(), key=lambda kv: (-kv[1], kv[0])), total


def main() -> int:
    table, total = shares()
    print(f"{total:,} non-blank, non-comment lines")
    worst = 0.0
    for unit, lines in table:
        print(f"  {unit:<16} {lines:>6,}  {lines / total:6.1%}")
        worst = max(worst, lines / total)
    print(f"largest share {worst:.1%} (limit {MAX_SHARE:.0%})")
    return 0 if worst <= MAX_SHARE else 1


if __name__ == "__main__":
    sys.exit(main())
