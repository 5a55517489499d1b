"""A feature's cost bounded by the tree cuts it crosses (valid rows for :mod:`._trees`).

In the split formulation a numeric or ordinal feature ``v`` with query value
``q`` is tied to its split binaries only by big-M rows (``y = 0 => v >= ge``),
so the LP relaxation can leave ``v`` at ``q`` while ``y`` is fractional: the
distance a counterfactual must travel is invisible to the relaxation, and the
solver spends its root node on cuts that recover it.  Any cost ``c(v)`` that is
0 at ``q`` and grows with ``|v - q|`` on either side (an l1 or squared
deviation, the epigraph of a piecewise-linear square) satisfies, at every
point of the model,

    c(v) >= sum_{k right of q} (c(ge_k) - c(ge_{k-1})) (1 - y_k)
          + sum_{k left of q}  (c(le_k) - c(le_{k+1})) y_k

(right cuts ascending from ``q``, left cuts descending, the first increment
taken from ``c(q) = 0``): at an integral point the right binaries that are 0
are exactly the cuts below ``v``, so the sum telescopes to the cost of the
last cut crossed, and the left sum is 0 (and vice versa).  The row is exact
at the cuts and is the convex hull of each single cut's disjunction, so the
optimum is unchanged and the root bound is much tighter.  An ordinal's rank
indicators give the exact ``c(v) >= sum_r c(r) ind_r``.  The same facts tie the
change indicators to the cuts (:func:`link_changes`): crossing a cut above
``q`` means the feature went up.

A solver's answer may sit on the wrong side of a cut by its tolerances (an
integrality slack of 1e-7 on ``y`` times the big-M leaves a real value one
float32 step short of ``ge``), so the real model takes another branch than
the MIP; :func:`snap_to_cuts` moves each value onto the side its rounded
binaries chose.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np

from ._expr import Expr, lin, quicksum
from ._inputs import FeatureVars, RawInputs
from ._model import Model
from ._trees import SPLIT_ABS, SPLIT_TOL, FeatureCuts

__all__ = ["cut_cost_bounds", "link_changes", "snap_to_cuts"]


def cut_cost_bounds(fc: FeatureCuts, query: float, cost: Callable[[float], float]) -> list[Expr]:
    """Expressions ``E`` over the split binaries (and rank indicators) of one feature
    with ``cost(v) >= E`` at every point of the model (module docstring).

    ``cost`` maps a value (rank) to its cost: 0 at ``query``, non-decreasing in
    the distance from ``query`` on either side.
    """
    out: list[Expr] = []
    e = Expr()
    prev = 0.0
    for _le, ge, y in (c for c in fc.cuts if c[0] >= query):  # crossed upwards: y = 0
        step = float(cost(ge)) - prev
        if step > 0:
            e._iadd(1 - y, step)
            prev += step
    prev = 0.0
    for le, _ge, y in (c for c in reversed(fc.cuts) if c[1] <= query):  # crossed downwards: y = 1
        step = float(cost(le)) - prev
        if step > 0:
            e._iadd(y, step)
            prev += step
    if e.terms:
        out.append(e)
    if fc.ranks:
        out.append(lin(list(fc.ranks), [float(cost(float(r))) for r in range(len(fc.ranks))]))
    return out


def link_changes(m: Model, f: FeatureVars, fc: FeatureCuts) -> int:
    """Rows ``up >= 1 - y`` (the first cut above the query) and ``down >= y`` (the
    first below), or over the rank indicators ``up >= sum_{r > q} ind_r`` and
    ``down >= sum_{r < q} ind_r``: a value past a cut has changed.  Returns the
    number of rows added."""
    if f.fixed or f.value is None or f.values is not None:
        return 0
    q = float(f.query)
    n = 0
    above = [c for c in fc.cuts if c[0] >= q]
    below = [c for c in fc.cuts if c[1] <= q]
    if f.up is not None and above:
        m.add_ge(f.up + above[0][2], 1.0)
        n += 1
    if f.down is not None and below:
        m.add_ge(f.down - below[-1][2], 0.0)
        n += 1
    if fc.ranks:
        up = [v for r, v in enumerate(fc.ranks) if r > q]
        down = [v for r, v in enumerate(fc.ranks) if r < q]
        if f.up is not None and up:
            m.add_ge(f.up - quicksum(up), 0.0)
            n += 1
        if f.down is not None and down:
            m.add_ge(f.down - quicksum(down), 0.0)
            n += 1
    return n


def snap_to_cuts(
    m: Model, x: np.ndarray, inputs: RawInputs, cuts: Mapping[str, FeatureCuts]
) -> np.ndarray | None:
    """``x`` with every real value moved onto the side of each of its cuts that the
    cut's rounded binary chose (``<= le``, ``>= ge``, with the encoding's safety
    distance), inside the variable's bounds; None when no value moves (module
    docstring).  Only the input values move: callers re-derive the rest."""
    out = np.array(x, dtype=float, copy=True)
    moved = False
    for f in inputs.features:
        fc = cuts.get(f.name)
        if fc is None or not fc.cuts or f.value is None or m.is_integer(f.value):
            continue
        k = f.value.index
        lo, hi = m.var_bounds(f.value)
        for le, ge, y in fc.cuts:
            tol = max(SPLIT_TOL * abs(le), SPLIT_ABS)
            if out[y.index] >= 0.5:
                hi = min(hi, le - tol)
            else:
                lo = max(lo, ge + tol)
        if lo <= hi and not lo <= out[k] <= hi:
            out[k] = min(max(out[k], lo), hi)
            moved = True
    return out if moved else None
