"""One query's search space for MD-PSO, and the fast decoder back to raw rows.

Coordinates are the paper's [0, 1] scaling (min-max over the schema's domain,
``x = (raw - lower) / range``; ordinal features by rank ``/ (levels - 1)``,
which is also the Gower normaliser of eq. 6).  Categorical features are
one-hot groups with one column per *allowed* category.

Per active feature the box is the epsilon box ``[z(1-eps), z(1+eps)]`` capped
to [0, 1] (Section IV-E; ``box="absolute"`` uses ``[z - eps, z + eps]``),
widened to contain the query's own value, and intersected with the query's
bounds (user ranges, monotone directions, domain; integer features to whole
numbers; finite allowed values to a grid).  A feature whose query value breaks
its bounds (a user range the query lies outside) is *forced*: it is always
active and always moves, to the nearest allowed value if the box cannot reach
one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..._utils._values import _py
from ...constraints._bounds import QueryBounds
from ...schema import Schema

__all__ = ["FeatureSpec", "Problem", "build_problem"]

_TOL = 1e-9


@dataclass
class FeatureSpec:
    """How one active feature maps between raw values and search coordinates."""

    name: str
    kind: str  # "real" | "integer" | "grid" | "categorical"
    start: int
    stop: int
    query_raw: Any
    forced: bool
    iv: float
    off: float = 0.0
    scale: float = 1.0
    lower: float = -math.inf
    upper: float = math.inf
    grid: np.ndarray | None = None  # scaled grid points (kind "grid")
    grid_raw: np.ndarray | None = None  # raw value of each grid point
    categories: tuple[Any, ...] = ()  # allowed categories, one column each (kind "categorical")
    qpos: int = -1  # column of the query's category in the group (-1: not allowed)


@dataclass
class Problem:
    """Arrays the swarm works on (``d`` columns, ``F`` active features)."""

    features: list[FeatureSpec]
    n_features: int  # p: every feature of the schema (normaliser of l2 and l3)
    z: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    max_changes: int | None
    feat_of_col: np.ndarray = field(init=False)
    ordered_cols: np.ndarray = field(init=False)
    ordered_feat: np.ndarray = field(init=False)
    real_cols: np.ndarray = field(init=False)  # continuous columns that may snap to the query
    int_cols: np.ndarray = field(init=False)
    int_off: np.ndarray = field(init=False)
    int_scale: np.ndarray = field(init=False)
    grids: list[tuple[int, np.ndarray]] = field(init=False)
    groups: list[tuple[int, int, int, int]] = field(init=False)  # (start, stop, qpos, feature)
    forced: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        d = int(self.z.shape[0])
        self.feat_of_col = np.zeros(d, dtype=np.int64)
        ordered, ofeat, real, ints, ioff, iscale, grids, groups = [], [], [], [], [], [], [], []
        for k, f in enumerate(self.features):
            self.feat_of_col[f.start : f.stop] = k
            if f.kind == "categorical":
                groups.append((f.start, f.stop, f.qpos, k))
                continue
            ordered.append(f.start)
            ofeat.append(k)
            if f.kind == "real":
                if not f.forced:  # a forced feature may not return to the query's value
                    real.append(f.start)
            elif f.kind == "integer":
                ints.append(f.start)
                ioff.append(f.off)
                iscale.append(f.scale)
            else:
                grids.append((f.start, np.asarray(f.grid, dtype=float)))
        self.ordered_cols = np.asarray(ordered, dtype=np.int64)
        self.ordered_feat = np.asarray(ofeat, dtype=np.int64)
        self.real_cols = np.asarray(real, dtype=np.int64)
        self.int_cols = np.asarray(ints, dtype=np.int64)
        self.int_off = np.asarray(ioff, dtype=float)
        self.int_scale = np.asarray(iscale, dtype=float)
        self.grids = grids
        self.groups = groups
        self.forced = np.array([f.forced for f in self.features], dtype=bool)

    @property
    def d(self) -> int:
        """Number of search coordinates."""
        return int(self.z.shape[0])

    @property
    def n_active(self) -> int:
        """Number of active features."""
        return len(self.features)

    @property
    def names(self) -> list[str]:
        """Active feature names."""
        return [f.name for f in self.features]

    # ------------------------------------------------------------ decoding
    def decode(self, X: np.ndarray) -> dict[str, np.ndarray]:
        """Raw columns of the active features for each row of ``X`` (projected positions)."""
        out: dict[str, np.ndarray] = {}
        for f in self.features:
            if f.kind == "categorical":
                k = np.argmax(X[:, f.start : f.stop], axis=1)
                out[f.name] = np.asarray(f.categories, dtype=object)[k]
                continue
            x = X[:, f.start]
            same = x == self.z[f.start]
            if f.kind == "grid":
                g = np.asarray(f.grid, dtype=float)
                idx = np.argmin(np.abs(x[:, None] - g[None, :]), axis=1)
                col = np.asarray(f.grid_raw)[idx].copy()
                col[same] = f.query_raw
                out[f.name] = col
                continue
            raw = f.off + f.scale * x
            if f.kind == "integer":
                raw = np.clip(np.rint(raw), f.lower, f.upper)
                out[f.name] = np.where(same, f.query_raw, raw).astype(np.int64)
            else:
                raw = np.clip(raw, f.lower, f.upper)
                out[f.name] = np.where(same, float(f.query_raw), raw)
        return out


def typical_scale(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Per feature, the median of the non-zero scaled training values (1 if none):
    the width a relative box gives a query whose value is 0."""
    out = np.ones(len(schema))
    for j, f in enumerate(schema):
        if f.is_numeric:
            raw = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
            v = (raw - float(f.lower)) / f.range  # type: ignore[arg-type]
        elif f.kind == "ordinal":
            v = np.array([f.rank(c) for c in X[f.name]], dtype=float) / f.range
        else:
            continue
        nz = np.abs(v[v != 0])
        if nz.size:
            out[j] = float(np.median(nz))
    return out


def _box(z: float, eps: float, box: str, typical: float = 1.0) -> tuple[float, float]:
    if box == "relative":
        c = z if z != 0 else typical  # a query at 0: the box of a typical non-zero value
        a, b = z - eps * abs(c), z + eps * abs(c)
        lo, hi = max(min(a, b), 0.0), min(max(a, b), 1.0)
    else:
        lo, hi = max(z - eps, 0.0), min(z + eps, 1.0)
    return min(lo, z), max(hi, z)


_Spec = tuple[FeatureSpec | None, float, float, float]


def _spec(f: Any, b: Any, iv: float, eps: float, box: str, typical: float = 1.0) -> _Spec:
    """Spec (None when the feature cannot move), its query coordinate and box."""
    if f.is_categorical:
        return _categorical_spec(f, b, iv)
    if f.is_numeric:
        return _numeric_spec(f, b, iv, eps, box, typical)
    return _ordinal_spec(f, b, iv, eps, box, typical)


def _categorical_spec(f: Any, b: Any, iv: float) -> _Spec:
    """A categorical feature: any allowed category (not boxed)."""
    q = _py(b.value)
    allowed = tuple(b.values)
    forced = q not in allowed
    if len(allowed) < (1 if forced else 2):
        return None, 0.0, 0.0, 0.0
    spec = FeatureSpec(
        f.name,
        "categorical",
        0,
        len(allowed),
        q,
        forced,
        iv,
        categories=allowed,
        qpos=-1 if forced else allowed.index(q),
    )
    return spec, 0.0, 0.0, 1.0


def _numeric_spec(f: Any, b: Any, iv: float, eps: float, box: str, typical: float) -> _Spec:
    """A numeric feature: its box intersected with the query's range, or the grid of
    its allowed values inside the box."""
    q = _py(b.value)
    off, scale = float(f.lower), float(f.range)
    qf = float(q)
    z = (qf - off) / scale
    lo, hi = _box(z, eps, box, typical)
    bl, bu = float(b.lower), float(b.upper)
    rlo, rhi = max(off + scale * lo, bl), min(off + scale * hi, bu)
    if b.values is not None:
        return _numeric_grid_spec(f, b, iv, z, (rlo, rhi))
    forced = not (bl - _TOL * max(1.0, abs(qf)) <= qf <= bu + _TOL * max(1.0, abs(qf)))
    if rlo > rhi:  # the box cannot reach the allowed interval: nearest allowed value
        rlo = rhi = bl if qf < bl else bu
    if f.kind == "integer":
        rlo, rhi = math.ceil(rlo - _TOL), math.floor(rhi + _TOL)
        if rlo > rhi:
            if not forced:
                return None, z, z, z
            rlo = rhi = math.ceil(bl - _TOL) if qf < bl else math.floor(bu + _TOL)
    if not forced and rhi - rlo <= _TOL * max(1.0, abs(qf)):
        return None, z, z, z
    kind = "integer" if f.kind == "integer" else "real"
    spec = FeatureSpec(f.name, kind, 0, 1, q, forced, iv, off, scale, bl, bu)
    return spec, z, (rlo - off) / scale, (rhi - off) / scale


def _numeric_grid_spec(f: Any, b: Any, iv: float, z: float, reach: tuple[float, float]) -> _Spec:
    """A numeric feature restricted to allowed values: the grid of those in ``reach``
    (the raw box), the query's own value included (or, when it is not allowed and
    none is in reach, the nearest allowed value)."""
    q = _py(b.value)
    off, scale = float(f.lower), float(f.range)
    qf = float(q)
    rlo, rhi = reach
    vals = np.asarray(sorted({float(v) for v in b.values}), dtype=float)
    forced = not np.any(np.abs(vals - qf) <= _TOL * max(1.0, abs(qf)))
    pts = vals[(vals >= rlo - _TOL) & (vals <= rhi + _TOL)]
    if forced and pts.size == 0 and vals.size:
        pts = vals[[int(np.argmin(np.abs(vals - qf)))]]
    if not forced:
        pts = np.unique(np.append(pts, qf))
    if pts.size < (1 if forced else 2):
        return None, z, z, z
    raw = pts.astype(np.int64) if f.kind == "integer" else pts
    grid = (pts - off) / scale
    if not forced:
        grid[np.abs(pts - qf) <= _TOL * max(1.0, abs(qf))] = z
    bl, bu = float(b.lower), float(b.upper)
    spec = FeatureSpec(
        f.name, "grid", 0, 1, q, forced, iv, off, scale, bl, bu, grid=grid, grid_raw=raw
    )
    return spec, z, float(grid.min()), float(grid.max())


def _ordinal_spec(f: Any, b: Any, iv: float, eps: float, box: str, typical: float) -> _Spec:
    """An ordinal feature: the grid of the allowed ranks inside its box."""
    q = _py(b.value)
    levels = list(f.categories)
    scale = float(f.range)
    r = levels.index(q)
    z = r / scale
    lo, hi = _box(z, eps, box, typical)
    ranks_ok = [levels.index(c) for c in b.values]
    forced = r not in ranks_ok
    ranks = np.array(
        sorted(a for a in ranks_ok if lo - _TOL <= a / scale <= hi + _TOL), dtype=float
    )
    if forced and ranks.size == 0 and ranks_ok:
        ranks = np.array([min(ranks_ok, key=lambda a: abs(a - r))], dtype=float)
    if not forced:
        ranks = np.unique(np.append(ranks, r))
    if ranks.size < (1 if forced else 2):
        return None, z, z, z
    grid = ranks / scale
    if not forced:
        grid[ranks == r] = z
    raw = np.asarray(levels, dtype=object)[ranks.astype(int)]
    spec = FeatureSpec(f.name, "grid", 0, 1, q, forced, iv, 0.0, scale, grid=grid, grid_raw=raw)
    return spec, z, float(grid.min()), float(grid.max())


def build_problem(
    x: pd.Series,
    bounds: QueryBounds,
    schema: Schema,
    iv: np.ndarray,
    *,
    n_active: int | None,
    epsilon: float,
    epsilon_per_feature: dict[str, float] | None = None,
    box: str = "relative",
    typical: np.ndarray | None = None,
) -> Problem:
    """The search space of one query.

    The active set is every forced feature plus the ``n_active`` movable
    features of highest information value (ties: schema order); a feature is
    movable when its box (epsilon box intersected with the query's bounds)
    holds another value than the query's.
    """
    per = epsilon_per_feature or {}
    cands: list[tuple[FeatureSpec, float, float, float]] = []
    for j, f in enumerate(schema):
        b = bounds.features[j]
        t = 1.0 if typical is None else float(typical[j])
        spec, z, lo, hi = _spec(f, b, float(iv[j]), float(per.get(f.name, epsilon)), box, t)
        if spec is not None:
            cands.append((spec, z, lo, hi))
    forced = [c for c in cands if c[0].forced]
    free = [c for c in cands if not c[0].forced]
    order = sorted(range(len(free)), key=lambda i: -free[i][0].iv)
    if n_active is not None:
        order = order[: max(0, n_active)]
    chosen = forced + [free[i] for i in sorted(order, key=lambda i: -free[i][0].iv)]
    z_all: list[float] = []
    lo_all: list[float] = []
    hi_all: list[float] = []
    specs = []
    pos = 0
    for spec, z, lo, hi in chosen:
        width = spec.stop - spec.start
        spec.start, spec.stop = pos, pos + width
        pos += width
        if spec.kind == "categorical":
            onehot = [1.0 if k == spec.qpos else 0.0 for k in range(width)]
            z_all += onehot
            lo_all += [0.0] * width
            hi_all += [1.0] * width
        else:
            z_all.append(z)
            lo_all.append(lo)
            hi_all.append(hi)
        specs.append(spec)
    return Problem(
        specs,
        len(schema),
        np.asarray(z_all, dtype=float),
        np.asarray(lo_all, dtype=float),
        np.asarray(hi_all, dtype=float),
        bounds.max_changes,
    )


def query_columns(x: pd.Series, schema: Schema, n: int) -> dict[str, np.ndarray]:
    """The query repeated ``n`` times, column by column, in the schema's dtypes."""
    out: dict[str, np.ndarray] = {}
    for f in schema:
        v = _py(x[f.name])
        if f.kind == "integer":
            out[f.name] = np.full(n, round(float(v)), dtype=np.int64)
        elif f.kind == "real":
            out[f.name] = np.full(n, float(v))
        else:
            col = np.empty(n, dtype=object)
            col[:] = [v] * n
            out[f.name] = col
    return out
