"""Feature resolution: the step of a numeric feature's grid, inferred and applied.

A numeric feature's *resolution* is the step the data is recorded in: the
coarsest step of the form ``10^d`` or ``5 x 10^d`` on whose grid every observed
value lies (``1330, 2.5, 0.25`` -> ``0.01``; halves ``0.5, 2.0, 3.5, ...`` -> ``0.5``), never
finer than :data:`FINEST` (values with more decimals are treated as continuous
at that step).  A step coarser than :data:`COARSEST` (incomes recorded in whole
hundreds: 100) is inferred only from evidence: at least
:data:`MIN_DISTINCT` distinct values, all on that grid, spanning at least
:data:`MIN_DISTINCT` steps; otherwise a real feature gets at most 1 and an
integer feature 1.  A ``5 x 10^d`` step below 1 (halves) also needs
:data:`MIN_DISTINCT` distinct values.  Grids are anchored at 0: the values ``k * resolution`` for
integer ``k``.  An explicit resolution always wins (``Schema.infer(resolution=...)``,
``Schema.with_resolution``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = ["COARSEST", "FINEST", "MIN_DISTINCT", "decimals", "infer_resolution", "snap_array"]

#: The finest inferred step: values with more decimals are snapped to 1e-6.
FINEST = 1e-6
#: The coarsest step inferred without evidence of a coarser recording.
COARSEST = 1.0
#: Distinct values (and grid steps spanned) needed before a step above 1 is inferred.
MIN_DISTINCT = 20


def decimals(step: float) -> int:
    """Number of decimals needed to write multiples of ``step`` exactly
    (``0.01`` -> 2, ``0.25`` -> 2, ``5`` -> 0); at most 12."""
    step = abs(float(step))
    for d in range(13):
        if abs(round(step, d) - step) <= 1e-12 * max(1.0, step):
            return d
    return 12


def infer_resolution(values: Any, *, integer: bool = False) -> float:
    """The step the values are recorded in (module docstring): the coarsest ``10^d``
    or ``5 x 10^d`` on whose grid every finite value lies.

    >>> infer_resolution([1330, 2.5, 0.25])
    0.01
    >>> infer_resolution([1, 2, 3])
    1.0
    >>> infer_resolution(range(0, 5000, 100))  # whole hundreds, plenty of them
    100.0
    """
    v = np.asarray(values, dtype=float).ravel()
    v = np.unique(v[np.isfinite(v)])
    if v.size == 0:
        return COARSEST
    coarse = _coarse_step(v)
    if coarse is not None:
        return coarse
    if integer:
        return 1.0
    top = round(-math.log10(COARSEST))
    bottom = round(-math.log10(FINEST))
    halves = v.size >= MIN_DISTINCT  # 0.5, 0.05, ... only with evidence
    for d in range(top, bottom + 1):
        for step in (_pow10(d), 5 * _pow10(d + 1) if halves else None):  # 1, 0.5, 0.1, 0.05, ...
            if step is not None and step <= COARSEST and _on_grid(v, step):
                return step
    return FINEST


def _coarse_step(v: np.ndarray) -> float | None:
    """A step above 1 that the data is plainly recorded in, or None."""
    if v.size < MIN_DISTINCT:
        return None
    span = float(v.max() - v.min())
    d = math.floor(math.log10(max(span / MIN_DISTINCT, 1.0)))
    for e in range(d, -1, -1):
        for step in (5.0 * 10.0**e, 10.0**e):
            if step > 1.0 and span / step >= MIN_DISTINCT and _on_grid(v, step):
                return step
    return None


def _on_grid(v: np.ndarray, step: float) -> bool:
    scaled = v / step
    return bool(np.all(np.abs(scaled - np.round(scaled)) <= 1e-6 + 1e-9 * np.abs(scaled)))


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
