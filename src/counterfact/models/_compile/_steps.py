"""Linear models and MLPs over step functions of raw values, compiled exactly as trees.

A bin of a real feature (``KBinsDiscretizer``, optbinning's weights of
evidence) is a step function of the raw value with real cut points.  No ReLU
network computes it (they are continuous), but a tree split does, and every
solver encodes tree splits.  This pass of the dispatcher, after the linear and
MLP front ends, rewrites a model whose inputs include such columns
(:func:`compile_nonaffine`):

* **A scorecard** -- a linear model each of whose inputs is a step function of
  one raw feature: bins, a category's indicators or encodings, an ordinal's
  levels, an integer count with at most :data:`._cells.MAX_INTEGER_CELLS`
  values -- is an additive model ``y = b + sum_f g_f(z_f)``.  Each ``g_f`` is
  one tree over the cells of feature ``f`` (:mod:`._cells`), the model a
  :class:`TreeEnsemble` (``"sum_margin"``, base ``b``) that every solver and
  MACE's oracles encode like gradient boosting.
* **Otherwise** (scaled numbers beside bins, MLPs over bins): the step columns'
  contribution to the first layer, ``W_1[:, S] x_S = sum_f W_1[:, S_f] x_{S_f}(z_f)``,
  is one tree per feature with a value per unit of that layer; the model is a
  :class:`StepMLP` whose network keeps the affine columns (a linear model is a
  one-layer identity network).

Models whose only non-affine inputs are tables over an integral variable keep
the ReLU lifting of :mod:`._lift`.  Monotone maps of a real value
(``np.log1p``, quantiles) are not step functions and stay refused.

Exactness: a feature's cells are the intervals between the raw cuts of all its
columns (found by bisection on the columns' own codes), so every column is
constant on every cell; a tree sends every raw value to its cell's leaf, whose
value is the columns' values there times the weights.  The compiled outputs
equal the model's up to the order of the float summation (about 1e-15), far
inside the decision margin.  It imports the IR, :mod:`._cells`, :mod:`._splits`
and :mod:`._lift`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._cells import (
    Cells,
    add_step_tree,
    constant_value,
    feature_cells,
    step_cuts,
    with_split_columns,
)
from ._ir import MLP, AffineMap, Dense, Estimator, Linear, StepMLP, TreeEnsemble, XColumn
from ._lift import lift, not_step_function
from ._splits import TreeBuilder

__all__ = ["compile_nonaffine"]


def _liftable(affine: AffineMap, col: XColumn) -> bool:
    return col.shape == "table" and affine.space.block(col.feature).kind in ("ordinal", "integer")


def _is_step(affine: AffineMap, col: XColumn) -> bool:
    """Whether ``col`` is a step function of its raw feature with finitely many cells."""
    blk = affine.space.block(col.feature)
    if blk.kind in ("real", "integer"):
        return step_cuts(col, blk) is not None
    return True  # a function of a category or a rank


def compile_nonaffine(
    affine: AffineMap, est: Linear | MLP, estimator: str
) -> tuple[AffineMap, Estimator]:
    """The exact form of a linear model or MLP over non-affine columns (module docstring)."""
    if all(_liftable(affine, c) for c in affine.columns if not c.is_affine):
        return lift(affine, est, estimator)
    first = est.W if isinstance(est, Linear) else est.layers[0].W
    used = [int(j) for j in np.flatnonzero(np.any(first != 0, axis=0))]
    for j in used:
        col = affine.columns[j]
        if not col.is_affine and not _is_step(affine, col):
            raise not_step_function(col, affine.space.block(col.feature).kind, estimator)
    if isinstance(est, Linear) and all(_is_step(affine, affine.columns[j]) for j in used):
        return _additive(affine, est, used)
    return _step_mlp(affine, est, used)


def _by_feature(affine: AffineMap, cols: list[int]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for j in cols:
        out.setdefault(affine.columns[j].feature, []).append(j)
    return out


def _cells(affine: AffineMap, feature: str, cols: list[int], column: int) -> Cells:
    blk = affine.space.block(feature)
    if blk.kind not in ("real", "integer"):
        return feature_cells(blk, column)
    cuts = [step_cuts(affine.columns[j], blk) for j in cols]
    return feature_cells(
        blk, column, np.concatenate([c for c in cuts if c is not None] or [np.zeros(0)])
    )


def _values(affine: AffineMap, cells: Cells, cols: list[int]) -> np.ndarray:
    """The columns ``cols`` on every cell, shape ``(n_cells, len(cols))``."""
    blk = affine.space.block(cells.feature)
    if blk.is_indicator:
        zb = np.eye(blk.size)[cells.points.astype(int)]
    else:
        zb = cells.points[:, None]
    return np.column_stack([affine.columns[j].evaluate(zb) for j in cols])


def _trees(affine: AffineMap, W: np.ndarray, cols: list[int]) -> tuple[AffineMap, TreeEnsemble]:
    """One tree per feature of ``W[:, cols] @ x[cols]`` (constant parts in the base)."""
    groups = _by_feature(affine, cols)
    aff, where = with_split_columns(affine, list(groups))
    builder = TreeBuilder(aff, "float64", W.shape[0])
    base = np.zeros(W.shape[0])
    for f, js in groups.items():
        cells = _cells(aff, f, js, where[f])
        table = _values(aff, cells, js) @ W[:, js].T
        const = constant_value(table)
        if const is not None:
            base += const
        else:
            add_step_tree(builder, [cells], table)
    return aff, builder.build(base, divisor=1.0, aggregation="sum_margin")


def _additive(affine: AffineMap, est: Linear, used: list[int]) -> tuple[AffineMap, TreeEnsemble]:
    """A scorecard: every input a step function of one feature -> one tree per feature."""
    aff, ens = _trees(affine, np.asarray(est.W, dtype=float), used)
    return aff, replace(ens, base=ens.base + np.asarray(est.b, dtype=float))


def _step_mlp(affine: AffineMap, est: Linear | MLP, used: list[int]) -> tuple[AffineMap, StepMLP]:
    """The step columns as trees added to the first layer; the network keeps the rest."""
    layers = (
        (Dense(W=est.W, b=est.b, activation="identity"),) if isinstance(est, Linear) else est.layers
    )
    first = layers[0]
    W = np.asarray(first.W, dtype=float)
    step = [j for j in used if not affine.columns[j].is_affine]
    aff, steps = _trees(affine, W, step)
    W1 = np.zeros((W.shape[0], aff.n_x))
    W1[:, : W.shape[1]] = W
    W1[:, [j for j, c in enumerate(affine.columns) if not c.is_affine]] = 0.0
    net = MLP(
        layers=(
            Dense(W=W1, b=np.asarray(first.b, dtype=float), activation=first.activation),
            *layers[1:],
        )
    )
    return aff, StepMLP(steps=steps, net=net)
