"""MACE's MILP oracle (HiGHS through :mod:`counterfact.solvers._milp`), the default for ReLU
networks.

The query, the compiled model and the distance are encoded once with the
shared MIP layer (:mod:`counterfact.solvers._milp`: raw inputs with every
constraint kind, big-M ReLUs with per-query interval bounds, Mišić trees, the
decision region with the margin).  The distance of eq. (3) is a variable ``D``;
a check "is there a counterfactual at distance <= bound?" sets ``D <= bound``
and *minimises* ``D``.  A feasible answer is then the nearest point under the
bound and the solver's dual bound, less what its feasibility tolerance leaves
unproven (:func:`._tolerance.bound_slack`), is a proof that none is nearer, so
Algorithm 1 usually closes its gap after the first (unbounded) call.  Z3 finds
no counterfactual for a 2x10 MLP in 60 s; HiGHS solves the same problem
exactly in about 0.1 s (``reference/solvers.md`` §3.5).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._deadline import Deadline
from ...exceptions import UnsupportedModelError
from .._options import option_steps
from .._oracle import Answer
from .._problem import Problem, exact_distance, grid_value, solver_values
from ._costs import cost_terms
from ._encoder import encode_model
from ._expr import Expr, quicksum
from ._first import encode_points, first_answer
from ._inputs import (
    add_change_limit,
    decode,
    encode_inputs,
    feature_deltas,
    no_good_superset,
)
from ._model import Model
from ._narrow import narrow_bounds
from ._options import exclude_dominated
from ._relations import encode_relations, lattice_steps
from ._timeline import encode_timeline, time_moved, waiting_term
from ._tolerance import bound_slack, dropped_coefficient, too_narrow

__all__ = ["FIRST_OPTIONS", "FIRST_SLACK", "RENARROW", "MipOracle"]

#: the least relative drop of the distance bound for which the model is rebuilt over a
#: narrower box (:meth:`MipOracle._narrow`)
RENARROW = 0.02
#: relative and absolute widening of a first answer's distance before it bounds the
#: solver's first call (the encoding's rounding must never cut that answer off)
FIRST_SLACK = (1e-6, 1e-7)
#: HiGHS's options for that call, which starts from the first answer: no restart after
#: the root and no RINS / RENS sub-MIPs (primal heuristics only: the dual bound, the
#: proof, is unchanged).  Adult MLP under the measure of effort, 8 queries: median
#: solve 0.21 s with HiGHS's defaults, 0.17 s without restarts, 0.13 s without the
#: sub-MIPs too, 0.10 s with the start as well (``benchmarks/exact_speed.py --effort``)
FIRST_OPTIONS = {
    "mip_allow_restart": False,
    "mip_heuristic_run_rins": False,
    "mip_heuristic_run_rens": False,
}


class MipOracle:
    """Satisfiability oracle on a MILP (see module docstring).

    Parameters
    ----------
    problem : Problem
        The query in solver units (with its :class:`QueryBounds`).
    compiled : CompiledModel
    schema : Schema
    rel_gap : float
        Relative tolerance of the search; the relative MIP gap is ``min(1e-4, rel_gap / 2)``.
    random_seed : int
    backend : {"highs", "scip"}
    """

    def __init__(
        self,
        problem: Problem,
        compiled: Any,
        schema: Any,
        *,
        rel_gap: float,
        random_seed: int = 0,
        backend: str = "highs",
        others: Sequence[tuple[Any, int]] = (),
    ) -> None:
        self.problem = problem
        self.schema = schema
        self.backend = backend
        self.seed = int(random_seed)
        self.gap = min(1e-4, float(rel_gap) / 2)
        self.compiled = compiled
        self.others = tuple(others)
        if problem.bounds is None:  # pragma: no cover - build_problem always sets it
            raise ValueError("MipOracle needs the query's bounds (Problem.bounds).")
        #: the distance bound the model's box is narrowed to (:mod:`._narrow`; inf: the query's)
        self.radius = math.inf
        narrow = too_narrow(problem.vars)
        if narrow is not None:
            raise UnsupportedModelError(f"The {narrow}.")
        self._build(problem.bounds)
        dropped = dropped_coefficient(self.m)
        if dropped is not None:
            raise UnsupportedModelError(f"The model has {dropped}.")

    def _build(self, bounds: Any) -> None:
        """The model over the box ``bounds``: the inputs, the change cap, the grids, the
        relations, every model's decision, the distance ``D`` (minimised), the
        diversity clauses."""
        problem = self.problem
        a, b, g = problem.weights
        J = problem.n_features
        m = self.m = Model("nearest-counterfactual")
        need_changes = a > 0 or problem.max_changes is not None or problem.blocking == "features"
        inp = self.inputs = encode_inputs(m, self.compiled.inputs, bounds, changes=need_changes)
        if problem.max_changes is not None:
            add_change_limit(m, inp, int(problem.max_changes), skip=time_moved(problem.timeline))
        self._grid(inp)
        if problem.relations:
            encode_relations(m, inp, problem.relations, lattice_steps(inp, self._gridded(inp)))
        encode_model(m, self.compiled, inp.z, problem.target_index, problem.margin)
        for other, target in self.others:  # robust_to: the same inputs, every model's decision
            encode_model(m, other, inp.z, target, problem.margin)
        terms = Expr()
        if b > 0 or g > 0:
            deltas = feature_deltas(m, inp, [v.scale for v in problem.vars])
            if b > 0:
                terms = terms + quicksum(deltas) * (b / J)
            if g > 0:
                t = m.add_var(0.0, math.inf, name="t_inf")
                for d in deltas:
                    if d.terms:
                        m.add_ge(t - d, 0.0)
                terms = terms + t * g
        if a > 0:
            terms = terms + quicksum(inp.changed()) * (a / J)
        if problem.costs is not None:  # the call's costs (eq. 3's weights are then 0)
            terms = terms + quicksum(cost_terms(m, inp, problem.costs))
        # elapsed months and the features time moves (:mod:`._timeline`)
        terms = terms + waiting_term(problem.timeline, encode_timeline(m, inp, problem.timeline))
        for p in problem.blocked:
            self._block(p)
        self._meaningful_moves()
        D = self.D = m.add_var(0.0, math.inf, name="distance")
        m.add_ge(D - terms, 0.0)
        m.add_objective(D)

    def _narrow(self, bound: float) -> None:
        """Rebuild the model over the box a distance of at most ``bound`` can reach
        (:func:`._narrow.narrow_bounds`) when that is smaller than the current one:
        every point within ``bound`` stays in it, and its big-M rows (change
        indicators, ReLU bounds) are tighter.  Narrowing is skipped when the
        bound shrinks by less than :data:`RENARROW` (a rebuild is not free)."""
        if not bound < self.radius * (1.0 - RENARROW):
            return
        narrowed = narrow_bounds(self.problem, bound)
        if narrowed is None:
            return
        self.radius = float(bound)
        self._build(narrowed)

    def _grid(self, inp: Any) -> None:
        """Real features searched on their resolution grid: ``x = k * resolution``
        with ``k`` an integer variable, as the Z3 and CP-SAT oracles search them.

        Why: every reported value is snapped to the grid by the pipeline, and
        the continuous optimum rounded feature by feature may fail the model
        (Adult MLP, linf: ``capital_gain 4282.1, capital_loss 128.3`` flips the
        model; rounding both up and both down does not, one up and one down
        does).  On the grid the answer is the value reported and the lower bound
        is proven for the grid.  A query value off the grid keeps the feature
        continuous (its own value must stay reachable; the pipeline snaps
        the answer as before)."""
        m = self.m
        for v, f in zip(self.problem.vars, inp.features, strict=True):
            if v.grid is None or v.values is not None or v.integral or f.fixed or f.value is None:
                continue
            gq = grid_value(v, v.query)
            if gq is None:
                continue
            g = float(v.grid)
            lo, hi = m.var_bounds(f.value)
            kq = round(float(gq) / g)
            k_lo = min(kq, math.ceil(lo / g - 1e-9)) if np.isfinite(lo) else -math.inf
            k_hi = max(kq, math.floor(hi / g + 1e-9)) if np.isfinite(hi) else math.inf
            k = m.add_var(k_lo, k_hi, integer=True, name=f"k_{v.name}")
            m.add_eq(f.value - k * g, 0.0)

    def _meaningful_moves(self) -> None:
        """Further answers: each numeric feature keeps the query's value or moves by at
        least its meaningful step (:meth:`Problem.needs_meaningful`); one binary per
        direction, as the change indicators of the inputs."""
        m = self.m
        for j, f in enumerate(self.inputs.features):
            step = self.problem.needs_meaningful(j)
            if step <= 0 or f.value is None or f.values is not None:
                continue
            x, q = f.value, float(f.query)
            lo, hi = m.var_bounds(x)
            up = m.add_binary(name=f"{f.name}_up_meaningful") if hi >= q + step else None
            down = m.add_binary(name=f"{f.name}_down_meaningful") if lo <= q - step else None
            if up is not None:
                m.add_le(x - q - (hi - q) * up, 0.0)  # x <= q unless up
                m.add_indicator(up, x.expr(), ">=", q + step)
            else:
                m.set_bounds(x, lo, min(hi, q))
            if down is not None:
                m.add_le(q - x - (q - lo) * down, 0.0)  # x >= q unless down
                m.add_indicator(down, x.expr(), "<=", q - step)
            else:
                m.set_bounds(x, max(lo, q), m.var_bounds(x)[1])
            if up is not None and down is not None:
                m.add_le(up + down, 1.0)

    def _gridded(self, inp: Any) -> dict[str, float]:
        """The real features that :meth:`_grid` put on their grid, and their steps
        (relations state strict inequalities exactly over them)."""
        out = {}
        for v, f in zip(self.problem.vars, inp.features, strict=True):
            if v.grid is None or v.values is not None or v.integral or f.fixed or f.value is None:
                continue
            if grid_value(v, v.query) is not None:
                out[v.name] = float(v.grid)
        return out

    def _block(self, p: tuple[Any, ...]) -> None:
        """At least ``min_diff`` features differ from the earlier counterfactual ``p`` (a
        numeric one by more than its diversity step); with ``blocking="features"``
        the change set must not contain ``p``'s (CE-OCL's no-good cut); with
        ``blocking="options"`` no point ``p`` dominates (:mod:`._options`)."""
        m = self.m
        if self.problem.blocking == "options":
            exclude_dominated(m, self.inputs, p, option_steps(self.problem))
            return
        diffs: list[Expr] = []
        if self.problem.blocking == "features":
            moved = [
                j
                for j, f in enumerate(self.inputs.features)
                if not f.fixed and self.problem.moved(j, p[j])
            ]
            moved = [j for j in moved if self.problem.meaningful(j, p[j])] or moved
            if moved:
                no_good_superset(m, self.inputs, [self.inputs.features[j].name for j in moved])
            return
        for j, (v, f, pj) in enumerate(
            zip(self.problem.vars, self.inputs.features, p, strict=True)
        ):
            if f.fixed:
                continue
            if f.value is None:  # categorical: one-hot indicators
                k = int(pj)
                ind = f.indicators
                diffs.append(1 - ind[k] if 0 <= k < len(ind) else Expr({}, 1.0))
                continue
            x = f.value
            lo, hi = m.var_bounds(x)
            pv = float(pj)
            step = 0.0 if self.problem.steps is None else float(self.problem.steps[j])
            if v.integral:
                up_at, down_at = math.floor(pv + step) + 1.0, math.ceil(pv - step) - 1.0
            else:
                tol = 1e-6 * max(1.0, abs(pv))
                up_at, down_at = pv + step + tol, pv - step - tol
            d = Expr()
            if up_at <= hi:
                u = m.add_binary()
                m.add_indicator(u, x.expr(), ">=", up_at)
                d = d + u
            if down_at >= lo:
                w = m.add_binary()
                m.add_indicator(w, x.expr(), "<=", down_at)
                d = d + w
            if d.terms:
                if len(d.terms) == 2:
                    m.add_le(d, 1.0)
                diffs.append(d)
        m.add_ge(quicksum(diffs), float(self.problem.min_diff))

    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        """Nearest counterfactual at distance <= ``bound`` (or a proof that there is none),
        over the box that bound can reach (:meth:`_narrow`).  With no bound, a cheap
        first answer (:func:`._first.first_answer`) gives one when it finds a point:
        :meth:`_check_below_first`."""
        if bound is None and self.radius == math.inf:
            ans = self._check_below_first(deadline)
            if ans is not None:
                return ans
        if bound is not None:
            self._narrow(float(bound))
        self.m.set_bounds(self.D, 0.0, math.inf if bound is None else float(bound))
        return self._solve(deadline)

    def _check_below_first(self, deadline: Deadline) -> Answer | None:
        """The unbounded check asked at the distance of a cheap first answer (over the box
        that distance can reach): every point nearer than it lies in that box, so the
        nearest point there and the solver's bound hold for the whole problem.  None
        (the model rebuilt over the query's box) when no first answer is found or the
        solver finds no point within its distance (the float64 check and the
        encoding disagree); ``unknown`` when that leaves no time."""
        first = first_answer(self.problem, self.compiled, self.others)
        if first is None:
            return None
        bound = first[1] * (1 + FIRST_SLACK[0]) + FIRST_SLACK[1]
        self._narrow(bound)
        self.m.set_bounds(self.D, 0.0, bound)
        ans = self._solve(deadline, FIRST_OPTIONS, self._start(first[0]))
        if ans.verdict == "sat":
            return ans
        if deadline.expired():  # "unsat" here is within the first answer's distance only
            return Answer("unknown")
        self.radius = math.inf
        self._build(self.problem.bounds)  # type: ignore[arg-type]
        return None

    def _start(self, point: tuple[Any, ...]) -> dict[int, float]:
        """A partial start for the solver: the model's inputs at ``point`` (solver units);
        the solver completes the rest or, when it cannot, ignores it."""
        z = encode_points(self.problem, self.compiled, np.asarray([point], dtype=float))[0]
        return {v.index: float(x) for v, x in zip(self.inputs.z, z, strict=True)}

    def _solve(
        self,
        deadline: Deadline,
        options: dict[str, Any] | None = None,
        start: dict[int, float] | None = None,
    ) -> Answer:
        """Solve the model as it stands: the nearest point, or unsat, or unknown (HiGHS
        ``options`` and a ``start`` for HiGHS only)."""
        highs = self.backend == "highs"
        sol = self.m.solve(
            self.backend,
            time_limit=deadline.seconds(),
            gap=self.gap,
            seed=self.seed,
            cancel=deadline.token,
            options=options if highs else None,
            start=start if highs else None,
        )
        if sol.status == "infeasible":
            return Answer("unsat")
        if not sol.has_solution:
            return Answer("unknown")
        row = decode(self.inputs, sol.x)  # type: ignore[arg-type]
        point = solver_values(self.schema, pd.Series(row))
        dist = exact_distance(self.problem, point)
        return Answer("sat", point, dist, self._proven(sol.bound, dist))

    def _proven(self, bound: float, dist: float) -> float | None:
        """The solver's dual ``bound`` as a bound on exact points: less what its
        feasibility tolerance leaves unproven (:func:`._tolerance.bound_slack`, one
        term per movable feature), and never above the answer's own distance."""
        if not np.isfinite(bound):
            return None
        lb = float(bound) - bound_slack(self.n_terms, bound)
        return max(0.0, min(lb, float(dist)))

    @property
    def n_terms(self) -> int:
        """The distance's terms: one per movable feature."""
        return sum(not v.fixed for v in self.problem.vars)
