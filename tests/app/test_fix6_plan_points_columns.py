"""What the Plan page leaves in Streamlit's cache is compact: the chart's points (every plan
priced, tens of thousands over many GPUs) are kept as columns, not one dict per plan. As dicts
a plan over 65,536 GPUs with 1 M-token sequences (86,110 points) took 16 MB of the cache (88 MB
unpickled, on every rerun); as columns 6.9 MB (9 MB). Read back they are the same points, and
the chart drawn from them is the same chart."""

from __future__ import annotations

import json
import math
import pickle

from ._apptest import app, assert_clean

# 16,384 GPUs, a 1 M-token sequence, 1 hour: ~14,000 plans in about a second
BIG = {"max_gpus": "16384", "seq_len": "1048576", "deadline": "1h"}
# a dict per point pickled to ~175 bytes (the 17 fields of a PlanPoint, the texts again each
# time); as columns ~72 bytes
MOST_BYTES_PER_POINT = 100


def _cached(monkeypatch, **query: str) -> dict:
    """What ``cached_plan`` returned (a copy of what Streamlit's cache holds) when the Plan
    page was opened with ``query``."""
    from app_pages import _shared as S

    got: list[dict] = []
    cached = S.cached_plan

    def plan(*args, **kwargs):
        got.append(cached(*args, **kwargs))
        return got[-1]

    monkeypatch.setattr(S, "cached_plan", plan)
    at = app(**query)
    assert_clean(at)
    return got[-1]


def test_a_big_plan_keeps_its_points_compact_in_the_cache(monkeypatch):
    out = _cached(monkeypatch, **BIG)
    points = out["result"]["points"]
    assert len(points) > 10_000
    size = len(pickle.dumps(points))
    assert size <= MOST_BYTES_PER_POINT * len(points), (size, len(points))
    # the rest of the result is as it was: plain JSON data
    rest = {k: v for k, v in out["result"].items() if k != "points"}
    assert json.loads(json.dumps(rest)) == rest


def test_the_points_read_back_as_they_were_and_draw_the_same_chart(monkeypatch):
    from app_pages._plan_charts import PointColumns, frontier_chart, plan_points

    out = _cached(monkeypatch, model="llama2-7b", tokens="1T", deadline="14d")
    result, deadline = out["result"], out["deadline_hours"]
    dicts = list(result["points"])
    assert dicts and all(type(p) is dict for p in dicts)
    assert set(dicts[0]) >= {"cloud", "region", "instance_type", "accelerator", "pricing",
                             "nodes", "gpus", "wall_clock_hours", "total_cost_usd",
                             "meets_deadline", "within_limits", "on_frontier"}
    kept = pickle.loads(pickle.dumps(PointColumns(dicts)))
    assert list(kept) == dicts and kept == dicts
    # field for field, each of its own type (a flag is a bool, a count an int)
    for a, b in zip(kept, dicts, strict=True):
        assert list(a.items()) == list(b.items())
        assert [type(v) for v in a.values()] == [type(v) for v in b.values()]
    assert kept[0] == dicts[0] and kept[-1] == dicts[-1] and kept[1:3] == dicts[1:3]
    as_list = dict(result, points=dicts)
    assert plan_points(result) == plan_points(as_list)
    assert frontier_chart(result, deadline).to_json() == \
        frontier_chart(as_list, deadline).to_json()


def test_columns_keep_every_value_exactly():
    """Whatever the values (a float with all its digits, inf, a count past 32 bits, a text
    met once, a field that is sometimes None), they come back as they went in."""
    from app_pages._plan_charts import PointColumns, compact

    points = [{"cloud": "aws", "nodes": 1, "w": 0.1 + 0.2, "ok": True, "note": None},
              {"cloud": "gcp", "nodes": 2**40, "w": math.inf, "ok": False, "note": "x"},
              {"cloud": "aws", "nodes": -3, "w": 1e-300, "ok": True, "note": None}]
    kept = pickle.loads(pickle.dumps(compact(points)))
    assert isinstance(kept, PointColumns)
    assert list(kept) == points and len(kept) == 3
    assert kept[-1] == points[-1] and kept[::2] == points[::2]
    # points whose keys differ are left as they are
    mixed = [{"a": 1}, {"b": 2}]
    assert compact(mixed) is mixed
