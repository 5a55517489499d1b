"""The snap phase: every query's candidates in one frame, on each feature's grid.

The candidates of every query are collected into one :class:`~._pool.Pool`
(coerced to the schema's types; rows that cannot be are dropped), and every
numeric value is put on its feature's grid (``Feature.resolution``: integers 1,
money to the cent or to the unit the data uses), so that the value shown is the
value verified.  Candidates of a query whose method claims ``optimal`` are
rounded *away from* the query's value (the change never shrinks below what the
model needed), the others towards it (a change never grows, so a method's own
search box is kept); a method that searches a region of its own (``_own_region()``,
CE-OCL's trust region) is rounded as a proven answer is, whatever its claim, so
that a time-limited or subset search rounds as its optimum would; the other
rounding of every moved row is kept too, for the verify phase to try when the
first fails.  A value the query's constraints
allow explicitly (``allowed_values`` of a numeric feature) is kept as it is.
A candidate whose time-driven features agree on no elapsed month is moved onto
its query's timeline (:mod:`._calendar`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...metrics._distances import DistanceEncoder
from ...result._points import grid_step
from ...schema import Schema
from ...schema._resolution import decimals
from ._calendar import project_time
from ._pool import Pool
from ._protocol import PipelineMethod
from ._query import Candidates, Query
from ._values import TOL, floats

resolution = grid_step  # the pipeline's name for a feature's grid step

__all__ = [
    "coerce_rows",
    "kept_cells",
    "resolution",
    "snap",
    "snap_columns",
    "snap_frame",
    "snap_matrix",
]


# ------------------------------------------------------------------ resolution
def snap_matrix(
    V: np.ndarray, Q: np.ndarray, res: np.ndarray, lower: np.ndarray, upper: np.ndarray, mode: str
) -> np.ndarray:
    """Rows ``V`` (candidates x numeric features) on the grids ``k * res[j]``
    (the grid of :meth:`Schema.snap`).

    ``Q`` holds each row's query values.  ``mode``: ``"nearest"``;
    ``"outward"`` rounds away from the query's value (a change never
    shrinks), ``"inward"`` towards it (a change never grows).  A value equal
    to the query's value stays as it is (the query may lie off the grid).  A
    snapped value that leaves the hull of ``[lower, upper]`` and the query's
    value goes back to the last grid point inside it; a value already outside
    is left for verification to reject.
    """
    V = np.asarray(V, dtype=float)
    Q = np.asarray(Q, dtype=float)
    k = V / res
    near = np.abs(k - np.round(k)) <= 1e-9 * np.maximum(1.0, np.abs(k))
    if mode == "nearest":
        g = np.round(k)
    else:
        up = V > Q
        if mode == "inward":
            up = ~up
        g = np.where(near, np.round(k), np.where(up, np.ceil(k), np.floor(k)))
    lo, hi = np.minimum(lower, Q), np.maximum(upper, Q)
    inside = (V >= lo - 1e-9) & (V <= hi + 1e-9)
    g = np.where(inside & (g * res > hi + 1e-9), np.floor(hi / res + 1e-9), g)
    g = np.where(inside & (g * res < lo - 1e-9), np.ceil(lo / res - 1e-9), g)
    S = g * res
    for d in np.unique(_decimal_vector(res)):
        cols = _decimal_vector(res) == d
        S[:, cols] = np.round(S[:, cols], int(d))
    S = np.where(inside & ((S < lo - 1e-9) | (S > hi + 1e-9)), V, S)  # no grid point inside: keep
    same = np.abs(V - Q) <= TOL * np.maximum(1.0, np.maximum(np.abs(V), np.abs(Q)))
    return np.where(same | ~np.isfinite(V), V, S)


def _decimal_vector(res: np.ndarray) -> np.ndarray:
    return np.array([decimals(float(r)) for r in np.atleast_1d(res)], dtype=int)


def snap_columns(schema: Schema) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray]:
    """The numeric features that have a grid: names, resolutions, lower and upper bounds."""
    feats = [
        f
        for f in schema
        if resolution(f) is not None and f.lower is not None and f.upper is not None
    ]
    return (
        [f.name for f in feats],
        np.array([resolution(f) for f in feats], dtype=float),
        np.array([float(f.lower) for f in feats], dtype=float),  # type: ignore[arg-type]
        np.array([float(f.upper) for f in feats], dtype=float),  # type: ignore[arg-type]
    )


def snap_frame(
    schema: Schema, frame: pd.DataFrame, queries: pd.DataFrame, mode: str
) -> tuple[pd.DataFrame, np.ndarray]:
    """Every numeric value of ``frame`` on its feature's grid (:func:`snap_matrix`).

    ``queries`` holds, row for row, the query each candidate belongs to.
    Returns the snapped frame and a mask of the rows whose values moved.

    Unlike :meth:`Schema.snap`, a value equal to the query's stays as it is
    (snapping an off-grid query value would invent a change), the domain is
    the hull of the observed bounds and the query's value (as in
    :meth:`ResolvedConstraints.for_query`), and a value already outside the
    domain is not repaired (verification rejects it).
    """
    cols, res, lower, upper = snap_columns(schema)
    out = frame.copy()
    if not cols or len(frame) == 0:
        return out, np.zeros(len(frame), dtype=bool)
    V = floats(frame[cols])
    Q = floats(queries[cols])
    S = snap_matrix(V, Q, res, lower, upper, mode)
    moved = (~(np.abs(S - V) <= 1e-12 * np.maximum(1.0, np.abs(V))) & np.isfinite(V)).any(axis=1)
    out[cols] = S
    return out, moved


# ------------------------------------------------------------------- the phase
def snap(method: PipelineMethod, tasks: list[Query], outcomes: list[Candidates]) -> Pool:
    """Every query's candidates in one :class:`~._pool.Pool`, each on the grid (both
    roundings: see the module docstring); nothing is verified yet."""
    schema = method.schema_
    queries = pd.DataFrame([t.x for t in tasks], columns=schema.names)
    queries.index = pd.Index([t.id for t in tasks])
    queries = schema.coerce(queries)
    raw, rows, own = _collect(method, outcomes)
    own_region = method._own_region()  # rounded as its optimum would be (module docstring)
    claims = ["optimal" if own_region else c.status for c in outcomes]
    qrows = queries.iloc[own].reset_index(drop=True)
    first, moved, alt, second = _roundings(schema, tasks, claims, rows, own, qrows)
    first = project_time(schema, tasks, own, first)  # onto each query's timeline, if any
    second = project_time(schema, tasks, own[alt], second)
    order = np.argsort(own, kind="stable")  # each query's rows, in the method's order
    return Pool(
        schema=schema,
        queries=queries,
        raw=raw,
        rows=first,
        own=own,
        rows_of=np.split(order, np.searchsorted(own[order], np.arange(1, len(tasks)))),
        moved=moved,
        alt=alt,
        second=second,
        encoder=DistanceEncoder(schema),
        norm=_norm_of(method),
        costs=tasks[0].costs if tasks else None,
        timelines=[t.bounds.timeline for t in tasks],
        query_costs=[t.costs for t in tasks],
    )


def _collect(
    method: PipelineMethod, outcomes: list[Candidates]
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``(raw, rows, own)``: every candidate as proposed and in the schema's types
    (rows that cannot be coerced dropped from both), and the query of each."""
    names = method.schema_.names
    frames, owners = [], []
    for i, c in enumerate(outcomes):
        f = c.frame
        if f is None or len(f) == 0:
            continue
        missing = [n for n in names if n not in f.columns]
        if missing:
            raise ValidationError(
                f"{type(method).__name__} returned candidates without columns {missing}."
            )
        frames.append(f.loc[:, names].reset_index(drop=True))
        owners.append(np.full(len(f), i))
    if not frames:
        empty = pd.DataFrame(columns=names)
        return empty, empty, np.zeros(0, dtype=int)
    raw_all = pd.concat(frames, ignore_index=True)
    rows, ok = coerce_rows(method.schema_, raw_all)
    return raw_all[ok].reset_index(drop=True), rows, np.concatenate(owners)[ok]


def _norm_of(method: PipelineMethod) -> object:
    """The method's own norm (:meth:`_distance_norm`) when it is one of the
    normalised distance's (l0, l1, linf or weights), else l1."""
    norm = method._distance_norm()
    if isinstance(norm, list):
        norm = tuple(norm)
    return norm if norm in ("l0", "l1", "linf") or isinstance(norm, tuple) else "l1"


def _roundings(
    schema: Schema,
    tasks: Sequence[Query],
    claims: Sequence[str | None],
    rows: pd.DataFrame,
    own: np.ndarray,
    qrows: pd.DataFrame,
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray, pd.DataFrame]:
    """``(first, moved, alt, second)``: the rows in their first rounding, which
    moved, the positions whose other rounding differs and those rows rounded the
    other way.  Both roundings are computed on one numeric matrix."""
    n = len(rows)
    cols, res, lower, upper = snap_columns(schema)
    if not cols or n == 0:
        return rows, np.zeros(n, dtype=bool), np.zeros(0, dtype=int), rows.iloc[0:0]
    exact = np.array([claims[i] == "optimal" for i in own], dtype=bool)[:, None]
    V = rows[cols].to_numpy(dtype=float)
    Q = qrows[cols].to_numpy(dtype=float)
    S_out = snap_matrix(V, Q, res, lower, upper, "outward")
    S_in = snap_matrix(V, Q, res, lower, upper, "inward")
    S1, S2 = np.where(exact, S_out, S_in), np.where(exact, S_in, S_out)
    keep = kept_cells(tasks, own, cols, V)
    if keep is not None:  # a value the user allowed, or time reaches, stays as it is
        S1, S2 = np.where(keep, V, S1), np.where(keep, V, S2)
    moved = (~(np.abs(S1 - V) <= 1e-12 * np.maximum(1.0, np.abs(V))) & np.isfinite(V)).any(axis=1)
    alt = np.flatnonzero(moved & (np.abs(S2 - S1) > 0).any(axis=1))
    first = rows.copy()
    first[cols] = S1
    second = rows.iloc[alt].copy()
    second[cols] = S2[alt]
    return (
        schema.coerce(first.reset_index(drop=True)),
        moved,
        alt,
        schema.coerce(second.reset_index(drop=True)),
    )


def coerce_rows(schema: Schema, frame: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray]:
    """``frame`` in the schema's types, and which rows could be coerced (the
    others are dropped from the returned frame)."""
    ok = np.ones(len(frame), dtype=bool)
    try:
        return schema.coerce(frame), ok
    except (TypeError, ValueError):
        good = []
        for k in range(len(frame)):
            try:
                schema.coerce(frame.iloc[[k]])
                good.append(True)
            except (TypeError, ValueError):
                good.append(False)
        ok = np.array(good, dtype=bool)
        return schema.coerce(frame[ok].reset_index(drop=True)), ok


def kept_cells(
    tasks: Sequence[Query], own: np.ndarray, cols: list[str], V: np.ndarray
) -> np.ndarray | None:
    """Cells of ``V`` that rounding leaves as they are, or None when no query has any: a
    numeric value the user allowed explicitly (``Constraints.allowed_values``), and a value
    the query's timeline takes a feature time alone moves to (``q + gain``, off the grid
    when the query's value is; rounding it would leave the timeline)."""
    keep: np.ndarray | None = None
    where = {name: j for j, name in enumerate(cols)}
    for i, t in enumerate(tasks):
        for name, values in [*_allowed_values(t, where), *_timed_values(t, where)]:
            if keep is None:
                keep = np.zeros(V.shape, dtype=bool)
            r, k = np.flatnonzero(own == i), where[name]
            keep[r, k] |= (
                np.abs(V[r, k][:, None] - values[None, :]) <= 1e-9 * np.maximum(1.0, np.abs(values))
            ).any(axis=1)
    return keep


def _allowed_values(task: Query, cols: Collection[str]) -> list[tuple[str, np.ndarray]]:
    """``(feature, values)`` for each numeric feature of ``cols`` whose values the query's
    constraints list explicitly (a categorical feature's are not numbers: left out)."""
    out = []
    for name in getattr(task.constraints, "allowed_values", {}):
        vals = task.bounds[name].values if name in cols else None
        if vals is not None:
            out.append((name, np.asarray(vals, dtype=float)))
    return out


def _timed_values(task: Query, cols: Collection[str]) -> list[tuple[str, np.ndarray]]:
    """``(feature, values)`` for each feature of ``cols`` the query's timeline pins: every
    value time takes it to within the horizon."""
    qt = task.bounds.timeline
    if qt is None:
        return []
    idx, lo, _ = qt.grid()
    return [
        (qt.schema.names[j], np.unique(lo[:, c]))
        for c, j in enumerate(idx)
        if qt.rules[j].kind == "pinned" and qt.schema.names[j] in cols
    ]
