"""The team programme's solver: HiGHS through its own Python binding (``highspy``).

scipy's ``milp`` wraps the same HiGHS, but importing ``scipy.optimize`` (and
``scipy.sparse`` for its matrix) took 0.45–0.7 s of a 50-job team report whose solve takes
0.1 s (issue #19); ``highspy`` imports in ~10 ms. The result keeps ``milp``'s status codes
(scipy/optimize/_linprog_highs.py ``_highs_to_scipy_status_message``: 0 optimal, 1 a time
or iteration limit, 2 infeasible, 3 unbounded, 4 anything else) and, as ``milp``, a schedule
only where HiGHS has a feasible one (optimal, or stopped by a limit with a finite
objective). The matrix is built here in column-wise form (``Csc``) from the programme's rows.
"""

from __future__ import annotations

import numpy as np

from catalog import record


@record(kw_only=False)
class Csc:
    """A sparse matrix by columns: column j's entries are ``indices``/``data`` over
    ``indptr[j]:indptr[j + 1]``, rows ascending, duplicate (row, column) entries summed."""

    indptr: np.ndarray
    indices: np.ndarray
    data: np.ndarray
    n_rows: int

    @classmethod
    def of(cls, rows: np.ndarray, cols: np.ndarray, vals: np.ndarray, *, n_rows: int,
           n_cols: int) -> Csc:
        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=float)
        order = np.lexsort((rows, cols))
        rows, cols, vals = rows[order], cols[order], vals[order]
        if len(rows):  # sum repeated (row, column) entries, as a COO-to-CSC conversion does
            first = np.r_[True, (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])]
            starts = np.flatnonzero(first)
            vals = np.add.reduceat(vals, starts)
            rows, cols = rows[starts], cols[starts]
        indptr = np.r_[0, np.cumsum(np.bincount(cols, minlength=n_cols))]
        return cls(indptr=indptr, indices=rows, data=vals, n_rows=n_rows)

    def columns(self, ks: np.ndarray) -> Csc:
        """The columns ``ks``, in that order."""
        ks = np.asarray(ks, dtype=np.int64)
        lengths = self.indptr[ks + 1] - self.indptr[ks]
        take = (np.concatenate([np.arange(self.indptr[k], self.indptr[k + 1]) for k in ks])
                if len(ks) else np.zeros(0, dtype=np.int64))
        return Csc(indptr=np.r_[0, np.cumsum(lengths)], indices=self.indices[take],
                   data=self.data[take], n_rows=self.n_rows)

    def rows_kept(self, keep: np.ndarray) -> Csc:
        """Only the rows ``keep`` (ascending), renumbered 0, 1, … in that order."""
        new = np.full(self.n_rows, -1, dtype=np.int64)
        new[keep] = np.arange(len(keep))
        mask = new[self.indices] >= 0
        n_cols = len(self.indptr) - 1
        col = np.repeat(np.arange(n_cols), np.diff(self.indptr))
        counts = np.bincount(col[mask], minlength=n_cols)
        return Csc(indptr=np.r_[0, np.cumsum(counts)], indices=new[self.indices[mask]],
                   data=self.data[mask], n_rows=len(keep))


@record(kw_only=False)
class MilpResult:
    status: int  # scipy.optimize.milp's codes (module docstring)
    x: np.ndarray | None  # a feasible schedule, or None
    message: str
    mip_gap: float | None


def solve_milp(c: np.ndarray, A: Csc, row_lb: np.ndarray, row_ub: np.ndarray,
               integrality: np.ndarray, upper: np.ndarray, *, time_limit_s: float,
               gap: float) -> MilpResult:
    """min c·x subject to row_lb ≤ A·x ≤ row_ub, 0 ≤ x ≤ upper, x integer where
    ``integrality`` is 1. Silent: HiGHS logs nothing (a report's stdout may be JSON)."""
    import highspy

    inf = highspy.kHighsInf
    n = len(c)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, A.n_rows
    lp.col_cost_ = np.asarray(c, dtype=float)
    lp.col_lower_ = np.zeros(n)
    lp.col_upper_ = np.where(np.isinf(upper), inf, np.asarray(upper, dtype=float))
    lp.row_lower_ = np.where(np.isinf(row_lb), -inf, np.asarray(row_lb, dtype=float))
    lp.row_upper_ = np.where(np.isinf(row_ub), inf, np.asarray(row_ub, dtype=float))
    m = lp.a_matrix_
    m.format_ = highspy.MatrixFormat.kColwise
    m.num_col_, m.num_row_ = n, A.n_rows
    m.start_, m.index_, m.value_ = A.indptr, A.indices, A.data
    is_mip = bool(np.any(integrality))
    if is_mip:
        lp.integrality_ = [highspy.HighsVarType.kInteger if v else
                           highspy.HighsVarType.kContinuous for v in integrality]
    # the binding's own Highs class prints a licence banner on stdout when made; the core
    # class beneath it (which it extends with callbacks) prints nothing with output_flag off
    h = highspy._Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("time_limit", float(time_limit_s))
    h.setOptionValue("mip_rel_gap", float(gap))
    h.setOptionValue("presolve", "on")
    S = highspy.HighsModelStatus
    if h.passModel(lp) == highspy.HighsStatus.kError:
        return MilpResult(status=4, x=None, message="HiGHS refused the model", mip_gap=None)
    h.run()  # releases the GIL: the caller's Ctrl-C thread keeps running (_milp)
    status = h.getModelStatus()
    info = h.getInfo()
    code = {S.kOptimal: 0, S.kTimeLimit: 1, S.kIterationLimit: 1, S.kSolutionLimit: 1,
            S.kInfeasible: 2, S.kUnbounded: 3}.get(status, 4)
    limited = status in (S.kTimeLimit, S.kIterationLimit, S.kSolutionLimit)
    feasible = status == S.kOptimal or (is_mip and limited
                                        and info.objective_function_value != inf)
    message = f"{h.modelStatusToString(status)} (HiGHS status {int(status)})"
    x = np.array(h.getSolution().col_value) if feasible else None
    return MilpResult(status=code, x=x, message=message,
                      mip_gap=float(info.mip_gap) if is_mip and feasible else None)
