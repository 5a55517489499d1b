"""MACE's branch-and-bound oracle for tree ensembles (:mod:`counterfact.solvers._bnb`).

Instead of answering "is there a counterfactual at distance <= delta?" by a
satisfiability call per step of Algorithm 1, the oracle finds the nearest
counterfactual outright: a best-first search over the boxes the ensemble's
splits cut, with per-tree bounds on the reachable leaves and the exact least
distance of each box (see :mod:`counterfact.solvers._bnb._search`).  Its first
answer carries a lower bound equal to its distance, so Algorithm 1 stops
after one call with ``delta_min == delta_max`` (up to float rounding): the
exact optimum of the encoded problem, not one within ``rel_gap``.

It encodes what the Z3 and CP-SAT oracles encode for a tree ensemble: the
target region with the decision margin (and a probability floor, through the
compiled rule), the domain of every feature (ranges, immutables and
directions through the query's bounds, integers, ordinal ranks, the real
features' grids with the query's own value, allowed categories and value
sets), the change cap, the ``robust_to`` models when they are tree ensembles over
the same inputs, and the call's costs (each atom's cost is the cost of its
value nearest the query, the change charge included; the distance is their
sum).  What it does not encode raises
:class:`~counterfact.exceptions.UnsupportedModelError`, and the method then
uses another oracle (``solver="auto"``) or raises
:class:`~counterfact.exceptions.UnsupportedConstraintError` (``solver="bnb"``):
diversity clauses (a second and further counterfactual), relations between
features, other kinds of model,
more than :data:`~counterfact.solvers._bnb.MAX_ATOMS` categories or allowed
values of one feature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..._utils._deadline import Deadline
from ...exceptions import UnsupportedModelError
from ...models._compile import TreeEnsemble
from .._oracle import Answer
from .._problem import Problem, VarSpec, exact_distance
from ._atoms import Domain
from ._conditions import forest_conditions
from ._flat import FlatForest, flat_forest
from ._query import query_forest
from ._search import Conditions, Outcome, best_first

__all__ = ["BnbOracle", "bnb_unsupported"]


def bnb_unsupported(
    blocked: bool, compiled: Any, others: Sequence[tuple[Any, int]], *, relations: bool = False
) -> str | None:
    """What the oracle cannot search in a query (a phrase naming it), or None."""
    if relations:
        return (
            "relations between features (it searches the ensemble's split intervals, not the "
            "features' values)"
        )
    if blocked:
        return "diversity clauses (a second or further counterfactual: n_counterfactuals > 1)"
    for model in (compiled, *(o for o, _ in others)):
        if not isinstance(model.estimator, TreeEnsemble):
            return f"a model that is no tree ensemble ({model.source or model.estimator_class})"
    return None


def _forest(
    compiled: Any, others: Sequence[tuple[Any, int]], cache: dict[str, Any] | None
) -> FlatForest:
    """The flattened trees of the model and the ``robust_to`` models (cached per set of models)."""
    models = [compiled, *(o for o, _ in others)]
    key = tuple(id(m.estimator) for m in models)
    hit = cache.get("bnb_forest") if cache is not None else None
    if (
        hit is not None
        and hit[0] == key
        and all(a is b.estimator for a, b in zip(hit[1], models, strict=True))
    ):
        return hit[2]  # type: ignore[no-any-return]
    ff = flat_forest(models)
    if cache is not None:
        cache["bnb_forest"] = (key, [m.estimator for m in models], ff)
    return ff


def _conditions(
    ff: FlatForest, views: list[tuple[Any, int]], margin: float, cache: dict[str, Any] | None
) -> Conditions:
    """The target region's conditions over the leaves (cached per forest, rules, targets,
    margin)."""
    key = (id(ff), tuple((m.rule, int(t)) for m, t in views), margin)
    table = cache.setdefault("bnb_conditions", {}) if cache is not None else {}
    hit = table.get(key)
    if hit is None or hit[0] is not ff:
        if len(table) > 64:
            table.clear()
        hit = table[key] = (ff, forest_conditions(ff, views, margin))
    return hit[1]  # type: ignore[no-any-return]


def _costs_unsupported(problem: Problem) -> str | None:
    """What of the call's costs the search cannot take: with a change cap it counts a
    feature as changed by a positive cost, so every change must cost something."""
    costs = problem.costs
    if costs is None or problem.max_changes is None:
        return None
    for v, c in zip(problem.vars, costs, strict=True):
        if v.fixed:
            continue
        table = [t for k, t in enumerate(c.table) if k != round(float(c.query))]
        free = c.change <= 0 if c.kind == "curve" else min(table, default=1.0) <= 0
        if free:
            return f"a change cap with costs under which a change of '{v.name}' costs nothing"
    return None


def _domain(v: VarSpec, cost: Any = None) -> Domain:
    """A :class:`VarSpec` as the solver's :class:`Domain` (with the call's cost of the
    feature, if any)."""
    if v.kind == "categorical":
        return Domain(
            query=float(v.query),
            scale=1.0,
            categorical=True,
            values=tuple(float(k) for k in v.values or ()),
            fixed=v.fixed,
            cost=cost,
        )
    return Domain(
        query=float(v.query),
        scale=float(v.scale),
        lower=float(v.lower),  # type: ignore[arg-type]
        upper=float(v.upper),  # type: ignore[arg-type]
        values=None if v.values is None else tuple(float(x) for x in v.values),
        integral=v.integral,
        grid=v.grid,
        fixed=v.fixed,
        cost=cost,
    )


class BnbOracle:
    """Branch-and-bound oracle of one query (module docstring)."""

    def __init__(
        self,
        problem: Problem,
        compiled: Any,
        *,
        others: Sequence[tuple[Any, int]] = (),
        cache: dict[str, Any] | None = None,
    ) -> None:
        why = bnb_unsupported(
            bool(problem.blocked),
            compiled,
            others,
            relations=bool(getattr(problem, "relations", ())),
        )
        if why is None:
            why = _costs_unsupported(problem)
        if why is not None:
            raise UnsupportedModelError(f"The branch-and-bound oracle does not search {why}.")
        self.problem = problem
        ff = _forest(compiled, others, cache)
        views = [(compiled, int(problem.target_index)), *others]
        self.conditions = _conditions(ff, views, float(problem.margin), cache)
        costs = problem.costs or (None,) * problem.n_features
        domains = [_domain(v, c) for v, c in zip(problem.vars, costs, strict=True)]
        self.qf = query_forest(ff, domains)
        a, b, g = problem.weights
        J = problem.n_features
        # under the call's costs each atom's delta is its cost: the distance is their sum
        self.weights = (0.0, 1.0, 0.0) if problem.costs is not None else (a / J, b / J, g)
        self.n_calls = 0
        self.n_nodes = 0
        self._outcome: Outcome | None = None

    def check(self, bound: float | None, deadline: Deadline) -> Answer:
        """The nearest counterfactual if it lies within ``bound`` (with its distance as
        the proven lower bound), else ``unsat`` (with that distance as the lower bound);
        ``unknown`` when the search stopped at the deadline."""
        self.n_calls += 1
        if self.qf is None:  # some feature has no allowed value
            return Answer("unsat")
        if self._outcome is None:
            out = best_first(
                self.qf,
                self.conditions,
                self.weights,
                max_changes=self.problem.max_changes,
                deadline=deadline,
            )
            self.n_nodes += out.nodes
            if (
                out.status == "unknown"
            ):  # stopped: the nearest counterfactual found, not proven nearest
                if out.point is None:
                    return Answer("unknown")
                point = self._decode(out)
                dist = exact_distance(self.problem, point)
                if bound is not None and dist > float(bound):
                    return Answer("unknown")
                return Answer("sat", point, dist, min(dist, out.lower_bound))
            self._outcome = out
        out = self._outcome
        if out.status == "infeasible":
            return Answer("unsat")
        point = self._decode(out)
        dist = exact_distance(self.problem, point)
        lower = min(dist, out.lower_bound - 1e-12 * max(1.0, abs(out.lower_bound)))
        if bound is not None and dist > float(bound):
            return Answer("unsat", lower_bound=lower)
        return Answer("sat", point, dist, lower)

    def _decode(self, out: Outcome) -> tuple[Any, ...]:
        """The point's atoms as values in solver units."""
        values: list[Any] = []
        atoms = self.qf.atoms if self.qf is not None else []
        for v, a, k in zip(
            self.problem.vars, atoms, out.point if out.point is not None else (), strict=True
        ):
            x = float(a.point[int(k)])
            values.append(round(x) if (v.kind == "categorical" or v.integral) else x)
        return tuple(values)
