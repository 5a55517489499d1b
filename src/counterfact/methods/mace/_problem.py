"""The solver-neutral description of one MACE query.

:func:`build_problem` turns the schema, the query's bounds (every constraint
kind already merged by :mod:`counterfact.constraints`) and the distance into a
:class:`Problem`: one :class:`VarSpec` per raw feature, in *solver units*
(numeric features as values, ordinal features as ranks, binary and categorical
features as the index of the category), plus the global limits.  Both oracles
(Z3, MIP) read only this and the compiled model.

Distances follow MACE eq. (3): per feature ``delta_j = |x_j - q_j| / R_j`` for
numeric features, ``|rank - rank_q| / R_j`` for ordinal ones and
``1[x_j != q_j]`` for categorical ones; the distance is
``alpha/J * ||delta||_0 + beta/J * ||delta||_1 + gamma * ||delta||_inf`` with
``alpha + beta + gamma = 1``, so that it lies in [0, 1] for queries inside the
domain.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..._utils._values import _py
from ...constraints import BoundRelation, QueryBounds
from ...exceptions import ValidationError
from ...schema import Schema
from .._pipeline import resolution

__all__ = [
    "NORMS",
    "Problem",
    "VarSpec",
    "build_problem",
    "decode",
    "exact_distance",
    "grid_value",
    "norm_weights",
    "solver_values",
]

#: norm name -> (alpha, beta, gamma)
NORMS: dict[str, tuple[float, float, float]] = {
    "l0": (1.0, 0.0, 0.0),
    "l1": (0.0, 1.0, 0.0),
    "linf": (0.0, 0.0, 1.0),
}

VarKind = Literal["real", "integer", "categorical", "ordinal"]


def norm_weights(norm: Any) -> tuple[float, float, float]:
    """``(alpha, beta, gamma)`` of a norm name or a convex combination (normalised to sum 1)."""
    if isinstance(norm, str):
        if norm not in NORMS:
            raise ValidationError(
                f"MACE norm must be one of {sorted(NORMS)} or (alpha, beta, gamma). Got {norm!r}."
            )
        return NORMS[norm]
    a, b, g = (float(v) for v in norm)
    s = a + b + g
    if not s > 0 or min(a, b, g) < 0:
        raise ValidationError(
            f"MACE norm weights (alpha, beta, gamma) must be >= 0 with a positive sum. Got {norm!r}."
        )
    return a / s, b / s, g / s


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
    from which a new one must differ in at least ``min_diff`` features
    (MACE's diversity clauses).  ``margin``: the decision margin.
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
    #: "points" (blocking clauses) or "features" (a different set of changed features)
    diversity: str = "points"
    #: relations between features, in solver units (``QueryBounds.bound_relations()``)
    relations: tuple[BoundRelation, ...] = ()
    #: per feature, the smallest move (raw units) that counts as a change for the
    #: further answers (the pipeline's meaningful steps; None: any move counts)
    min_moves: tuple[float, ...] | None = None
    #: the call's costs (``explain(costs=...)``): one FeatureCost per feature in solver
    #: units; they replace eq. (3), the distance is then their sum
    costs: tuple[Any, ...] | None = None

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
            return float(sum(float(c(x)[()]) for c, x in zip(self.costs, point, strict=True)))
        a, b, g = self.weights
        J = self.n_features
        d = np.array([_delta(v, x) for v, x in zip(self.vars, point, strict=True)], dtype=float)
        return float(
            a * np.count_nonzero(d > 0) / J + b * d.sum() / J + g * (d.max() if d.size else 0.0)
        )


def _delta(v: VarSpec, x: Any) -> float:
    if v.kind == "categorical":
        return float(int(x) != int(v.query))
    return abs(float(x) - float(v.query)) / v.scale


def build_problem(
    schema: Schema,
    bounds: QueryBounds,
    *,
    weights: tuple[float, float, float],
    target_index: int,
    margin: float,
    min_diff: int = 1,
    steps: Any = None,
    diversity: str = "points",
    min_moves: Any = None,
) -> Problem:
    """The :class:`Problem` of one query (every constraint kind through ``bounds``)."""
    specs = []
    for f in schema:
        b = bounds[f.name]
        q = _py(b.value)
        if f.is_numeric:
            lo, hi = float(b.lower), float(b.upper)  # type: ignore[arg-type]
            vals = None
            if b.values is not None:
                vals = tuple(sorted({float(v) for v in b.values}))
            qv: Any = round(float(q)) if f.kind == "integer" else float(q)
            fixed = bool(b.fixed) or (vals is not None and len(vals) == 1 and vals[0] == float(qv))
            grid = resolution(f) if f.kind == "real" and vals is None else None
            specs.append(VarSpec(f.name, f.kind, qv, f.range, lo, hi, vals, 0, fixed, grid))  # type: ignore[arg-type]
            continue
        cats = list(f.categories)  # type: ignore[arg-type]
        allowed = tuple(sorted(cats.index(c) for c in (b.values if b.values is not None else cats)))
        qi = cats.index(q)
        fixed = allowed == (qi,)
        if f.kind == "ordinal":
            lo_r = float(min(allowed)) if allowed else 0.0
            hi_r = float(max(allowed)) if allowed else -1.0
            contiguous = allowed == tuple(range(int(lo_r), int(hi_r) + 1))
            specs.append(
                VarSpec(
                    f.name,
                    "ordinal",
                    qi,
                    f.range,
                    lo_r,
                    hi_r,
                    None if contiguous else allowed,
                    len(cats),
                    fixed,
                )
            )
        else:
            specs.append(
                VarSpec(f.name, "categorical", qi, 1.0, None, None, allowed, len(cats), fixed)
            )
    return Problem(
        vars=specs,
        weights=weights,
        max_changes=bounds.max_changes,
        target_index=target_index,
        margin=margin,
        min_diff=min_diff,
        bounds=bounds,
        steps=None if steps is None else tuple(float(x) for x in steps),
        diversity=diversity,
        relations=bounds.bound_relations(),
        min_moves=None if min_moves is None else tuple(float(x) for x in min_moves),
    )


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
    return float(total)
