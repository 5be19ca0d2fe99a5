"""The files the CLI reads for the planner, which takes data: a model's config.json
(``--config``) and a quota file (``--quota-file``). Each is read through catalog's safe
readers (regular files, bounded size and depth) and the error names the option.
"""

from __future__ import annotations


def load_quota_file(path: str, catalog):
    """``planner.search.parse_quotas`` of the YAML file at ``path`` (``--quota-file``)."""
    from catalog import CatalogFileError, load_yaml_text, read_user_text
    from planner.model import PlannerError
    from planner.search import MAX_QUOTA_FILE_BYTES, parse_quotas

    try:
        text = read_user_text(path, what="quota file", max_bytes=MAX_QUOTA_FILE_BYTES)
        data = load_yaml_text(text, what=f"quota file {path}")
    except CatalogFileError as exc:
        raise PlannerError(str(exc), field="quotas", value=path) from None
    return parse_quotas(data, catalog, source=str(path))
