"""The files the CLI reads for the planner, which takes data: a model's config.json
(``--config``) and a quota file (``--quota-file``). Each is read through catalog's safe
readers (regular files, bounded size and depth) and the error names the option. And the
files it must never write: gpuplan's own store (``own_store_clash``).
"""

from __future__ import annotations


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
