"""A probe report's errors tell one bound per field and speak JSON, the report's own language.

Before: a negative count was told the reader's generic "must be 0 or more", and 0 then the
record's "must be a whole number from 1" (two contradicting bounds for one field); type errors
named Python's types ("got NoneType", "got list") and repr'd values ("got None")."""

from __future__ import annotations

import copy
import json

import pytest
from probe_reports import h100_report

from probes._report_io import parse_report, report_to_json
from probes._schema import ReportError

BASE = json.loads(report_to_json(h100_report()))


def _error(*path_and_value) -> str:
    *path, value = path_and_value
    data = copy.deepcopy(BASE)
    at = data
    for key in path[:-1]:
        at = at[key]
    at[path[-1]] = value
    with pytest.raises(ReportError) as caught:
        parse_report(data)
    return str(caught.value)


@pytest.mark.parametrize(("path", "bound"), [
    (("environment", "gpu_count"), "must be a whole number from 1 to 1,048,576"),
    (("environment", "world_size"), "must be a whole number from 1 to 1,048,576"),
    (("collectives", "series", 0, "group_size"), "must be a whole number from 1 to"),
    (("matmul", "dtypes", 0, "best_shape"), "must be 3 whole numbers >= 1"),
])
def test_a_negative_count_and_zero_are_told_the_same_bound(path, bound):
    value = ([-8, 8, 8], [0, 8, 8]) if path[-1] == "best_shape" else (-3, 0)
    negative, zero = (_error(*path, v) for v in value)
    assert bound in negative and bound in zero
    assert "0 or more" not in negative


def test_a_negative_in_a_field_its_record_does_not_bound_is_still_refused():
    assert "matmul.warmup_iters must be 0 or more, got -1" in _error("matmul", "warmup_iters", -1)
    assert "must be 0 or more, got -1" in _error("environment", "sm_clock_mhz", -1)


def test_a_count_too_large_for_any_reader_is_refused_either_sign():
    assert "at most 9,007,199,254,740,992, got" in _error("environment", "gpu_count", 2**60)
    assert "not negative" in _error("environment", "gpu_count", -(2**60))


@pytest.mark.parametrize(("data", "says"), [
    (None, "top level, got null"), ([1], "top level, got a list"),
    ("report", "top level, got a string"), (3, "top level, got a number"),
    (True, "top level, got true"),
])
def test_a_report_that_is_not_an_object_is_named_in_json_words(data, says):
    with pytest.raises(ReportError, match=says):
        parse_report(data)


def test_fields_of_the_wrong_type_are_named_in_json_words():
    # (a null environment is a report without that section, not an error)
    assert "environment must be an object, got a list" in _error("environment", [1])
    assert "environment.device_type must be a string, got null" in _error(
        "environment", "device_type", None)
    assert "schema_version must be one of 1, 2, 3, got null" in _error("schema_version", None)
    for said in (_error("environment", [1]), _error("schema_version", None)):
        assert "NoneType" not in said and "None" not in said and "got list" not in said
