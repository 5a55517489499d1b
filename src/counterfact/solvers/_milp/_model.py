"""The MILP modelling layer: a thin in-house sparse mixed-integer model, solved by HiGHS or SCIP.

No Pyomo on the hot path (``reference/solvers.md`` §5.8: Pyomo added 0.1-1 s
per forest model).  A :class:`Model` (the stored columns, rows and objective of
:class:`~._sparse.SparseModel`, plus the modelling helpers below) holds

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

:meth:`Model.solve` emits the model to a fresh solver (:mod:`._highs`,
:mod:`._scip`) and returns a :class:`Solution` (status, objective, bound, gap,
nodes, time, values, and the solver's store of other incumbents).  Backends:

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
from typing import Any

import numpy as np

from ..._utils._deadline import CancelToken
from .._registry import MilpSolver, get, milp_names
from ._expr import Expr, Term, Var, as_expr
from ._solution import Solution, SolverError, SolveSettings
from ._sparse import INF, SparseModel

__all__ = ["Model"]


class Model(SparseModel):
    """A sparse MILP (or MIQP) being built; see the module docstring."""

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

    # ........................................................... objective
    def add_objective(self, e: Term) -> None:
        """Add a linear term to the objective (minimised)."""
        self._obj._iadd(e, 1.0)

    def add_square(self, e: Term, weight: float = 1.0) -> None:
        """Add ``weight * e**2`` to the objective; ``e`` must be ``a*x + c`` (one variable)."""
        ex = as_expr(e)
        if len(ex.terms) != 1:
            raise SolverError(f"add_square takes a one-variable affine expression. Got {ex!r}.")
        ((k, a),) = ex.terms.items()
        c = ex.const
        w = float(weight)
        self._quad[k] = self._quad.get(k, 0.0) + w * a * a
        self._obj.terms[k] = self._obj.terms.get(k, 0.0) + 2.0 * w * a * c
        self._obj.const += w * c * c

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

    def add_relu(
        self, e: Term, lo: float | None = None, hi: float | None = None, *, name: str = ""
    ) -> Expr:
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
            raise SolverError(
                f"ReLU pre-activation {ex!r} is unbounded; cannot encode it with big-M."
            )
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
        near = (
            np.concatenate([-(np.linspace(0, 1, 9) ** 2), np.linspace(0, 1, 9) ** 2])
            * (hi - lo)
            / 8
        )
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
        pts = (
            self.pwl_breakpoints(lo, hi, segments)
            if points is None
            else np.unique(np.clip(points, lo, hi))
        )
        for a, b in itertools.pairwise(pts):
            # secant through (a, a^2), (b, b^2): t >= (a+b) e - a b
            self.add_ge(t - (a + b) * ex, -a * b)
        return t

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
        cancel: CancelToken | None = None,
    ) -> Solution:
        """Emit to a fresh solver, solve, and read the answer back.

        ``backend`` is a registered MILP backend (``counterfact.solvers.names()``):
        ``"highs"`` or ``"scip"``.  The keywords are the fields of
        :class:`~._solution.SolveSettings`, which documents each.
        """
        solver = get(backend) if backend in milp_names() else None
        if not isinstance(solver, MilpSolver):
            raise SolverError(f"Unknown MIP backend {backend!r}. Use one of {list(milp_names())}.")
        settings = SolveSettings(
            time_limit,
            gap,
            threads,
            seed,
            feastol,
            keep_solutions,
            max_solutions,
            verbose,
            options,
            start,
            cancel,
        )
        return solver.solve(self, settings)  # type: ignore[no-any-return]
