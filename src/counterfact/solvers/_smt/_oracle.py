"""MACE's satisfiability oracle on Z3 (direct API, exact rationals, push/pop).

One :class:`Z3Oracle` per query and search: the counterfactual formula (the
compiled model through :mod:`counterfact.solvers._smt`), the plausibility
formula (types, ranges, every constraint kind through the query's bounds) and
the diversity clauses are asserted once; each call pushes
``distance <= bound``, checks, and pops (Karimi et al. 2020, Sec. 4).

Encoding (see ``reference/solvers.md``):

* real features are ``Real`` (on a grid, ``x = k * resolution`` with ``k``
  an ``Int``, or the query's own value), integer features and ordinal ranks ``Int``,
  categorical features one ``Bool`` per allowed category with ``PbEq(..., 1)``;
  fixed features are constants, not variables;
* every coefficient is an exact rational (``Fraction(float)``), so a SAT answer
  is a true point of the encoded model and an UNSAT answer a proof;
* the per-feature distances are slacks ``s_j >= |x_j - q_j| / R_j`` (exact
  where a direction constraint fixes the sign); the distance of the returned
  point is recomputed exactly from the point itself, never read from the slacks;
* relations between features (:func:`~counterfact.solvers._smt.encode_relations`)
  are asserted once over the same variables: linear atoms with exact rational
  coefficients, category atoms as indicators, implications as ``Implies``;
* ``z3.Optimize`` is never used (it returned wrong optima on this encoding);
* tree ensembles are asserted inside each check's push/pop, pruned to the box
  of the query's domain and the per-feature caps of that check's bound
  (:func:`~counterfact.solvers._smt.forest_in_box`): splits the whole box
  takes one way are resolved and conditions decided by the reachable leaves
  are dropped, so tight bounds give small formulas (exact: the same formula on
  the box);
* :meth:`Z3Oracle.check_point` checks one given point (the method's warm start
  from observed rows); with every variable fixed the pruned ensemble is a constant.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from ..._utils._deadline import Deadline
from ..._utils._deps import import_optional
from .._options import Escape, escapes
from .._oracle import Answer
from .._problem import Problem, VarSpec, exact_distance, grid_value
from ._costs import cost_caps, cost_sum
from ._encoder import encode_model, forest_in_box, is_forest
from ._relations import encode_relations
from ._timeline import encode_timeline

__all__ = ["Z3Oracle"]


def _q(x: Any) -> Fraction:
    return x if isinstance(x, Fraction) else Fraction(x)


@dataclass
class _Terms:
    """What the features' variables give the rest of the formula (:meth:`Z3Oracle._variables`)."""

    #: the raw vector in the compiler's InputSpace layout, and its box
    z: list[Any] = field(default_factory=list)
    zlo: list[float] = field(default_factory=list)
    zhi: list[float] = field(default_factory=list)
    #: per movable feature, "it changed", and the feature's index
    changed: list[Any] = field(default_factory=list)
    changed_at: list[int] = field(default_factory=list)
    #: per-feature distances of the l1 part, and of the linf part as (expr, is_bool)
    l1: list[Any] = field(default_factory=list)
    inf: list[tuple[Any, bool]] = field(default_factory=list)


class Z3Oracle:
    """Satisfiability oracle for one query (see module docstring).

    Parameters
    ----------
    problem : Problem
        The query in solver units.
    compiled : CompiledModel
        The model IR (:func:`counterfact.models._compile.compile_model`).
    random_seed : int
        Z3's seed (the search is deterministic for a given seed).
    cache : dict, optional
        Per-model cache shared by the queries (the ensemble's SMT-LIB text).
    others : sequence of (CompiledModel, int)
        Other models and their target indices that every answer must also reach
        (``robust_to``), asserted once over the same variables.
    """

    def __init__(
        self,
        problem: Problem,
        compiled: Any,
        *,
        random_seed: int = 0,
        cache: dict[str, Any] | None = None,
        others: Sequence[tuple[Any, int]] = (),
    ) -> None:
        z3 = import_optional("z3", purpose="MACE's Z3 oracle")
        self.z3 = z3
        self.problem = problem
        # a fresh context per query: results then do not depend on what the
        # process solved before (reproducible under joblib), and threads are safe
        self.ctx = z3.Context()
        self.solver = z3.Solver(ctx=self.ctx)
        self.solver.set("random_seed", int(random_seed))
        self.n_calls = 0
        self.build_seconds = 0.0
        self._forest_seconds = 0.0  # slowest pruned-ensemble build so far
        t0 = time.perf_counter()
        # made before any variable: Z3 numbers its terms in the order they are made,
        # and its search depends on that order
        self._one, self._zero = z3.IntVal(1, self.ctx), z3.IntVal(0, self.ctx)
        a, b, g = problem.weights
        # pure linf needs no slacks: "distance <= bound" is a box around the query
        self._pure_linf = a == 0 and b == 0 and g > 0
        self._pure_l0 = a > 0 and b == 0 and g == 0
        # per-feature caps implied by the bound (delta_j <= bound / (beta/J + gamma)),
        # asserted with each check: plain variable bounds that prune tree cuts early
        self._cap_weight = b / problem.n_features + g
        self._caps: list[tuple[VarSpec, Any, Any]] = []
        self._vars: list[Any] = []  # decoding handles
        self._grid_k: dict[
            int, tuple[Any, Fraction]
        ] = {}  # feature -> (grid index, step) of real features on a grid
        self._zstart: list[int] = []
        terms = self._variables()
        self.changed = terms.changed
        self._change_cap(terms)
        self._relations()
        self._diversity()
        self._model_formula(compiled, terms, cache)
        for k, (other, target) in enumerate(
            others
        ):  # robust_to: every other model reaches its target too
            self._add_other(other, target, terms, prefix=f"r{k}_")
        self.distance_expr = self._distance(terms)
        self._timeline()
        self.build_seconds = time.perf_counter() - t0

    # ------------------------------------------------------------ formula
    def _variables(self) -> _Terms:
        """Every feature's variables, domain and the parts of the distance (module docstring)."""
        problem = self.problem
        a, b, g = problem.weights
        need_slack = b > 0 or (g > 0 and not self._pure_linf)
        need_changed = a > 0 or problem.max_changes is not None
        terms = _Terms()
        for j, v in enumerate(problem.vars):
            self._zstart.append(len(terms.z))
            if v.kind == "categorical":
                self._add_categorical(j, v, terms)
            else:
                self._add_numeric(j, v, terms, need_changed=need_changed, need_slack=need_slack)
        return terms

    def _add_categorical(self, j: int, v: VarSpec, terms: _Terms) -> None:
        """A categorical feature: its indicators, their box, and its change literal."""
        inds, chg = self._categorical(j, v)
        terms.z.extend(inds)
        for k in range(v.n_categories):
            on = (k == v.query) if v.fixed else (k in set(v.values or ()))
            terms.zlo.append(1.0 if v.fixed and on else 0.0)
            terms.zhi.append(1.0 if on else 0.0)
        self._vars.append(("cat", inds))
        if chg is None:
            return
        self._caps.append((v, None, chg))
        terms.changed.append(chg)
        terms.changed_at.append(j)
        terms.l1.append(self.z3.If(chg, self._one, self._zero))
        terms.inf.append((chg, True))

    def _add_numeric(
        self, j: int, v: VarSpec, terms: _Terms, *, need_changed: bool, need_slack: bool
    ) -> None:
        """A numeric or ordinal feature: its variable and box, its change literal, its
        deviation from the query."""
        z3, ctx, s = self.z3, self.ctx, self.solver
        x, lo, hi = self._numeric(j, v)
        terms.z.append(x)
        terms.zlo.append(float(lo))
        terms.zhi.append(float(hi))
        self._vars.append(("num", x))
        if v.fixed:
            return
        self._caps.append((v, x, None))
        if need_changed:
            c = z3.Bool(f"c_{j}", ctx)
            s.add(
                z3.Implies(
                    z3.Not(c),
                    x == z3.RealVal(_q(v.query), ctx) if not v.integral else x == int(v.query),
                )
            )
            terms.changed.append(c)
            terms.changed_at.append(j)
        if need_slack:
            d = self._deviation(j, v, x, lo, hi)
            terms.l1.append(d)
            terms.inf.append((d, False))

    def _deviation(self, j: int, v: VarSpec, x: Any, lo: Fraction, hi: Fraction) -> Any:
        """``|x_j - q_j| / R_j``: exact where the box fixes the sign, else a slack ``s_j``."""
        z3, ctx = self.z3, self.ctx
        q = _q(v.query)
        inv = 1 / _q(v.scale)
        if lo >= q:
            return (x - z3.RealVal(q, ctx)) * z3.RealVal(inv, ctx)
        if hi <= q:
            return (z3.RealVal(q, ctx) - x) * z3.RealVal(inv, ctx)
        d = z3.Real(f"s_{j}", ctx)
        self.solver.add(
            d >= (x - z3.RealVal(q, ctx)) * z3.RealVal(inv, ctx),
            d >= (z3.RealVal(q, ctx) - x) * z3.RealVal(inv, ctx),
        )
        return d

    def _relations(self) -> None:
        """The relations between features (:func:`~counterfact.solvers._smt.encode_relations`),
        over the features' variables: values and ranks, category indicators."""
        if not self.problem.relations:
            return
        index = {v.name: j for j, v in enumerate(self.problem.vars)}

        def value(name: str) -> Any:
            return self._vars[index[name]][1]

        def indicator(name: str, k: int) -> Any:
            inds = self._vars[index[name]][1]
            return inds[k] if 0 <= k < len(inds) else self.z3.BoolVal(False, self.ctx)

        for f in encode_relations(self.z3, self.ctx, self.problem.relations, value, indicator):
            self.solver.add(f)

    def _timeline(self) -> None:
        """Elapsed months and the features time moves (:mod:`._timeline`); the cost of
        waiting joins the distance."""
        formulas, wait = encode_timeline(
            self.z3, self.ctx, self.problem.timeline, lambda j: self._vars[j][1]
        )
        self.solver.add(*formulas)
        if wait is not None:
            self.distance_expr = self.distance_expr + wait

    def _change_cap(self, terms: _Terms) -> None:
        """At most ``max_changes`` features change (those only time moves not counted)."""
        timeline = self.problem.timeline
        skip = set() if timeline is None else set(timeline.advancing)
        counted = [c for c, j in zip(terms.changed, terms.changed_at, strict=True) if j not in skip]
        if self.problem.max_changes is not None and counted:
            self.solver.add(self.z3.PbLe([(c, 1) for c in counted], int(self.problem.max_changes)))

    def _diversity(self) -> None:
        """Diversity clauses: no earlier counterfactual dominates the point ("options",
        :mod:`counterfact.solvers._options`), differ from each earlier counterfactual in
        >= min_diff features ("points"), or change a set of features that is no superset
        of any earlier one's ("features")."""
        z3, ctx, s, problem = self.z3, self.ctx, self.solver, self.problem
        self._meaningful_moves()
        for p in problem.blocked:
            if problem.blocking == "options":
                ways = [self._escape(e) for e in escapes(problem, p)]
                s.add(z3.Or(ways) if ways else z3.BoolVal(False, ctx))
                continue
            if problem.blocking == "features":
                moved = [
                    j for j, v in enumerate(problem.vars) if not v.fixed and problem.moved(j, p[j])
                ]
                keep = [
                    self._unchanged(j, problem.vars[j])
                    for j in moved
                    if problem.meaningful(j, p[j])
                ]
                keep = keep or [self._unchanged(j, problem.vars[j]) for j in moved]
                s.add(z3.Or(keep) if keep else z3.BoolVal(False, ctx))
                continue
            diffs = [
                dj
                for dj in (self._differs(j, v, p[j]) for j, v in enumerate(problem.vars))
                if dj is not None
            ]
            if len(diffs) < problem.min_diff:
                s.add(z3.BoolVal(False, ctx))
            else:
                s.add(z3.PbGe([(dj, 1) for dj in diffs], int(problem.min_diff)))

    def _escape(self, e: Escape) -> Any:
        """One way out of an earlier answer's domination as a formula (:class:`Escape`)."""
        z3, ctx = self.z3, self.ctx
        kind, h = self._vars[e.j]
        if kind == "cat":
            k = int(e.value)
            return z3.Not(h[k]) if 0 <= k < len(h) else z3.BoolVal(True, ctx)
        bound = int(e.value) if self.problem.vars[e.j].integral else z3.RealVal(_q(e.value), ctx)
        return h <= bound if e.sense == "<=" else h >= bound

    def _meaningful_moves(self) -> None:
        """Further answers: each numeric feature keeps the query's value or moves by
        at least its meaningful step (:meth:`Problem.needs_meaningful`), so that
        no answer carries a one-unit move ("loan_amount 3600 -> 3599")."""
        z3, ctx = self.z3, self.ctx
        for j, v in enumerate(self.problem.vars):
            m = self.problem.needs_meaningful(j)
            if m <= 0:
                continue
            h = self._vars[j][1]
            if v.integral:
                far = z3.Or(h >= int(v.query) + int(m), h <= int(v.query) - int(m))
            else:
                q, mm = _q(v.query), _q(m)
                far = z3.Or(h >= z3.RealVal(q + mm, ctx), h <= z3.RealVal(q - mm, ctx))
            self.solver.add(z3.Or(self._unchanged(j, v), far))

    def _model_formula(self, compiled: Any, terms: _Terms, cache: dict[str, Any] | None) -> None:
        """The counterfactual formula: tree ensembles are asserted per check, pruned to
        the box of that check's bound (``forest_in_box``); everything else once, here."""
        problem = self.problem
        box = (np.array(terms.zlo), np.array(terms.zhi))
        self._forest = is_forest(compiled)
        self._forest_args = (
            forest_in_box,
            compiled,
            terms.z,
            problem.target_index,
            problem.margin,
            cache,
        )
        self._zbox = box
        if not self._forest:
            for f in encode_model(
                compiled, terms.z, problem.target_index, problem.margin, box=box, cache=cache
            ):
                self.solver.add(f)

    def _add_other(self, compiled: Any, target: int, terms: _Terms, prefix: str) -> None:
        """Assert that another model reaches ``target`` (once, over the query's whole box);
        an ensemble's auxiliary symbols get their own ``prefix``, so that several
        ensembles in one solver never share a name."""
        lo, hi = self._zbox
        if is_forest(compiled):
            formulas = forest_in_box(
                compiled, terms.z, target, self.problem.margin, lo, hi, prefix=prefix
            )
        else:
            formulas = encode_model(compiled, terms.z, target, self.problem.margin, box=self._zbox)
        for f in formulas:
            self.solver.add(f)

    def _distance(self, terms: _Terms) -> Any:
        """The distance expression (eq. 3), or the sum of the call's costs (:mod:`._costs`)."""
        z3, ctx, s = self.z3, self.ctx, self.solver
        if self.problem.costs is not None:
            self._cost_boxes = [(terms.zlo[k], terms.zhi[k]) for k in self._zstart]
            fixed = [v.fixed for v in self.problem.vars]
            return cost_sum(z3, ctx, self.problem.costs, self._vars, self._cost_boxes, fixed)
        a, b, g = self.problem.weights
        J = self.problem.n_features
        one, zero = self._one, self._zero
        parts = []
        if a > 0 and terms.changed:
            parts.append(
                z3.RealVal(Fraction(a) / J, ctx)
                * z3.Sum([z3.If(c, one, zero) for c in terms.changed])
            )
        if b > 0 and terms.l1:
            parts.append(z3.RealVal(Fraction(b) / J, ctx) * z3.Sum(terms.l1))
        if g > 0 and terms.inf:
            t = z3.Real("t_inf", ctx)
            for e, is_bool in terms.inf:
                s.add(z3.Implies(e, t >= one) if is_bool else t >= e)
            s.add(t >= 0)
            parts.append(z3.RealVal(Fraction(g), ctx) * t)
        return z3.Sum(parts) if parts else z3.RealVal(0, ctx)

    # ------------------------------------------------------------ variables
    def _numeric(self, j: int, v: VarSpec) -> tuple[Any, Fraction, Fraction]:
        z3, ctx = self.z3, self.ctx
        if v.fixed:
            q = _q(v.query)
            return (z3.IntVal(int(v.query), ctx) if v.integral else z3.RealVal(q, ctx)), q, q
        x = z3.Int(f"x_{j}", ctx) if v.integral else z3.Real(f"x_{j}", ctx)
        lo, hi = _q(v.lower), _q(v.upper)
        if v.integral:
            self.solver.add(x >= int(lo), x <= int(hi))
        else:
            self.solver.add(x >= z3.RealVal(lo, ctx), x <= z3.RealVal(hi, ctx))
        if v.grid is not None and v.values is None:
            # a changed value lies on the feature's grid (k * resolution), as every
            # reported value does: the search is exact for the values reported
            # (the query's own grid index gives the query's exact value, which as a
            # float may differ from the decimal k * resolution by a rounding error)
            r = Fraction(repr(float(v.grid)))
            k = z3.Int(f"k_{j}", ctx)
            self._grid_k[j] = (k, r)
            q = _q(v.query)
            gq = grid_value(v, v.query)
            # a grid value that the rest of the library counts as unchanged (within
            # 1e-7 relative of the query, see constraints.changed) is not a change here
            # either: it would be a "different" answer that is the query's value
            step = z3.ToReal(k) * z3.RealVal(r, ctx)
            tol = Fraction(2, 10**7) * max(Fraction(1), abs(q))
            far = z3.Or(step > z3.RealVal(q + tol, ctx), step < z3.RealVal(q - tol, ctx))
            if gq is None:  # the query lies off the grid: its own value, or a grid value
                self.solver.add(k >= math.ceil(lo / r), k <= math.floor(hi / r))
                self.solver.add(z3.Or(x == z3.RealVal(q, ctx), z3.And(x == step, far)))
            else:
                kq = int(gq / r)
                self.solver.add(k >= min(kq, math.ceil(lo / r)), k <= max(kq, math.floor(hi / r)))
                if gq == q:  # the query is exactly k * resolution (whole units): no special case
                    self.solver.add(x == step)
                    if r <= tol:
                        self.solver.add(z3.Or(k == kq, far))
                else:
                    self.solver.add(
                        x == z3.If(k == kq, z3.RealVal(q, ctx), step), z3.Or(k == kq, far)
                    )
        if v.values is not None:
            vals = [_q(u) for u in v.values]
            if v.integral:
                self.solver.add(z3.Or([x == int(u) for u in vals]))
            else:
                self.solver.add(z3.Or([x == z3.RealVal(u, ctx) for u in vals]))
            lo, hi = min(vals), max(vals)
        return x, lo, hi

    def _categorical(self, j: int, v: VarSpec) -> tuple[list[Any], Any]:
        z3, ctx = self.z3, self.ctx
        allowed = set(v.values or ())
        if v.fixed:
            return [z3.BoolVal(k == v.query, ctx) for k in range(v.n_categories)], None
        inds = [
            z3.Bool(f"b_{j}_{k}", ctx) if k in allowed else z3.BoolVal(False, ctx)
            for k in range(v.n_categories)
        ]
        live = [inds[k] for k in sorted(allowed)]
        if len(live) == 1:
            self.solver.add(live[0])
        else:
            self.solver.add(z3.PbEq([(b, 1) for b in live], 1))
        chg = z3.Not(inds[v.query]) if v.query in allowed else z3.BoolVal(True, ctx)
        return inds, chg

    def _unchanged(self, j: int, v: VarSpec) -> Any:
        """Feature ``j`` keeps the query's value."""
        z3, ctx = self.z3, self.ctx
        kind, h = self._vars[j]
        if kind == "cat":
            return h[int(v.query)] if 0 <= int(v.query) < len(h) else z3.BoolVal(False, ctx)
        return h == (int(v.query) if v.integral else z3.RealVal(_q(v.query), ctx))

    def _differs(self, j: int, v: VarSpec, p: Any) -> Any:
        """Feature ``j`` differs from the earlier counterfactual's value ``p``: another
        category; or a numeric move of more than the feature's diversity step
        (``Problem.steps``; a move into or out of the query's value counts only
        when it is that large: a one-unit move of an unchanged feature is no
        difference); without steps, any move beyond 1e-6 relative."""
        z3, ctx = self.z3, self.ctx
        if v.fixed:
            return None
        kind, h = self._vars[j]
        if kind == "cat":
            return z3.Not(h[int(p)]) if 0 <= int(p) < len(h) else z3.BoolVal(True, ctx)
        step = 0.0 if self.problem.steps is None else float(self.problem.steps[j])
        pq = _q(p)
        if step > 0:
            st = _q(step)
            return (
                z3.Or(h < z3.RealVal(pq - st, ctx), h > z3.RealVal(pq + st, ctx))
                if not v.integral
                else z3.Or(h < math.ceil(pq - st), h > math.floor(pq + st))
            )
        if v.integral:
            return h != int(p)
        tol = Fraction(1, 10**6) * max(Fraction(1), abs(pq))
        return z3.Or(h <= z3.RealVal(pq - tol, ctx), h >= z3.RealVal(pq + tol, ctx))

    # ---------------------------------------------------------------- check
    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        """Is there a counterfactual at distance <= ``bound``? (push / check / pop)."""
        z3 = self.z3
        s = self.solver
        if self._too_late(deadline):
            return Answer("unknown")
        self.n_calls += 1
        if bound is None:
            s.push()
            if self._forest:
                self._add_forest(*self._zbox)
            res = self._run(deadline)
            res, model = self._model(res)
            s.pop()
            return self._answer(res, model, None)
        s.push()
        qb = _q(float(bound))
        next_value = None
        if self._pure_l0:
            # l0 takes the values k * alpha / J: count changes, and after UNSAT the
            # next attainable value is a proven lower bound
            a = _q(self.problem.weights[0])
            J = self.problem.n_features
            k = int((qb * J) / a)
            s.add(
                z3.PbLe([(c, 1) for c in self.changed], k)
                if self.changed
                else z3.BoolVal(k >= 0, self.ctx)
            )
            next_value = float(a * (k + 1) / J)
        elif not self._pure_linf:
            s.add(self.distance_expr <= z3.RealVal(qb, self.ctx))
        self._add_caps(qb)
        if self._forest:
            self._add_forest(*self._cap_box(qb))
        res = self._run(deadline)
        res, model = self._model(res)
        s.pop()
        return self._answer(res, model, next_value)

    def check_point(self, point: tuple[Any, ...], deadline: Deadline) -> Answer:
        """Is ``point`` (solver units) itself a counterfactual under every constraint?

        The whole formula is checked with each variable fixed to the point (push /
        check / pop): a SAT answer is a proven feasible point of the encoded model,
        used to start the search with ``delta_max = d(point)`` (a warm start).  A
        real feature on a grid takes the grid value nearest to the point's (an
        observed row finer than the feature's resolution); the answer carries
        the point actually checked.
        """
        z3, ctx, s = self.z3, self.ctx, self.solver
        if deadline.left() <= 0.005:
            return Answer("unknown")
        self.n_calls += 1
        s.push()
        for j, (v, (kind, h), p) in enumerate(
            zip(self.problem.vars, self._vars, point, strict=True)
        ):
            if v.fixed:
                if kind == "cat" and int(p) != int(v.query):
                    s.add(z3.BoolVal(False, ctx))
                elif kind == "num" and Fraction(p) != _q(v.query):
                    s.add(z3.BoolVal(False, ctx))
                continue
            if kind == "cat":
                k = int(p)
                s.add(h[k] if 0 <= k < len(h) else z3.BoolVal(False, ctx))
            elif v.integral:
                s.add(h == int(p))
            elif j in self._grid_k and Fraction(p) != _q(v.query):
                _, r = self._grid_k[j]  # the grid point nearest to p (p itself when on the grid)
                g, q = round(Fraction(p) / r) * r, _q(v.query)
                near_q = abs(g - q) <= Fraction(2, 10**7) * max(Fraction(1), abs(q))
                s.add(h == z3.RealVal(q if near_q else g, ctx))
            else:
                s.add(h == z3.RealVal(_q(p), ctx))
        if self._forest:
            lo, hi = self._zbox[0].copy(), self._zbox[1].copy()
            for j, (v, p) in enumerate(zip(self.problem.vars, point, strict=True)):
                k = self._zstart[j]
                if v.kind == "categorical":
                    hi[k : k + v.n_categories] = 0.0
                    if 0 <= int(p) < v.n_categories:
                        lo[k + int(p)] = hi[k + int(p)] = 1.0
                else:
                    lo[k] = hi[k] = float(p)
            self._add_forest(lo, hi)
        res = self._run(deadline)
        res, model = self._model(res)
        s.pop()
        return self._answer(res, model, None)

    def _run(self, deadline: Deadline) -> Any:
        """``check()`` with what is left of the call's time (the formula was built
        on the same clock): Z3's own timeout, backed by an interrupt of the
        context at the deadline (Z3 polls its timeout only now and then), and
        by the same interrupt as soon as the deadline's token is cancelled."""
        s = self.solver
        if deadline.cancelled:
            return self.z3.unknown
        forget = (
            deadline.token.on_cancel(self.ctx.interrupt) if deadline.token is not None else None
        )
        try:
            if not deadline.limited:
                s.set("timeout", 4294967295)
                return s.check()
            left = deadline.left()
            if left <= 0.005:
                return self.z3.unknown
            s.set("timeout", max(1, int(left * 1000)))
            timer = threading.Timer(left + 0.05, self.ctx.interrupt)
            timer.daemon = True
            timer.start()
            try:
                return s.check()
            finally:
                timer.cancel()
        finally:
            if forget is not None:
                forget()

    def _add_forest(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """Assert the ensemble pruned to the box ``[lo, hi]`` (inside the caller's push)."""
        fn, compiled, z, target, margin, cache = self._forest_args
        t0 = time.perf_counter()
        for f in fn(compiled, z, target, margin, lo, hi, cache=cache, prefix=f"k{self.n_calls}_"):
            self.solver.add(f)
        self._forest_seconds = max(self._forest_seconds, time.perf_counter() - t0)

    def _too_late(self, deadline: Deadline) -> bool:
        """Not enough time left to build the pruned ensemble formula and check it
        (the formula's build is not interruptible: judged by the slowest so far)."""
        left = deadline.left()
        return left <= 0.005 or (self._forest and left < 1.5 * self._forest_seconds)

    def _cap_box(self, bound: Fraction) -> tuple[np.ndarray, np.ndarray]:
        """The box over ``z`` of the query's domain and the caps of ``distance <= bound``."""
        lo, hi = self._zbox[0].copy(), self._zbox[1].copy()
        if self.problem.costs is not None:
            return self._cost_cap_box(bound, lo, hi)
        if self._cap_weight <= 0:
            return lo, hi
        cap = bound / _q(self._cap_weight)
        a = _q(self.problem.weights[0]) / self.problem.n_features
        for j, v in enumerate(self.problem.vars):
            if v.fixed:
                continue
            k = self._zstart[j]
            if v.kind == "categorical":
                if bound < a + _q(self._cap_weight):  # no change affordable
                    hi[k : k + v.n_categories] = 0.0
                    lo[k + int(v.query)] = hi[k + int(v.query)] = 1.0
                continue
            q, r = _q(v.query), cap * _q(v.scale)
            if v.integral:
                lo[k] = max(lo[k], math.ceil(q - r))
                hi[k] = min(hi[k], math.floor(q + r))
            else:
                # outward rounding keeps the box a superset of the exact caps
                lo[k] = max(lo[k], np.nextafter(float(q - r), -np.inf))
                hi[k] = min(hi[k], np.nextafter(float(q + r), np.inf))
        return lo, hi

    def _add_caps(self, bound: Fraction) -> None:
        """Per-feature consequences of ``distance <= bound`` (exact for pure linf)."""
        if self.problem.costs is not None:
            self._add_cost_caps(bound)
            return
        if self._cap_weight <= 0:
            return
        z3, ctx, s = self.z3, self.ctx, self.solver
        cap = bound / _q(self._cap_weight)
        a = _q(self.problem.weights[0]) / self.problem.n_features
        for v, x, chg in self._caps:
            if x is None:  # categorical: a change costs alpha/J + (beta/J + gamma)
                if bound < a + _q(self._cap_weight):
                    s.add(z3.Not(chg))
                continue
            q, r = _q(v.query), cap * _q(v.scale)
            lo, hi = q - r, q + r
            if v.integral:
                s.add(x >= math.ceil(lo), x <= math.floor(hi))
            else:
                s.add(x >= z3.RealVal(lo, ctx), x <= z3.RealVal(hi, ctx))

    def _caps_of(self, bound: Fraction) -> list[Any]:
        kinds = [kind for kind, _ in self._vars]
        return cost_caps(self.problem.costs, float(bound), self._cost_boxes, kinds)

    def _cost_cap_box(
        self, bound: Fraction, lo: np.ndarray, hi: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_cap_box` under the call's costs (each feature's cost is at most the bound)."""
        for j, (v, cap) in enumerate(zip(self.problem.vars, self._caps_of(bound), strict=True)):
            if v.fixed:
                continue
            k = self._zstart[j]
            if v.kind == "categorical":
                for c in range(v.n_categories):
                    if c not in cap:
                        hi[k + c] = 0.0
                continue
            lo[k] = max(lo[k], np.nextafter(float(cap[0]), -np.inf))
            hi[k] = min(hi[k], np.nextafter(float(cap[1]), np.inf))
        return lo, hi

    def _add_cost_caps(self, bound: Fraction) -> None:
        """:meth:`_add_caps` under the call's costs."""
        z3, ctx, s = self.z3, self.ctx, self.solver
        for v, (kind, h), cap in zip(
            self.problem.vars, self._vars, self._caps_of(bound), strict=True
        ):
            if v.fixed:
                continue
            if kind == "cat":
                for c, b in enumerate(h):
                    if c not in cap and not z3.is_false(b):
                        s.add(z3.Not(b))
            elif v.integral:
                s.add(h >= math.ceil(cap[0] - 1e-9), h <= math.floor(cap[1] + 1e-9))
            else:
                s.add(
                    h >= z3.RealVal(Fraction(cap[0]), ctx), h <= z3.RealVal(Fraction(cap[1]), ctx)
                )

    def _model(self, res: Any) -> tuple[Any, Any]:
        """``(res, model)`` after a check: the model of a SAT answer, or ``unknown`` when
        Z3 cannot give it (the context was interrupted, by a cancellation, as the check ended)."""
        if res != self.z3.sat:
            return res, None
        try:
            return res, self.solver.model()
        except self.z3.Z3Exception:
            return self.z3.unknown, None

    def _answer(self, res: Any, model: Any, next_value: float | None) -> Answer:
        z3 = self.z3
        if res == z3.unsat:
            return Answer("unsat", lower_bound=next_value)
        if res != z3.sat:
            return Answer("unknown")
        point = self._decode(model)
        return Answer("sat", point, exact_distance(self.problem, point))

    def _decode(self, model: Any) -> tuple[Any, ...]:
        out: list[Any] = []
        for v, (kind, h) in zip(self.problem.vars, self._vars, strict=True):
            if kind == "cat":
                if v.fixed:
                    out.append(int(v.query))
                    continue
                idx = next(
                    (
                        k
                        for k, b in enumerate(h)
                        if not self.z3.is_false(b) and z3_true(model.eval(b, model_completion=True))
                    ),
                    None,
                )
                out.append(int(v.query) if idx is None else idx)
                continue
            if v.fixed:
                out.append(int(v.query) if v.integral else _q(v.query))
                continue
            e = model.eval(h, model_completion=True)
            if v.integral:
                out.append(int(e.as_long()))
            else:
                out.append(e.as_fraction())
        return tuple(out)


def z3_true(e: Any) -> bool:
    """Whether a Z3 model value is ``True``."""
    import z3

    return bool(z3.is_true(e))
