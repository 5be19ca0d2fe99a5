"""The Catalog page takes an accelerator's alias in a link as the CLI and a team plan do, lists
each accelerator's aliases, and counts in words that agree with the number; messages send the
user to what the app has ("see the Catalog page's accelerators"), never "run the Catalog
page"."""

from __future__ import annotations

import pandas as pd

from ._apptest import app, assert_clean, warnings


def test_a_link_names_an_accelerator_by_its_alias():
    """``offers_gpu=H100`` was "not one of the choices; showing none" while `gpuplan offers
    --gpu H100` and a team plan's ``gpu: H100`` take it."""
    at = app("app_pages/catalog.py", offers_gpu=["H100", "a100-sxm4-80gb"])
    assert_clean(at)
    assert not [w for w in warnings(at) if w.startswith("The link")], warnings(at)
    assert at.multiselect(key="offers_gpu").value == ["H100-SXM5-80GB", "A100-SXM4-80GB"]


def test_a_link_value_that_names_nothing_is_still_said():
    at = app("app_pages/catalog.py", offers_gpu="nosuchgpu")
    said = warnings(at)
    assert said and "offers_gpu=nosuchgpu" in said[0] and "not one of the choices" in said[0]


def test_the_accelerators_table_lists_aliases():
    at = app("app_pages/catalog.py", offers_gpu="H100")
    table = next(t.value for t in at.dataframe if "aliases" in t.value.columns)
    h100 = table[table["name"] == "H100-SXM5-80GB"]["aliases"].iloc[0]
    assert "H100" in h100, h100


def test_the_count_line_says_one_instance_type():
    from app_pages.catalog import count_line

    df = pd.DataFrame({"instance_type": ["p5.48xlarge"], "region": ["us-east-1"]})
    assert count_line(df, 0).endswith("across 1 instance type and 1 region."), \
        count_line(df, 0)


def test_an_unknown_accelerator_message_sends_to_the_catalog_accelerators():
    from app_pages import _shared as S

    said = S.app_words("unknown accelerator 'X'. To fix: run `gpuplan gpus` to list "
                       "accelerators and their aliases")
    assert said.endswith("To fix: see the Catalog page's accelerators and their aliases"), said
