"""Snapping candidates to each numeric feature's resolution grid.

Every numeric value is put on its feature's grid (``Feature.resolution``:
integers 1, money to the cent or to the unit the data uses), so the value shown
is the value verified.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...schema import Feature, Schema, decimals
from ._values import TOL, floats

__all__ = ["resolution", "snap_columns", "snap_frame", "snap_matrix"]


# ------------------------------------------------------------------ resolution
def resolution(feature: Feature) -> float | None:
    """The grid step of a numeric feature (``Feature.resolution``; integers 1),
    or None when the feature has none (discrete kinds, or unknown)."""
    if not feature.is_numeric:
        return None
    res = getattr(feature, "resolution", None)
    if res is None and feature.kind == "integer":
        res = 1.0
    if res is None or not np.isfinite(res) or res <= 0:
        return None
    return float(res)


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
