"""The files the CLI reads for the planner, which takes data: a model's config.json
(``--config``), a quota file (``--quota-file``) and probe reports (``refused_reports``: all
checked before `probe ingest` stores any). Each is read through catalog's safe readers
(regular files, bounded size and depth) and the error names the option or the file as typed.
And the files it must never write: gpuplan's own store (``own_store_clash``).
"""

from __future__ import annotations

from catalog import record

RERUN_FIX = "re-run `python -m probes --out PATH` on the instance and use that file"


def load_quota_file(path: str, catalog):
    """``planner.search.parse_quotas`` of the YAML file at ``path`` (``--quota-file``; a
    leading ``~`` is the home folder, as ``read_user_text`` reads every user file)."""
    from catalog import CatalogFileError, load_yaml_text, read_user_text
    from planner.model import PlannerError
    from planner.search import MAX_QUOTA_FILE_BYTES, parse_quotas

    try:
        text = read_user_text(path, what="quota file", max_bytes=MAX_QUOTA_FILE_BYTES)
        data = load_yaml_text(text, what=f"quota file {path}")
    except CatalogFileError as exc:
        raise PlannerError(str(exc), field="quotas", value=path) from None
    return parse_quotas(data, catalog, source=str(path))


def own_store_clash(path, *, catalog_path=None) -> str | None:
    """How an output ``path`` is in gpuplan's own store ("is gpuplan's probe database", "is in
    the packaged catalog's folder (…)"), or None: a catalog
    folder (the packaged one, the store, ``catalog_path``: the one this command loaded) or
    the probe database and SQLite's files beside it. A report or task file written there
    exited 0 and broke every later command ("the probe database is damaged")."""
    import os

    from catalog import in_catalog_folders
    from planner.store import db_path

    real = os.path.realpath(path)
    db = os.path.realpath(db_path())
    if real in {db + end for end in ("", "-journal", "-wal", "-shm")}:
        return "is gpuplan's probe database" if real == db else \
            "is a file SQLite keeps beside gpuplan's probe database"
    where = in_catalog_folders(path, loaded=catalog_path)
    return f"is in {where}" if where else None


@record(kw_only=False)
class Refused:
    """A probe report file `probe ingest` refuses: ``path`` as the user typed it, ``reason``
    without the name ("not valid JSON as gpuplan reads it (is empty)"), and its own fix."""

    path: str
    reason: str
    fix: str

    def as_dict(self) -> dict:
        return {"path": self.path, "error": self.reason, "fix": self.fix}


def refused_from(path: str, exc: BaseException) -> Refused:
    """``exc`` (a reader's, the probes' parser's, the store's) as a Refused of ``path``: its
    text without the file's name, however the raiser wrote it ("probe report x.json: …",
    "/abs/x.json: …", "x.json: …"), so that every file is named once, the way it was typed."""
    import os

    from ._flags import say_fields

    what, _, fix = say_fields(str(exc)).partition(" To fix: ")
    names = {path, repr(path), os.path.abspath(os.path.expanduser(path))}
    for name in sorted(names, key=len, reverse=True):
        for prefix in (f"probe report {name}: ", f"{name}: "):
            what = what.removeprefix(prefix)
    return Refused(path, what.strip().rstrip(".").strip(), fix.strip().rstrip(".") or RERUN_FIX)


def _json_checked(path: str) -> bytes:
    """The bytes of the report file at ``path`` once it is one the store can read: a regular
    file (the store's reader would block on a FIFO and read /dev/zero until memory ran out),
    at most 16 MiB, UTF-8, and JSON without NaN/Infinity, 400-digit numbers or deep nesting
    (which crashed it)."""
    from catalog import CatalogFileError, GpuplanError, load_json_text, read_user_text
    from probes import MAX_REPORT_BYTES

    text = read_user_text(path, what="probe report", max_bytes=MAX_REPORT_BYTES)
    try:
        load_json_text(text, what=f"probe report {path}")
    except CatalogFileError as exc:
        detail = str(exc).split(" To fix:")[0].removeprefix(f"probe report {path}: ")
        raise GpuplanError(f"probe report {path}: not valid JSON as gpuplan reads it "
                           f"({detail.rstrip('.')}). To fix: {RERUN_FIX}") from None
    return text.encode("utf-8")


def refused_reports(paths: list[str], catalog, accelerator: str | None) -> list[Refused]:
    """Each of ``paths`` that `probe ingest` would refuse, with why, in the order given.
    Every file is read and JSON-checked, then put through the store's own checks (the probes'
    report parser, the catalog accelerator it resolves to, ``accelerator``) into an empty
    scratch database: ingest stores one report per transaction, and a bad third file had left
    the first two stored when the store refused it, but not when the JSON reader did."""
    import tempfile
    from pathlib import Path

    from catalog import GpuplanError
    from planner.store import ingest_bytes

    refused: list[Refused] = []
    try:
        scratch_dir = tempfile.TemporaryDirectory(prefix="gpuplan-ingest-check-")
    except OSError as exc:
        raise GpuplanError(f"cannot create a scratch folder to check the reports in "
                           f"({exc.strerror or exc}). To fix: point TMPDIR at a writable "
                           "folder") from None
    with scratch_dir as scratch:
        db = Path(scratch) / "probes.db"
        for path in paths:
            try:
                ingest_bytes(_json_checked(path), catalog, source=path,
                             accelerator=accelerator, db=db)
            except GpuplanError as exc:
                refused.append(refused_from(path, exc))
    return refused
