"""What MACE's proofs range over: the search's tolerance and the features' grids.

* :func:`distance_floor` -- the absolute floor of the search's tolerance: a
  thousandth of the smallest distance (or cost) a single one-step move of one
  feature adds, far below any difference between two answers on the grids;
* :func:`margin_tolerance` -- ``optimal`` and ``infeasible`` are confirmed on
  the problem whose conditions are ``>= threshold - tolerance``: 1e-6 below a
  ``min_probability``, 1e-6 *above* the model's strict decision (ties, which
  the model rejects, stay out), so they cover every point the model accepts
  up to that stated tolerance;
* :func:`grid_of` -- the features whose grid (resolution) the proof is over:
  real features whose changed value the oracles keep to multiples of their
  resolution.  A value between two grid values is not searched, so
  ``optimal`` and ``infeasible`` are proven on these grids;
* :func:`refuse_off_grid` -- an equality relation whose solutions all lie off
  those grids is refused (its ``infeasible`` would only say that the grid
  misses it) with a :class:`~counterfact.exceptions.ConstraintError` naming the
  resolution.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...constraints._relations_bound import BoundConst, BoundLinear, BoundRelation
from ...exceptions import ConstraintError
from ...solvers._problem import Problem, VarSpec

__all__ = [
    "FLOOR_SHARE",
    "PROOF_MARGIN",
    "STRICT_MARGIN",
    "distance_floor",
    "grid_of",
    "margin_tolerance",
    "refuse_off_grid",
]

#: the absolute floor is this share of the smallest one-step distance of the data
FLOOR_SHARE = 1e-3
#: the proofs hold for every point whose score (logit, mean probability) reaches the
#: decision threshold less this much: far below the answers' margin (1e-4), within the
#: MILP solvers' feasibility tolerance, far above float rounding of the model
PROOF_MARGIN = 1e-6
#: without a probability floor the decision itself (a strict inequality, ``score > 0``)
#: is what binds: the proofs then cover every point whose score passes the threshold
#: by at least this (ties, which the model rejects, stay out; a MILP solver's feasibility
#: tolerance, 1e-7, lies below it)
STRICT_MARGIN = 1e-6


def margin_tolerance(min_probability: float | None) -> float:
    """How far below the decision threshold the proofs reach (negative: how far above):
    :data:`PROOF_MARGIN` under a probability floor (a closed inequality), else
    ``-STRICT_MARGIN`` (the model's strict decision)."""
    return PROOF_MARGIN if min_probability is not None else -STRICT_MARGIN


def _step(v: VarSpec) -> float:
    """One step of a feature in solver units: its grid, 1 for integral ones and
    categories, a millionth of its range for a continuous real feature."""
    if v.grid is not None:
        return float(v.grid)
    if v.integral or v.kind == "categorical":
        return 1.0
    return 1e-6 * float(v.scale or 1.0)


def _one_step(problem: Problem, j: int, v: VarSpec) -> float:
    """The distance (or cost) one step of feature ``j`` adds to an answer."""
    if problem.costs is not None:
        q, s = float(v.query), _step(v)
        near = [q + 1.0, q - 1.0] if v.kind == "categorical" else [q - s, q + s]
        c = np.asarray(problem.costs[j](near), dtype=float)
        c = c[np.isfinite(c) & (c > 0)]
        return float(c.min()) if c.size else math.inf
    a, b, g = problem.weights
    J = max(1, problem.n_features)
    delta = 1.0 if v.kind == "categorical" else _step(v) / float(v.scale or 1.0)
    return a / J + b / J * delta + g * delta


def distance_floor(problem: Problem) -> float:
    """:data:`FLOOR_SHARE` of the smallest distance one step of one movable feature adds
    (a tiny positive number when no feature can move)."""
    steps = [_one_step(problem, j, v) for j, v in enumerate(problem.vars) if not v.fixed]
    steps = [s for s in steps if math.isfinite(s) and s > 0]
    return FLOOR_SHARE * min(steps) if steps else 1e-12


def grid_of(problem: Problem) -> tuple[tuple[str, float], ...]:
    """``(feature, resolution)`` of each movable feature the oracles keep on its grid: a real
    feature's multiples of its resolution, an integer feature's listed multiples of one above
    1."""
    return tuple(
        (v.name, float(v.grid))
        for v in problem.vars
        if v.kind in ("real", "integer") and v.grid is not None and not v.fixed
    )


def refuse_off_grid(problem: Problem) -> None:
    """Raise :class:`ConstraintError` for an equality relation (one that always applies)
    that has solutions, but none on the grids of its real features."""
    specs = {v.name: v for v in problem.vars}
    for rel in problem.relations:
        atom = rel.consequence
        if not (isinstance(atom, BoundLinear) and atom.op == "=="):
            continue
        if rel.condition is not None and rel.condition != BoundConst(True):
            continue
        gridded = _off_grid(atom, specs)
        if gridded:
            _raise(rel, gridded)


def _off_grid(atom: BoundLinear, specs: dict[str, VarSpec]) -> list[VarSpec]:
    """The gridded features of ``atom`` when its solutions all lie off their grids
    (solutions exist once they are continuous); empty otherwise."""
    const, steps, gridded = Fraction(atom.const), [], []
    for name, c in atom.coef:
        v = specs.get(name)
        if v is None or c == 0:
            continue
        if v.fixed:
            const += Fraction(c) * Fraction(repr(float(v.query)))
        elif v.grid is not None:  # a real feature's grid, or an integer one's multiples
            steps.append(Fraction(c) * Fraction(repr(float(v.grid))))
            gridded.append(v)
        elif v.integral:
            steps.append(Fraction(c))
        else:
            return []  # a continuous feature: solutions exist
    if not gridded:
        return []  # integers only: an infeasible answer is exact
    unit = _rational_gcd(steps)
    return [] if (const / unit).denominator == 1 else gridded


def _rational_gcd(values: list[Fraction]) -> Fraction:
    """The greatest rational ``g`` such that every value is an integer multiple of it."""
    num, den = 0, 1
    for v in values:
        num = math.gcd(num, abs(v.numerator))
        den = den * v.denominator // math.gcd(den, v.denominator)
    return Fraction(num, den)


def _raise(rel: BoundRelation, gridded: list[VarSpec]) -> None:
    grids = ", ".join(f"{v.name} (resolution {float(v.grid or 0):g})" for v in gridded)
    raise ConstraintError(
        f"The relation {rel.text!r} has no solution on the grid of {grids}: every value it "
        "allows lies between two grid values, and answers are kept to the grid. Write the "
        "relation with values on the grid, or give the feature a finer resolution "
        "(cf.Feature(resolution=...))."
    )
