"""The spot outlier rule leaves out "spot" rows at or above on-demand (no spot price): AWS rows
at exactly their on-demand rate raised the p5.4xlarge spot median to 8.26 $/GPU-h, so a real
2.37 $/h spot price in sa-east-1 scored z = -8.3 and plans could not use it (regression check,
2026-12-06)."""

from __future__ import annotations

from catalog import Offer, load_catalog
from catalog._anomalies import flag_anomalies


def test_the_packaged_p5_4xlarge_spot_price_in_sa_east_1_is_usable():
    cat = load_catalog("packaged")
    (o,) = [o for o in cat.offers if (o.instance_type, o.region, o.pricing)
            == ("p5.4xlarge", "sa-east-1", "spot")]
    assert "price_outlier" not in o.flags, o.flag_reasons


def _offer(region: str, pricing: str, usd: float) -> Offer:
    return Offer(cloud="aws", instance_type="p5.4xlarge", region=region, pricing=pricing,
                 usd_per_hour=usd, as_of=load_catalog("packaged").offers[0].as_of,
                 source="test")


def test_spot_rows_at_on_demand_do_not_set_the_spot_median():
    types = {(t.cloud, t.name): t for t in load_catalog("packaged").instance_types}
    regions = [f"r{i}" for i in range(11)]
    offers = [_offer(r, "on_demand", 8.0) for r in regions]
    # six "spot" rows at on-demand (junk), five real spot prices near 2.5 (a group the rule
    # tests: MIN_GROUP), one of them far below the others
    offers += [_offer(r, "spot", 8.0) for r in regions[:6]]
    offers += [_offer(r, "spot", p)
               for r, p in zip(regions[6:], (2.4, 2.5, 2.5, 2.6, 0.5), strict=True)]
    flagged = {(o.region, o.pricing): o.flags for o in flag_anomalies(offers, types)}
    assert all("spot_not_below_on_demand" in flagged[(r, "spot")] for r in regions[:6])
    assert not any("price_outlier" in flagged[(r, "spot")] for r in regions[6:10]), flagged
    assert "price_outlier" in flagged[(regions[10], "spot")]  # still tested, around 2.5
