"""Interval bounds over the IR (big-M constants, stable ReLUs).

A utility of the IR layer: it reads compiled models and imports no front end
and not the dispatcher.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...exceptions import ValidationError
from ._columns import split_at_table
from ._interval import widen
from ._ir import CompiledModel

__all__ = ["IntervalBounds", "interval_bounds"]


@dataclass(frozen=True)
class IntervalBounds:
    """Interval bounds of every quantity of a compiled model over an input box.

    Attributes
    ----------
    x_lo, x_hi : ndarray
        Bounds of the estimator input ``x``.
    pre : tuple of (ndarray, ndarray)
        MLP and StepMLP only: bounds of each layer's pre-activation ``W h + b`` (the last
        entry is the outputs).
    post : tuple of (ndarray, ndarray)
        MLP and StepMLP only: bounds of each layer's activation (``relu(pre)`` for ReLU layers).
    y_lo, y_hi : ndarray
        Bounds of the outputs ``y``.
    """

    x_lo: np.ndarray
    x_hi: np.ndarray
    pre: tuple[tuple[np.ndarray, np.ndarray], ...]
    post: tuple[tuple[np.ndarray, np.ndarray], ...]
    y_lo: np.ndarray
    y_hi: np.ndarray

    def stable_active(self, layer: int) -> np.ndarray:
        """Units of ``layer`` whose ReLU is always active (``pre >= 0``): ``h = pre``."""
        return self.pre[layer][0] >= 0

    def stable_inactive(self, layer: int) -> np.ndarray:
        """Units of ``layer`` whose ReLU is always inactive (``pre <= 0``): ``h = 0``."""
        return self.pre[layer][1] <= 0


def _box(compiled: CompiledModel, lo: Any, hi: Any) -> tuple[np.ndarray, np.ndarray]:
    space = compiled.inputs
    if lo is None and hi is None:
        return space.lower(), space.upper()
    if isinstance(lo, Mapping) or isinstance(hi, Mapping):
        box = dict(lo or {})
        L, H = space.lower(), space.upper()
        for name, (a, b) in box.items():
            blk = space.block(name)
            L[blk.columns] = np.maximum(L[blk.columns], a)
            H[blk.columns] = np.minimum(H[blk.columns], b)
        return L, H
    L = np.asarray(lo, dtype=float).reshape(-1)
    H = np.asarray(hi, dtype=float).reshape(-1)
    if L.shape != (space.n,) or H.shape != (space.n,):
        raise ValidationError(
            f"lo and hi must have one entry per raw variable ({space.n}); got {L.shape} and "
            f"{H.shape}."
        )
    return L, H


def _x_bounds(
    compiled: CompiledModel, L: np.ndarray, H: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    space = compiled.inputs
    aff = compiled.affine
    xl = np.empty(aff.n_x)
    xh = np.empty(aff.n_x)
    for j, col in enumerate(aff.columns):
        blk = space.block(col.feature)
        lo, hi = L[blk.columns], H[blk.columns]
        coef = col.base_coef
        if not col.is_affine:
            xl[j], xh[j] = _nonaffine_bounds(col, blk, float(lo[0]), float(hi[0]))
            continue
        if blk.is_indicator:
            # exactly one indicator is 1: v = coef_k for some allowed k
            fixed = np.flatnonzero(lo >= 0.5)
            allowed = fixed if fixed.size else np.flatnonzero(hi >= 0.5)
            if allowed.size == 0:
                raise ValidationError(f"The box leaves no category of '{blk.name}' possible.")
            vl, vh = coef[allowed].min(), coef[allowed].max()
        else:
            vl = float(np.minimum(coef * lo, coef * hi).sum())
            vh = float(np.maximum(coef * lo, coef * hi).sum())
        vl, vh = vl + col.base_const, vh + col.base_const
        a, b = col.scale * vl + col.offset, col.scale * vh + col.offset
        xl[j], xh[j] = min(a, b), max(a, b)
    return widen(xl, xh)


def _nonaffine_bounds(col: Any, blk: Any, lo: float, hi: float) -> tuple[float, float]:
    """Bounds of a monotone / table column (:mod:`._columns`) of a numeric or ordinal
    feature over ``[lo, hi]``."""
    with np.errstate(all="ignore"):
        if col.shape == "monotone" or blk.kind == "ordinal":
            pts = (
                np.arange(np.ceil(lo), np.floor(hi) + 1)
                if blk.kind == "ordinal"
                else np.array([lo, hi])
            )
            v = col.evaluate(pts[:, None])
        else:  # a table over the code of a monotone prefix: the codes reachable in [lo, hi]
            prefix, vals = split_at_table(col.ops)
            code = col.__class__(
                name=col.name,
                feature=col.feature,
                base=col.base,
                base_coef=col.base_coef,
                base_const=col.base_const,
                ops=prefix,
            )
            ends = np.clip(
                np.floor(code.evaluate(np.array([[lo], [hi]]))), 0, len(vals) - 1
            ).astype(int)
            v = vals[min(ends) : max(ends) + 1]
    return float(np.min(v)), float(np.max(v))


def interval_bounds(compiled: CompiledModel, lo: Any = None, hi: Any = None) -> IntervalBounds:
    """Interval bound propagation through a compiled model.

    Parameters
    ----------
    compiled : CompiledModel
    lo, hi : array of shape (n_raw,), or mapping, optional
        The input box over the raw variables ``z`` (defaults: the schema's
        domain).  A mapping ``{feature: (lo, hi)}`` (passed as ``lo``) narrows
        the named features' variables (ranks for ordinals, each indicator for
        categoricals); other features keep their domain.  For categorical
        features the exactly-one-hot constraint is used (an indicator with
        ``hi < 0.5`` is excluded, one with ``lo >= 0.5`` is forced).

    Returns
    -------
    IntervalBounds
        Valid (slightly widened) bounds of ``x``, of every MLP layer, and of the
        outputs (the estimator node's :meth:`~._ir.EstimatorNode.output_bounds`);
        use them for big-M constants and to fix stable ReLUs.
    """
    L, H = _box(compiled, lo, hi)
    xl, xh = _x_bounds(compiled, L, H)
    pre, post, (yl, yh) = compiled.estimator.output_bounds(xl, xh)
    return IntervalBounds(xl, xh, pre, post, yl, yh)
