"""The stored form of a sparse MILP: columns, rows in CSR pieces, and the objective.

:class:`SparseModel` holds what an emitter reads (:mod:`._highs`, :mod:`._scip`)
and its primitive edits: columns with bounds and integrality
(:meth:`~SparseModel.add_var`), rows ``lo <= a.x <= hi``
(:meth:`~SparseModel.add_range`, the vectorised :meth:`~SparseModel.add_rows`,
:meth:`~SparseModel.remove_rows`), a linear objective with diagonal quadratic
terms, and :meth:`~SparseModel.freeze` (rows packed once, shared by copies).
The modelling layer, :class:`~counterfact.solvers._milp.Model`, builds on it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, Self

import numpy as np

from ._expr import Expr, Term, Var, as_expr

__all__ = ["INF", "SparseModel"]

INF = math.inf


class SparseModel:
    """Columns, rows and objective of a MILP / MIQP, stored sparse (module docstring)."""

    def __init__(self, name: str = "") -> None:
        self.name = name
        self._lb: list[float] = []
        self._ub: list[float] = []
        self._int: list[bool] = []
        self._names: list[str] = []
        # rows as CSR pieces
        self._row_idx: list[np.ndarray] = []
        self._row_val: list[np.ndarray] = []
        self._row_lo: list[float] = []
        self._row_hi: list[float] = []
        self._obj = Expr()
        self._quad: dict[int, float] = {}
        # rows [0, _frozen_n) held as one CSR block (freeze()), shared by copies
        self._frozen: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._frozen_n = 0

    def freeze(self) -> None:
        """Pack the rows added so far into one CSR block (shared read-only by
        :meth:`copy`), so that emitting a copy of a large per-model template does
        not re-concatenate its rows on every solve.  Rows keep their indices."""
        start, index, value = self._csr()
        self._frozen = (start, index, value)
        self._frozen_n = self.n_rows
        self._row_idx, self._row_val = [], []

    def _thaw(self) -> None:
        if self._frozen is None:
            return
        start, index, value = self._frozen
        idx = [index[start[r] : start[r + 1]] for r in range(self._frozen_n)]
        val = [value[start[r] : start[r + 1]] for r in range(self._frozen_n)]
        self._row_idx, self._row_val = idx + self._row_idx, val + self._row_val
        self._frozen, self._frozen_n = None, 0

    # ........................................................... columns
    @property
    def n_vars(self) -> int:
        return len(self._lb)

    @property
    def n_rows(self) -> int:
        return len(self._row_lo)

    @property
    def n_integer(self) -> int:
        return int(sum(self._int))

    def add_var(
        self, lb: float = 0.0, ub: float = INF, *, integer: bool = False, name: str = ""
    ) -> Var:
        """A new variable with bounds ``[lb, ub]`` (``-inf``/``inf`` allowed)."""
        lb, ub = float(lb), float(ub)
        if integer:
            lb = math.ceil(lb - 1e-9) if math.isfinite(lb) else lb
            ub = math.floor(ub + 1e-9) if math.isfinite(ub) else ub
        self._lb.append(lb)
        self._ub.append(ub)
        self._int.append(bool(integer))
        self._names.append(name)
        return Var(len(self._lb) - 1)

    def add_binary(self, name: str = "") -> Var:
        return self.add_var(0.0, 1.0, integer=True, name=name)

    def add_vars(
        self, n: int, lb: Any = 0.0, ub: Any = INF, *, integer: bool = False, name: str = ""
    ) -> list[Var]:
        """``n`` variables; ``lb``/``ub`` scalars or arrays of length ``n``."""
        lbs = np.broadcast_to(np.asarray(lb, dtype=float), (n,))
        ubs = np.broadcast_to(np.asarray(ub, dtype=float), (n,))
        return [
            self.add_var(lbs[k], ubs[k], integer=integer, name=f"{name}{k}" if name else "")
            for k in range(n)
        ]

    def copy(self) -> Self:
        """An independent copy of the same class (rows are shared read-only arrays)."""
        out = type(self)(self.name)
        out._lb, out._ub, out._int, out._names = (
            list(self._lb),
            list(self._ub),
            list(self._int),
            list(self._names),
        )
        out._row_idx, out._row_val = list(self._row_idx), list(self._row_val)
        out._row_lo, out._row_hi = list(self._row_lo), list(self._row_hi)
        out._frozen, out._frozen_n = self._frozen, self._frozen_n
        out._obj = self._obj.copy()
        out._quad = dict(self._quad)
        return out

    def fix_integers(self, x: np.ndarray) -> None:
        """Fix every integer variable at its (rounded) value in ``x`` and make it
        continuous: what is left is an LP / convex QP over the continuous part."""
        for k, is_int in enumerate(self._int):
            if is_int:
                v = float(np.round(x[k]))
                v = min(max(v, self._lb[k]), self._ub[k])
                self._lb[k] = self._ub[k] = v
                self._int[k] = False

    def var_bounds(self, v: Var) -> tuple[float, float]:
        return self._lb[v.index], self._ub[v.index]

    def set_bounds(self, v: Var, lb: float, ub: float) -> None:
        self._lb[v.index], self._ub[v.index] = float(lb), float(ub)

    def is_integer(self, v: Var) -> bool:
        return self._int[v.index]

    # ................................................................ rows
    def add_range(self, e: Term, lo: float, hi: float) -> int:
        """Row ``lo <= e <= hi``; returns its index."""
        ex = e if isinstance(e, Expr) else as_expr(e)
        terms = {k: v for k, v in ex.terms.items() if v != 0.0}
        lo = float(lo) - ex.const
        hi = float(hi) - ex.const
        if not terms:
            if lo > 1e-9 or hi < -1e-9:
                # an infeasible constant row: keep it so the solver reports infeasibility
                z = self.add_var(0.0, 0.0)
                terms = {z.index: 1.0}
            else:
                return -1
        idx = np.fromiter(terms.keys(), dtype=np.int64, count=len(terms))
        val = np.fromiter(terms.values(), dtype=float, count=len(terms))
        self._row_idx.append(idx)
        self._row_val.append(val)
        self._row_lo.append(lo)
        self._row_hi.append(hi)
        return len(self._row_lo) - 1

    def add_rows(self, cols: Sequence[Var], A: Any, lo: Any, hi: Any) -> None:
        """Vectorised rows ``lo <= A @ x[cols] <= hi`` (``A`` dense or scipy sparse)."""
        import scipy.sparse as sp

        M = sp.csr_matrix(A)
        colidx = np.array([v.index for v in cols], dtype=np.int64)
        lo = np.broadcast_to(np.asarray(lo, dtype=float), (M.shape[0],))
        hi = np.broadcast_to(np.asarray(hi, dtype=float), (M.shape[0],))
        for r in range(M.shape[0]):
            s, e = M.indptr[r], M.indptr[r + 1]
            self._row_idx.append(colidx[M.indices[s:e]])
            self._row_val.append(np.asarray(M.data[s:e], dtype=float))
            self._row_lo.append(float(lo[r]))
            self._row_hi.append(float(hi[r]))

    def remove_rows(self, rows: Iterable[int]) -> None:
        """Delete rows by index (later row indices shift down)."""
        drop = set(rows)
        if self._frozen is not None and any(r < self._frozen_n for r in drop):
            self._thaw()
        f = self._frozen_n
        keep = [r - f for r in range(f, self.n_rows) if r not in drop]
        self._row_idx = [self._row_idx[r] for r in keep]
        self._row_val = [self._row_val[r] for r in keep]
        keep = list(range(f)) + [r + f for r in keep]
        self._row_lo = [self._row_lo[r] for r in keep]
        self._row_hi = [self._row_hi[r] for r in keep]

    # ........................................................... objective
    @property
    def has_quadratic(self) -> bool:
        return any(v != 0.0 for v in self._quad.values())

    def objective_value(self, x: np.ndarray) -> float:
        """Objective (linear + quadratic) at ``x``."""
        val = self._obj.const + sum(c * x[k] for k, c in self._obj.terms.items())
        return float(val + sum(q * x[k] ** 2 for k, q in self._quad.items()))

    # internal: the matrix in CSR form
    def _csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self._row_idx:
            if self._frozen is not None:
                return self._frozen
            return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        lens = np.fromiter(
            (len(a) for a in self._row_idx), dtype=np.int64, count=len(self._row_idx)
        )
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        index, value = np.concatenate(self._row_idx), np.concatenate(self._row_val)
        if self._frozen is not None:
            fs, fi, fv = self._frozen
            start = np.concatenate([fs[:-1], start + fs[-1]])
            index, value = np.concatenate([fi, index]), np.concatenate([fv, value])
        return start, index, value
