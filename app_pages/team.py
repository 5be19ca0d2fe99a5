"""Team budget: several jobs, shared quotas and budgets → one plan per job, the timeline, the
monthly burn and a report to download.

Uses planner's public team functions only: parse_team_plan, load_team_plan, allocate_team,
render_report.
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import plotly.express as px
import streamlit as st

import catalog
import planner
from app_pages import _shared as S

REPORT_FORMATS = {"HTML": "html", "PDF": "pdf", "Markdown": "md", "CSV": "csv"}
MIME = {"html": "text/html", "pdf": "application/pdf", "md": "text/markdown",
        "csv": "text/csv"}


def team_api():
    """(parse_team_plan, load_team_plan, allocate, render): planner's public team functions."""
    return (planner.parse_team_plan, planner.load_team_plan, planner.allocate_team,
            planner.render_report)


def default_jobs(today: dt.date) -> pd.DataFrame:
    start = (today.replace(day=1) + dt.timedelta(days=32)).replace(day=1)  # next month
    return pd.DataFrame([
        {"name": "pretrain-1.5b", "team": "research", "model": "gpt2-xl", "tokens": "50B",
         "earliest_start": start, "deadline": start + dt.timedelta(days=21), "priority": 1,
         "clouds": "", "pricing": "on_demand,spot", "max_gpus": 256},
        {"name": "ablation-small", "team": "product", "model": "gpt2-medium", "tokens": "20B",
         "earliest_start": start, "deadline": start + dt.timedelta(days=14), "priority": 0,
         "clouds": "", "pricing": "on_demand,spot", "max_gpus": 64},
    ])


def _date_text(value) -> str:
    return str(value)[:10]


def plan_from_table(jobs: pd.DataFrame, budgets: pd.DataFrame) -> dict:
    """The edited tables as the team-plan mapping (docs/team.md's format)."""
    out = []
    for row in jobs.to_dict("records"):
        if not str(row.get("name") or "").strip():
            continue
        job = {"name": str(row["name"]).strip(),
               "workload": {"model": str(row.get("model") or "").strip(),
                            "tokens": str(row.get("tokens") or "").strip()},
               "earliest_start": _date_text(row.get("earliest_start")),
               "deadline": _date_text(row.get("deadline"))}
        for key in ("team", "clouds", "pricing"):
            if str(row.get(key) or "").strip():
                job[key] = str(row[key]).strip()
        for key in ("priority", "max_gpus"):
            if pd.notna(row.get(key)):
                job[key] = int(row[key])
        out.append(job)
    data = {"name": "team plan (edited in the app)", "jobs": out}
    periods = {str(r["period"]).strip(): float(r["usd"]) for r in budgets.to_dict("records")
               if str(r.get("period") or "").strip() and pd.notna(r.get("usd"))}
    if periods:
        data["budgets"] = periods
    return data


@st.cache_data(max_entries=16, show_spinner="Allocating…")
def run_allocation(source_kind: str, payload: str, catalog_id: tuple,
                   calibration_id: tuple) -> dict:
    """Parse, allocate and render; ``{"error": line}`` when the plan cannot be used."""
    del catalog_id, calibration_id
    parse_team_plan, load_team_plan, allocate, render = team_api()
    try:
        cat = catalog.load_catalog(overrides=S.overrides_path())
        if source_kind == "yaml":
            team_plan = load_team_plan(payload, catalog=cat)
        else:
            team_plan = parse_team_plan(json.loads(payload), catalog=cat, source="table")
        allocation = allocate(team_plan, catalog=cat,
                              calibration=planner.load_calibration(cat))
        reports = {}
        for label, fmt in REPORT_FORMATS.items():
            try:
                reports[label] = (fmt, render(allocation, fmt))
            except (catalog.GpuplanError, ImportError):
                continue  # e.g. PDF without matplotlib (the report extra): offer the others
        return {"allocation": allocation.as_dict(), "reports": reports}
    except catalog.GpuplanError as exc:
        return {"error": str(exc)}


JOB_TABLE = ("job", "team", "workload", "start", "end", "deadline", "slack_hours", "cloud",
             "region", "instance_type", "nodes", "gpus", "pricing", "cost_usd", "gpu_hours",
             "deadline_probability")


def timeline(jobs: pd.DataFrame):
    fig = px.timeline(jobs, x_start="start", x_end="end", y="job", color="team",
                      hover_data=["instance_type", "nodes", "cloud", "region", "pricing",
                                  "cost_usd", "deadline"], title="Timeline")
    fig.add_scatter(x=pd.to_datetime(jobs["deadline"]), y=jobs["job"], mode="markers",
                    marker={"symbol": "line-ns-open", "size": 18, "color": "#d62728"},
                    name="deadline")
    fig.update_yaxes(autorange="reversed", title="")
    return fig


def monthly_burn(jobs: list[dict], by_month: dict):
    rows = [{"month": m, "job": j["job"], "team": j["team"], "cost_usd": usd}
            for j in jobs for m, usd in j["cost_by_month"].items()]
    fig = px.bar(pd.DataFrame(rows), x="month", y="cost_usd", color="job",
                 hover_data=["team"], labels={"cost_usd": "USD", "month": ""},
                 title="Monthly burn")
    budget = [(m, v["budget_usd"]) for m, v in by_month.items() if v.get("budget_usd")]
    if budget:
        fig.add_scatter(x=[m for m, _ in budget], y=[b for _, b in budget], mode="markers",
                        marker={"symbol": "line-ew-open", "size": 30, "color": "#d62728"},
                        name="budget")
    return fig


def show_allocation(out: dict) -> None:
    a = out["allocation"]
    t = a["totals"]
    c = st.columns(4)
    c[0].metric("Total cost", S.usd(t["cost_usd"]),
                help=f"budget {S.usd(t['budget_usd'])}" if t.get("budget_usd") else None)
    c[1].metric("GPU-hours", f"{t['gpu_hours']:,.0f}")
    c[2].metric("Jobs", t["jobs"])
    c[3].metric("Last job ends", t["end"][:10], help=f"first starts {t['start']} UTC")
    jobs = pd.DataFrame(a["jobs"])
    st.plotly_chart(timeline(jobs), key="team_timeline")
    st.plotly_chart(monthly_burn(a["jobs"], a["by_month"]), key="team_burn")
    st.dataframe(jobs[[c for c in JOB_TABLE if c in jobs.columns]], hide_index=True,
                 key="team_jobs_table")
    if a["budgets"]:
        st.dataframe(pd.DataFrame(a["budgets"]), hide_index=True, key="team_budget_table")
    st.dataframe(pd.DataFrame([{"team": k, **v} for k, v in a["by_team"].items()]),
                 hide_index=True, key="team_by_team")
    cols = st.columns(len(out["reports"]) + 1)
    for col, (label, (fmt, data)) in zip(cols, out["reports"].items(), strict=False):
        col.download_button(f"Download report ({label})", data,
                            file_name=f"gpuplan-team-report.{fmt}", mime=MIME.get(fmt),
                            key=f"team_report_{fmt}")
    cols[-1].download_button("Download allocation (JSON)", json.dumps(a, indent=2, default=str),
                             file_name="gpuplan-allocation.json", mime="application/json",
                             key="team_allocation_json")
    with st.expander("Assumptions"):
        for note in a["assumptions"]:
            st.markdown(f"- {note}")
    S.catalog_line(a["catalog"])


def main() -> None:
    st.title("Team budget")
    cat = S.load_catalog_or_stop()
    how = st.radio("Jobs from", ["table", "yaml"], horizontal=True, key="team_source",
                   format_func={"table": "Edit a table", "yaml": "Upload team YAML"}.get)
    if how == "yaml":
        up = st.file_uploader("Team plan (YAML, format: docs/team.md)", type=["yaml", "yml"],
                              key="team_yaml")
        payload = up.getvalue().decode("utf-8", errors="replace") if up else None
        if payload is not None and "\n" not in payload:
            payload += "\n"  # load_team_plan reads text (not a path) when it has a newline
    else:
        st.caption("One row per job; clouds and pricing are comma-separated (empty = all).")
        jobs = st.data_editor(default_jobs(dt.date.today()), num_rows="dynamic",
                              key="team_jobs", column_config={
                                  "earliest_start": st.column_config.DateColumn(),
                                  "deadline": st.column_config.DateColumn(),
                                  "priority": st.column_config.NumberColumn(step=1),
                                  "max_gpus": st.column_config.NumberColumn(min_value=1,
                                                                            step=1)})
        st.caption("Budgets: a month (2027-03), a quarter (2027Q2) or total, in USD.")
        budgets = st.data_editor(pd.DataFrame({"period": ["total"], "usd": [50_000.0]}),
                                 num_rows="dynamic", key="team_budgets")
        payload = json.dumps(plan_from_table(jobs, budgets), default=str)
    if payload is None:
        st.info("Upload a team plan to allocate it.")
        return
    if st.button("Run the allocation", key="team_run", type="primary"):
        st.session_state["team_last"] = (how, payload)
    last = st.session_state.get("team_last")
    if last is None:
        return
    if last != (how, payload):
        st.caption("The jobs changed since this allocation: run it again to update it.")
    out = run_allocation(last[0], last[1], S.catalog_key(cat), S.calibration_key())
    if "error" in out:
        st.error(out["error"])
        return
    show_allocation(out)


main()
