"""What every page shares: the catalog, cached calls into planner/catalog, and formatting.

The cached functions take plain values (strings, numbers, tuples, bytes) and return plain
dicts, so ``st.cache_data`` can hash their arguments and pickle their results. Nothing here
models anything: it turns widget values into the planner's public inputs and back.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import streamlit as st

import catalog
import planner

PLAN_TTL_S = 3600  # a date deadline ("2027-03-31") is hours from *now*: recompute hourly


# ---- the catalog ---------------------------------------------------------------------------

def overrides_path() -> str | None:
    """Price overrides, as the CLI reads them (``GPUPLAN_OVERRIDES``)."""
    return os.environ.get("GPUPLAN_OVERRIDES") or None


def load_catalog_or_stop() -> catalog.Catalog:
    """The active catalog; on a user-fixable error, the one-line message and the page stops."""
    try:
        return catalog.load_catalog(overrides=overrides_path())
    except catalog.GpuplanError as exc:
        st.error(str(exc))
        st.stop()
        raise  # unreachable: st.stop() raises


def catalog_key(cat: catalog.Catalog) -> tuple:
    """What identifies a catalog's contents, for cache keys (a refresh changes ``meta``)."""
    return (cat.name, str(cat.path), cat.overrides_path,
            json.dumps(cat.meta, sort_keys=True, default=str))


def calibration_key() -> tuple[int, ...]:
    """The ingested probe reports: ingesting one invalidates cached plans."""
    try:
        return tuple(r.id for r in planner.list_probe_reports())
    except catalog.GpuplanError:
        return ()


def catalog_banner(cat: catalog.Catalog) -> None:
    """Which catalog priced this, from what source, and a warning when it is old."""
    dates = ", ".join(f"{c} {cat.as_of(c):%Y-%m-%d}" for c in catalog.CLOUDS if cat.as_of(c))
    text = f"Catalog: **{cat.name}** — prices as of {dates or 'unknown'} (approximate). " \
           f"Source: {cat.source or 'unknown'}."
    if cat.overrides_path:
        text += f" Overrides from `{cat.overrides_path}`."
    age = cat.age_days()
    if age is not None and age > catalog.STALE_AFTER_DAYS:
        st.warning(f"{text}\n\nPrices are up to {age} days old: run `gpuplan catalog refresh` "
                   "or apply your own rates with `GPUPLAN_OVERRIDES`.",
                   icon=":material/warning:")
    else:
        st.info(text)


def catalog_line(info: dict) -> None:
    """The catalog a result was priced with (the ``catalog`` entry of a plan or allocation)."""
    dates = ", ".join(f"{c} {d}" for c, d in (info.get("as_of") or {}).items())
    st.caption(f"Priced with the {info.get('name')} catalog ({dates}); "
               f"{info.get('source') or ''}"
               + (f"; overrides {info['overrides']}" if info.get("overrides") else ""))


# ---- cached planner calls ------------------------------------------------------------------

@st.cache_data(ttl=PLAN_TTL_S, max_entries=64, show_spinner="Planning…")
def cached_plan(request: dict, config_bytes: bytes | None, config_name: str,
                catalog_id: tuple, calibration_id: tuple) -> dict:
    """``planner.plan`` for one set of inputs, as a dict; ``{"error": line}`` on bad input.

    ``catalog_id`` and ``calibration_id`` are only cache keys: a refreshed catalog or a newly
    ingested probe report gives a new entry.
    """
    del catalog_id, calibration_id
    try:
        cat = catalog.load_catalog(overrides=overrides_path())
        if config_bytes is not None:
            with tempfile.TemporaryDirectory(prefix="gpuplan-config-") as tmp:
                stem = Path(config_name).stem
                folder = Path(tmp) / (stem if stem not in ("", "config") else "uploaded")
                folder.mkdir()
                path = folder / "config.json"
                path.write_bytes(config_bytes)
                workload = planner.build_workload(_spec(request, config=str(path)))
        else:
            workload = planner.build_workload(_spec(request))
        deadline_hours = planner.parse_deadline(request["deadline"])
        constraints = planner.Constraints(
            deadline_hours=deadline_hours, max_gpus=int(request["max_gpus"]),
            budget_usd=request["budget_usd"], min_probability=request["min_probability"],
            clouds=tuple(request["clouds"]), regions=tuple(request["regions"]),
            pricing=tuple(request["pricing"]) or ("on_demand", "spot"),
            gpus=tuple(request["gpus"]))
        result = planner.plan(workload, cat, constraints,
                              calibration=planner.load_calibration(cat),
                              top_n=int(request["top_n"]))
    except catalog.GpuplanError as exc:
        return {"error": str(exc)}
    arch = workload.arch
    return {"result": result.as_dict(), "deadline_hours": deadline_hours,
            "workload": {"name": arch.name or "model", "params_total": arch.params_total(),
                         "params_active": arch.params_active(), "tokens": workload.tokens,
                         "seq_len": workload.seq_len, "precision": workload.precision,
                         "inferred": list(workload.inferred)}}


def _text(value: str | None) -> str | None:
    return (value or "").strip() or None


def _spec(request: dict, config: str | None = None) -> planner.WorkloadSpec:
    by_params = request["source"] == "params"
    return planner.WorkloadSpec(
        model=request["model"] if request["source"] == "preset" else None,
        config=config,
        params=_text(request["params"]) if by_params else None,
        active_params=_text(request["active_params"]) if by_params else None,
        tokens=_text(request["tokens"]) or "", precision=request["precision"])


@st.cache_data(max_entries=32, show_spinner=False)
def cached_offers(filters: dict, catalog_id: tuple) -> dict:
    """``catalog.select_offers`` as rows of dicts; ``{"error": line}`` on a bad filter."""
    del catalog_id
    try:
        cat = catalog.load_catalog(overrides=overrides_path())
        rows = catalog.select_offers(cat, **filters)
    except catalog.GpuplanError as exc:
        return {"error": str(exc)}
    return {"rows": [r.as_dict() for r in rows]}


@st.cache_data(max_entries=4, show_spinner=False)
def cached_accelerator_summaries(catalog_id: tuple) -> list[dict]:
    del catalog_id
    cat = catalog.load_catalog(overrides=overrides_path())
    return [s.as_dict() for s in catalog.accelerator_summaries(cat)]


# ---- formatting ----------------------------------------------------------------------------

def count(n: float) -> str:
    """50e9 → '50B', 1.5e12 → '1.5T' (as people write token counts)."""
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if n >= scale:
            return f"{n / scale:,.3g}{suffix}"
    return f"{n:,.0f}"


def hours(h: float) -> str:
    return f"{h:,.1f} h ({h / 24:,.1f} d)"


def usd(x: float | None, digits: int = 0) -> str:
    return "—" if x is None else f"${x:,.{digits}f}"


def plan_text(p: dict) -> str:
    plan = p["plan"]
    return (f"tp={plan['tp']} pp={plan['pp']} dp={plan['dp']} zero={plan['zero_stage']} "
            f"micro-batch={plan['micro_batch']}×{plan['grad_accumulation']} "
            f"recompute={plan['recompute']}" + (f" ep={plan['ep']}" if plan.get("ep") else ""))


def config_line(p: dict) -> str:
    """'5× Standard_ND96asr_v4 (40× A100-SXM4-40GB) · azure eastus · spot'."""
    return (f"{p['nodes']}× {p['instance_type']} ({p['gpus']}× {p['accelerator']}) · "
            f"{p['cloud']} {p['region']} · {p['pricing']}")


def candidate_row(p: dict) -> dict:
    """One flat table/CSV row for a candidate plan."""
    return {"cloud": p["cloud"], "region": p["region"], "instance_type": p["instance_type"],
            "accelerator": p["accelerator"], "nodes": p["nodes"], "gpus": p["gpus"],
            "pricing": p["pricing"], "usd_per_hour_cluster": round(p["usd_per_hour_cluster"], 2),
            "total_cost_usd": round(p["total_cost_usd"], 2),
            "wall_clock_hours": round(p["wall_clock_hours"], 2),
            "gpu_hours": round(p["gpu_hours"], 1),
            "deadline_probability": round(p["deadline_probability"], 4),
            "mfu": round(p["mfu"], 4), "memory_per_gpu_gib": round(p["memory_per_gpu_gib"], 2),
            "meets_deadline": p["meets_deadline"], "plan": plan_text(p),
            "price_as_of": p["price_as_of"], "price_flags": ",".join(p["price_flags"])}
