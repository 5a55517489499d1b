"""The dispatcher: ``compile_model`` sends a fitted model to its front ends.

It unwraps the model (a :class:`~counterfact.models.ModelAdapter`, the
relabelling wrapper of :func:`counterfact.models.fit`), takes its pipeline
apart (:func:`._pre.split_pipeline`), folds the preprocessing into the IR's
:class:`AffineMap` (:mod:`._pre`) and compiles the final estimator with the
front end the registry gives its class (:func:`._frontend.front_end_for`,
walking the class's MRO).  Models that wrap one inner model
(``CalibratedClassifierCV``, optbinning's ``Scorecard``) have a
:class:`~._frontend.WrapperFrontEnd`, which receives the dispatcher as a
callable.  The front-end modules register their front ends when imported:
this module imports them all.

This is the top of the compiler: no other module of it imports this one.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from .._adapter import ModelAdapter, booster_category_frame
from .._fit import _Relabelled

# the front-end modules: importing one registers its front ends
from . import (  # noqa: F401
    _boosters,
    _calibrated,
    _catboost,
    _ebm,
    _onnx,
    _optbinning,
    _sk_linear,
    _sk_trees,
    _torch,
)
from ._calibrated import unfreeze
from ._frontend import FrontEnd, WrapperFrontEnd, front_end_for, supported_estimators
from ._ir import MLP, CompiledModel, InputSpace, Linear
from ._pre import apply_transformer, build_affine, input_columns, sparse_output, split_pipeline
from ._splits import with_code_columns
from ._steps import compile_nonaffine
from ._support import SUPPORTED_TRANSFORMERS

__all__ = [
    "SUPPORTED_ESTIMATORS",
    "compile_model",
    "native_category_frame",
    "raw_thresholds",
]

#: what the registered front ends compile (each front end's ``supported``)
SUPPORTED_ESTIMATORS: tuple[str, ...] = supported_estimators()


def _unwrap(model: Any) -> Any:
    """The user's model inside a model adapter and the relabelling wrapper of ``models.fit``."""
    if isinstance(model, ModelAdapter):
        model = model.model
    if isinstance(model, _Relabelled):
        model = model.pipeline
    return model


def _front_end(est: Any) -> FrontEnd:
    """The registered front end of the final estimator ``est``."""
    entry = front_end_for(type(est))
    if entry is None:
        raise UnsupportedModelError(
            f"The model compiler does not support the estimator {type(est).__name__} (the "
            f"model's final step). Supported: {', '.join(supported_estimators())} (binary and "
            "multi-class), inside a scikit-learn Pipeline whose preprocessing uses "
            f"{', '.join(SUPPORTED_TRANSFORMERS)}. Use a model-agnostic method (e.g. cf.UFCE, "
            "cf.MDPSO, cf.NearestObservable) for other models."
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
    _check_arguments(schema, margin)
    margin = float(margin)
    est, pre = split_pipeline(_unwrap(model))
    classes = _model_classes(model, est)
    if not hasattr(est, "predict"):
        raise UnsupportedModelError(f"{type(est).__name__} is not a fitted estimator.")
    est = unfreeze(est)
    entry = _front_end(est)
    if not isinstance(entry, WrapperFrontEnd):
        try:
            compiled = _compile_estimator(est, pre, schema, margin, classes)
        except UnsupportedModelError as exc:
            raise _placed(exc, _unwrap(model)) from None
        return _checked_classes(compiled, classes)
    where = "the final step" if pre else "the top level"
    inner = partial(
        _compile_inner,
        pre=pre,
        schema=schema,
        margin=margin,
        classes=np.asarray(getattr(est, "classes_", classes)),
    )
    return _checked_classes(entry.compile_wrapper(est, margin, where, inner), classes)


def _placed(exc: UnsupportedModelError, model: Any) -> UnsupportedModelError:
    """``exc`` saying where its estimator sits when ``model`` is a pipeline and the message
    names no position yet (a preprocessing step's does)."""
    text = str(exc)
    if type(model).__name__ != "Pipeline" or "of the pipeline" in text:
        return exc
    name = model.steps[-1][0]
    return UnsupportedModelError(f"{text} (It is the final step ('{name}') of the pipeline.)")


def _check_arguments(schema: Any, margin: Any) -> None:
    """The errors for a schema that is no :class:`Schema` and a bad ``margin``."""
    if not isinstance(schema, Schema):
        raise ValidationError(
            f"compile_model needs a counterfact Schema. Got {type(schema).__name__}."
        )
    if not (isinstance(margin, int | float) and np.isfinite(margin) and margin >= 0):
        raise ValidationError(f"margin must be a finite number >= 0. Got {margin!r}.")


def _model_classes(model: Any, est: Any) -> np.ndarray:
    """The class labels of ``model`` (whose final estimator is ``est``)."""
    classes = getattr(model, "classes_", None)
    if classes is None:
        classes = getattr(est, "classes_", None)
    if classes is None:  # a wrapper that keeps its fitted classifier (optbinning's Scorecard)
        classes = getattr(getattr(est, "estimator_", None), "classes_", None)
    if classes is None:
        raise UnsupportedModelError(
            f"{type(model).__name__} has no classes_: the model compiler needs a fitted classifier."
        )
    return np.asarray(classes)


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
            f"The model exposes {len(classes)} classes but its estimator decides among "
            f"{compiled.rule.n_classes}."
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
    if isinstance(entry, WrapperFrontEnd):
        raise UnsupportedModelError(
            f"The model compiler does not support {name} inside another wrapper; compile "
            "the model it wraps, or wrap a supported estimator once."
        )
    space = InputSpace.from_schema(schema)
    affine = _affine_map(est, entry, pre, schema, space)
    estimator, rule = entry.compile(est, affine, margin)
    if isinstance(estimator, Linear | MLP) and not all(c.is_affine for c in affine.columns):
        affine, estimator = compile_nonaffine(affine, estimator, name)
    return CompiledModel(
        inputs=space,
        affine=affine,
        estimator=estimator,
        rule=rule,
        classes=np.asarray(classes),
        schema=schema,
        source=" -> ".join([type(s).__name__ for _, s in pre] + [name]),
        estimator_class=name,
        front_end=entry.name,
    )


def _affine_map(
    est: Any, entry: FrontEnd, pre: list[tuple[str, Any]], schema: Schema, space: InputSpace
) -> Any:
    """The preprocessing ``pre`` folded into the :class:`AffineMap` of the columns
    ``est`` reads (as its front end ``entry`` declares them)."""
    name = type(est).__name__
    cols = input_columns(pre[0][1] if pre else est, schema, space)
    for where, step in pre:
        cols = apply_transformer(step, cols, schema, space, where)
    affine = build_affine(entry.inputs(est, cols, schema, space), schema, space, name)
    n_in = getattr(est, "n_features_in_", None)
    if n_in is not None and int(n_in) != affine.n_x:
        raise UnsupportedModelError(
            f"The preprocessing compiles to {affine.n_x} columns but {name} expects "
            f"{n_in}; the pipeline layout is not understood."
        )
    if entry.dense_input and pre and sparse_output(pre[-1][1]):
        raise UnsupportedModelError(
            f"{name} receives a sparse matrix from {pre[-1][0]}: it treats the zeros a sparse "
            "input does not store as missing values, which the model compiler does not encode. "
            "Make the preprocessing output dense (ColumnTransformer(sparse_threshold=0), "
            "OneHotEncoder(sparse_output=False))."
        )
    return with_code_columns(affine) if entry.trees else affine


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
