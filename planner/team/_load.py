"""Reading a team plan from a file (or text), and the model configs its jobs name.

The edge of the team package: ``load_team_plan`` reads the YAML through
``catalog.read_user_text`` (a regular file, size-limited, UTF-8) and ``catalog.load_yaml_text``
(dates stay strings, so ``2027-02-30`` is an error naming the field), reads every
``workload: config: PATH`` relative to the team file (``planner.model.read_model_config``),
and hands the data to ``parse_team_plan``. A team plan given as text has no directory of its
own and may come from someone else (an upload): its ``config:`` paths are refused unless
``allow_config_paths`` says otherwise.
"""

from __future__ import annotations

import re
from pathlib import Path

from catalog import Catalog, CatalogFileError, load_yaml_text, read_user_text

from ..model import WorkloadError, read_model_config
from ._fields import TeamPlanError
from ._spec import MAX_JOBS, TeamPlan, parse_team_plan

MAX_TEAM_FILE_BYTES = 2**20


def load_team_plan(path_or_text: str | Path, *, catalog: Catalog,
                   allow_config_paths: bool | None = None) -> TeamPlan:
    """Read a team plan from a path, or from YAML text (anything containing a newline).

    ``allow_config_paths``: whether ``workload: config:`` may name a file. ``None`` (the
    default) allows it for a file (paths are relative to it) and refuses it for text.
    """
    try:
        text, source, base = _read_source(path_or_text)
    except CatalogFileError as exc:  # one error type for "this team plan cannot be used"
        raise TeamPlanError(str(exc)) from None
    data = team_yaml(text, source=source)
    if allow_config_paths is None:
        allow_config_paths = base is not None
    configs = {}
    if allow_config_paths:
        data, configs = _configs(data, base or Path(), source)
    return parse_team_plan(data, catalog=catalog, source=source, configs=configs)


# What a TOML file has and a YAML mapping does not: a [table] or [[array]] header, or a
# `key = value` line (YAML writes `key: value`).
_TOML_LINE = re.compile(r"\s*(\[\[?\s*[\w.\-\" ]+\s*\]\]?|[\w\-\"]+\s*=\s*\S.*)\s*(#.*)?")


def team_yaml(text: str, *, source: str):
    """A team plan's YAML text as data (None for an empty file), as ``load_team_plan`` reads
    it: a TOML file is named as such. TeamPlanError when it is not YAML; what the data must
    hold is ``parse_team_plan``'s."""
    try:
        data = load_yaml_text(text, what=source) if text.strip() else None
    except CatalogFileError as exc:
        message = str(exc)
        if "values (line" in message and "split it into smaller files" in message:
            # a 10,000-job file: the files to split it into hold at most MAX_JOBS jobs each
            message = message.replace("split it into smaller files", "split it into team "
                                      f"files of at most {MAX_JOBS} jobs each (the most a "
                                      "plan holds)")
        raise TeamPlanError(_not_yaml(text, source) or message) from None
    if not isinstance(data, dict) and text.strip() and (why := _not_yaml(text, source)):
        raise TeamPlanError(why)
    return data


def _not_yaml(text: str, source: str) -> str | None:
    """Why a team file is not YAML when it looks like TOML (parsed as YAML, TOML gives
    "expected '<document start>'", or a plain string); None otherwise."""
    for n, line in enumerate(text.splitlines()[:200], start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if _TOML_LINE.fullmatch(line):
            shown = line.strip() if len(line.strip()) <= 40 else line.strip()[:39] + "…"
            return (f"{source}: line {n} {shown!r} looks like TOML; a team file must be YAML. "
                    "To fix: write it as YAML (`key: value`, lists as `- item`; see README, "
                    "'Team budgets and reports', and docs/team.md)")
        return None  # the first content line decides: YAML with a syntax error is not TOML
    return None


def _read_source(path_or_text: str | Path) -> tuple[str, str, Path | None]:
    if isinstance(path_or_text, str) and ("\n" in path_or_text or ":" in path_or_text
                                          and not _exists(path_or_text)):
        return path_or_text, "team.yaml", None
    path = Path(path_or_text).expanduser()
    if _is_dir(path):  # read_user_text's fix, "give the path of an existing file", missed why
        raise TeamPlanError(f"team plan {path} is a directory. To fix: give the team file's "
                            "path, e.g. examples/team.yaml")
    text = read_user_text(path, what="team plan", max_bytes=MAX_TEAM_FILE_BYTES)
    return text, str(path), path.parent


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # unreadable, or not a path: read_user_text says why
        return False


def _exists(text: str) -> bool:
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a path
        return False


def _config_name(job) -> str | None:
    """The ``workload: config:`` a job entry names (None when it names none, or not as text:
    ``parse_team_plan`` refuses that)."""
    workload = job.get("workload") if isinstance(job, dict) else None
    name = workload.get("config") if isinstance(workload, dict) else None
    return name if isinstance(name, str) and name.strip() else None


def _jobs(data) -> list:
    jobs = data.get("jobs") if isinstance(data, dict) else None
    return jobs if isinstance(jobs, list) else []


def named_configs(data) -> tuple[str, ...]:
    """The config.json names a team plan's jobs give (``workload: config:``), once each, in
    order: what ``parse_team_plan``'s ``configs`` must hold (the app asks for their uploads)."""
    return tuple(dict.fromkeys(n for n in map(_config_name, _jobs(data)) if n is not None))


def _configs(data, base: Path, source: str) -> tuple[object, dict[str, dict]]:
    """(the plan with every job's ``workload: config:`` path made relative to where gpuplan
    runs, the parsed config.json of each such path). Entries that are not paths are left to
    ``parse_team_plan`` to refuse."""
    if not named_configs(data):
        return data, {}
    out: dict[str, dict] = {}
    resolved_jobs = []
    for i, job in enumerate(_jobs(data), start=1):
        name = _config_name(job)
        if name is None:
            resolved_jobs.append(job)
            continue
        path = str(Path(name) if Path(name).is_absolute() else base / name)
        if path not in out:
            try:
                out[path] = read_model_config(path, fix="give the path of the model's "
                                                        "config.json, relative to the team plan")
            except WorkloadError as why:
                label = f" {job['name']!r}" if isinstance(job.get("name"), str) else ""
                raise TeamPlanError(f"{source}: jobs[{i}]{label}: workload: {why}") from None
        resolved_jobs.append({**job, "workload": {**job["workload"], "config": path}})
    return {**data, "jobs": resolved_jobs}, out
