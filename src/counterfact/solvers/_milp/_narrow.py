"""A query's box narrowed to what a bounded distance can reach: :func:`narrow_bounds`.

Every term of the distance (eq. (3)'s normalised l0 / l1 / linf, or the sum of
the call's per-feature costs) is non-negative and at least the feature's own
share, so a point at distance at most ``radius`` has each feature's own term at
most ``radius``: a numeric value stays within the values whose own cost is at
most ``radius`` (one interval around the query, :meth:`FeatureCost.interval`),
and a category, rank or listed value costing more than ``radius`` is left out.
Every point within ``radius`` lies in the narrowed box, so a search bounded by
``radius`` proves the same over it as over the whole box; the box is smaller,
so the big-M rows built from it (change indicators, ReLU bounds by interval
arithmetic) are tighter.  The radius is widened by a relative 1e-7 (plus 1e-9)
so that rounding never cuts a point off.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from ...constraints._bounds import FeatureBounds, QueryBounds
from .._problem import Problem, VarSpec

__all__ = ["RADIUS_SLACK", "narrow_bounds"]

#: relative and absolute widening of a radius (rounding must never cut a point off)
RADIUS_SLACK = (1e-7, 1e-9)


def narrow_bounds(problem: Problem, radius: float) -> QueryBounds | None:
    """``problem.bounds`` with every feature kept to the values whose own term of the
    distance is at most ``radius`` (module docstring); None when nothing narrows,
    or under a timeline (its waiting and the moves time makes are not per-feature
    terms measured from the query)."""
    bounds = problem.bounds
    if bounds is None or problem.timeline is not None or not math.isfinite(radius):
        return None
    r = max(float(radius), 0.0) * (1 + RADIUS_SLACK[0]) + RADIUS_SLACK[1]
    costs = problem.costs
    out, hit = [], False
    for j, v in enumerate(problem.vars):
        b = bounds[v.name]
        cost = _EqThree(problem, v) if costs is None else costs[j]
        nb = b if v.fixed or b.empty else _narrow_one(v, b, cost, r)
        hit = hit or nb is not b
        out.append(nb)
    if not hit:
        return None
    return replace(bounds, features=tuple(out))


def _narrow_one(v: VarSpec, b: FeatureBounds, cost: Any, r: float) -> FeatureBounds:
    """One feature's bounds kept to the values costing at most ``r`` (``b`` itself when
    nothing is left out)."""
    f = b.feature
    if v.kind in ("categorical", "ordinal"):
        cats = list(f.categories)  # type: ignore[arg-type]
        allowed = list(b.values) if b.values is not None else cats
        keep = tuple(c for c in allowed if _cost(cost, cats.index(c)) <= r or c == b.value)
        return b if len(keep) == len(allowed) else replace(b, values=keep)
    if b.values is not None:  # listed values of a numeric feature
        q = float(v.query)
        keep = tuple(x for x in b.values if float(x) == q or _cost(cost, float(x)) <= r)
        return b if len(keep) == len(b.values) else replace(b, values=keep)
    lo, hi, q = float(b.lower), float(b.upper), float(v.query)  # type: ignore[arg-type]
    if not lo <= q <= hi or getattr(cost, "kind", "curve") != "curve":
        return b  # the query lies outside its own box (or a table): nothing to centre on
    nlo, nhi = cost.interval(r, lo, hi)
    nlo, nhi = max(lo, min(nlo, q)), min(hi, max(nhi, q))
    if nlo <= lo and nhi >= hi:
        return b
    return replace(b, lower=nlo, upper=nhi)


def _cost(cost: Any, value: float) -> float:
    return float(cost(value)[()])


class _EqThree:
    """Feature ``v``'s least share of eq. (3) (weights ``(a, b, g)`` over ``J``
    features), in the interface of a :class:`FeatureCost`: a change costs at least
    ``a / J`` and each normalised unit moved ``b / J + g`` (the linf term is at
    least this feature's own move)."""

    def __init__(self, problem: Problem, v: VarSpec) -> None:
        a, b, g = problem.weights
        J = max(problem.n_features, 1)
        self.change = float(a) / J
        self.per_unit = float(b) / J + float(g)
        self.query = float(v.query)
        self.scale = 1.0 if v.kind == "categorical" else float(v.scale)
        self.categorical = v.kind == "categorical"

    def __call__(self, value: Any) -> Any:
        x = float(value)
        if x == self.query:
            return np.asarray(0.0)
        move = 1.0 if self.categorical else abs(x - self.query) / self.scale
        return np.asarray(self.change + self.per_unit * move)

    def interval(self, budget: float, lo: float, hi: float) -> tuple[float, float]:
        """The values in ``[lo, hi]`` whose share is at most ``budget``."""
        left = budget - self.change
        if left < 0:
            return self.query, self.query
        if self.per_unit <= 0:
            return lo, hi
        width = left / self.per_unit * self.scale
        width = width * (1 + RADIUS_SLACK[0]) + RADIUS_SLACK[1]
        return max(lo, self.query - width), min(hi, self.query + width)
