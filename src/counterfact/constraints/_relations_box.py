"""Relations no value in a query's bounds can satisfy, found from the bounds alone.

A relation without a condition whose left-hand side cannot reach its comparison anywhere
in the box of the query's per-feature bounds (numeric intervals, allowed values, ordinal
ranks, allowed categories) has no answer, whatever the model says: every method reports
the query ``infeasible`` and names the relation, instead of searching in vain.  The test
is sound but not complete: an interval that reaches the comparison does not promise a
value on a feature's grid does, so such relations are left to the search.  Within the
checker's tolerance (:data:`~._relations_bound.REL_TOL`) a relation still counts as
reachable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._relations_bound import REL_TOL, BoundCategory, BoundConst, BoundLinear, BoundRelation

__all__ = ["RANGE_SLACK", "unreachable"]

#: how far past a range or a domain the constraint checker accepts a value (relative to
#: its magnitude here, which is at least the checker's absolute 1e-9)
RANGE_SLACK = 1e-9


def unreachable(
    relations: Sequence[BoundRelation], features: Sequence[Any], sizes: Sequence[float]
) -> list[str]:
    """The texts of the unconditional ``relations`` no value in ``features`` (one
    :class:`~._bounds.FeatureBounds` per schema feature) satisfies.  ``sizes``: per
    relation, the part of the checker's size its binding folded into the constant (the
    query's own values, :meth:`~._relations_bound.ResolvedRelation.query_size`)."""
    by_name = {b.feature.name: b for b in features}
    return [
        r.text
        for r, size in zip(relations, sizes, strict=True)
        if r.condition is None and not _reachable(r.consequence, by_name, size)
    ]


def _reachable(atom: Any, by_name: dict[str, Any], folded: float) -> bool:
    if isinstance(atom, BoundConst):
        return atom.value
    if isinstance(atom, BoundCategory):
        b = by_name[atom.name]
        allowed = [b.feature.categories.index(v) for v in (b.values or ())]
        if atom.op == "==":
            return atom.index in allowed
        return any(k != atom.index for k in allowed)
    return _linear_reachable(atom, by_name, folded)


def _linear_reachable(atom: BoundLinear, by_name: dict[str, Any], folded: float) -> bool:
    """Whether ``sum(c * x) + const  op  0`` holds somewhere in the box, within a
    tolerance above the checker's: its relative one over every term (the folded query
    values included), doubled, plus what the checker's slack past a range
    (:data:`RANGE_SLACK`) moves each term by."""
    low = high = float(atom.const)
    size = 1.0 + abs(float(atom.const)) + folded
    slack = 0.0
    for name, c in atom.coef:
        span = _span(by_name[name])
        if span is None:
            return True  # a feature without finite bounds: nothing to conclude
        ends = (float(c) * span[0], float(c) * span[1])
        low, high = low + min(ends), high + max(ends)
        size += max(abs(e) for e in ends)
        slack += abs(float(c)) * RANGE_SLACK * max(1.0, abs(span[0]), abs(span[1]))
    tol = 2.0 * REL_TOL * size + slack
    return {
        "<=": low <= tol,
        "<": low < tol,
        ">=": high >= -tol,
        ">": high > -tol,
        "==": low <= tol and high >= -tol,
        "!=": not (high - low <= 0 and abs(low) <= tol),
    }[atom.op]


def _span(b: Any) -> tuple[float, float] | None:
    """The least and greatest value (an ordinal feature: rank) a feature may take."""
    f = b.feature
    if f.kind == "ordinal":
        ranks = [f.rank(v) for v in (b.values or ())]
        return (min(ranks), max(ranks)) if ranks else None
    if b.values is not None:
        vals = [float(v) for v in b.values]
        return (min(vals), max(vals)) if vals else None
    if b.lower is None or b.upper is None:
        return None
    return float(b.lower), float(b.upper)
