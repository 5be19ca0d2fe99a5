"""The anomaly rules, one at a time, on offers built for the purpose (issue #13 item 3)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from catalog import InstanceType, Offer
from catalog._anomalies import (
    ANOMALY_FLAGS,
    CEILING_USD_PER_GPU_HOUR,
    LOG_SCALE_FLOOR,
    OUTLIER_Z,
    add_flag,
    flag_anomalies,
    remove_flags,
    robust_z,
)

DAY = dt.date(2026, 1, 1)


def _type(cloud="gcp", name="a3-highgpu-8g", acc="H100-SXM5-80GB", gpus=8):
    return InstanceType(cloud=cloud, name=name, accelerator=acc, gpu_count=gpus, vcpus=None,
                        memory_gib=None, gpu_memory_gib=None, intra_node_topology="nvswitch",
                        intra_node_gb_per_s_per_gpu=None, inter_node_gbps=None,
                        fabric="ethernet")


def _offer(usd, *, cloud="gcp", name="a3-highgpu-8g", region="r1", pricing="on_demand",
           flags=()):
    return Offer(cloud=cloud, instance_type=name, region=region, pricing=pricing,
                 usd_per_hour=usd, as_of=DAY, source="test", flags=flags)


def _types(*types):
    return {t.key: t for t in types}


def _flags(offers):
    return {(o.region, o.pricing): set(o.flags) for o in offers}


def test_spot_at_or_above_on_demand_is_flagged_with_its_reason():
    out = flag_anomalies([_offer(10.0), _offer(10.0, pricing="spot")], _types(_type()))
    spot = out[1]
    assert spot.flags == ("spot_not_below_on_demand",) and not spot.price_usable
    assert spot.flag_reasons == "spot_not_below_on_demand: spot 10 >= on-demand 10 $/h"
    assert out[0].price_usable


def test_gcp_spot_above_its_documented_bound_is_flagged_but_aws_is_not():
    # GCP documents 60-91 % spot discounts: spot at 50 % of on-demand cannot be right
    gcp = flag_anomalies([_offer(10.0), _offer(5.0, pricing="spot")], _types(_type()))
    assert gcp[1].flags == ("spot_discount_below_documented",)
    assert "documents spot at most 40%" in gcp[1].flag_reasons
    assert gcp[0].price_usable  # the on-demand price is the outlier rule's to judge
    at_bound = flag_anomalies([_offer(10.0), _offer(4.0, pricing="spot")], _types(_type()))
    assert at_bound[1].price_usable
    aws_type = _type(cloud="aws", name="p5.48xlarge")
    aws = flag_anomalies([_offer(10.0, cloud="aws", name="p5.48xlarge"),
                          _offer(9.0, cloud="aws", name="p5.48xlarge", pricing="spot")],
                         _types(aws_type))
    assert aws[1].price_usable  # AWS documents no bound tighter than on-demand itself


def test_tpu_slices_are_not_held_to_the_compute_engine_spot_range():
    tpu = _type(name="tpu-v5p-8", acc="TPU-v5p", gpus=4)
    out = flag_anomalies([_offer(16.8, name="tpu-v5p-8"),
                          _offer(8.4, name="tpu-v5p-8", pricing="spot")], _types(tpu))
    assert out[1].price_usable


def test_a_price_at_half_the_other_regions_is_an_outlier_a_regional_premium_is_not():
    regions = {f"r{i}": 98.0 for i in range(8)}
    regions.update({"cheap": 46.0, "premium": 98.0 * 1.6})
    out = flag_anomalies([_offer(p, region=r) for r, p in regions.items()], _types(_type()))
    flags = {o.region: o.flags for o in out}
    assert flags["cheap"] == ("price_outlier",)
    assert flags["premium"] == () and all(flags[f"r{i}"] == () for i in range(8))
    reason = next(o.flag_reasons for o in out if o.region == "cheap")
    assert "5.750 $/accelerator-hour" in reason and "median 12.250" in reason
    assert f"|z| > {OUTLIER_Z:g}" in reason


def test_instance_types_are_not_compared_with_each_other():
    # one T4 behind a 64-vCPU host costs more per GPU than behind a 4-vCPU host: not an error
    small, big = _type(cloud="aws", name="g4dn.xlarge", acc="T4", gpus=1), \
        _type(cloud="aws", name="g4dn.16xlarge", acc="T4", gpus=1)
    offers = [_offer(0.526, cloud="aws", name="g4dn.xlarge", region=f"r{i}") for i in range(6)]
    offers += [_offer(4.352, cloud="aws", name="g4dn.16xlarge", region=f"r{i}")
               for i in range(6)]
    assert all(o.price_usable for o in flag_anomalies(offers, _types(small, big)))


def test_small_groups_are_not_tested():
    offers = [_offer(98.0, region="a"), _offer(98.0, region="b"), _offer(10.0, region="c")]
    assert all(o.price_usable for o in flag_anomalies(offers, _types(_type())))


def test_a_price_above_any_plausible_list_price_is_flagged():
    out = flag_anomalies([_offer(8 * CEILING_USD_PER_GPU_HOUR + 8)], _types(_type()))
    assert out[0].flags == ("price_above_ceiling",)


def test_the_rules_are_idempotent_and_keep_flags_they_do_not_own():
    offers = [add_flag(_offer(10.0), "suspect_price", "said so in the reference"),
              _offer(10.0, pricing="spot")]
    once = flag_anomalies(offers, _types(_type()))
    twice = flag_anomalies(once, _types(_type()))
    assert once == twice
    assert once[0].flags == ("suspect_price",) and "said so" in once[0].flag_reasons
    # a price that got fixed loses the flag on the next run
    fixed = flag_anomalies([once[0], dataclasses.replace(once[1], usd_per_hour=3.0)],
                           _types(_type()))
    assert fixed[1].flags == () and fixed[1].flag_reasons == ""


def test_remove_flags_drops_their_reasons_only():
    o = add_flag(add_flag(_offer(1.0), "suspect_price", "one"), "price_outlier", "two")
    assert remove_flags(o, ANOMALY_FLAGS).flag_reasons == "suspect_price: one"
    assert add_flag(o, "price_outlier", "again") is o
    assert ";" not in add_flag(_offer(1.0), "expired", "a; b").flag_reasons.split(": ", 1)[1]


@given(st.lists(st.floats(min_value=0.01, max_value=1e4), min_size=5, max_size=40),
       st.floats(min_value=0.1, max_value=10.0))
def test_robust_z_ignores_the_unit_of_price(prices, scale):
    """Scaling every price (dollars to cents, a currency) changes no log-price z-score."""
    z1 = robust_z([math.log(p) for p in prices])
    z2 = robust_z([math.log(p * scale) for p in prices])
    assert z1 == pytest.approx(z2, abs=1e-6)


@given(st.lists(st.floats(min_value=-5, max_value=5), min_size=1, max_size=40))
def test_robust_z_is_bounded_by_the_scale_floor(values):
    z = robust_z(values)
    spread = max(values) - min(values)
    assert all(abs(v) <= spread / LOG_SCALE_FLOOR + 1e-9 for v in z)
