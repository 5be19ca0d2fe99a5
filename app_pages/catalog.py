"""Catalog: the `gpuplan offers` view — priced offers, filtered and sorted — and $/GPU-hour
by accelerator. Filters are bound to the URL, as on the Plan page."""

from __future__ import annotations

import pandas as pd
import plotly.express as px
import streamlit as st

import catalog
from app_pages import _shared as S

COLUMNS = ["cloud", "instance_type", "region", "accelerator", "gpu_count", "gpu_memory_gib",
           "pricing", "usd_per_hour", "usd_per_gpu_hour", "usd_per_bf16_pflop_hour",
           "inter_node_gbps", "fabric", "intra_node_topology", "as_of", "flags"]
Q = "query-params"


def filters(cat: catalog.Catalog) -> dict:
    offered = sorted({t.accelerator for t in cat.instance_types})
    c = st.columns(4)
    gpus = c[0].multiselect("GPU", offered, key="offers_gpu", bind=Q)
    clouds = c[1].multiselect("Cloud", list(catalog.CLOUDS), key="offers_cloud", bind=Q)
    regions = c[2].multiselect("Region", list(cat.regions()), key="offers_region", bind=Q)
    pricing = c[3].multiselect("Pricing", list(catalog.PRICING_MODELS), key="offers_pricing",
                               bind=Q)
    c = st.columns(4)
    min_gpus = c[0].number_input("Min GPUs per instance", min_value=1, value=None, step=1,
                                 key="offers_min_gpus", bind=Q)
    max_price = c[1].number_input("Max $ per instance-hour", min_value=0.01, value=None,
                                  step=1.0, key="offers_max_price", bind=Q)
    sort = c[2].selectbox("Sort by", list(catalog.SORT_KEYS), key="offers_sort", bind=Q,
                          help="price: $ per instance-hour; gpu_price: $ per GPU-hour; "
                               "pflop_price: $ per bf16 PFLOP/s-hour")
    unpriced = c[3].checkbox("Include unpriced offers", value=False, key="offers_unpriced",
                             bind=Q)
    return {"gpus": tuple(gpus), "clouds": tuple(clouds), "regions": tuple(regions),
            "pricing": tuple(pricing), "min_gpus": int(min_gpus) if min_gpus else None,
            "max_price": max_price or None, "sort": sort, "include_unpriced": unpriced}


def price_chart(df: pd.DataFrame):
    priced = df.dropna(subset=["usd_per_gpu_hour"])
    order = (priced.groupby("accelerator")["usd_per_gpu_hour"].min()
             .sort_values().index.tolist())
    fig = px.strip(priced, x="accelerator", y="usd_per_gpu_hour", color="pricing",
                   category_orders={"accelerator": order}, log_y=True,
                   hover_data=["cloud", "instance_type", "region", "gpu_count", "usd_per_hour"],
                   labels={"usd_per_gpu_hour": "$ per GPU-hour", "accelerator": ""},
                   title="$ per GPU-hour by accelerator (each point an offer)")
    fig.update_layout(height=460, margin={"t": 40})
    return fig


def main() -> None:
    st.title("Catalog")
    cat = S.load_catalog_or_stop()
    S.catalog_banner(cat)
    out = S.cached_offers(filters(cat), S.catalog_key(cat))
    if "error" in out:
        st.error(out["error"])
        return
    rows = out["rows"]
    if not rows:
        st.warning("No offer matches these filters. Widen them to see offers.")
        return
    df = pd.DataFrame(rows)
    df["flags"] = df["flags"].map(", ".join)
    st.markdown(f"**{len(df):,} offers** across {df['instance_type'].nunique()} instance "
                f"types and {df['region'].nunique()} regions.")
    st.plotly_chart(price_chart(df), key="price_chart")
    st.dataframe(df[COLUMNS], hide_index=True, key="offers_table",
                 column_config={"usd_per_hour": st.column_config.NumberColumn(format="$%.2f"),
                                "usd_per_gpu_hour": st.column_config.NumberColumn(
                                    format="$%.3f")})
    st.download_button("Download offers (CSV)", df.to_csv(index=False),
                       file_name="gpuplan-offers.csv", mime="text/csv", key="offers_csv")
    flagged = sorted({f for fl in out["rows"] for f in fl["flags"]})
    if flagged:
        with st.expander("What the price flags mean"):
            for f in flagged:
                st.markdown(f"- `{f}`: {catalog.OFFER_FLAGS.get(f, '')}")
    with st.expander("Accelerators: datasheet specs and cheapest $/GPU-hour"):
        acc = pd.DataFrame(S.cached_accelerator_summaries(S.catalog_key(cat)))
        acc = acc[acc["instance_types"] > 0]
        st.dataframe(acc[["name", "vendor", "memory_gib", "memory_bandwidth_gb_per_s",
                          "tflops_bf16", "tflops_fp8", "cheapest_on_demand_usd_per_gpu_hour",
                          "cheapest_spot_usd_per_gpu_hour", "clouds"]],
                     hide_index=True, key="accelerators_table")


main()
