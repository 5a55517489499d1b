"""Options, not copies, inside a search: a new point must not be dominated by an earlier answer.

An earlier answer ``A`` of a query *dominates* a point ``x`` when ``x`` changes
every feature ``A`` changes, each on the same side of the query and at least as
far (a categorical feature to the same category): ``x`` is ``A`` plus further
moves.  The blocking ``"options"`` of MACE and CE-OCL asks the next answer
to escape each earlier answer in at least one feature ``j`` that ``A``
changes (:func:`escapes`, a disjunction of linear conditions per earlier
answer):

* a numeric or ordinal feature moved up by ``A`` (``a_j > q_j``) stays at
  ``x_j <= max(q_j, a_j - s_j)``: it keeps the query's value, moves less far
  by at least ``s_j``, or moves down (and symmetrically for a move down);
* a categorical feature ``A`` moved to category ``c`` takes any other
  category (the query's included).

``s_j`` (:func:`option_step`) is the feature's meaningful step where the
search has one (``Problem.min_moves``: the larger of the resolution and a
fraction of the MAD), at least one grid step (one unit for integers and
ranks, the resolution for a real feature on a grid): a point "less far" by a
hair is the same change, not another option.  Every encoding reads the same
atoms: Z3 as an ``Or`` of atoms, a MILP as one binary per numeric atom (big-M
from the variable's box) plus the complement of the category indicator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._problem import Problem

__all__ = [
    "OPTIONS_PROVEN",
    "Escape",
    "escapes",
    "numeric_escape",
    "option_step",
    "option_steps",
    "options_proven",
]

#: what a certificate adds when the search proved that a query has no further option
OPTIONS_PROVEN = (
    "; no other option (proven): every other counterfactual under these constraints "
    "repeats the changes of one of these answers, each as far or further (up to a step)"
)


def options_proven(diagnostics: Any) -> bool:
    """Whether a query's diagnostics (a mapping) say that its search proved that no
    further option is left (``alternatives_exhausted`` True; absent or NaN: no)."""
    v = (diagnostics or {}).get("alternatives_exhausted")
    return isinstance(v, (bool, np.bool_)) and bool(v)


@dataclass(frozen=True)
class Escape:
    """One way for a new point to escape an earlier answer: feature ``j`` (solver units)
    ``<=`` or ``>=`` ``value`` (numeric, ordinal rank), or ``!=`` the category index
    ``value``."""

    j: int
    sense: str
    value: Any


def numeric_escape(query: float, earlier: float, step: float, integral: bool) -> tuple[str, Any]:
    """``(sense, bound)`` of the escape from a numeric move ``query -> earlier``: stay
    on the query's side of ``earlier`` by at least ``step`` (or on the query's value,
    or beyond it); integral features in whole units (``step`` rounded up, at least 1)."""
    if integral:
        s = max(1, math.ceil(float(step) - 1e-9))
        q, a = round(float(query)), round(float(earlier))
        return ("<=", max(q, a - s)) if a > q else (">=", min(q, a + s))
    q, a = float(query), float(earlier)
    s = float(step) if step > 0 else 1e-6 * max(1.0, abs(a))
    return ("<=", max(q, a - s)) if a > q else (">=", min(q, a + s))


def option_step(problem: Problem, j: int) -> float:
    """By how much (solver units) feature ``j`` must move less far than an earlier
    answer to escape it: its meaningful step (``problem.min_moves``) where given,
    at least one grid step (integers and ranks: 1; a real feature: its grid, 0
    without one, which :func:`numeric_escape` reads as 1e-6 relative)."""
    v = problem.vars[j]
    unit = 1.0 if v.integral else float(v.grid or 0.0)
    if problem.min_moves is None or v.kind not in ("integer", "real"):
        return unit
    return max(unit, float(problem.min_moves[j]))


def option_steps(problem: Problem) -> list[float]:
    """:func:`option_step` of every feature (0 for categorical ones: any other category)."""
    return [
        0.0 if v.kind == "categorical" else option_step(problem, j)
        for j, v in enumerate(problem.vars)
    ]


def escapes(problem: Problem, point: tuple[Any, ...]) -> list[Escape]:
    """The ways a new point escapes the earlier answer ``point`` (solver units): one
    per movable feature the answer changes (module docstring).  Empty when the answer
    changes nothing: every point then repeats it, and the search has no option left."""
    out: list[Escape] = []
    for j, v in enumerate(problem.vars):
        if v.fixed or not problem.moved(j, point[j]):
            continue
        if v.kind == "categorical":
            out.append(Escape(j, "!=", int(point[j])))
            continue
        sense, bound = numeric_escape(v.query, point[j], option_step(problem, j), v.integral)
        out.append(Escape(j, sense, bound))
    return out
