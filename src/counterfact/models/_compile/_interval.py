"""Interval arithmetic for the IR's bounds: outward rounding, affine maps, networks.

The estimator nodes of :mod:`._ir` bound their outputs with these
(``output_bounds``), and :func:`._bounds.interval_bounds` bounds the
preprocessing; this module imports nothing of the compiler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["Interval", "NodeBounds", "affine_bounds", "network_bounds", "widen"]

#: lower and upper bounds of a vector
Interval = tuple[np.ndarray, np.ndarray]
#: an estimator node's bounds: each layer's pre-activation and activation (networks
#: only, else empty) and its outputs
NodeBounds = tuple[tuple[Interval, ...], tuple[Interval, ...], Interval]

_SLACK = 1e-9


def widen(lo: np.ndarray, hi: np.ndarray) -> Interval:
    """Outward rounding: intervals stay valid under float error."""
    return lo - _SLACK * (1.0 + np.abs(lo)), hi + _SLACK * (1.0 + np.abs(hi))


def affine_bounds(W: np.ndarray, b: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> Interval:
    """Bounds of ``W @ x + b`` over the box ``lo <= x <= hi``."""
    Wp, Wn = np.maximum(W, 0), np.minimum(W, 0)
    return widen(Wp @ lo + Wn @ hi + b, Wp @ hi + Wn @ lo + b)


def network_bounds(
    layers: Sequence[Any], lo: np.ndarray, hi: np.ndarray, shift: Interval | None = None
) -> NodeBounds:
    """Bounds of every layer of a network of ``Dense`` layers over the box
    ``[lo, hi]``; ``shift`` (bounds) is added to the first layer's pre-activation."""
    pre: list[Interval] = []
    post: list[Interval] = []
    hl, hh = lo, hi
    for k, layer in enumerate(layers):
        pl, ph = affine_bounds(layer.W, layer.b, hl, hh)
        if k == 0 and shift is not None:
            pl, ph = pl + shift[0], ph + shift[1]
        pre.append((pl, ph))
        if layer.activation == "relu":
            hl, hh = np.maximum(pl, 0), np.maximum(ph, 0)
        else:
            hl, hh = pl, ph
        post.append((hl, hh))
    return tuple(pre), tuple(post), (hl, hh)
