"""Plan: the cheapest configuration that trains the workload by the deadline.

Every input is a widget bound to a URL query parameter (``bind="query-params"``, key = the
parameter's name), so a plan is shared by sharing the link; opening the link reads them back
as the widgets' values, and a parameter the page cannot use is named in a warning. The plan
itself is ``planner.plan``, cached by its inputs.

The page's title is on screen before the planner, pandas and plotly.express are imported: the
planner loads when the sidebar needs its presets and limits, pandas and plotly.express after
the recommendation is drawn (they are only for the tabs below it). On a cold server that is
what the first visitor waits for (issue 19: benchmarks/app_cold_start.py).
"""

from __future__ import annotations

import json

import streamlit as st

import catalog
from app_pages import _charts as C
from app_pages import _format as F
from app_pages import _inputs as I
from app_pages import _plan_cards as P
from app_pages import _shared as S
from app_pages._plan_charts import (
    RELAXED_WORDS,
    chart_points,
    cheaper_frontier_plans,
    frontier_chart,
    plan_points,
)

DEFAULT_MODEL = "gpt2-xl"  # small enough that the first plan takes a fraction of a second
DEFAULT_TOKENS = "50B"
DEFAULT_DEADLINE = "7d"
MIN_BUDGET_USD = 0.0001  # the planner takes any budget above 0; a box needs a least value
# Bound widgets keep their *displayed* option in the URL, so options are short plain words.
SOURCES = {"preset": "a named architecture", "config": "a Hugging Face config.json",
           "params": "a parameter count"}
RECOMPUTE = ["auto", "none", "selective", "full"]
COMPARE = {"none": None, "accelerator": "accelerator", "cloud": "cloud"}  # option → group_by
L = S.FIELD_LABELS

def inputs(cat: catalog.Catalog, url: I.UrlInputs) -> tuple[dict, bytes | None, str]:
    """The sidebar: workload, deadline and limits, where to rent. Returns the plan request."""
    import planner  # here, not at the top: the title is drawn first (see the docstring)
    from planner import search

    sb = st.sidebar
    sb.header("Workload")
    source = url(sb.radio, "Describe the model by", list(SOURCES),
                 captions=list(SOURCES.values()), key="source")
    names = list(planner.preset_names())
    model = params = active = experts = per_token = None
    config_bytes, config_name = None, ""
    if source == "preset":
        model = url(sb.selectbox, L["model"], names, index=names.index(DEFAULT_MODEL),
                    key="model")
    elif source == "config":
        # kept while "params" or another page hides the uploader (as on Team budget)
        up = I.kept_upload(L["config"], key="config_file", what="config", types=["json"],
                           container=sb)
        if up is not None:
            config_name, config_bytes = up
    else:
        params = url(sb.text_input, L["params"], value="1.5B", key="params",
                     help="e.g. 7B, 1.5e9")
        active = url(sb.text_input, L["active_params"], value="", key="active_params",
                     placeholder="dense", help="Mixture of experts: parameters used per token, "
                     "e.g. 13B of 47B. Empty for a dense model.")
        c = sb.columns(2)
        experts = url(c[0].number_input, L["experts"], min_value=0, max_value=1024,
                      value=None, step=1, key="experts", placeholder="inferred",
                      help="Experts per MoE layer (empty: inferred from the active count; "
                      "0: a dense model, as the planner's messages suggest)")
        per_token = url(c[1].number_input, L["experts_per_token"], min_value=1,
                        max_value=64, value=None, step=1, key="experts_per_token",
                        placeholder="inferred", help="Experts each token is routed to")
    tokens = url(sb.text_input, L["tokens"], value=DEFAULT_TOKENS, key="tokens",
                 placeholder="20 per parameter",
                 help="e.g. 2T, 300B, 2e12; empty: 20 per active parameter (compute-optimal, "
                 "Hoffmann et al. 2022)")
    c = sb.columns(2)
    seq_len = url(c[0].number_input, L["seq_len"], min_value=1, max_value=1_048_576,
                  value=None, step=1024, key="seq_len", placeholder="model's",
                  help="Tokens per sequence (empty: the model's pre-training context)")
    batch = url(c[1].text_input, L["global_batch_tokens"], value="", key="global_batch_tokens",
                placeholder="by model size", help=S.batch_help())
    c = sb.columns(2)
    precision = url(c[0].selectbox, L["precision"], ["bf16", "fp16", "fp8"], key="precision")
    recompute = url(c[1].selectbox, L["recompute"], RECOMPUTE, key="recompute",
                    help="auto: the planner searches none, selective and full")
    sb.header("Deadline and limits")
    deadline = url(sb.text_input, L["deadline"], value=DEFAULT_DEADLINE, key="deadline",
                   help="14d, 36h, 2w, or a date such as 2027-03-31 (by 00:00 UTC that "
                   "day)")
    # from the least amount the page writes in figures ($0.0001) to the planner's most: 0,
    # refused by the planner, was taken by the box; "%g" shows what is used (0.001, not 0.00)
    budget = url(sb.number_input, L["budget"], min_value=MIN_BUDGET_USD,
                 max_value=search.MAX_BUDGET_USD, value=None, step=1000.0, format="%g",
                 key="budget", placeholder="no budget")
    max_gpus = url(sb.number_input, L["max_gpus"], min_value=1, max_value=search.MAX_GPUS_LIMIT,
                   value=S.constraint_default("max_gpus"), step=8, key="max_gpus")
    min_prob = url(sb.slider, L["min_probability"], 0.0, 0.99,
                   S.constraint_default("min_probability"), 0.01,
                   key="min_prob", help="The chance of finishing by the deadline, from the "
                   "model's range and interruptions together; 0: the expected time must meet the "
                   "deadline, no probability asked (below 1: the range makes no finish "
                   "certain)")
    max_spot = url(sb.number_input, L["max_spot_instances"], min_value=1,
                   max_value=search.MAX_SPOT_INSTANCES_LIMIT,
                   value=S.constraint_default("max_spot_instances"), step=1, key="max_spot",
                   help="A spot plan with more instances of one type in one region carries a "
                        "capacity warning: no cloud publishes how much spot capacity it has")
    sb.header("Where")
    clouds = url(sb.multiselect, L["clouds"], list(catalog.CLOUDS), key="clouds",
                 placeholder="All clouds")
    regions = url(sb.multiselect, L["regions"], list(cat.regions()), key="regions",
                  placeholder="All regions")
    pricing = url(sb.multiselect, L["pricing"], list(catalog.PRICING_MODELS),
                  default=list(S.constraint_default("pricing")), key="pricing",
                  placeholder="Choose at least one")
    # a link's accelerator by an alias (gpus=H100), as the Catalog page's link and the CLI
    gpus = url(sb.multiselect, L["gpus"], S.gpu_choices(cat), key="gpus",
               placeholder="Every NVIDIA/AMD GPU", resolve=cat.resolve_accelerator,
               help="Only accelerators the planner can time are listed; TPUs and Trainium "
                    "are considered only when chosen here.")
    commitment_use = url(
        sb.slider, L["commitment_use"], 0.0, 1.0,
        float(S.constraint_default("commitment_use")), 0.05, key="commitment_use",
        help="Reserved, committed and capacity-block prices are paid for whole terms (1 or 3 "
             "years, 24-hour blocks). The share of the term left after this run that you "
             "will use for other work: 0 pays for all of it, 1 charges only this run's hours.")
    allow_flagged = url(sb.checkbox, L["allow_flagged"],
                        value=bool(S.constraint_default("allow_flagged")), key="allow_flagged",
                        help="Offers whose price the catalog flags (expired, an outlier, …) "
                             "are left out unless this is ticked; a plan that uses one says "
                             "so in its warnings.")
    sb.header("Show")
    compare = url(sb.segmented_control, L["group_by"], list(COMPARE), default="none",
                  key="compare", required=True,
                  help="The best plan of each accelerator or each cloud, side by side")
    top_n = url(sb.number_input, L["top"], min_value=1, max_value=50, value=10, key="top")
    request = {"source": source, "model": model, "params": params, "active_params": active,
               "experts": int(experts) if experts is not None else None,
               "experts_per_token": int(per_token) if per_token else None,
               "tokens": tokens, "seq_len": int(seq_len) if seq_len else None,
               "global_batch_tokens": batch, "precision": precision, "recompute": recompute,
               "deadline": deadline, "budget_usd": budget, "max_gpus": int(max_gpus),
               "min_probability": min_prob, "clouds": list(clouds),
               "regions": list(regions), "pricing": list(pricing), "gpus": list(gpus),
               "max_spot_instances": int(max_spot), "commitment_use": float(commitment_use),
               "allow_flagged": bool(allow_flagged), "group_by": COMPARE.get(compare),
               "top_n": int(top_n)}
    return request, config_bytes, config_name


def cost_vs_time(result: dict, deadline_hours: float, budget: float | None,
                 min_probability: float | None) -> None:
    points = plan_points(result)
    if not points:
        st.caption("The planner priced no plan, so there is nothing to draw.")
        return
    drawn = chart_points(points, result)  # once: thinning 116,000 points sorts them
    st.plotly_chart(frontier_chart(result, deadline_hours, budget, points=points, drawn=drawn),
                    key="frontier_chart")
    if len(drawn) < len(points):
        st.caption(f"The chart shows {F.amount(len(drawn))} of the {F.amount(len(points))} plans "
                   "priced: every plan listed on this page (the frontier, the candidates, the "
                   "recommendation) and an even sample of the rest by wall-clock time (all of "
                   "them took the page seconds to draw).")
    st.caption(chart_caption(result, budget, min_probability))
    later, riskier = cheaper_frontier_plans(result, deadline_hours)
    if later:
        # its median and its P90: the median alone read as the deadline to set ("1.00 h
        # for $492" beside a 1 h deadline: at 1 h that plan has a 50% chance)
        st.markdown("**A later deadline would cost less:** " + "; ".join(
            f"{F.duration_beside(p['wall_clock_hours'], deadline_hours)} median"
            + (f" ({F.duration_beside(p['wall_clock_hours_p90'], deadline_hours)} at P90)"
               if p.get("wall_clock_hours_p90") else "") + " for "
            f"{F.usd_md(p['total_cost_usd'])} "
            f"({F.usd_md(saved)} less, {F.md(F.config_line(p).split(' · ')[0])})"
            for p, saved in later))
    if riskier:
        st.markdown(f"**A lower “{L['min_probability']}” would cost less:** " + "; ".join(
            f"{F.usd_md(p['total_cost_usd'])} ({F.usd_md(saved)} less, "
            f"{F.md(F.config_line(p).split(' · ')[0])}) finishes in time with probability "
            f"{F.chance(p['deadline_probability'], below=min_probability)}"
            for p, saved in riskier))


def chart_caption(result: dict, budget: float | None, min_probability: float | None) -> str:
    """What the cost/time chart draws, and only that: an infeasible plan has no frontier, no
    band and no recommendation (the caption described them beside a chart whose one dotted
    line was the budget's)."""
    # (the planner keeps the points within 4× the best cost and 4× the deadline, and the
    # frontier: `planner.search._result._points`; an $171k on-demand plan of the Spot tab
    # was missing from the chart without a word)
    said = ("Each point is the best plan of one instance type, pricing model and node count "
            "(in its cheapest region) that costs at most 4× the best plan and takes at most 4× "
            "the deadline" + (", or is on the frontier" if result.get("frontier") else "")
            + ", whether or not it meets the deadline: filled if it "
            "meets the deadline and every limit, open if it misses the deadline"
            + (f" (P(deadline) below {min_probability:.0%})" if min_probability else "")
            + ", × if it is over the budget.")
    if result.get("frontier"):
        said += (" The dotted line that steps down is the cost/time frontier (no plan is both "
                 "cheaper and faster) and the grey band its P10–P90 range.")
    if budget:
        said += f" The dotted line across is the budget ({F.usd(budget)})."
    if result.get("recommendation"):
        said += " The star is the recommendation, its bars its P10–P90 of wall-clock and cost."
    relaxed = (result.get("infeasible") or {}).get("relaxed") or {}
    said += "".join(f" The diamond labelled “{RELAXED_WORDS.get(k, k)}” is the plan that "
                    "would be chosen without that limit, its bars its P10–P90 of wall-clock and "
                    "cost." for k in relaxed)
    return said + " The shaded region is past the deadline."


# The planner's keys of the memory and step-time breakdowns in words (the bars read
# "runtime_reserve", "pp_bubble"); the planner has no names for them to import (the CLI's
# `model` writes "tp comm", "grads", "reserve" inline). A key not here is shown spaced out.
BREAKDOWN_LABELS = {
    "weights_gib": "weights", "gradients_gib": "gradients", "optimizer_gib": "optimizer states",
    "activations_gib": "activations", "logits_gib": "logits",
    "runtime_reserve_gib": "runtime reserve (CUDA, NCCL)", "compute_s": "compute",
    "tp_comm_s": "tensor-parallel comm.", "ep_comm_s": "expert-parallel comm.",
    "dp_comm_s": "data-parallel comm.", "pp_bubble_s": "pipeline bubble",
    "other_s": "other (elementwise, optimizer step)"}


def breakdown_label(key: str) -> str:
    return BREAKDOWN_LABELS.get(key) or key.removesuffix("_gib").removesuffix("_s").replace(
        "_", " ")


def breakdown_charts(r: dict) -> None:
    import plotly.express as px  # after the recommendation is on screen (see the docstring)

    left, right = st.columns(2)
    mem = {breakdown_label(k): v for k, v in r["memory"].items()
           if k not in ("total_gib", "capacity_gib")}
    fig = px.bar(x=list(mem.values()), y=list(mem), orientation="h",
                 labels={"x": "GiB per GPU", "y": ""},
                 title=f"Memory per GPU: {r['memory']['total_gib']:.1f} of "
                       f"{r['memory']['capacity_gib']:g} GiB")
    fig.add_vline(x=r["memory"]["capacity_gib"], line_dash="dash", annotation_text="capacity")
    left.plotly_chart(fig, key="memory_chart")
    step = {breakdown_label(k): v for k, v in r["breakdown"].items()}
    fig = px.bar(x=list(step.values()), y=list(step), orientation="h",
                 labels={"x": "seconds per step", "y": ""},
                 title=f"Step time: {r['step_time_s']:.3f} s × {r['steps']:,} steps")
    right.plotly_chart(fig, key="step_chart")


def spot_vs_on_demand(side: dict, asked: list[str]) -> None:
    """The best plan of each pricing model searched (the planner's ``spot_vs_on_demand`` has
    one per model: on-demand and spot, and reservations or capacity blocks when asked for);
    on-demand and spot have a column when ``asked`` for, saying so when they have no plan."""
    if not side:
        st.caption("No feasible plan of any pricing model to compare.")
        return
    shown = [*(p for p in ("on_demand", "spot") if p in side or p in asked),
             *(p for p in side if p not in ("on_demand", "spot"))]
    cols = st.columns(len(shown))
    for col, pricing in zip(cols, shown, strict=True):
        with col.container(border=True):
            p = side.get(pricing)
            st.markdown(f"**{C.PRICING_LABELS[pricing]}**")
            if p is None:
                st.caption(f"no feasible {C.PRICING_LABELS[pricing]} plan")
                continue
            st.markdown(f"{F.md(F.config_line(p))}\n\n{P.summary(p)}")  # as every card
            st.caption(F.md(F.range_line(p)))
            P.show_warnings(p)
    if "on_demand" in side and "spot" in side:
        od, sp = side["on_demand"]["total_cost_usd"], side["spot"]["total_cost_usd"]
        st.caption(f"Spot saves {F.usd_md(od - sp)} ({(od - sp) / od:.0%}) after pricing its "
                   "interruption risk." if sp < od else
                   "On-demand is cheaper once spot's interruption risk is priced.")


LAUNCH_LABELS = {"skypilot": "SkyPilot", "dstack": "dstack"}


def launch_tab(launch: dict) -> None:
    """The task files' commands and texts (the buttons to download them are below the tabs)."""
    if not launch:
        st.caption("No recommendation, so nothing to launch.")
        return
    st.markdown("The recommendation as a task file, as `gpuplan plan --emit` writes it: the "
                "cluster, the pricing and the parallel plan (as `GPUPLAN_*` variables and "
                "flags). Replace the training script it names with yours.")
    for target, out in launch.items():
        st.markdown(f"**{LAUNCH_LABELS[target]}**")
        if "error" in out:
            st.caption(F.md(out["error"]))
            continue
        st.code("\n".join(out["commands"]), language="bash")
        for name, text in out["files"]:
            with st.expander(name):
                st.code(text, language="yaml")


def candidates_csv(result: dict) -> str:
    """The listed plans as CSV, each row saying where it comes from (a frontier plan is
    faster and dearer, not a top candidate); an infeasible answer's fastest, cheapest and
    relaxed plans are rows too, and the header is there without any row (it was one byte)."""
    import pandas as pd  # after the recommendation is on screen (see `downloads`)

    inf = result.get("infeasible") or {}
    listed = [("candidate", p) for p in result["candidates"]]
    listed += [("frontier", p) for p in result["frontier"] if p not in result["candidates"]]
    listed += [(f"infeasible: {k}", inf[k]) for k in ("fastest", "cheapest") if inf.get(k)]
    listed += [(f"infeasible: without {k}", p) for k, p in (inf.get("relaxed") or {}).items()]
    rows = [{"list": what, **F.candidate_row(p)} for what, p in listed]
    return pd.DataFrame(rows, columns=["list", *F.CANDIDATE_ROW_COLUMNS]).to_csv(index=False)


def downloads(result: dict, launch: dict) -> None:
    csv = candidates_csv(result)
    # what `gpuplan plan --json` writes (``as_dict()``, no ``points``): the points are every
    # plan priced, only for the chart; over many GPUs they made the file 76 MB, not 1.5 MB
    plan = {k: v for k, v in result.items() if k != "points"}
    buttons = [("Download plan (JSON)", json.dumps(plan, indent=2, default=str),
                "gpuplan-plan.json", "application/json", "download_json"),
               ("Download candidates (CSV)", csv, "gpuplan-candidates.csv", "text/csv",
                "download_csv")]
    for target, out in launch.items():
        for name, text in out.get("files", []):
            what = "fleet" if "-fleet" in name else "task"
            buttons.append((f"{LAUNCH_LABELS[target]} {what} (YAML)", text, name,
                            "application/yaml", f"download_{target}_{what}"))
    with st.container(horizontal=True):  # each button as wide as its label, wrapping
        for label, data, name, mime, key in buttons:
            st.download_button(label, data, file_name=name, mime=mime, key=key,
                               icon=":material/download:")


def workload_line(w: dict, deadline_hours: float, shown: dict | None = None) -> str:
    """The workload in one line; the global batch as given, or else the planner's default as
    ``shown`` (the recommendation or the cheapest plan) used it."""
    from planner.model import format_params  # loaded already: a plan is shown

    # as the CLI writes them: "1,001.13B", "1.2M" (not "0.00B")
    moe = (f" ({format_params(w['params_active'])} active, {w['experts']} experts, "
           f"top-{w['experts_per_token']})" if w.get("experts") else
           f" ({format_params(w['params_active'])} active)"
           if w["params_active"] < w["params_total"] else "")
    if w.get("global_batch_tokens"):
        batch = f"global batch {F.count(w['global_batch_tokens'])} tokens, "
    elif (shown or {}).get("tokens_per_step"):
        batch = (f"global batch {F.count(shown['tokens_per_step'])} tokens (the default for "
                 "this model and cluster), ")
    else:
        batch = ""
    return (f"**{F.md(w['name'])}**: {format_params(w['params_total'])} parameters{moe}, "
            f"{F.count(w['tokens'])} tokens, sequence {w['seq_len']:,}, {batch}"
            f"{w['precision']} · deadline {F.hours(deadline_hours)}")


def main() -> None:
    st.title("Plan a training run")
    cat = S.load_catalog_or_stop()
    url = I.UrlInputs("plan")
    url.restore()  # the inputs left for another page, after Back to a bare "/" (see keep)
    request, config_bytes, config_name = inputs(cat, url)
    url.keep()
    url.warn()
    if not request["pricing"]:
        st.warning(f"Choose at least one of the **{L['pricing']}** in the sidebar (on_demand, "
                   "spot, reserved…): with none, no offer can be priced.",
                   icon=":material/sell:")
        S.catalog_banner(cat)
        return
    if request["source"] == "config" and config_bytes is None:
        st.info("Upload a Hugging Face config.json in the sidebar to plan its training.")
        S.catalog_banner(cat)
        return
    out = S.cached_plan(request, config_bytes, config_name, S.catalog_key(cat),
                        S.calibration_key())
    if "error" in out:
        S.show_error(out)
        S.catalog_banner(cat)
        return
    w, result, deadline_hours = out["workload"], out["result"], out["deadline_hours"]
    shown = result["recommendation"] or (result["infeasible"] or {}).get("cheapest")
    st.markdown(workload_line(w, deadline_hours, shown))
    if result["infeasible"] is not None:
        P.infeasible_view(result["infeasible"], result.get("constraints") or {})
    else:
        P.recommendation_card(result["recommendation"], deadline_hours)
    P.flagged_line(result)
    P.by_group_view(result)
    tabs = st.tabs(["Cost vs time", "Top candidates", "Breakdown", "Spot vs on-demand",
                    "Launch", "Assumptions"])
    with tabs[0]:
        cost_vs_time(result, deadline_hours, request["budget_usd"],
                     request["min_probability"])
    with tabs[1]:
        P.candidates_tab(result["candidates"])
    with tabs[2]:
        if shown:
            breakdown_charts(shown)
    with tabs[3]:
        spot_vs_on_demand(result["spot_vs_on_demand"], request["pricing"])
    with tabs[4]:
        launch_tab(out["launch"])
    with tabs[5]:
        # the estimate's assumptions begin with the workload's inferred notes: each once
        notes = [S.app_words(n) for n in (*w["inferred"], *result["notes"],
                                         *(shown or {}).get("assumptions", []))]
        for note in dict.fromkeys(notes):
            st.markdown(f"- {F.md(note)}")
    downloads(result, out["launch"])
    S.catalog_banner(cat)


main()
