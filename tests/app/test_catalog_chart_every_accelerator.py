"""Every accelerator named under the Catalog's price chart (app sweep 2026-12-07): plotly's
own ticks named every other one on a 390 px phone (19 of 38 unnamed)."""

from __future__ import annotations

from ._apptest import app, chart


def test_the_price_chart_names_every_accelerator_it_draws():
    spec = chart(app("app_pages/catalog.py"), "price_chart")
    drawn = {x for t in spec["data"] if t.get("type") == "box" for x in t["x"]}
    axis = spec["layout"]["xaxis"]
    assert axis.get("tickmode") == "array", axis
    assert set(axis["tickvals"]) == drawn and len(axis["ticktext"]) == len(drawn)
    assert len(drawn) > 30
