"""Large-but-allowed probe reports (sweep 23): 40,000 extra matmul points (6.7 MB, under the
store's size limit) took a minute to ingest and made every later estimate, plan and `probe
show` 25x slower. A report's lists are bounded at parse time by what the probes can write,
and a record's type hints are resolved once per class, not once per object."""

from __future__ import annotations

import json
import typing

import pytest
from probe_reports import h100_report, h100_workload_report

from planner.cli import main
from probes import ReportError, report_to_json
from probes._report_parse import parse_report


def _data(report=None) -> dict:
    return json.loads(report_to_json(report or h100_report()))


def _ingest(tmp_path, data, capsys) -> tuple[int, str]:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(data))
    code = main(["probe", "ingest", str(path)])
    return code, capsys.readouterr().err.strip()


def test_a_report_with_more_matmul_points_than_the_probe_sweeps_is_refused_at_ingest(
        tmp_path, capsys):
    data = _data()
    point = data["matmul"]["points"][0]
    data["matmul"]["points"] = [point] * 2_000
    code, err = _ingest(tmp_path, data, capsys)
    assert code == 2
    lines = err.splitlines()
    assert len(lines) == 1 and "matmul.points has 2,000 entries" in lines[0], err
    assert "at most 384" in lines[0] and "To fix:" in lines[0]
    assert main(["probe", "show"]) == 0
    assert "big.json" not in capsys.readouterr().out  # nothing stored


@pytest.mark.parametrize("where", ["errors", "ranks"])
def test_errors_and_ranks_are_bounded_by_the_runs_world_size(where):
    data = _data()
    world = data["environment"]["world_size"]
    entry = (data["ranks"][0] if where == "ranks" else
             {"probe": "matmul", "error_type": "RuntimeError", "message": "x", "rank": 0})
    data[where] = [entry] * (world * (2 if where == "ranks" else 8) + 1)
    with pytest.raises(ReportError, match=rf"{where} has [\d,]+ entries; the probes write at "
                                          r"most .*To fix:"):
        parse_report(data)


def test_collective_sizes_beyond_the_probes_limit_are_refused():
    data = _data()
    series = data["collectives"]["series"][0]
    series["points"] = [series["points"][0]] * 33
    with pytest.raises(ReportError, match=r"collectives\.series\[0\]\.points has 33 entries"):
        parse_report(data)


def test_the_largest_sweep_the_probe_can_write_still_parses():
    data = _data()
    point = data["matmul"]["points"][0]
    data["matmul"]["points"] = [point] * 384  # 6 dtypes x 2 layouts x 32 --shapes
    assert len(parse_report(data).matmul.points) == 384
    parse_report(_data(h100_workload_report()))


def test_the_bounds_cover_everything_the_probes_can_write():
    pytest.importorskip("torch")
    from probes import _collectives, _matmul, _report_parse, cli
    from probes._schema import LAYOUTS, MATMUL_DTYPES

    assert _report_parse.MAX_LIST >= cli.MAX_LIST
    assert _report_parse.MAX_LIST >= max(len(_matmul.GPU_SHAPES), len(_collectives.GPU_SIZES))
    bounds = _report_parse._BOUNDS
    assert bounds[("MatmulSection", "points")][0] >= (
        len(MATMUL_DTYPES) * len(LAYOUTS) * cli.MAX_LIST)
    assert bounds[("CollectivesSection", "series")][0] >= len(_collectives.OPS) * 2


def test_type_hints_are_resolved_once_per_record_class_not_per_object(monkeypatch):
    data = _data()
    point = data["matmul"]["points"][0]
    data["matmul"]["points"] = [point] * 300
    calls = []
    real = typing.get_type_hints

    def counted(obj, *args, **kwargs):
        calls.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(typing, "get_type_hints", counted)
    parse_report(data)
    parse_report(data)  # the store re-reads every stored report on each command
    assert len(calls) == len(set(calls)) < 30, len(calls)
