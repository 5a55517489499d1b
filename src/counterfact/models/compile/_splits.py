"""Tree building blocks: exact split bounds, raw-unit cuts, and :class:`Tree` assembly."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ._ir import AffineMap, Leaf, Split, Tree, TreeEnsemble, XColumn

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
def _key(f: np.ndarray) -> np.ndarray:
    """Order-preserving map float64 -> int64."""
    bits = f.view(np.int64)
    return np.where(bits >= 0, bits, -(bits & np.int64(0x7FFFFFFFFFFFFFFF)))


def _unkey(k: np.ndarray) -> np.ndarray:
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
    klo, khi = _key(lo), _key(hi)  # invariant: left(klo) true, left(khi) false
    for _ in range(70):
        if not (khi > klo + 1).any():
            break
        mid = klo // 2 + khi // 2 + (klo % 2 + khi % 2) // 2  # no int64 overflow
        mid = np.minimum(np.maximum(mid, klo), khi)
        ok = left(_unkey(mid))
        klo = np.where(ok, mid, klo)
        khi = np.where(ok, khi, mid)
    out = _unkey(klo)
    out[none_left] = -np.inf
    out[all_left] = np.inf
    return out


def raw_cuts(affine: AffineMap, pairs: Sequence[tuple[int, float]], dtype: str) -> list[Split]:
    """:class:`Split` objects (with raw-unit cuts) for ``(column, le)`` pairs."""
    space = affine.space
    splits: list[Split | None] = [None] * len(pairs)
    by_col: dict[int, list[int]] = {}
    for i, (c, _) in enumerate(pairs):
        by_col.setdefault(c, []).append(i)
    for c, idx in by_col.items():
        col = affine.columns[c]
        blk = space.block(col.feature)
        le = np.array([pairs[i][1] for i in idx], dtype=float)
        ge = np.array([next_up(v, dtype) for v in le])
        if blk.kind in ("real", "integer"):
            if col.scale > 0 and col.base_coef[0] > 0:
                zs = _largest_left(col, le, dtype)
                if blk.kind == "integer":
                    rl = np.floor(zs)
                    rg = rl + 1
                else:
                    rl = zs
                    rg = np.nextafter(zs, np.inf)
                    rg[np.isposinf(zs)] = np.inf
                for n, i in enumerate(idx):
                    splits[i] = Split(c, float(le[n]), float(ge[n]), col.feature, float(rl[n]), float(rg[n]))
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
        self._split_ids: dict[tuple[int, float], int] = {}
        self._raw: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int | None]] = []

    def add(
        self,
        left: np.ndarray,
        right: np.ndarray,
        column: np.ndarray,
        le: np.ndarray,
        value: np.ndarray,
        output: int | None = None,
    ) -> None:
        """Add a tree: ``left/right`` child ids (-1 at leaves), ``column``/``le`` per node,
        ``value``: ``(n_nodes, n_outputs)`` leaf contributions."""
        left = np.asarray(left, dtype=np.int64)
        right = np.asarray(right, dtype=np.int64)
        split = np.full(left.shape[0], -1, dtype=np.int64)
        for i in np.flatnonzero(left >= 0):
            key = (int(column[i]), float(le[i]))
            sid = self._split_ids.setdefault(key, len(self._split_ids))
            split[i] = sid
        self._raw.append((left, right, split, np.asarray(value, dtype=float), output))

    def build(self, base: np.ndarray, divisor: float, aggregation: str) -> TreeEnsemble:
        pairs = sorted(self._split_ids, key=self._split_ids.__getitem__)
        splits = raw_cuts(self.affine, pairs, self.dtype)
        trees = tuple(
            Tree(left=lf, right=rt, split=sp, value=val, output=out, leaves=_leaves(lf, rt, sp, val))
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


def _leaves(left: np.ndarray, right: np.ndarray, split: np.ndarray, value: np.ndarray) -> tuple[Leaf, ...]:
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
