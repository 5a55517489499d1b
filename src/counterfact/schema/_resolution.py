"""Feature resolution: the step of a numeric feature's grid, inferred and applied.

A real feature's *resolution* is the coarsest power-of-ten step on whose grid
every observed value lies (``1330, 2.5, 0.25`` -> ``0.01``), never finer than
:data:`FINEST` (values with more decimals are treated as continuous at that step)
and never coarser than :data:`COARSEST` for a real feature (a real column that
happens to hold only multiples of 100 in a sample still accepts 1).  Integer
features have resolution 1 unless told otherwise.  Grids are anchored at 0:
the values ``k * resolution`` for integer ``k``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["COARSEST", "FINEST", "decimals", "infer_resolution", "snap_array"]

#: The finest inferred step: values with more decimals are snapped to 1e-6.
FINEST = 1e-6
#: The coarsest inferred step for a real feature.
COARSEST = 1.0


def decimals(step: float) -> int:
    """Number of decimals needed to write multiples of ``step`` exactly
    (``0.01`` -> 2, ``0.25`` -> 2, ``5`` -> 0); at most 12."""
    step = abs(float(step))
    for d in range(13):
        if abs(round(step, d) - step) <= 1e-12 * max(1.0, step):
            return d
    return 12


def infer_resolution(values: Any) -> float:
    """The coarsest power-of-ten step (between :data:`FINEST` and :data:`COARSEST`)
    on whose grid every finite value of ``values`` lies.

    >>> infer_resolution([1330, 2.5, 0.25])
    0.01
    >>> infer_resolution([1, 2, 3])
    1.0
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    top = round(-math.log10(COARSEST))
    bottom = round(-math.log10(FINEST))
    if v.size == 0:
        return COARSEST
    v = np.unique(v)
    for d in range(top, bottom + 1):
        scaled = v * 10.0**d
        if np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 + 1e-9 * np.abs(scaled)):
            return _pow10(d)
    return FINEST


def _pow10(d: int) -> float:
    """``10 ** -d`` as the float nearest to the decimal (``0.01``, not ``0.010000000000000002``)."""
    return float(f"1e{-d}")


def snap_array(
    values: np.ndarray,
    step: float,
    lower: float,
    upper: float,
    *,
    toward: np.ndarray | None = None,
    away: bool = False,
) -> np.ndarray:
    """Snap ``values`` to the grid ``k * step`` inside ``[lower, upper]``.

    Without ``toward`` each value goes to the nearest grid value.  With
    ``toward`` (a reference per value, e.g. the query), a value above its
    reference is rounded down and one below it up, so that the change from the
    reference never grows (``away=True``: the opposite, so that the change never
    shrinks -- useful to keep a change that just crossed a decision boundary).
    A value equal to its reference goes to the nearest grid value.  The result
    is clipped to the grid values inside the domain; when the domain holds no
    grid value at all, the value is only clipped to the domain.
    """
    x = np.asarray(values, dtype=float)
    step = float(step)
    lo_k = math.ceil(lower / step - 1e-9)
    hi_k = math.floor(upper / step + 1e-9)
    if lo_k > hi_k:
        return np.clip(x, lower, upper)
    k = x / step
    if toward is None:
        kk = np.round(k)
    else:
        ref = np.asarray(toward, dtype=float) / step
        # a value within rounding noise of a grid value is on the grid
        near = np.abs(k - np.round(k)) <= 1e-9 * np.maximum(1.0, np.abs(k))
        up = np.where(near, np.round(k), np.ceil(k))
        down = np.where(near, np.round(k), np.floor(k))
        above, below = k > ref, k < ref
        if away:
            kk = np.where(above, up, np.where(below, down, np.round(k)))
        else:
            kk = np.where(above, down, np.where(below, up, np.round(k)))
    kk = np.clip(kk, lo_k, hi_k)
    d = decimals(step)
    return np.round(kk * step, d)


