"""``CalibratedClassifierCV`` (binary, one calibrated model): a threshold on the base score.

scikit-learn predicts class 1 iff the calibrated probability ``p = g(s)`` beats
``1 - p`` (``argmax``, ties to class 0), where ``s`` is the base model's score
(``decision_function``, else ``predict_proba[:, 1]``) and ``g`` the fitted
calibration map (sigmoid ``expit(-(a s + b))`` or isotonic, both monotone).  So
the decision is ``s > s*`` (or ``s < s*`` for a decreasing map): we find the
boundary ``s*`` *exactly* by bisection over float64 scores, evaluating the
calibrator itself (plateaus and ties included: ``s*`` is the last score that
still gives class 0), and fold ``y' = +-(y_k - s*)`` into the base model's
compiled estimator (``y_k`` the output that is its score), with the rule
"class 1 iff ``y' > 0``".  The decision margin then applies to ``y'``, in the
base score's units.

The default ``ensemble=True`` averages the probabilities of several
calibrated models: a non-monotone combination of several scores, rejected
with a message naming ``ensemble=False``.

The base model is compiled by the dispatcher, which :func:`compile_calibrated`
receives as an argument (it does not import it; :class:`CalibratedFrontEnd` is
its wrapper front end); this module imports the IR, the registry,
:mod:`._bounds` and the tree helpers of :mod:`._splits`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
from scipy.special import expit

from ...exceptions import UnsupportedModelError
from ._bounds import interval_bounds
from ._frontend import WrapperFrontEnd, register_front_end
from ._ir import MLP, CompiledModel, DecisionRule, Dense, Linear, Tree, TreeEnsemble
from ._splits import float_key, float_unkey, tree_leaves

__all__ = ["CalibratedFrontEnd", "compile_calibrated", "unfreeze"]


def unfreeze(est: Any) -> Any:
    """The fitted model inside ``FrozenEstimator`` wrappers."""
    while type(est).__name__ == "FrozenEstimator":
        est = est.estimator
    return est


def calibrated_parts(cal: Any, where: str) -> Any:
    """The one calibrated classifier of ``cal`` (else a clear error)."""
    ccs = list(getattr(cal, "calibrated_classifiers_", []))
    if len(ccs) != 1:
        raise UnsupportedModelError(
            f"CalibratedClassifierCV at {where} averages {len(ccs)} calibrated models "
            "(ensemble=True, the default): the average of several calibrated scores is not a "
            "threshold on one score, so the exact methods cannot encode it. Refit with "
            "CalibratedClassifierCV(..., ensemble=False), or calibrate a fitted model wrapped in "
            "sklearn.frozen.FrozenEstimator."
        )
    method = getattr(cal, "method", "sigmoid")
    if method not in ("sigmoid", "isotonic"):
        raise UnsupportedModelError(
            f"CalibratedClassifierCV(method={method!r}) at {where} is not supported; use "
            "method='sigmoid' or 'isotonic'."
        )
    if len(cal.classes_) != 2:
        raise UnsupportedModelError(
            f"CalibratedClassifierCV at {where} with {len(cal.classes_)} classes normalises "
            "several calibrated scores (not piecewise linear); only binary calibrated models are "
            "supported."
        )
    return ccs[0]


def _score_fn(base: Any, front_end: str, n_outputs: int) -> tuple[int, Any]:
    """``(output index, y_k -> the base score as scikit-learn computes it)``."""
    if hasattr(base, "decision_function"):
        return 0, lambda y: y
    if n_outputs == 2:  # forests / trees: predict_proba[:, 1] is the mean probability output
        return 1, lambda y: y
    if front_end == "xgboost":  # XGBoost computes its sigmoid in float32

        def sigmoid32(y: np.ndarray) -> np.ndarray:
            y32 = np.asarray(y, dtype=np.float32)
            one = np.float32(1.0)
            return (one / (one + np.exp(-y32))).astype(float)

        return 0, sigmoid32
    return 0, expit  # MLP, LightGBM: predict_proba[:, 1] = sigmoid(logit)


def _class1(cc: Any, score: Any, y: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        p = np.asarray(cc.calibrators[0].predict(score(np.asarray(y, dtype=float))), dtype=float)
    p0 = 1.0 - p
    p = np.where((p > 1.0) & (p <= 1.0 + 1e-5), 1.0, p)
    p0 = np.where((p0 > 1.0) & (p0 <= 1.0 + 1e-5), 1.0, p0)
    return p > p0


def _boundary(pred: Any, lo: float, hi: float, target: bool) -> float:
    """Largest float in ``[lo, hi]`` with ``pred == target`` (``pred(lo) == target``,
    ``pred(hi) != target``)."""
    klo, khi = int(float_key(np.array([lo]))[0]), int(float_key(np.array([hi]))[0])
    while khi > klo + 1:
        mid = klo // 2 + khi // 2 + (klo % 2 + khi % 2) // 2
        if bool(pred(float_unkey(np.array([mid])))[0]) == target:
            klo = mid
        else:
            khi = mid
    return float(float_unkey(np.array([klo]))[0])


def _fold(est: Any, M: np.ndarray, v: np.ndarray) -> Any:
    """The estimator with outputs ``M @ y + v``."""
    if isinstance(est, Linear):
        return Linear(W=M @ est.W, b=M @ est.b + v)
    if isinstance(est, MLP):
        last = est.layers[-1]
        return MLP(
            layers=(
                *est.layers[:-1],
                Dense(W=M @ last.W, b=M @ last.b + v, activation=last.activation),
            )
        )
    trees = []
    for t in est.trees:
        val = t.value @ M.T
        trees.append(
            Tree(
                left=t.left,
                right=t.right,
                split=t.split,
                value=val,
                output=None,
                leaves=tree_leaves(t.left, t.right, t.split, val),
            )
        )
    return replace(est, trees=tuple(trees), n_outputs=M.shape[0], base=M @ est.base + v)


def compile_calibrated(
    cal: Any, margin: float, where: str, compile_inner: Callable[[Any, str], CompiledModel]
) -> CompiledModel:
    """A binary ``CalibratedClassifierCV`` with one calibrated model, compiled exactly.

    Parameters
    ----------
    cal : CalibratedClassifierCV
        The fitted calibrated classifier.
    margin : float
        The decision margin of the compiled rule (on the base model's score).
    where : str
        Its position in the model (for messages).
    compile_inner : callable
        The dispatcher: ``compile_inner(model, where)`` compiles the calibrated
        base model (a pipeline or an estimator; ``where`` prefixes the positions
        of its steps) after any preprocessing in front of ``cal``.

    Returns
    -------
    CompiledModel
        The compiled base model with its outputs folded into one score
        ``y' = +-(y_k - s*)`` and the rule "class 1 iff ``y' > 0``" (module
        docstring).

    Raises
    ------
    UnsupportedModelError
        For several calibrated models (``ensemble=True``), other methods,
        multi-class models, and base models whose score is not one output.
    """
    cc = calibrated_parts(cal, where)
    base = unfreeze(cc.estimator)
    inner = compile_inner(base, "the calibrated model's ")
    est = inner.estimator
    k, score = _score_fn(base, inner.front_end, inner.n_outputs)
    if inner.n_outputs > 2 or (inner.n_outputs == 2 and not isinstance(est, TreeEnsemble)):
        raise UnsupportedModelError(
            f"CalibratedClassifierCV at {where}: its base model's score is not one output of the "
            "compiled model; only binary base models are supported."
        )
    M, v = _threshold(cc, score, inner, k, where)
    folded = _fold(est, M, v)
    rule = DecisionRule("threshold", 2, 1, margin)
    return replace(
        inner, estimator=folded, rule=rule, source=f"CalibratedClassifierCV({inner.source})"
    )


def _threshold(
    cc: Any, score: Any, inner: CompiledModel, k: int, where: str
) -> tuple[np.ndarray, np.ndarray]:
    """``(M, v)``: the calibrated decision "class 1" as ``M @ y + v > 0`` on the outputs
    of the compiled base model ``inner`` (its score is output ``k``)."""
    b = interval_bounds(inner)
    lo = float(b.y_lo[k]) - 1.0 - 1e-6 * abs(float(b.y_lo[k]))
    hi = float(b.y_hi[k]) + 1.0 + 1e-6 * abs(float(b.y_hi[k]))

    def pred(y: np.ndarray) -> np.ndarray:
        return _class1(cc, score, y)

    g = pred(np.linspace(lo, hi, 4001))
    M = np.zeros((1, inner.n_outputs))
    v = np.zeros(1)
    if g.all() or not g.any():
        v[0] = 1.0 if g[0] else -1.0  # the same class everywhere on the domain
    elif (np.diff(g.astype(int)) >= 0).all():  # class 1 above a threshold
        s = _boundary(pred, lo, hi, False)
        M[0, k], v[0] = 1.0, -s
    elif (np.diff(g.astype(int)) <= 0).all():  # class 1 below a threshold
        s = _boundary(lambda y: ~pred(-y), -hi, -lo, True)  # mirror: smallest score with class 0
        M[0, k], v[0] = -1.0, -s
    else:
        raise UnsupportedModelError(
            f"CalibratedClassifierCV at {where}: the calibrated decision is not monotone in the "
            "base score."
        )
    return M, v


@register_front_end
class CalibratedFrontEnd(WrapperFrontEnd):
    """``CalibratedClassifierCV``: :func:`compile_calibrated`."""

    name = "sklearn-calibrated"
    estimators = ("sklearn.calibration:CalibratedClassifierCV",)
    supported = ("CalibratedClassifierCV(method='sigmoid'|'isotonic', ensemble=False), binary",)

    def compile_wrapper(
        self,
        est: Any,
        margin: float,
        where: str,
        compile_inner: Callable[[Any, str], CompiledModel],
    ) -> CompiledModel:
        return compile_calibrated(est, margin, where, compile_inner)
