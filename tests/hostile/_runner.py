"""Run hostile-input cases through the real CLI entry point, in process.

A case is a command line plus the files it needs. ``run_case`` creates the files in a fresh
folder, calls ``planner.cli.main(argv)`` with stdout and stderr captured, and returns what
happened; ``check_case`` asserts the promise every command keeps (issue 16):

- the exit code is 0 or 2, and it is the one the case expects;
- no exception escapes ``main`` (no traceback), whatever the input;
- a run that fails (exit 2) says so in one line on stderr, ``error: …`` ending with what to do
  ("To fix: …"), or, for Typer's own usage errors, its usage block;
- no ``nan`` or ``inf`` appears in a result (stdout always; stderr when the run succeeded —
  an error may quote the bad value back).

Adding cases: create ``tests/hostile/cases_<area>.py`` with a module-level ``CASES`` list of
``Case``; ``all_cases()`` collects every such module, so ``test_corpus.py`` runs them without
being edited. Argument strings may name the case's files as ``{name}`` and its folder as
``{tmp}``.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pkgutil
import re
import stat
import traceback
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pytest


class Fifo:
    """A named pipe at this name (reading it would block forever)."""


class Directory:
    """An empty directory at this name."""


@dataclass(frozen=True)
class Symlink:
    target: str  # "{name}" of another file of the case, or an absolute path


@dataclass(frozen=True)
class Outcome:
    code: int | None
    out: str
    err: str
    traceback: str | None  # set when an exception escaped main()
    folder: Path


FileSpec = bytes | str | Fifo | Directory | Symlink


@dataclass(frozen=True)
class Case:
    """One hostile input. ``says``: a fragment the error line (exit 2) or stdout (exit 0) must
    contain. ``check``: more assertions on the outcome (a device left alone, a cell
    neutralised). ``xfail``: why this case still fails and who owns the fix — the case stays
    in the corpus and passes as soon as the fix lands (not strict)."""

    id: str
    argv: tuple[str, ...]
    expect: int
    files: Mapping[str, FileSpec] = field(default_factory=dict)
    says: str = ""
    check: Callable[[Outcome], None] | None = None
    xfail: str = ""


_NOT_FINITE = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.IGNORECASE)


def make_files(folder: Path, files: Mapping[str, FileSpec]) -> dict[str, str]:
    paths = {"tmp": str(folder)}
    for name in files:
        paths[name] = str(folder / name)
    for name, spec in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(spec, Fifo):
            os.mkfifo(path)
        elif isinstance(spec, Directory):
            path.mkdir()
        elif isinstance(spec, Symlink):
            path.symlink_to(spec.target.format_map(paths))
        elif isinstance(spec, bytes):
            path.write_bytes(spec)
        else:
            path.write_text(spec, encoding="utf-8")
    return paths


@contextlib.contextmanager
def _no_device_replaced():
    """A safety net while a case runs: renaming over a device, FIFO or socket raises.

    Cases pass /dev/null as --out; code that regressed to "write a temp file, rename it over
    the target" would, as root, replace the machine's /dev/null (issue 16). The guard turns
    that into a traceback the case reports, instead of damage.
    """
    real_replace, real_rename = os.replace, os.rename

    def guarded(real):
        def call(src, dst, *args, **kwargs):
            try:
                mode = os.stat(dst).st_mode
            except (OSError, ValueError, TypeError):
                mode = None
            if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise RuntimeError(f"hostile-corpus guard: refusing to rename over {dst!r}, "
                                   "which is not a regular file")
            return real(src, dst, *args, **kwargs)
        return call

    os.replace, os.rename = guarded(real_replace), guarded(real_rename)
    try:
        yield
    finally:
        os.replace, os.rename = real_replace, real_rename


def run_case(case: Case, folder: Path) -> Outcome:
    from planner.cli import main

    paths = make_files(folder, case.files)
    argv = [a.format_map(paths) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    code, tb = None, None
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            _no_device_replaced():
        try:
            code = main(argv)
        except SystemExit as exc:  # main never exits itself; a command that does is a bug
            tb = f"SystemExit({exc.code}) escaped main()"
        except BaseException:  # noqa: BLE001 - the point is to catch everything
            tb = traceback.format_exc()
    return Outcome(code=code, out=out.getvalue(), err=err.getvalue(), traceback=tb,
                   folder=folder)


def problems(case: Case, outcome: Outcome) -> list[str]:
    """Everything wrong with ``outcome`` (empty: the case passes)."""
    found = []
    if outcome.traceback is not None:
        return [f"traceback:\n{outcome.traceback}"]
    if outcome.code not in (0, 2):
        found.append(f"exit code {outcome.code}, expected 0 or 2")
    elif outcome.code != case.expect:
        found.append(f"exit code {outcome.code}, expected {case.expect}")
    if "Traceback (most recent call last)" in outcome.out + outcome.err:
        found.append("a traceback was printed")
    if _NOT_FINITE.search(outcome.out):
        found.append(f"nan/inf in stdout: {_NOT_FINITE.search(outcome.out).group()!r}")
    if outcome.code == 0 and _NOT_FINITE.search(outcome.err):
        found.append(f"nan/inf in stderr: {_NOT_FINITE.search(outcome.err).group()!r}")
    if outcome.code == 2:
        lines = outcome.err.strip().splitlines()
        usage = bool(lines) and lines[0].startswith("Usage:")
        if not usage and (len(lines) != 1 or not lines[0].startswith("error: ")
                          or "To fix" not in lines[0]):
            found.append(f"not one 'error: … To fix: …' line: {outcome.err!r}")
        if case.says and case.expect == 2 and case.says not in outcome.err:
            found.append(f"error does not say {case.says!r}: {outcome.err.strip()!r}")
    if outcome.code == 0 and case.expect == 0 and case.says and case.says not in outcome.out:
        found.append(f"stdout does not contain {case.says!r}")
    return found


def check_case(case: Case, folder: Path) -> Outcome:
    outcome = run_case(case, folder)
    found = problems(case, outcome)
    if not found and case.check is not None:
        case.check(outcome)
    assert not found, f"{case.id}: " + "; ".join(found)
    return outcome


def all_cases() -> list[Case]:
    """Every ``CASES`` list in this package's ``cases_*.py`` modules, in name order."""
    package = importlib.import_module(__package__)
    cases: list[Case] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if info.name.startswith("cases_"):
            cases.extend(importlib.import_module(f"{__package__}.{info.name}").CASES)
    ids = [c.id for c in cases]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"duplicate case ids: {duplicates}"
    return cases


def params(cases: list[Case]) -> list:
    """``cases`` as pytest params, with the xfail mark where a case names a pending fix."""
    return [pytest.param(c, id=c.id, marks=pytest.mark.xfail(reason=c.xfail, strict=False))
            if c.xfail else pytest.param(c, id=c.id) for c in cases]


# ---- checks shared by cases ------------------------------------------------------------------

def still_char_device(path: str) -> Callable[[Outcome], None]:
    def check(outcome: Outcome) -> None:
        assert stat.S_ISCHR(os.stat(path).st_mode), f"{path} was replaced"
    return check


def still_fifo(name: str) -> Callable[[Outcome], None]:
    def check(outcome: Outcome) -> None:
        assert stat.S_ISFIFO(os.lstat(outcome.folder / name).st_mode), f"{name} was replaced"
    return check


def file_contains(name: str, *fragments: str, absent: tuple[str, ...] = ()) -> Callable:
    def check(outcome: Outcome) -> None:
        text = (outcome.folder / name).read_text(encoding="utf-8")
        for f in fragments:
            assert f in text, f"{name} lacks {f!r}"
        for f in absent:
            assert f not in text, f"{name} contains {f!r}"
    return check
