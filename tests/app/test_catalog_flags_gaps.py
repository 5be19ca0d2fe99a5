"""The Catalog page says why an offer is flagged (``flag_reasons``: "source lists 12 GPUs;
the VM has 8"), which flags keep a price out of plans (marked "*", as `gpuplan offers` marks
them) and which only inform, and dates its "prices as of … up to N days old" line from the
offers it lists, not the whole catalog."""

from __future__ import annotations

from ._apptest import app, assert_clean, plain

TODAY = "2026-12-01"


def _catalog(monkeypatch, **chosen: list[str]):
    monkeypatch.setenv("GPUPLAN_TODAY", TODAY)
    at = app("app_pages/catalog.py")
    for key, value in chosen.items():
        at.multiselect(key=key).set_value(value).run()
    assert_clean(at)
    return at


def test_reasons_and_unused_prices_are_shown(monkeypatch):
    at = _catalog(monkeypatch, offers_cloud=["azure"], offers_gpu=["H100"])
    df = at.dataframe[0].value
    nd = df[df["instance_type"] == "Standard_ND96isr_H100_v5"]
    assert len(nd) > 0
    assert nd["flag_reasons"].str.contains(
        "source lists 12 GPUs; the VM has 8 (Azure ND H100 v5 docs)", regex=False).all()
    # a spot price equal to on-demand is kept out of plans: marked; on-demand is used
    spot, on_demand = nd[nd["pricing"] == "spot"], nd[nd["pricing"] == "on_demand"]
    assert (spot["price_unused"] == "*").all() and (on_demand["price_unused"] == "").all()
    said = plain("\n".join([m.value for m in at.markdown] + [c.value for c in at.caption]))
    assert "* a price the planner does not use" in said
    legend = said[said.index("Kept out of plans"):]
    assert "no_spot_offer" in legend.split("For information")[0]
    assert "gpu_count_corrected" in legend.split("For information")[1]
    assert "the planner still uses these prices" in legend


def test_the_dates_are_those_of_the_offers_shown(monkeypatch):
    import catalog

    cat = catalog.load_catalog()
    whole = cat.age_days(catalog.today_utc())
    at = _catalog(monkeypatch, offers_cloud=["aws"])
    line = plain(next(e.value for kind in ("warning", "info") for e in at.get(kind)
                      if "prices as of" in e.value))
    rows = catalog.select_offers(cat, clouds=["aws"], include_unpriced=False)
    oldest = min(r.offer.as_of for r in rows)
    age = (catalog.today_utc() - oldest).days
    assert age != whole  # the aws rows are younger than the catalog's oldest (azure's)
    assert "azure" not in line.split("Source:")[0], line
    assert f"up to {age:,} days old" in line, line
