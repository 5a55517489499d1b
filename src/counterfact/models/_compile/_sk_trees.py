"""Front ends for scikit-learn tree models: DecisionTree, RandomForest, ExtraTrees,
GradientBoosting and HistGradientBoosting classifiers.

Each front end (:class:`ForestFrontEnd`, :class:`GBFrontEnd`,
:class:`HGBFrontEnd`) compiles ``(est, affine, margin) -> (TreeEnsemble,
DecisionRule)``; they import the IR, the registry and the tree helpers of
:mod:`._splits` only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._frontend import FrontEnd, register_front_end
from ._ir import AffineMap, DecisionRule, TreeEnsemble

__all__ = [
    "ForestFrontEnd",
    "GBFrontEnd",
    "HGBFrontEnd",
    "compile_forest",
    "compile_gb",
    "compile_hgb",
]
from ._splits import TreeBuilder, floor32


def _tree_arrays(tree_: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Children, column and float32-safe ``le`` of a fitted ``sklearn.tree._tree.Tree``.

    scikit-learn compares ``float32(x) <= threshold`` (float64), i.e.
    ``float32(x) <= floor32(threshold)``.
    """
    left = np.asarray(tree_.children_left, dtype=np.int64)
    right = np.asarray(tree_.children_right, dtype=np.int64)
    col = np.asarray(tree_.feature, dtype=np.int64)
    thr = np.asarray(tree_.threshold, dtype=float)
    le = np.array([floor32(t) if lf >= 0 else np.nan for t, lf in zip(thr, left, strict=True)])
    return left, right, col, le


def _class_values(tree_: Any, name: str, normalize: bool) -> np.ndarray:
    value = np.asarray(tree_.value, dtype=float)
    if value.ndim != 3 or value.shape[1] != 1:
        raise UnsupportedModelError(f"{name} with several outputs (multi-output) is not supported.")
    v = value[:, 0, :].copy()
    if normalize:  # as DecisionTreeClassifier.predict_proba does
        norm = v.sum(axis=1)[:, None]
        norm[norm == 0.0] = 1.0
        v /= norm
    return v


def compile_forest(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """DecisionTreeClassifier (one tree, argmax of its values) and RandomForest /
    ExtraTrees classifiers (soft voting: argmax of the mean of the trees' probabilities)."""
    name = type(est).__name__
    n_classes = len(est.classes_)
    single = hasattr(est, "tree_")
    trees = [est] if single else list(est.estimators_)
    builder = TreeBuilder(affine, "float32", n_classes)
    for t in trees:
        left, right, col, le = _tree_arrays(t.tree_)
        builder.add(left, right, col, le, _class_values(t.tree_, name, normalize=not single))
    ens = builder.build(
        np.zeros(n_classes), divisor=1.0 if single else float(len(trees)), aggregation="mean_proba"
    )
    return ens, DecisionRule("argmax", n_classes, n_classes, margin)


def compile_gb(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """GradientBoostingClassifier: ``raw = init + sum_stages learning_rate * tree(x)``."""
    init = est.init_
    if not (isinstance(init, str) and init == "zero") and type(init).__name__ != "DummyClassifier":
        raise UnsupportedModelError(
            f"GradientBoostingClassifier with init={type(init).__name__}: only the default (prior) "
            "and 'zero' initial estimators are supported."
        )
    n_classes = len(est.classes_)
    K = est.estimators_.shape[1]
    base = np.asarray(
        est._raw_predict_init(np.zeros((1, est.n_features_in_), dtype=np.float32)), dtype=float
    )[0]
    lr = float(est.learning_rate)
    builder = TreeBuilder(affine, "float32", K)
    for stage in est.estimators_:
        for k, t in enumerate(stage):
            left, right, col, le = _tree_arrays(t.tree_)
            val = np.zeros((left.shape[0], K))
            val[:, k] = lr * np.asarray(t.tree_.value, dtype=float)[:, 0, 0]
            builder.add(left, right, col, le, val, output=k)
    ens = builder.build(base, divisor=1.0, aggregation="sum_margin")
    if K == 1:
        return ens, DecisionRule("threshold", n_classes, 1, margin, positive_on_tie=True)
    return ens, DecisionRule("argmax", n_classes, K, margin)


def compile_hgb(est: Any, affine: AffineMap, margin: float) -> tuple[TreeEnsemble, DecisionRule]:
    """HistGradientBoostingClassifier: ``raw = baseline + sum of leaf values`` (the
    leaf values include the learning rate), splits ``x <= num_threshold`` in float64."""
    n_classes = len(est.classes_)
    K = int(est.n_trees_per_iteration_)
    builder = TreeBuilder(affine, "float64", K)
    for predictors in est._predictors:
        for k, pred in enumerate(predictors):
            nodes = pred.nodes
            if np.any(nodes["is_categorical"] & ~nodes["is_leaf"].astype(bool)):
                raise UnsupportedModelError(
                    "HistGradientBoostingClassifier with categorical splits is not supported by "
                    "the model compiler; one-hot encode the categorical features instead "
                    "(counterfact.models.make_pipeline does)."
                )
            leaf = nodes["is_leaf"].astype(bool)
            left = np.where(leaf, -1, nodes["left"].astype(np.int64))
            right = np.where(leaf, -1, nodes["right"].astype(np.int64))
            val = np.zeros((len(nodes), K))
            val[:, k] = np.where(leaf, nodes["value"], 0.0)
            builder.add(
                left,
                right,
                nodes["feature_idx"],
                nodes["num_threshold"].astype(float),
                val,
                output=k,
            )
    base = np.asarray(est._baseline_prediction, dtype=float).reshape(K)
    ens = builder.build(base, divisor=1.0, aggregation="sum_margin")
    if K == 1:
        return ens, DecisionRule("threshold", n_classes, 1, margin)
    return ens, DecisionRule("argmax", n_classes, K, margin)


@register_front_end
class ForestFrontEnd(FrontEnd):
    """Decision trees (``ExtraTreeClassifier`` is one) and forests of them:
    :func:`compile_forest`."""

    name = "sklearn-forest"
    estimators = (
        "sklearn.tree:DecisionTreeClassifier",
        "sklearn.ensemble:RandomForestClassifier",
        "sklearn.ensemble:ExtraTreesClassifier",
    )
    supported = (
        "DecisionTreeClassifier",
        "ExtraTreeClassifier",
        "RandomForestClassifier",
        "ExtraTreesClassifier",
    )
    trees = True

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_forest(est, affine, margin)


@register_front_end
class GBFrontEnd(FrontEnd):
    """``GradientBoostingClassifier``: :func:`compile_gb`."""

    name = "sklearn-gb"
    estimators = ("sklearn.ensemble:GradientBoostingClassifier",)
    supported = ("GradientBoostingClassifier",)
    trees = True

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_gb(est, affine, margin)


@register_front_end
class HGBFrontEnd(FrontEnd):
    """``HistGradientBoostingClassifier`` (numerical splits): :func:`compile_hgb`."""

    name = "sklearn-hgb"
    estimators = ("sklearn.ensemble:HistGradientBoostingClassifier",)
    supported = ("HistGradientBoostingClassifier",)
    trees = True

    def compile(
        self, est: Any, affine: AffineMap, margin: float
    ) -> tuple[TreeEnsemble, DecisionRule]:
        return compile_hgb(est, affine, margin)
