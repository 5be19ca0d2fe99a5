"""The team programme's own HiGHS call (``planner.team._highs``) against scipy's ``milp``,
which wraps the same solver: the same optimum, statuses and schedules, its sparse matrix the
same as scipy's, and nothing written to stdout (a report's stdout may be JSON)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.team._highs import Csc, solve_milp

scipy_optimize = pytest.importorskip("scipy.optimize")
scipy_sparse = pytest.importorskip("scipy.sparse")


@st.composite
def triplets(draw):
    n_rows = draw(st.integers(1, 6))
    n_cols = draw(st.integers(1, 7))
    k = draw(st.integers(0, 25))
    rows = draw(st.lists(st.integers(0, n_rows - 1), min_size=k, max_size=k))
    cols = draw(st.lists(st.integers(0, n_cols - 1), min_size=k, max_size=k))
    vals = draw(st.lists(st.integers(-5, 5), min_size=k, max_size=k))
    return np.array(rows), np.array(cols), np.array(vals, dtype=float), n_rows, n_cols


def _dense(m: Csc, n_cols: int) -> np.ndarray:
    out = np.zeros((m.n_rows, n_cols))
    for j in range(n_cols):
        for p in range(m.indptr[j], m.indptr[j + 1]):
            out[m.indices[p], j] += m.data[p]
    return out


@settings(max_examples=60, deadline=None)
@given(triplets(), st.data())
def test_the_matrix_is_scipys(t, data):
    rows, cols, vals, n_rows, n_cols = t
    m = Csc.of(rows, cols, vals, n_rows=n_rows, n_cols=n_cols)
    ref = scipy_sparse.coo_matrix((vals, (rows, cols)), shape=(n_rows, n_cols)).toarray()
    assert np.array_equal(_dense(m, n_cols), ref)
    for j in range(n_cols):  # rows ascending and distinct within each column
        assert np.all(np.diff(m.indices[m.indptr[j]:m.indptr[j + 1]]) > 0)
    ks = np.array(data.draw(st.lists(st.integers(0, n_cols - 1), max_size=6)), dtype=int)
    assert np.array_equal(_dense(m.columns(ks), len(ks)), ref[:, ks])
    keep = np.array(sorted(data.draw(st.sets(st.integers(0, n_rows - 1)))), dtype=int)
    assert np.array_equal(_dense(m.rows_kept(keep), n_cols), ref[keep])


def _random_programme(seed: int):
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 30)), int(rng.integers(1, 8))
    A = rng.integers(0, 6, (m, n)).astype(float) * (rng.random((m, n)) < 0.5)
    c = rng.integers(-20, 20, n).astype(float)
    lb = np.where(rng.random(m) < 0.3, A.sum(1) * 0.2, -np.inf)
    ub = np.where(rng.random(m) < 0.8, A.sum(1) * 0.5, np.inf)
    upper = np.where(rng.random(n) < 0.2, np.inf, rng.integers(1, 4, n).astype(float))
    integ = (rng.random(n) < 0.7).astype(float)
    return c, A, lb, ub, integ, upper


@pytest.mark.parametrize("seed", range(40))
def test_the_optimum_and_status_are_milps(seed):
    c, A, lb, ub, integ, upper = _random_programme(seed)
    r, k = np.nonzero(A)
    ours = solve_milp(c, Csc.of(r, k, A[r, k], n_rows=len(A), n_cols=len(c)), lb, ub, integ,
                      upper, time_limit_s=10.0, gap=1e-9)
    ref = scipy_optimize.milp(c, integrality=integ, bounds=(np.zeros(len(c)), upper),
                              constraints=[scipy_optimize.LinearConstraint(A, lb, ub)],
                              options={"time_limit": 10.0, "mip_rel_gap": 1e-9})
    assert ours.status == ref.status, (ours.message, ref.message)
    assert (ours.x is None) == (ref.x is None)
    if ours.x is not None:
        assert c @ ours.x == pytest.approx(ref.fun, rel=1e-9, abs=1e-9)
        v = A @ ours.x
        assert np.all(v >= lb - 1e-6) and np.all(v <= ub + 1e-6)
        whole = integ > 0
        assert np.allclose(ours.x[whole], np.round(ours.x[whole]), atol=1e-6)


def test_infeasible_is_status_2_without_a_schedule():
    A = Csc.of(np.array([0]), np.array([0]), np.array([1.0]), n_rows=1, n_cols=1)
    res = solve_milp(np.array([1.0]), A, np.array([5.0]), np.array([np.inf]), np.array([1.0]),
                     np.array([2.0]), time_limit_s=5.0, gap=1e-6)
    assert res.status == 2 and res.x is None and "nfeasible" in res.message


def test_the_solver_writes_nothing(capfd):
    c, A, lb, ub, integ, upper = _random_programme(3)
    r, k = np.nonzero(A)
    solve_milp(c, Csc.of(r, k, A[r, k], n_rows=len(A), n_cols=len(c)), lb, ub, integ, upper,
               time_limit_s=5.0, gap=1e-6)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_a_team_plan_imports_no_scipy():
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from planner.team._milp import run_milp, Rows\n"
            "R = Rows([], [], [], [], [], [])\n"
            "R.add(np.array([0, 1]), np.array([1.0, 1.0]), 1.0, 1.0, {'kind': 'job'})\n"
            "res = run_milp(np.array([2.0, 1.0]), R, 2, np.ones(2), np.ones(2),\n"
            "               time_limit_s=5.0, gap=1e-6)\n"
            "assert res.status == 0 and list(res.x) == [0.0, 1.0], res\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
