"""A probe report's errors tell one bound per field and speak JSON, the report's own language.

Before: a negative count was told the reader's generic "must be 0 or more", and 0 then the
record's "must be a whole number from 1" (two contradicting bounds for one field); type errors
named Python's types ("got NoneType", "got list") and repr'd values ("got None")."""

from __future__ import annotations

import pytest
from probe_reports import h100_report, report_data_with

from probes._report_io import parse_report, report_to_json
from probes._schema import ReportError

REPORT = h100_report()


def _error(*path_and_value) -> str:
    *path, value = path_and_value
    with pytest.raises(ReportError) as caught:
        parse_report(report_data_with(REPORT, path, value))
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


@pytest.mark.parametrize("huge", [2**60, -(2**60), 10**30])
def test_a_count_too_large_for_any_reader_is_told_the_records_bound_too(huge):
    # 2**60 was told "at most 9,007,199,254,740,992", and 2**53 then "from 1 to 1,048,576"
    for path in (("environment", "gpu_count"), ("environment", "node_count")):
        said = _error(*path, huge)
        assert "must be a whole number from 1 to" in said and f"got {huge}" in said
        assert "9,007,199,254,740,992" not in said


def test_a_count_out_of_every_range_in_a_field_without_a_bound_of_its_own():
    assert "matmul.warmup_iters must be at most 9,007,199,254,740,992, got 1152921504606846976" \
        in _error("matmul", "warmup_iters", 2**60)
    said = _error("matmul", "warmup_iters", 10**400)  # no record sees it: its float overflows
    assert "must be at most 9,007,199,254,740,992, got ~1e400" in said


def test_a_rank_is_labelled_by_the_field_not_by_its_bad_value():
    said = _error("ranks", 0, "rank", -3)  # "rank -3.rank must be …"
    assert "ranks[0]: rank.rank must be a whole number from 0 to" in said
    assert "rank -3." not in said


@pytest.mark.parametrize(("encoding", "width"), [
    ("utf-32", 32), ("utf-32-le", 32), ("utf-32-be", 32), ("utf-16", 16), ("utf-16-le", 16)])
def test_a_report_re_saved_as_utf16_or_32_is_named_so(encoding, width):
    # a UTF-32 report was called "UTF-16 text" (with a BOM) or "not valid JSON" (without)
    from probes._report_io import report_from_bytes

    with pytest.raises(ReportError, match=f"is UTF-{width} text, not the UTF-8 JSON"):
        report_from_bytes(report_to_json(h100_report()).encode(encoding))
