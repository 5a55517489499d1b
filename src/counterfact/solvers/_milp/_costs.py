"""Per-feature costs (:class:`~counterfact.constraints._costs.FeatureCost`) as exact MILP terms.

:func:`cost_terms` gives, for every feature of one query's raw inputs, an
expression equal to the feature's cost at every feasible point (an epigraph
where it can only be over-estimated, which is exact whether the cost is
minimised or bounded above):

* a categorical feature: ``sum_c cost(c) * z_c`` over its one-hot indicators
  (the query's category is fixed, so the cost is linear in them);
* a numeric feature or ordinal rank restricted to a finite set of values:
  the same over its value indicators;
* an ordinal rank: one indicator per rank in its box (``sum = 1``, ``rank =
  sum_r r * y_r``) and ``sum_r cost(r) * y_r``;
* a numeric feature with a convex curve (linear weights, up/down): a variable
  ``t >= `` each affine piece (exact: minimised, or bounded by the caller);
* a numeric feature with a non-convex curve (a percentile shift): the
  segment formulation -- one binary per piece of the curve inside the
  variable's box, ``x = sum_k (b_k y_k + l_k)``, ``0 <= l_k <= (b_{k+1} - b_k) y_k``,
  ``sum_k y_k = 1``, ``cost = sum_k (c(b_k) y_k + s_k l_k)``: the exact curve;
* a numeric feature's change charge (``FeatureCost.change``): ``change * z``
  on a change indicator ``z`` that every value other than the query's turns
  on (the inputs' own when they have one, e.g. for a change cap; else
  ``x - q <= (hi - q) z``, ``q - x <= (q - lo) z``), added to the curve
  above (convex or not, without the charge): the jump at the query is exact.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...exceptions import UnsupportedConstraintError
from ._expr import Expr, lin, quicksum
from ._inputs import FeatureVars, RawInputs
from ._intervals import cut_cost_bounds, link_changes
from ._model import Model
from ._trees import FeatureCuts

__all__ = ["cost_terms"]


def cost_terms(
    m: Model,
    inputs: RawInputs,
    costs: Sequence[Any],
    *,
    cuts: Mapping[str, FeatureCuts] | None = None,
) -> list[Expr]:
    """One expression per feature equal to its cost (see the module docstring);
    ``costs``: the query's :class:`~counterfact.constraints._costs.FeatureCost`, schema order.

    ``cuts``: a tree ensemble's cuts per feature (:attr:`Template.cuts`): each
    numeric or ordinal term is then also bounded below by the cost of the last
    cut its feature crosses, change charge included, and the inputs' change
    indicators are tied to the cuts (:mod:`._intervals`; valid rows, the
    optimum is unchanged, the relaxation sees the cost of crossing a cut)."""
    out: list[Expr] = []
    for f, c in zip(inputs.features, costs, strict=True):
        if f.fixed or c.free:
            out.append(Expr())
        elif f.value is None:
            out.append(
                _over(m, f.indicators, [float(c(k)[()]) for k in range(len(f.indicators))], f.name)
            )
        elif f.values is not None:
            out.append(_over(m, f.indicators, [float(c(v)[()]) for v in f.values], f.name))
        else:
            term = _ranks(m, f, c) if c.kind == "table" else _numeric(m, f, c)
            if cuts is not None and f.name in cuts:
                _tie_to_cuts(m, f, c, term, cuts[f.name])
            out.append(term)
    return out


def _tie_to_cuts(m: Model, f: FeatureVars, c: Any, term: Expr, fc: FeatureCuts) -> None:
    """``term >= E`` for each bound ``E`` of :func:`._intervals.cut_cost_bounds` under
    the feature's own cost (0 at the query, non-decreasing away from it on either
    side, the change charge a jump at the query), and the change indicators tied
    to the cuts (:func:`._intervals.link_changes`).  Skipped where a cut's cost is
    not finite (a forbidden direction: the box already keeps the value on its side)."""
    q = float(f.query)
    values = [q, *(a for cut in fc.cuts for a in cut[:2]), *range(len(fc.ranks))]
    if not all(math.isfinite(float(c(v)[()])) for v in values):
        return
    if term.terms:
        for e in cut_cost_bounds(fc, q, lambda v: float(c(v)[()])):
            m.add_ge(term - e, 0.0)
    link_changes(m, f, fc)


def _numeric(m: Model, f: FeatureVars, c: Any) -> Expr:
    """A numeric feature's curve (an epigraph when convex, else segments) plus its
    change charge on a change indicator (:func:`_charge`)."""
    curve = replace(c, change=0.0)
    if curve.free:
        term = Expr()
    elif curve.convex:
        term = _epigraph(m, f, curve)
    else:
        term = _segments(m, f, curve)
    if c.change > 0:
        term = term + _charge(m, f) * float(c.change)
    return term


def _charge(m: Model, f: FeatureVars) -> Expr:
    """An expression that is 1 whenever ``x != q`` (and 0 or 1 at ``x = q``): the
    inputs' change indicator when they have one, else a binary ``z`` with
    ``x - q <= (hi - q) z`` and ``q - x <= (q - lo) z``.  At the query's value
    ``z = 1`` only over-estimates the cost, so minimised or bounded above the
    charge is exact: a jump at the query, never interpolated."""
    if f.changed is not None:
        return f.changed
    x = f.value
    assert x is not None  # internal invariant: a numeric variable
    lo, hi = m.var_bounds(x)
    q = float(f.query)
    if not lo <= q <= hi:  # the box leaves out the query's value: always a change
        return Expr({}, 1.0)
    z = m.add_binary(name=f"{f.name}#changed")
    if hi > q:
        m.add_le(x - q - (hi - q) * z, 0.0)  # x <= q unless z
    if lo < q:
        m.add_le(q - x - (q - lo) * z, 0.0)  # x >= q unless z
    return z.expr()


def _over(m: Model, indicators: Sequence[Any], values: Sequence[float], name: str) -> Expr:
    """``sum_k values[k] * indicators[k]``; a forbidden value's indicator must be off already."""
    coefs = []
    for v, c in zip(indicators, values, strict=True):
        if not math.isfinite(c):
            if m.var_bounds(v)[1] > 0:
                raise UnsupportedConstraintError(
                    f"feature {name!r}: a forbidden value (infinite cost) is still allowed by "
                    "the query's bounds"
                )
            c = 0.0
        coefs.append(c)
    return lin(list(indicators), coefs)


def _ranks(m: Model, f: FeatureVars, c: Any) -> Expr:
    assert f.value is not None  # internal invariant: a rank variable
    lo, hi = (round(b) for b in m.var_bounds(f.value))
    ranks = list(range(lo, hi + 1))
    y = [m.add_binary(name=f"{f.name}#r{r}") for r in ranks]
    m.add_eq(quicksum(y), 1.0)
    m.add_eq(f.value - lin(y, [float(r) for r in ranks]), 0.0)  # type: ignore[operator]
    return _over(m, y, [float(c(r)[()]) for r in ranks], f.name)


def _epigraph(m: Model, f: FeatureVars, c: Any) -> Expr:
    x = f.value
    assert x is not None  # internal invariant: a numeric variable
    lo, hi = m.var_bounds(x)
    t = m.add_var(0.0, math.inf, name=f"cost_{f.name}")
    xs, cs = c.xs, c.cs
    if c.left > 0 and lo < xs[0]:
        m.add_ge(t + c.left * x, cs[0] + c.left * xs[0])  # t >= cs0 + left (x0 - x)
    if c.right > 0 and hi > xs[-1]:
        m.add_ge(t - c.right * x, cs[-1] - c.right * xs[-1])  # t >= csN + right (x - xN)
    for x0, x1, c0, c1 in c.segments():
        s = (c1 - c0) / (x1 - x0)
        m.add_ge(t - s * x, c0 - s * x0)
    return t.expr()


def _segments(m: Model, f: FeatureVars, c: Any) -> Expr:
    x = f.value
    assert x is not None  # internal invariant: a numeric variable
    lo, hi = m.var_bounds(x)
    inner = [a for a in c.xs if lo < a < hi]
    b = np.array([lo, *inner, hi], dtype=float)
    val = c(b)
    if not np.all(np.isfinite(val)):
        raise UnsupportedConstraintError(
            f"feature {f.name!r}: its box reaches a forbidden direction"
        )
    if len(b) == 2 or b[-1] <= b[0]:
        if b[-1] <= b[0]:
            return Expr({}, float(val[0]))
        s = (val[1] - val[0]) / (b[1] - b[0])
        return (x - float(b[0])) * float(s) + float(val[0])
    ys, ls, cost = [], [], Expr()
    for k in range(len(b) - 1):
        w = float(b[k + 1] - b[k])
        y = m.add_binary(name=f"{f.name}#s{k}")
        lam = m.add_var(0.0, w, name=f"{f.name}#l{k}")
        m.add_le(lam - w * y, 0.0)
        ys.append(y)
        ls.append(lam)
        cost = cost + y * float(val[k]) + lam * float((val[k + 1] - val[k]) / w)
    m.add_eq(quicksum(ys), 1.0)
    m.add_eq(x - lin(ys, [float(a) for a in b[:-1]]) - quicksum(ls), 0.0)  # type: ignore[operator]
    return cost
