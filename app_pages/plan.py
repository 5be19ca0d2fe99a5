"""Plan: the cheapest configuration that trains the workload by the deadline.

Every input is a widget bound to a URL query parameter (``bind="query-params"``, key = the
parameter's name), so a plan is shared by sharing the link; opening the link reads them back
as the widgets' values. The plan itself is ``planner.plan``, cached by its inputs.
"""

from __future__ import annotations

import json
import math

import pandas as pd
import plotly.express as px
import plotly.graph_objects as go
import streamlit as st

import catalog
import planner
from app_pages import _shared as S

DEFAULT_MODEL = "gpt2-xl"  # small enough that the first plan takes a fraction of a second
DEFAULT_TOKENS = "50B"
DEFAULT_DEADLINE = "7d"
DEFAULT_MAX_GPUS = 256
DEFAULT_MIN_PROBABILITY = 0.9  # as `gpuplan plan --min-probability`
# Bound widgets keep their *displayed* option in the URL, so options are short plain words.
SOURCES = {"preset": "a named architecture", "config": "a Hugging Face config.json",
           "params": "a parameter count"}
Q = "query-params"


def inputs(cat: catalog.Catalog) -> tuple[dict, bytes | None, str]:
    """The sidebar: workload, deadline and limits, where to rent. Returns the plan request."""
    sb = st.sidebar
    sb.header("Workload")
    source = sb.radio("Describe the model by", list(SOURCES), captions=list(SOURCES.values()),
                      key="source", bind=Q)
    names = list(planner.preset_names())
    model = params = active = None
    config_bytes, config_name = None, ""
    if source == "preset":
        model = sb.selectbox("Model preset", names, index=names.index(DEFAULT_MODEL),
                             key="model", bind=Q)
    elif source == "config":
        up = sb.file_uploader("Hugging Face config.json", type=["json"], key="config_file")
        if up is not None:
            config_bytes, config_name = up.getvalue(), up.name
    else:
        params = sb.text_input("Total parameters", value="1.5B", key="params", bind=Q,
                               help="e.g. 7B, 1.5e9")
        active = sb.text_input("Active parameters (MoE; empty = dense)", value="",
                               key="active_params", bind=Q)
    tokens = sb.text_input("Training tokens", value=DEFAULT_TOKENS, key="tokens", bind=Q,
                           help="e.g. 2T, 300B, 2e12")
    precision = sb.selectbox("Precision", ["bf16", "fp16", "fp8"], key="precision", bind=Q)
    sb.header("Deadline and limits")
    deadline = sb.text_input("Deadline", value=DEFAULT_DEADLINE, key="deadline", bind=Q,
                             help="14d, 36h, 2w, or a date such as 2027-03-31 (UTC)")
    budget = sb.number_input("Budget, USD (empty = none)", min_value=0.0, value=None,
                             step=1000.0, key="budget", bind=Q)
    max_gpus = sb.number_input("Max GPUs", min_value=1, max_value=100_000,
                               value=DEFAULT_MAX_GPUS, step=8, key="max_gpus", bind=Q)
    min_prob = sb.slider("Min. probability of meeting the deadline", 0.0, 1.0,
                         DEFAULT_MIN_PROBABILITY, 0.05, key="min_prob", bind=Q,
                         help="0 disables the check")
    sb.header("Where")
    clouds = sb.multiselect("Clouds (empty = all)", list(catalog.CLOUDS), key="clouds", bind=Q)
    regions = sb.multiselect("Regions (empty = all)", list(cat.regions()), key="regions",
                             bind=Q)
    pricing = sb.multiselect("Pricing models", list(catalog.PRICING_MODELS),
                             default=["on_demand", "spot"], key="pricing", bind=Q)
    offered = sorted({t.accelerator for t in cat.instance_types})
    gpus = sb.multiselect("GPUs (empty = every NVIDIA/AMD GPU)", offered, key="gpus", bind=Q)
    top_n = sb.number_input("Candidates to list", min_value=1, max_value=50, value=10,
                            key="top", bind=Q)
    request = {"source": source, "model": model, "params": params, "active_params": active,
               "tokens": tokens, "precision": precision, "deadline": deadline,
               "budget_usd": budget or None, "max_gpus": int(max_gpus),
               "min_probability": min_prob or None, "clouds": list(clouds),
               "regions": list(regions), "pricing": list(pricing), "gpus": list(gpus),
               "top_n": int(top_n)}
    return request, config_bytes, config_name


def recommendation_card(r: dict, deadline_hours: float) -> None:
    with st.container(border=True, key="recommendation"):
        st.markdown(f"### Recommendation: {S.config_line(r)}")
        c = st.columns(4)
        c[0].metric("Total cost", S.usd(r["total_cost_usd"]),
                    help=f"{S.usd(r['usd_per_hour_cluster'], 2)}/h for the cluster")
        c[1].metric("Wall-clock", S.hours(r["wall_clock_hours"]),
                    help=f"deadline {S.hours(deadline_hours)}")
        c[2].metric("P(finish by deadline)", f"{r['deadline_probability']:.1%}")
        c[3].metric("MFU", f"{r['mfu']:.1%}", help=f"goodput {r['goodput']:.1%}")
        st.caption(f"Plan {S.plan_text(r)} · {r['memory_per_gpu_gib']:.1f} GiB per GPU · "
                   f"{r['gpu_hours']:,.0f} GPU-hours · price as of {r['price_as_of']}"
                   + (f" · price flags: {', '.join(r['price_flags'])}"
                      if r["price_flags"] else ""))


def infeasible_view(inf: dict) -> None:
    st.warning(f"**Infeasible:** {inf['reason']}.", icon=":material/block:")
    cols = st.columns(2)
    for col, label in zip(cols, ("fastest", "cheapest"), strict=True):
        p, miss = inf[label], inf[f"{label}_misses_by_hours"]
        with col.container(border=True):
            st.markdown(f"**{label.title()} alternative:** {S.config_line(p)}")
            st.markdown(f"{S.usd(p['total_cost_usd'])} · {S.hours(p['wall_clock_hours'])} · "
                        f"P(deadline) {p['deadline_probability']:.0%}")
            st.caption(f"misses the deadline by {S.hours(miss)}" if miss > 0 else
                       "meets the deadline but not the other limits")
    st.markdown("To fix: extend the deadline, raise the max GPUs or the budget, or allow more "
                "clouds, regions or pricing models.")


def frontier_chart(result: dict, deadline_hours: float) -> go.Figure:
    rows = []
    for kind, plans in (("candidate", result["candidates"]), ("frontier", result["frontier"])):
        rows += [dict(S.candidate_row(p), set=kind) for p in plans]
    rec = result["recommendation"]
    if rec:
        rows.append(dict(S.candidate_row(rec), set="recommendation"))
    df = pd.DataFrame(rows)
    fig = px.scatter(
        df, x="wall_clock_hours", y="total_cost_usd", color="set", symbol="pricing",
        color_discrete_map={"candidate": "#9aa5b1", "frontier": "#1f77b4",
                            "recommendation": "#d62728"},
        hover_data={"instance_type": True, "cloud": True, "region": True, "nodes": True,
                    "gpus": True, "pricing": True, "deadline_probability": ":.0%",
                    "mfu": ":.0%", "plan": True, "set": False},
        labels={"wall_clock_hours": "wall-clock (hours)", "total_cost_usd": "total cost (USD)"},
        log_x=True, log_y=True)
    front = df[df["set"] == "frontier"].sort_values("wall_clock_hours")
    fig.add_trace(go.Scatter(x=front["wall_clock_hours"], y=front["total_cost_usd"],
                             mode="lines", line={"color": "#1f77b4", "width": 1},
                             name="cost/time frontier", hoverinfo="skip"))
    if rec:
        fig.update_traces(selector={"name": "recommendation"}, marker={"size": 14})
    fig.add_vline(x=deadline_hours, line_dash="dash", line_color="#d62728")
    # an annotation on a log axis takes log10 coordinates (a shape takes data coordinates)
    fig.add_annotation(x=math.log10(deadline_hours), y=1, yref="paper", text="deadline",
                       showarrow=False, xanchor="left", font={"color": "#d62728"})
    fig.update_layout(height=460, legend_title_text="", margin={"t": 30})
    return fig


def breakdown_charts(r: dict) -> None:
    left, right = st.columns(2)
    mem = {k.removesuffix("_gib"): v for k, v in r["memory"].items()
           if k not in ("total_gib", "capacity_gib")}
    fig = px.bar(x=list(mem.values()), y=list(mem), orientation="h",
                 labels={"x": "GiB per GPU", "y": ""},
                 title=f"Memory per GPU: {r['memory']['total_gib']:.1f} of "
                       f"{r['memory']['capacity_gib']:g} GiB")
    fig.add_vline(x=r["memory"]["capacity_gib"], line_dash="dash", annotation_text="capacity")
    left.plotly_chart(fig, key="memory_chart")
    step = {k.removesuffix("_s"): v for k, v in r["breakdown"].items()}
    fig = px.bar(x=list(step.values()), y=list(step), orientation="h",
                 labels={"x": "seconds per step", "y": ""},
                 title=f"Step time: {r['step_time_s']:.3f} s × {r['steps']:,} steps")
    right.plotly_chart(fig, key="step_chart")


def spot_vs_on_demand(side: dict) -> None:
    if not side:
        st.caption("No feasible plan of either pricing model to compare.")
        return
    cols = st.columns(2)
    for col, pricing in zip(cols, ("on_demand", "spot"), strict=True):
        with col.container(border=True):
            p = side.get(pricing)
            st.markdown(f"**{pricing.replace('_', '-')}**")
            if p is None:
                st.caption(f"no feasible {pricing} plan")
                continue
            st.markdown(f"{S.config_line(p)}\n\n{S.usd(p['total_cost_usd'])} · "
                        f"{S.hours(p['wall_clock_hours'])} · P(deadline) "
                        f"{p['deadline_probability']:.1%}")
    if len(side) == 2:
        od, sp = side["on_demand"]["total_cost_usd"], side["spot"]["total_cost_usd"]
        st.caption(f"Spot saves {S.usd(od - sp)} ({(od - sp) / od:.0%}) after pricing its "
                   "interruption risk." if sp < od else
                   "On-demand is cheaper once spot's interruption risk is priced.")


def downloads(result: dict) -> None:
    plans = list(result["candidates"]) + [p for p in result["frontier"]
                                          if p not in result["candidates"]]
    csv = pd.DataFrame([S.candidate_row(p) for p in plans]).to_csv(index=False)
    c1, c2 = st.columns(2)
    c1.download_button("Download plan (JSON)", json.dumps(result, indent=2, default=str),
                       file_name="gpuplan-plan.json", mime="application/json",
                       key="download_json")
    c2.download_button("Download candidates (CSV)", csv, file_name="gpuplan-candidates.csv",
                       mime="text/csv", key="download_csv")


def main() -> None:
    st.title("Plan a training run")
    cat = S.load_catalog_or_stop()
    request, config_bytes, config_name = inputs(cat)
    if request["source"] == "config" and config_bytes is None:
        st.info("Upload a Hugging Face config.json in the sidebar to plan its training.")
        S.catalog_banner(cat)
        return
    out = S.cached_plan(request, config_bytes, config_name, S.catalog_key(cat),
                        S.calibration_key())
    if "error" in out:
        st.error(out["error"])
        S.catalog_banner(cat)
        return
    w, result, deadline_hours = out["workload"], out["result"], out["deadline_hours"]
    active = (f" ({w['params_active'] / 1e9:.2f}B active)"
              if w["params_active"] < w["params_total"] else "")
    st.markdown(f"**{w['name']}**: {w['params_total'] / 1e9:.2f}B parameters{active}, "
                f"{S.count(w['tokens'])} tokens, sequence {w['seq_len']:,}, {w['precision']} · "
                f"deadline {S.hours(deadline_hours)}")
    if result["infeasible"] is not None:
        infeasible_view(result["infeasible"])
    else:
        recommendation_card(result["recommendation"], deadline_hours)
    tabs = st.tabs(["Cost vs time", "Top candidates", "Breakdown", "Spot vs on-demand",
                    "Assumptions"])
    with tabs[0]:
        if result["frontier"] or result["candidates"]:
            st.plotly_chart(frontier_chart(result, deadline_hours), key="frontier_chart")
            st.caption("Every point is a plan that satisfies the limits other than the "
                       "deadline; the line is the cost/time Pareto frontier.")
        else:
            st.caption("No plan satisfies the limits, so there is no frontier to draw.")
    shown = result["recommendation"] or (result["infeasible"] or {}).get("cheapest")
    with tabs[1]:
        if result["candidates"]:
            st.dataframe(pd.DataFrame([S.candidate_row(p) for p in result["candidates"]]),
                         hide_index=True, key="candidates_table")
        else:
            st.caption("No candidate meets the deadline and limits.")
    with tabs[2]:
        if shown:
            breakdown_charts(shown)
    with tabs[3]:
        spot_vs_on_demand(result["spot_vs_on_demand"])
    with tabs[4]:
        for note in result["notes"] + (shown or {}).get("assumptions", []):
            st.markdown(f"- {note}")
    downloads(result)
    S.catalog_banner(cat)


main()
