"""Front ends for linear models (LogisticRegression, LinearSVC, SVC linear, ...) and
ReLU MLPs (MLPClassifier).

Each front end (:class:`LinearFrontEnd`, :class:`SVCFrontEnd`,
:class:`MLPFrontEnd`) compiles ``(est, affine, margin) -> (estimator node,
DecisionRule)``; these do not read ``affine`` (their weights act on the
estimator input ``x`` itself).  They import the IR and the registry only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._frontend import FrontEnd, register_front_end
from ._ir import MLP, AffineMap, DecisionRule, Dense, Linear

__all__ = [
    "LinearFrontEnd",
    "MLPFrontEnd",
    "SVCFrontEnd",
    "compile_linear_mixin",
    "compile_mlp",
    "compile_svc",
]


def compile_linear_mixin(est: Any, affine: AffineMap, margin: float) -> tuple[Linear, DecisionRule]:
    """``LinearClassifierMixin`` (LogisticRegression, LinearSVC, SGDClassifier,
    RidgeClassifier, Perceptron...): ``scores = X coef_.T + intercept_``;
    one score: class 1 iff ``score > 0``; several: argmax (ties to the lowest)."""
    W = np.atleast_2d(np.asarray(est.coef_, dtype=float))
    b = np.atleast_1d(np.asarray(est.intercept_, dtype=float)) * np.ones(W.shape[0])
    n_classes = len(est.classes_)
    lin = Linear(W=W, b=b)
    if W.shape[0] == 1:
        return lin, DecisionRule("threshold", n_classes, 1, margin)
    return lin, DecisionRule("argmax", n_classes, W.shape[0], margin)


def compile_svc(est: Any, affine: AffineMap, margin: float) -> tuple[Linear, DecisionRule]:
    """SVC / NuSVC with ``kernel="linear"``.

    ``predict`` is libsvm's one-vs-one vote (also with ``probability=True``:
    Platt scaling does not enter ``predict``).  Binary: class 1 iff
    ``decision_function >= 0``.  Multi-class: pair ``(i, j)`` (pairs in the order
    (0,1), (0,2), ..., (1,2), ...) is won by ``i`` iff ``coef_[p] x + intercept_[p] > 0``.
    """
    name = type(est).__name__
    if est.kernel != "linear":
        raise UnsupportedModelError(
            f"{name}(kernel={est.kernel!r}) is not piecewise linear; the model compiler supports "
            f"{name}(kernel='linear'), LinearSVC and LogisticRegression. Use a model-agnostic "
            "method (e.g. cf.UFCE, cf.MDPSO) for kernel SVMs."
        )
    n_classes = len(est.classes_)
    W = np.atleast_2d(np.asarray(est.coef_, dtype=float))
    b = np.asarray(est.intercept_, dtype=float).reshape(W.shape[0])
    if n_classes == 2:
        return Linear(W=W, b=b), DecisionRule("threshold", 2, 1, margin, positive_on_tie=True)
    if getattr(est, "break_ties", False) and est.decision_function_shape == "ovr":
        raise UnsupportedModelError(
            f"{name}(break_ties=True) with {n_classes} classes decides by a non-linear transform "
            "of the votes; use break_ties=False (the default)."
        )
    pairs = tuple((i, j) for i in range(n_classes) for j in range(i + 1, n_classes))
    return Linear(W=W, b=b), DecisionRule("ovo", n_classes, len(pairs), margin, pairs=pairs)


def compile_mlp(est: Any, affine: AffineMap, margin: float) -> tuple[MLP, DecisionRule]:
    """MLPClassifier with ``activation`` "relu" or "identity".

    Outputs are the last layer's pre-activations (logits).  Binary: class 1 iff
    ``sigmoid(y) > 0.5``, i.e. ``y > 0`` (up to sigmoid's rounding at ``|y| < 1e-16``,
    which the margin covers); multi-class: argmax of the logits (= of softmax).
    """
    if est.activation not in ("relu", "identity"):
        raise UnsupportedModelError(
            f"MLPClassifier(activation={est.activation!r}) is not piecewise linear; the model "
            "compiler supports activation='relu' (and 'identity'). Use a model-agnostic method "
            "(e.g. cf.UFCE, cf.MDPSO) for other activations."
        )
    n_classes = len(est.classes_)
    if est.out_activation_ not in ("logistic", "softmax") or (
        est.out_activation_ == "logistic" and est.n_outputs_ != 1
    ):
        raise UnsupportedModelError("MLPClassifier for multi-label targets is not supported.")
    n = len(est.coefs_)
    layers = tuple(
        Dense(
            W=_flush_subnormal(np.asarray(est.coefs_[i], dtype=float).T),
            b=_flush_subnormal(np.asarray(est.intercepts_[i], dtype=float)),
            activation=est.activation if i < n - 1 else "identity",
        )
        for i in range(n)
    )
    mlp = MLP(layers=layers)
    if mlp.n_outputs == 1:
        return mlp, DecisionRule("threshold", n_classes, 1, margin)
    return mlp, DecisionRule("argmax", n_classes, mlp.n_outputs, margin)


def _flush_subnormal(a: np.ndarray) -> np.ndarray:
    """Zero the subnormal entries (|w| < 2.2e-308) of a weight array.

    Weight decay drives the weights of one-hot columns never seen in training
    towards 0 until they underflow; MIP solvers warn about and drop such
    coefficients anyway, and their contribution to any activation is below
    1e-300, so the compiled network's decisions are unchanged.
    """
    out = a.copy()
    out[np.abs(out) < np.finfo(float).tiny] = 0.0
    return out


@register_front_end
class LinearFrontEnd(FrontEnd):
    """Every fitted ``LinearClassifierMixin``: :func:`compile_linear_mixin`."""

    name = "sklearn-linear"
    estimators = ("sklearn.linear_model._base:LinearClassifierMixin",)
    supported = ("LogisticRegression", "LinearSVC")

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[Linear, DecisionRule]:
        if not hasattr(est, "coef_"):
            raise UnsupportedModelError(
                f"{type(est).__name__} has no coef_: the model compiler needs a fitted classifier."
            )
        return compile_linear_mixin(est, affine, margin)


@register_front_end
class SVCFrontEnd(FrontEnd):
    """libsvm's ``SVC`` and ``NuSVC`` with a linear kernel: :func:`compile_svc`."""

    name = "sklearn-svc"
    estimators = ("sklearn.svm:SVC", "sklearn.svm:NuSVC")
    supported = ("SVC(kernel='linear')", "NuSVC(kernel='linear')")

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[Linear, DecisionRule]:
        return compile_svc(est, affine, margin)


@register_front_end
class MLPFrontEnd(FrontEnd):
    """``MLPClassifier`` with ReLU (or identity) activations: :func:`compile_mlp`."""

    name = "sklearn-mlp"
    estimators = ("sklearn.neural_network:MLPClassifier",)
    supported = ("MLPClassifier(activation='relu')",)

    def compile(self, est: Any, affine: AffineMap, margin: float) -> tuple[MLP, DecisionRule]:
        return compile_mlp(est, affine, margin)
