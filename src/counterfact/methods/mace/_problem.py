"""MACE's query in solver units: :func:`build_problem` and the norm's weights.

:func:`build_problem` turns the schema, the query's bounds (every constraint
kind already merged by :mod:`counterfact.constraints`) and the distance into a
:class:`~counterfact.solvers._problem.Problem` (one
:class:`~counterfact.solvers._problem.VarSpec` per raw feature, plus the global
limits), which every oracle reads with the compiled model.  The distance is
MACE eq. (3) (see :mod:`counterfact.solvers._problem`).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from ..._utils._values import _py
from ...constraints._bounds import FeatureBounds, QueryBounds
from ...exceptions import ValidationError
from ...schema import Feature, Schema
from ...schema._resolution import decimals
from ...solvers._bnb import MAX_ATOMS
from ...solvers._problem import (
    Problem,
    VarSpec,
    decode,
    exact_distance,
    grid_value,
    solver_values,
)
from .._pipeline import resolution

#: the most multiples of a numeric feature's resolution listed as its values: what every
#: oracle searches as a set, the branch and bound's limit included (more: the answer is
#: rounded to the grid after the search instead, and reported feasible when that moves it)
MAX_GRID_VALUES = MAX_ATOMS

__all__ = [
    "NORMS",
    "Problem",
    "VarSpec",
    "build_problem",
    "decode",
    "exact_distance",
    "grid_value",
    "norm_weights",
    "solver_values",
]

#: norm name -> (alpha, beta, gamma)
NORMS: dict[str, tuple[float, float, float]] = {
    "l0": (1.0, 0.0, 0.0),
    "l1": (0.0, 1.0, 0.0),
    "linf": (0.0, 0.0, 1.0),
}


def norm_weights(norm: Any) -> tuple[float, float, float]:
    """``(alpha, beta, gamma)`` of a norm name or a convex combination (normalised to sum 1)."""
    if isinstance(norm, str):
        if norm not in NORMS:
            raise ValidationError(
                f"MACE norm must be one of {sorted(NORMS)} or (alpha, beta, gamma). Got {norm!r}."
            )
        return NORMS[norm]
    a, b, g = (float(v) for v in norm)
    s = a + b + g
    if not s > 0 or min(a, b, g) < 0:
        raise ValidationError(
            "MACE norm weights (alpha, beta, gamma) must be >= 0 with a positive sum. Got "
            f"{norm!r}."
        )
    return a / s, b / s, g / s


def build_problem(
    schema: Schema,
    bounds: QueryBounds,
    *,
    weights: tuple[float, float, float],
    target_index: int,
    margin: float,
    min_diff: int = 1,
    steps: Any = None,
    blocking: str = "options",
    min_moves: Any = None,
    listed_grids: bool = True,
) -> Problem:
    """The :class:`Problem` of one query (every constraint kind through ``bounds``;
    ``listed_grids``: numeric features whose range holds few multiples of their resolution
    searched on those values, for the oracles that take a set of numeric values)."""
    bounds, gridded = _on_listed_grids(schema, bounds) if listed_grids else (bounds, set())
    specs = [
        _numeric_spec(f, bounds[f.name], f.name in gridded)
        if f.is_numeric
        else _categorical_spec(f, bounds[f.name])
        for f in schema
    ]
    specs = _timed_off_grid(specs, bounds)
    return Problem(
        vars=specs,
        weights=weights,
        max_changes=bounds.max_changes,
        target_index=target_index,
        margin=margin,
        min_diff=min_diff,
        bounds=bounds,
        steps=None if steps is None else tuple(float(x) for x in steps),
        blocking=blocking,
        relations=bounds.bound_relations(),
        min_moves=None if min_moves is None else tuple(float(x) for x in min_moves),
    )


def _numeric_spec(f: Feature, b: FeatureBounds, gridded: bool = False) -> VarSpec:
    """The :class:`VarSpec` of a numeric feature ``f`` under its query bound ``b``: its box,
    its listed values (sorted), and a grid for a real feature without listed values (or an
    integer one whose listed values are its grid, ``gridded``)."""
    q = _py(b.value)
    lo, hi = float(b.lower), float(b.upper)  # type: ignore[arg-type]
    vals = None
    if b.values is not None:
        vals = tuple(sorted({float(v) for v in b.values}))
    qv: Any = round(float(q)) if f.kind == "integer" else float(q)
    fixed = bool(b.fixed) or (vals is not None and len(vals) == 1 and vals[0] == float(qv))
    grid = resolution(f) if (f.kind == "real" and vals is None) or gridded else None
    kind: Any = f.kind  # a numeric kind (VarSpec's narrower type)
    return VarSpec(f.name, kind, qv, f.range, lo, hi, vals, 0, fixed, grid)


def _timed_off_grid(specs: list[VarSpec], bounds: QueryBounds) -> list[VarSpec]:
    """``specs`` with no grid for a real feature the query's timeline advances whose query
    value is off its grid: time takes it to ``q + k * resolution`` (off the grid too), so a
    grid would leave it only today's value and prove a wait impossible that is not."""
    qt = bounds.timeline
    if qt is None:
        return specs
    out = list(specs)
    for j, rule in qt.rules.items():
        v = out[j]
        if rule.kind == "pinned" and v.grid is not None and grid_value(v, v.query) is None:
            out[j] = replace(v, grid=None)
    return out


def _on_listed_grids(schema: Schema, bounds: QueryBounds) -> tuple[QueryBounds, set[str]]:
    """``bounds`` with each movable numeric feature whose range holds few multiples of its
    resolution restricted to those multiples (and its query's value), and the names of
    those features: the oracles then search the values the answer is reported on, so the
    proof holds for them.  This covers an integer feature in steps above 1 (a loan in
    steps of 500) and a real one whose range holds few steps (a rate from 1e-6 to 5e-6 at
    resolution 1e-6, where the continuous optimum rounded to the grid may fail the model).
    Decisions: at most :data:`MAX_GRID_VALUES` multiples (what the branch and bound
    searches as a set; more: the answer is rounded to the grid after the search and
    reported feasible when that moves it); a query value off the grid is listed too,
    since leaving a feature unchanged must stay possible; a feature the query's timeline
    moves is never listed (time takes it to values off the grid, ``q + months * rate``)."""
    features, gridded = [], set()
    timed = set(bounds.timeline.rules) if bounds.timeline is not None else set()
    for j, (f, b) in enumerate(zip(schema, bounds.features, strict=True)):
        values = None if j in timed else _grid_values(f, b)
        if values is not None:
            b = replace(b, values=values)
            gridded.add(f.name)
        features.append(b)
    return replace(bounds, features=tuple(features)), gridded


def _grid_values(f: Feature, b: FeatureBounds) -> tuple[float, ...] | None:
    """The multiples of ``f``'s resolution within ``b`` and the query's value, when ``f``
    is movable, listed by no constraint, and they are at most :data:`MAX_GRID_VALUES`;
    else None (an integer feature in steps of 1 is searched as whole numbers)."""
    if not f.is_numeric or b.values is not None or b.fixed:
        return None
    step = resolution(f)
    if not step or (f.kind == "integer" and step <= 1):
        return None
    first = math.ceil(float(b.lower) / step - 1e-9)
    last = math.floor(float(b.upper) / step + 1e-9)
    if not 0 <= last - first < MAX_GRID_VALUES:
        return None
    places = decimals(step)
    q = round(float(b.value)) if f.kind == "integer" else float(b.value)
    values = {round(k * step, places) for k in range(first, last + 1)} | {float(q)}
    return tuple(sorted(values)) if len(values) <= MAX_GRID_VALUES else None


def _categorical_spec(f: Feature, b: FeatureBounds) -> VarSpec:
    """The :class:`VarSpec` of a categorical or ordinal feature ``f`` under its query bound
    ``b``, over category indices: an ordinal's rank range (with its allowed ranks when
    they are not contiguous), a categorical's allowed categories."""
    cats = list(f.categories)  # type: ignore[arg-type]
    allowed = tuple(sorted(cats.index(c) for c in (b.values if b.values is not None else cats)))
    qi = cats.index(_py(b.value))
    fixed = allowed == (qi,)
    if f.kind != "ordinal":
        return VarSpec(f.name, "categorical", qi, 1.0, None, None, allowed, len(cats), fixed)
    lo_r = float(min(allowed)) if allowed else 0.0
    hi_r = float(max(allowed)) if allowed else -1.0
    contiguous = allowed == tuple(range(int(lo_r), int(hi_r) + 1))
    return VarSpec(
        f.name,
        "ordinal",
        qi,
        f.range,
        lo_r,
        hi_r,
        None if contiguous else allowed,
        len(cats),
        fixed,
    )
