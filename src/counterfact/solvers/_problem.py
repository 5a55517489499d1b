"""One query of a nearest-counterfactual search in solver units (what every oracle reads).

A :class:`Problem` holds one :class:`VarSpec` per raw feature, in *solver units*
(numeric features as values, ordinal features as ranks, binary and categorical
features as the index of the category), plus the global limits.  Every oracle
(Z3, MILP, CP-SAT, branch and bound) reads only this and the compiled model.

Distances are normalised: per feature ``delta_j = |x_j - q_j| / R_j`` for
numeric features, ``|rank - rank_q| / R_j`` for ordinal ones and
``1[x_j != q_j]`` for categorical ones; the distance is
``alpha/J * ||delta||_0 + beta/J * ||delta||_1 + gamma * ||delta||_inf`` with
``alpha + beta + gamma = 1``, so that it lies in [0, 1] for queries inside the
domain.  The call's costs, when given, replace it (their sum).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..constraints._bounds import QueryBounds
from ..constraints._relations_bound import BoundRelation
from ..schema import Schema

__all__ = [
    "Problem",
    "Search",
    "VarSpec",
    "decode",
    "exact_distance",
    "grid_value",
    "solver_values",
    "waiting",
]

VarKind = Literal["real", "integer", "categorical", "ordinal"]


@dataclass(frozen=True)
class VarSpec:
    """One raw feature in solver units.

    ``query``: the query's value (category index for categorical features,
    rank for ordinal ones).  ``lower``/``upper``: inclusive bounds (numeric
    and ordinal).  ``values``: the finite set of allowed values (category
    indices, ranks, or numeric values), or None.  ``scale``: the normalising
    range ``R_j``.  ``fixed``: only the query's value is allowed.  ``grid``:
    the resolution of a real feature (``Feature.resolution``): a changed value
    must be a multiple of it, as every reported value is (the pipeline
    snaps answers to it); None for no grid.
    """

    name: str
    kind: VarKind
    query: Any
    scale: float
    lower: float | None = None
    upper: float | None = None
    values: tuple[Any, ...] | None = None
    n_categories: int = 0
    fixed: bool = False
    grid: float | None = None

    @property
    def integral(self) -> bool:
        """Integer-valued in solver units (integer, ordinal)."""
        return self.kind in ("integer", "ordinal")


@dataclass
class Problem:
    """Everything an oracle encodes for one query (besides the model).

    ``blocked``: earlier counterfactuals (solver units, one tuple per point)
    that a new one must not repeat (``blocking``: not dominated by any, or
    differing in at least ``min_diff`` features, or another change set).
    ``margin``: the decision margin.
    """

    vars: list[VarSpec]
    weights: tuple[float, float, float]
    max_changes: int | None
    target_index: int
    margin: float
    min_diff: int = 1
    blocked: list[tuple[Any, ...]] = field(default_factory=list)
    bounds: QueryBounds | None = None
    #: per feature, by how much (solver units) a value must move away from an
    #: earlier counterfactual's to count as a difference (0: any move)
    steps: tuple[float, ...] | None = None
    #: "options" (no earlier answer dominates the point, :mod:`._options`), "points"
    #: (blocking clauses) or "features" (a different set of changed features)
    blocking: str = "points"
    #: relations between features, in solver units (``QueryBounds.bound_relations()``)
    relations: tuple[BoundRelation, ...] = ()
    #: per feature, the smallest move (raw units) that counts as a change for the
    #: further answers (the pipeline's meaningful steps; None: any move counts)
    min_moves: tuple[float, ...] | None = None
    #: the call's costs (``explain(costs=...)``): one FeatureCost per feature in solver
    #: units; they replace eq. (3), the distance is then their sum
    costs: tuple[Any, ...] | None = None

    @property
    def timeline(self) -> Any:
        """The query's timeline (``QueryBounds.timeline``: elapsed months, the features time
        moves), or None; its waiting is part of the distance."""
        return None if self.bounds is None else self.bounds.timeline

    def meaningful(self, j: int, value: Any) -> bool:
        """Whether ``value`` (solver units) moves feature ``j`` by at least its
        meaningful step (any other category or rank; :meth:`moved` without steps)."""
        v = self.vars[j]
        if not self.moved(j, value):
            return False
        if self.min_moves is None or v.kind not in ("integer", "real"):
            return True
        return abs(float(value) - float(v.query)) >= float(self.min_moves[j]) * (1 - 1e-9)

    def needs_meaningful(self, j: int) -> float:
        """The smallest move of numeric feature ``j`` allowed in a further answer when a
        one-grid-unit move would be smaller than its meaningful step (0: no rule)."""
        v = self.vars[j]
        if (
            not self.blocked
            or self.min_moves is None
            or v.fixed
            or v.kind not in ("integer", "real")
        ):
            return 0.0
        m = float(self.min_moves[j])
        unit = 1.0 if v.integral else float(v.grid or 0.0)
        if m <= unit * (1 + 1e-9):
            return 0.0
        return float(math.ceil(m - 1e-9)) if v.integral else m

    def moved(self, j: int, value: Any) -> bool:
        """Whether ``value`` (solver units) differs from the query's value of feature ``j``."""
        v = self.vars[j]
        if v.kind == "categorical" or v.integral:
            return round(float(value)) != round(float(v.query))
        return abs(float(value) - float(v.query)) > 1e-7 * max(1.0, abs(float(v.query)))

    @property
    def n_features(self) -> int:
        """J in eq. (3)."""
        return len(self.vars)

    def distance(self, point: tuple[Any, ...]) -> float:
        """Eq. (3) for a point in solver units (the sum of the call's costs when it has them)."""
        if self.costs is not None:
            return float(
                sum(float(c(x)[()]) for c, x in zip(self.costs, point, strict=True))
            ) + waiting(self, point)
        a, b, g = self.weights
        J = self.n_features
        d = np.array([_delta(v, x) for v, x in zip(self.vars, point, strict=True)], dtype=float)
        return float(
            a * np.count_nonzero(d > 0) / J + b * d.sum() / J + g * (d.max() if d.size else 0.0)
        ) + waiting(self, point)


def _delta(v: VarSpec, x: Any) -> float:
    if v.kind == "categorical":
        return float(int(x) != int(v.query))
    return abs(float(x) - float(v.query)) / v.scale


def solver_values(schema: Schema, row: pd.Series) -> tuple[Any, ...]:
    """A raw row in solver units (for blocking clauses)."""
    out: list[Any] = []
    for f in schema:
        v = _py(row[f.name])
        if f.kind == "integer":
            out.append(round(float(v)))
        elif f.kind == "real":
            out.append(float(v))
        else:
            out.append(f.rank(v))
    return tuple(out)


def grid_value(v: VarSpec, value: Any) -> Fraction | None:
    """``value`` as an exact multiple of ``v.grid`` when it lies on the grid (up to
    float rounding, 1e-9 relative), else None.  The grid step is read from its
    decimal text (``0.01`` is exactly 1/100)."""
    if v.grid is None:
        return None
    x = float(value)
    r = Fraction(repr(float(v.grid)))
    k = round(Fraction(x) / r)
    if abs(float(k * r) - x) <= 1e-9 * max(1.0, abs(x)):
        return k * r
    return None


def decode(schema: Schema, point: tuple[Any, ...]) -> dict[str, Any]:
    """A point in solver units as a raw row (categories as categories, integers as ints)."""
    out: dict[str, Any] = {}
    for f, v in zip(schema, point, strict=True):
        if f.kind == "integer":
            out[f.name] = round(float(v))
        elif f.kind == "real":
            x = float(v)
            out[f.name] = x if math.isfinite(x) else float("nan")
        else:
            out[f.name] = f.categories[int(v)]  # type: ignore[index]
    return out


def exact_distance(problem: Problem, point: tuple[Any, ...]) -> float:
    """Eq. (3) for a point in solver units, computed in exact rationals (then rounded once);
    the sum of the call's costs when it has them."""
    if problem.costs is not None:
        return float(
            sum((c.exact(x) for c, x in zip(problem.costs, point, strict=True)), Fraction(0))
            + waiting(problem, point, exact=True)
        )
    a, b, g = problem.weights
    J = problem.n_features
    deltas = []
    for v, x in zip(problem.vars, point, strict=True):
        if v.kind == "categorical":
            deltas.append(Fraction(int(int(x) != int(v.query))))
        else:
            deltas.append(abs(Fraction(x) - Fraction(v.query)) / Fraction(v.scale))
    n0 = sum(1 for d in deltas if d != 0)
    total = (
        Fraction(a) * n0 / J
        + Fraction(b) * sum(deltas, Fraction(0)) / J
        + Fraction(g) * max(deltas, default=Fraction(0))
    )
    return float(total + waiting(problem, point, exact=True))


def waiting(problem: Problem, point: tuple[Any, ...], *, exact: bool = False) -> Any:
    """The cost of the months ``point`` needs under the query's timeline (0 without one;
    inf when no month within the horizon is consistent with it); ``exact``: a Fraction."""
    tl = problem.timeline
    if tl is None or not tl.wait_cost:
        return Fraction(0) if exact else 0.0
    t = tl.elapsed_point(point)
    if t is None:
        return math.inf
    return Fraction(tl.wait_cost) * t if exact else tl.wait_cost * t


@dataclass
class Search:
    """One nearest-counterfactual search, as a solver backend receives it.

    ``problem``: the query in solver units; ``compiled``: the model's IR;
    ``others``: further models (IR, target index) every answer must also
    reach (``robust_to``); ``schema``: the features; ``rel_gap``: the search's
    relative tolerance (a MILP's relative gap follows it); ``seed``: the solver's random
    seed; ``cache``: per-model artefacts shared by a method's searches.
    """

    problem: Problem
    compiled: Any
    others: Sequence[tuple[Any, int]] = ()
    schema: Any = None
    rel_gap: float = 0.01
    seed: int = 0
    cache: dict[str, Any] | None = None
