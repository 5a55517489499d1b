"""Tree ensembles in Mišić's split-variable formulation (Mišić 2020, Operations Research 68(5)).

* One binary ``y_{j,k}`` per distinct raw-unit cut ``t_k`` of each numeric or
  ordinal feature ``j`` (sorted), meaning "``z_j`` goes left at cut ``k``":
  ``y = 1 => z_j <= raw_le``, ``y = 0 => z_j >= raw_ge`` (the IR's exact,
  float32-safe raw cuts; integer features get integer cuts; real features
  keep a further ``max(SPLIT_TOL * |t|, SPLIT_ABS)`` away from the cut on both sides,
  ``reference/solvers.md`` §3.3), ordered
  ``y_{j,k} <= y_{j,k+1}``.  Cuts outside the query's box are constants.
  With ``cover=True`` (a proof over a box) the two sides overlap by that
  distance instead: every value of the box, including the ones next to a cut,
  can take the branch the model sends it to, so a bound proven over the
  box holds at every one of its float64 values.
* Categorical splits need no binary: "goes left" is the sum of the one-hot
  indicators of the categories sent left.  An ordinal with a non-prefix split
  (an ordinal one-hot encoded in a pipeline: "rank == k") gets rank
  indicators, and every split on it, prefix splits included, is a sum of
  them (no split binary: the one-hot rank is tighter than big-M rows).
* Per tree, continuous leaf variables ``p_l >= 0`` with ``sum_l p_l = 1`` and,
  at every split node ``s``, ``sum_{l left of s} p_l <= go_left(s)`` and
  ``sum_{l right of s} p_l <= 1 - go_left(s)``.  Branches that the box rules
  out are pruned before any variable is created (immutable features prune
  whole subtrees).
* Output ``y_o = base_o + (1 / divisor) sum_t sum_l value_{t,l,o} p_l``.

:func:`encode_trees` can also hand back, per feature, its split binaries and
rank indicators (:class:`FeatureCuts`), from which a caller bounds the
feature's cost by the cuts it crosses (:mod:`._intervals`).

``reference/solvers.md`` §3.1: this formulation has ~9x fewer binaries than the
per-leaf big-M encoding and solved Adult forests 3.7x faster with HiGHS.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._expr import Expr, Var, quicksum
from ._model import Model

__all__ = ["SPLIT_ABS", "SPLIT_TOL", "FeatureCuts", "encode_trees"]

#: safety distance kept from a real-valued cut on either side, so that a solution
#: within the solver's feasibility tolerance still falls on its branch:
#: ``max(SPLIT_TOL * |t|, SPLIT_ABS)``.  Relative 2e-8 is a third of a float32
#: half-ulp: the compiler's float32-safe cuts often lie one float32 step above a
#: value seen in the data (a round amount such as 150000), and a larger margin
#: (1e-6 relative, 0.15 at 150000) made those observed values infeasible.
SPLIT_TOL = 2e-8
SPLIT_ABS = 1e-7


@dataclass(frozen=True)
class FeatureCuts:
    """The split variables of one numeric or ordinal feature.

    ``cuts``: ``(raw_le, raw_ge, y)`` sorted by cut, where the binary ``y`` is 1
    iff the feature's value is at most ``raw_le`` and 0 iff it is at least
    ``raw_ge`` (cuts outside the domain, constants, are left out).  ``ranks``:
    an ordinal's rank indicators (one per rank, summing to 1, the rank their
    weighted sum), when a split needed them; else empty.
    """

    cuts: tuple[tuple[float, float, Var], ...] = ()
    ranks: tuple[Var, ...] = ()


class _Splits:
    """Builds and caches the "goes left" expression of every split."""

    def __init__(self, m: Model, compiled: Any, z: list[Var], cover: bool = False) -> None:
        self.m = m
        #: the branches overlap by the safety distance (a proof) instead of keeping away
        self.cover = cover
        self.space = compiled.inputs
        self.z = z
        self.cut_vars: dict[tuple[str, float], Expr | float] = {}
        self.rank_ind: dict[str, list[Var]] = {}
        #: (feature, (raw_le, raw_ge, binary)) of every split binary
        self._binaries: list[tuple[str, tuple[float, float, Var]]] = []
        self._prepare(compiled.estimator.splits)

    def _prepare(self, splits: Any) -> None:
        cuts: dict[str, set[tuple[float, float]]] = {}
        ranked: set[str] = set()
        for s in splits:
            blk = self.space.block(s.feature)
            if blk.is_indicator:
                continue
            if s.raw_le is None:
                ranked.add(s.feature)
                continue
            cuts.setdefault(s.feature, set()).add((float(s.raw_le), float(s.raw_ge)))
        for feat, pairs in cuts.items():
            blk = self.space.block(feat)
            x = self.z[blk.start]
            lo, hi = self.m.var_bounds(x)
            prev: Var | None = None
            for le, ge in sorted(pairs):
                if le >= hi:
                    self.cut_vars[(feat, le)] = 1.0
                    continue
                if ge <= lo:
                    self.cut_vars[(feat, le)] = 0.0
                    continue
                if feat in ranked:  # an ordinal with rank indicators: a prefix of them, no binary
                    self.cut_vars[(feat, le)] = quicksum(self._ranks(feat)[: int(le) + 1])
                    continue
                y = self.m.add_binary(name=f"split_{feat}<={le:g}")
                tol = 0.0 if self.m.is_integer(x) else max(SPLIT_TOL * abs(le), SPLIT_ABS)
                if self.cover:
                    tol = -tol
                self.m.add_indicator(y, x.expr(), "<=", le - tol)
                self.m.add_indicator(y, x.expr(), ">=", ge + tol, active=0)
                if prev is not None:
                    self.m.add_le(prev - y, 0.0)  # z <= t_k  =>  z <= t_{k+1}
                prev = y
                self.cut_vars[(feat, le)] = y.expr()
                self._binaries.append((feat, (le, ge, y)))

    def _ranks(self, feat: str) -> list[Var]:
        if feat not in self.rank_ind:
            blk = self.space.block(feat)
            x = self.z[blk.start]
            lo, hi = self.m.var_bounds(x)
            k = len(blk.categories)
            ind = [
                self.m.add_var(0.0, 1.0 if lo <= r <= hi else 0.0, integer=True) for r in range(k)
            ]
            self.m.add_eq(quicksum(ind), 1.0)
            self.m.add_eq(x - quicksum(r * v for r, v in enumerate(ind)), 0.0)
            self.rank_ind[feat] = ind
        return self.rank_ind[feat]

    def table(self) -> dict[str, FeatureCuts]:
        """:class:`FeatureCuts` per feature with a split binary or rank indicators."""
        cuts: dict[str, list[tuple[float, float, Var]]] = {}
        for feat, cut in self._binaries:
            cuts.setdefault(feat, []).append(cut)
        names = set(cuts) | set(self.rank_ind)
        return {
            f: FeatureCuts(
                tuple(sorted(cuts.get(f, []), key=lambda c: c[0])), tuple(self.rank_ind.get(f, ()))
            )
            for f in names
        }

    def left(self, s: Any) -> Expr | float:
        """``go_left`` of split ``s``: an expression in [0, 1] or a constant 0/1."""
        blk = self.space.block(s.feature)
        if blk.is_indicator:
            cats = s.left_categories or ()
            ind = [self.z[blk.start + k] for k in cats]
            e = quicksum(ind)
            lo, hi = self.m.bounds_of(e)
            if hi <= 0:
                return 0.0
            if lo >= 1:
                return 1.0
            return e
        if s.raw_le is not None:
            return self.cut_vars[(s.feature, float(s.raw_le))]
        ind = self._ranks(s.feature)
        e = quicksum(ind[k] for k in (s.left_categories or ()))
        lo, hi = self.m.bounds_of(e)
        return 0.0 if hi <= 0 else (1.0 if lo >= 1 else e)


def encode_trees(
    m: Model,
    compiled: Any,
    z: list[Var],
    *,
    cuts: dict[str, FeatureCuts] | None = None,
    cover: bool = False,
) -> list[Expr]:
    """The ensemble's outputs over ``z`` (module docstring).  With ``cuts`` (a
    dict), it is filled with each feature's :class:`FeatureCuts`; with ``cover``
    every value of the variables' box reaches its own branch (module docstring)."""
    ens = compiled.estimator
    sp = _Splits(m, compiled, z, cover)
    outs = [Expr() for _ in range(int(ens.n_outputs))]
    inv = 1.0 / float(ens.divisor)
    for t, tree in enumerate(ens.trees):
        leaves, open_nodes = _feasible_leaves(tree, sp, ens.splits)
        _add_tree(m, t, np.asarray(tree.value, dtype=float), leaves, open_nodes, outs, inv)
    base = np.asarray(ens.base, dtype=float).reshape(-1)
    for o in range(len(outs)):
        if base.size and base[o] != 0.0:
            outs[o] = outs[o] + float(base[o])
    if cuts is not None:
        cuts.update(sp.table())
    return outs


#: an open split node of one tree: (go_left, the leaves left of it, the leaves right of it)
_OpenNode = tuple[Expr, list[int], list[int]]


def _feasible_leaves(tree: Any, sp: _Splits, split_of: Any) -> tuple[list[int], list[_OpenNode]]:
    """A DFS over ``tree``'s branches that the box allows: its reachable leaves, and the
    leaf sets below every split node still open (not decided by the box)."""
    spl, left, right = tree.split, tree.left, tree.right
    leaves: list[int] = []
    open_nodes: list[_OpenNode] = []

    def walk(node: int) -> list[int]:
        if spl[node] < 0:
            leaves.append(node)
            return [node]
        g = sp.left(split_of[int(spl[node])])
        if isinstance(g, float):
            return walk(int(left[node]) if g >= 1.0 else int(right[node]))
        lset = walk(int(left[node]))
        rset = walk(int(right[node]))
        open_nodes.append((g, lset, rset))
        return lset + rset

    walk(0)
    return leaves, open_nodes


def _add_tree(
    m: Model,
    t: int,
    value: np.ndarray,
    leaves: list[int],
    open_nodes: list[_OpenNode],
    outs: list[Expr],
    inv: float,
) -> None:
    """Add tree ``t``'s share of the outputs to ``outs``: its leaf's values when one leaf
    is reachable, else leaf variables ``p_l`` tied to the open splits."""
    if len(leaves) == 1:
        v = value[leaves[0]]
        for o1 in np.flatnonzero(v):
            outs[o1] = outs[o1] + float(v[o1]) * inv
        return
    p = {leaf: m.add_var(0.0, 1.0, name=f"t{t}_leaf{leaf}") for leaf in leaves}
    m.add_eq(quicksum(p.values()), 1.0)
    for g, lset, rset in open_nodes:
        m.add_le(quicksum(p[k] for k in lset) - g, 0.0)
        m.add_le(quicksum(p[k] for k in rset) + g, 1.0)
    for o in range(len(outs)):
        col = value[leaves, o]
        nz = np.flatnonzero(col)
        if nz.size:
            e = outs[o]
            for k in nz:
                e._iadd(p[leaves[k]] * (float(col[k]) * inv), 1.0)
