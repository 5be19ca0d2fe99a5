"""Fixtures of the catalog tests."""

from __future__ import annotations

import pytest

from catalog import load_catalog


@pytest.fixture
def small():
    """A small valid catalog (fast to write): three AWS types and their offers."""
    cat = load_catalog("packaged")
    keep = {"p5.48xlarge", "p4d.24xlarge", "g5.xlarge"}
    types = tuple(t for t in cat.instance_types if t.cloud == "aws" and t.name in keep)
    offers = tuple(o for o in cat.offers if o.cloud == "aws" and o.instance_type in keep
                   and o.region in ("us-east-1", "us-west-2"))
    return cat.accelerators, types, offers
