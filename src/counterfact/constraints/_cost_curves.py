"""The cost of one feature's new value for one query (:class:`FeatureCost`).

A :class:`~counterfact.constraints.Costs` bound to a schema and its training
data gives, for every query, one :class:`FeatureCost` per feature in *solver
units* (numeric features as values, ordinal features as ranks, binary and
categorical features as the index of the category):

* a numeric feature: a piecewise-linear **curve** through knots ``(xs, cs)``
  with ``cs = 0`` at the query's value, continued below the first knot with
  slope ``left`` (cost per unit moved down) and above the last with slope
  ``right``.  Each side of the query is non-decreasing away from it (weights
  are non-negative and a percentile is monotone), so ``{x : cost(x) <= b}`` is
  one interval (:meth:`FeatureCost.interval`).  A fixed **change** charge is
  added to every value other than the query's (the count of changed features
  in the default measure of effort): the curve jumps from 0 at the query to
  ``change`` beside it, so it is not convex, but each side stays
  non-decreasing away from the query;
* a discrete feature: a **table**, the cost of each category (0 for the
  query's own, ``inf`` for a forbidden transition), its change charge included.

The exact solvers encode these same numbers (Z3 in exact rationals, the MILP
as an epigraph or a segment formulation), so the cost they prove is the cost
this module computes.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

__all__ = ["FeatureCost"]


@dataclass(frozen=True)
class FeatureCost:
    """The cost of one feature's value for one query (see the module docstring).

    ``kind`` is ``"curve"`` (numeric) or ``"table"`` (discrete).  A side whose
    weight is infinite (the feature may not move that way) has no knots past
    the query and slope 0 there: the query's bounds forbid it, and
    :meth:`__call__` returns ``inf`` for such values.
    """

    name: str
    kind: str
    query: float
    xs: tuple[float, ...] = ()
    cs: tuple[float, ...] = ()
    left: float = 0.0
    right: float = 0.0
    table: tuple[float, ...] = ()
    #: the sides the feature may not move to (cost infinite)
    no_down: bool = False
    no_up: bool = False
    #: a curve's fixed charge for any value other than the query's (tables hold theirs)
    change: float = 0.0

    # ------------------------------------------------------------ floats
    def __call__(self, values: Any) -> np.ndarray:
        """The cost of each value (solver units; a table reads category indices)."""
        v = np.asarray(values, dtype=float)
        if self.kind == "table":
            t = np.asarray(self.table, dtype=float)
            idx = np.round(v).astype(int)
            out = np.full(v.shape, np.inf)
            ok = (idx >= 0) & (idx < t.size)
            out[ok] = t[idx[ok]]
            return out
        xs, cs = np.asarray(self.xs), np.asarray(self.cs)
        out = np.interp(v, xs, cs)
        below, above = v < xs[0], v > xs[-1]
        out = np.where(below, cs[0] + self.left * (xs[0] - v), out)
        out = np.where(above, cs[-1] + self.right * (v - xs[-1]), out)
        tol = 1e-9 * max(1.0, abs(self.query))
        if self.change:
            out = out + np.where(np.abs(v - self.query) > tol, self.change, 0.0)
        if self.no_down:
            out = np.where(v < self.query - tol, np.inf, out)
        if self.no_up:
            out = np.where(v > self.query + tol, np.inf, out)
        return out

    # ------------------------------------------------------------- exact
    def exact(self, value: Any) -> Fraction:
        """The cost of one value in exact rationals (the knots' floats taken exactly)."""
        if self.kind == "table":
            c = self.table[round(float(value))]
            if not math.isfinite(c):
                raise ValueError(
                    f"feature {self.name!r}: value {value!r} is a forbidden transition"
                )
            return Fraction(c)
        x = value if isinstance(value, Fraction) else Fraction(value)
        if self.change and x != Fraction(self.query):
            return Fraction(self.change) + self._exact_curve(x)
        return self._exact_curve(x)

    def _exact_curve(self, x: Fraction) -> Fraction:
        """The curve without its change charge, in exact rationals."""
        xs = [Fraction(a) for a in self.xs]
        cs = [Fraction(c) for c in self.cs]
        if x <= xs[0]:
            return cs[0] + Fraction(self.left) * (xs[0] - x)
        if x >= xs[-1]:
            return cs[-1] + Fraction(self.right) * (x - xs[-1])
        k = bisect.bisect_right(xs, x) - 1
        return cs[k] + (cs[k + 1] - cs[k]) * (x - xs[k]) / (xs[k + 1] - xs[k])

    # ---------------------------------------------------------- structure
    def segments(self) -> list[tuple[float, float, float, float]]:
        """The curve's inner pieces ``(x0, x1, c0, c1)``, left to right."""
        return [
            (self.xs[k], self.xs[k + 1], self.cs[k], self.cs[k + 1])
            for k in range(len(self.xs) - 1)
        ]

    def slopes(self) -> list[float]:
        """Slopes of the curve from left to right, the outer pieces included (the change
        charge is a jump at the query, not a slope)."""
        inner = [(c1 - c0) / (x1 - x0) for x0, x1, c0, c1 in self.segments()]
        return [-self.left, *inner, self.right]

    @property
    def convex(self) -> bool:
        """Whether the curve is convex (slopes non-decreasing): then its epigraph is a
        few linear inequalities; otherwise a solver needs a segment choice."""
        if self.kind == "table" or self.change > 0:
            return False
        s = self.slopes()
        return all(b >= a - 1e-12 * max(1.0, abs(a)) for a, b in itertools.pairwise(s))

    @property
    def free(self) -> bool:
        """Whether every allowed value costs nothing."""
        if self.kind == "table":
            return all(c == 0 or not math.isfinite(c) for c in self.table)
        flat = self.left == 0 and self.right == 0 and all(c == 0 for c in self.cs)
        return flat and self.change == 0

    def interval(self, budget: float, lo: float, hi: float) -> tuple[float, float]:
        """The values in ``[lo, hi]`` costing at most ``budget`` (one interval: each
        side of the query is non-decreasing away from it), widened outward by a
        relative 1e-9 so that rounding never cuts a value off."""
        if self.kind == "table":
            raise ValueError("interval() is for curves; read the table for a discrete feature")
        b = float(budget) * (1 + 1e-9) + 1e-12
        q = self.query
        if self.change > b:  # any change costs more than the budget
            return max(lo, min(hi, q)), min(hi, max(lo, q))
        b -= self.change
        return max(lo, self._reach(b, q, lo, -1)), min(hi, self._reach(b, q, hi, +1))

    def _reach(self, b: float, q: float, end: float, side: int) -> float:
        """How far from ``q`` toward ``end`` (``side`` -1 down, +1 up) the cost stays <= b."""
        if (side < 0 and self.no_down) or (side > 0 and self.no_up):
            return q
        pts = [(x, c) for x, c in zip(self.xs, self.cs, strict=True) if (x - q) * side >= 0]
        pts.sort(key=lambda p: abs(p[0] - q))
        prev_x, prev_c = q, 0.0
        for x, c in pts:
            if c > b:
                return prev_x + (x - prev_x) * (b - prev_c) / (c - prev_c)
            prev_x, prev_c = x, c
        slope = self.right if side > 0 else self.left
        if slope <= 0:
            return end
        return prev_x + side * (b - prev_c) / slope
