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

``parse_team_plan(mapping)`` validates parsed data against a catalog; every error names the
job (1-based index and name) and the field, and ends with what to do. It reads no file: a
job's ``workload: config: NAME`` is looked up in ``configs`` (NAME → the parsed config.json),
which ``load_team_plan`` (``_load``) fills from the files next to a team plan file; a team plan
given as data alone (an upload in the app) therefore cannot make the server read its files.
Defaults (pricing models, the probability of meeting the deadline, max GPUs) are the
search's own (``planner.search.Constraints``).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import unicodedata
from collections.abc import Mapping
from pathlib import PurePath
from typing import Any

from catalog import (
    CLOUDS,
    PRICING_MODELS,
    PRICING_TERM_HOURS,
    Catalog,
    GpuplanError,
    OverrideError,
    UnknownNameError,
    canonical_pricing,
    parse_overrides,
    record,
    unquoted_hint,
)

from ..model import (
    ARCH_FIELDS,
    MAX_PLAN_GPUS,
    SIZE_LIMITS,
    Workload,
    WorkloadSpec,
    build_workload,
    refer_to_fields,
)
from ..search import (
    DEFAULT_MAX_GPUS,
    DEFAULT_MIN_PROBABILITY,
    DEFAULT_PRICING,
    QuotaRule,
    check_exclude,
    parse_quota_rules,
)
from ._fields import (
    DEFAULT_START_OFFSETS_DAYS,
    FIX,
    MAX_YEAR,
    MIN_YEAR,
    TEAM_FORMAT,
    RunSpans,
    TeamPlanError,
    accelerator,
    budgets,
    date,
    default_offsets,
    names,
    no_nulls,
    no_unknown,
    number,
    offsets,
    probability,
    show,
    text,
    whole,
    whole_number,
)

DEFAULT_TEAM = "unassigned"
# optional keys whose value may not be left empty, and what leaving the key out means
TOP_DEFAULTS = {"name": "the file's name", "min_probability": str(DEFAULT_MIN_PROBABILITY),
                "quotas": "no quotas", "budgets": "no budgets", "overrides": "none"}
JOB_DEFAULTS = {"clouds": "every cloud", "regions": "every region",
                "pricing": ", ".join(DEFAULT_PRICING), "accelerators": "every accelerator",
                "exclude": "nothing excluded", "min_probability": "the plan's",
                "commitment_use": "0: a term's hours left after the run are not used"}

TOP_FIELDS = ("name", "jobs", "quotas", "budgets", "overrides", "start_offsets_days",
              "min_probability")
JOB_FIELDS = ("name", "team", "workload", "earliest_start", "deadline", "priority", "clouds",
              "regions", "pricing", "accelerators", "exclude", "max_gpus", "min_probability",
              "start_offsets_days", "allow_flagged", "commitment_use")
WORKLOAD_FIELDS = ("model", "config", "params", "active_params", "experts",
                   "experts_per_token", "tokens", "seq_len", "global_batch_tokens",
                   "precision", "optimizer", "recompute", "finetune", "lora_rank",
                   *ARCH_FIELDS)

MAX_JOBS = 500
# Distinct jobs × their start offsets (identical jobs count once: the MILP lists their options
# once, ``_milp``). A pair brings ~40–60 run options (binaries); measured on 2 cores, 100
# distinct jobs × 32 offsets (124,000 options) plan and solve in 46 s and 0.5 GB, 270,000
# options take 45 s in the MILP alone and 0.75 GB, and 500 × 32 (700,000) ran into the solver's
# time limit for minutes with 1.5–2.7 GB. Real plans: 50 jobs × 3 starts.
MAX_JOB_STARTS = 4_000
MAX_JOB_GPUS = MAX_PLAN_GPUS
MAX_PRIORITY = 1_000_000
MAX_WINDOW_DAYS = 3653  # 10 years, as a plan's deadline (``parse_deadline``)
# Workload fields that are whole numbers, with their upper bounds (sizes as in config.json).
WHOLE_FIELDS = {"seq_len": 10_000_000, "experts": SIZE_LIMITS["experts"],
                "experts_per_token": SIZE_LIMITS["experts_per_token"], "lora_rank": 65_536,
                **{k: SIZE_LIMITS[k] for k in ARCH_FIELDS}}
NO_FILES = ("config: a team plan given as text or data (an upload, a parsed mapping) cannot "
            "name files on this machine. "
            "To fix: use model: or params: (with layers, hidden, heads … to fix the shape), or "
            "run `gpuplan report` on the file")


@record
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
    min_probability: float = DEFAULT_MIN_PROBABILITY  # 0: none required
    start_offsets_days: tuple[int, ...] = DEFAULT_START_OFFSETS_DAYS
    allow_flagged: bool = False  # use flagged catalog prices (`gpuplan plan --allow-flagged`)
    # the share of a term (reserved, committed, capacity block) left after the run that will be
    # used (`gpuplan plan --commitment-use`); each job pays its own term, none is shared
    commitment_use: float = 0.0

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


@record
class TeamPlan:
    name: str
    source: str
    jobs: tuple[Job, ...]
    quotas: tuple[QuotaRule, ...] = ()
    budgets: tuple[tuple[str, float], ...] = ()  # (period, USD): "2027-03", "2027Q2", "total"
    overrides: object | None = None  # catalog.Overrides, applied by priced_catalog

    def job(self, name: str) -> Job:
        for j in self.jobs:
            if j.name == name:
                return j
        raise TeamPlanError(str(UnknownNameError(
            "job", name, [j.name for j in self.jobs], where=self.source,
            hint="use a job name from the team plan")))


def parse_team_plan(data: Any, *, catalog: Catalog, source: str = "team.yaml",
                    configs: Mapping[str, Mapping] | None = None) -> TeamPlan:
    """Validate a parsed team plan (the YAML as a dict) against ``catalog``.

    ``configs``: the parsed config.json of every ``workload: config: NAME`` the plan names
    (``load_team_plan`` reads them); without it such a job is an error.
    """
    if not isinstance(data, dict):
        raise TeamPlanError(f"{source}: expected a mapping with a 'jobs:' list. {FIX}")
    no_unknown(data, TOP_FIELDS, source)
    no_nulls(data, TOP_DEFAULTS, source)
    jobs_data = data.get("jobs")
    if not isinstance(jobs_data, list) or not jobs_data:
        raise TeamPlanError(f"{source}: 'jobs' must be a non-empty list of jobs. {FIX}")
    if len(jobs_data) > MAX_JOBS:
        raise TeamPlanError(f"{source}: {len(jobs_data):,} jobs; at most {MAX_JOBS} are "
                            "allowed in one plan. To fix: split the plan into several files")
    starts = None if "start_offsets_days" not in data else offsets(  # None: per window
        data["start_offsets_days"], f"{source}: start_offsets_days")
    min_p = probability(data.get("min_probability"), f"{source}: min_probability")
    min_p = DEFAULT_MIN_PROBABILITY if min_p is None else min_p
    jobs, seen = [], {}
    for i, entry in enumerate(jobs_data, start=1):
        job = _parse_job(entry, i, catalog, source, starts, min_p, configs or {})
        # names that read the same are one name: "café" typed two ways (é, or e + U+0301)
        # were two jobs shown alike, and an actuals row went to one of them
        key = unicodedata.normalize("NFC", job.name)
        if key in seen:
            raise TeamPlanError(f"{source}: {job.where}: name already used by "
                                f"jobs[{seen[key]}]"
                                + ("" if job.name == jobs[seen[key] - 1].name else
                                   " (written with other Unicode characters that read the "
                                   "same)") + ". To fix: give every job a unique name")
        seen[key] = i
        jobs.append(job)
    _check_size(jobs, source)
    try:
        quotas = parse_quota_rules(_numbers_in(data.get("quotas"), ("gpus",), whole_number),
                                   catalog, source, correct=f"quotas in {source}",
                                   fmt=TEAM_FORMAT)
    except GpuplanError as exc:
        raise TeamPlanError(f"{exc}{'' if 'To fix' in str(exc) else '. ' + FIX}") from None
    spans = RunSpans.of(jobs)
    for k, rule in enumerate(quotas, start=1):
        if rule.month is not None and not MIN_YEAR <= int(rule.month[:4]) <= MAX_YEAR:
            # "1999-03" held no month a job can run in: the rule was silently void
            raise TeamPlanError(f"{source}: quotas[{k}]: month {rule.month}: the year is "
                                f"outside {MIN_YEAR}–{MAX_YEAR}, as job dates are. To fix: "
                                "check the year")
        # a month no job runs in left the month meant (a typo in the year) unlimited, silently
        why = None if rule.month is None else spans.void(rule.month, (rule.month,), "quota")
        if why:
            raise TeamPlanError(f"{source}: quotas[{k}]: month {rule.month}: {why} To fix: "
                                "give a month the jobs run in, or remove the rule")
    name = data.get("name")
    if name is not None:
        name = text(name, f"{source}: name")
    return TeamPlan(name=name or PurePath(source).stem, source=source, jobs=tuple(jobs),
                    quotas=quotas, budgets=budgets(data.get("budgets"), source, spans),
                    overrides=_overrides(data.get("overrides"), source))


def _parse_job(entry, i: int, catalog: Catalog, source: str,
               starts: tuple[int, ...] | None, min_p: float, configs: Mapping[str, Mapping]) -> Job:
    at = f"{source}: jobs[{i}]"
    if not isinstance(entry, dict):
        raise TeamPlanError(f"{at}: expected a mapping with name, workload, earliest_start and "
                            f"deadline. {FIX}")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        got = "" if name is None else f", got {show(name)}{unquoted_hint(name)}"
        raise TeamPlanError(f"{at}: 'name' is required (a non-empty string){got}. {FIX}")
    name = text(name, f"{at}: name")
    at = f"{source}: jobs[{i}] {name!r}"
    no_unknown(entry, JOB_FIELDS, at)
    no_nulls(entry, JOB_DEFAULTS, at)
    for req in ("workload", "earliest_start", "deadline"):
        if req not in entry:
            raise TeamPlanError(f"{at}: missing '{req}'. {FIX}")
    start = date(entry["earliest_start"], f"{at}: earliest_start")
    deadline = date(entry["deadline"], f"{at}: deadline")
    if deadline <= start:
        raise TeamPlanError(f"{at}: deadline {deadline} is {'before' if deadline < start else 'on'}"
                            f" earliest_start {start}. To fix: move the deadline after "
                            f"{start} or the earliest_start before {deadline}")
    if (deadline - start).days > MAX_WINDOW_DAYS:
        raise TeamPlanError(f"{at}: deadline {deadline} is more than 10 years after "
                            f"earliest_start {start}. To fix: check the dates")
    spec, workload = _workload(entry["workload"], f"{at}: workload", configs)
    clouds = names(entry.get("clouds"), f"{at}: clouds", CLOUDS, "cloud", spell=str.lower)
    regions = names(entry.get("regions"), f"{at}: regions", catalog.regions(), "region")
    pricing = names(entry.get("pricing"), f"{at}: pricing", PRICING_MODELS,
                    "pricing model", spell=canonical_pricing) or DEFAULT_PRICING
    accs = tuple(accelerator(catalog, a, f"{at}: accelerators")
                 for a in names(entry.get("accelerators"), f"{at}: accelerators", None,
                               "accelerator"))
    exclude = _exclude(entry.get("exclude"), f"{at}: exclude", catalog)
    max_gpus = whole_number(entry.get("max_gpus", DEFAULT_MAX_GPUS))
    if not whole(max_gpus, 1, MAX_JOB_GPUS):
        raise TeamPlanError(f"{at}: max_gpus must be a whole number >= 1 and <= "
                            f"{MAX_JOB_GPUS:,}, got {show(max_gpus)}. To fix: e.g. max_gpus: 256")
    priority = whole_number(entry.get("priority", 0))
    if not whole(priority, -MAX_PRIORITY, MAX_PRIORITY):
        raise TeamPlanError(f"{at}: priority must be a whole number (higher is more important,"
                            f" at most {MAX_PRIORITY:,}), got {show(priority)}. To fix: e.g. "
                            "priority: 1")
    team = entry.get("team", DEFAULT_TEAM)
    if not isinstance(team, str) or not team.strip():
        raise TeamPlanError(f"{at}: team must be a non-empty string, got {show(team)}. {FIX}")
    team = text(team, f"{at}: team")
    allow_flagged = entry.get("allow_flagged", False)
    if not isinstance(allow_flagged, bool):  # "yes" as a string would otherwise be true
        raise TeamPlanError(f"{at}: allow_flagged must be true or false, got "
                            f"{show(allow_flagged)}. To fix: allow_flagged: true")
    window = (deadline - start).days
    starts_here = offsets(entry["start_offsets_days"], f"{at}: start_offsets_days") \
        if "start_offsets_days" in entry else starts or default_offsets(window)
    if min(starts_here) >= window:  # no start inside the window: "no plan finishes" misled
        raise TeamPlanError(f"{at}: every start offset {list(starts_here)} is on or after the "
                            f"deadline: the window {start} – {deadline} is {window} days. To "
                            f"fix: give start_offsets_days below {window} (0 starts on "
                            "earliest_start)")
    return Job(index=i, name=name, team=team, spec=spec, workload=workload,
               earliest_start=start, deadline=deadline, priority=priority, clouds=clouds,
               regions=regions, pricing=pricing, accelerators=accs, exclude=exclude,
               max_gpus=max_gpus,
               min_probability=_or(probability(entry.get("min_probability"),
                                               f"{at}: min_probability"), min_p),
               start_offsets_days=starts_here, allow_flagged=allow_flagged,
               commitment_use=_commitment_use(entry, pricing, at))


def _commitment_use(entry: dict, pricing: tuple[str, ...], at: str) -> float:
    """The job's ``commitment_use``, as ``plan --commitment-use`` takes it: a share from 0 to 1,
    refused beside pricing models without a term (where it would change nothing, silently)."""
    value = number(entry.get("commitment_use", 0.0))
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise TeamPlanError(f"{at}: commitment_use must be a number from 0 to 1 (the share of "
                            "a term's hours left after the run that you will use), got "
                            f"{show(value)}. To fix: e.g. commitment_use: 0.5")
    if "commitment_use" in entry and not any(PRICING_TERM_HOURS.get(p) for p in pricing):
        raise TeamPlanError(f"{at}: commitment_use applies to reserved, committed and "
                            "capacity-block pricing (the term's hours left after the run); "
                            f"pricing {', '.join(pricing)} has no term. To fix: add one to "
                            "pricing (e.g. reserved_1y), or remove commitment_use")
    return float(value)


def _or(value, default):
    return default if value is None else value


def _numbers_in(entries, keys: tuple[str, ...], convert):
    """A list of mappings (quota rules, override entries) with ``keys`` in exponent form read
    as numbers (``number``); anything else is left for its own parser to refuse."""
    if not isinstance(entries, list):
        return entries
    return [{k: convert(v) if k in keys else v for k, v in e.items()} if isinstance(e, dict)
            else e for e in entries]


def _check_size(jobs: list[Job], source: str) -> None:
    """At most MAX_JOB_STARTS (distinct job, start offset) pairs, before anything is planned."""
    distinct = {}
    for j in jobs:
        key = (j.workload, j.earliest_start, j.deadline, j.priority, j.clouds, j.regions,
               j.pricing, j.accelerators, j.exclude, j.max_gpus, j.min_probability,
               j.start_offsets_days, j.allow_flagged, j.commitment_use)
        distinct.setdefault(key, j)
    pairs = sum(len(j.start_offsets_days) for j in distinct.values())
    if pairs > MAX_JOB_STARTS:
        most = max(distinct.values(), key=lambda j: len(j.start_offsets_days))
        raise TeamPlanError(
            f"{source}: {len(distinct):,} distinct jobs with {pairs:,} start offsets in all "
            f"(jobs[{most.index}] {most.name!r} has {len(most.start_offsets_days)}); at most "
            f"{MAX_JOB_STARTS:,} can be allocated in reasonable time (identical jobs count "
            "once). To fix: give fewer start_offsets_days (e.g. [0, 7, 14]) or split the plan "
            "into several files")


def _exclude(value, at: str, catalog: Catalog) -> tuple[str, ...]:
    """Instance types, clouds or regions, checked here so that a typo names the job and the
    key (plan() would check them too, but its message names the CLI's --exclude)."""
    listed = names(value, at, None, allow_empty=True)  # excluding nothing is fine
    try:
        return check_exclude(listed, catalog, where=at,
                             hint="exclude takes instance types (p4d.24xlarge), clouds or "
                                  "regions")
    except UnknownNameError as exc:
        raise TeamPlanError(str(exc)) from None


def _workload(value, at: str, configs: Mapping[str, Mapping]) -> tuple[WorkloadSpec, Workload]:
    if not isinstance(value, dict):
        raise TeamPlanError(f"{at}: expected a mapping such as {{model: llama3-8b, tokens: 1T}}"
                            f". {FIX}")
    no_unknown(value, WORKLOAD_FIELDS, at)
    value = {k: whole_number(v) if k in WHOLE_FIELDS else v for k, v in value.items()}
    for k, v in value.items():
        # An empty value must not quietly mean "the default" (tokens: '' is a mistake).
        if v is None or (isinstance(v, str) and not v.strip()):
            raise TeamPlanError(f"{at}: {k} is empty. To fix: give a value or remove the field")
        if k in WHOLE_FIELDS and not whole(v, 1, WHOLE_FIELDS[k]):
            raise TeamPlanError(f"{at}: {k} must be a whole number from 1 to "
                                f"{WHOLE_FIELDS[k]:,}, got {show(v)}. {FIX}")
        if k in ("model", "config", "precision", "optimizer", "recompute", "finetune") \
                and not isinstance(v, str):
            raise TeamPlanError(f"{at}: {k} must be a name, got {show(v)}. {FIX}")
        if k in ("params", "active_params", "tokens", "global_batch_tokens") \
                and (isinstance(v, bool) or not isinstance(v, str | int | float)):
            raise TeamPlanError(f"{at}: {k} must be a count such as 7B or 1T, got "
                                f"{show(v)}. {FIX}")
    kwargs = {k: value[k] for k in WORKLOAD_FIELDS if k in value and k not in ARCH_FIELDS}
    for k in ("precision", "optimizer", "recompute", "finetune"):
        if k in kwargs:
            kwargs[k] = kwargs[k].lower()
    if "lora_rank" in kwargs and kwargs.get("finetune") != "lora":  # as the CLI: not ignored
        raise TeamPlanError(f"{at}: lora_rank {show(kwargs['lora_rank'])} sets a LoRA adapter, "
                            f"but finetune is {kwargs.get('finetune', 'none')!r}. To fix: add "
                            "finetune: lora, or remove lora_rank")
    if "config" in kwargs:
        name = kwargs.pop("config")
        if name not in configs:
            raise TeamPlanError(f"{at}: {NO_FILES}")
        kwargs["config"], kwargs["config_name"] = configs[name], name
    arch = tuple((k, value[k]) for k in ARCH_FIELDS if k in value)
    try:
        spec = WorkloadSpec(**kwargs, arch_overrides=arch)
        return spec, build_workload(spec)
    except GpuplanError as exc:
        # the workload's inputs are this file's keys
        raise TeamPlanError(f"{at}: {refer_to_fields(str(exc), lambda field: field)}") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise TeamPlanError(f"{at}: {exc}. {FIX}") from None


def _overrides(value, source: str):
    """Inline price overrides, validated by the catalog's own overrides parser."""
    if value is None:
        return None
    if isinstance(value, dict):
        value = {k: _numbers_in(v, ("percent", "usd_per_hour"), number)
                 for k, v in value.items()}
    try:  # `overrides: {}` is refused as an empty --overrides file is
        parsed = parse_overrides(value, source=f"{source}: overrides",
                                 omit="remove the overrides: key")
    except OverrideError as exc:
        raise TeamPlanError(str(exc)) from None
    return dataclasses.replace(parsed, path=f"{source} (overrides)")


def priced_catalog(team_plan: TeamPlan, catalog: Catalog, today: dt.date | None = None) -> Catalog:
    """``catalog`` with the team plan's inline price overrides applied (a new catalog)."""
    if team_plan.overrides is None:
        return catalog
    try:
        return catalog.with_overrides(team_plan.overrides, today)
    except GpuplanError as exc:  # it names "<file> (overrides)" already: once, not twice
        raise TeamPlanError(str(exc)) from None
