"""Catalog: the `gpuplan offers` view — priced offers, filtered and sorted — and $/GPU-hour
by accelerator. Filters are bound to the URL, as on the Plan page."""

from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

import catalog
from app_pages import _charts as C
from app_pages import _format as F
from app_pages import _inputs as I
from app_pages import _offer_notes as N
from app_pages import _shared as S

L = S.FIELD_LABELS
# the prices right after the instance type: on a phone, $/h was the 8th column, off-screen
OFFER_COLUMNS = {
    "cloud": ("Cloud", "text"), "instance_type": ("Instance type", "text"),
    # $/h to the tenth of a cent, as $/GPU-h and `gpuplan offers`: a 1-GPU offer read $0.03
    # beside its $0.026 per GPU-hour
    "usd_per_hour": ("$/h", "usd3"), "usd_per_gpu_hour": ("$/GPU-h", "usd3"),
    # "*" beside the prices `plan` does not use, as `gpuplan offers` marks them (a number
    # column cannot carry the mark and still sort as numbers)
    "price_unused": (N.UNUSED_MARK, "text"),
    "pricing": ("Pricing", "pricing"), "region": ("Region", "text"),
    "accelerator": ("Accelerator", "text"), "gpu_count": ("GPUs", "int"),
    "gpu_memory_gib": ("GiB per GPU", "num1"),
    "usd_per_bf16_pflop_hour": ("$/bf16 PFLOP/s-h", "usd3"),
    "inter_node_gbps": ("Network (Gbit/s)", "int"), "fabric": ("Fabric", "text"),
    "intra_node_topology": ("GPU links", "text"), "as_of": ("Price as of", "text"),
    "flags": ("Flags", "list"),
    # why: "gpu_count_corrected: source lists 12 GPUs; the VM has 8 (…)"
    "flag_reasons": ("Why flagged", "text"),
}
ACCELERATOR_COLUMNS = {
    "name": ("Accelerator", "text"), "aliases": ("Aliases", "list"), "vendor": ("Vendor", "text"),
    "memory_gib": ("Memory (GiB)", "int"),
    "memory_bandwidth_gb_per_s": ("Memory bandwidth (GB/s)", "int"),
    "tflops_bf16": ("bf16 TFLOP/s", "int"), "tflops_fp8": ("fp8 TFLOP/s", "int"),
    "cheapest_on_demand_usd_per_gpu_hour": ("Cheapest on-demand $/GPU-h", "usd3"),
    "cheapest_spot_usd_per_gpu_hour": ("Cheapest spot $/GPU-h", "usd3"),
    "clouds": ("Clouds", "list"),
}
# the offers filter's own bound (catalog's MAX_PRICE_LIMIT_USD_PER_HOUR, private to it;
# a test keeps them equal): without it, a link's 1e15 reached the filter, which refused
# it in red with a Python float, instead of the link warning
MAX_PRICE_USD_PER_HOUR = 100_000.0
SORT_HELP = ("price: $ per instance-hour; gpu_price: $ per GPU-hour; pflop_price: $ per bf16 "
             "PFLOP/s-hour")


def filters(cat: catalog.Catalog, url: I.UrlInputs) -> dict:
    offered = sorted({t.accelerator for t in cat.instance_types})
    c = st.columns(4)
    # a link's accelerator by an alias (offers_gpu=H100), resolved as `gpuplan offers --gpu`
    # and a team plan resolve it, and as the Plan page's link does
    gpus = url(c[0].multiselect, L["gpus"], offered, key="offers_gpu",
               placeholder="All accelerators", resolve=cat.resolve_accelerator)
    clouds = url(c[1].multiselect, L["clouds"], list(catalog.CLOUDS), key="offers_cloud",
                 placeholder="All clouds")
    regions = url(c[2].multiselect, L["regions"], list(cat.regions()), key="offers_region",
                  placeholder="All regions")
    pricing = url(c[3].multiselect, L["pricing"], list(catalog.PRICING_MODELS),
                  key="offers_pricing", placeholder="All pricing models")
    c = st.columns(4)
    # the filter's own bounds (catalog.MAX_MIN_GPUS: TPU slices reach 6,144 chips)
    min_gpus = url(c[0].number_input, L["min_gpus"], min_value=1,
                   max_value=catalog.MAX_MIN_GPUS, value=None,
                   step=1, key="offers_min_gpus", placeholder="any")
    max_price = url(c[1].number_input, L["max_price"], min_value=0.01,
                    max_value=MAX_PRICE_USD_PER_HOUR, value=None, step=1.0,
                    key="offers_max_price", placeholder="any")
    sort = url(c[2].selectbox, L["sort"], list(catalog.SORT_KEYS), key="offers_sort",
               help=SORT_HELP)
    unpriced = url(c[3].checkbox, "Include unpriced offers", value=False,
                   key="offers_unpriced")
    return {"gpus": tuple(gpus), "clouds": tuple(clouds), "regions": tuple(regions),
            "pricing": tuple(pricing), "min_gpus": int(min_gpus) if min_gpus else None,
            "max_price": max_price or None, "sort": sort, "include_unpriced": unpriced}


ACCELERATOR_FONT_PX = 8  # 38 names fit a 390 px phone's plot (8 px each) only this small


def price_chart(df: pd.DataFrame) -> go.Figure:
    """$ per GPU-hour, one point per offer, accelerators cheapest first; one colour per
    pricing model whatever the filters leave."""
    priced = df.dropna(subset=["usd_per_gpu_hour"]).copy()
    for c in ("instance_type", "region"):  # plotly renders some HTML in hover text
        priced[c] = priced[c].map(F.plot_text)
    order = (priced.groupby("accelerator")["usd_per_gpu_hour"].min()
             .sort_values().index.tolist())
    fig = go.Figure()
    for pricing in [p for p in C.PRICING_COLORS if p in set(priced["pricing"])]:
        rows = priced[priced["pricing"] == pricing]
        fig.add_trace(go.Box(
            x=rows["accelerator"], y=rows["usd_per_gpu_hour"], name=C.PRICING_LABELS[pricing],
            boxpoints="all", jitter=0.6, pointpos=0, fillcolor="rgba(0,0,0,0)",
            line={"width": 0}, marker={"color": C.PRICING_COLORS[pricing], "size": 6},
            legendgroup=pricing, showlegend=False,
            customdata=rows[["instance_type", "cloud", "region", "gpu_count",
                             "usd_per_hour"]].to_numpy(),
            hovertemplate="%{customdata[0]} (%{customdata[3]} GPUs)<br>%{customdata[1]} "
                          "%{customdata[2]}<br>%{y:$,.3f} per GPU-hour · "
                          "%{customdata[4]:$,.3f} per hour<extra></extra>"))
        # the legend entry (a box trace without a box has an empty legend symbol)
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="markers", legendgroup=pricing,
                                 name=C.PRICING_LABELS[pricing],
                                 marker={"color": C.PRICING_COLORS[pricing], "size": 8}))
    # the legend in rows under the plot (beside it, it took 40% of a phone's width)
    fig.update_layout(boxmode="group", height=520, margin={"t": 70, "l": 48, "r": 8},
                      title=C.titled("$ per GPU-hour by accelerator", "each point an offer"),
                      xaxis={"categoryorder": "array", "categoryarray": order, "title": "",
                             # every accelerator named, upright and small: plotly's own ticks
                             # left every other one unnamed on a 390 px phone (19 of 38)
                             "tickmode": "array", "tickvals": order,
                             "ticktext": C.short_labels(order), "tickangle": -90,
                             "tickfont": {"size": ACCELERATOR_FONT_PX}},
                      legend=C.LEGEND_BELOW | {"title_text": ""})
    # no axis title: the chart's title says it, and the plot keeps its width for the names
    C.usd_axis(fig, priced["usd_per_gpu_hour"], title="")
    fig.update_yaxes(automargin=False)  # "$0.03" fits the 48 px margin; automargin took 78
    return fig


@st.cache_data(max_entries=32, show_spinner=False)
def unpriced_hidden(filters: dict, catalog_id: tuple) -> int:
    """How many unpriced offers ``filters`` would add with *Include unpriced offers* ticked (0
    under a maximum price, which no unpriced offer meets)."""
    del catalog_id
    if filters["include_unpriced"] or filters["max_price"] is not None:
        return 0
    try:
        cat = catalog.load_catalog(overrides=S.overrides_path())
        rows = catalog.select_offers(cat, **{**filters, "include_unpriced": True})
    except catalog.GpuplanError:
        return 0  # the page shows the filter's error from its own query
    return sum(r.offer.usd_per_hour is None for r in rows)


def count_line(df: pd.DataFrame, hidden: int) -> str:
    """The count of offers shown, which `gpuplan offers` (unpriced offers included) gives for
    the same filters only once the unpriced are counted: "priced", and how many are hidden."""
    what = "priced offers" if hidden else "offers"
    types, regions = df["instance_type"].nunique(), df["region"].nunique()
    line = (f"**{len(df):,} {what}** across {types} instance type{'s' * (types != 1)} "
            f"and {regions} region{'s' * (regions != 1)}")
    if hidden:
        line += (f"; {hidden:,} unpriced offer{'s' if hidden > 1 else ''} hidden (tick "
                 "*Include unpriced offers* to list them)")
    return line + "."


def main() -> None:
    st.title("Catalog")
    cat = S.load_catalog_or_stop()
    url = I.UrlInputs("catalog")
    url.restore()  # the filters left for another page, after Back (``UrlInputs.keep``)
    chosen = filters(cat, url)
    url.keep()
    url.warn()
    out = S.cached_offers(chosen, S.catalog_key(cat))
    # the dates and age of the offers a filter lists, as `gpuplan offers` gives them (a
    # filter to aws read "up to 1,005 days old", azure's age); the whole catalog's otherwise
    narrowed = any(v for k, v in chosen.items() if k not in ("sort", "include_unpriced"))
    S.catalog_banner(cat, N.shown_dates(out["rows"]) if narrowed and out.get("rows") else None)
    if "error" in out:
        S.show_error(out)
        return
    rows = out["rows"]
    hidden = unpriced_hidden(chosen, S.catalog_key(cat))
    if not rows:
        st.warning("No offer matches these filters. Widen them to see offers." if not hidden
                   else f"No priced offer matches these filters; {hidden:,} unpriced "
                   f"offer{'s do' if hidden > 1 else ' does'}. Tick *Include unpriced offers* to "
                   "list them, or widen the filters.")
        return
    df = pd.DataFrame(rows)
    st.markdown(count_line(df, hidden))
    if df["usd_per_gpu_hour"].notna().any():
        st.plotly_chart(price_chart(df), key="price_chart")
    marked = N.marked_prices(rows)
    if any(marked):
        df["price_unused"] = marked
    F.show_table(df, OFFER_COLUMNS, key="offers_table", wide=("flag_reasons",))
    if any(marked):
        st.caption(f"{N.UNUSED_MARK} a price the planner does not use: a flag below keeps it "
                   "out of plans (or it has no price).")
    csv = df.drop(columns="price_unused", errors="ignore").assign(
        flags=df["flags"].map(",".join)).to_csv(index=False)
    st.download_button("Download offers (CSV)", csv, file_name="gpuplan-offers.csv",
                       mime="text/csv", key="offers_csv", icon=":material/download:")
    blocking, informational = N.flag_groups(rows)
    if blocking or informational:
        with st.expander("What the price flags mean"):
            for title, flags in (("Kept out of plans (the planner does not use these "
                                  f"prices, marked {N.UNUSED_MARK})", blocking),
                                 ("For information (the planner still uses these prices)",
                                  informational)):
                if flags:
                    st.markdown(f"**{F.md(title)}**\n\n" + "\n".join(
                        f"- **{F.md(f)}**: {F.md(catalog.OFFER_FLAGS.get(f, ''))}"
                        for f in flags))
    with st.expander("Accelerators: datasheet specs and cheapest $/GPU-hour"):
        acc = pd.DataFrame(S.cached_accelerator_summaries(S.catalog_key(cat)))
        acc = acc[acc["instance_types"] > 0]
        # the other names an input takes for each (a team plan's "H100", `--gpu h100`)
        acc["aliases"] = [list(cat.aliases_of(cat.accelerator(n))) for n in acc["name"]]
        F.show_table(acc, ACCELERATOR_COLUMNS, key="accelerators_table")


main()
