"""A workload section no run writes, and a report file that cost a gigabyte to check, from a
tester's sweep (items 4, 5 and 7): the allocator's and autograd's activation counts 20x apart
were accepted, a section's `quick` or `device` that is not its report's, shared experts on a
dense layer; and the JSON nesting check of a 15 MiB report took 1.9 GB and 3 s.

Each test edits the builders' honest report (tests/probe_reports.py) as the tester edited the
file, and the honest report must still be trusted."""

from __future__ import annotations

import dataclasses
import json
import tracemalloc

import pytest
from probe_reports import EDITED, LLAMA3_8B_LAYER, h100_workload_report
from probe_store import H100, put, refused

from catalog import CatalogFileError, load_json_text
from planner.model import WorkloadShape
from planner.store import ingest_bytes, load_calibration
from probes import report_to_json, workload_refusal


def _with_counts(report, *, section: float | None = None, ranks: dict[int, float] | None = None,
                 name: str = "layer_activation_bytes"):
    """``report`` with the workload's ``name`` byte count set in its section and/or ranks."""
    from probes._schema import NamedValue

    w = report.workload if section is None else dataclasses.replace(report.workload,
                                                                     **{name: section})
    new_ranks = tuple(dataclasses.replace(r, workload=tuple(
        NamedValue(name=v.name, value=ranks[r.rank]) if v.name == name and r.rank in ranks
        else v for v in r.workload)) for r in report.ranks) if ranks else report.ranks
    return dataclasses.replace(report, workload=w, ranks=new_ranks)


# -- item 4: two counts of the same activations --------------------------------------------------
def test_activation_counts_twenty_times_apart_refuse_the_layer(tmp_path, catalog):
    """70 MiB by the allocator (section and every rank) against 1,330 MiB saved for backward:
    used, and every plan's activations were scaled by 0.05."""
    honest = h100_workload_report()  # 1,400 MiB allocator, 1,330 MiB saved
    assert workload_refusal(honest) is None
    mib = 70 * 2**20
    edited = _with_counts(honest, section=mib, ranks=dict.fromkeys(range(8), mib))
    why = workload_refusal(edited)
    assert why.startswith("the workload layer_activation_bytes (70.0 MiB) and "
                          "layer_saved_bytes (1,330.0 MiB), the allocator's and autograd's "
                          f"counts of the same tensors, are over 2x apart: {EDITED}")
    stored = put(tmp_path, catalog, edited)
    cal = load_calibration(catalog)
    assert cal.workload(H100, "fsdp", WorkloadShape(**LLAMA3_8B_LAYER)) is None
    assert refused(cal, stored.id) == [why]


def test_one_rank_whose_counts_disagree_refuses_the_layer():
    from probes._schema import NamedValue

    report = h100_workload_report()  # its ranks carry no saved count: each is given one
    ranks = tuple(dataclasses.replace(r, workload=(*r.workload, NamedValue(
        name="layer_saved_bytes", value=(400 if r.rank == 5 else 1330) * 2**20)))
        for r in report.ranks)
    why = workload_refusal(dataclasses.replace(report, ranks=ranks))
    assert why.startswith("rank 5's workload layer_activation_bytes (1,400.0 MiB) and "
                          "layer_saved_bytes (400.0 MiB)") and EDITED in why


@pytest.mark.parametrize("allocator_mib, saved_mib", [
    (1400.0, 1330.0), (769.1, 769.1), (1400.0, 750.0),  # within 2x (the probe's own runs: 1.0)
    (1.0, 2.5),  # a toy layer: within the allocator's 2 MiB segment
    (None, 1330.0),  # no CUDA allocator (CPU): nothing to compare
])
def test_counts_that_agree_or_are_absent_pass(allocator_mib, saved_mib):
    report = h100_workload_report(activation_mib=allocator_mib)
    report = _with_counts(report, section=saved_mib * 2**20, name="layer_saved_bytes")
    assert workload_refusal(report) is None


# -- item 7: a section that contradicts its report -------------------------------------------
@pytest.mark.parametrize("field, value, says", [
    ("quick", True, "the workload section says quick True on 'cuda', the report quick False"),
    ("device", "cpu", "the workload section says quick False on 'cpu', the report quick False "
                      "on 'cuda'"),
    ("shared_experts", 5, "5 shared experts in a dense layer (experts 0)"),
])
def test_a_section_that_contradicts_its_report_is_refused(catalog, field, value, says):
    data = json.loads(report_to_json(h100_workload_report()))
    data["workload"][field] = value
    stored = ingest_bytes(json.dumps(data).encode(), catalog, source="wl.json")
    (why,) = refused(load_calibration(catalog), stored.id)
    assert why.startswith(says) and "To fix:" in why, why


def test_shared_experts_of_a_mixture_are_fine():
    moe = h100_workload_report(shape={"experts": 8, "experts_per_token": 2,
                                      "shared_experts": 1})
    assert workload_refusal(moe) is None


# -- item 5: the JSON nesting check is linear and needs no memory of its own -----------------
@pytest.mark.parametrize("body", [
    "x" * (4 * 2**20),  # the tester's padding: 15 MiB took 1.9 GB and 3 s
    "\\n" * (2 * 2**20),  # escapes
    '[\\"]{' * (2**19),  # brackets and escaped quotes inside a string do not nest
])
def test_the_nesting_check_of_a_long_string_takes_no_memory_of_its_own(body):
    text = '{"schema_version": 3, "pad": "' + body + '"}'
    tracemalloc.start()
    try:
        data = load_json_text(text, what="probe report r.json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(data["pad"]) <= len(body)
    # json.loads' own string and dict (about the text's size); the check took 140x the text
    assert peak < 3 * len(text), f"{peak / 2**20:.0f} MiB for {len(text) / 2**20:.0f} MiB"


@pytest.mark.parametrize("text, deep_at", [
    ("[" * 65 + "]" * 65, 64),
    ('{"a": "' + "[" * 100 + '"}', None),  # inside a string: not nesting
    ('{"a": "\\"' + "[" * 100 + '"}', None),  # after an escaped quote: still the string
    ('[' * 10 + '"a\\\\"' + "[" * 60, 69),  # an escaped backslash ends before the quote
    ('"\\"' + "[" * 70, 67),  # an unterminated string: the brackets after it count
])
def test_the_nesting_check_gives_the_answers_it_gave(text, deep_at):
    if deep_at is None:
        load_json_text(text, what="f")
        return
    with pytest.raises(CatalogFileError, match="nesting deeper than 64 levels at line 1"):
        load_json_text(text, what="f")
    from catalog._files import _json_depth_ok

    assert _json_depth_ok(text, 64) == deep_at
