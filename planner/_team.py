"""A team plan: several training jobs, shared GPU quotas, budgets and price overrides.

The file format is documented in docs/team.md (examples/team.yaml is a complete example)::

    name: ml-platform 2027H1
    start_offsets_days: [0, 7, 14]      # optional later starts the allocator may choose
    jobs:
      - name: pretrain-8b
        team: research
        workload: {model: llama3-8b, tokens: 1T}          # the `estimate` options
        earliest_start: 2027-03-01                         # 00:00 UTC
        deadline: 2027-04-15                               # finish by 00:00 UTC
        priority: 2                                        # higher is more important
        clouds: [aws, gcp]
        pricing: [on_demand, spot]
        max_gpus: 512
    quotas:                                                # as `plan --quota-file`, + month
      - {cloud: aws, region: us-east-1, accelerator: H100, gpus: 256}
    budgets: {"2027-03": 120000, "2027Q2": 300000, total: 500000}
    overrides: {discounts: [{cloud: aws, percent: 10}]}   # as `--overrides`

Parsing validates everything up front; every error names the job (1-based index and name)
and the field, and ends with what to do. ``parse_team_plan(mapping)`` and
``parse_actuals(text)`` take data; ``load_team_plan`` and ``load_actuals`` read files through
``catalog.read_user_text`` (regular files, size-limited, UTF-8) and ``catalog.load_yaml_text``
(dates stay strings and are checked here, so ``2027-02-30`` is an error naming the field).
A team plan that arrives as text (an upload in the app) may not name files on this machine:
``allow_config_paths=False`` refuses ``workload: config:``. Errors::

    PlannerError
    └── TeamPlanError           a team plan or an actuals file that cannot be used
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from catalog import (
    CLOUDS,
    PRICING_MODELS,
    Catalog,
    CatalogFileError,
    GpuplanError,
    load_yaml_text,
    read_user_text,
)

from ._build import ARCH_FIELDS, WorkloadSpec, build_workload
from ._errors import PlannerError
from ._hfconfig import SIZE_LIMITS
from ._optimizer import DEFAULT_MAX_GPUS
from ._quota import QuotaRule, parse_quota_rules
from ._report_actuals import ACTUALS_COLUMNS, load_actuals, parse_actuals  # noqa: F401
from ._workload import Workload

DEFAULT_START_OFFSETS_DAYS = (0, 7, 14)
DEFAULT_MIN_PROBABILITY = 0.9  # as `gpuplan plan --min-probability`
DEFAULT_PRICING = ("on_demand", "spot")
DEFAULT_TEAM = "unassigned"

_TOP_FIELDS = ("name", "jobs", "quotas", "budgets", "overrides", "start_offsets_days",
               "min_probability")
_JOB_FIELDS = ("name", "team", "workload", "earliest_start", "deadline", "priority", "clouds",
               "regions", "pricing", "accelerators", "exclude", "max_gpus", "min_probability",
               "start_offsets_days")
_WORKLOAD_FIELDS = ("model", "config", "params", "active_params", "experts",
                    "experts_per_token", "tokens", "seq_len", "global_batch_tokens",
                    "precision", "optimizer", "recompute", "finetune", "lora_rank",
                    *ARCH_FIELDS)
FIX = "To fix: correct the team plan (format: docs/team.md)"

# Bounds far beyond real team plans; they turn typos and hostile files into clear errors
# instead of a MILP with millions of columns or a 10^12-GPU cluster.
MAX_TEAM_FILE_BYTES = 2**20
MAX_JOBS = 500
MAX_JOB_GPUS = 65_536
MAX_PRIORITY = 1_000_000
MAX_OFFSETS = 32
MAX_OFFSET_DAYS = 3650
MAX_WINDOW_DAYS = 3653  # 10 years, as `--deadline`
MIN_YEAR, MAX_YEAR = 2000, 2200
MAX_BUDGET_USD = 1e12
MAX_NAME_CHARS = 200
# Workload fields that are whole numbers, with their upper bounds (sizes as in config.json).
_WHOLE_FIELDS = {"seq_len": 10_000_000, "experts": SIZE_LIMITS["experts"],
                 "experts_per_token": SIZE_LIMITS["experts_per_token"], "lora_rank": 65_536,
                 **{k: SIZE_LIMITS[k] for k in ARCH_FIELDS}}


class TeamPlanError(PlannerError):
    """A team plan or actuals file that cannot be used; the message names the place."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One training job of a team plan. Dates are UTC days (00:00)."""

    index: int  # 1-based position in the file, for messages
    name: str
    team: str
    spec: WorkloadSpec
    workload: Workload
    earliest_start: dt.date
    deadline: dt.date
    priority: int = 0
    clouds: tuple[str, ...] = ()
    regions: tuple[str, ...] = ()
    pricing: tuple[str, ...] = DEFAULT_PRICING
    accelerators: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_gpus: int = DEFAULT_MAX_GPUS
    min_probability: float | None = DEFAULT_MIN_PROBABILITY
    start_offsets_days: tuple[int, ...] = DEFAULT_START_OFFSETS_DAYS

    def __post_init__(self) -> None:
        if self.deadline <= self.earliest_start:
            raise TeamPlanError(f"{self.where}: deadline {self.deadline} is not after "
                                f"earliest_start {self.earliest_start}")

    @property
    def where(self) -> str:
        return f"jobs[{self.index}] {self.name!r}"

    @property
    def window_hours(self) -> float:
        return (self.deadline - self.earliest_start).days * 24.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TeamPlan:
    name: str
    source: str
    jobs: tuple[Job, ...]
    quotas: tuple[QuotaRule, ...] = ()
    budgets: tuple[tuple[str, float], ...] = ()  # (period, USD): "2027-03", "2027Q2", "total"
    overrides: object | None = None  # catalog._overrides.Overrides, applied by priced_catalog

    def job(self, name: str) -> Job:
        for j in self.jobs:
            if j.name == name:
                return j
        raise TeamPlanError(_unknown_job(name, [j.name for j in self.jobs], self.source))


def _unknown_job(name: str, known: list[str], where: str) -> str:
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
    return (f"{where}: unknown job {name!r}.{hint} To fix: use a job name from the team plan "
            f"({', '.join(known[:8])}{' …' if len(known) > 8 else ''})")


# ---- loading ---------------------------------------------------------------------------------

def load_team_plan(path_or_text: str | Path, *, catalog: Catalog,
                   allow_config_paths: bool | None = None) -> TeamPlan:
    """Read a team plan from a path, or from YAML text (anything containing a newline).

    ``allow_config_paths``: whether ``workload: config:`` may name a file. ``None`` (the
    default) allows it for a file (paths are relative to it) and refuses it for text, which has
    no directory of its own and may come from someone else (an upload).
    """
    try:
        text, source, base = _read_source(path_or_text)
        data = load_yaml_text(text, what=source) if text.strip() else None
    except CatalogFileError as exc:  # one error type for "this team plan cannot be used"
        raise TeamPlanError(str(exc)) from None
    if allow_config_paths is None:
        allow_config_paths = base is not None
    return parse_team_plan(data, catalog=catalog, source=source, base_dir=base,
                           allow_config_paths=allow_config_paths)


def _read_source(path_or_text: str | Path) -> tuple[str, str, Path | None]:
    if isinstance(path_or_text, str) and ("\n" in path_or_text or ":" in path_or_text
                                          and not _exists(path_or_text)):
        return path_or_text, "team.yaml", None
    path = Path(path_or_text).expanduser()
    text = read_user_text(path, what="team plan", max_bytes=MAX_TEAM_FILE_BYTES)
    return text, str(path), path.parent


def _exists(text: str) -> bool:
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # a name too long, or with a NUL: not a path
        return False


def parse_team_plan(data: Any, *, catalog: Catalog, source: str = "team.yaml",
                    base_dir: str | Path | None = None,
                    allow_config_paths: bool = True) -> TeamPlan:
    """Validate a parsed team plan (the YAML as a dict) against ``catalog``.

    ``allow_config_paths=False`` refuses ``workload: config:`` (a team plan from an upload
    must not make the server read its files).
    """
    if not isinstance(data, dict):
        raise TeamPlanError(f"{source}: expected a mapping with a 'jobs:' list. {FIX}")
    _no_unknown(data, _TOP_FIELDS, source)
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list) or not jobs_data:
        raise TeamPlanError(f"{source}: 'jobs' must be a non-empty list of jobs. {FIX}")
    if len(jobs_data) > MAX_JOBS:
        raise TeamPlanError(f"{source}: {len(jobs_data):,} jobs; at most {MAX_JOBS} are "
                            "allowed in one plan. To fix: split the plan into several files")
    offsets = _offsets(data.get("start_offsets_days", DEFAULT_START_OFFSETS_DAYS),
                       f"{source}: start_offsets_days")
    min_p = _probability(data.get("min_probability", DEFAULT_MIN_PROBABILITY),
                         f"{source}: min_probability")
    base = Path(base_dir) if base_dir is not None else None
    jobs, seen = [], {}
    for i, entry in enumerate(jobs_data, start=1):
        job = _parse_job(entry, i, catalog, source, offsets, min_p, base, allow_config_paths)
        if job.name in seen:
            raise TeamPlanError(f"{source}: {job.where}: name already used by "
                                f"jobs[{seen[job.name]}]. To fix: give every job a unique name")
        seen[job.name] = i
        jobs.append(job)
    try:
        quotas = parse_quota_rules(data.get("quotas"), catalog, source)
    except GpuplanError as exc:
        raise TeamPlanError(f"{exc}{'' if 'To fix' in str(exc) else '. ' + FIX}") from None
    budgets = _budgets(data.get("budgets"), source)
    overrides = _overrides(data.get("overrides"), source)
    name = data.get("name")
    if name is not None:
        name = _text(name, f"{source}: name")
    return TeamPlan(name=name or Path(source).stem, source=source,
                    jobs=tuple(jobs), quotas=quotas, budgets=budgets, overrides=overrides)


def _parse_job(entry, i: int, catalog: Catalog, source: str, offsets, min_p,
               base: Path | None, allow_config_paths: bool) -> Job:
    at = f"{source}: jobs[{i}]"
    if not isinstance(entry, dict):
        raise TeamPlanError(f"{at}: expected a mapping with name, workload, earliest_start and "
                            f"deadline. {FIX}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TeamPlanError(f"{at}: 'name' is required (a non-empty string). {FIX}")
    name = _text(name, f"{at}: name")
    at = f"{source}: jobs[{i}] {name!r}"
    _no_unknown(entry, _JOB_FIELDS, at)
    for req in ("workload", "earliest_start", "deadline"):
        if req not in entry:
            raise TeamPlanError(f"{at}: missing '{req}'. {FIX}")
    start = _date(entry["earliest_start"], f"{at}: earliest_start")
    deadline = _date(entry["deadline"], f"{at}: deadline")
    if deadline <= start:
        raise TeamPlanError(f"{at}: deadline {deadline} is {'before' if deadline < start else 'on'}"
                            f" earliest_start {start}. To fix: move the deadline after "
                            f"{start} or the earliest_start before {deadline}")
    if (deadline - start).days > MAX_WINDOW_DAYS:
        raise TeamPlanError(f"{at}: deadline {deadline} is more than 10 years after "
                            f"earliest_start {start}. To fix: check the dates")
    spec, workload = _workload(entry["workload"], f"{at}: workload", base, allow_config_paths)
    clouds = _names(entry.get("clouds"), f"{at}: clouds", CLOUDS)
    regions = _names(entry.get("regions"), f"{at}: regions", catalog.regions())
    pricing = _names(entry.get("pricing"), f"{at}: pricing", PRICING_MODELS) or DEFAULT_PRICING
    accs = tuple(_resolve_acc(catalog, a, f"{at}: accelerators")
                 for a in _names(entry.get("accelerators"), f"{at}: accelerators", None))
    exclude = _names(entry.get("exclude"), f"{at}: exclude", None)
    max_gpus = entry.get("max_gpus", DEFAULT_MAX_GPUS)
    if not _whole(max_gpus, 1, MAX_JOB_GPUS):
        raise TeamPlanError(f"{at}: max_gpus must be a whole number >= 1 and <= "
                            f"{MAX_JOB_GPUS:,}, got {_show(max_gpus)}. To fix: e.g. max_gpus: 256")
    priority = entry.get("priority", 0)
    if not _whole(priority, -MAX_PRIORITY, MAX_PRIORITY):
        raise TeamPlanError(f"{at}: priority must be a whole number (higher is more important,"
                            f" at most {MAX_PRIORITY:,}), got {_show(priority)}. To fix: e.g. "
                            "priority: 1")
    team = entry.get("team", DEFAULT_TEAM)
    if not isinstance(team, str) or not team.strip():
        raise TeamPlanError(f"{at}: team must be a non-empty string, got {_show(team)}. {FIX}")
    team = _text(team, f"{at}: team")
    return Job(index=i, name=name, team=team, spec=spec, workload=workload,
               earliest_start=start, deadline=deadline, priority=priority, clouds=clouds,
               regions=regions, pricing=pricing, accelerators=accs, exclude=exclude,
               max_gpus=max_gpus,
               min_probability=_probability(entry.get("min_probability", min_p),
                                            f"{at}: min_probability"),
               start_offsets_days=_offsets(entry.get("start_offsets_days", offsets),
                                           f"{at}: start_offsets_days"))


def _no_unknown(entry: dict, allowed, at: str) -> None:
    unknown = sorted(str(k) for k in set(entry) - set(allowed))
    if unknown:
        close = difflib.get_close_matches(unknown[0], allowed, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise TeamPlanError(f"{at}: unknown field(s) {unknown}{hint}; allowed: "
                            f"{', '.join(allowed)}. {FIX}")


def _date(value, at: str) -> dt.date:
    if isinstance(value, dt.datetime):
        value = value.date()
    if not isinstance(value, dt.date):
        if not isinstance(value, str) or len(value) > 40:
            raise TeamPlanError(f"{at}: {_show(value)} is not a date. To fix: write YYYY-MM-DD, "
                                "e.g. 2027-03-01")
        try:
            value = dt.date.fromisoformat(value.strip())
        except ValueError as exc:
            # "day is out of range for month" says why 2027-02-30 is not a date.
            why = f" ({exc})" if "range" in str(exc) else ""
            raise TeamPlanError(f"{at}: {value!r} is not a date{why}. To fix: write "
                                "YYYY-MM-DD, e.g. 2027-03-01") from None
    if not MIN_YEAR <= value.year <= MAX_YEAR:
        raise TeamPlanError(f"{at}: {value} is outside {MIN_YEAR}–{MAX_YEAR}. To fix: check "
                            "the year")
    return value


def _whole(value, low: int, high: int) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)
            and low <= value <= high)


def _show(value) -> str:
    """``repr`` for messages, safe for 10^400 and for megabyte strings."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return "a huge number"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "…"


def _text(value, at: str) -> str:
    """A name shown in reports: one printable line of at most MAX_NAME_CHARS."""
    if not isinstance(value, str) or not value.strip():
        raise TeamPlanError(f"{at}: expected a non-empty string, got {_show(value)}. {FIX}")
    if len(value) > MAX_NAME_CHARS or not value.isprintable():
        raise TeamPlanError(f"{at}: {_show(value)} must be one printable line of at most "
                            f"{MAX_NAME_CHARS} characters. {FIX}")
    return value.strip()


def _month(value: str, at: str) -> str:
    try:
        dt.date.fromisoformat(f"{value}-01")
    except ValueError:
        raise TeamPlanError(f"{at}: {value!r} is not a month. To fix: write YYYY-MM, e.g. "
                            "\"2027-03\" (quoted)") from None
    return value


def _probability(value, at: str) -> float | None:
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)
                         and value == 0):
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise TeamPlanError(f"{at}: must be a number in (0, 1] (0 disables), got "
                            f"{_show(value)}. To fix: e.g. 0.9")
    return float(value)


def _offsets(value, at: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (not isinstance(value, list | tuple) or not value or len(value) > MAX_OFFSETS
            or any(not _whole(v, 0, MAX_OFFSET_DAYS) for v in value)):
        raise TeamPlanError(f"{at}: must be a list of at most {MAX_OFFSETS} whole days from 0 "
                            f"to {MAX_OFFSET_DAYS}, got {_show(value)}. To fix: e.g. [0, 7, 14] "
                            "(0 alone: start at earliest_start only)")
    return tuple(sorted(set(value)))


def _names(value, at: str, allowed) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TeamPlanError(f"{at}: expected a list of names, got {_show(value)}. {FIX}")
    if allowed is not None:
        for v in value:
            _check_name(v, allowed, at)
    return tuple(value)


def _check_name(value: str, allowed, at: str) -> None:
    allowed = list(allowed)
    if value not in allowed:
        close = difflib.get_close_matches(value[:100], allowed, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise TeamPlanError(f"{at}: unknown {_show(value)}.{hint} To fix: use one of "
                            f"{', '.join(allowed[:12])}{' …' if len(allowed) > 12 else ''}")


def _resolve_acc(catalog: Catalog, name: str, at: str) -> str:
    try:
        return catalog.resolve_accelerator(name)
    except GpuplanError as exc:
        raise TeamPlanError(f"{at}: {exc}") from None


def _workload(value, at: str, base: Path | None,
              allow_config_paths: bool) -> tuple[WorkloadSpec, Workload]:
    if not isinstance(value, dict):
        raise TeamPlanError(f"{at}: expected a mapping such as {{model: llama3-8b, tokens: 1T}}"
                            f". {FIX}")
    _no_unknown(value, _WORKLOAD_FIELDS, at)
    for k, v in value.items():
        # An empty value must not quietly mean "the default" (tokens: '' is a mistake).
        if v is None or (isinstance(v, str) and not v.strip()):
            raise TeamPlanError(f"{at}: {k} is empty. To fix: give a value or remove the field")
        if k in _WHOLE_FIELDS and not _whole(v, 1, _WHOLE_FIELDS[k]):
            raise TeamPlanError(f"{at}: {k} must be a whole number from 1 to "
                                f"{_WHOLE_FIELDS[k]:,}, got {_show(v)}. {FIX}")
        if k in ("model", "config", "precision", "optimizer", "recompute", "finetune") \
                and not isinstance(v, str):
            raise TeamPlanError(f"{at}: {k} must be a name, got {_show(v)}. {FIX}")
        if k in ("params", "active_params", "tokens", "global_batch_tokens") \
                and (isinstance(v, bool) or not isinstance(v, str | int | float)):
            raise TeamPlanError(f"{at}: {k} must be a count such as 7B or 1T, got "
                                f"{_show(v)}. {FIX}")
    kwargs = {k: value[k] for k in _WORKLOAD_FIELDS if k in value and k not in ARCH_FIELDS}
    for k in ("precision", "optimizer", "recompute", "finetune"):
        if k in kwargs:
            kwargs[k] = kwargs[k].lower()
    if "config" in kwargs:
        if not allow_config_paths:
            raise TeamPlanError(f"{at}: config: a team plan given as text (an upload) cannot "
                                "name files on this machine. To fix: use model: or params: "
                                "(with layers, hidden, heads … to fix the shape), or run "
                                "`gpuplan report` on the file")
        if base is not None and not Path(kwargs["config"]).is_absolute():
            kwargs["config"] = str(base / kwargs["config"])
    arch = tuple((k, value[k]) for k in ARCH_FIELDS if k in value)
    try:
        spec = WorkloadSpec(**kwargs, arch_overrides=arch)
        return spec, build_workload(spec)
    except GpuplanError as exc:
        raise TeamPlanError(f"{at}: {_strip_cli(str(exc))}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise TeamPlanError(f"{at}: {exc}. {FIX}") from None


def _strip_cli(message: str) -> str:
    """Workload errors speak of CLI options; in a team plan the fields have YAML names."""
    for opt in ("params", "active-params", "tokens", "seq-len", "global-batch-tokens", "model",
                "config"):
        message = message.replace(f"--{opt}", opt.replace("-", "_"))
    return message


def period_months(period: str) -> tuple[str, ...] | None:
    """'2027-03' → ('2027-03',); '2027Q2' → ('2027-04', '2027-05', '2027-06'); 'total' → None
    (every month). Raises ValueError for anything else."""
    if period == "total":
        return None
    if len(period) == 6 and period[4] in "Qq" and period[:4].isdigit() and period[5] in "1234":
        q = int(period[5])
        return tuple(f"{period[:4]}-{m:02d}" for m in range(3 * q - 2, 3 * q + 1))
    dt.date.fromisoformat(f"{period}-01")
    if len(period) != 7:
        raise ValueError(period)
    return (period,)


def _budgets(value, source: str) -> tuple[tuple[str, float], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise TeamPlanError(f"{source}: budgets must be a mapping of period to USD, e.g. "
                            "{\"2027-03\": 120000, \"2027Q2\": 300000}. " + FIX)
    out = []
    for period, usd in value.items():
        period = str(period)[:40]
        at = f"{source}: budgets[{period!r}]"
        try:
            period_months(period)
        except ValueError:
            raise TeamPlanError(f"{at}: not a period. To fix: use a month \"2027-03\", a "
                                "quarter 2027Q2, or total") from None
        # Compared before float(): float(10**400) raises, and NaN fails every comparison.
        if isinstance(usd, bool) or not isinstance(usd, int | float) \
                or not 0 <= usd <= MAX_BUDGET_USD:
            raise TeamPlanError(f"{at}: must be a number of USD >= 0 and <= "
                                f"{MAX_BUDGET_USD:,.0f}, got {_show(usd)}. To fix: e.g. 120000")
        out.append((period, float(usd)))
    return tuple(out)


def _overrides(value, source: str):
    """Inline price overrides, validated by the catalog's own overrides parser."""
    if value is None:
        return None
    from catalog import OverrideError
    from catalog._overrides import parse_overrides

    try:
        ov = parse_overrides(value, source=f"{source}: overrides")
    except OverrideError as exc:
        raise TeamPlanError(str(exc)) from None
    return dataclasses.replace(ov, path=f"{source} (overrides)")


def priced_catalog(team_plan: TeamPlan, catalog: Catalog, today: dt.date | None = None) -> Catalog:
    """``catalog`` with the team plan's inline price overrides applied (a new catalog)."""
    if team_plan.overrides is None:
        return catalog
    from catalog._overrides import apply_overrides

    types = {t.key: t for t in catalog.instance_types}
    try:
        offers = apply_overrides(catalog.offers, types, team_plan.overrides,
                                 today or dt.date.today())
    except GpuplanError as exc:
        raise TeamPlanError(f"{team_plan.source}: overrides: {exc}") from None
    note = team_plan.overrides.path
    return Catalog(name=catalog.name, path=catalog.path, meta=catalog.meta,
                   accelerators=catalog.accelerators, instance_types=catalog.instance_types,
                   offers=offers, overrides_path="; ".join(p for p in (catalog.overrides_path,
                                                                      note) if p))


__all__ = ["Job", "TeamPlan", "TeamPlanError", "load_actuals", "load_team_plan",
           "parse_actuals", "parse_team_plan", "period_months", "priced_catalog"]
