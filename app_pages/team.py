"""Team budget: several jobs, shared quotas and budgets → one plan per job, the timeline, the
monthly burn against the budgets and a report to download — drawn as the HTML report draws it.

Uses the planner's public team functions only: ``planner.team`` (team_yaml for an uploaded
file, parse_team_plan, allocate) and ``planner.reports.render``. An uploaded
plan is data: it cannot make the server read a file; the config.json files its jobs name
(``workload: config: PATH``) are uploaded beside it, one per name, and handed to the parser as
``configs`` (as `gpuplan report` reads them from the files next to the plan).
"""

from __future__ import annotations

import datetime as dt
import json

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import catalog
from app_pages import _charts as C
from app_pages import _format as F
from app_pages import _inputs as I
from app_pages import _shared as S
from app_pages._team_reports import (
    MIME,
    render_reports,
    report_on_click,
)
from app_pages._team_words import TABLE_SOURCE, plan_from_table, table_words
from planner import store
from planner import team as teams_
from planner.model import MAX_PLAN_GPUS

# the HTML report's palette, so that a team has the same colour in the app and the report
TEAM_COLOURS = ("#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3",
                "#8C8C8C", "#CCB974", "#64B5CD")
# what each job costs and how sure it is come first: at 800 px the last columns are off-screen
JOB_COLUMNS = {
    "job": ("Job", "text"), "team": ("Team", "text"), "cost_usd": ("Cost", "usd"),
    "deadline_probability": ("P(deadline)", "chance"), "run": ("Run (UTC)", "text"),
    "deadline": ("Deadline", "text"), "slack_hours": ("Slack (h)", "num1"),
    "workload": ("Workload", "text"), "cloud": ("Cloud", "text"),
    "region": ("Region", "text"), "instance_type": ("Instance type", "text"),
    "nodes": ("Nodes", "int"), "gpus_text": ("GPUs", "text"), "pricing": ("Pricing", "pricing"),
    "usd_per_hour": ("$/instance-h", "usd4"), "gpu_hours": ("GPU-hours", "num1"),
}
MONTH_COLUMNS = {"month": ("Month", "text"), "gpu_hours": ("GPU-hours", "num1"),
                 "cost_usd": ("Cost", "usd"), "budget_usd": ("Budget", "usd"),
                 "used": ("Used", "pct"), "jobs": ("Jobs running", "list")}
BUDGET_COLUMNS = {"period": ("Period", "text"), "budget_usd": ("Budget", "usd"),
                  "planned_usd": ("Planned", "usd"), "headroom_usd": ("Headroom", "usd"),
                  "used": ("Used", "pct")}
TEAM_COLUMNS = {"team": ("Team", "text"), "jobs": ("Jobs", "int"),
                "gpu_hours": ("GPU-hours", "num1"), "cost_usd": ("Cost", "usd"),
                "share": ("Share", "pct1")}


def default_jobs(today: dt.date) -> pd.DataFrame:
    start = (today.replace(day=1) + dt.timedelta(days=32)).replace(day=1)  # next month
    return pd.DataFrame([
        {"name": "pretrain-1.5b", "team": "research", "model": "gpt2-xl", "tokens": "50B",
         "earliest_start": start, "deadline": start + dt.timedelta(days=21), "priority": 1,
         "clouds": "", "pricing": "on_demand,spot", "max_gpus": 256, "commitment_use": None},
        {"name": "ablation-small", "team": "product", "model": "gpt2-medium", "tokens": "20B",
         "earliest_start": start, "deadline": start + dt.timedelta(days=14), "priority": 0,
         "clouds": "", "pricing": "on_demand,spot", "max_gpus": 64, "commitment_use": None},
    # whole numbers that may be blank: a row added in the editor leaves them None, which
    # an int64 column took only by turning into objects (pandas warns it will refuse)
    ]).astype({"priority": "Int64", "max_gpus": "Int64", "commitment_use": "Float64"})


@st.cache_data(max_entries=16, show_spinner="Allocating…")
def run_allocation(source_kind: str, payload: str, name: str, configs: tuple, catalog_id: tuple,
                   calibration_id: tuple, today: str) -> dict:
    """Parse, allocate and render; ``{"error": line}`` when the plan cannot be used.

    ``payload`` is the uploaded YAML text (``source_kind`` "yaml", named ``name``) or the
    edited tables as JSON ("table"). Neither may name a file on the server: ``configs`` holds
    (the name a job gives, the uploaded bytes) of each config.json the plan names. ``today``
    (``teams_.today_utc``, ISO) is the day a deadline must be after, as the CLI's; a key too,
    so a cached allocation is not shown once its deadline has passed.
    """
    del catalog_id, calibration_id
    try:
        cat = catalog.load_catalog(overrides=S.overrides_path())
        if source_kind == "yaml":
            data = teams_.team_yaml(payload, source=name)
        else:
            data = json.loads(payload)
        parsed = {}
        for config_name, raw in configs:
            try:
                parsed[config_name] = S.config_data(raw, config_name)
            except catalog.GpuplanError as exc:
                # the reader's message names the file already ("model config same.json: …"):
                # "same.json: model config same.json: …" said it twice
                said = str(exc) if str(exc).startswith(f"model config {config_name}:") else \
                    f"{config_name}: {exc}"
                raise teams_.TeamPlanError(f"{name}: {said}") from None
        team_plan = S.parse_team_plan_no_paths(data, catalog=cat, source=name, configs=parsed)
        # the page has no actuals: a past deadline is refused, a past start said
        warnings = teams_.check_dates(team_plan, today=dt.date.fromisoformat(today))
        allocation = teams_.allocate(team_plan, catalog=cat,
                                   calibration=store.load_calibration(cat))
        # the downloads list the dates too, as `gpuplan report` writes them; not in as_dict,
        # so kept beside it for the PDF rebuilt on click
        dated = allocation.with_dates(warnings)
        words = table_words if source_kind == "table" else str
        return {"allocation": allocation.as_dict(), "date_warnings": list(dated.date_warnings),
                "reports": render_reports(dated),
                "warnings": [S.app_words(words(w)) for w in warnings],
                # the jobs' plans' (a term paid whole, spot capacity …), in the words of
                # `gpuplan report` and the downloaded report, each once with its jobs; the
                # table's rows ("row 2 'b'") where the jobs came from the table
                "job_warnings": [words(w) for w in allocation.job_warning_lines()]}
    except catalog.GpuplanError as exc:
        # an error in the plan's own overrides entry is fixed there, not in the
        # GPUPLAN_OVERRIDES file or with a CLI command its format names
        ours = {OVERRIDES_FORMAT: "(the team plan's overrides entry; format: docs/team.md)"}
        out = S.error_out(exc, replace=ours if str(exc).startswith(f"{name}: overrides")
                          else None)
        if source_kind == "table":
            out["error"] = table_words(out["error"])
        return out


# how the price-overrides reader names its format (catalog/_overrides.py), for the CLI
OVERRIDES_FORMAT = "(format: `gpuplan offers --help`, --overrides)"


def team_colours(a: dict) -> dict[str, str]:
    teams = list(dict.fromkeys([*a["by_team"], *(j["team"] for j in a["jobs"])]))
    return {F.plot_text(t): TEAM_COLOURS[i % len(TEAM_COLOURS)] for i, t in enumerate(teams)}


def timeline(a: dict) -> go.Figure:
    jobs = pd.DataFrame(a["jobs"])
    # a job's name cut on its row (a 60-character name left the plot no width on a phone),
    # whole in the hover
    jobs["job_label"] = [F.plot_text(n) for n in C.short_labels(jobs["job"])]
    jobs["job_name"] = jobs["job"].map(F.plot_text)
    jobs["team_label"] = jobs["team"].map(F.plot_text)
    jobs["cost"] = jobs["cost_usd"].map(F.usd)
    jobs["where"] = [F.plot_text(f"{j.nodes}× {j.instance_type} · {j.cloud} {j.region} · "
                                 f"{C.pricing_label(j.pricing)}") for j in jobs.itertuples()]
    fig = px.timeline(jobs, x_start="start", x_end="end", y="job_label", color="team_label",
                      color_discrete_map=team_colours(a),
                      custom_data=["where", "cost", "deadline", "start", "end", "job_name"])
    fig.update_traces(hovertemplate="%{customdata[5]}<br>%{customdata[0]}<br>%{customdata[3]} → "
                                    "%{customdata[4]} UTC<br>cost %{customdata[1]} · deadline "
                                    "%{customdata[2]}<extra></extra>")
    fig.add_scatter(x=pd.to_datetime(jobs["deadline"]), y=jobs["job_label"], mode="markers",
                    marker={"symbol": "line-ns-open", "size": 22, "color": "#8B0000",
                            "line": {"width": 2}}, customdata=jobs["job_name"],
                    name="deadline",
                    hovertemplate="%{customdata}<br>deadline %{x|%Y-%m-%d}<extra></extra>")
    fig.update_yaxes(autorange="reversed", title="")
    fig.update_xaxes(title="", tickformat="%Y-%m-%d")
    # the legend in rows under the plot, as the burn chart's: beside it, a long team name
    # took the plot's width
    fig.update_layout(height=220 + 40 * len(jobs), margin={"t": 70}, legend=C.LEGEND_BELOW
                      | {"title_text": "team"},
                      title=C.titled("Timeline", "bars: when each job runs; red: its deadline"))
    return fig


def monthly_burn(a: dict) -> go.Figure:
    """Planned spend per month by team (months as categories), each month's budget, and the
    cumulative spend against the total budget on the right-hand axis."""
    months = list(a["by_month"])
    fig = go.Figure()
    colours = team_colours(a)
    teams = list(dict.fromkeys(j["team"] for j in a["jobs"]))
    for team in teams:
        jobs = [j for j in a["jobs"] if j["team"] == team]
        cost = [sum(j["cost_by_month"].get(m, 0.0) for j in jobs) for m in months]
        names = [", ".join(F.plot_text(j["job"]) for j in jobs if j["cost_by_month"].get(m))
                 for m in months]
        fig.add_bar(x=months, y=cost, name=F.plot_text(team),
                    marker_color=colours[F.plot_text(team)],
                    # the team's name as data, not template text: plotly fills a "%{x}" in it
                    customdata=[[F.usd(c), n, F.plot_text(team)]
                                for c, n in zip(cost, names, strict=True)],
                    hovertemplate="%{x}: %{customdata[0]} · %{customdata[2]}"
                                  "<br>%{customdata[1]}<extra></extra>")
    budgets = [(m, v["budget_usd"]) for m, v in a["by_month"].items() if v.get("budget_usd")]
    if budgets:
        fig.add_scatter(x=[m for m, _ in budgets], y=[b for _, b in budgets],
                        mode="markers+text", text=[f"budget {F.usd(b)}" for _, b in budgets],
                        textposition="bottom center", textfont={"color": "#C44E52"},
                        marker={"symbol": "line-ew-open", "size": 60, "color": "#C44E52",
                                "line": {"width": 3}},
                        name="monthly budget", customdata=[F.usd(b) for _, b in budgets],
                        hovertemplate="%{x} budget %{customdata}<extra></extra>")
    running, total = [], 0.0
    for m in months:
        total += a["by_month"][m]["cost_usd"]
        running.append(total)
    fig.add_scatter(x=months, y=running, mode="lines+markers", yaxis="y2",
                    name="cumulative spend (right-hand axis)", line={"color": "#55A868"},
                    customdata=[F.usd(r) for r in running],
                    hovertemplate="%{x}: %{customdata} so far<extra></extra>")
    total_budget = next((b["budget_usd"] for b in a["budgets"] if b["period"] == "total"), None)
    if total_budget:
        fig.add_shape(type="line", xref="paper", x0=0, x1=1, yref="y2", y0=total_budget,
                      y1=total_budget, line={"color": "#55A868", "dash": "dash", "width": 1.5})
        fig.add_annotation(xref="paper", x=1, yref="y2", y=total_budget, xanchor="right",
                           yanchor="bottom", showarrow=False, font={"color": "#55A868"},
                           text=f"total budget {F.usd(total_budget)} (right-hand axis)")
    fig.update_layout(barmode="stack", bargap=0.45, height=420, margin={"t": 50},
                      title="Monthly burn (cost pro rata of running hours)",
                      xaxis={"type": "category", "title": ""},
                      yaxis2={"overlaying": "y", "side": "right", "showgrid": False},
                      legend={"orientation": "h", "y": -0.15})
    # one scale for both axes: scaled apart, the tallest month always reached the height of
    # the total budget (a $344 bar touched a $50,000 line; app review, 2026-12-07)
    shown = ([v["cost_usd"] for v in a["by_month"].values()] + [b for _, b in budgets]
             + running + ([total_budget] if total_budget else []))
    C.usd_axis(fig, shown, title="USD per month", from_zero=True)
    C.usd_axis(fig, shown, axis="y2", title="cumulative USD", from_zero=True)
    fig.update_layout(yaxis2={"showgrid": False})
    return fig


def unbroken(when: str) -> str:
    """On one line in a table (a phone broke "2027-01-22" and wrapped a run to six lines):
    non-breaking hyphens, a word joiner after the space (md() makes U+00A0 a space)."""
    return when.replace("-", "\u2011").replace(" ", " \u2060")


def job_rows(a: dict) -> pd.DataFrame:
    jobs = pd.DataFrame(a["jobs"])
    jobs["run"] = jobs["start"].map(unbroken) + " → " + jobs["end"].map(unbroken)
    jobs["deadline"] = jobs["deadline"].map(unbroken)
    jobs["gpus_text"] = [f"{j['gpus']}× {j['accelerator']}" for j in a["jobs"]]
    return jobs


FOLD_WARNINGS = 3  # this many or more: folded under their count, the results kept in view


def job_warnings(lines) -> None:
    """The jobs' plans' warnings beside the total they qualify (a reserved job's cost with no
    word that a whole term was paid): each on its own, or folded when there are many."""
    if len(lines) < FOLD_WARNINGS:
        for line in lines:
            st.warning(F.md(line), icon=":material/warning:")
        return
    with st.expander(f"{len(lines):,} warnings", icon=":material/warning:"):
        st.markdown("\n".join(f"- {F.md(line)}" for line in lines))


def show_allocation(out: dict) -> None:
    a = out["allocation"]
    t = a["totals"]
    c = st.columns(4)
    c[0].metric("Total cost", F.usd(t["cost_usd"]),
                help=f"budget {F.usd(t['budget_usd'])}" if t.get("budget_usd") else None)
    c[1].metric("GPU-hours", F.amount(t["gpu_hours"]))  # a small job's "0" read as nothing
    c[2].metric("Jobs", t["jobs"])
    c[3].metric("Last job ends", t["end"][:10], help=f"first starts {t['start']} UTC")
    job_warnings(out.get("job_warnings", ()))
    st.plotly_chart(timeline(a), key="team_timeline")
    st.plotly_chart(monthly_burn(a), key="team_burn")
    st.subheader("Jobs")
    F.show_static_table(job_rows(a), JOB_COLUMNS)
    st.markdown("**Per month**")
    F.show_static_table(pd.DataFrame([{"month": m, **v, "used": v["cost_usd"] / v["budget_usd"]
                                       if v.get("budget_usd") else None}
                                      for m, v in a["by_month"].items()]), MONTH_COLUMNS)
    left, right = st.columns(2)
    with left:
        st.markdown("**Per team**")
        total = t["cost_usd"] or 1.0
        F.show_static_table(pd.DataFrame([{"team": k, **v, "share": v["cost_usd"] / total}
                                          for k, v in a["by_team"].items()]), TEAM_COLUMNS)
    if a["budgets"]:
        with right:
            st.markdown("**Budgets**")
            F.show_static_table(pd.DataFrame(a["budgets"]), BUDGET_COLUMNS)
    # each button as wide as its label, wrapping (equal columns cut "Report (Mark…" at 800 px)
    with st.container(horizontal=True):
        for label, (fmt, data) in out["reports"].items():
            st.download_button(f"Report ({label})",
                               report_on_click(a, fmt, out.get("date_warnings", ()))
                               if data is None else data,
                               file_name=f"gpuplan-team-report.{fmt}",
                               mime=MIME.get(fmt), key=f"team_report_{fmt}",
                               icon=":material/download:")
        st.download_button("Allocation (JSON)", json.dumps(a, indent=2, default=str),
                           file_name="gpuplan-allocation.json", mime="application/json",
                           key="team_allocation_json", icon=":material/download:")
    with st.expander("Assumptions"):
        for note in a["assumptions"]:
            st.markdown(f"- {F.md(S.app_words(note))}")
    S.catalog_line(a["catalog"])


# Streamlit drops a widget's state when its page is not shown: after another page, the tables
# came back at their defaults (an upload gone, "Jobs from" reset) beside the result of what
# the user had given. What they gave is kept under plain keys, and given back to the widgets.

def kept_editor(default: pd.DataFrame, *, key: str, **kwargs) -> pd.DataFrame:
    """``st.data_editor`` whose edited table survives leaving the page. Its state is the
    edits, applied to the table it is given: while it holds edits it gets the table they
    were made on (a table with them applied would take them twice), and when Streamlit has
    dropped them, the table last edited."""
    base = f"{key}_base"
    if key not in st.session_state or base not in st.session_state:
        st.session_state[base] = st.session_state.get(f"{key}_kept", default)
    table = st.data_editor(st.session_state[base], key=key, **kwargs)
    st.session_state[f"{key}_kept"] = table
    return table


def named_configs(text: str, name: str) -> tuple[str, ...]:
    """The config.json names a team plan's jobs give (none when the text does not parse:
    ``run_allocation`` says why)."""
    try:
        return teams_.named_configs(teams_.team_yaml(text, source=name))
    except catalog.GpuplanError:
        return ()


def config_uploads(names: tuple[str, ...]) -> tuple | None:
    """One uploader per config.json the plan names: ((name, bytes), …), or None while one is
    missing (the plan cannot be allocated without it)."""
    got, missing = [], []
    for config in names:
        # the label is the plan's text (escaped: a name is not markup); the key follows the
        # name, so another plan's file is never kept for this one
        up = I.kept_upload(f"{F.md(config)} (named by the plan)",
                         key=I.for_upload("team_config", config.encode()), what="config",
                         types=["json"])
        if up is None:
            missing.append(config)
        else:
            got.append((config, up[1]))
    if missing:
        what = "a model config" if len(names) == 1 else f"{len(names)} model configs"
        st.info(F.md(f"The plan names {what} by path: upload {', '.join(missing)} (the "
                     "model's Hugging Face config.json) to allocate it."))
        return None
    return tuple(got)


def jobs_input(how: str, today: dt.date) -> tuple[str, str, tuple] | None:
    """(payload, name, configs) for ``run_allocation``, or None while there is nothing to
    run."""
    if how == "yaml":
        up = I.kept_upload("Team plan (YAML, format: docs/team.md)", key="team_yaml",
                         what="team plan", types=["yaml", "yml"])
        if up is None:
            st.info("Upload a team plan to allocate it.")
            return None
        name, data = up
        try:  # the CLI's reader and words: "byte 0xb7 at byte offset 0, line 1"
            text = catalog.decode_user_bytes(data, what=name)
        except catalog.GpuplanError as exc:
            st.error(F.md(str(exc)), icon=":material/error:")
            return None
        configs = config_uploads(named_configs(text, name))
        return None if configs is None else (text, name, configs)
    st.caption("One row per job; clouds and pricing are comma-separated (empty = all).")
    jobs = kept_editor(default_jobs(today), num_rows="dynamic", key="team_jobs",
                       column_config={
                           "earliest_start": st.column_config.DateColumn(),
                           "deadline": st.column_config.DateColumn(),
                           # bounded as the team parser bounds them: the editor took 1e30,
                           # which Streamlit's int64 column could not hold ("Edit ignored",
                           # only in the server's log) and the old value was allocated
                           "priority": st.column_config.NumberColumn(
                               min_value=-teams_.MAX_PRIORITY, max_value=teams_.MAX_PRIORITY,
                               step=1),
                           "max_gpus": st.column_config.NumberColumn(
                               min_value=1, max_value=MAX_PLAN_GPUS, step=1),
                           "commitment_use": st.column_config.NumberColumn(  # as in YAML
                               min_value=0.0, max_value=1.0, step=0.05,
                               help="0 to 1: the share of a reserved term's hours left after "
                                    "the run that you will use (blank: 0)")})
    st.caption("Budgets: a month (2027-03), a quarter (2027Q2) or total, in USD.")
    budgets = kept_editor(pd.DataFrame({"period": ["total"], "usd": [50_000.0]}),
                          num_rows="dynamic", key="team_budgets",
                          column_config={"usd": st.column_config.NumberColumn(
                              "USD", format="dollar", min_value=0)})
    try:
        data = plan_from_table(jobs, budgets)
    except teams_.TeamPlanError as exc:
        S.show_error(S.error_out(exc))
        return None
    return json.dumps(data, default=str), TABLE_SOURCE, ()


def main() -> None:
    st.title("Team budget")
    I.UrlInputs("team").warn()  # no setting is in the URL: a link's parameters are named
    cat = S.load_catalog_or_stop()
    try:
        today = teams_.today_utc()
    except teams_.TeamPlanError as exc:  # a wrong GPUPLAN_TODAY in the server's environment
        S.show_error(S.error_out(exc))
        return
    if "team_source" not in st.session_state and "team_source_kept" in st.session_state:
        # given back after another page (see kept_editor): it came back as "Edit a table"
        st.session_state["team_source"] = st.session_state["team_source_kept"]
    how = st.radio("Jobs from", ["table", "yaml"], horizontal=True, key="team_source",
                   format_func={"table": "Edit a table", "yaml": "Upload team YAML"}.get)
    st.session_state["team_source_kept"] = how
    given = jobs_input(how, today)
    if given is None:
        return
    if st.button("Run the allocation", key="team_run", type="primary"):
        st.session_state["team_last"] = (how, *given)
    last = st.session_state.get("team_last")
    if last is None:
        return
    if last != (how, *given):
        st.caption("The jobs changed since this allocation: run it again to update it.")
    out = run_allocation(*last, S.catalog_key(cat), S.calibration_key(),
                         today=today.isoformat())
    if "error" in out:
        S.show_error(out)
        return
    for warning in out["warnings"]:
        st.warning(F.md(warning), icon=":material/warning:")
    show_allocation(out)


main()
