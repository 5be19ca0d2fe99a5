"""Link (URL) values that name a choice as the CLI takes it (any case; a model preset's
alias) are that choice, and a value still unusable is named with the choices close to it:
?model=llama-3-8b planned gpt2-xl, and ?clouds=AWS searched every cloud while the warning
said "showing none"."""

from __future__ import annotations

import pytest

from ._apptest import app, warnings


def _said(at, key: str) -> str:
    return " ".join(w for w in warnings(at) if f"{key}=" in w)


@pytest.mark.parametrize("given, preset", [("llama-3-8b", "llama3-8b"),  # `--model llama-3-8b`
                                           ("Llama3.1-70B", "llama3-70b"),
                                           ("GPT2-XL", "gpt2-xl")])
def test_a_model_preset_alias_or_other_case_is_the_preset(given, preset):
    at = app(model=given)
    assert not at.exception
    assert at.selectbox(key="model").value == preset
    assert not _said(at, "model")
    # the URL names the preset (the default, gpt2-xl, it may leave out), so a reload or a
    # copy of the link plans it
    named = (preset, [preset]) + ((None,) if preset == "gpt2-xl" else ())
    assert at.query_params.get("model") in named
    at.run()
    assert at.query_params.get("model") in named
    assert at.selectbox(key="model").value == preset


def test_an_unknown_model_preset_is_named_with_the_presets_close_to_it():
    at = app(model="gpt2xl")
    assert not at.exception
    assert at.selectbox(key="model").value == "gpt2-xl"
    assert ("model=gpt2xl (Model preset: not a valid value; showing gpt2-xl; did you mean "
            "gpt2-xl, gpt2 or gpt2-large?)") in _said(at, "model")


@pytest.mark.parametrize("page, key", [(None, "clouds"), ("app_pages/catalog.py", "offers_cloud")])
def test_a_cloud_in_capitals_is_the_cloud(page, key):
    at = app(page, **{key: ["AWS", "gcp"]})
    assert not at.exception
    assert at.multiselect(key=key).value == ["aws", "gcp"]
    assert not _said(at, key)
    assert at.query_params.get(key) == ["aws", "gcp"]
    at.run()
    assert at.multiselect(key=key).value == ["aws", "gcp"]
    assert at.query_params.get(key) == ["aws", "gcp"]


@pytest.mark.parametrize("page, key", [(None, "clouds"), ("app_pages/catalog.py", "offers_cloud")])
def test_an_unknown_cloud_says_every_cloud_is_searched_and_the_close_one(page, key):
    """An empty Clouds box searches every cloud (its placeholder "All clouds"): the warning
    said "showing none"."""
    at = app(page, **{key: "awss"})
    assert not at.exception
    assert at.multiselect(key=key).value == []
    said = _said(at, key)
    assert f"{key}=awss (Clouds: not one of the choices; showing all clouds; did you mean " \
           "aws?)" in said, said
    assert "showing none" not in said


def test_a_select_box_takes_its_choice_in_another_case():
    at = app(precision="BF16")
    assert not at.exception
    assert at.selectbox(key="precision").value == "bf16"
    assert not _said(at, "precision")
