"""The points at which a region is checked with the real model: one rule for the
check before a region is returned (:mod:`counterfact.methods._pipeline._region`) and
for the re-check of a loaded file (:mod:`counterfact.result._recheck`).

Every corner of the box (each numeric range's two ends, each set's every value): all
of them up to :data:`CHECK_CORNERS`, a seeded sample of that many beyond; and
:data:`CHECK_INSIDE` seeded points inside, half of them on the features' grids
(integers always) and half uniform.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..schema import Schema
from ..schema._resolution import decimals

__all__ = [
    "CHECK_CORNERS",
    "CHECK_INSIDE",
    "corner_values",
    "grid_step",
    "inside_values",
    "on_grid",
]

#: corners of a region checked (all of them up to this many; a seeded sample beyond)
CHECK_CORNERS = 4096
#: seeded points inside a region checked besides its corners
CHECK_INSIDE = 200


def corner_values(
    bounds: Mapping[str, Any], rng: np.random.Generator, cap: int = CHECK_CORNERS
) -> tuple[dict[str, list[Any]], bool]:
    """Per feature of ``bounds``, its values at the corners checked (all corners up to
    ``cap``, else ``cap`` drawn with ``rng``), and whether they were sampled."""
    axes = [
        sorted(b, key=str) if isinstance(b, frozenset) else sorted({b[0], b[1]})
        for b in bounds.values()
    ]
    sampled = math.prod(len(a) for a in axes) > cap
    if sampled:
        picks = [tuple(a[int(rng.integers(len(a)))] for a in axes) for _ in range(cap)]
    else:
        picks = list(itertools.product(*axes))
    return {n: [p[j] for p in picks] for j, n in enumerate(bounds)}, sampled


def inside_values(
    bounds: Mapping[str, Any], schema: Schema, rng: np.random.Generator, n: int = CHECK_INSIDE
) -> dict[str, list[Any]]:
    """Per feature of ``bounds``, ``n`` values drawn inside with ``rng``: numeric values
    uniform, every other point's on the grid (integers always); set values uniform."""
    cols: dict[str, list[Any]] = {}
    for name, b in bounds.items():
        if isinstance(b, frozenset):
            options = sorted(b, key=str)
            cols[name] = [options[int(k)] for k in rng.integers(len(options), size=n)]
            continue
        lo, hi = float(b[0]), float(b[1])
        step = grid_step(schema[name])
        grid = schema[name].kind == "integer"
        cols[name] = [
            min(max(on_grid(v, step, toward=lo), lo), hi) if grid or k % 2 else v
            for k, v in enumerate(rng.uniform(lo, hi, size=n).tolist())
        ]
    return cols


def grid_step(feature: Any) -> float | None:
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


def on_grid(v: float, step: float | None, toward: float) -> float:
    """``v`` on the grid ``k * step``, rounded toward ``toward`` (the proven side),
    written as a person writes it (the step's decimals: ``3.37``, not
    ``3.3700000000000006``)."""
    if not step:
        return float(v)
    k = v / step
    return float(round((math.floor(k) if toward <= v else math.ceil(k)) * step, decimals(step)))
