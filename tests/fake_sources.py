"""A fake price source for refresh tests (no network): the packaged on-demand AWS offers of
us-east-1, 1 % dearer, so a refresh changes prices; counts its fetches."""

from __future__ import annotations

from dataclasses import replace

from catalog import load_catalog
from catalog.sources import CloudData


class OneRegionAws:
    """The packaged on-demand AWS offers of us-east-1, 1 % dearer; counts its fetches."""

    cloud = "aws"

    def __init__(self) -> None:
        self.fetches = 0

    def fetch(self, regions, progress):
        self.fetches += 1
        packaged = load_catalog("packaged")
        offers = tuple(replace(o, usd_per_hour=round(o.usd_per_hour * 1.01, 5), source="fake",
                               flags=(), flag_reasons="")
                       for o in packaged.offers
                       if o.cloud == "aws" and o.region == "us-east-1"
                       and o.pricing == "on_demand" and o.usd_per_hour is not None)
        used = {o.instance_type for o in offers}
        types = tuple(t for t in packaged.instance_types if t.cloud == "aws" and t.name in used)
        return CloudData(cloud="aws", instance_types=types, offers=offers,
                         as_of=offers[0].as_of, source="fake", regions=("us-east-1",),
                         covered_pricing=("on_demand",))
