"""Properties of the readers that must hold for every input: hypothesis over random bytes,
text and structures. The only exception a reader may raise is the project's own
(``GpuplanError``, one line ending "To fix: …"); whatever it returns is finite and in range."""

from __future__ import annotations

import json
import math
import re

import pytest
import yaml
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from catalog import (
    CatalogFileError,
    GpuplanError,
    load_json_text,
    load_yaml_text,
    read_user_text,
    write_text_atomic,
)
from planner.model import (
    COUNT_LIMITS,
    MAX_DEADLINE_HOURS,
    SIZE_LIMITS,
    architecture_from_config,
    parse_count,
    parse_deadline,
)
from planner.reports import FORMULA_TRIGGERS, neutralise_cell, parse_actuals
from planner.search import parse_quotas
from planner.team import load_team_plan, parse_team_plan

from .cases_config import LLAMA
from .cases_files import GOOD_TEAM

FAST = settings(max_examples=150, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
SLOW = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])

# Characters that make YAML and JSON structure, so random text reaches the parsers' corners.
SYNTAX = st.text(alphabet=st.sampled_from(list("[]{}:,-&*!|>'\"#%@`?~ \n\t.0123456789eE+"
                                               "abcxyzTrueNnulINf\x00\x85\u2028\ufeff")),
                 max_size=200)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=5)
    | st.dictionaries(st.text(max_size=10), children, max_size=5),
    max_leaves=25)


def _one_line(exc: BaseException) -> None:
    text = str(exc)
    assert "\n" not in text and "To fix" in text, text


def _finite_everywhere(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_everywhere(v) for v in value)
    return True


# ---- the file readers ---------------------------------------------------------------------------

@FAST
@given(data=st.binary(max_size=300))
@example(data=b"\xef\xbb\xbfok")
@example(data=b"\xff\xfe\x00")
def test_read_user_text_is_utf8_or_one_clear_error(tmp_path, data):
    path = tmp_path / "f"
    path.write_bytes(data)
    try:
        text = read_user_text(path, what="file")
    except CatalogFileError as exc:
        _one_line(exc)
        assert "not UTF-8" in str(exc)
        with pytest.raises(UnicodeDecodeError):
            data.decode("utf-8")
    else:
        assert text == data.decode("utf-8").removeprefix("\ufeff")


@FAST
@given(data=st.binary(min_size=1, max_size=64), limit=st.integers(0, 64))
def test_read_user_text_never_returns_more_than_max_bytes(tmp_path, data, limit):
    path = tmp_path / "f"
    path.write_bytes(data)
    try:
        text = read_user_text(path, what="file", max_bytes=limit)
    except CatalogFileError as exc:
        _one_line(exc)
    else:
        assert len(text.encode("utf-8")) <= limit


@FAST
@given(text=SYNTAX | st.text(max_size=200))
def test_load_yaml_text_returns_data_or_one_clear_error(text):
    try:
        value = load_yaml_text(text, what="f")
    except CatalogFileError as exc:
        _one_line(exc)
    else:
        json.dumps(value, default=str)  # plain data, no recursive structures


_EXPONENT = re.compile(r"^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$")


def _texts(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [t for k, v in value.items() for t in (*_texts(k), *_texts(v))]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return []


def test_yaml_reads_exponent_numbers_as_numbers_and_quoted_ones_as_text():
    assert load_yaml_text("a: 1e6\nb: '1e6'\nc: 2.5E-3\nd: 1e\n", what="f") == {
        "a": 1e6, "b": "1e6", "c": 2.5e-3, "d": "1e"}


@FAST
@given(value=JSON_VALUES)
def test_yaml_round_trips_plain_data_and_keeps_dates_as_text(value):
    # PyYAML (YAML 1.1) writes the text "1e3" unquoted; our loader reads that as the number
    # YAML 1.2 says it is (users write budgets as 1e6): only such text does not round-trip
    assume(not any(_EXPONENT.match(t) for t in _texts(value)))
    assert load_yaml_text(yaml.safe_dump(value), what="f") == value
    assert load_yaml_text("d: 2027-02-30\nt: 2027-03-01 12:00:00\n", what="f") == {
        "d": "2027-02-30", "t": "2027-03-01 12:00:00"}


@FAST
@given(text=SYNTAX | st.text(max_size=200))
@example(text="[" * 10_000)
@example(text='{"a": NaN}')
@example(text="1" * 500)
def test_load_json_text_returns_finite_data_or_one_clear_error(text):
    try:
        value = load_json_text(text, what="f")
    except CatalogFileError as exc:
        _one_line(exc)
    else:
        assert _finite_everywhere(value)


@FAST
@given(value=JSON_VALUES)
def test_json_round_trips_finite_data(value):
    assert load_json_text(json.dumps(value), what="f") == value


@FAST
@given(text=st.text(max_size=300))
def test_write_then_read_is_the_identity(tmp_path, text):
    path = tmp_path / "out.txt"
    write_text_atomic(path, text)
    assert read_user_text(path, what="f") == text.removeprefix("\ufeff")
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]  # no temp file left


# ---- the values people type ---------------------------------------------------------------------

@FAST
@given(value=st.text(max_size=30) | st.integers() | st.floats()
       | st.integers(10**300, 10**400))
@example(value="1e400")
@example(value="nan")
@example(value="")
def test_parse_count_is_finite_and_bounded_or_one_clear_error(value):
    try:
        count = parse_count(value, "tokens")
    except GpuplanError as exc:
        _one_line(exc)
    else:
        assert math.isfinite(count) and 1 <= count <= COUNT_LIMITS["tokens"][0]


@FAST
@given(value=st.text(max_size=40) | st.from_regex(r"-?[0-9.e]{0,8}\s?[hdw]", fullmatch=True))
def test_parse_deadline_is_within_ten_years_or_one_clear_error(value):
    try:
        hours = parse_deadline(value)
    except GpuplanError as exc:
        _one_line(exc)
    else:
        assert 1 <= hours <= MAX_DEADLINE_HOURS


# ---- the parsers that take data -----------------------------------------------------------------

@SLOW
@given(position=st.integers(0, len(GOOD_TEAM) - 1), junk=SYNTAX)
def test_a_team_plan_with_junk_spliced_in_parses_or_fails_clearly(catalog, position, junk):
    text = GOOD_TEAM[:position] + junk + GOOD_TEAM[position:]
    try:
        plan = load_team_plan(text + "\n", catalog=catalog)
    except GpuplanError as exc:
        _one_line(exc)
    else:
        assert plan.jobs and all(j.deadline > j.earliest_start for j in plan.jobs)


@SLOW
@given(data=st.dictionaries(st.sampled_from(["name", "jobs", "budgets", "quotas",
                                             "start_offsets_days", "min_probability"]),
                            JSON_VALUES, max_size=4))
def test_parse_team_plan_accepts_any_structure_without_crashing(catalog, data):
    try:
        parse_team_plan(data, catalog=catalog)
    except GpuplanError as exc:
        _one_line(exc)


@FAST
@given(text=st.text(alphabet=st.sampled_from(list('job,gpu_hours,cost_usd\n"a1.e-$nanif\x00 ')),
                    max_size=120))
def test_actuals_are_finite_and_non_negative_or_one_clear_error(catalog, text):
    plan = load_team_plan(GOOD_TEAM, catalog=catalog)
    try:
        spent = parse_actuals("job,gpu_hours,cost_usd\n" + text, plan)
    except GpuplanError as exc:
        _one_line(exc)
    else:
        for row in spent.values():
            assert all(math.isfinite(v) and v >= 0 for v in row.values())


@FAST
@given(changes=st.dictionaries(
    st.sampled_from(["hidden_size", "num_hidden_layers", "num_attention_heads", "vocab_size",
                     "num_key_value_heads", "intermediate_size", "head_dim",
                     "num_local_experts", "num_experts_per_tok", "tie_word_embeddings",
                     "max_position_embeddings", "_name_or_path", "text_config"]),
    JSON_VALUES | st.integers(-10, 10**8), max_size=3))
def test_a_config_gives_a_bounded_architecture_or_one_clear_error(changes):
    try:
        arch, context = architecture_from_config({**LLAMA, **changes})
    except GpuplanError as exc:
        _one_line(exc)
    else:
        assert 1 <= arch.hidden <= SIZE_LIMITS["hidden"]
        assert 1 <= arch.layers <= SIZE_LIMITS["layers"]
        assert context is None or 1 <= context <= SIZE_LIMITS["context"]


@FAST
@given(data=st.fixed_dictionaries({"quotas": st.lists(st.dictionaries(
    st.sampled_from(["cloud", "region", "accelerator", "gpus", "month", "gpu"]),
    st.sampled_from(["aws", "gcp", "azure", "us-east-1", "H100", "2027-03", "x", ""])
    | st.integers(-2, 10**13) | st.none() | st.floats(), max_size=4), max_size=3)}))
def test_quota_rules_match_something_or_fail_clearly(catalog, data):
    try:
        quotas = parse_quotas(data, catalog)
    except GpuplanError as exc:
        _one_line(exc)
    else:
        assert all(0 <= r.gpus <= 1_000_000 for r in quotas.rules)


# ---- CSV cells ----------------------------------------------------------------------------------

@FAST
@given(text=st.text(max_size=30))
@example(text="=1+1")
@example(text="-5.25")
@example(text="\t=cmd")
def test_no_csv_cell_starts_a_formula(text):
    cell = neutralise_cell(text)
    if cell.startswith(FORMULA_TRIGGERS):
        float(cell)  # only plain numbers may keep a leading sign
    assert cell in (text, "'" + text)
