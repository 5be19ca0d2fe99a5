"""``catalog.split_flags``: the one split of offer flags into those that keep a price out of
plans and those that only inform, used by `gpuplan offers` and the app's Catalog page."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

import catalog


@given(st.lists(st.sampled_from(sorted(catalog.OFFER_FLAGS))))
def test_each_flag_once_on_its_side(flags):
    blocking, informational = catalog.split_flags(flags)
    assert blocking == sorted(set(flags) - catalog.INFORMATIONAL_FLAGS)
    assert informational == sorted(set(flags) & catalog.INFORMATIONAL_FLAGS)
    # an offer with a blocking flag is one whose price plans do not use
    assert set(blocking) <= catalog.PRICE_UNUSABLE_FLAGS


def test_an_overridden_price_only_informs():
    assert catalog.split_flags(["overridden", "price_outlier", "overridden"]) == (
        ["price_outlier"], ["overridden"])
