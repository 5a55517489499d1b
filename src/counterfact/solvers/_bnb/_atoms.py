"""One query's features cut into *atoms* by the ensemble's splits (the search's units).

Trees read a feature only through their splits, so the values a feature may
take (its domain: range, integers or grid, allowed set, the query's own value)
fall into classes that every tree treats alike.  Each class is an *atom*; the
branch-and-bound searches over sets of atoms, and only needs, per atom, the
value nearest to the query and its distance ``delta`` (eq. 3 per feature).

* A **range** feature (numeric or ordinal with prefix splits) has ordered
  atoms: atom ``i`` holds the domain's values between cut ``i - 1`` and cut
  ``i``; a split sends atoms ``0 .. k`` left.  Each cut is identified by the
  largest domain value that goes left (``left_max``), so splits between the same
  two grid values (or integers) are one cut and every atom holds a value.  The
  distance of the nearest value of a run of atoms is unimodal in the atom index,
  so its minimum over a run ``[lo, hi]`` is at ``clip(query atom, lo, hi)``;
  so is the call's cost (``Domain.cost``: each side of a cost curve is
  non-decreasing away from the query, a rank table is checked to be).
* A **set** feature (categorical, an ordinal with other splits, a numeric
  feature restricted to a finite set of values) has one atom per allowed value,
  at most :data:`~._flat.MAX_ATOMS`, and splits are bit masks over them.

A real feature with a grid (``Feature.resolution``) takes grid values (exact
multiples of the step, as the reported values are) or the query's own value,
the same domain as MACE's Z3 and CP-SAT oracles search.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._flat import MAX_ATOMS, FlatForest

__all__ = ["Domain", "FeatureAtoms", "feature_atoms"]


@dataclass(frozen=True)
class Domain:
    """One raw feature of one query, in solver units.

    ``query``: the query's value (a category index for categorical features, a
    rank for ordinal ones).  ``lower``/``upper``: inclusive bounds (numeric and
    ordinal).  ``values``: a finite set of allowed values (category indices,
    ranks or numbers), or None.  ``scale``: ``R_j`` of eq. 3 (categorical: a
    change costs 1).  ``integral``: integer-valued.  ``grid``: the step of a real
    feature's grid, or None.  ``fixed``: only the query's value is allowed.
    """

    query: float
    scale: float
    categorical: bool = False
    lower: float = -math.inf
    upper: float = math.inf
    values: tuple[float, ...] | None = None
    integral: bool = False
    grid: float | None = None
    fixed: bool = False
    #: the call's cost of the feature (a FeatureCost): an atom's ``delta`` is then the
    #: cost of its cheapest value instead of eq. 3's distance
    cost: Any = None


@dataclass
class FeatureAtoms:
    """The atoms of one feature (module docstring).

    ``point``/``delta``: per atom, the value nearest to the query and its
    distance.  Range features: ``cut_of`` maps each of the ensemble's
    thresholds on the feature to the last atom that goes left (-1: none; ``m - 1``:
    all), ``query_atom`` is where the distance is least.  Set features:
    ``threshold_mask`` maps each threshold to the atoms that go left, ``category``
    gives the category index (or rank) of each atom, ``by_delta`` the atoms
    nearest first.
    """

    kind: str
    point: np.ndarray
    delta: np.ndarray
    cut_of: np.ndarray | None = None
    query_atom: int = 0
    threshold_mask: np.ndarray | None = None
    category: np.ndarray | None = None
    by_delta: np.ndarray | None = None

    @property
    def n(self) -> int:
        return int(self.point.shape[0])

    @property
    def full_mask(self) -> int:
        return (1 << self.n) - 1

    def min_delta(self, lo: int, hi: int) -> tuple[float, int]:
        """Least distance over atoms ``lo .. hi`` of a range feature, and its atom."""
        a = min(max(self.query_atom, lo), hi)
        return float(self.delta[a]), a

    def min_delta_mask(self, mask: int) -> tuple[float, int]:
        """Least distance over the atoms of ``mask`` of a set feature, and its atom."""
        for a in self.by_delta:  # type: ignore[union-attr]
            if (mask >> int(a)) & 1:
                return float(self.delta[a]), int(a)
        return math.inf, -1


def feature_atoms(forest: FlatForest, f: int, d: Domain, range_ok: bool) -> FeatureAtoms | None:
    """The atoms of feature ``f`` of ``forest`` for the domain ``d``; None when the
    domain holds no value at all.  ``range_ok``: the feature's splits are all
    thresholds (else it is searched as a set)."""
    if d.categorical or d.values is not None or not range_ok:
        return _set_atoms(forest, f, d)
    return _range_atoms(forest, f, d)


def _grid_floor_ceil(forest: FlatForest, f: int, step: Fraction) -> tuple[np.ndarray, np.ndarray]:
    """Per threshold of feature ``f``: the largest grid value ``<= le`` and the least
    grid value ``>= ge`` (exact multiples of ``step``, as floats; cached per model)."""
    key = ("grid", f, step)
    hit = forest.cache.get(key)
    if hit is None:
        thr, ge = forest.thresholds[f], forest.ge_of[f]
        fl = np.array([_floor(x, step) for x in thr], dtype=float)
        ce = np.array([_ceil(x, step) for x in ge], dtype=float)
        hit = forest.cache[key] = (fl, ce)
    return hit  # type: ignore[no-any-return]


def _floor(x: float, step: Fraction) -> float:
    if not math.isfinite(x):
        return x
    return float(math.floor(Fraction(x) / step) * step)


def _ceil(x: float, step: Fraction) -> float:
    if not math.isfinite(x):
        return x
    return float(math.ceil(Fraction(x) / step) * step)


def _range_atoms(forest: FlatForest, f: int, d: Domain) -> FeatureAtoms | None:
    """Ordered atoms of a numeric / ordinal feature (module docstring)."""
    q = float(d.query)
    thr, ge = forest.thresholds[f], forest.ge_of[f]
    allowed = d.lower <= q <= d.upper
    if d.fixed:
        lo_eff = hi_eff = q
        lm = np.where(thr >= q, q, -np.inf)
        rm = np.where(ge <= q, q, np.inf)
    elif d.integral:
        lo_eff, hi_eff = float(math.ceil(d.lower)), float(math.floor(d.upper))
        lm, rm = np.floor(thr), np.ceil(ge)
    elif d.grid is not None:
        step = Fraction(repr(float(d.grid)))
        lo_eff, hi_eff = _ceil(d.lower, step), _floor(d.upper, step)
        fl, ce = _grid_floor_ceil(forest, f, step)
        lm, rm = fl.copy(), ce.copy()
        if allowed:  # the query's own value (possibly off the grid) is a value too
            lo_eff, hi_eff = min(lo_eff, q), max(hi_eff, q)
            lm = np.where(thr >= q, np.maximum(lm, q), lm)
            rm = np.where(ge <= q, np.minimum(rm, q), rm)
    else:
        lo_eff, hi_eff = float(d.lower), float(d.upper)
        lm, rm = np.minimum(thr, hi_eff), np.maximum(ge, lo_eff)
    if not lo_eff <= hi_eff:
        return None
    inside = (lm >= lo_eff) & (lm < hi_eff)
    keys = np.unique(lm[inside])
    m = keys.shape[0] + 1
    cut_of = np.where(lm >= hi_eff, m - 1, -1).astype(np.int64)
    cut_of[inside] = np.searchsorted(keys, lm[inside])
    A = np.empty(m)
    B = np.empty(m)
    A[0], B[m - 1] = lo_eff, hi_eff
    B[: m - 1] = keys
    A[cut_of[inside] + 1] = rm[inside]
    point = np.clip(q, A, B)
    delta = np.abs(point - q) / float(d.scale) if d.cost is None else _costs(d, point)
    qa = int(min(np.searchsorted(B, q, side="left"), m - 1))
    return FeatureAtoms("range", point, delta, cut_of=cut_of, query_atom=qa)


def _set_atoms(forest: FlatForest, f: int, d: Domain) -> FeatureAtoms | None:
    """One atom per allowed value of a categorical / ordinal / value-set feature."""
    q = float(d.query)
    if d.fixed:
        vals = np.array([q])
    elif d.values is not None:
        vals = np.array(sorted(float(v) for v in d.values))
    else:
        lo, hi = math.ceil(d.lower), math.floor(d.upper)
        vals = np.arange(lo, hi + 1, dtype=float)
    if d.cost is not None:
        delta = _costs(d, vals)
    elif d.categorical:
        delta = (vals != q).astype(float)
    else:
        delta = np.abs(vals - q) / float(d.scale)
    if vals.shape[0] == 0:
        return None
    if vals.shape[0] > MAX_ATOMS:
        raise UnsupportedModelError(
            f"The branch-and-bound oracle searches at most {MAX_ATOMS} allowed values per "
            "feature as a set; feature "
            f"{f} has {vals.shape[0]}."
        )
    thr = forest.thresholds[f]
    bits = np.left_shift(np.uint64(1), np.arange(vals.shape[0], dtype=np.uint64))
    tmask = (
        ((vals[None, :] <= thr[:, None]) * bits[None, :]).sum(axis=1).astype(np.uint64)
        if thr.size
        else np.zeros(0, dtype=np.uint64)
    )
    order = np.argsort(delta, kind="stable")
    return FeatureAtoms(
        "set", vals, delta, threshold_mask=tmask, category=vals.astype(np.int64), by_delta=order
    )


def _costs(d: Domain, points: np.ndarray) -> np.ndarray:
    """The call's cost of each atom's value (``d.cost``), after checking what the search
    relies on: every allowed value has a finite cost, and a rank table (an ordinal
    feature searched as runs of atoms) is non-decreasing away from the query, so that
    an atom's value nearest the query is its cheapest."""
    c = d.cost
    out = np.asarray(c(points), dtype=float)
    if not np.all(np.isfinite(out)):
        raise UnsupportedModelError(
            f"The branch-and-bound oracle does not search '{c.name}': a value its bounds "
            "allow has an infinite cost."
        )
    if c.kind == "table" and not d.categorical and d.values is None and not d.fixed:
        ranks = np.arange(math.ceil(d.lower), math.floor(d.upper) + 1)
        t = np.asarray(c(ranks), dtype=float)
        up, down = t[ranks >= d.query], t[ranks <= d.query][::-1]
        if np.any(np.diff(up) < 0) or np.any(np.diff(down) < 0):
            raise UnsupportedModelError(
                f"The branch-and-bound oracle does not search '{c.name}': its costs fall "
                "somewhere away from the query's rank."
            )
    return out
