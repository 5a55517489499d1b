"""Tree building blocks: exact split bounds, raw-unit cuts, and :class:`Tree` assembly.

A shared helper of the tree front ends (:mod:`._sk_trees`, :mod:`._boosters`)
and of :mod:`._calibrated`: it imports the IR only.  Also the tree-only
preprocessing pass :func:`with_code_columns`, whose code columns
:class:`TreeBuilder` rewrites splits on one-hot bins into.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._columns import approximate_preimage, increasing_affine, split_at_table
from ._ir import AffineMap, Leaf, Split, Tree, TreeEnsemble, XColumn
from ._ir_inputs import with_op

_F64_MAX = np.finfo(np.float64).max


def cast(x: np.ndarray, dtype: str) -> np.ndarray:
    """The model's own rounding of its input before comparing."""
    x = np.asarray(x, dtype=float)
    return x.astype(np.float32).astype(float) if dtype == "float32" else x


def floor32(thr: float) -> float:
    """Largest float32 that is ``<= thr``."""
    a = np.float32(thr)
    if float(a) > thr:
        a = np.nextafter(a, np.float32(-np.inf))
    return float(a)


def next_up(v: float, dtype: str) -> float:
    """Next representable number above ``v`` in ``dtype``."""
    if dtype == "float32":
        return float(np.nextafter(np.float32(v), np.float32(np.inf)))
    return float(np.nextafter(v, np.inf))


def next_down(v: float, dtype: str) -> float:
    """Largest representable number below ``v`` in ``dtype``."""
    if dtype == "float32":
        return float(np.nextafter(np.float32(v), np.float32(-np.inf)))
    return float(np.nextafter(v, -np.inf))


# ---------------------------------------------------------------- raw cuts
def float_key(f: np.ndarray) -> np.ndarray:
    """Order-preserving map float64 -> int64."""
    bits = f.view(np.int64)
    return np.where(bits >= 0, bits, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)))


def float_unkey(k: np.ndarray) -> np.ndarray:
    """The inverse of :func:`float_key`."""
    pos = np.abs(k).astype(np.int64).view(np.float64)
    return np.where(k >= 0, pos, -pos)


def _largest_left(col: XColumn, le: np.ndarray, dtype: str) -> np.ndarray:
    """Largest float64 raw value z with ``cast(x(z)) <= le`` (x non-decreasing in z).

    ``-inf`` when no value goes left, ``inf`` when every value does.
    """

    def left(z: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            return cast(col.evaluate(z[:, None]), dtype) <= le

    n = le.shape[0]
    lo = np.full(n, -_F64_MAX)
    hi = np.full(n, _F64_MAX)
    none_left = ~left(lo)
    all_left = left(hi)
    klo, khi = float_key(lo), float_key(hi)  # invariant: left(klo) true, left(khi) false
    for _ in range(70):
        if not (khi > klo + 1).any():
            break
        mid = klo // 2 + khi // 2 + (klo % 2 + khi % 2) // 2  # no int64 overflow
        mid = np.minimum(np.maximum(mid, klo), khi)
        ok = left(float_unkey(mid))
        klo = np.where(ok, mid, klo)
        khi = np.where(ok, khi, mid)
    out = float_unkey(klo)
    out[none_left] = -np.inf
    out[all_left] = np.inf
    return out


def _largest_left_domain(
    col: XColumn, le: np.ndarray, dtype: str, lo: float, hi: float
) -> np.ndarray:
    """As :func:`_largest_left` for a non-decreasing (possibly non-affine) column, searched
    only inside the feature's domain ``[lo, hi]`` (where the column is defined)."""

    def left(z: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            return cast(col.evaluate(z[:, None]), dtype) <= le

    n = le.shape[0]
    none_left = ~left(np.full(n, float(lo)))
    all_left = left(np.full(n, float(hi)))
    klo = np.full(n, float_key(np.array([float(lo)]))[0])
    khi = np.full(n, float_key(np.array([float(hi)]))[0])
    guess = approximate_preimage(col.ops, le)
    if guess is not None and col.base_coef.size == 1 and col.base_coef[0] != 0:
        z0 = np.clip((guess - col.base_const) / col.base_coef[0], lo, hi)
        w = 1e-6 * (1.0 + np.abs(z0))
        a = np.clip(np.nan_to_num(z0 - w, nan=lo), lo, hi)
        b = np.clip(np.nan_to_num(z0 + w, nan=hi), lo, hi)
        ok = left(a) & ~left(b)  # a narrow bracket, checked with the column itself
        klo = np.where(ok, float_key(a), klo)
        khi = np.where(ok, float_key(b), khi)
    for _ in range(70):
        if not (khi > klo + 1).any():
            break
        mid = klo // 2 + khi // 2 + (klo % 2 + khi % 2) // 2
        mid = np.minimum(np.maximum(mid, klo), khi)
        ok = left(float_unkey(mid))
        klo = np.where(ok, mid, klo)
        khi = np.where(ok, khi, mid)
    out = float_unkey(klo)
    out[none_left] = -np.inf
    out[all_left] = np.inf
    return out


def _set_split(affine: AffineMap, c: int, values: tuple[float, ...], dtype: str) -> Split:
    col = affine.columns[c]
    blk = affine.space.block(col.feature)
    k = len(blk.categories or ())
    zb = np.arange(k, dtype=float)[:, None] if blk.kind == "ordinal" else np.eye(k)
    xv = cast(col.evaluate(zb), dtype)
    left = tuple(int(v) for v in np.flatnonzero(np.isin(xv, np.array(values, dtype=float))))
    rl = rg = None
    if blk.kind == "ordinal" and left == tuple(range(len(left))):
        rl, rg = float(len(left) - 1), float(len(left))
    return Split(
        c, float("nan"), float("nan"), col.feature, rl, rg, left, tuple(float(v) for v in values)
    )


def raw_cuts(affine: AffineMap, pairs: Sequence[tuple[int, Any]], dtype: str) -> list[Split]:
    """:class:`Split` objects (with raw-unit cuts) for ``(column, le)`` pairs."""
    space = affine.space
    splits: list[Split | None] = [None] * len(pairs)
    by_col: dict[int, list[int]] = {}
    for i, (c, t) in enumerate(pairs):
        if isinstance(t, tuple):  # set-valued split on a category code
            splits[i] = _set_split(affine, c, t, dtype)
            continue
        by_col.setdefault(c, []).append(i)
    for c, idx in by_col.items():
        col = affine.columns[c]
        blk = space.block(col.feature)
        le = np.array([pairs[i][1] for i in idx], dtype=float)
        ge = np.array([next_up(v, dtype) for v in le])
        if blk.kind in ("real", "integer"):
            monotone = (
                col.shape == "monotone" and increasing_affine(col.ops) and col.base_coef[0] > 0
            )
            if (col.is_affine and col.scale > 0 and col.base_coef[0] > 0) or monotone:
                if monotone:
                    zs = _largest_left_domain(col, le, dtype, blk.lower, blk.upper)
                else:
                    zs = _largest_left(col, le, dtype)
                if blk.kind == "integer":
                    rl = np.floor(zs)
                    rg = rl + 1
                else:
                    rl = zs
                    rg = np.nextafter(zs, np.inf)
                    rg[np.isposinf(zs)] = np.inf
                for n, i in enumerate(idx):
                    splits[i] = Split(
                        c, float(le[n]), float(ge[n]), col.feature, float(rl[n]), float(rg[n])
                    )
            else:
                for n, i in enumerate(idx):
                    splits[i] = Split(c, float(le[n]), float(ge[n]), col.feature)
            continue
        # discrete raw feature: enumerate its categories / ranks
        k = len(blk.categories)  # type: ignore[arg-type]
        zb = np.arange(k, dtype=float)[:, None] if blk.kind == "ordinal" else np.eye(k)
        xv = cast(col.evaluate(zb), dtype)
        for n, i in enumerate(idx):
            goes = np.flatnonzero(xv <= le[n])
            left_set = tuple(int(v) for v in goes)
            rl = rg = None
            if blk.kind == "ordinal" and left_set == tuple(range(len(left_set))):
                rl, rg = float(len(left_set) - 1), float(len(left_set))
            splits[i] = Split(c, float(le[n]), float(ge[n]), col.feature, rl, rg, left_set)
    return [s for s in splits if s is not None]


# ---------------------------------------------------------------- trees
class TreeBuilder:
    """Collects trees given as node arrays; deduplicates splits by ``(column, le)``."""

    def __init__(self, affine: AffineMap, dtype: str, n_outputs: int) -> None:
        self.affine = affine
        self.dtype = dtype
        self.n_outputs = n_outputs
        self._split_ids: dict[tuple[Any, ...], int] = {}
        self._raw: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int | None]] = []

    def add(
        self,
        left: np.ndarray,
        right: np.ndarray,
        column: np.ndarray,
        le: np.ndarray,
        value: np.ndarray,
        output: int | None = None,
        left_sets: dict[int, tuple[float, ...]] | None = None,
    ) -> None:
        """Add a tree: ``left/right`` child ids (-1 at leaves), ``column``/``le`` per node,
        ``value``: ``(n_nodes, n_outputs)`` leaf contributions; ``left_sets``: node ->
        the x-values going left at a set-valued (native categorical) split."""
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        column = np.asarray(column)
        if any(int(c) in self.affine.code_columns for c in column[left >= 0]):
            left, right, column, le, value = _rewrite_table_splits(
                self.affine,
                self.dtype,
                left,
                right,
                column,
                np.asarray(le, dtype=float),
                np.asarray(value, dtype=float),
            )
        split = np.full(left.shape[0], -1, dtype=np.int64)
        for i in np.flatnonzero(left >= 0):
            key: tuple[Any, ...] = (int(column[i]), float(le[i]))
            if left_sets and int(i) in left_sets:
                key = (int(column[i]), tuple(sorted(left_sets[int(i)])))
            sid = self._split_ids.setdefault(key, len(self._split_ids))
            split[i] = sid
        self._raw.append((left, right, split, np.asarray(value, dtype=float), output))

    def build(self, base: np.ndarray, divisor: float, aggregation: str) -> TreeEnsemble:
        """The ensemble of the trees added, with raw-unit cuts for its splits."""
        pairs = sorted(self._split_ids, key=self._split_ids.__getitem__)
        splits = raw_cuts(self.affine, pairs, self.dtype)
        trees = tuple(
            Tree(
                left=lf,
                right=rt,
                split=sp,
                value=val,
                output=out,
                leaves=tree_leaves(lf, rt, sp, val),
            )
            for lf, rt, sp, val, out in self._raw
        )
        return TreeEnsemble(
            trees=trees,
            splits=tuple(splits),
            n_outputs=self.n_outputs,
            base=np.asarray(base, dtype=float).reshape(self.n_outputs),
            divisor=float(divisor),
            aggregation=aggregation,  # type: ignore[arg-type]
            dtype=self.dtype,  # type: ignore[arg-type]
        )


def tree_leaves(
    left: np.ndarray, right: np.ndarray, split: np.ndarray, value: np.ndarray
) -> tuple[Leaf, ...]:
    """Every leaf of a tree given as node arrays, with the split conditions on its path."""
    out: list[Leaf] = []
    stack: list[tuple[int, tuple[tuple[int, bool], ...]]] = [(0, ())]
    while stack:
        node, path = stack.pop()
        if left[node] < 0:
            out.append(Leaf(node=node, conditions=path, value=value[node]))
            continue
        s = int(split[node])
        stack.append((int(right[node]), (*path, (s, False))))
        stack.append((int(left[node]), (*path, (s, True))))
    return tuple(out)


# ---------------------------------------------------------------- table splits
MAX_REWRITE_GROWTH = 64


def _runs(affine: AffineMap, j: int, le: float, dtype: str) -> list[tuple[int, bool]]:
    """Runs of a split on numeric table column ``j``: ``[(last code, goes_left), ...]``
    over the codes reachable in the feature's domain, consecutive runs alternating."""
    col = affine.columns[j]
    aux = affine.columns[affine.code_columns[j]]
    blk = affine.space.block(col.feature)
    _, vals = split_at_table(col.ops)
    with np.errstate(all="ignore"):
        ends = aux.evaluate(np.array([[blk.lower], [blk.upper]]))
    first, last = int(ends[0]), int(ends[1])
    goes = cast(vals, dtype) <= le
    runs: list[tuple[int, bool]] = []
    for c in range(first, last + 1):
        side = bool(goes[min(max(c, 0), len(vals) - 1)])
        if runs and runs[-1][1] == side:
            runs[-1] = (c, side)
        else:
            runs.append((c, side))
    return runs


def _rewrite_table_splits(
    affine: AffineMap,
    dtype: str,
    left: np.ndarray,
    right: np.ndarray,
    column: np.ndarray,
    le: np.ndarray,
    value: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Replace every split on a numeric *table* column (a piecewise-constant, possibly
    non-monotone function of the raw value: a one-hot bin indicator...) by a chain of
    splits on the column's monotone code (``affine.code_columns``): the code's runs
    of codes going the same way, in order; subtrees reached from several runs are
    copied.  Exact: the chain sends every raw value where the original split did."""
    out = _TableSplitRewriter(affine, dtype, (left, right, column, le, value))
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * left.shape[0] + 100))
    try:
        out.emit(0)
    finally:
        sys.setrecursionlimit(limit)
    return (
        np.array(out.L, dtype=np.int64),
        np.array(out.R, dtype=np.int64),
        np.array(out.C, dtype=np.int64),
        np.array(out.T, dtype=float),
        np.array(out.V, dtype=float).reshape(len(out.V), -1),
    )


class _TableSplitRewriter:
    """The rewritten tree of :func:`_rewrite_table_splits`, built node by node
    (``L``/``R`` children, ``C`` columns, ``T`` thresholds, ``V`` values)."""

    def __init__(self, affine: AffineMap, dtype: str, tree: tuple[np.ndarray, ...]) -> None:
        self.affine = affine
        self.dtype = dtype
        self.left, self.right, self.column, self.le, self.value = tree
        self.max_nodes = MAX_REWRITE_GROWTH * self.left.shape[0] + 1000
        self.L: list[int] = []
        self.R: list[int] = []
        self.C: list[int] = []
        self.T: list[float] = []
        self.V: list[np.ndarray] = []

    def new(self, c: int, t: float, v: np.ndarray) -> int:
        """A new node splitting column ``c`` at ``t`` (a leaf: ``c = -1``) of value ``v``."""
        self.L.append(-1)
        self.R.append(-1)
        self.C.append(c)
        self.T.append(t)
        self.V.append(v)
        if len(self.L) > self.max_nodes:
            raise UnsupportedModelError(
                "A tree splits on one-hot indicators of bins (KBinsDiscretizer(encode='onehot')) "
                "so often that its exact form grows too large; use encode='ordinal'."
            )
        return len(self.L) - 1

    def emit(self, node: int) -> int:
        """The rewritten subtree of the original ``node``; returns its new root."""
        if self.left[node] < 0:
            return self.new(-1, np.nan, self.value[node])
        j = int(self.column[node])
        if j not in self.affine.code_columns:
            i = self.new(j, float(self.le[node]), self.value[node])
            self.L[i] = self.emit(int(self.left[node]))
            self.R[i] = self.emit(int(self.right[node]))
            return i
        runs = _runs(self.affine, j, float(self.le[node]), self.dtype)
        child = {True: int(self.left[node]), False: int(self.right[node])}
        if len(runs) == 1:  # constant on the domain: one side only
            return self.emit(child[runs[0][1]])
        return self.chain(node, self.affine.code_columns[j], runs, child)

    def chain(
        self, node: int, aux: int, runs: list[tuple[int, bool]], child: dict[bool, int]
    ) -> int:
        """The chain of splits on the code column ``aux``, one per run but the last."""
        head = -1
        prev = -1
        for k, (c_last, side) in enumerate(runs[:-1]):
            i = self.new(aux, float(c_last) + 0.5, self.value[node])
            self.L[i] = self.emit(child[side])
            if prev >= 0:
                self.R[prev] = i
            else:
                head = i
            prev = i
            if k == len(runs) - 2:
                self.R[i] = self.emit(child[runs[-1][1]])
        return head


def with_code_columns(affine: AffineMap) -> AffineMap:
    """``affine`` with the monotone code of every numeric table column appended (trees only).

    A numeric *table* column (a one-hot bin indicator...) is a piecewise-constant,
    possibly non-monotone function of its raw feature; :class:`TreeBuilder`
    rewrites splits on it into splits on its code (``AffineMap.code_columns``).
    """
    extra: list[XColumn] = []
    code_of: dict[int, int] = {}
    seen: dict[tuple[Any, ...], int] = {}
    n = affine.n_x
    for j, col in enumerate(affine.columns):
        blk = affine.space.block(col.feature)
        if col.shape != "table" or blk.kind not in ("real", "integer"):
            continue
        prefix, _ = split_at_table(col.ops)
        key = (col.feature, *((op, id(a) if op == "fn" else a) for op, a in prefix))
        if key not in seen:
            aux = XColumn(
                name=f"{col.name} (code)",
                feature=col.feature,
                base=col.base,
                base_coef=col.base_coef,
                base_const=col.base_const,
            )
            for op, a in prefix:
                aux = with_op(aux, op, a)
            seen[key] = n + len(extra)
            extra.append(aux)
        code_of[j] = seen[key]
    if not extra:
        return affine
    cols = (*affine.columns, *extra)
    A = np.zeros((len(cols), affine.space.n))
    c = np.zeros(len(cols))
    A[:n], c[:n] = affine.A, affine.c
    for i, col in enumerate(extra, start=n):
        if col.is_affine:
            A[i, affine.space.block(col.feature).columns] = col.scale * col.base_coef
            c[i] = col.scale * col.base_const + col.offset
    return replace(affine, A=A, c=c, columns=cols, code_columns=code_of)
