"""MACE's CP-SAT oracle for tree ensembles (OR-Tools), over the ensemble's split intervals.

Trees read their inputs only through their splits, so a point matters only
through the interval between consecutive cuts each feature falls in.  The
model (Karimi et al.'s "counterfactual and distance <= delta" as a pure
Boolean/integer program):

* one *order literal* ``o_{j,k} = [z_j <= t_k]`` per distinct cut of numeric or
  ordinal feature ``j`` that the query's box leaves open, chained
  ``o_{j,k} => o_{j,k+1}``; a categorical feature is its allowed one-hot
  indicators (exactly one);
* one Boolean per reachable leaf of each tree (exactly one per tree), each
  implying the side of every open split on its path;
* the soft vote of each condition of the target region as one linear
  constraint over the leaf Booleans, with leaf values rounded **up** and the
  right-hand side rounded **down** to integers (scale :data:`VOTE_SCALE`);
* the distance as integer increments on the order literals: moving past the
  ``i``-th cut away from the query costs the distance from the previous cut
  (or the query) to this one, and the cost of every increment is rounded
  **down** (scale :data:`COST_SCALE`); l0 through "some literal differs from
  the query's", linf through ``T >= cost_j``;
* or the call's costs (``Problem.costs``, one
  :class:`~counterfact.constraints._costs.FeatureCost` per feature): a
  numeric or ordinal feature's interval between cuts costs what its cheapest
  point costs (the point nearest the query on a curve, each side of which is
  non-decreasing away from the query; the cheapest rank of a table), the
  change charge included, computed in exact rationals and rounded **down**;
  the interval of the query's value is the base and the increments between
  consecutive intervals sit on the order literals; a categorical feature's
  cost is its table over the indicators, each entry rounded **down**.

Both roundings make the integer program a *relaxation* of the exact one: every
true counterfactual satisfies it with an integer cost no larger than its true
distance times the scale.  Hence an infeasible check (or CP-SAT's proven
objective bound, divided by the scale) is a valid lower bound on the true
optimum.  A feasible answer is decoded to the point of its intervals nearest to
the query (under costs: the cheapest), its distance recomputed exactly
(:func:`exact_distance`), and the point re-checked with the compiled model in
float64 with the margin; a point the relaxation admitted but the exact model
rejects is answered ``unknown``.  The pipeline verifies every returned
counterfactual with the real model.  :meth:`CpsatOracle.check_point` checks a
given point the same way (the method's warm start from observed rows, and
polishing).

A real feature with a resolution (``Feature.resolution``) is searched on its
grid, as the Z3 oracle does: each cut separates the largest grid value that
goes left from the smallest that goes right, splits that fall between the same
two grid values share one literal, and the decoded point is a grid value, so
the answer is the value reported (no rounding afterwards that could cross a
split) and the lower bound is proven for the grid.  A query whose own value
lies off the grid between the two grid values a split separates is refused
(its value would have no interval; Z3 searches it).

Not covered (the method uses Z3 instead): finite allowed-value sets on numeric
features, diversity clauses, non-prefix ordinal splits, multi-conjunction
decision regions (one-vs-one SVMs are not tree ensembles anyway).  Relations
between features are not encoded either (the model has no value variables,
only split intervals): it raises :class:`UnsupportedConstraintError`, and
``solver="auto"`` answers such queries with Z3.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..._utils._deadline import Deadline
from ..._utils._deps import import_optional
from ...exceptions import UnsupportedConstraintError, UnsupportedModelError
from .._oracle import Answer
from .._problem import Problem, VarSpec, exact_distance
from .._smt._encoder import is_forest
from .._smt._text import ForestText

__all__ = ["COST_SCALE", "VOTE_SCALE", "CpsatOracle"]

#: integer units per unit of distance (the eq. 3 distance lies in [0, 1])
COST_SCALE = 10**7
#: integer units per unit of a leaf value (probabilities / margins)
VOTE_SCALE = 10**7
#: the largest scaled cost the integer model holds (a larger one: Z3 searches instead)
MAX_COST = 10**15


class CpsatOracle:
    """CP-SAT oracle of one query (module docstring); raises
    :class:`UnsupportedModelError` for what it does not cover."""

    def __init__(self, problem: Problem, compiled: Any, *, random_seed: int = 0) -> None:
        cp = import_optional(
            "ortools.sat.python.cp_model", purpose="MACE's CP-SAT oracle (solver='cpsat')"
        )
        conjunction = _target_conjunction(problem, compiled)
        self.cp, self.problem, self.compiled, self.seed = cp, problem, compiled, int(random_seed)
        self.m = cp.CpModel()
        self.ft = ForestText(compiled)
        self.lo, self.hi = self._box()
        self.order: dict[tuple[str, float], Any] = {}
        self.cuts: dict[
            str, list[tuple[float, float, Any]]
        ] = {}  # feature -> [(left_max, right_min, literal)]
        self.inds: dict[str, list[Any]] = {}
        #: the cost every point pays (a feature whose box leaves out the query's value)
        self.base = 0
        obj = self._features()
        self._vote(conjunction)
        self.dist = self.m.NewIntVar(0, MAX_COST, "dist")
        self.m.Add(self.dist == sum(c * x for c, x in obj) + self.base)
        self.m.Minimize(self.dist)
        self.n_calls = 0

    # ------------------------------------------------------------------ build
    def _box(self) -> tuple[np.ndarray, np.ndarray]:
        """The query's box over the compiler's raw vector ``z``: a fixed feature at its
        value, a categorical one over its allowed indicators."""
        space = self.compiled.inputs
        lo = np.zeros(space.n)
        hi = np.zeros(space.n)
        for v, blk in zip(self.problem.vars, space.blocks, strict=True):
            if v.kind == "categorical":
                allowed = {int(v.query)} if v.fixed else set(v.values or ())
                for k in range(blk.size):
                    hi[blk.start + k] = 1.0 if k in allowed else 0.0
                    lo[blk.start + k] = 1.0 if (v.fixed and k == int(v.query)) else 0.0
                continue
            if v.values is not None and not v.fixed:
                raise UnsupportedModelError(
                    "The CP-SAT oracle does not encode finite value sets of numeric features."
                )
            lo[blk.start] = float(v.query) if v.fixed else float(v.lower)  # type: ignore[arg-type]
            hi[blk.start] = float(v.query) if v.fixed else float(v.upper)  # type: ignore[arg-type]
        return lo, hi

    def _features(self) -> list[tuple[int, Any]]:
        """Every feature's literals and cost terms, and the change cap; returns the
        objective's ``(integer weight, literal)`` terms (module docstring)."""
        problem, m, est = self.problem, self.m, self.compiled.estimator
        a, b, g = problem.weights
        J = problem.n_features
        cuts = _numeric_cuts(est, self.compiled.inputs)
        obj: list[tuple[int, Any]] = []
        changed: list[Any] = []
        linf_t = m.NewIntVar(0, 10**15, "linf") if g > 0 else None
        ge_of = {
            (s.feature, float(s.raw_le)): float(s.raw_ge)
            for s in est.splits
            if s.raw_le is not None
        }
        costs = problem.costs or (None,) * J
        for v, blk, cost in zip(problem.vars, self.compiled.inputs.blocks, costs, strict=True):
            if v.kind == "categorical":
                chg = self._categorical(v, blk)
                if chg is not None and cost is not None:
                    self._table_cost(obj, v, cost)
                elif chg is not None:
                    self._cost(obj, chg, (a / J) + (b / J), g, linf_t, per_feature=[(chg, g)])
            else:
                les = sorted(cuts.get(v.name, ()))
                chg = self._numeric(v, blk, les, ge_of, obj, linf_t, cost)
            if chg is not None:
                changed.append(chg)
        if linf_t is not None:
            obj.append((1, linf_t))
        self.changed = changed
        if problem.max_changes is not None and changed:
            m.Add(sum(changed) <= int(problem.max_changes))
        return obj

    def _categorical(self, v: VarSpec, blk: Any) -> Any:
        """One indicator per allowed category (exactly one true); returns the literal
        "changed" (None for a fixed feature)."""
        m = self.m
        allowed = {int(v.query)} if v.fixed else set(v.values or ())
        ind = [
            m.NewBoolVar(f"{v.name}={k}") if k in allowed else m.NewConstant(0)
            for k in range(blk.size)
        ]
        m.AddExactlyOne([ind[k] for k in sorted(allowed)])
        self.inds[v.name] = ind
        if v.fixed:
            return None
        return ind[int(v.query)].Not() if int(v.query) in allowed else m.NewConstant(1)

    def _numeric(
        self,
        v: VarSpec,
        blk: Any,
        les: list[float],
        ge_of: dict[tuple[str, float], float],
        obj: list[tuple[int, Any]],
        linf_t: Any,
        cost: Any = None,
    ) -> Any:
        """A numeric or ordinal feature's order literals (one per open cut ``les``)
        and its cost increments (eq. 3's, or those of the call's ``cost``: a
        :class:`~counterfact.constraints._costs.FeatureCost`), added to ``obj``;
        returns the literal "changed" (None when the feature cannot move)."""
        m = self.m
        lits = self._order_literals(v, blk, les, ge_of)
        self.cuts[v.name] = lits
        if cost is not None and not v.fixed:
            self._interval_costs(obj, v, lits, cost)
        if v.fixed or not lits:
            return None
        terms = _increments(v, lits)
        moved = [t for t, _ in terms]
        if not moved:
            return None
        chg = m.NewBoolVar(f"chg_{v.name}")
        m.AddBoolOr(moved).OnlyEnforceIf(chg)
        for t in moved:
            m.AddImplication(t, chg)
        if cost is not None:
            return chg
        a, b, g = self.problem.weights
        J = self.problem.n_features
        self._cost(obj, chg, a / J, 0.0, None, per_feature=[])
        for t, inc in terms:
            self._cost(obj, t, (b / J) * inc, 0.0, None, per_feature=[])
        if linf_t is not None:
            m.Add(linf_t >= sum(math.floor(g * inc * COST_SCALE) * t for t, inc in terms))
        return chg

    def _order_literals(
        self, v: VarSpec, blk: Any, les: list[float], ge_of: dict[tuple[str, float], float]
    ) -> list[tuple[float, float, Any]]:
        """``[z_j <= t_k]`` per cut the box leaves open, chained; splits that fall
        between the same two grid (or integer) values share one literal."""
        m = self.m
        lits: list[tuple[float, float, Any]] = []
        prev = None
        step = Fraction(repr(float(v.grid))) if v.grid is not None and not v.integral else None
        for le in les:
            left_max, right_min = _sides(v, le, ge_of[(v.name, le)], step)
            if not v.fixed and left_max < float(v.query) < right_min:
                raise UnsupportedModelError(
                    f"The CP-SAT oracle searches '{v.name}' on its grid, and the query's own "
                    "value lies between the two grid values a split separates."
                )
            if left_max >= self.hi[blk.start]:
                continue  # the whole box goes left
            if right_min <= self.lo[blk.start]:
                continue  # the whole box goes right
            if lits and lits[-1][0] == left_max:
                # the same cut of the grid (or of the integers) as the previous
                # split: one literal, or the chain would admit "right of it and
                # left of it" at once
                self.order[(v.name, le)] = lits[-1][2]
                continue
            lit = m.NewBoolVar(f"{v.name}<={le:g}")
            if prev is not None:
                m.AddImplication(prev, lit)
            prev = lit
            lits.append((left_max, right_min, lit))
            self.order[(v.name, le)] = lit
        return lits

    def _table_cost(self, obj: list[tuple[int, Any]], v: VarSpec, cost: Any) -> None:
        """A categorical feature's costs on its indicators, each rounded down to the
        integer scale; a category of infinite cost (forbidden) is closed."""
        for k, ind in enumerate(self.inds[v.name]):
            if k == int(v.query):
                continue
            c = cost.table[k]
            if not math.isfinite(c):
                self.m.Add(ind == 0)
                continue
            w = _scaled(Fraction(c))
            if w > 0:
                obj.append((w, ind))

    def _interval_costs(
        self,
        obj: list[tuple[int, Any]],
        v: VarSpec,
        lits: list[tuple[float, float, Any]],
        cost: Any,
    ) -> None:
        """The call's cost of a numeric or ordinal feature over its intervals between
        cuts: each interval costs what its cheapest point costs (:func:`_best_point`,
        the change charge included), rounded down to the integer scale; the
        interval of the query's value is the base and the increments between
        consecutive intervals sit on the order literals (module docstring)."""
        L, U = float(v.lower), float(v.upper)  # type: ignore[arg-type]
        ends = [(lo, hi) for lo, hi in _interval_ends(L, U, lits)]
        C = []
        for lo, hi in ends:
            x = _best_point(v, cost, lo, hi)
            C.append(_scaled(cost.exact(Fraction(x))) if x is not None else None)
        if any(c is None for c in C):
            raise UnsupportedModelError(
                f"The CP-SAT oracle does not encode '{v.name}': an interval between cuts "
                "holds only forbidden values."
            )
        q = min(max(float(v.query), L), U)
        home = next(i for i, (lo, hi) in enumerate(ends) if q <= hi or i == len(ends) - 1)
        self.base += C[home]
        for j, (_, _, lit) in enumerate(lits):
            if j >= home:  # moving right past cut j: from interval j to j + 1
                _append(obj, C[j + 1] - C[j], lit.Not())
            else:  # moving left past cut j: from interval j + 1 to j
                _append(obj, C[j] - C[j + 1], lit)

    def _vote(self, conjunction: Any) -> None:
        """One leaf Boolean per reachable leaf (exactly one per tree), and each
        condition of the target's conjunction as one integer soft-vote constraint."""
        m, est = self.m, self.compiled.estimator
        leaf_terms: list[list[tuple[Any, np.ndarray]]] = []
        for t_i, tree in enumerate(est.trees):
            leaves = self._tree(t_i, tree)
            m.AddExactlyOne([lit for lit, _ in leaves])
            leaf_terms.append(leaves)
        for cnd in conjunction:
            coef = np.asarray(cnd.coef, dtype=float)
            const = float(est.divisor) * (
                float(cnd.rhs)
                + float(self.problem.margin)
                - float(np.asarray(est.base, dtype=float) @ coef)
            )
            expr = []
            for leaves in leaf_terms:
                for lit, val in leaves:
                    w = math.ceil(float(val @ coef) * VOTE_SCALE)
                    if w:
                        expr.append(w * lit)
            m.Add(sum(expr) >= math.floor(const * VOTE_SCALE))

    def _cost(
        self,
        obj: list[tuple[int, Any]],
        lit: Any,
        w: float,
        g: float,
        linf_t: Any,
        per_feature: list[tuple[Any, float]],
    ) -> None:
        c = math.floor(w * COST_SCALE)
        if c > 0:
            obj.append((c, lit))
        if linf_t is not None and g > 0:
            self.m.Add(linf_t >= math.floor(g * COST_SCALE) * lit)

    def _side(self, s_index: int) -> tuple[str, Any]:
        """("order", literal that is true when the point goes left) or ("cat", left indicators)."""
        s = self.compiled.estimator.splits[s_index]
        blk = self.compiled.inputs.block(s.feature)
        if blk.is_indicator:
            ind = self.inds[s.feature]
            return "cat", [ind[int(k)] for k in (s.left_categories or ())]
        return "order", self.order[(s.feature, float(s.raw_le))]

    def _tree(self, t_i: int, tree: Any) -> list[tuple[Any, np.ndarray]]:
        m = self.m
        out: list[tuple[Any, np.ndarray]] = []
        value = np.asarray(tree.value, dtype=float)

        def walk(n: int, path: list[tuple[int, bool]]) -> None:
            while tree.split[n] >= 0:
                d = self.ft._decide(int(tree.split[n]), self.lo, self.hi)
                if d is None:
                    walk(int(tree.left[n]), [*path, (int(tree.split[n]), True)])
                    walk(int(tree.right[n]), [*path, (int(tree.split[n]), False)])
                    return
                n = int(tree.left[n]) if d else int(tree.right[n])
            leaf = m.NewBoolVar(f"t{t_i}_l{n}")
            for s_index, left in path:
                kind, h = self._side(s_index)
                if kind == "order":
                    m.AddImplication(leaf, h if left else h.Not())
                elif left:
                    m.AddBoolOr(h or [m.NewConstant(0)]).OnlyEnforceIf(leaf)
                else:
                    for ind in h:
                        m.AddImplication(leaf, ind.Not())
            out.append((leaf, value[n]))

        walk(0, [])
        return out

    # ------------------------------------------------------------------ solve
    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        """Nearest point of the relaxation at (scaled) distance <= ``bound``, with a
        proven lower bound; ``unknown`` on a time-out or an exact-model rejection."""
        cp = self.cp
        self.n_calls += 1
        time_limit = deadline.seconds()
        if time_limit is not None and time_limit <= 0.005:
            return Answer("unknown")
        solver = cp.CpSolver()
        solver.parameters.num_workers = 1
        solver.parameters.random_seed = self.seed
        solver.parameters.log_search_progress = False
        solver.parameters.log_to_stdout = False
        if time_limit is not None:
            solver.parameters.max_time_in_seconds = float(time_limit)
        # "distance <= bound" under an assumption literal (a sound cut: a true
        # counterfactual within the bound has a scaled cost <= floor(bound * scale))
        self.m.ClearAssumptions()
        if bound is not None:
            on = self.m.NewBoolVar(f"bound{self.n_calls}")
            self.m.Add(self.dist <= max(0, math.floor(float(bound) * COST_SCALE))).OnlyEnforceIf(on)
            self.m.AddAssumption(on)
        # a cancellation stops the search at once (StopSearch, from the cancelling thread)
        token = deadline.token
        forget = token.on_cancel(solver.StopSearch) if token is not None else None
        try:
            if token is not None and token.cancelled:
                return Answer("unknown")
            st = solver.Solve(self.m)
        finally:
            if forget is not None:
                forget()
        if st == cp.INFEASIBLE:
            return Answer("unsat")
        lb = (
            max(0.0, float(solver.BestObjectiveBound()) / COST_SCALE)
            if st in (cp.OPTIMAL, cp.FEASIBLE)
            else None
        )
        if st not in (cp.OPTIMAL, cp.FEASIBLE):
            return Answer("unknown")
        point = self._decode(solver)
        if not self._valid(point):
            return Answer("unknown")
        return Answer("sat", point, exact_distance(self.problem, point), lb)

    def check_point(self, point: tuple[Any, ...], deadline: Deadline) -> Answer:
        """Is ``point`` (solver units) itself a counterfactual: inside every variable's
        domain, within the change cap, and in the target region with the margin
        (compiled model, float64)?  Used for the warm start from observed rows and
        for polishing; the pipeline re-verifies every answer with the real model."""
        p = self.problem
        n_changed = 0
        for j, (v, x) in enumerate(zip(p.vars, point, strict=True)):
            if v.kind == "categorical":
                if int(x) != int(v.query) and (v.fixed or int(x) not in set(v.values or ())):
                    return Answer("unsat")
            elif v.fixed:
                if float(x) != float(v.query):
                    return Answer("unsat")
            elif not float(v.lower) <= float(x) <= float(v.upper):  # type: ignore[arg-type]
                return Answer("unsat")
            n_changed += p.moved(j, x)
        if p.max_changes is not None and n_changed > int(p.max_changes):
            return Answer("unsat")
        if not self._valid(point):
            return Answer("unsat")
        return Answer("sat", tuple(point), exact_distance(p, point))

    def _decode(self, solver: Any) -> tuple[Any, ...]:
        out: list[Any] = []
        for j, v in enumerate(self.problem.vars):
            if v.kind == "categorical":
                ind = self.inds[v.name]
                k = next((i for i, x in enumerate(ind) if solver.BooleanValue(x)), int(v.query))
                out.append(int(k))
                continue
            if v.fixed:
                out.append(round(float(v.query)) if v.integral else float(v.query))
                continue
            L, U = float(v.lower), float(v.upper)  # type: ignore[arg-type]
            for left_max, right_min, lit in self.cuts.get(v.name, []):
                if solver.BooleanValue(lit):
                    U = min(U, left_max)
                else:
                    L = max(L, right_min)
            cost = self.problem.costs[j] if self.problem.costs is not None else None
            x = _best_point(v, cost, L, U)
            x = min(max(float(v.query), L), U) if x is None else x
            out.append(round(x) if v.integral else x)
        return tuple(out)

    def _valid(self, point: tuple[Any, ...]) -> bool:
        """The compiled model (float64) puts ``point`` in the target region with the margin."""
        space = self.compiled.inputs
        z = np.zeros((1, space.n))
        for v, blk, x in zip(self.problem.vars, space.blocks, point, strict=True):
            if v.kind == "categorical":
                z[0, blk.start + int(x)] = 1.0
            else:
                z[0, blk.start] = float(x)
        y = self.compiled.outputs_raw(z)[0]
        mg = float(self.problem.margin)
        return any(
            all(float(y @ np.asarray(c.coef, dtype=float)) >= float(c.rhs) + mg for c in conj)
            for conj in self.compiled.rule.region(int(self.problem.target_index))
        )


def _target_conjunction(problem: Problem, compiled: Any) -> Any:
    """The target's decision region, one conjunction of conditions; raises
    :class:`UnsupportedModelError` for what the oracle does not cover."""
    if not is_forest(compiled):
        raise UnsupportedModelError("The CP-SAT oracle encodes tree ensembles only.")
    if problem.blocked:
        raise UnsupportedModelError("The CP-SAT oracle does not encode diversity clauses.")
    if problem.relations:
        raise UnsupportedConstraintError(
            "The CP-SAT oracle does not encode relations between features (here "
            f"'{problem.relations[0].text}'); "
            "use solver='z3'."
        )
    region = compiled.rule.region(int(problem.target_index))
    if len(region) != 1:
        raise UnsupportedModelError("The CP-SAT oracle needs a single-conjunction decision region.")
    return region[0]


def _numeric_cuts(est: Any, space: Any) -> dict[str, set[float]]:
    """Per numeric or ordinal feature, the distinct cuts of the ensemble's splits."""
    cuts: dict[str, set[float]] = {}
    for s in est.splits:
        blk = space.block(s.feature)
        if blk.is_indicator:
            continue
        if s.raw_le is None:
            raise UnsupportedModelError(
                f"The CP-SAT oracle has no interval form of the split on '{s.feature}'."
            )
        cuts.setdefault(s.feature, set()).add(float(s.raw_le))
    return cuts


def _sides(v: VarSpec, le: float, ge: float, step: Fraction | None) -> tuple[float, float]:
    """``(left_max, right_min)`` of a split: the largest value of the feature that goes
    left and the smallest that goes right (on the integers, or on the feature's grid)."""
    if v.integral:
        return float(math.floor(le)), math.floor(le) + 1.0
    if step is not None:
        # on the feature's grid (as Z3 searches it): the largest grid value
        # that goes left and the smallest that goes right, exact multiples
        # of the step whose floats compare with the split as the rationals do
        return float(math.floor(Fraction(le) / step) * step), float(
            math.ceil(Fraction(ge) / step) * step
        )
    return le, ge


def _increments(v: VarSpec, lits: list[tuple[float, float, Any]]) -> list[tuple[Any, float]]:
    """The distance increments of a numeric feature as ``(literal, cost)``: past the
    cuts to the right of the query (literal false) and to the left (true)."""
    q = float(v.query)
    R = float(v.scale)
    terms: list[tuple[Any, float]] = []
    pos = q
    for left_max, right_min, lit in lits:
        if right_min > q and left_max >= q:  # the query goes left here; moving right costs
            inc = max(0.0, min(right_min, float(v.upper)) - pos) / R  # type: ignore[arg-type]
            terms.append((lit.Not(), inc))
            pos = max(pos, right_min)
    pos = q
    for left_max, _right_min, lit in reversed(lits):
        if left_max < q:  # the query goes right here; moving left costs
            inc = max(0.0, pos - max(left_max, float(v.lower))) / R  # type: ignore[arg-type]
            terms.append((lit, inc))
            pos = min(pos, left_max)
    return terms


def _scaled(cost: Fraction) -> int:
    """A cost on the integer scale, rounded down (the relaxation stays a relaxation)."""
    w = math.floor(cost * COST_SCALE)
    if w > MAX_COST:
        raise UnsupportedModelError(
            f"The CP-SAT oracle's integer scale holds costs up to {MAX_COST / COST_SCALE:g}; "
            f"got {float(cost):g}."
        )
    return w


def _append(obj: list[tuple[int, Any]], w: int, lit: Any) -> None:
    if w:
        obj.append((w, lit))


def _interval_ends(
    L: float, U: float, lits: list[tuple[float, float, Any]]
) -> list[tuple[float, float]]:
    """The value ranges ``[lo, hi]`` of a feature between its consecutive open cuts
    (``lits``: ``(left_max, right_min, literal)`` in order), within ``[L, U]``."""
    los = [L, *(right_min for _, right_min, _ in lits)]
    his = [*(left_max for left_max, _, _ in lits), U]
    return [(max(L, a), min(U, b)) for a, b in zip(los, his, strict=True)]


def _best_point(v: VarSpec, cost: Any, lo: float, hi: float) -> float | None:
    """The cheapest value of ``[lo, hi]`` under ``cost``: the one nearest the query for
    a curve (each side non-decreasing away from it) or without costs; the cheapest
    rank (nearest the query among equals) for an ordinal table; None when every
    value is forbidden."""
    q = float(v.query)
    if cost is None or cost.kind != "table":
        return min(max(q, lo), hi)
    ranks = range(math.ceil(lo - 1e-9), math.floor(hi + 1e-9) + 1)
    ok = [(cost.table[r], abs(r - q), r) for r in ranks if math.isfinite(cost.table[r])]
    return float(min(ok)[2]) if ok else None
