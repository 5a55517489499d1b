"""The call's costs (:class:`~counterfact.constraints._costs.FeatureCost`) in MACE's Z3
oracle, exactly.

Every coefficient is an exact rational, so "cost <= bound" is decided exactly
and an UNSAT answer is a proof under the costs:

* a categorical feature: ``sum_k cost(k) * [indicator k]`` (the query's
  category is fixed, so the cost is linear in the indicators);
* an ordinal rank: ``If(rank == r, cost(r), ...)`` over the ranks in its box;
* a numeric feature: its piecewise-linear curve as an ``If`` chain over the
  knots inside the variable's box (``If(x <= b1, piece 0, If(x <= b2, piece 1, ...))``),
  each piece the exact line through its two knots; a change charge is a jump at
  the query (``If(x == q, 0, change + curve)``), never interpolated.

:func:`cost_caps` gives the per-feature consequences of ``total cost <= bound``
(each feature's cost is at most the bound, costs being non-negative): an
interval of values, or the categories within the bound.  They only prune.
"""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

__all__ = ["cost_caps", "cost_sum"]


def cost_sum(
    z3: Any,
    ctx: Any,
    costs: Any,
    handles: list[tuple[str, Any]],
    boxes: list[tuple[float, float]],
    fixed: list[bool],
) -> Any:
    """The total cost over the features' variables (``handles``: ``("cat", indicators)``
    or ``("num", variable)``; ``boxes``: each numeric variable's ``(lo, hi)``)."""
    parts = []
    for c, (kind, h), (lo, hi), fx in zip(costs, handles, boxes, fixed, strict=True):
        if fx or c.free:
            continue
        if kind == "cat":
            terms = [
                z3.If(b, z3.RealVal(Fraction(c.table[k]), ctx), z3.RealVal(0, ctx))
                for k, b in enumerate(h)
                if not z3.is_false(b) and math.isfinite(c.table[k]) and c.table[k] > 0
            ]
            parts.extend(terms)
        elif c.kind == "table":
            parts.append(_rank_cost(z3, ctx, c, h, math.ceil(lo), math.floor(hi)))
        else:
            parts.append(_curve_cost(z3, ctx, c, h, lo, hi))
    return z3.Sum(parts) if parts else z3.RealVal(0, ctx)


def _rank_cost(z3: Any, ctx: Any, c: Any, x: Any, lo: int, hi: int) -> Any:
    expr = z3.RealVal(Fraction(c.table[hi]) if math.isfinite(c.table[hi]) else 0, ctx)
    for r in range(hi - 1, lo - 1, -1):
        v = c.table[r]
        expr = z3.If(x == r, z3.RealVal(Fraction(v) if math.isfinite(v) else 0, ctx), expr)
    return expr


def _curve_cost(z3: Any, ctx: Any, c: Any, x: Any, lo: float, hi: float) -> Any:
    """The curve restricted to ``[lo, hi]``: the line through each pair of
    consecutive breakpoints (the box's ends and the knots inside it), plus the
    change charge at every value other than the query's (a jump, never a line)."""
    X = z3.ToReal(x) if z3.is_int(x) else x
    flo, fhi = Fraction(lo), Fraction(hi)
    if fhi <= flo:
        return z3.RealVal(c.exact(flo), ctx)
    curve = _pieces(z3, ctx, replace(c, change=0.0), X, flo, fhi)
    if not c.change:
        return curve
    charged = z3.RealVal(Fraction(c.change), ctx) + curve
    q = Fraction(c.query)
    if not flo <= q <= fhi:  # the box leaves out the query's value: every value is a change
        return charged
    return z3.If(X == z3.RealVal(q, ctx), z3.RealVal(0, ctx), charged)


def _pieces(z3: Any, ctx: Any, c: Any, X: Any, flo: Fraction, fhi: Fraction) -> Any:
    """A continuous curve ``c`` (no change charge) on ``[flo, fhi]`` as an ``If`` chain
    of the exact lines between its breakpoints."""
    pts = [flo, *sorted(Fraction(a) for a in c.xs if flo < a < fhi), fhi]
    vals = [c.exact(p) for p in pts]

    def piece(k: int) -> Any:
        s = (vals[k + 1] - vals[k]) / (pts[k + 1] - pts[k])
        return z3.RealVal(vals[k], ctx) + z3.RealVal(s, ctx) * (X - z3.RealVal(pts[k], ctx))

    expr = piece(len(pts) - 2)
    for k in range(len(pts) - 3, -1, -1):
        expr = z3.If(X <= z3.RealVal(pts[k + 1], ctx), piece(k), expr)
    return expr


def cost_caps(
    costs: Any, bound: float, boxes: list[tuple[float, float]], kinds: list[str]
) -> list[Any]:
    """Per feature, what ``total cost <= bound`` leaves: ``(lo, hi)`` for a numeric
    value or rank, the allowed category indices for a categorical feature."""
    out: list[Any] = []
    b = float(bound) * (1 + 1e-9) + 1e-12
    for c, (lo, hi), kind in zip(costs, boxes, kinds, strict=True):
        if kind == "cat":
            out.append({k for k, v in enumerate(c.table) if v <= b})
        elif c.kind == "table":
            ok = [r for r in range(math.ceil(lo), math.floor(hi) + 1) if c.table[r] <= b]
            out.append((float(min(ok)), float(max(ok))) if ok else (float(c.query), float(c.query)))
        else:
            out.append(c.interval(b, lo, hi))
    return out
