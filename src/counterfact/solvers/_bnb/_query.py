"""One query's view of a :class:`~._flat.FlatForest`: every split and leaf in atom terms.

:func:`query_forest` cuts each feature into atoms (:mod:`._atoms`) and maps

* every split node to the last atom that goes left (range features) or to the
  mask of atoms that go left (set features);
* every leaf to the run of atoms ``[lo, hi]`` (range features) or the mask of
  atoms (set features) its path allows;

so that a box of the search is a run of atoms per range feature and a mask per
set feature, a leaf is reachable in a box iff every feature's run (mask)
meets the leaf's, and the point of a box nearest to the query is one atom per
feature.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._atoms import Domain, FeatureAtoms, feature_atoms
from ._flat import FlatForest

__all__ = ["QueryForest", "query_forest"]

_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)


@dataclass
class QueryForest:
    """The ensemble in one query's atoms (module docstring)."""

    forest: FlatForest
    atoms: list[FeatureAtoms]
    #: feature ids searched as runs of atoms / as masks, and each feature's position in its list
    ranges: np.ndarray
    sets: np.ndarray
    position: np.ndarray
    #: per node: last atom that goes left (range features), atoms that go left (set features)
    node_cut: np.ndarray
    node_mask: np.ndarray
    node_set: np.ndarray
    #: per range feature x leaf: the leaf's run of atoms; per set feature x leaf: its mask
    leaf_lo: np.ndarray
    leaf_hi: np.ndarray
    leaf_mask: np.ndarray

    def leaves_at(self, point: np.ndarray) -> np.ndarray:
        """The leaf (global index) each tree reaches at a point given as one atom per feature."""
        ff = self.forest
        node = ff.roots.copy()
        pt = np.append(point, 0).astype(np.int64)  # feature -1 (a leaf) reads the padding
        for _ in range(ff.max_depth):
            f = ff.feature[node]
            inner = f >= 0
            if not inner.any():
                break
            a = pt[f]
            by_set = ((self.node_mask[node] >> a.astype(np.uint64)) & np.uint64(1)) == 1
            left = np.where(self.node_set[node], by_set, a <= self.node_cut[node])
            node = np.where(inner, np.where(left, ff.left[node], ff.right[node]), node)
        return ff.leaf_of[node]


def _to_atoms(masks: np.ndarray, category: np.ndarray) -> np.ndarray:
    """Masks over category indices (ranks) -> masks over a set feature's atoms."""
    bits = (masks[:, None] >> category[None, :].astype(np.uint64)) & np.uint64(1)
    shift = np.left_shift(bits, np.arange(category.shape[0], dtype=np.uint64)[None, :])
    return (
        np.bitwise_or.reduce(shift, axis=1)
        if shift.shape[1]
        else np.zeros(masks.shape[0], dtype=np.uint64)
    )


def query_forest(forest: FlatForest, domains: list[Domain]) -> QueryForest | None:
    """The forest in the atoms of one query's domains (one per raw feature); None when
    some feature's domain is empty (no counterfactual at all)."""
    ff = forest
    set_split = ff.cache.get("set_split")
    if set_split is None:
        set_split = ff.cache["set_split"] = (
            np.bincount(ff.feature[ff.is_set], minlength=ff.n_features) > 0
        )
    atoms: list[FeatureAtoms] = []
    for f, d in enumerate(domains):
        a = feature_atoms(ff, f, d, range_ok=not bool(set_split[f]))
        if a is None:
            return None
        atoms.append(a)
    kinds = np.array([a.kind == "range" for a in atoms], dtype=bool)
    ranges, sets = np.flatnonzero(kinds), np.flatnonzero(~kinds)
    position = np.zeros(ff.n_features, dtype=np.int64)
    position[ranges] = np.arange(ranges.shape[0])
    position[sets] = np.arange(sets.shape[0])
    n_nodes, L = ff.feature.shape[0], ff.n_leaves
    node_cut = np.zeros(n_nodes, dtype=np.int64)
    node_mask = np.zeros(n_nodes, dtype=np.uint64)
    node_set = np.zeros(n_nodes, dtype=bool)
    leaf_lo = np.zeros((ranges.shape[0], L), dtype=np.int64)
    leaf_hi = np.zeros((ranges.shape[0], L), dtype=np.int64)
    leaf_mask = np.zeros((sets.shape[0], L), dtype=np.uint64)
    for r, fr in enumerate(ranges.tolist()):
        a = atoms[fr]
        cut_of = a.cut_of if a.cut_of is not None else np.zeros(0, dtype=np.int64)
        at = np.flatnonzero(ff.feature == fr)
        node_cut[at] = cut_of[ff.le_index[at]]
        hi, lo = ff.leaf_hi[:, fr], ff.leaf_lo[:, fr]
        cut = np.append(cut_of, 0)  # index -1 (no threshold on the path) reads the padding
        leaf_hi[r] = np.where(hi < 0, a.n - 1, cut[hi])
        leaf_lo[r] = np.where(lo < 0, 0, cut[lo] + 1)
    for s, fs in enumerate(sets.tolist()):
        _set_feature(ff, atoms[fs], fs, s, node_mask, node_set, leaf_mask)
    return QueryForest(
        ff,
        atoms,
        ranges,
        sets,
        position,
        node_cut,
        node_mask,
        node_set,
        leaf_lo,
        leaf_hi,
        leaf_mask,
    )


def _set_feature(
    ff: FlatForest,
    a: FeatureAtoms,
    f: int,
    s: int,
    node_mask: np.ndarray,
    node_set: np.ndarray,
    leaf_mask: np.ndarray,
) -> None:
    """Node and leaf masks of set feature ``f`` (written into the arrays)."""
    cat = a.category
    tmask = a.threshold_mask
    full = np.uint64(a.full_mask)
    at = np.flatnonzero(ff.feature == f)
    node_set[at] = True
    by_cat = ff.is_set[at]
    if by_cat.any():
        node_mask[at[by_cat]] = _to_atoms(ff.catmask[at[by_cat]], cat)  # type: ignore[arg-type]
    if (~by_cat).any():
        node_mask[at[~by_cat]] = tmask[ff.le_index[at[~by_cat]]]  # type: ignore[index]
    if by_cat.any():  # categories or ranks: the paths' category sets
        m = _to_atoms(ff.leaf_mask[:, f], cat)  # type: ignore[arg-type]
    else:
        m = np.full(ff.n_leaves, full, dtype=np.uint64)
    hi, lo = ff.leaf_hi[:, f], ff.leaf_lo[:, f]
    if tmask is not None and tmask.size:
        pad = np.append(
            tmask, np.uint64(0)
        )  # index -1 (no threshold on the path) reads the padding
        m &= np.where(hi < 0, _ALL, pad[hi])
        m &= np.where(lo < 0, _ALL, ~pad[lo])
    leaf_mask[s] = m & full
