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
and the field, and ends with what to do. Errors::

    PlannerError
    └── TeamPlanError           a team plan or an actuals file that cannot be used
"""

from __future__ import annotations

import csv
import dataclasses
import datetime as dt
import difflib
import io
import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from catalog import CLOUDS, PRICING_MODELS, Catalog, GpuplanError

from ._build import ARCH_FIELDS, WorkloadSpec, build_workload
from ._errors import PlannerError
from ._optimizer import DEFAULT_MAX_GPUS
from ._quota import QuotaRule, parse_quota_rules
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

def load_team_plan(path_or_text: str | Path, *, catalog: Catalog) -> TeamPlan:
    """Read a team plan from a path, or from YAML text (anything containing a newline)."""
    import yaml

    text, source, base = _read_source(path_or_text)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" line {mark.line + 1}" if mark else ""
        raise TeamPlanError(f"{source}:{at} invalid YAML ({getattr(exc, 'problem', exc)}). "
                            "To fix: correct the file") from None
    return parse_team_plan(data, catalog=catalog, source=source, base_dir=base)


def _read_source(path_or_text: str | Path) -> tuple[str, str, Path | None]:
    if isinstance(path_or_text, str) and ("\n" in path_or_text or ":" in path_or_text
                                          and not Path(path_or_text).exists()):
        return path_or_text, "team.yaml", None
    path = Path(path_or_text).expanduser()
    try:
        return path.read_text(encoding="utf-8"), str(path), path.parent
    except OSError as exc:
        raise TeamPlanError(f"{path}: cannot read the team plan ({exc.strerror}). To fix: check "
                            "the path") from None


def parse_team_plan(data: dict, *, catalog: Catalog, source: str = "team.yaml",
                    base_dir: str | Path | None = None) -> TeamPlan:
    """Validate a parsed team plan (the YAML as a dict) against ``catalog``."""
    if not isinstance(data, dict):
        raise TeamPlanError(f"{source}: expected a mapping with a 'jobs:' list. {FIX}")
    _no_unknown(data, _TOP_FIELDS, source)
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list) or not jobs_data:
        raise TeamPlanError(f"{source}: 'jobs' must be a non-empty list of jobs. {FIX}")
    offsets = _offsets(data.get("start_offsets_days", DEFAULT_START_OFFSETS_DAYS),
                       f"{source}: start_offsets_days")
    min_p = _probability(data.get("min_probability", DEFAULT_MIN_PROBABILITY),
                         f"{source}: min_probability")
    base = Path(base_dir) if base_dir is not None else None
    jobs, seen = [], {}
    for i, entry in enumerate(jobs_data, start=1):
        job = _parse_job(entry, i, catalog, source, offsets, min_p, base)
        if job.name in seen:
            raise TeamPlanError(f"{source}: {job.where}: name already used by "
                                f"jobs[{seen[job.name]}]. To fix: give every job a unique name")
        seen[job.name] = i
        jobs.append(job)
    try:
        quotas = parse_quota_rules(data.get("quotas"), catalog, source)
    except GpuplanError as exc:
        raise TeamPlanError(f"{exc}{'' if 'To fix' in str(exc) else '. ' + FIX}") from None
    for i, rule in enumerate(quotas, start=1):
        if rule.month is not None:
            _month(rule.month, f"{source}: quotas[{i}]: month")
        if rule.region is not None and rule.region not in catalog.regions():
            _check_name(rule.region, catalog.regions(), f"{source}: quotas[{i}]: region")
    budgets = _budgets(data.get("budgets"), source)
    overrides = _overrides(data.get("overrides"), source)
    return TeamPlan(name=str(data.get("name") or Path(source).stem), source=source,
                    jobs=tuple(jobs), quotas=quotas, budgets=budgets, overrides=overrides)


def _parse_job(entry, i: int, catalog: Catalog, source: str, offsets, min_p,
               base: Path | None) -> Job:
    at = f"{source}: jobs[{i}]"
    if not isinstance(entry, dict):
        raise TeamPlanError(f"{at}: expected a mapping with name, workload, earliest_start and "
                            f"deadline. {FIX}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise TeamPlanError(f"{at}: 'name' is required (a non-empty string). {FIX}")
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
    spec, workload = _workload(entry["workload"], f"{at}: workload", base)
    clouds = _names(entry.get("clouds"), f"{at}: clouds", CLOUDS)
    regions = _names(entry.get("regions"), f"{at}: regions", catalog.regions())
    pricing = _names(entry.get("pricing"), f"{at}: pricing", PRICING_MODELS) or DEFAULT_PRICING
    accs = tuple(_resolve_acc(catalog, a, f"{at}: accelerators")
                 for a in _names(entry.get("accelerators"), f"{at}: accelerators", None))
    exclude = _names(entry.get("exclude"), f"{at}: exclude", None)
    max_gpus = entry.get("max_gpus", DEFAULT_MAX_GPUS)
    if isinstance(max_gpus, bool) or not isinstance(max_gpus, int) or max_gpus < 1:
        raise TeamPlanError(f"{at}: max_gpus must be a whole number >= 1, got {max_gpus!r}. "
                            "To fix: e.g. max_gpus: 256")
    priority = entry.get("priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TeamPlanError(f"{at}: priority must be a whole number (higher is more important),"
                            f" got {priority!r}. To fix: e.g. priority: 1")
    team = entry.get("team", DEFAULT_TEAM)
    if not isinstance(team, str) or not team.strip():
        raise TeamPlanError(f"{at}: team must be a non-empty string, got {team!r}. {FIX}")
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
        return value.date()
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value).strip())
    except ValueError:
        raise TeamPlanError(f"{at}: {value!r} is not a date. To fix: write YYYY-MM-DD, e.g. "
                            "2027-03-01") from None


def _month(value: str, at: str) -> str:
    try:
        dt.date.fromisoformat(f"{value}-01")
    except ValueError:
        raise TeamPlanError(f"{at}: {value!r} is not a month. To fix: write YYYY-MM, e.g. "
                            "\"2027-03\" (quoted)") from None
    return value


def _probability(value, at: str) -> float | None:
    if value is None or value == 0:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise TeamPlanError(f"{at}: must be a number in (0, 1] (0 disables), got {value!r}. "
                            "To fix: e.g. 0.9")
    return float(value)


def _offsets(value, at: str) -> tuple[int, ...]:
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    if (not isinstance(value, list | tuple) or not value
            or any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value)):
        raise TeamPlanError(f"{at}: must be a list of whole days >= 0, got {value!r}. To fix: "
                            "e.g. [0, 7, 14] (0 alone: start at earliest_start only)")
    return tuple(sorted(set(value)))


def _names(value, at: str, allowed) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",") if v.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TeamPlanError(f"{at}: expected a list of names, got {value!r}. {FIX}")
    if allowed is not None:
        for v in value:
            _check_name(v, allowed, at)
    return tuple(value)


def _check_name(value: str, allowed, at: str) -> None:
    allowed = list(allowed)
    if value not in allowed:
        close = difflib.get_close_matches(value, allowed, n=3, cutoff=0.6)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise TeamPlanError(f"{at}: unknown {value!r}.{hint} To fix: use one of "
                            f"{', '.join(allowed[:12])}{' …' if len(allowed) > 12 else ''}")


def _resolve_acc(catalog: Catalog, name: str, at: str) -> str:
    try:
        return catalog.resolve_accelerator(name)
    except GpuplanError as exc:
        raise TeamPlanError(f"{at}: {exc}") from None


def _workload(value, at: str, base: Path | None) -> tuple[WorkloadSpec, Workload]:
    if not isinstance(value, dict):
        raise TeamPlanError(f"{at}: expected a mapping such as {{model: llama3-8b, tokens: 1T}}"
                            f". {FIX}")
    _no_unknown(value, _WORKLOAD_FIELDS, at)
    kwargs = {k: value[k] for k in _WORKLOAD_FIELDS if k in value and k not in ARCH_FIELDS}
    for k in ("model", "config", "precision", "optimizer", "recompute", "finetune"):
        if k in kwargs:
            kwargs[k] = str(kwargs[k]).lower() if k not in ("model", "config") else str(kwargs[k])
    if "config" in kwargs and base is not None and not Path(kwargs["config"]).is_absolute():
        kwargs["config"] = str(base / kwargs["config"])
    arch = tuple((k, value[k]) for k in ARCH_FIELDS if k in value)
    try:
        spec = WorkloadSpec(**kwargs, arch_overrides=arch)
        return spec, build_workload(spec)
    except GpuplanError as exc:
        raise TeamPlanError(f"{at}: {_strip_cli(str(exc))}") from None
    except (TypeError, ValueError) as exc:
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
        period = str(period)
        at = f"{source}: budgets[{period!r}]"
        try:
            period_months(period)
        except ValueError:
            raise TeamPlanError(f"{at}: not a period. To fix: use a month \"2027-03\", a "
                                "quarter 2027Q2, or total") from None
        if isinstance(usd, bool) or not isinstance(usd, int | float) or not usd >= 0 \
                or not math.isfinite(usd):
            raise TeamPlanError(f"{at}: must be a number of USD >= 0, got {usd!r}. To fix: e.g. "
                                "120000")
        out.append((period, float(usd)))
    return tuple(out)


def _overrides(value, source: str):
    """Inline price overrides, validated by the catalog's own overrides reader."""
    if value is None:
        return None
    import yaml

    from catalog import OverrideError
    from catalog._overrides import load_overrides

    fd, tmp = tempfile.mkstemp(prefix="gpuplan-team-overrides-", suffix=".yaml")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yaml.safe_dump(value, handle)
        try:
            ov = load_overrides(tmp)
        except OverrideError as exc:
            raise TeamPlanError(str(exc).replace(tmp, f"{source}: overrides")) from None
    finally:
        Path(tmp).unlink(missing_ok=True)
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


# ---- actuals ---------------------------------------------------------------------------------

ACTUALS_COLUMNS = ("job", "gpu_hours", "cost_usd")


def load_actuals(path_or_text: str | Path, team_plan: TeamPlan) -> dict[str, dict]:
    """Spent GPU-hours and USD per job from a CSV with columns job, gpu_hours, cost_usd (other
    columns are ignored; several rows for one job are summed)."""
    if isinstance(path_or_text, str) and "\n" in path_or_text:
        text, source = path_or_text, "actuals.csv"
    else:
        source = str(path_or_text)
        try:
            text = Path(path_or_text).read_text(encoding="utf-8-sig")
        except OSError as exc:
            raise TeamPlanError(f"{source}: cannot read actuals ({exc.strerror}). To fix: check "
                                "the path given to --actuals") from None
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in ACTUALS_COLUMNS if c not in (reader.fieldnames or ())]
    if missing:
        raise TeamPlanError(f"{source}: missing column(s) {missing}. To fix: the header must "
                            f"include {', '.join(ACTUALS_COLUMNS)}")
    known = [j.name for j in team_plan.jobs]
    out: dict[str, dict] = {}
    for n, row in enumerate(reader, start=2):
        name = (row["job"] or "").strip()
        at = f"{source}: row {n}"
        if name not in known:
            raise TeamPlanError(_unknown_job(name, known, at))
        values = {}
        for col in ("gpu_hours", "cost_usd"):
            try:
                v = float((row[col] or "").replace(",", "").replace("$", ""))
            except ValueError:
                raise TeamPlanError(f"{at} (job {name!r}): {col} {row[col]!r} is not a number. "
                                    "To fix: write e.g. 1234.5") from None
            if not math.isfinite(v) or v < 0:
                raise TeamPlanError(f"{at} (job {name!r}): {col} must be >= 0, got {v}")
            values[col] = v
        acc = out.setdefault(name, {"gpu_hours": 0.0, "cost_usd": 0.0})
        acc["gpu_hours"] += values["gpu_hours"]
        acc["cost_usd"] += values["cost_usd"]
    return out


__all__ = ["Job", "TeamPlan", "TeamPlanError", "load_actuals", "load_team_plan",
           "parse_team_plan", "period_months", "priced_catalog"]
