"""The dispatcher: ``compile_model`` sends a fitted model to its front ends.

It unwraps the model (a :class:`~counterfact.models.ModelAdapter`, the
relabelling wrapper of :func:`counterfact.models.fit`), takes its pipeline
apart (:func:`._pre.split_pipeline`), folds the preprocessing into the IR's
:class:`AffineMap` (:mod:`._pre`) and compiles the final estimator with the
front end its class selects in :data:`FRONT_ENDS` (exact class names; a
family of classes by a base class in :data:`FAMILY_FRONT_ENDS`).  Models that
wrap one inner model (:data:`WRAPPERS`: ``CalibratedClassifierCV``) are
compiled by a front end that receives the dispatcher as a callable.  Tables
are keyed by class name, so that looking a model up never imports XGBoost or
LightGBM.

This is the top of the compiler: no other module of it imports this one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from .._adapter import ModelAdapter, booster_category_frame
from .._fit import _Relabelled
from ._boosters import compile_lgbm, compile_xgb, native_category_codes
from ._calibrated import compile_calibrated, unfreeze
from ._ebm import compile_ebm, ebm_inputs
from ._ir import MLP, AffineMap, CompiledModel, DecisionRule, Estimator, InputSpace, Linear, XColumn
from ._optbinning import compile_scorecard
from ._pre import apply_transformer, build_affine, input_columns, sparse_output, split_pipeline
from ._sk_linear import compile_linear_mixin, compile_mlp, compile_svc
from ._sk_trees import compile_forest, compile_gb, compile_hgb
from ._splits import with_code_columns
from ._steps import compile_nonaffine
from ._support import SUPPORTED_TRANSFORMERS

__all__ = [
    "FAMILY_FRONT_ENDS",
    "FRONT_ENDS",
    "SUPPORTED_ESTIMATORS",
    "WRAPPERS",
    "FrontEnd",
    "compile_model",
    "native_category_frame",
    "raw_thresholds",
]

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
    "ExplainableBoostingClassifier (interpret), binary",
    "CalibratedClassifierCV(method='sigmoid'|'isotonic', ensemble=False), binary",
    "Scorecard (optbinning) around any of these",
)


@dataclass(frozen=True)
class FrontEnd:
    """An entry of the dispatch table: how to compile one estimator class.

    Attributes
    ----------
    build : callable
        The front end: ``build(est, affine, margin) -> (estimator node, DecisionRule)``.
    trees : bool
        A tree model: the numeric table columns of the preprocessing get code
        columns, which its splits on them are rewritten over
        (:func:`._splits.with_code_columns`).
    inputs : callable or None
        ``inputs(est, cols, schema, space) -> cols``: the columns the estimator
        receives, as it reads them (native categorical codes), before the
        preprocessing is folded.
    dense_input : bool
        The estimator misreads a sparse matrix (XGBoost takes the zeros it does
        not store for missing values), so sparse preprocessing output is refused.
    """

    build: Callable[[Any, AffineMap, float], tuple[Estimator, DecisionRule]]
    trees: bool = False
    inputs: Callable[[Any, list[XColumn], Schema, InputSpace], list[XColumn]] | None = None
    dense_input: bool = False


_FOREST = FrontEnd(compile_forest, trees=True)

#: estimator class name -> its front end
FRONT_ENDS: dict[str, FrontEnd] = {
    "DecisionTreeClassifier": _FOREST,
    "ExtraTreeClassifier": _FOREST,
    "RandomForestClassifier": _FOREST,
    "ExtraTreesClassifier": _FOREST,
    "GradientBoostingClassifier": FrontEnd(compile_gb, trees=True),
    "HistGradientBoostingClassifier": FrontEnd(compile_hgb, trees=True),
    "XGBClassifier": FrontEnd(
        compile_xgb, trees=True, inputs=native_category_codes, dense_input=True
    ),
    "LGBMClassifier": FrontEnd(compile_lgbm, trees=True, inputs=native_category_codes),
    "SVC": FrontEnd(compile_svc),
    "NuSVC": FrontEnd(compile_svc),
    "MLPClassifier": FrontEnd(compile_mlp),
    "ExplainableBoostingClassifier": FrontEnd(compile_ebm, trees=True, inputs=ebm_inputs),
}

#: base class name -> the front end of its fitted subclasses not in FRONT_ENDS
#: (LogisticRegression, LinearSVC, SGDClassifier, RidgeClassifier, Perceptron, ...)
FAMILY_FRONT_ENDS: dict[str, FrontEnd] = {
    "LinearClassifierMixin": FrontEnd(compile_linear_mixin),
}

#: wrapper class name -> its front end ``(wrapper, margin, where, compile_inner) -> CompiledModel``,
#: given the dispatcher as ``compile_inner(model, where)`` for the model it wraps
WRAPPERS: dict[
    str, Callable[[Any, float, str, Callable[[Any, str], CompiledModel]], CompiledModel]
] = {
    "CalibratedClassifierCV": compile_calibrated,
    "Scorecard": compile_scorecard,
}


def _unwrap(model: Any) -> Any:
    """The user's model inside a model adapter and the relabelling wrapper of ``models.fit``."""
    if isinstance(model, ModelAdapter):
        model = model.model
    if isinstance(model, _Relabelled):
        model = model.pipeline
    return model


def _front_end(est: Any) -> FrontEnd:
    """The dispatch table's entry for the final estimator ``est``."""
    name = type(est).__name__
    entry = FRONT_ENDS.get(name)
    if entry is None and hasattr(est, "coef_"):
        bases = (c.__name__ for c in type(est).__mro__)
        entry = next((FAMILY_FRONT_ENDS[b] for b in bases if b in FAMILY_FRONT_ENDS), None)
    if entry is None:
        raise UnsupportedModelError(
            f"The model compiler does not support the estimator {name} (the model's final step). Supported: "
            f"{', '.join(SUPPORTED_ESTIMATORS)} (binary and multi-class), inside a scikit-learn "
            "Pipeline whose preprocessing uses "
            f"{', '.join(SUPPORTED_TRANSFORMERS)}. Use a model-agnostic method (e.g. cf.UFCE, cf.MDPSO, "
            "cf.NearestObservable) for other models."
        )
    return entry


def compile_model(model: Any, schema: Schema, *, margin: float = 1e-4) -> CompiledModel:
    """Compile a fitted classifier into the solver-neutral IR.

    Parameters
    ----------
    model : object
        A fitted scikit-learn ``Pipeline`` (preprocessing + estimator), a bare
        fitted estimator (fitted on the raw columns), an XGBoost / LightGBM
        sklearn classifier, a binary ``CalibratedClassifierCV`` with one
        calibrated model, or a :class:`~counterfact.models.ModelAdapter` of one
        of those.  ``docs/models.md`` lists what is supported.
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
        the message names it, its position in the pipeline and what is supported.
    """
    if not isinstance(schema, Schema):
        raise ValidationError(
            f"compile_model needs a counterfact Schema. Got {type(schema).__name__}."
        )
    if not (isinstance(margin, int | float) and np.isfinite(margin) and margin >= 0):
        raise ValidationError(f"margin must be a finite number >= 0. Got {margin!r}.")
    classes = getattr(model, "classes_", None)
    est, pre = split_pipeline(_unwrap(model))
    if classes is None:
        classes = getattr(est, "classes_", None)
    if classes is None:  # a wrapper that keeps its fitted classifier (optbinning's Scorecard)
        classes = getattr(getattr(est, "estimator_", None), "classes_", None)
    if classes is None:
        raise UnsupportedModelError(
            f"{type(model).__name__} has no classes_: the model compiler needs a fitted classifier."
        )
    if not hasattr(est, "fit") or not hasattr(est, "predict"):
        raise UnsupportedModelError(f"{type(est).__name__} is not a fitted estimator.")
    classes = np.asarray(classes)
    est = unfreeze(est)
    wrapper = WRAPPERS.get(type(est).__name__)
    if wrapper is None:
        compiled = _compile_estimator(est, pre, schema, float(margin), classes)
    else:
        where = "the final step" if pre else "the top level"
        inner = partial(
            _compile_inner,
            pre=pre,
            schema=schema,
            margin=float(margin),
            classes=np.asarray(getattr(est, "classes_", classes)),
        )
        compiled = wrapper(est, float(margin), where, inner)
    return _checked_classes(compiled, classes)


def _compile_inner(
    model: Any,
    where: str,
    *,
    pre: list[tuple[str, Any]],
    schema: Schema,
    margin: float,
    classes: np.ndarray,
) -> CompiledModel:
    """The dispatcher as a wrapper's front end calls it: the model inside the wrapper
    (a pipeline or an estimator), after the preprocessing ``pre`` in front of the wrapper."""
    est, inner_pre = split_pipeline(model, where)
    return _compile_estimator(unfreeze(est), pre + inner_pre, schema, margin, classes)


def _checked_classes(compiled: CompiledModel, classes: np.ndarray) -> CompiledModel:
    if len(classes) != compiled.rule.n_classes:
        raise UnsupportedModelError(
            f"The model exposes {len(classes)} classes but its estimator decides among {compiled.rule.n_classes}."
        )
    if compiled.classes is not classes:
        compiled = replace(compiled, classes=classes)
    return compiled


def _compile_estimator(
    est: Any, pre: list[tuple[str, Any]], schema: Schema, margin: float, classes: np.ndarray
) -> CompiledModel:
    """The final estimator ``est`` after the preprocessing steps ``pre``, through its front end."""
    name = type(est).__name__
    entry = _front_end(est)
    space = InputSpace.from_schema(schema)
    first = pre[0][1] if pre else est
    cols = input_columns(first, schema, space)
    for where, step in pre:
        cols = apply_transformer(step, cols, schema, space, where)
    if entry.inputs is not None:
        cols = entry.inputs(est, cols, schema, space)
    affine = build_affine(cols, schema, space, name)
    n_in = getattr(est, "n_features_in_", None)
    if n_in is not None and int(n_in) != affine.n_x:
        raise UnsupportedModelError(
            f"The preprocessing compiles to {affine.n_x} columns but {name} expects "
            f"{n_in}; the pipeline layout is not understood."
        )
    if entry.dense_input and pre and sparse_output(pre[-1][1]):
        raise UnsupportedModelError(
            f"{name} receives a sparse matrix from {pre[-1][0]}: it treats the zeros a sparse input does "
            "not store as missing values, which the model compiler does not encode. Make the "
            "preprocessing output dense (ColumnTransformer(sparse_threshold=0), "
            "OneHotEncoder(sparse_output=False))."
        )
    if entry.trees:
        affine = with_code_columns(affine)
    estimator, rule = entry.build(est, affine, margin)
    if isinstance(estimator, Linear | MLP) and not all(c.is_affine for c in affine.columns):
        affine, estimator = compile_nonaffine(affine, estimator, name)
    source = " -> ".join([type(s).__name__ for _, s in pre] + [name])
    return CompiledModel(
        inputs=space,
        affine=affine,
        estimator=estimator,
        rule=rule,
        classes=np.asarray(classes),
        schema=schema,
        source=source,
        estimator_class=name,
    )


def native_category_frame(model: Any, X: Any) -> Any:
    """``X`` with the columns a bare XGBoost / LightGBM model reads as pandas categories
    cast to ``pd.Categorical`` over the model's own categories (other models: ``X``).

    Such models (``enable_categorical=True`` / fitted on ``category`` columns) refuse
    the object columns counterfact passes around; a model adapter does this before
    ``predict`` / ``predict_proba`` (:func:`~counterfact.models._adapter.booster_category_frame`).
    """
    est, pre = split_pipeline(_unwrap(model))
    return X if pre else booster_category_frame(est, X)


def raw_thresholds(model: Any, schema: Schema | None = None) -> dict[str, np.ndarray]:
    """Distinct raw-unit tree cuts per numeric / ordinal feature.

    Parameters
    ----------
    model : CompiledModel or fitted model
        A compiled model, or a fitted model to compile against ``schema``.
    schema : Schema, optional
        Needed when ``model`` is not compiled yet.

    Returns
    -------
    dict
        ``{feature: sorted array of cuts t}``; a sample goes left at cut ``t``
        iff its raw value (rank for ordinals) is ``<= t``.  Integer and ordinal
        cuts are integers.  Only cuts inside the domain (``lower <= t < upper``)
        are listed.  Features the trees never split on are absent;
        categorical features and non-tree models give nothing
        (:meth:`CompiledModel.raw_thresholds`).
    """
    if not isinstance(model, CompiledModel):
        if schema is None:
            raise ValidationError("raw_thresholds needs the schema to compile a fitted model.")
        model = compile_model(model, schema)
    return model.raw_thresholds()
