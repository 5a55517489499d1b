"""A thin in-house sparse mixed-integer model layer, solved by HiGHS or SCIP.

No Pyomo on the hot path (``reference/solvers.md`` §5.8: Pyomo added 0.1-1 s
per forest model).  A :class:`Model` holds

* variables with bounds and integrality (:meth:`Model.add_var`, :meth:`Model.add_binary`);
* linear rows ``lo <= a.x <= hi`` (:meth:`Model.add_le`, ``add_ge``, ``add_eq``,
  ``add_range``, and the vectorised :meth:`Model.add_rows` for big blocks such
  as a trust region's hull);
* a linear objective plus optional diagonal quadratic terms
  (:meth:`Model.add_objective`, :meth:`Model.add_square`), always minimised.

Expressions are :class:`Var` / :class:`Expr` objects with ``+ - *`` (by a
number); :func:`quicksum` and :func:`lin` build long sums fast.

Helpers derive big-M constants from the variables' bounds (never a guessed
constant; an unbounded variable in an indicator is an error):
:meth:`Model.bounds_of` (interval arithmetic), :meth:`Model.add_indicator`
(``b == 1  =>  expr <= rhs`` and friends), :meth:`Model.add_abs`,
:meth:`Model.add_relu` (big-M ReLU, stable units fixed) and
:meth:`Model.add_pwl_square` (the secant interpolant of ``expr**2``, an LP
representable over-approximation for backends without MIQP).

:meth:`Model.solve` emits the model to a fresh solver and returns a
:class:`Solution` (status, objective, bound, gap, nodes, time, values, and the
solver's store of other incumbents).  Backends:

* ``"highs"`` (``highspy``, default): ``threads=1``, ``mip_rel_gap=1e-6``.
  HiGHS solves LPs, MILPs and convex QPs *without* integer variables; a model
  with both quadratic terms and integer variables raises :class:`SolverError`
  (use :meth:`Model.add_pwl_square` instead).  Its store holds the improving
  incumbents (``mip_improving_solution_save``).
* ``"scip"`` (``pyscipopt``): gap limit 1e-6; quadratic terms go into one
  convex quadratic row over an epigraph variable (MIQP is fine).  Its store
  (``getSols``) holds up to ``limits/maxsol`` solutions.

Statuses: ``optimal`` (proven within the gap), ``feasible`` (an incumbent, not
proven: time limit or another limit), ``infeasible``, ``timeout`` (limit hit
with no incumbent), ``unbounded``, ``error``.

Example
-------
>>> m = Model()
>>> x = m.add_var(0, 10, integer=True); y = m.add_var(0, 10)
>>> _ = m.add_ge(x + y, 3.5)
>>> m.add_objective(2 * x + y)
>>> m.solve().objective
3.5
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._utils._deps import import_optional
from ..exceptions import CounterfactError
from ._mip_expr import Expr, Term, Var, as_expr, lin, quicksum

__all__ = ["BACKENDS", "Expr", "Model", "Solution", "SolverError", "Var", "lin", "quicksum"]

BACKENDS = ("highs", "scip")
INF = math.inf


class SolverError(CounterfactError, RuntimeError):
    """A model cannot be emitted or solved (unbounded big-M, MIQP on HiGHS, bad backend)."""


# ---------------------------------------------------------------------- model
@dataclass
class Solution:
    """What a solve returned.

    ``x`` holds every variable's value (``None`` without a solution);
    ``pool`` the other stored incumbents (value vectors, best first, the
    returned one excluded).  ``gap`` is the relative MIP gap (0 when proven
    optimal, ``inf`` when unknown).
    """

    status: str
    backend: str
    objective: float = math.nan
    bound: float = math.nan
    gap: float = math.inf
    nodes: int = 0
    seconds: float = 0.0
    x: np.ndarray | None = None
    pool: list[np.ndarray] = field(default_factory=list)
    message: str = ""

    @property
    def has_solution(self) -> bool:
        return self.x is not None

    def value(self, e: Term, x: np.ndarray | None = None) -> float:
        """Value of a variable or expression in this solution (or in ``x``)."""
        x = self.x if x is None else x
        if x is None:
            raise SolverError(f"The solve ended with status {self.status!r} and has no solution to read.")
        ex = as_expr(e)
        return float(sum(c * x[k] for k, c in ex.terms.items()) + ex.const)


class Model:
    """A sparse MILP (or MIQP) being built; see the module docstring."""

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

    # ........................................................... variables
    @property
    def n_vars(self) -> int:
        return len(self._lb)

    @property
    def n_rows(self) -> int:
        return len(self._row_lo)

    @property
    def n_integer(self) -> int:
        return int(sum(self._int))

    def add_var(self, lb: float = 0.0, ub: float = INF, *, integer: bool = False, name: str = "") -> Var:
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

    def add_vars(self, n: int, lb: Any = 0.0, ub: Any = INF, *, integer: bool = False, name: str = "") -> list[Var]:
        """``n`` variables; ``lb``/``ub`` scalars or arrays of length ``n``."""
        lbs = np.broadcast_to(np.asarray(lb, dtype=float), (n,))
        ubs = np.broadcast_to(np.asarray(ub, dtype=float), (n,))
        return [self.add_var(lbs[k], ubs[k], integer=integer, name=f"{name}{k}" if name else "") for k in range(n)]

    def copy(self) -> Model:
        """An independent copy (rows are shared read-only arrays)."""
        out = Model(self.name)
        out._lb, out._ub, out._int, out._names = list(self._lb), list(self._ub), list(self._int), list(self._names)
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

    def bounds_of(self, e: Term) -> tuple[float, float]:
        """Interval bounds of an expression from the variables' bounds."""
        ex = e if isinstance(e, Expr) else as_expr(e)
        lo = hi = ex.const
        for k, c in ex.terms.items():
            if c > 0:
                lo += c * self._lb[k]
                hi += c * self._ub[k]
            elif c < 0:
                lo += c * self._ub[k]
                hi += c * self._lb[k]
        return lo, hi

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

    def add_le(self, e: Term, rhs: Term = 0.0) -> int:
        """Row ``e <= rhs`` (``rhs`` may be an expression)."""
        if isinstance(rhs, (Var, Expr)):
            return self.add_range(as_expr(e) - rhs, -INF, 0.0)
        return self.add_range(e, -INF, float(rhs))

    def add_ge(self, e: Term, rhs: Term = 0.0) -> int:
        """Row ``e >= rhs``."""
        if isinstance(rhs, (Var, Expr)):
            return self.add_range(as_expr(e) - rhs, 0.0, INF)
        return self.add_range(e, float(rhs), INF)

    def add_eq(self, e: Term, rhs: Term = 0.0) -> int:
        """Row ``e == rhs``."""
        if isinstance(rhs, (Var, Expr)):
            return self.add_range(as_expr(e) - rhs, 0.0, 0.0)
        return self.add_range(e, float(rhs), float(rhs))

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

    # ........................................................... objective
    def add_objective(self, e: Term) -> None:
        """Add a linear term to the objective (minimised)."""
        self._obj._iadd(e, 1.0)

    def add_square(self, e: Term, weight: float = 1.0) -> None:
        """Add ``weight * e**2`` to the objective; ``e`` must be ``a*x + c`` (one variable)."""
        ex = as_expr(e)
        if len(ex.terms) != 1:
            raise SolverError(f"add_square takes a one-variable affine expression. Got {ex!r}.")
        (k, a), = ex.terms.items()
        c = ex.const
        w = float(weight)
        self._quad[k] = self._quad.get(k, 0.0) + w * a * a
        self._obj.terms[k] = self._obj.terms.get(k, 0.0) + 2.0 * w * a * c
        self._obj.const += w * c * c

    @property
    def has_quadratic(self) -> bool:
        return any(v != 0.0 for v in self._quad.values())

    def objective_value(self, x: np.ndarray) -> float:
        """Objective (linear + quadratic) at ``x``."""
        val = self._obj.const + sum(c * x[k] for k, c in self._obj.terms.items())
        return float(val + sum(q * x[k] ** 2 for k, q in self._quad.items()))

    # ............................................................. helpers
    def _big_m(self, e: Expr, what: str) -> tuple[float, float]:
        lo, hi = self.bounds_of(e)
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise SolverError(
                f"Cannot derive a big-M for {what}: the expression {e!r} is unbounded "
                f"(bounds [{lo}, {hi}]). Give every variable in it finite bounds."
            )
        return lo, hi

    def add_indicator(self, b: Var, e: Term, sense: str, rhs: float, *, active: int = 1) -> None:
        """``b == active  =>  e <sense> rhs`` (``sense`` in ``"<=", ">=", "=="``), big-M
        from the bounds of ``e``; nothing is added where the implication always holds."""
        ex = as_expr(e)
        lo, hi = self._big_m(ex, "an indicator")
        # slack(b) = 1 - b (active=1) or b (active=0): row holds when slack is 0
        off = (1 - b) if active == 1 else as_expr(b)
        if sense in ("<=", "=="):
            M = hi - rhs
            if M > 0:
                self.add_le(ex - M * off, rhs)  # e <= rhs + M*off
        if sense in (">=", "=="):
            M = rhs - lo
            if M > 0:
                self.add_ge(ex + M * off, rhs)  # e >= rhs - M*off
        if sense not in ("<=", ">=", "=="):
            raise SolverError(f"Indicator sense must be '<=', '>=' or '=='. Got {sense!r}.")

    def add_abs(self, e: Term, *, name: str = "") -> Var:
        """A variable ``t >= |e|`` (tight when ``t`` is minimised or bounded from above)."""
        ex = as_expr(e)
        lo, hi = self.bounds_of(ex)
        t = self.add_var(0.0, max(abs(lo), abs(hi)), name=name)
        if hi > 0:
            self.add_ge(t - ex, 0.0)
        if lo < 0:
            self.add_ge(t + ex, 0.0)
        return t

    def add_relu(self, e: Term, lo: float | None = None, hi: float | None = None, *, name: str = "") -> Expr:
        """``h = max(0, e)`` with big-M from ``[lo, hi]`` (pre-activation bounds; derived
        from the variables when not given).  Stable units need no binary: returns
        ``e`` itself when ``lo >= 0`` and the constant 0 when ``hi <= 0``."""
        ex = as_expr(e)
        blo, bhi = self.bounds_of(ex)
        lo = blo if lo is None else max(float(lo), blo)
        hi = bhi if hi is None else min(float(hi), bhi)
        if lo >= 0:
            return ex
        if hi <= 0:
            return Expr()
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise SolverError(f"ReLU pre-activation {ex!r} is unbounded; cannot encode it with big-M.")
        h = self.add_var(0.0, hi, name=name)
        z = self.add_binary(name=f"{name}_on" if name else "")
        self.add_ge(h - ex, 0.0)  # h >= e
        self.add_le(h - ex + lo * (1 - z), 0.0)  # h <= e - lo*(1-z)
        self.add_le(h - hi * z, 0.0)  # h <= hi*z
        return h.expr()

    @staticmethod
    def pwl_breakpoints(lo: float, hi: float, segments: int = 32) -> np.ndarray:
        """Default breakpoints of :meth:`add_pwl_square`: uniform, plus a quadratically
        refined grid around 0 (where counterfactual changes concentrate)."""
        grid = np.linspace(lo, hi, segments + 1)
        near = np.concatenate([-(np.linspace(0, 1, 9) ** 2), np.linspace(0, 1, 9) ** 2]) * (hi - lo) / 8
        extra = [0.0] if lo < 0 < hi else []
        return np.unique(np.concatenate([grid, near[(near > lo) & (near < hi)], extra]))

    def add_pwl_square(
        self,
        e: Term,
        lo: float,
        hi: float,
        *,
        segments: int = 32,
        points: np.ndarray | None = None,
        t: Var | None = None,
        name: str = "",
    ) -> Var:
        """A variable ``t >= interp(e**2)``: the secant interpolant of ``e**2`` on
        breakpoints over ``[lo, hi]`` (:meth:`pwl_breakpoints`, or ``points``).

        The interpolant is convex, so it is the maximum of its secants and
        needs no binaries; it is exact at breakpoints and over-estimates by at
        most ``h**2 / 4`` on a segment of width ``h``.  Pass ``t`` to re-use an
        epigraph variable (after :meth:`remove_rows` of its old secants).
        """
        ex = as_expr(e)
        lo, hi = float(lo), float(hi)
        if t is None:
            t = self.add_var(0.0, max(lo * lo, hi * hi), name=name)
        if hi - lo <= 0:
            self.add_ge(t, lo * lo)
            return t
        pts = self.pwl_breakpoints(lo, hi, segments) if points is None else np.unique(np.clip(points, lo, hi))
        for a, b in itertools.pairwise(pts):
            # secant through (a, a^2), (b, b^2): t >= (a+b) e - a b
            self.add_ge(t - (a + b) * ex, -a * b)
        return t

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

    # ............................................................... solve
    def solve(
        self,
        backend: str = "highs",
        *,
        time_limit: float | None = None,
        gap: float = 1e-6,
        threads: int = 1,
        seed: int = 0,
        feastol: float | None = None,
        keep_solutions: bool = False,
        max_solutions: int = 100,
        verbose: bool = False,
        options: dict[str, Any] | None = None,
        start: dict[int, float] | np.ndarray | None = None,
    ) -> Solution:
        """Emit to a fresh solver, solve, and read the answer back.

        Parameters
        ----------
        backend : {"highs", "scip"}
        time_limit : float, optional
            Seconds (wall clock, the solver's own timer).
        gap : float
            Relative MIP gap at which a solution counts as optimal.
        threads : int
            HiGHS threads (SCIP is single-threaded).
        seed : int
            Solver random seed.
        feastol : float, optional
            Primal feasibility tolerance (solver default otherwise).
        keep_solutions : bool
            Fill :attr:`Solution.pool` with the solver's stored incumbents.
        options : dict, optional
            Extra native solver options (HiGHS option names / SCIP parameter
            paths), set after ours, e.g. ``{"presolve": "off"}`` for HiGHS.
        start : dict or ndarray, optional
            A starting solution for HiGHS: every variable's value (an array,
            checked as is), or a partial one, variable index -> value (HiGHS
            completes it with a sub-MIP, which can overrun the time limit on
            large models).  An infeasible start is ignored.  SCIP: ignored.
        """
        if backend == "highs":
            from ._mip_emit import solve_highs

            return solve_highs(self, time_limit, gap, threads, seed, feastol, keep_solutions, verbose, options, start)
        if backend == "scip":
            from ._mip_emit import solve_scip

            return solve_scip(self, time_limit, gap, seed, feastol, keep_solutions, max_solutions, verbose, options)
        raise SolverError(f"Unknown MIP backend {backend!r}. Use one of {list(BACKENDS)}.")

    # internal: the matrix in CSR form
    def _csr(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if not self._row_idx:
            if self._frozen is not None:
                return self._frozen
            return np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0)
        lens = np.fromiter((len(a) for a in self._row_idx), dtype=np.int64, count=len(self._row_idx))
        start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        index, value = np.concatenate(self._row_idx), np.concatenate(self._row_val)
        if self._frozen is not None:
            fs, fi, fv = self._frozen
            start = np.concatenate([fs[:-1], start + fs[-1]])
            index, value = np.concatenate([fi, index]), np.concatenate([fv, value])
        return start, index, value


def _now() -> float:
    return time.perf_counter()


def _import(name: str) -> Any:
    return import_optional(name, purpose="The MIP backend")
