"""An AWS region index whose regions carry no price file is said so: `{"regions":
{"us-east-1": null}}` was "lists no regions. To fix: retry later" (it lists one), without the
usual "or leave aws out with --cloud" (fault sweep, 2026-12)."""

from __future__ import annotations

import pytest

from catalog import load_catalog
from catalog.sources import AwsSource
from catalog.sources import aws as aws_source
from catalog.sources._common import RefreshError


@pytest.mark.parametrize(("regions", "said"), [
    ({"us-east-1": None}, "lists 1 region but no price file (currentVersionUrl) for any"),
    ({"us-east-1": {}, "eu-north-1": {"currentVersionUrl": 3}},
     "lists 2 regions but no price file (currentVersionUrl) for any"),
    ({}, "lists no regions"),
])
def test_an_index_without_price_files_says_what_it_lists(monkeypatch, regions, said):
    monkeypatch.setattr(aws_source, "get_json", lambda *a, **k: {"regions": regions})
    with pytest.raises(RefreshError) as info:
        AwsSource(reference=load_catalog("packaged"), base_url="http://127.0.0.1:9",
                  spot_from_ec2=False).fetch(None)
    message = str(info.value)
    assert said in message and message.endswith("To fix: retry later, or leave aws out with "
                                                 "--cloud"), message
