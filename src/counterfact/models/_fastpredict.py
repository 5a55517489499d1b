"""Exact batch probabilities for search loops: skip the per-call pipeline overhead.

The heuristic methods ask the model about thousands of candidate rows built
from numbers they already hold.  Going through a DataFrame and a
scikit-learn ``ColumnTransformer`` per call costs more than the estimator
itself on small batches, and a ``RandomForestClassifier`` pays joblib's
per-tree dispatch on every call.  This module offers two exact shortcuts,
used only after they reproduced the model's own probabilities on training
rows:

* :class:`FastPredictor`: the preprocessing folded by the model compiler
  (:func:`counterfact.models._compile.compile_model`; its ``AffineMap``
  reproduces scikit-learn's float operations bit for bit) applied to raw
  numeric vectors, then the pipeline's *own* fitted estimator (L2C, UFCE and
  MD-PSO use it; MD-PSO computes the query's estimator inputs once and
  rewrites only the columns of the features its swarm moves);
* :class:`ForestEvaluator`: a scikit-learn decision tree or random / extra
  trees forest evaluated for all trees at once with numpy (the same float32
  comparisons, the same leaf values, summed in tree order and divided by the
  number of trees, as scikit-learn does with ``n_jobs=1``).

Every answer a method reports is still verified by the real model in the
base class; these are for the search only.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..schema import Schema
from ._compile import compile_model

__all__ = ["FastPredictor", "ForestEvaluator"]


def spread_rows(X: pd.DataFrame, n: int = 256) -> pd.DataFrame:
    """Up to ``n`` rows of ``X`` spread evenly over it: the rows a fast path is
    checked on against the real model before it is trusted."""
    return X.iloc[np.unique(np.linspace(0, len(X) - 1, min(len(X), n)).astype(int))]


def columns_by_feature(affine: Any) -> dict[str, list[int]]:
    """Positions of the folded affine map's input columns, per raw feature."""
    cols: dict[str, list[int]] = {}
    for j, c in enumerate(affine.columns):
        cols.setdefault(c.feature, []).append(j)
    return cols


def estimator_columns(affine: Any, est: Any) -> Any:
    """The folded map restricted to the estimator's own input columns: a compiled tree
    model or scorecard appends columns its splits read (bin codes, raw values) after them."""
    n = getattr(est, "n_features_in_", None)
    if n is None or int(n) >= affine.n_x:
        return affine
    n = int(n)
    return replace(
        affine, A=affine.A[:n], c=affine.c[:n], columns=affine.columns[:n], code_columns={}
    )


class ForestEvaluator:
    """All trees of a fitted scikit-learn tree classifier or forest, evaluated together.

    Build with :meth:`build` (``None`` for anything else).  Trees are padded
    to a common node count; leaves loop onto themselves, so ``depth`` gather
    steps take every row to its leaf in every tree.
    """

    #: up to this many rows, the all-trees numpy traversal (no per-tree call);
    #: above it, each tree's compiled ``tree_.predict`` (no joblib, no input checks)
    small_batch: int = 128

    def __init__(
        self,
        feature: np.ndarray,
        threshold: np.ndarray,
        left: np.ndarray,
        right: np.ndarray,
        value: np.ndarray,
        depth: int,
        n_trees: int,
        trees: list[Any],
        n_classes: int,
    ) -> None:
        self.trees = trees
        self.n_classes = n_classes
        self.feature = feature
        self.threshold = threshold
        self.left = left
        self.right = right
        self.value = value  # (n_trees * max_nodes, n_classes)
        self.depth = depth
        self.n_trees = n_trees
        self.stride = feature.shape[0] // n_trees

    @classmethod
    def build(cls, est: Any) -> ForestEvaluator | None:
        """An evaluator for ``DecisionTreeClassifier``, ``RandomForestClassifier`` or
        ``ExtraTreesClassifier`` (single output), else ``None``."""
        from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
        from sklearn.tree import DecisionTreeClassifier

        if isinstance(est, DecisionTreeClassifier):
            trees = [est]
        elif isinstance(est, (RandomForestClassifier, ExtraTreesClassifier)):
            trees = list(est.estimators_)
        else:
            return None
        if getattr(est, "n_outputs_", 1) != 1 or not trees:
            return None
        n_classes = int(np.asarray(est.classes_).shape[0])
        M = max(t.tree_.node_count for t in trees)
        T = len(trees)
        feature = np.zeros((T, M), dtype=np.int64)
        threshold = np.full((T, M), np.inf)
        left = np.tile(np.arange(M), (T, 1))
        right = left.copy()
        value = np.zeros((T, M, n_classes))
        depth = 0
        for t, tree in enumerate(trees):
            tr = tree.tree_
            n = tr.node_count
            inner = tr.children_left[:n] >= 0
            feature[t, :n] = np.where(inner, tr.feature[:n], 0)
            threshold[t, :n] = np.where(inner, tr.threshold[:n], np.inf)
            left[t, :n] = np.where(inner, tr.children_left[:n], np.arange(n))
            right[t, :n] = np.where(inner, tr.children_right[:n], np.arange(n))
            vals = np.asarray(tr.value[:n, 0, :n_classes], dtype=float)
            value[t, :n] = vals
            depth = max(depth, int(tr.max_depth))
        offset = (np.arange(T) * M)[:, None]
        return cls(
            feature.ravel(),
            threshold.ravel(),
            (left + offset).ravel(),
            (right + offset).ravel(),
            value.reshape(T * M, n_classes),
            depth,
            T,
            [t.tree_ for t in trees],
            n_classes,
        )

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Probabilities of the rows of ``X`` (the estimator's input matrix)."""
        Xf = np.ascontiguousarray(X, dtype=np.float32)
        n = Xf.shape[0]
        if n > self.small_batch:
            out = np.zeros((n, self.n_classes))
            for tree in self.trees:  # scikit-learn's order of accumulation
                out += tree.predict(Xf)[:, : self.n_classes]
            if self.n_trees > 1:
                out /= self.n_trees
            return out
        node = np.repeat(
            (np.arange(self.n_trees) * self.stride)[:, None], n, axis=1
        )  # (T, n) global ids
        rows = np.arange(n)[None, :]
        for _ in range(self.depth):
            go_left = Xf[rows, self.feature[node]] <= self.threshold[node]
            node = np.where(go_left, self.left[node], self.right[node])
        leaf = self.value[node]  # (T, n, C)
        out = np.zeros(leaf.shape[1:])
        for t in range(self.n_trees):  # scikit-learn's order of accumulation
            out += leaf[t]
        if self.n_trees > 1:
            out /= self.n_trees
        return out


class FastPredictor:
    """The model's probabilities from raw numeric vectors, through the compiler's exact
    preprocessing.

    ``space`` is the compiler's :class:`~counterfact.models._compile.InputSpace`
    (one column per numeric feature, the rank of an ordinal one, one column
    per category of a categorical one); :meth:`proba_z` takes such vectors.
    """

    def __init__(
        self, space: Any, affine: Any, estimator: Any, forest: ForestEvaluator | None
    ) -> None:
        self.space = space
        self.affine = affine
        self.estimator = estimator
        self.forest = forest
        self.columns_of = columns_by_feature(affine)

    @property
    def kind(self) -> str:
        """``"forest"`` (numpy evaluator) or ``"estimator"`` (the fitted estimator on numpy
        inputs)."""
        return "forest" if self.forest is not None else "estimator"

    @property
    def row_independent(self) -> bool:
        """Whether a row's probabilities never depend on the other rows of the call
        (true of the numpy forest evaluator; a matrix product may round a row
        differently in another batch), so that several searches can share a call."""
        return self.forest is not None

    @classmethod
    def build(cls, model: Any, schema: Schema, sample: pd.DataFrame) -> FastPredictor | None:
        """``None`` unless ``model`` (a :class:`~counterfact.models.ModelAdapter`) is a
        scikit-learn pipeline the compiler folds and the shortcut returns exactly
        the model's probabilities and decisions on ``sample``.  The forest
        evaluator is kept only if it, too, matches exactly."""
        user = model.model
        steps = getattr(user, "steps", None)
        if not steps or len(steps) < 2 or len(sample) == 0:
            return None
        est = steps[-1][1]
        if not hasattr(est, "predict_proba") or hasattr(est, "feature_names_in_"):
            return None
        try:
            compiled = compile_model(model, schema)
            fast = cls(compiled.inputs, estimator_columns(compiled.affine, est), est, None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                X = fast.affine.apply(fast.space.encode(sample))
                got = np.asarray(est.predict_proba(X), dtype=float)
                want = model.predict_proba(sample)
                labels = np.asarray(model.predict(sample))
        except Exception:
            return None
        if got.shape != want.shape or not np.array_equal(got, want):
            return None
        if not np.array_equal(np.asarray(model.classes_)[np.argmax(got, axis=1)], labels):
            return None
        forest = ForestEvaluator.build(est)
        if forest is not None and np.array_equal(forest.predict_proba(X), got):
            fast.forest = forest
        return fast

    def proba_x(self, X: np.ndarray) -> np.ndarray:
        """Probabilities from estimator inputs ``X``."""
        if len(X) == 0:
            return np.zeros((0, len(self.estimator.classes_)))
        if self.forest is not None:
            return self.forest.predict_proba(X)
        return np.asarray(self.estimator.predict_proba(X), dtype=float)

    def proba_z(self, Z: np.ndarray) -> np.ndarray:
        """Probabilities from raw vectors ``Z`` (``space`` layout)."""
        return self.proba_x(self.affine.apply(Z))

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        """Probabilities of raw rows (a DataFrame with the schema's columns)."""
        return self.proba_z(self.space.encode(frame))
