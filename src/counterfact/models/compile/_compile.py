"""``compile_model``: dispatch a fitted model to the front ends."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from ._ir import CompiledModel, InputSpace
from ._pre import SUPPORTED_TRANSFORMERS, apply_transformer, build_affine, input_columns

__all__ = ["SUPPORTED_ESTIMATORS", "SUPPORTED_TRANSFORMERS", "compile_model"]

SUPPORTED_ESTIMATORS = (
    "LogisticRegression",
    "LinearSVC",
    "SVC(kernel='linear')",
    "MLPClassifier(activation='relu')",
    "DecisionTreeClassifier",
    "RandomForestClassifier",
    "ExtraTreesClassifier",
    "GradientBoostingClassifier",
    "HistGradientBoostingClassifier",
    "XGBClassifier",
    "LGBMClassifier",
)

_FOREST = ("DecisionTreeClassifier", "ExtraTreeClassifier", "RandomForestClassifier", "ExtraTreesClassifier")


def _split_model(model: Any) -> tuple[Any, list[Any]]:
    from .._adapter import ModelAdapter
    from .._fit import _Relabelled

    if isinstance(model, ModelAdapter):
        model = model.model
    if isinstance(model, _Relabelled):
        model = model.pipeline
    if type(model).__name__ == "Pipeline":
        steps = [s for _, s in model.steps]
        pre: list[Any] = []
        for s in steps[:-1]:
            if type(s).__name__ == "Pipeline":
                pre.extend(st for _, st in s.steps)
            else:
                pre.append(s)
        return steps[-1], pre
    return model, []


def _estimator(est: Any, affine: Any, margin: float) -> tuple[Any, Any]:
    name = type(est).__name__
    mro = {c.__name__ for c in type(est).__mro__}
    if name in _FOREST:
        from ._sk_trees import compile_forest

        return compile_forest(est, affine, margin)
    if name == "GradientBoostingClassifier":
        from ._sk_trees import compile_gb

        return compile_gb(est, affine, margin)
    if name == "HistGradientBoostingClassifier":
        from ._sk_trees import compile_hgb

        return compile_hgb(est, affine, margin)
    if name in ("SVC", "NuSVC"):
        from ._sk_linear import compile_svc

        return compile_svc(est, margin)
    if name == "MLPClassifier":
        from ._sk_linear import compile_mlp

        return compile_mlp(est, margin)
    if "LinearClassifierMixin" in mro and hasattr(est, "coef_"):
        from ._sk_linear import compile_linear_mixin

        return compile_linear_mixin(est, margin)
    if name == "XGBClassifier":
        from ._boosters import compile_xgb

        return compile_xgb(est, affine, margin)
    if name == "LGBMClassifier":
        from ._boosters import compile_lgbm

        return compile_lgbm(est, affine, margin)
    raise UnsupportedModelError(
        f"The model compiler does not support the estimator {name}. Supported: "
        f"{', '.join(SUPPORTED_ESTIMATORS)} (binary and multi-class), inside a scikit-learn "
        "Pipeline whose preprocessing uses "
        f"{', '.join(SUPPORTED_TRANSFORMERS)}. Use a model-agnostic method (e.g. cf.UFCE, cf.MDPSO, "
        "cf.NearestObservable) for other models."
    )


def compile_model(model: Any, schema: Schema, *, margin: float = 1e-4) -> CompiledModel:
    """Compile a fitted classifier into the solver-neutral IR.

    Parameters
    ----------
    model : object
        A fitted scikit-learn ``Pipeline`` (preprocessing + estimator, as built
        by :func:`counterfact.models.fit`), a bare fitted estimator (fitted on
        the raw columns), an XGBoost / LightGBM sklearn classifier, or a
        :class:`~counterfact.models.ModelAdapter` of one of those.
    schema : Schema
        The features the model receives (raw DataFrame columns).
    margin : float
        Default decision margin stored in :attr:`DecisionRule.margin`
        (on the logit / raw margin, or on the mean probability for forests).

    Returns
    -------
    CompiledModel

    Raises
    ------
    UnsupportedModelError
        If an element of the model (estimator or transformer) is not supported;
        the message names it and lists what is supported.
    """
    if not isinstance(schema, Schema):
        raise ValidationError(f"compile_model needs a counterfact Schema. Got {type(schema).__name__}.")
    if not (isinstance(margin, int | float) and np.isfinite(margin) and margin >= 0):
        raise ValidationError(f"margin must be a finite number >= 0. Got {margin!r}.")
    classes = getattr(model, "classes_", None)
    est, pre = _split_model(model)
    if classes is None:
        classes = getattr(est, "classes_", None)
    if classes is None:
        raise UnsupportedModelError(
            f"{type(model).__name__} has no classes_: the model compiler needs a fitted classifier."
        )
    if not hasattr(est, "fit") or not hasattr(est, "predict"):
        raise UnsupportedModelError(f"{type(est).__name__} is not a fitted estimator.")
    space = InputSpace.from_schema(schema)
    first = pre[0] if pre else est
    cols = input_columns(first, schema, space)
    for step in pre:
        cols = apply_transformer(step, cols, schema, space)
    affine = build_affine(cols, schema, space, type(est).__name__)
    n_in = getattr(est, "n_features_in_", None)
    if n_in is not None and int(n_in) != affine.n_x:
        raise UnsupportedModelError(
            f"The preprocessing compiles to {affine.n_x} columns but {type(est).__name__} expects "
            f"{n_in}; the pipeline layout is not understood."
        )
    estimator, rule = _estimator(est, affine, float(margin))
    classes = np.asarray(classes)
    if len(classes) != rule.n_classes:
        raise UnsupportedModelError(
            f"The model exposes {len(classes)} classes but its estimator decides among {rule.n_classes}."
        )
    source = " -> ".join([type(s).__name__ for s in pre] + [type(est).__name__])
    return CompiledModel(
        inputs=space,
        affine=affine,
        estimator=estimator,
        rule=rule,
        classes=classes,
        schema=schema,
        source=source,
    )
