"""What every page shares: the catalog, the app's words for the planner's messages, and cached
planner calls (the widgets bound to the URL and the bounded uploads are in ``_inputs``).

The cached functions take plain values (strings, numbers, tuples, bytes) and return plain
dicts, so ``st.cache_data`` can hash their arguments and pickle their results. Nothing here
models anything: it turns widget values into the planner's public inputs and back.

The planner is imported inside the functions that use it, not at the top: a page draws its
title before the planner (numpy, the model, SciPy for the team MILP) has loaded, and a page
that never plans never loads ``planner.team`` (issue 19: the app's first answer on a cold
server).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import warnings
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import streamlit as st

import catalog
from app_pages._cache_keys import calibration_key, catalog_key  # noqa: F401 (S.*)
from app_pages._format import count, md

if TYPE_CHECKING:
    import planner

PLAN_TTL_S = 3600  # a date deadline ("2027-03-31") is hours from *now*: recompute hourly

# ---- the app's words -------------------------------------------------------------------------
# One name per input, used as the widget's label and wherever a message names the input. Keys
# are the planner's field names: its errors' ``field`` and the `field` references in its
# messages (the CLI names the same inputs by its flags, a team plan by its YAML keys).
FIELD_LABELS: dict[str, str] = {
    "model": "Model preset",
    "config": "Hugging Face config.json",
    "params": "Total parameters",
    "active_params": "Active parameters",
    "experts": "Experts",
    "experts_per_token": "Experts per token",
    "tokens": "Training tokens",
    "seq_len": "Sequence length",
    "global_batch_tokens": "Global batch tokens",
    "precision": "Precision",
    "recompute": "Activation recompute",
    "deadline": "Deadline",
    "budget": "Budget, USD",
    "max_gpus": "Max GPUs",
    "min_probability": "Min. probability of meeting the deadline",
    "clouds": "Clouds",
    "regions": "Regions",
    "pricing": "Pricing models",
    "gpus": "Accelerators",
    "commitment_use": "Commitment used after the run",
    "max_spot_instances": "Max spot instances",
    "allow_flagged": "Use flagged prices",
    "group_by": "Compare by",
    "top": "Candidates to list",
    "min_gpus": "Min GPUs per instance",
    "max_price": "Max $ per instance-hour",
    "sort": "Sort by",
    "accelerator": "Catalog accelerator",
}
_FIELD_ALIASES = {"cloud": "clouds", "region": "regions", "gpu": "gpus", "top_n": "top",
                  "budget_usd": "budget", "deadline_hours": "deadline", "model_preset": "model"}
# CLI commands a message may suggest, and where the app does the same.
_COMMANDS = {"`gpuplan offers --flagged`": "the Catalog page's price flags",
             # "run the Catalog page to list accelerators and their aliases": a page is not
             # run, and the aliases are in its accelerators table
             "run `gpuplan gpus` to list accelerators and their aliases":
                 "see the Catalog page's accelerators and their aliases",
             "`gpuplan offers`": "the Catalog page",
             "`gpuplan gpus`": "the Catalog page's accelerators",
             "`gpuplan probe show`": "the Probes page", "`gpuplan probe list`": "the Probes page"}
_FLAG = re.compile(r"--([a-z][a-z0-9-]*)")  # messages from outside the planner (catalog, launch)
_REFERENCE = re.compile(r"`([a-z][a-z0-9_]*)`")  # the planner's `field` references
# a command to run: backticked, starting with a word, with a space; its opening backtick is
# not the closing one of a `field` (",` allow GPUs … use `" read as a command left both
# fields of "raise `max_gpus`, … or use `recompute` full" untranslated)
_COMMAND_SPAN = re.compile(r"((?<![\w`])`[a-z][^`\s]* [^`]*`)")


def field_key(field: str | None) -> str | None:
    """'--seq-len', 'seq-len' or 'seq_len' → 'seq_len'."""
    if not field:
        return None
    key = str(field).lstrip("-").replace("-", "_")
    return _FIELD_ALIASES.get(key, key)


def field_label(field: str | None) -> str | None:
    key = field_key(field)
    return FIELD_LABELS.get(key) if key else None


def _label_or_words(field: str) -> str:
    """An input by its label; one the app has no box for, by how it is set: a model constant
    (``--assume`` on the CLI) or the overrides file (GPUPLAN_OVERRIDES) — "set “restart
    minutes”" and "added with “overrides”" named boxes the page does not have."""
    label = field_label(field)
    if label:
        return f"“{label}”"
    if field == "overrides":
        return "the GPUPLAN_OVERRIDES file (docs/app.md)"
    from planner.model import assumption_names  # loaded already: a planner message is shown

    if field in _assumption_set(assumption_names):
        return f"the CLI's model constant {field}"  # the app keeps every constant's default
    return f"“{field.replace('_', ' ').replace('-', ' ')}”"


@functools.cache
def _assumption_set(names) -> frozenset[str]:
    return frozenset(names())


def app_words(text: str) -> str:
    """A planner message in the app's words: its inputs by their labels, never CLI flags."""
    from planner.model import refer_to_fields

    text = _pages(text)
    # a CLI metavar after an input ("`accelerator` NAME"): the box is right there
    text = re.sub(r"(`[a-z][a-z0-9_]*`) [A-Z]{2,}\b", r"\1", text)
    text = re.sub(r"\bpass (e\.g\. )?(?=--|`[a-z][a-z0-9_]*`)", r"set \1", text)
    text = re.sub(r"To fix: pass\b", "To fix: give", text)  # "pass e.g. 14d": the CLI's verb
    # the page has no box to leave out: a dense model has “Experts” 0
    text = re.sub(r"\bdrop (`experts`|--experts)(?![-\w])", r"set \1 0", text)
    text = re.sub(r"\buse --target (\w+)", r"use the \1 file", text)
    # a backticked command (`python -m probes --out PATH`) is run as written: its flags stay
    parts = _COMMAND_SPAN.split(text)
    for i in range(0, len(parts), 2):
        parts[i] = _FLAG.sub(lambda m: _label_or_words(m[1]),
                             refer_to_fields(parts[i], _label_or_words))
    return "".join(parts)


def _pages(text: str) -> str:
    """CLI commands a message suggests → the page that does the same (before flags are
    translated: a command may carry one)."""
    for command, page in _COMMANDS.items():
        text = text.replace(command, page)
    return text


def error_out(exc: BaseException, replace: dict[str, str] | None = None) -> dict:
    """A planner error for the page: ``{"error": message in the app's words, "field": key}``.

    ``field`` is the error's own (``exc.field``) when it has one, else the first input its
    message names. ``replace`` maps server paths to what the user sees.
    """
    raw = str(exc)
    for path, name in (replace or {}).items():
        raw = raw.replace(path, name)
    field = field_key(getattr(exc, "field", None))
    if field is None and (m := _REFERENCE.search(_pages(raw)) or _FLAG.search(_pages(raw))):
        field = field_key(m[1])
    text = app_words(raw)
    label = FIELD_LABELS.get(field) if field else None
    if label and f"“{label}”" not in text:
        text = f"“{label}”: {text}"
    return {"error": text, "field": field}


def show_error(out: dict) -> None:
    """The one-line error of ``error_out``, escaped (it may quote what the user typed)."""
    st.error(md(out["error"]), icon=":material/error:")


# ---- the catalog -------------------------------------------------------------------------------

def overrides_path() -> str | None:
    """Price overrides, as the CLI reads them (``GPUPLAN_OVERRIDES``; empty or spaces: unset)."""
    return os.environ.get("GPUPLAN_OVERRIDES", "").strip() or None


def load_catalog_or_stop() -> catalog.Catalog:
    """The active catalog; on a user-fixable error, the one-line message and the page stops.
    A ``CatalogNotice`` (the active catalog could not be read, another is used) is shown."""
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", catalog.CatalogNotice)
            cat = catalog.load_catalog(overrides=overrides_path())
    except catalog.GpuplanError as exc:
        show_error(error_out(exc))
        st.stop()
        raise  # unreachable: st.stop() raises
    for w in seen:
        if issubclass(w.category, catalog.CatalogNotice):
            st.warning(str(w.message))
        else:  # not ours: shown as it would have been
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    return cat


def catalog_banner(cat: catalog.Catalog, shown: tuple[str, int] | None = None) -> None:
    """Which catalog priced this, from what source, and a warning when it is old; ``shown``:
    (dates, age in days) of the offers a page lists, said instead of the whole catalog's."""
    dates = md(shown[0] if shown else catalog.price_dates(cat.provenance()))
    text = f"Catalog: **{md(cat.name)}** — prices as of {dates}. Source: " \
           f"{md(cat.source or 'unknown')}."
    if cat.overrides_path:
        text += f" Overrides from {md(Path(cat.overrides_path).name)}."
    age = shown[1] if shown else cat.age_days()
    if age is not None and age > catalog.STALE_AFTER_DAYS:
        st.warning(f"{text}\n\nPrices are up to {age:,} days old: run `gpuplan catalog refresh` "
                   "or apply your own rates with `GPUPLAN_OVERRIDES`.",
                   icon=":material/warning:")
    else:
        st.info(text)


def catalog_line(info: dict) -> None:
    """The catalog a result was priced with (the ``catalog`` entry of a plan or allocation)."""
    over = info.get("overrides")
    st.caption(f"Priced with the {md(info.get('name'))} catalog (prices as of "
               f"{md(catalog.price_dates(info))}); "
               f"{md(info.get('source') or '')}"
               + (f"; overrides {md(Path(over).name)}" if over else ""))


def gpu_choices(cat: catalog.Catalog) -> list[str]:
    """Accelerators with a priced on-demand or spot offer that the planner can time (no
    FPGAs): GPUs first, then TPUs/Trainium, each alphabetically. (Instance types alone listed
    GB200 and MI300X, which the catalog prices nowhere: choosing one could only fail. Those
    offers are the ones a default plan builds anyway.)"""
    import planner

    priced = {(o.cloud, o.instance_type) for o in cat.offers_priced_as(("on_demand", "spot"))
              if o.usd_per_hour is not None}
    offered = sorted({t.accelerator for t in cat.instance_types if (t.cloud, t.name) in priced})
    usable = [a for a in offered
              if any(planner.can_time(cat.accelerator(a), p) for p in ("bf16", "fp16", "fp8"))]
    return sorted(usable, key=lambda a: (cat.accelerator(a).vendor not in ("NVIDIA", "AMD"), a))


def constraint_default(name: str):
    """The planner's default for one of its constraints (``planner.Constraints``), so that
    the page's widgets start where `gpuplan plan` does."""
    import planner
    from planner import search

    if name in search.CONSTRAINT_DEFAULTS:
        return search.CONSTRAINT_DEFAULTS[name]
    return next(f.default for f in dataclasses.fields(planner.Constraints) if f.name == name)


def gpus_per_sequence() -> int:
    """The planner's cluster floor on the default global batch (at least one sequence per
    this many GPUs), read back from ``default_batch_sequences`` so the app's words follow the
    planner: with a batch by model size of one sequence, the cluster size at which it first
    asks for two, less one."""
    from planner.model import default_batch_sequences

    def sequences(gpus: int) -> int:
        return default_batch_sequences(params=1.0, seq_len=2**40, gpus=gpus, finetune=False)

    lo, hi = 1, 2**20  # bisect: the default never shrinks as the cluster grows
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if sequences(mid) < 2 else (lo, mid)
    return lo - 1


def batch_help() -> str:
    """The global batch's help: what an empty field means, in the planner's own numbers (a
    fixed "≈ 4M" went stale when the default began to follow the model and the cluster)."""
    from planner.model import default_batch_sequences

    seq = 2048

    def by_size(params: float) -> str:
        n = default_batch_sequences(params=params, seq_len=seq, gpus=1, finetune=False)
        return count(n * seq)

    return ("Tokens per optimizer step, e.g. 4M. Empty: the planner's default, by model size "
            f"as GPT-3 was trained ({by_size(1.3e9)} tokens for 1.3B parameters, "
            f"{by_size(7e9)} for 7B, {by_size(70e9)} for 70B), raised to at least one sequence "
            f"per {gpus_per_sequence()} GPUs on large clusters. The line above the "
            "recommendation says which batch the plan used.")


# ---- cached planner calls ----------------------------------------------------------------------

LAUNCH_TARGETS = ("skypilot", "dstack")  # the orchestrators with task files (`plan --emit`)


@st.cache_data(ttl=PLAN_TTL_S, max_entries=64, show_spinner="Planning…")
def cached_plan(request: dict, config_bytes: bytes | None, config_name: str,
                catalog_id: tuple, calibration_id: tuple) -> dict:
    """``planner.plan`` for one set of inputs, as a dict (its ``points`` as columns,
    ``_plan_charts.PointColumns``); ``{"error": …}`` on bad input.

    ``catalog_id`` and ``calibration_id`` are only cache keys: a refreshed catalog or a newly
    ingested probe report gives a new entry. An uploaded config is parsed here and handed to
    the planner as data, named by the upload's name.
    """
    del catalog_id, calibration_id
    import planner
    from planner import store

    try:
        cat = catalog.load_catalog(overrides=overrides_path())
        if config_bytes is not None:
            config = config_data(config_bytes, config_name)
            workload = planner.build_workload(_spec(request, config=config,
                                                    config_name=PurePath(config_name).name))
        else:
            workload = planner.build_workload(_spec(request))
        deadline_hours = planner.parse_deadline(request["deadline"])
        constraints = planner.Constraints(
            deadline_hours=deadline_hours, max_gpus=int(request["max_gpus"]),
            budget_usd=request["budget_usd"], min_probability=request["min_probability"],
            clouds=tuple(request["clouds"]), regions=tuple(request["regions"]),
            pricing=tuple(request["pricing"]), gpus=tuple(request["gpus"]),
            commitment_use=request.get("commitment_use"),
            max_spot_instances=request.get("max_spot_instances"),
            allow_flagged=bool(request.get("allow_flagged")),
            group_by=request.get("group_by") or None)
        result = planner.plan(workload, cat, constraints, calibration=store.load_calibration(cat),
                              top_n=int(request["top_n"]), points=True)
    except catalog.GpuplanError as exc:
        return error_out(exc)
    arch, name = workload.arch, workload.arch.name
    if config_bytes is not None and name == "config" and isinstance(config, dict):
        kinds = config.get("architectures")  # a bare config.json's stem named it "config"
        name = config.get("model_type") or (kinds[0] if isinstance(kinds, list) and kinds else name)
    # the name of an uploaded config is the uploader's text: one printable line
    workload = dataclasses.replace(workload, arch=dataclasses.replace(
        arch, name=" ".join(str(name or "model").split())[:80]))
    out = {"result": result.as_dict(points=True), "deadline_hours": deadline_hours,
           "workload": {"name": workload.arch.name, "params_total": arch.params_total(),
                        "params_active": arch.params_active(), "tokens": workload.tokens,
                        "seq_len": workload.seq_len,
                        "global_batch_tokens": workload.global_batch_tokens,
                        "precision": workload.precision, "experts": arch.experts,
                        "experts_per_token": arch.experts_per_token,
                        "inferred": [app_words(n) for n in workload.inferred]},
           "launch": launch_files(result.recommendation.as_dict()
                                  if result.recommendation else None, workload, cat)}
    out = json.loads(json.dumps(out, default=str))
    from app_pages._plan_charts import compact  # the points as columns: most of the cache
    out["result"]["points"] = compact(out["result"]["points"])
    return out


def config_data(data: bytes, name: str) -> dict:
    """An uploaded config.json as data, read as `gpuplan estimate --config` reads a file."""
    from planner.model import MAX_CONFIG_DEPTH, config_file_error

    try:
        text = catalog.decode_user_bytes(data, what=f"model config {PurePath(name).name}")
        return catalog.load_json_text(text, what=f"model config {PurePath(name).name}",
                                      max_depth=MAX_CONFIG_DEPTH)
    except catalog.CatalogFileError as exc:  # (its encoding: "save the file as UTF-8, or …")
        raise config_file_error(exc, fix="upload the model's Hugging Face config.json") from None


def launch_files(recommendation: dict | None, workload, cat: catalog.Catalog) -> dict:
    """The recommendation as task files, as `gpuplan plan --emit TARGET` writes them:
    ``{target: {"files": [[name, text], …], "commands": […]} or {"error": …}}``."""
    from planner import launch

    out: dict = {}
    if recommendation is None:
        return out
    for target in LAUNCH_TARGETS:
        try:
            bundle = launch.training_launch(recommendation, target,
                                            task_path=launch.default_path(target, "train"),
                                            catalog=cat, workload=workload)
        except catalog.GpuplanError as exc:
            out[target] = error_out(exc)
            continue
        out[target] = {"files": [[f.path, f.text] for f in bundle.files],
                       "commands": list(bundle.commands)}
    return out


def _text(value: str | None) -> str | None:
    return (value or "").strip() or None


def _spec(request: dict, config: dict | None = None,
          config_name: str = "") -> planner.WorkloadSpec:
    import planner

    by_params = request["source"] == "params"
    return planner.WorkloadSpec(
        model=request["model"] if request["source"] == "preset" else None,
        config=config, config_name=config_name,
        params=(_text(request["params"]) or "") if by_params else None,  # "": "is empty"
        active_params=_text(request["active_params"]) if by_params else None,
        experts=request.get("experts") if by_params else None,
        experts_per_token=request.get("experts_per_token") if by_params else None,
        # empty: 20 per active parameter (Chinchilla), as the CLI without --tokens; the
        # workload's assumptions say so ("is empty … leave it out" was the answer before)
        tokens=_text(request["tokens"]) or None, precision=request["precision"],
        seq_len=request.get("seq_len"),
        global_batch_tokens=_text(request.get("global_batch_tokens")),
        recompute=request.get("recompute") or "auto")


@st.cache_data(max_entries=32, show_spinner=False)
def cached_offers(filters: dict, catalog_id: tuple) -> dict:
    """``catalog.select_offers`` as rows of dicts; ``{"error": …}`` on a bad filter."""
    del catalog_id
    try:
        cat = catalog.load_catalog(overrides=overrides_path())
        rows = catalog.select_offers(cat, **filters)
    except catalog.GpuplanError as exc:
        return error_out(exc)
    return {"rows": [r.as_dict() for r in rows]}


@st.cache_data(max_entries=4, show_spinner=False)
def cached_accelerator_summaries(catalog_id: tuple) -> list[dict]:
    del catalog_id
    cat = catalog.load_catalog(overrides=overrides_path())
    return [s.as_dict() for s in catalog.accelerator_summaries(cat)]


def parse_team_plan_no_paths(data, *, catalog: catalog.Catalog, source: str,
                             configs: dict | None = None):
    """``planner.team.parse_team_plan`` for a plan that came from the browser: given as data
    alone, it cannot make the server read a file (a ``workload.config`` not in ``configs``,
    the uploaded config.json files by the name the plan gives, is refused)."""
    from planner import team

    return team.parse_team_plan(data, catalog=catalog, source=source, configs=configs)
