"""Relations between features as Z3 formulas (exact rationals).

Each relation of a query (a :class:`~counterfact.constraints._relations_bound.BoundRelation`,
in solver units) becomes one formula: a linear atom
``sum(coef * x) + const  op  0`` with every coefficient an exact rational
(the relation's own numbers, written in decimal, are exact), a category atom
the one-hot indicator of that category (or its negation), an implication
``Implies(condition, consequence)``.  Z3 decides strict inequalities and
disequalities exactly, so a SAT answer satisfies the relation and an UNSAT
answer is a proof under it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...constraints._relations_bound import BoundCategory, BoundConst, BoundLinear, BoundRelation

__all__ = ["encode_relations"]


def encode_relations(
    z3: Any,
    ctx: Any,
    relations: Sequence[BoundRelation],
    value: Callable[[str], Any],
    indicator: Callable[[str, int], Any],
) -> list[Any]:
    """One Z3 formula per relation.

    Parameters
    ----------
    z3, ctx
        The z3 module and the context of the formulas.
    relations : sequence of BoundRelation
        The query's relations (``QueryBounds.bound_relations()``).
    value : callable
        ``value(name)``: the arithmetic term (``Int`` / ``Real`` or a constant) of a
        numeric feature's value or an ordinal feature's rank.
    indicator : callable
        ``indicator(name, k)``: the ``Bool`` "feature ``name`` takes category ``k``".
    """
    out = []
    for rel in relations:
        then = _atom(z3, ctx, rel.consequence, value, indicator)
        if rel.condition is None:
            out.append(then)
        else:
            out.append(z3.Implies(_atom(z3, ctx, rel.condition, value, indicator), then))
    return out


def _atom(
    z3: Any, ctx: Any, atom: Any, value: Callable[[str], Any], indicator: Callable[[str, int], Any]
) -> Any:
    if isinstance(atom, BoundConst):
        return z3.BoolVal(bool(atom.value), ctx)
    if isinstance(atom, BoundCategory):
        hit = indicator(atom.name, atom.index) if atom.index >= 0 else z3.BoolVal(False, ctx)
        return hit if atom.op == "==" else z3.Not(hit)
    assert isinstance(atom, BoundLinear)
    terms = [z3.RealVal(c, ctx) * _real(z3, value(name)) for name, c in atom.coef]
    e = z3.Sum([*terms, z3.RealVal(atom.const, ctx)])
    zero = z3.RealVal(0, ctx)
    return {
        "<=": lambda: e <= zero,
        ">=": lambda: e >= zero,
        "==": lambda: e == zero,
        "!=": lambda: e != zero,
        "<": lambda: e < zero,
        ">": lambda: e > zero,
    }[atom.op]()


def _real(z3: Any, term: Any) -> Any:
    return z3.ToReal(term) if z3.is_int(term) else term
