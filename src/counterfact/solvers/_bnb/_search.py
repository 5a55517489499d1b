"""Best-first branch-and-bound for the nearest point a tree ensemble sends to a target.

The search space is the query's domain cut into atoms (:mod:`._query`).  A
*box* is a run of atoms per range feature and a mask per set feature.  For a
box:

* **cost bound (exact).**  The distance is separable (eq. 3: weighted l0, l1
  and linf of per-feature deltas, each non-decreasing in every delta), so the
  box's least distance is attained at its point nearest to the query, one atom
  per feature, and it is the box's priority;
* **score bound.**  For every condition ``sum_t v_t(leaf_t(x)) >= const`` of
  the target region (the decision with the margin, a probability floor, the
  conditions of other models that must agree), the sum over trees of the
  largest value of a leaf reachable in the box bounds the score from above
  (Veritas, Devos et al. 2021; treecf): a box whose bound falls short of some
  ``const`` holds no counterfactual and is dropped;
* **the change cap** (``max_changes``): the nearest point changes the fewest
  features of the box; a box whose nearest point changes too many is dropped.

Boxes come out of a heap by least distance (ties: deepest first).  The
nearest point of every new box is evaluated when the box is made; one that is
a counterfactual becomes the incumbent, and boxes no nearer than it are not
kept (what a stopped search returns, with its proven lower bound).  The nearest
point of each box taken out is evaluated exactly (one leaf per tree); if it
satisfies every condition it is the optimum, since no box left in the heap
can hold a nearer point.  Otherwise the box is split at the split where that
point's path and the path to the best reachable leaf part, in the tree whose
reachable leaves could raise the violated condition's score the most; the
child holding the point keeps it (it need not be evaluated again) and the
other gets its own nearest point.

Leaf values are floats; a box is dropped only when its bound falls short by
more than a rounding tolerance, and a point near a condition's threshold is
decided in exact rationals (as the Z3 encoding reads the same floats), so
"optimal" and "infeasible" are proofs for the model as encoded.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from ._query import QueryForest

__all__ = ["Conditions", "Outcome", "best_first"]


@dataclass
class Conditions:
    """``values[c] @ one-hot(leaves) >= const[c]`` for every condition ``c``.

    ``values``: per condition, every leaf's contribution (shape ``(C, n_leaves)``);
    ``exact``: the thresholds as exact rationals; ``tol``: the float tolerance of
    each condition's bound (rounding of sums of leaf values).
    """

    values: np.ndarray
    const: np.ndarray
    exact: list[Fraction]
    tol: np.ndarray


@dataclass
class Outcome:
    """``status``: ``optimal`` (``point`` is a nearest counterfactual), ``infeasible``
    (none within the bound) or ``unknown`` (stopped: time or node limit; ``point`` is
    then the nearest counterfactual found, if any); ``point``: one atom per feature;
    ``lower_bound``: no counterfactual is nearer."""

    status: str
    point: np.ndarray | None
    cost: float
    lower_bound: float
    nodes: int


class _Box:
    __slots__ = ("d", "hi", "leaves", "lo", "mask", "reach", "tmax", "xa")

    def __init__(
        self,
        lo: np.ndarray,
        hi: np.ndarray,
        mask: list[int],
        d: np.ndarray,
        xa: np.ndarray,
        reach: np.ndarray,
    ) -> None:
        self.lo, self.hi, self.mask, self.d, self.xa, self.reach = lo, hi, mask, d, xa, reach
        self.tmax: np.ndarray | None = None
        self.leaves: np.ndarray | None = None


class _Search:
    """State of one best-first search (:func:`best_first`)."""

    def __init__(
        self,
        qf: QueryForest,
        conds: Conditions,
        weights: tuple[float, float, float],
        max_changes: int | None,
        bound: float | None,
    ) -> None:
        self.qf, self.conds = qf, conds
        self.w0, self.w1, self.g = weights
        self.max_changes = max_changes
        self.bound = math.inf if bound is None else float(bound) * (1 + 1e-12) + 1e-15
        ff = qf.forest
        self.starts = ff.tree_start[:-1]
        self.neg = np.full(ff.n_leaves, -np.inf)
        self.heap: list[tuple[float, int, _Box]] = []
        self.counter = 0
        self.nodes = 0
        # : the nearest counterfactual found so far (a box whose nearest point is one) and its
        # distance
        self.incumbent: _Box | None = None
        self.best = math.inf

    def cost(self, d: np.ndarray) -> float:
        """Eq. 3 of the per-feature deltas."""
        out = 0.0
        if self.w0:
            out += self.w0 * int(np.count_nonzero(d))
        if self.w1:
            out += self.w1 * float(d.sum())
        if self.g and d.size:
            out += self.g * float(d.max())
        return out

    def root(self) -> _Box | None:
        qf = self.qf
        lo = np.zeros(qf.ranges.shape[0], dtype=np.int64)
        hi = np.array([qf.atoms[f].n - 1 for f in qf.ranges], dtype=np.int64)
        mask = [qf.atoms[f].full_mask for f in qf.sets]
        reach = np.ones(qf.forest.n_leaves, dtype=bool)
        for r in range(lo.shape[0]):
            reach &= (qf.leaf_lo[r] <= hi[r]) & (qf.leaf_hi[r] >= lo[r])
        for s, m in enumerate(mask):
            reach &= (qf.leaf_mask[s] & np.uint64(m)) != 0
        d = np.zeros(len(qf.atoms))
        xa = np.zeros(len(qf.atoms), dtype=np.int64)
        for r, f in enumerate(qf.ranges):
            d[f], xa[f] = qf.atoms[f].min_delta(0, int(hi[r]))
        for s, f in enumerate(qf.sets):
            d[f], xa[f] = qf.atoms[f].min_delta_mask(mask[s])
        return self.admit(_Box(lo, hi, mask, d, xa, reach))

    def admit(self, box: _Box) -> _Box | None:
        """The box with its per-tree bounds, or None when it holds no counterfactual."""
        if self.max_changes is not None and int(np.count_nonzero(box.d)) > self.max_changes:
            return None
        V, starts = self.conds.values, self.starts
        tmax = np.empty((V.shape[0], starts.shape[0]))
        for c in range(V.shape[0]):
            tmax[c] = np.maximum.reduceat(np.where(box.reach, V[c], self.neg), starts)
            if tmax[c].sum() < self.conds.const[c] - self.conds.tol[c]:
                return None
        box.tmax = tmax
        return box

    def push(self, box: _Box | None, cost: float) -> None:
        if box is None or cost > self.bound or (cost >= self.best and box is not self.incumbent):
            return
        self.counter += 1
        heapq.heappush(self.heap, (cost, -self.counter, box))

    def satisfied(self, leaves: np.ndarray) -> tuple[bool, int]:
        """Whether the point reaching ``leaves`` meets every condition, else the most
        violated condition."""
        conds = self.conds
        scores = conds.values[:, leaves].sum(axis=1)
        short = conds.const - scores
        worst = int(np.argmax(short))
        if short[worst] < -conds.tol[worst]:
            return True, -1
        if short[worst] > conds.tol[worst]:
            return False, worst
        for c in range(scores.shape[0]):  # near a threshold: decide in exact rationals
            total = sum((Fraction(float(v)) for v in conds.values[c, leaves]), Fraction(0))
            if total < conds.exact[c]:
                return False, c
        return True, -1

    def split_node(self, box: _Box, c: int) -> int:
        """The node to split ``box`` at (module docstring), or -1 when no tree can raise
        condition ``c`` above the box's nearest point (the box is exhausted)."""
        ff = self.qf.forest
        V = self.conds.values[c]
        gap = box.tmax[c] - V[box.leaves]  # type: ignore[index]
        t = int(np.argmax(gap))
        if not gap[t] > 0:
            return -1
        a, b = int(ff.tree_start[t]), int(ff.tree_start[t + 1])
        p = a + int(np.argmax(np.where(box.reach[a:b], V[a:b], -np.inf)))
        n = int(ff.roots[t])
        while True:
            x_left = self.goes_left(n, box.xa)
            if x_left != (p < int(ff.mid[n])):
                return n
            n = int(ff.left[n] if x_left else ff.right[n])

    def goes_left(self, n: int, xa: np.ndarray) -> bool:
        qf = self.qf
        a = int(xa[int(qf.forest.feature[n])])
        if qf.node_set[n]:
            return bool((int(qf.node_mask[n]) >> a) & 1)
        return a <= int(qf.node_cut[n])

    def children(self, box: _Box, n: int) -> None:
        """Split ``box`` at node ``n`` into two boxes and push those that may hold a
        counterfactual."""
        qf = self.qf
        f = int(qf.forest.feature[n])
        x_left = self.goes_left(n, box.xa)
        atoms = qf.atoms[f]
        for left in (True, False):
            lo, hi, mask, reach = box.lo, box.hi, box.mask, box.reach
            if qf.node_set[n]:
                s = int(qf.position[f])
                m = int(qf.node_mask[n]) if left else ~int(qf.node_mask[n]) & atoms.full_mask
                mask = list(mask)
                mask[s] &= m
                reach = reach & ((qf.leaf_mask[s] & np.uint64(mask[s])) != 0)
            else:
                r, k = int(qf.position[f]), int(qf.node_cut[n])
                if left:
                    hi = hi.copy()
                    hi[r] = min(int(hi[r]), k)
                    reach = reach & (qf.leaf_lo[r] <= k)
                else:
                    lo = lo.copy()
                    lo[r] = max(int(lo[r]), k + 1)
                    reach = reach & (qf.leaf_hi[r] >= k + 1)
            if left == x_left:  # holds the parent's nearest point: same point, same cost
                child = _Box(lo, hi, mask, box.d, box.xa, reach)
                child.leaves = box.leaves
            else:
                d, xa = box.d.copy(), box.xa.copy()
                if qf.node_set[n]:
                    d[f], xa[f] = atoms.min_delta_mask(mask[int(qf.position[f])])
                else:
                    r = int(qf.position[f])
                    d[f], xa[f] = atoms.min_delta(int(lo[r]), int(hi[r]))
                child = _Box(lo, hi, mask, d, xa, reach)
            cost = self.cost(child.d)
            if cost > self.bound or cost >= self.best:
                continue  # no nearer counterfactual in it than the one at hand
            kept = self.admit(child)  # the change cap and the score bounds, first
            if kept is None:
                continue
            if kept.leaves is None:  # its own nearest point: a counterfactual is a new incumbent
                kept.leaves = qf.leaves_at(kept.xa)
                if self.satisfied(kept.leaves)[0]:
                    self.incumbent, self.best = kept, cost
            self.push(kept, cost)


def best_first(
    qf: QueryForest,
    conds: Conditions,
    weights: tuple[float, float, float],
    *,
    max_changes: int | None = None,
    bound: float | None = None,
    deadline: Any = None,
    max_nodes: int = 2_000_000,
) -> Outcome:
    """The nearest point (eq. 3 with ``weights = (w_l0, w_l1, w_linf)`` on the
    per-feature deltas) that meets every condition, by best-first search (module
    docstring).  ``bound``: only points at distance ``<= bound`` count.
    ``deadline``: an object with ``expired()``; ``max_nodes``: boxes examined at most."""
    s = _Search(qf, conds, weights, max_changes, bound)
    root = s.root()
    if root is None:
        return Outcome("infeasible", None, math.inf, math.inf if bound is None else float(bound), 0)
    s.push(root, s.cost(root.d))
    while s.heap:
        cost, _, box = heapq.heappop(s.heap)
        s.nodes += 1
        if s.nodes % 64 == 0 and (
            (deadline is not None and deadline.expired()) or s.nodes > max_nodes
        ):
            inc = s.incumbent
            return Outcome("unknown", None if inc is None else inc.xa, s.best, cost, s.nodes)
        if box.leaves is None:
            box.leaves = qf.leaves_at(box.xa)
        ok, c = (True, -1) if box is s.incumbent else s.satisfied(box.leaves)
        if ok:
            return Outcome("optimal", box.xa, cost, cost, s.nodes)
        n = s.split_node(box, c)
        if n >= 0:
            s.children(box, n)
    return Outcome(
        "infeasible", None, math.inf, math.inf if bound is None else float(bound), s.nodes
    )
