"""A cheap first answer for the MILP oracle: :func:`first_answer`.

Under an additive measure (the call's per-feature costs) the nearest counterfactual
often changes one or two features.  Before the solver is asked for the nearest
point with no bound, the single and paired changes of a few values per feature
(every allowed category or rank, numeric moves of fractions of the feature's
room on each side, snapped to its grid) are evaluated on the compiled model in
float64 (every model the answer must reach, with the margin); the cheapest one
accepted gives a distance bound for the solver's first call
(:meth:`MipOracle.check`), which then works over the box that bound can reach.

This proves nothing by itself: the bounded call is the proof (every point
cheaper than the bound lies in the narrowed box), and when it finds no point
within the bound the oracle asks again without one.  The search is skipped where
its candidates would need more checks than the compiled models (relations,
diversity clauses, a timeline) or the distance is not a sum of per-feature
terms (eq. (3), whose linf term is not).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._problem import Problem, VarSpec, exact_distance

__all__ = ["MAX_SINGLES", "MOVES", "REFINE", "encode_points", "first_answer"]

#: numeric moves tried on each side: these fractions of the room between the query
#: and the feature's bound
MOVES = (1 / 64, 1 / 32, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 1.0)
#: the cheapest single changes that are also paired with each other
MAX_SINGLES = 160
#: the cheapest accepted points whose numeric moves are shortened (:func:`_refine`), and
#: the steps each move is cut into
REFINE = (40, 32)


def first_answer(
    problem: Problem, compiled: Any, others: Sequence[tuple[Any, int]] = ()
) -> tuple[tuple[Any, ...], float] | None:
    """The cheapest accepted single or paired change (module docstring): (point in
    solver units, its exact distance), or None when none is accepted or the
    problem is one the search skips."""
    if not _applies(problem):
        return None
    singles = _singles(problem)
    if not singles:
        return None
    singles.sort(key=lambda s: s[2])
    singles = singles[:MAX_SINGLES]
    base = np.asarray([float(v.query) for v in problem.vars])
    points, costs = _pairs(singles, base, problem.max_changes)
    ok = _accepted(problem, compiled, others, points)
    if not ok.any():
        return None
    points, costs = _refine(problem, compiled, others, points[ok], costs[ok])
    best = points[int(np.argmin(costs))]
    point = tuple(_typed(v, x) for v, x in zip(problem.vars, best, strict=True))
    return point, exact_distance(problem, point)


def _applies(problem: Problem) -> bool:
    """Per-feature costs, no relations, no diversity clauses, no timeline, one change
    allowed at least."""
    return (
        problem.costs is not None
        and not problem.relations
        and not problem.blocked
        and problem.timeline is None
        and (problem.max_changes is None or int(problem.max_changes) >= 1)
    )


def _singles(problem: Problem) -> list[tuple[int, float, float]]:
    """(feature, value, its cost) for every candidate value of every movable feature
    with a finite cost."""
    out = []
    for j, (v, cost) in enumerate(zip(problem.vars, problem.costs or (), strict=True)):
        if v.fixed:
            continue
        values = [x for x in _values(v) if x != float(v.query)]
        if not values:
            continue
        c = np.asarray(cost(np.asarray(values, dtype=float)), dtype=float).reshape(-1)
        out += [(j, x, float(cj)) for x, cj in zip(values, c, strict=True) if math.isfinite(cj)]
    return out


def _values(v: VarSpec) -> list[float]:
    """The values of ``v`` tried: every allowed category or rank (or listed value), else
    moves of :data:`MOVES` of the room on each side, on the feature's grid."""
    if v.values is not None:
        return sorted({float(x) for x in v.values})
    if v.kind == "categorical":
        return [float(k) for k in range(int(v.n_categories))]
    if v.lower is None or v.upper is None:
        return []
    lo, hi, q = float(v.lower), float(v.upper), float(v.query)
    if v.kind == "ordinal":
        return [float(k) for k in range(math.ceil(lo), math.floor(hi) + 1)]
    out = set()
    for f in MOVES:
        for x in (q + f * (hi - q), q - f * (q - lo)):
            snapped = _snap(v, x, q)
            if lo <= snapped <= hi:
                out.add(snapped)
    return sorted(out)


def _snap(v: VarSpec, x: float, q: float) -> float:
    """``x`` on the feature's grid (integers for an integer feature), toward the query."""
    step = 1.0 if v.integral else (float(v.grid) if v.grid else 0.0)
    if step <= 0:
        return x
    k = x / step
    return float((math.floor(k + 1e-9) if x > q else math.ceil(k - 1e-9)) * step)


def _pairs(
    singles: list[tuple[int, float, float]], base: np.ndarray, max_changes: int | None
) -> tuple[np.ndarray, np.ndarray]:
    """Every single change and (with two changes allowed) every pair of changes of
    different features: the points (rows, solver units) and their costs."""
    n = len(singles)
    feats = np.asarray([s[0] for s in singles])
    vals = np.asarray([s[1] for s in singles])
    costs = np.asarray([s[2] for s in singles])
    rows = np.repeat(base[None, :], n, axis=0)
    rows[np.arange(n), feats] = vals
    if max_changes is not None and int(max_changes) < 2:
        return rows, costs
    a, b = np.triu_indices(n, k=1)
    keep = feats[a] != feats[b]
    a, b = a[keep], b[keep]
    pairs = rows[a].copy()
    pairs[np.arange(len(b)), feats[b]] = vals[b]
    return np.vstack([rows, pairs]), np.concatenate([costs, costs[a] + costs[b]])


def _refine(
    problem: Problem,
    compiled: Any,
    others: Sequence[tuple[Any, int]],
    points: np.ndarray,
    costs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The accepted ``points`` plus, for the cheapest :data:`REFINE` of them, each numeric
    move shortened to every ``1 / REFINE[1]`` of its length (on the grid) that every
    model still accepts; with the costs."""
    top = points[np.argsort(costs, kind="stable")[: REFINE[0]]]
    steps = np.arange(1, REFINE[1]) / REFINE[1]
    base = np.asarray([float(v.query) for v in problem.vars])
    rows = []
    for j, v in enumerate(problem.vars):
        if v.kind not in ("integer", "real"):
            continue
        moved = top[top[:, j] != base[j]]
        if not len(moved):
            continue
        trial = np.repeat(moved, len(steps), axis=0)
        cut = base[j] + (trial[:, j] - base[j]) * np.tile(steps, len(moved))
        trial[:, j] = [_snap(v, x, base[j]) for x in cut]
        rows.append(trial)
    if not rows:
        return points, costs
    trial = np.vstack(rows)
    trial = trial[_accepted(problem, compiled, others, trial)]
    return np.vstack([points, trial]), np.concatenate([costs, _costs(problem, trial)])


def _costs(problem: Problem, points: np.ndarray) -> np.ndarray:
    """The sum of the per-feature costs of each point (floats)."""
    total = np.zeros(len(points))
    for j, cost in enumerate(problem.costs or ()):
        total += np.asarray(cost(points[:, j]), dtype=float).reshape(-1)
    return total


def _accepted(
    problem: Problem, compiled: Any, others: Sequence[tuple[Any, int]], points: np.ndarray
) -> np.ndarray:
    """Which points every model puts in its target's region with the margin."""
    ok = np.ones(len(points), dtype=bool)
    for model, target in ((compiled, problem.target_index), *others):
        Z = encode_points(problem, model, points)
        ok &= _in_region(model, int(target), float(problem.margin), Z)
    return ok


def encode_points(problem: Problem, compiled: Any, points: np.ndarray) -> np.ndarray:
    """Points in solver units as the compiled model's raw inputs (one-hot categories)."""
    space = compiled.inputs
    Z = np.zeros((len(points), space.n))
    for j, (v, blk) in enumerate(zip(problem.vars, space.blocks, strict=True)):
        if v.kind == "categorical":
            Z[np.arange(len(points)), blk.start + points[:, j].astype(int)] = 1.0
        else:
            Z[:, blk.start] = points[:, j]
    return Z


def _in_region(compiled: Any, target: int, margin: float, Z: np.ndarray) -> np.ndarray:
    """Which rows of ``Z`` the compiled model puts in ``target``'s region with ``margin``."""
    Y = np.asarray(compiled.outputs_raw(Z), dtype=float)
    out = np.zeros(len(Z), dtype=bool)
    for conj in compiled.rule.region(target):
        hit = np.ones(len(Z), dtype=bool)
        for c in conj:
            hit &= Y @ np.asarray(c.coef, dtype=float) >= float(c.rhs) + margin
        out |= hit
    return out


def _typed(v: VarSpec, x: float) -> Any:
    """A value in solver units as the oracles hold it (int for discrete and integer)."""
    if v.kind in ("categorical", "ordinal", "integer"):
        return round(x)
    return float(x)
