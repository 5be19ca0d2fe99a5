"""Shape evaluations kept on disk between processes (``planner.search._kept``): a plan read
from them is the computed plan to the last digit, and anything odd about an entry — damaged,
made by other code, forged, in a read-only directory, turned off — means computing, never an
error or another answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache directory of this test's own, and nothing kept in memory."""
    monkeypatch.setenv("GPUPLAN_CACHE_DIR", str(tmp_path / "cache"))
    _forget()
    yield tmp_path / "cache"
    _forget()


@pytest.fixture
def model_runs(monkeypatch):
    """How many shapes the model timed (rather than read from disk)."""
    from planner.search import _evaluate

    calls = []
    real = _evaluate._evaluate

    def counted(*args, **kwargs):
        calls.append(args[1:4])
        return real(*args, **kwargs)

    monkeypatch.setattr(_evaluate, "_evaluate", counted)
    return calls


def _plan(catalog, **spec):
    from planner import Constraints, WorkloadSpec, build_workload, plan

    w = build_workload(WorkloadSpec(**{"model": "llama2-7b", "tokens": "200B", **spec}))
    c = Constraints(deadline_hours=240, max_gpus=128, clouds=("aws", "gcp"))
    return json.dumps(plan(w, catalog, c, points=True).as_dict(points=True), default=str)


def _entries(cache: Path) -> list[Path]:
    return sorted(cache.glob("eval-*.bin"))


def _forget():
    from planner.search import _optimizer

    _optimizer.clear_caches()  # what a new process starts with


def test_a_plan_from_kept_evaluations_is_the_computed_plan(catalog, cache, model_runs):
    computed = _plan(catalog)
    timed = len(model_runs)
    assert timed > 5 and len(_entries(cache)) >= timed
    _forget()
    assert _plan(catalog) == computed
    assert len(model_runs) == timed  # every shape came from disk


def test_other_inputs_are_other_entries(catalog, cache, model_runs):
    _plan(catalog)
    timed, kept = len(model_runs), len(_entries(cache))
    _forget()
    _plan(catalog, seq_len=2048)  # another workload shape: nothing kept applies
    assert len(model_runs) == 2 * timed and len(_entries(cache)) > kept
    _forget()
    _plan(catalog, tokens="400B")  # tokens are not part of a shape: all kept
    assert len(model_runs) == 2 * timed


def test_damaged_entries_are_recomputed(catalog, cache, model_runs):
    computed = _plan(catalog)
    timed = len(model_runs)
    for path in _entries(cache):
        data = bytearray(path.read_bytes())
        data[-3] ^= 0xFF  # a flipped bit in the payload
        path.write_bytes(bytes(data))
    os.truncate(_entries(cache)[0], 40)
    _forget()
    assert _plan(catalog) == computed
    assert len(model_runs) == 2 * timed


def test_entries_of_other_code_are_not_read(catalog, cache, model_runs, monkeypatch):
    from planner.search import _kept

    computed = _plan(catalog)
    timed = len(model_runs)
    monkeypatch.setattr(_kept, "_code", [b"another gpuplan"])
    _forget()
    assert _plan(catalog) == computed
    assert len(model_runs) == 2 * timed


def test_turned_off_reads_and_writes_nothing(catalog, cache, model_runs, monkeypatch):
    monkeypatch.setenv("GPUPLAN_NO_CACHE", "1")
    _plan(catalog)
    _forget()
    _plan(catalog)
    assert not cache.exists() or not _entries(cache)
    assert len(model_runs) > 5 and len(model_runs) % 2 == 0


def test_a_read_only_cache_directory_just_means_computing(catalog, cache, model_runs,
                                                         read_only_filesystem):
    computed = _plan(catalog)
    assert not cache.exists() or not _entries(cache)
    _forget()
    assert _plan(catalog) == computed


def test_the_entry_names_do_not_depend_on_the_hash_seed(tmp_path):
    """Sets in a key are written sorted: two processes with other string hash seeds keep the
    same entries (else every run would miss)."""
    code = ("import catalog; from planner import Constraints, WorkloadSpec, build_workload, "
            "plan; plan(build_workload(WorkloadSpec(model='gpt2', tokens='1B', "
            "recompute='selective')), catalog.load_catalog(), Constraints(deadline_hours=24, "
            "max_gpus=16, clouds=('aws',)))")
    names = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed,
               "GPUPLAN_CACHE_DIR": str(tmp_path / seed)}
        subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env,
                       capture_output=True)
        names.append([p.name for p in _entries(tmp_path / seed)])
    assert names[0] and names[0] == names[1]


def test_canonical_text_sorts_sets_and_refuses_records():
    from planner.search._kept import canonical

    assert canonical((1, frozenset({"b", "a"}), 0.1)) == "(1,{'a','b'},0.1)"
    with pytest.raises(TypeError):
        canonical(({"a": 1},))


def test_descriptions_kept_for_a_workload_are_what_describing_gives(catalog, cache):
    """A later plan of one workload (another deadline, budget or token count: the app's
    reruns) reuses the candidates' estimates and calendar quantiles kept on the layout; each
    answer is the one a fresh process computes, and past KEPT_WORKLOADS workloads the kept
    descriptions are dropped, not grown."""
    from planner import Constraints, WorkloadSpec, build_workload, plan
    from planner.search import _optimizer, _result

    def answer(tokens: str, deadline: float) -> str:
        w = build_workload(WorkloadSpec(model="llama2-7b", tokens=tokens))
        c = Constraints(deadline_hours=deadline, max_gpus=128, clouds=("aws", "gcp"))
        return json.dumps(plan(w, catalog, c, points=True).as_dict(points=True), default=str)

    runs = [("200B", 240.0), ("200B", 120.0), ("300B", 240.0), ("200B", 240.0)]
    warm = [answer(*r) for r in runs]
    fresh = []
    for r in runs:
        _forget()
        fresh.append(answer(*r))
    assert warm == fresh
    kept = [_result._kept(hit[1]) for hit in _optimizer._LAYOUTS.data.values()]
    assert kept and all(len(k._ids) <= _result.KEPT_WORKLOADS for k in kept)
    for tokens in ("1B", "2B", "3B", "4B", "5B", "6B"):
        answer(tokens, 240.0)
    assert all(len(k._ids) <= _result.KEPT_WORKLOADS and len(k.estimates) < 2_000
               for k in (_result._kept(hit[1]) for hit in _optimizer._LAYOUTS.data.values()))
