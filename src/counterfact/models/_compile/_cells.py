"""Step functions of raw features as trees: the cells of a feature's domain, and trees over them.

A helper of the passes and front ends that compile additive models of step
functions exactly (:mod:`._steps`: linear models and MLPs over bins and weights
of evidence; :mod:`._ebm`: Explainable Boosting Machines).  A *step function*
of a raw feature is constant on each *cell* of a partition of the feature's
domain:

* numeric feature: the intervals ``(cut_{i-1}, cut_i]`` between sorted raw
  cuts, each cut the largest raw value of its cell (integers for integer
  features); the last cell ends at the domain's upper bound;
* ordinal feature: one cell per rank;
* binary / categorical feature: one cell per category.

:class:`Cells` holds such a partition and the x-column the trees split on (the
raw value, the rank, or the category index: :func:`split_column`;
:func:`with_split_columns` appends them to an :class:`AffineMap`).
:func:`add_step_tree` adds the tree of a step function of one or two features,
given its value on every cell (or pair of cells), to a
:class:`._splits.TreeBuilder`: a balanced tree over the runs of equal values
(threshold splits between runs of a numeric or ordinal feature, set-valued
splits on the category index of a categorical one).  A raw value
reaches the leaf of its cell, so the tree is the step function exactly.
:func:`step_cuts` gives the raw cuts of a non-affine column (a bin indicator,
a bin code, a table over bins) by bisection on the column itself.

It imports the IR and :mod:`._splits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np

from ._columns import ElementFn, increasing_affine
from ._ir import AffineMap, RawBlock, XColumn
from ._splits import TreeBuilder, _largest_left_domain

__all__ = [
    "MAX_INTEGER_CELLS",
    "Cells",
    "add_step_tree",
    "constant_value",
    "feature_cells",
    "split_column",
    "step_cuts",
    "with_split_columns",
]

#: an integer feature whose column is affine (a scaled count) is a step function with
#: one cell per value; up to this many values it is compiled as a tree
MAX_INTEGER_CELLS = 64


@dataclass(frozen=True, eq=False)
class Cells:
    """A partition of one raw feature's domain (module docstring).

    Attributes
    ----------
    feature : str
        The raw feature.
    kind : {"numeric", "ordinal", "categorical"}
        How the cells are split: thresholds on the raw value or the rank, or sets
        of category indices.
    column : int
        The x-column trees split on: the raw value, the rank, or the category
        index (schema order).
    cuts : ndarray
        ``n - 1`` thresholds in the column's units between consecutive cells
        (numeric: cell ``i`` is ``(cuts[i-1], cuts[i]]``; ordinal: ``r + 0.5``);
        empty for categorical features.
    points : ndarray
        A raw value in every cell: the numeric value, the rank, or the category
        index.
    """

    feature: str
    kind: Literal["numeric", "ordinal", "categorical"]
    column: int
    cuts: np.ndarray
    points: np.ndarray

    @property
    def n(self) -> int:
        """Number of cells."""
        return int(self.points.shape[0])

    def raw_values(self, categories: Sequence[Any] | None) -> list[Any]:
        """The point of every cell as a raw DataFrame holds it (categories for discrete
        features)."""
        if self.kind == "numeric":
            return [float(v) for v in self.points]
        return [categories[int(i)] for i in self.points]  # type: ignore[index]


def feature_cells(blk: RawBlock, column: int, cuts: np.ndarray | None = None) -> Cells:
    """The cells of a raw feature: categories, ranks, or the intervals between raw ``cuts``
    (numeric features; cuts outside ``[lower, upper)`` are dropped, integer cuts floored)."""
    if blk.is_indicator:
        k = blk.size
        return Cells(blk.name, "categorical", column, np.zeros(0), np.arange(k, dtype=float))
    if blk.kind == "ordinal":
        k = len(blk.categories or ())
        return Cells(blk.name, "ordinal", column, np.arange(k - 1) + 0.5, np.arange(k, dtype=float))
    c = np.asarray(cuts if cuts is not None else [], dtype=float)
    if blk.kind == "integer":
        c = np.floor(c)
    c = np.unique(c[np.isfinite(c) & (c >= blk.lower) & (c < blk.upper)])
    return Cells(blk.name, "numeric", column, c, np.append(c, blk.upper))


def step_cuts(col: XColumn, blk: RawBlock) -> np.ndarray | None:
    """Raw cuts of a numeric feature's domain between which column ``col`` is constant,
    or None when the column is not a step function of the raw value.

    A table over a monotone code (one-hot bins, weights of evidence), a bin code
    (an ``("fn", f)`` with integer codes) and what follows it are step functions:
    their cuts are found by bisection on the code itself.  An affine column of an
    integer feature with at most :data:`MAX_INTEGER_CELLS` values is one too (a cut
    at every value).
    """
    if col.is_affine:
        if not np.any(col.base_coef) or col.scale == 0:
            return np.zeros(0)
        if blk.kind == "integer" and blk.upper - blk.lower < MAX_INTEGER_CELLS:
            return np.arange(blk.lower, blk.upper)
        return None
    ops = col.ops
    last = [
        k
        for k, (op, a) in enumerate(ops)
        if op == "table" or (op == "fn" and isinstance(a, ElementFn) and a.codes is not None)
    ]
    if not last:
        return None  # a monotone map of a real value (np.log1p, quantiles): not a step function
    k = last[-1]
    op, a = ops[k]
    prefix = ops[:k] if op == "table" else ops[: k + 1]
    n = len(np.asarray(a)) if op == "table" else int(a.codes)
    if n < 2:
        return np.zeros(0)  # one code: a constant
    if not (increasing_affine(prefix) and np.all(col.base_coef > 0)):
        return None
    code = replace(col, ops=prefix, scale=1.0, offset=0.0)
    # a table reads clip(floor(v)): index <= c iff v < c + 1; codes are integers: the same
    le = np.nextafter(np.arange(1, n, dtype=float), -np.inf)
    return _largest_left_domain(code, le, "float64", blk.lower, blk.upper)


def split_column(blk: RawBlock, name: str | None = None) -> XColumn:
    """The column step trees split on: the raw value (numeric), the rank (ordinal) or
    the category index in schema order (binary, categorical)."""
    f = blk.name
    if blk.is_indicator:
        return XColumn(
            name=name or f"{f} (category)",
            feature=f,
            base="code",
            base_coef=np.arange(blk.size, dtype=float),
        )
    if blk.kind == "ordinal":
        return XColumn(name=name or f"{f} (rank)", feature=f, base="code", base_coef=np.ones(1))
    return XColumn(name=name or f"{f} (value)", feature=f, base="value", base_coef=np.ones(1))


def with_split_columns(
    affine: AffineMap, features: Sequence[str]
) -> tuple[AffineMap, dict[str, int]]:
    """``affine`` with the :func:`split_column` of each feature appended, and where each is."""
    space = affine.space
    extra: list[XColumn] = []
    where: dict[str, int] = {}
    for f in dict.fromkeys(features):
        where[f] = affine.n_x + len(extra)
        extra.append(split_column(space.block(f)))
    if not extra:
        return affine, where
    n = affine.n_x
    A = np.zeros((n + len(extra), space.n))
    c = np.zeros(n + len(extra))
    A[:n], c[:n] = affine.A, affine.c
    for i, col in enumerate(extra, start=n):
        A[i, space.block(col.feature).columns] = col.base_coef
    return replace(affine, A=A, c=c, columns=(*affine.columns, *extra)), where


def constant_value(table: np.ndarray) -> np.ndarray | None:
    """The value of a step function given on every cell (last axis: outputs), or None
    when it is not constant."""
    flat = table.reshape(-1, table.shape[-1])
    return flat[0].copy() if np.all(flat == flat[0]) else None


# ---------------------------------------------------------------- trees
class _Nodes:
    """Node arrays of one tree under construction."""

    def __init__(self, n_outputs: int) -> None:
        self.n_outputs = n_outputs
        self.left: list[int] = []
        self.right: list[int] = []
        self.column: list[int] = []
        self.le: list[float] = []
        self.value: list[np.ndarray] = []
        self.sets: dict[int, tuple[float, ...]] = {}

    def new(self, column: int = -1, le: float = np.nan, value: np.ndarray | None = None) -> int:
        self.left.append(-1)
        self.right.append(-1)
        self.column.append(column)
        self.le.append(le)
        self.value.append(
            np.zeros(self.n_outputs) if value is None else np.asarray(value, dtype=float)
        )
        return len(self.left) - 1


def _groups(cells: Cells, values: np.ndarray) -> list[list[int]]:
    """Cells with equal values: consecutive runs (numeric, ordinal) or equal anywhere
    (categorical, in order of first occurrence)."""
    groups: list[list[int]] = []
    for i in range(cells.n):
        if cells.kind == "categorical":
            hit = next((g for g in groups if np.array_equal(values[g[0]], values[i])), None)
            if hit is not None:
                hit.append(i)
                continue
        elif groups and np.array_equal(values[groups[-1][-1]], values[i]):
            groups[-1].append(i)
            continue
        groups.append([i])
    return groups


def _subtree(
    nodes: _Nodes,
    cells: Cells,
    values: np.ndarray,
    leaf: Any,
    groups: list[list[int]] | None = None,
) -> int:
    """A balanced tree over the groups of ``cells``; ``leaf(cell)`` makes the node of a group
    (``values[cell]`` says which cells are equal)."""
    if groups is None:
        groups = _groups(cells, values)
    if len(groups) == 1:
        return int(leaf(groups[0][0]))
    mid = len(groups) // 2
    if cells.kind == "categorical":
        i = nodes.new(cells.column)
        nodes.sets[i] = tuple(float(cells.points[c]) for g in groups[:mid] for c in g)
    else:
        i = nodes.new(cells.column, float(cells.cuts[groups[mid - 1][-1]]))
    lt = _subtree(nodes, cells, values, leaf, groups[:mid])
    rt = _subtree(nodes, cells, values, leaf, groups[mid:])
    nodes.left[i], nodes.right[i] = lt, rt
    return i


def add_step_tree(builder: TreeBuilder, cells: Sequence[Cells], table: np.ndarray) -> None:
    """Add the tree of a step function of one or two features to ``builder``.

    ``table`` has shape ``(n_a, n_outputs)`` or ``(n_a, n_b, n_outputs)``: the
    function's value on every cell (pair of cells) of ``cells``.  Two features: a
    tree over the first feature's groups of equal rows, each leaf a tree over the
    second feature.
    """
    table = np.asarray(table, dtype=float)
    nodes = _Nodes(table.shape[-1])
    if len(cells) == 1:
        _subtree(nodes, cells[0], table, lambda c: nodes.new(value=table[c]))
    elif len(cells) == 2:
        a, b = cells

        def inner(ca: int) -> int:
            return _subtree(nodes, b, table[ca], lambda cb: nodes.new(value=table[ca, cb]))

        _subtree(nodes, a, table.reshape(a.n, -1), inner)
    else:  # pragma: no cover - callers pass one or two features
        raise ValueError("step trees have one or two features")
    builder.add(
        np.array(nodes.left),
        np.array(nodes.right),
        np.array(nodes.column),
        np.array(nodes.le),
        np.array(nodes.value).reshape(len(nodes.left), -1),
        left_sets=nodes.sets,
    )
