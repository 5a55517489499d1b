"""Tree ensembles flattened into arrays for the branch-and-bound (query-independent part).

One :class:`FlatForest` holds the trees of one or more compiled tree ensembles
over the same raw inputs (the explained model and any ``robust_to`` models):

* every node of every tree with a global id: its children, the raw feature it
  splits on (the :class:`~counterfact.models._compile.RawBlock` index), and the
  split in raw units -- a threshold ``le`` (left iff ``z <= le``, right iff
  ``z >= ge``) for numeric features and ordinal prefix splits, or the set of
  category indices (ranks for ordinals) that go left;
* every leaf with a global index, tree by tree, each tree's leaves in
  depth-first order (left subtree first), so that a subtree's leaves are
  contiguous: ``first[n] <= leaf < mid[n]`` is its left subtree and
  ``mid[n] <= leaf < last[n]`` its right one;
* per leaf and raw feature, the box the leaf's path allows: the tightest
  threshold of a left turn (``hi``: index into the feature's sorted distinct
  thresholds, -1 for none), of a right turn (``lo``), and the allowed
  categories as a bit mask.

Built once per model (a Python walk over every node); each query then maps
the thresholds to its own intervals with numpy (:mod:`._atoms`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ...models._compile import TreeEnsemble

__all__ = ["MAX_ATOMS", "FlatForest", "flat_forest"]

#: the most categories (or allowed values) of a feature searched as a set (one 64-bit mask)
MAX_ATOMS = 63


@dataclass
class FlatForest:
    """The trees of one or more ensembles as arrays (module docstring)."""

    n_features: int
    #: per node: children (-1 at leaves), raw feature (-1 at leaves), threshold, left set
    left: np.ndarray
    right: np.ndarray
    feature: np.ndarray
    le: np.ndarray
    ge: np.ndarray
    catmask: np.ndarray
    is_set: np.ndarray
    #: per node: its leaf (leaves), the first leaf of its right subtree (internal nodes)
    leaf_of: np.ndarray
    mid: np.ndarray
    #: per tree: root node, first leaf; per leaf: its node and tree
    roots: np.ndarray
    tree_start: np.ndarray
    leaf_node: np.ndarray
    leaf_tree: np.ndarray
    #: per model: the slice of trees it owns
    model_trees: list[tuple[int, int]]
    #: per feature: sorted distinct thresholds ``le`` and the largest ``ge`` paired with each
    thresholds: list[np.ndarray]
    ge_of: list[np.ndarray]
    #: per node: index of its threshold in ``thresholds[feature]`` (-1: a set split or a leaf)
    le_index: np.ndarray
    #: per leaf x feature: tightest left-turn / right-turn threshold index (-1: none), left set
    leaf_hi: np.ndarray
    leaf_lo: np.ndarray
    leaf_mask: np.ndarray
    max_depth: int
    #: per-query caches keyed by anything the caller likes (grid floors of thresholds)
    cache: dict[Any, Any] = field(default_factory=dict)

    @property
    def n_leaves(self) -> int:
        return int(self.leaf_node.shape[0])

    @property
    def n_trees(self) -> int:
        return int(self.roots.shape[0])

    def leaf_values(self, model: int, coef: np.ndarray, trees: tuple[Any, ...]) -> np.ndarray:
        """``value @ coef`` of every leaf of ``model``'s trees (0 for other models' leaves)."""
        out = np.zeros(self.n_leaves)
        t0, _ = self.model_trees[model]
        for k, tree in enumerate(trees):
            t = t0 + k
            a, b = int(self.tree_start[t]), int(self.tree_start[t + 1])
            nodes = self.leaf_node[a:b] - int(self._node_base[t])
            out[a:b] = np.asarray(tree.value, dtype=float)[nodes] @ np.asarray(coef, dtype=float)
        return out

    _node_base: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


class _Builder:
    """Walks every tree once, appending nodes and leaves (see :func:`flat_forest`)."""

    def __init__(self, space: Any) -> None:
        self.space = space
        self.names = [b.name for b in space.blocks]
        self.index = {n: i for i, n in enumerate(self.names)}
        self.nodes: dict[str, list[Any]] = {
            k: []
            for k in ("left", "right", "feature", "le", "ge", "catmask", "is_set", "leaf_of", "mid")
        }
        self.leaf_node: list[int] = []
        self.leaf_tree: list[int] = []
        self.leaf_hi: list[list[float]] = []
        self.leaf_lo: list[list[float]] = []
        self.leaf_mask: list[list[int]] = []
        self.max_depth = 0

    def _split(self, s: Any) -> tuple[int, float, float, int, bool]:
        """(feature, le, ge, left mask, is a set split) of one IR split, in raw units."""
        f = self.index.get(s.feature)
        if f is None:
            raise UnsupportedModelError(
                f"The branch-and-bound oracle found a split on '{s.feature}', which is no raw "
                "feature."
            )
        blk = self.space.blocks[f]
        if blk.is_indicator or (s.raw_le is None and s.left_categories is not None):
            if s.left_categories is None:
                raise UnsupportedModelError(
                    "The branch-and-bound oracle needs the category sets of the splits on "
                    f"'{s.feature}'."
                )
            n = blk.size if blk.is_indicator else int(blk.upper) + 1
            if n > MAX_ATOMS:
                raise UnsupportedModelError(
                    f"The branch-and-bound oracle searches at most {MAX_ATOMS} categories per "
                    f"feature; '{s.feature}' has {n}."
                )
            mask = 0
            for k in s.left_categories:
                mask |= 1 << int(k)
            return f, np.nan, np.nan, mask, True
        if s.raw_le is None:
            raise UnsupportedModelError(
                f"The branch-and-bound oracle has no raw-unit form of a split on '{s.feature}'."
            )
        return f, float(s.raw_le), float(s.raw_ge), 0, False

    def tree(
        self,
        t: int,
        tree: Any,
        splits: tuple[Any, ...],
        decoded: dict[int, tuple[int, float, float, int, bool]],
    ) -> None:
        nf = len(self.names)
        base = len(self.nodes["left"])
        n_nodes = int(tree.left.shape[0])
        for key in self.nodes:
            self.nodes[key].extend([0 if key in ("catmask", "is_set") else -1] * n_nodes)
        nd = self.nodes
        # (node, depth, hi thresholds, lo thresholds, masks)
        stack: list[tuple[int, int, list[float], list[float], list[int]]] = [
            (0, 0, [np.inf] * nf, [-np.inf] * nf, [-1] * nf)
        ]
        while stack:
            n, depth, hi, lo, masks = stack.pop()
            g = base + n
            s_id = int(tree.split[n])
            if s_id < 0:
                nd["leaf_of"][g] = len(self.leaf_node)
                self.leaf_node.append(g)
                self.leaf_tree.append(t)
                self.leaf_hi.append(hi)
                self.leaf_lo.append(lo)
                self.leaf_mask.append(masks)
                self.max_depth = max(self.max_depth, depth)
                continue
            if s_id not in decoded:
                decoded[s_id] = self._split(splits[s_id])
            f, le, ge, mask, is_set = decoded[s_id]
            nd["feature"][g], nd["le"][g], nd["ge"][g], nd["catmask"][g], nd["is_set"][g] = (
                f,
                le,
                ge,
                mask,
                is_set,
            )
            nd["left"][g], nd["right"][g] = base + int(tree.left[n]), base + int(tree.right[n])
            l_hi, l_lo, l_m = list(hi), lo, list(masks)
            r_hi, r_lo, r_m = hi, list(lo), list(masks)
            if is_set:
                l_m[f] = masks[f] & mask
                r_m[f] = masks[f] & ~mask
            else:
                l_hi[f] = min(hi[f], le)
                r_lo[f] = max(lo[f], le)
            # right first on the stack, so the left subtree's leaves come first
            stack.append((int(tree.right[n]), depth + 1, r_hi, r_lo, r_m))
            stack.append((int(tree.left[n]), depth + 1, l_hi, l_lo, l_m))
        # first leaf of each internal node's right subtree (its leaves are contiguous)
        for n in tree.bottom_up():
            if int(tree.split[n]) >= 0:
                nd["mid"][base + n] = _first_leaf(nd, base + int(tree.right[n]))


def _first_leaf(nd: dict[str, list[Any]], g: int) -> int:
    while nd["leaf_of"][g] < 0:
        g = nd["left"][g]
    return int(nd["leaf_of"][g])


def flat_forest(models: list[Any]) -> FlatForest:
    """The :class:`FlatForest` of compiled tree ensembles over one input space (the first's).

    Raises :class:`UnsupportedModelError` for a model that is no tree ensemble or a
    split without a raw-unit form."""
    space = models[0].inputs
    b = _Builder(space)
    roots, tree_start, model_trees, node_base = [], [], [], []
    t = 0
    for compiled in models:
        est = compiled.estimator
        if not isinstance(est, TreeEnsemble):
            raise UnsupportedModelError(
                "The branch-and-bound oracle searches tree ensembles only, not "
                f"{type(est).__name__}."
            )
        decoded: dict[int, tuple[int, float, float, int, bool]] = {}
        first = t
        for tree in est.trees:
            roots.append(len(b.nodes["left"]))
            node_base.append(len(b.nodes["left"]))
            tree_start.append(len(b.leaf_node))
            b.tree(t, tree, est.splits, decoded)
            t += 1
        model_trees.append((first, t))
    tree_start.append(len(b.leaf_node))
    return _assemble(b, roots, tree_start, model_trees, node_base)


def _assemble(
    b: _Builder,
    roots: list[int],
    tree_start: list[int],
    model_trees: list[tuple[int, int]],
    node_base: list[int],
) -> FlatForest:
    nd = b.nodes
    nf = len(b.names)
    feature = np.asarray(nd["feature"], dtype=np.int64)
    le = np.asarray(nd["le"], dtype=float)
    ge = np.asarray(nd["ge"], dtype=float)
    is_set = np.asarray(nd["is_set"], dtype=bool)
    leaf_hi = np.asarray(b.leaf_hi, dtype=float).reshape(-1, nf)
    leaf_lo = np.asarray(b.leaf_lo, dtype=float).reshape(-1, nf)
    thresholds, ge_of = [], []
    le_index = np.full(feature.shape[0], -1, dtype=np.int64)
    hi_idx = np.full(leaf_hi.shape, -1, dtype=np.int64)
    lo_idx = np.full(leaf_lo.shape, -1, dtype=np.int64)
    for f in range(nf):
        at = np.flatnonzero((feature == f) & ~is_set)
        u, inv = np.unique(le[at], return_inverse=True)
        g = np.full(u.shape[0], -np.inf)
        np.maximum.at(g, inv, ge[at])
        thresholds.append(u)
        ge_of.append(g)
        le_index[at] = inv
        for src, dst in ((leaf_hi, hi_idx), (leaf_lo, lo_idx)):
            fin = np.isfinite(src[:, f])
            dst[fin, f] = np.searchsorted(u, src[fin, f])
    masks = np.asarray(b.leaf_mask, dtype=np.int64).reshape(-1, nf).astype(np.uint64)
    return FlatForest(
        n_features=nf,
        left=np.asarray(nd["left"], dtype=np.int64),
        right=np.asarray(nd["right"], dtype=np.int64),
        feature=feature,
        le=le,
        ge=ge,
        catmask=np.asarray(nd["catmask"], dtype=np.int64).astype(np.uint64),
        is_set=is_set,
        leaf_of=np.asarray(nd["leaf_of"], dtype=np.int64),
        mid=np.asarray(nd["mid"], dtype=np.int64),
        roots=np.asarray(roots, dtype=np.int64),
        tree_start=np.asarray(tree_start, dtype=np.int64),
        leaf_node=np.asarray(b.leaf_node, dtype=np.int64),
        leaf_tree=np.asarray(b.leaf_tree, dtype=np.int64),
        model_trees=model_trees,
        thresholds=thresholds,
        ge_of=ge_of,
        le_index=le_index,
        leaf_hi=hi_idx,
        leaf_lo=lo_idx,
        leaf_mask=masks,
        max_depth=b.max_depth,
        _node_base=np.asarray(node_base, dtype=np.int64),
    )
