"""A small catalog for optimizer tests: four real instance types from the packaged catalog
with nine offers at prices the tests choose, and a 1B-parameter workload, so one plan() call
takes milliseconds."""

from __future__ import annotations

import dataclasses
import functools

import catalog
from planner import WorkloadSpec, build_workload

# (cloud, instance type, region, pricing, USD per instance-hour chosen for the tests). The two
# p4d on-demand offers share a price on purpose: the tie must be broken by the offer's key.
OFFERS = (
    ("aws", "p5.48xlarge", "us-east-1", "on_demand", 98.32),
    ("aws", "p5.48xlarge", "us-east-1", "spot", 23.0),
    ("aws", "p4d.24xlarge", "us-east-1", "on_demand", 32.77),
    ("aws", "p4d.24xlarge", "us-west-2", "on_demand", 32.77),
    ("aws", "p4d.24xlarge", "us-east-1", "spot", 8.0),
    ("gcp", "a2-highgpu-8g", "us-central1", "on_demand", 29.39),
    ("gcp", "a2-highgpu-8g", "us-central1", "spot", 11.54),
    ("azure", "Standard_ND96asr_v4", "eastus", "on_demand", 27.20),
    ("azure", "Standard_ND96asr_v4", "eastus", "spot", 3.0),
)


@functools.cache
def packaged() -> catalog.Catalog:
    return catalog.load_catalog("packaged")


@functools.cache
def workload():
    return build_workload(WorkloadSpec(params="1B", tokens="20B"))


def make_offer(cloud: str, instance_type: str, region: str, pricing: str,
               usd_per_hour: float) -> catalog.Offer:
    """The packaged offer with that key, at ``usd_per_hour`` and without flags."""
    base = next(o for o in packaged().offers
                if o.key == (cloud, instance_type, region, pricing))
    return dataclasses.replace(base, usd_per_hour=usd_per_hour, flags=(), flag_reasons="")


def small_catalog(offers=None) -> catalog.Catalog:
    """The packaged specs with only ``offers`` (default: every row of OFFERS)."""
    cat = packaged()
    chosen = tuple(make_offer(*row) for row in OFFERS) if offers is None else tuple(offers)
    return catalog.Catalog(name="test", path=cat.path, meta=cat.meta,
                           accelerators=cat.accelerators, instance_types=cat.instance_types,
                           offers=chosen)
