"""The Catalog page against `gpuplan offers`: the same precision for $/h as for $/GPU-h, and a
count that says it leaves the unpriced offers out (the CLI lists them: 14,532 offers there,
14,366 here, with nothing said)."""

from __future__ import annotations

from ._apptest import app, assert_clean, chart, table_columns, texts, warnings


def count_line(at) -> str:
    (line,) = [t for t in texts(at) if " across " in t]
    return line


def test_the_price_per_hour_has_the_precision_of_the_price_per_gpu_hour():
    """A 1-GPU instance at $0.02563 showed $0.03 per hour and $0.026 per GPU-hour (`gpuplan
    offers`: 0.026 for both); the cheapest now, a 1-GPU inf1.xlarge spot, at $0.029."""
    at = app("app_pages/catalog.py", offers_sort="price")
    assert_clean(at)
    table = next(t for t in at.dataframe if "usd_per_hour" in t.value.columns)
    columns = table_columns(table)
    assert columns["usd_per_hour"]["format"] == columns["usd_per_gpu_hour"]["format"]
    cheapest = table.value.iloc[0]
    assert cheapest["gpu_count"] == 1
    assert cheapest["usd_per_hour"] == cheapest["usd_per_gpu_hour"] == 0.029
    # and the chart's hover text ("$0.026 per GPU-hour · $0.03 per hour")
    for trace in chart(at, "price_chart")["data"]:
        if "hovertemplate" in trace:
            assert "%{customdata[4]:$,.3f} per hour" in trace["hovertemplate"]


def test_the_count_says_priced_and_how_many_unpriced_are_hidden():
    import catalog

    every = catalog.select_offers(catalog.load_catalog())
    unpriced = sum(r.offer.usd_per_hour is None for r in every)
    at = app("app_pages/catalog.py")
    assert_clean(at)
    assert count_line(at).startswith(f"**{len(every) - unpriced:,} priced offers** across"), \
        count_line(at)
    assert f"{unpriced:,} unpriced offers hidden" in count_line(at)
    # ticked, the count is `gpuplan offers`'s
    at = app("app_pages/catalog.py", offers_unpriced="true")
    assert count_line(at).startswith(f"**{len(every):,} offers** across"), count_line(at)
    assert "hidden" not in count_line(at)


def test_filters_that_match_only_unpriced_offers_say_so():
    """H200 in ap-southeast-2 has one offer, unpriced: "No offer matches these filters"."""
    at = app("app_pages/catalog.py", offers_gpu="H200-SXM-141GB", offers_region="ap-southeast-2")
    assert not at.exception
    assert any(w.startswith("No priced offer matches these filters; 1 unpriced offer does")
               for w in warnings(at)), warnings(at)
