"""Options, not copies, as MILP rows: the next solution is not dominated by an earlier one.

:func:`exclude_dominated` adds the disjunction of :mod:`counterfact.solvers._options`
for one earlier answer: per numeric or ordinal feature the answer changes, a
binary ``y_j`` with ``y_j => x_j <= max(q_j, a_j - s_j)`` (a move up; a move
down symmetrically; big-M from the variable's box), per categorical feature the
complement of the answer's category indicator, and ``sum >= 1``.
:func:`require_meaningful` keeps every numeric move of the next solution at
least its meaningful step (or none), on the change indicators' direction
binaries.  :func:`point_of` reads a solution vector back in solver units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .._options import numeric_escape
from ._expr import Expr, Var, quicksum
from ._inputs import RawInputs
from ._model import Model

__all__ = ["exclude_dominated", "require_meaningful"]


def _moved(f: Any, a: Any) -> bool:
    if f.value is None or f.kind in ("integer", "ordinal"):
        return round(float(a)) != round(float(f.query))
    return abs(float(a) - float(f.query)) > 1e-7 * max(1.0, abs(float(f.query)))


def exclude_dominated(
    m: Model, inputs: RawInputs, point: Sequence[Any], steps: Sequence[float]
) -> bool:
    """Exclude every point that the earlier answer ``point`` (solver units, per feature)
    dominates: at least one feature the answer changes keeps the query's value,
    moves less far by at least ``steps[j]`` (solver units; integral features round
    it up to a whole unit, at least 1) or moves the other way (another category).
    Returns False (adding only an infeasible row) when the answer changes nothing."""
    terms: list[Expr | Var] = []
    for j, (f, a) in enumerate(zip(inputs.features, point, strict=True)):
        if f.fixed or not _moved(f, a):
            continue
        if f.value is None:  # categorical: any other category
            k = int(a)
            if 0 <= k < len(f.indicators):
                terms.append(1 - f.indicators[k])
            continue
        integral = f.kind in ("integer", "ordinal")
        sense, bound = numeric_escape(f.query, a, float(steps[j]), integral)
        lo, hi = m.var_bounds(f.value)
        if (sense == "<=" and hi <= bound) or (sense == ">=" and lo >= bound):
            return True  # the box keeps every point out of the answer's reach
        if (sense == "<=" and lo > bound) or (sense == ">=" and hi < bound):
            continue  # no point of the box escapes this way
        y = m.add_binary(name=f"{f.name}_not_as_far")
        m.add_indicator(y, f.value.expr(), sense, float(bound))
        terms.append(y)
    if not terms:
        m.add_le(Expr({}, 1.0), 0.0)
        return False
    m.add_ge(quicksum(terms), 1.0)  # type: ignore[arg-type]
    return True


def require_meaningful(m: Model, inputs: RawInputs, steps: Sequence[float]) -> None:
    """Every numeric feature keeps the query's value or moves by at least ``steps[j]``
    (raw units), on the direction binaries of the change indicators
    (``encode_inputs(..., changes=True)``); features with listed values and
    ordinal ranks are left as they are."""
    for j, f in enumerate(inputs.features):
        step = float(steps[j])
        if f.fixed or f.value is None or f.values is not None or f.kind == "ordinal":
            continue
        if step <= 0:
            continue
        q = float(f.query)
        if f.up is not None:
            m.add_indicator(f.up, f.value.expr(), ">=", q + step)
        if f.down is not None:
            m.add_indicator(f.down, f.value.expr(), "<=", q - step)
