"""A family name in a link (app sweep 2026-12-07): ``gpus=A100`` suggested A10 or A10G, close
spellings of other GPUs; the CLI says A100 is ambiguous and names its three boards."""

from __future__ import annotations

import pytest

from ._apptest import app, warnings

BOARDS = "A100-PCIe-80GB, A100-SXM4-40GB or A100-SXM4-80GB"


@pytest.mark.parametrize("page,key", [(None, "gpus"), ("app_pages/catalog.py", "offers_gpu")])
@pytest.mark.parametrize("given", ["A100", "a100"])
def test_a_family_name_in_a_link_suggests_its_boards(page, key, given):
    at = app(page, **{key: given})
    said = " ".join(w for w in warnings(at) if "link has" in w)
    assert f"{given} is ambiguous: did you mean {BOARDS}?" in said, said
    assert "A10G" not in said and "P100" not in said, said


def test_a_misspelt_name_still_gets_close_matches():
    said = " ".join(warnings(app(gpus="A10GX")))
    assert "did you mean" in said and "ambiguous" not in said, said
