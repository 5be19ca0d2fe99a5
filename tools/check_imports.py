#!/usr/bin/env python3
"""The import graph of catalog/, planner/, probes/ and the app, and the rules it must keep.

    python tools/check_imports.py [--graph]

Reads every module with ``ast`` (nothing is imported) and records every ``import`` statement,
at module level or inside a function (a lazy import is still a dependency). Fails (exit 1)
on any of:

1. a cycle between modules: two modules that import each other, directly or through others;
2. a cycle between units: a unit is a top-level package (``catalog``, ``probes``, the app:
   ``app.py`` + ``app_pages/``), or, inside ``planner``, one of its sub-packages
   (``planner.model``, ``planner.search`` …; the package's own ``__init__`` is the unit
   ``planner``);
3. a private import across units: a module whose name starts with ``_`` imported from
   another unit. ``tools/`` and ``benchmarks/`` are checked as importers too (a script is its
   own unit); ``tests/`` may import private modules.

Then it prints a summary: modules and edges, the unit graph (who imports whom), each unit's
share of the code and the largest modules (``tools/code_shares.py`` has the counting).
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

from code_shares import MAX_MODULE_LINES, MAX_SHARE, shares

PACKAGES = ("catalog", "planner", "probes", "app_pages")
SCRIPTS = ("app.py",)
IMPORTER_ONLY = ("tools", "benchmarks")  # checked for private imports, not in the graph


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    for script in SCRIPTS:
        found[module_name(ROOT / script)] = ROOT / script
    return found


def unit_of(module: str) -> str:
    """The unit a module belongs to (module docstring, rule 2)."""
    parts = module.split(".")
    if parts[0] in ("app", "app_pages"):
        return "app"
    if parts[0] == "planner" and len(parts) > 1:
        sub = parts[1]
        if sub == "__main__":  # `python -m planner` is the command line
            return "planner.cli"
        return "planner" if sub.startswith("_") else f"planner.{sub}"
    if parts[0] in ("tools", "benchmarks"):
        return module
    return parts[0]


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def imports_of(module: str, path: Path, known: Iterable[str]) -> list[tuple[str, int]]:
    """(imported project module, line) for every import in ``path``."""
    known = set(known)
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if _is_package(path) else module.rpartition(".")[0]
    out = []

    def resolve(name: str) -> str | None:
        """The longest project module that ``name`` is or lies in."""
        parts = name.split(".")
        while parts:
            candidate = ".".join(parts)
            if candidate in known:
                return candidate
            parts.pop()
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = resolve(alias.name)
                if target:
                    out.append((target, node.lineno))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[:len(base) - (node.level - 1)]
                name = ".".join([*base, *([node.module] if node.module else [])])
            else:
                name = node.module or ""
            for alias in node.names:
                target = resolve(f"{name}.{alias.name}") if name else resolve(alias.name)
                if target is None or (target != f"{name}.{alias.name}" and name in known):
                    target = resolve(name)
                if target:
                    out.append((target, node.lineno))
    return out


def is_private(module: str) -> bool:
    return any(part.startswith("_") and not part.startswith("__")
               for part in module.split("."))


def private_target(importer: str, target: str) -> str | None:
    """The private module of ``target`` that ``importer`` reaches into, if any: the first
    ``_name`` part of ``target`` below what both share of the same unit."""
    if unit_of(importer) == unit_of(target):
        return None
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i + 1])
    return None


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one node (or a self-loop), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan, recursive: the graphs here are a few hundred nodes
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, ()):
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def build() -> tuple[dict[str, set[str]], list[tuple[str, int, str, str]]]:
    """(module graph, private imports across units: (file, line, importer, private module))."""
    modules = project_modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    private: set[tuple[str, int, str, str]] = set()
    for module, path in modules.items():
        for target, line in imports_of(module, path, modules):
            if target != module:
                graph[module].add(target)
            reach = private_target(module, target)
            if reach:
                private.add((str(path.relative_to(ROOT)), line, module, reach))
    for folder in IMPORTER_ONLY:
        for path in sorted((ROOT / folder).rglob("*.py")):
            module = module_name(path)
            for target, line in imports_of(module, path, modules):
                reach = private_target(module, target)
                if reach:
                    private.add((str(path.relative_to(ROOT)), line, module, reach))
    return graph, sorted(private)


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    units: dict[str, set[str]] = {}
    for module, targets in graph.items():
        u = unit_of(module)
        units.setdefault(u, set())
        for t in targets:
            if unit_of(t) != u:
                units[u].add(unit_of(t))
    return units


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", action="store_true", help="also print every module's "
                        "imports")
    args = parser.parse_args(argv)
    graph, private = build()
    units = unit_graph(graph)
    module_cycles, unit_cycles = cycles(graph), cycles(units)
    edges = sum(len(v) for v in graph.values())
    print(f"{len(graph)} modules, {edges} import edges (lazy imports included), "
          f"{len(units)} units")
    print("\nunits and what they import:")
    for u in sorted(units):
        print(f"  {u:<16} -> {', '.join(sorted(units[u])) or '(nothing of the project)'}")
    if args.graph:
        print("\nmodules:")
        for m in sorted(graph):
            print(f"  {m} -> {', '.join(sorted(graph[m])) or '-'}")
    print(f"\nmodule cycles: {len(module_cycles)}")
    for c in module_cycles:
        print("  " + " <-> ".join(c))
    print(f"unit cycles: {len(unit_cycles)}")
    for c in unit_cycles:
        print("  " + " <-> ".join(c))
    print(f"private imports across units: {len(private)}")
    for path, line, importer, target in sorted(private):
        print(f"  {path}:{line}: {importer} imports {target}")
    table, total = shares()
    print(f"\ncode shares ({total:,} non-blank, non-comment lines of .py under catalog/, "
          "the planner sub-packages, probes/ and app_pages/):")
    over = []
    for unit, lines in table:
        share = lines / total
        print(f"  {unit:<16} {lines:>6,}  {share:6.1%}")
        if share > MAX_SHARE:
            over.append(unit)
    big = sorted(((n, str(p.relative_to(ROOT))) for p in project_modules().values()
                  for n in (len(p.read_text(encoding="utf-8").splitlines()),)), reverse=True)
    print(f"largest modules (lines; at most ~{MAX_MODULE_LINES}):")
    for n, p in big[:8]:
        print(f"  {n:>5}  {p}")
    too_big = [(n, p) for n, p in big if n > MAX_MODULE_LINES]
    failed = bool(module_cycles or unit_cycles or private or over or too_big)
    if over:
        print(f"units above {MAX_SHARE:.0%} of the code: {', '.join(over)}")
    if too_big:
        print("modules above the size limit: " + ", ".join(p for _, p in too_big))
    print("\nFAILED" if failed else "\nOK: no cycles, no private imports across units, no "
          f"unit above {MAX_SHARE:.0%}, no module above {MAX_MODULE_LINES} lines")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
