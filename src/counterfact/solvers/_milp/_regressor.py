"""A fitted scikit-learn regressor embedded in a MILP (CE-OCL's learned causal constraints).

Not an IR node (the compiler handles classifiers only): pipeline steps are
chosen from :data:`SCALERS` by class name (scikit-learn is not imported), and
the final estimator is an ``MLPRegressor`` or any linear model with ``coef_``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._expr import Expr, Var, quicksum
from ._model import Model

__all__ = ["SCALERS", "encode_regressor"]


def _standard_scaler(step: Any, xs: list[Expr]) -> list[Expr]:
    mean = getattr(step, "mean_", None)
    scale = getattr(step, "scale_", None)
    return [
        (x - (0.0 if mean is None else float(mean[k])))
        * (1.0 / (1.0 if scale is None else float(scale[k])))
        for k, x in enumerate(xs)
    ]


def _minmax_scaler(step: Any, xs: list[Expr]) -> list[Expr]:
    return [x * float(step.scale_[k]) + float(step.min_[k]) for k, x in enumerate(xs)]


#: pipeline step class name -> the step applied to the input expressions
SCALERS: dict[str, Callable[[Any, list[Expr]], list[Expr]]] = {
    "StandardScaler": _standard_scaler,
    "MinMaxScaler": _minmax_scaler,
}


def encode_regressor(m: Model, model: Any, inputs: list[Expr | Var]) -> Expr:
    """A fitted scikit-learn regressor's prediction as an expression of its inputs.

    Supported (the compiler handles classifiers only): ``LinearRegression``,
    ``Ridge``, ``Lasso``, ``ElasticNet`` and other linear models with ``coef_``
    / ``intercept_``; ``MLPRegressor`` with ``relu`` or ``identity`` activation;
    either behind a ``Pipeline`` of ``StandardScaler`` / ``MinMaxScaler``.
    Single-output only.  ReLU bounds come from the inputs' bounds.
    """
    steps = list(model.steps) if hasattr(model, "steps") else [("est", model)]
    xs: list[Expr] = [x if isinstance(x, Expr) else x.expr() for x in inputs]
    for name, step in steps[:-1]:
        if step == "passthrough" or step is None:
            continue
        scale = SCALERS.get(type(step).__name__)
        if scale is None:
            raise UnsupportedModelError(
                f"Cannot embed the pipeline step {name!r} ({type(step).__name__}) of a causal "
                "regressor in the MIP; "
                "supported: StandardScaler, MinMaxScaler, then a linear model or MLPRegressor."
            )
        xs = scale(step, xs)
    est = steps[-1][1]
    if type(est).__name__ == "MLPRegressor":
        return _mlp_regressor(m, est, xs)
    return _linear_regressor(est, xs)


def _mlp_regressor(m: Model, est: Any, xs: list[Expr]) -> Expr:
    """A single-output ``MLPRegressor`` (relu or identity) with big-M ReLUs."""
    if est.activation not in ("relu", "identity") or getattr(est, "n_outputs_", 1) != 1:
        raise UnsupportedModelError(
            f"MLPRegressor with activation={est.activation!r} and "
            f"{getattr(est, 'n_outputs_', 1)} outputs "
            "cannot be embedded; use activation='relu' (or 'identity') and one output."
        )
    h = xs
    n_layers = len(est.coefs_)
    for li, (W, b) in enumerate(zip(est.coefs_, est.intercepts_, strict=True)):
        W = np.asarray(W, dtype=float)
        pre = [
            quicksum(float(W[k, r]) * h[k] for k in np.flatnonzero(W[:, r])) + float(b[r])
            for r in range(W.shape[1])
        ]
        if li < n_layers - 1 and est.activation == "relu":
            h = [m.add_relu(p, name=f"reg{li}_{r}") for r, p in enumerate(pre)]
        else:
            h = pre
    return h[0]


def _linear_regressor(est: Any, xs: list[Expr]) -> Expr:
    """A single-output linear model: ``coef_ @ xs + intercept_``."""
    cls = type(est).__name__
    coef = getattr(est, "coef_", None)
    if coef is None:
        raise UnsupportedModelError(
            f"Cannot embed a {cls} as a causal regressor in the MIP; supported: linear models with "
            "coef_ (LinearRegression, Ridge, Lasso, ...) and MLPRegressor(relu), optionally "
            "behind scalers."
        )
    coef = np.asarray(coef, dtype=float).reshape(-1)
    if coef.size != len(xs):
        raise UnsupportedModelError(
            f"{cls} has {coef.size} coefficients for {len(xs)} parents; it must be single-output."
        )
    icpt = float(np.asarray(getattr(est, "intercept_", 0.0), dtype=float).reshape(-1)[0])
    return quicksum(float(w) * x for w, x in zip(coef, xs, strict=True)) + icpt
