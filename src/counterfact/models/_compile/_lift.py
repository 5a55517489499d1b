"""Lifting: linear models and MLPs over piecewise-constant columns, as exact ReLU networks.

A *table* column over an integral raw variable ``z`` (an ordinal rank, an
integer feature) -- one-hot level indicators of an ordinal, target encodings
of an ordinal, bins of an integer feature -- is a step function::

    x(z) = x(lower) + sum_s delta_s * [z >= s]      (s: the integers where x changes)

and for integral ``z`` the step is exactly ``[z >= s] = relu(z - s + 1) - relu(z - s)``.
So the estimator ``E(x)`` (Linear or MLP) over such columns equals the MLP::

    h = relu(x')                   x' = (affine columns - lo ; z - t for every unit t)
    E'(h) = E(P h + q)             (P, q recombine the columns; folded into E's first layer)

where each affine column passes through a ReLU shifted by ``lo``, a strict
lower bound of the column over the schema's domain (so that unit is always
active: solvers need no binary for it), and the step units ``relu(z - t)``
have integral pre-activations.  The lifted network is the model back ends see;
its outputs equal the original's up to float rounding (~1e-15 relative),
far inside the decision margin, and counterfactuals are re-checked with the
real model anyway.

Columns that are not step functions of an integral variable (monotone maps
such as ``np.log1p``, bins of a real feature) cannot be lifted exactly:
:func:`lift` raises :class:`UnsupportedModelError` naming the transform and the
model kinds that support it.  Bins of a real feature are step functions all the
same, compiled as trees by :mod:`._steps` (which calls :func:`lift` only when
every non-affine column can be lifted).

A pass of the dispatcher over the IR, after the linear / MLP front ends: it
imports the IR only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError
from ._columns import ElementFn
from ._ir import MLP, AffineMap, Dense, Linear, XColumn
from ._ir_inputs import with_op

TREE_MODELS = (
    "DecisionTreeClassifier, RandomForestClassifier, ExtraTreesClassifier, "
    "GradientBoostingClassifier, HistGradientBoostingClassifier, XGBClassifier, LGBMClassifier"
)


def _transform_name(col: XColumn) -> str:
    names = [a.name for op, a in col.ops if op == "fn" and isinstance(a, ElementFn)]
    if names:
        return names[-1]
    return "a piecewise-constant encoding (one-hot bins / levels)"


def _steps(col: XColumn, space: Any, estimator: str) -> tuple[float, list[tuple[int, float]]]:
    """``(x(lower), [(s, delta_s), ...])`` of a table column over an integral variable."""
    blk = space.block(col.feature)
    if col.shape == "table" and blk.kind in ("ordinal", "integer"):
        if blk.kind == "ordinal":
            zs = np.arange(len(blk.categories or ()), dtype=float)
        else:
            zs = np.arange(blk.lower, blk.upper + 1, dtype=float)
        vals = col.evaluate(zs[:, None])
        change = np.flatnonzero(vals[1:] != vals[:-1]) + 1
        return float(vals[0]), [(int(zs[i]), float(vals[i] - vals[i - 1])) for i in change]
    raise not_step_function(col, blk.kind, estimator)


def not_step_function(col: XColumn, kind: str, estimator: str) -> UnsupportedModelError:
    """The error for a non-affine column that is not a step function (a monotone map of
    a real value) in front of a linear model or an MLP."""
    return UnsupportedModelError(
        f"The model compiler supports {_transform_name(col)} on the {kind} feature '{col.feature}' "
        f"(column '{col.name}') only for tree models ({TREE_MODELS}): in front of {estimator} it "
        "is a non-linear input the solvers cannot encode exactly (bins are: KBinsDiscretizer, "
        "optbinning). Drop the transform for this model (scale the feature instead), or use a "
        "tree model, or a model-agnostic method (cf.UFCE, cf.MDPSO)."
    )


def _lower_bound(col: XColumn, space: Any) -> float:
    blk = space.block(col.feature)
    if blk.is_indicator:
        zb = np.eye(blk.size)
    else:
        zb = np.array([[blk.lower], [blk.upper]])
    lo = float(np.min(col.evaluate(zb)))
    return lo - 1e-6 * (1.0 + abs(lo))


def lift(affine: AffineMap, est: Linear | MLP, estimator: str) -> tuple[AffineMap, MLP]:
    """The exact ReLU network of ``est`` over ``affine`` (module docstring)."""
    space = affine.space
    cols: list[XColumn] = []
    units: dict[tuple[str, int], int] = {}
    plan: list[tuple[str, Any]] = []
    for col in affine.columns:
        if col.is_affine:
            lo = _lower_bound(col, space)
            cols.append(with_op(col, "sub", lo))
            plan.append(("affine", (len(cols) - 1, lo)))
            continue
        v0, steps = _steps(col, space, estimator)
        terms = []
        for s, delta in steps:
            for t, sign in ((s - 1, 1.0), (s, -1.0)):
                key = (col.feature, t)
                if key not in units:
                    blk = space.block(col.feature)
                    base = XColumn(
                        name=f"relu({col.feature} - {t})",
                        feature=col.feature,
                        base="code",
                        base_coef=np.ones(blk.size),
                    )
                    cols.append(with_op(base, "sub", float(t)))
                    units[key] = len(cols) - 1
                terms.append((units[key], sign * delta))
        plan.append(("steps", (v0, terms)))
    n_h = len(cols)
    P = np.zeros((len(plan), n_h))
    q = np.zeros(len(plan))
    for j, (kind, info) in enumerate(plan):
        if kind == "affine":
            k, lo = info
            P[j, k] = 1.0
            q[j] = lo
        else:
            v0, terms = info
            q[j] = v0
            for k, w in terms:
                P[j, k] += w
    A = np.zeros((n_h, space.n))
    c = np.zeros(n_h)
    for j, col in enumerate(cols):
        blk = space.block(col.feature)
        A[j, blk.columns] = col.scale * col.base_coef
        c[j] = col.scale * col.base_const + col.offset
    lifted = AffineMap(A=A, c=c, columns=tuple(cols), space=space)
    first = Dense(W=np.eye(n_h), b=np.zeros(n_h), activation="relu")
    if isinstance(est, Linear):
        out = Dense(W=est.W @ P, b=est.W @ q + est.b, activation="identity")
        return lifted, MLP(layers=(first, out))
    d1 = est.layers[0]
    new1 = Dense(W=d1.W @ P, b=d1.W @ q + d1.b, activation=d1.activation)
    return lifted, MLP(layers=(first, new1, *est.layers[1:]))
