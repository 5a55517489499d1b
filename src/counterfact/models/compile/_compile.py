"""``compile_model``: dispatch a fitted model to the front ends."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from ._ir import MLP, CompiledModel, InputSpace, Linear
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
    "CalibratedClassifierCV(method='sigmoid'|'isotonic', ensemble=False), binary",
)

_FOREST = ("DecisionTreeClassifier", "ExtraTreeClassifier", "RandomForestClassifier", "ExtraTreesClassifier")


def _unwrap(model: Any) -> Any:
    from .._adapter import ModelAdapter
    from .._fit import _Relabelled

    if isinstance(model, ModelAdapter):
        model = model.model
    if isinstance(model, _Relabelled):
        model = model.pipeline
    return model


def _split_model(model: Any, where: str = "") -> tuple[Any, list[tuple[str, Any]]]:
    """``(final estimator, [(position, preprocessing step), ...])``, nested pipelines flattened."""
    model = _unwrap(model)
    if type(model).__name__ != "Pipeline":
        return model, []
    pre: list[tuple[str, Any]] = []
    steps = list(model.steps)
    for k, (name, step) in enumerate(steps[:-1]):
        pos = f"{where}step {k} ('{name}') of the pipeline"
        if type(step).__name__ == "Pipeline":
            inner_est, inner_pre = _split_model(step, f"{pos} > ")
            pre.extend(inner_pre)
            pre.append((f"{pos} > its last step", inner_est))
        elif step is None or (isinstance(step, str) and step == "passthrough"):
            continue
        else:
            pre.append((pos, step))
    name, last = steps[-1]
    if type(last).__name__ == "Pipeline":
        inner_est, inner_pre = _split_model(last, f"{where}step {len(steps) - 1} ('{name}') of the pipeline > ")
        return inner_est, pre + inner_pre
    return last, pre


_TREES = (*_FOREST, "GradientBoostingClassifier", "HistGradientBoostingClassifier", "XGBClassifier", "LGBMClassifier")


def _native_category_codes(est: Any, cols: list[Any], schema: Schema, space: InputSpace) -> list[Any]:
    """Columns an XGBoost / LightGBM model reads as pandas categories -> the model's category codes."""
    from ._boosters import native_categories
    from ._encoders import RAW, table_column

    cats = native_categories(est)
    if not cats:
        return cols
    out = list(cols)
    name = type(est).__name__
    for j, model_cats in cats.items():
        col = cols[j]
        f = schema[col.feature]
        if col.base != RAW or f.is_numeric:
            raise UnsupportedModelError(
                f"{name} reads input column {j} ('{col.name}') as a categorical, but it is not a raw "
                "categorical / ordinal feature of the schema; declare the feature categorical or ordinal."
            )
        pos = {c: k for k, c in enumerate(model_cats)}
        unknown = [c for c in f.categories or () if c not in pos]
        if unknown:
            raise ValidationError(
                f"Feature '{f.name}': categories {unknown[:5]} of the schema are unknown to the {name} "
                "model (it was fitted without them). Restrict the schema's categories, or fit the model on "
                "pandas categoricals holding every category (pd.Categorical(..., categories=schema levels))."
            )
        codes = np.array([float(pos[c]) for c in f.categories or ()])
        out[j] = table_column(col.name, space, col.feature, codes)
    return out


def _sparse_output(step: Any) -> bool:
    """Whether a fitted preprocessing step outputs a scipy sparse matrix."""
    name = type(step).__name__
    if name == "ColumnTransformer":
        return bool(getattr(step, "sparse_output_", False))
    if name == "Pipeline":
        return _sparse_output(step.steps[-1][1])
    if name == "OneHotEncoder":
        return bool(step.sparse_output)
    if name == "KBinsDiscretizer":
        return step.encode == "onehot"
    return False


def _with_code_columns(affine: Any) -> Any:
    """Append the monotone code of every numeric table column (for tree split rewriting)."""
    from dataclasses import replace

    from ._columns import split_at_table
    from ._ir import XColumn
    from ._numeric import with_op

    extra: list[Any] = []
    code_of: dict[int, int] = {}
    seen: dict[tuple[Any, ...], int] = {}
    n = affine.n_x
    for j, col in enumerate(affine.columns):
        blk = affine.space.block(col.feature)
        if col.shape != "table" or blk.kind not in ("real", "integer"):
            continue
        prefix, _ = split_at_table(col.ops)
        key = (col.feature, *((op, id(a) if op == "fn" else a) for op, a in prefix))
        if key not in seen:
            aux = XColumn(name=f"{col.name} (code)", feature=col.feature, base=col.base,
                          base_coef=col.base_coef, base_const=col.base_const)
            for op, a in prefix:
                aux = with_op(aux, op, a)
            seen[key] = n + len(extra)
            extra.append(aux)
        code_of[j] = seen[key]
    if not extra:
        return affine
    cols = (*affine.columns, *extra)
    A = np.zeros((len(cols), affine.space.n))
    c = np.zeros(len(cols))
    A[:n], c[:n] = affine.A, affine.c
    for i, col in enumerate(extra, start=n):
        if col.is_affine:
            A[i, affine.space.block(col.feature).columns] = col.scale * col.base_coef
            c[i] = col.scale * col.base_const + col.offset
    return replace(affine, A=A, c=c, columns=cols, code_columns=code_of)


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
        f"The model compiler does not support the estimator {name} (the model's final step). Supported: "
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
    classes = np.asarray(classes)
    from ._calibrated import unfreeze

    if type(est).__name__ == "CalibratedClassifierCV":
        from ._calibrated import calibrated_parts, compile_calibrated

        where = "the final step" if pre else "the top level"
        cc = calibrated_parts(est, where)
        base = unfreeze(cc.estimator)
        base_est, base_pre = _split_model(base, "the calibrated model's ")
        inner = _compile_parts(unfreeze(base_est), pre + base_pre, schema, float(margin), np.asarray(est.classes_))
        out = compile_calibrated(cc, base, inner, float(margin), where)
        return _checked_classes(out, classes)
    return _checked_classes(_compile_parts(unfreeze(est), pre, schema, float(margin), classes), classes)


def _checked_classes(compiled: CompiledModel, classes: np.ndarray) -> CompiledModel:
    if len(classes) != compiled.rule.n_classes:
        raise UnsupportedModelError(
            f"The model exposes {len(classes)} classes but its estimator decides among {compiled.rule.n_classes}."
        )
    if compiled.classes is not classes:
        from dataclasses import replace

        compiled = replace(compiled, classes=classes)
    return compiled


def _compile_parts(est: Any, pre: list[tuple[str, Any]], schema: Schema, margin: float, classes: np.ndarray) -> CompiledModel:
    space = InputSpace.from_schema(schema)
    first = pre[0][1] if pre else est
    cols = input_columns(first, schema, space)
    for where, step in pre:
        cols = apply_transformer(step, cols, schema, space, where)
    name = type(est).__name__
    if name in ("XGBClassifier", "LGBMClassifier"):
        cols = _native_category_codes(est, cols, schema, space)
    affine = build_affine(cols, schema, space, name)
    n_in = getattr(est, "n_features_in_", None)
    if n_in is not None and int(n_in) != affine.n_x:
        raise UnsupportedModelError(
            f"The preprocessing compiles to {affine.n_x} columns but {name} expects "
            f"{n_in}; the pipeline layout is not understood."
        )
    if name == "XGBClassifier" and pre and _sparse_output(pre[-1][1]):
        raise UnsupportedModelError(
            f"XGBClassifier receives a sparse matrix from {pre[-1][0]}: XGBoost treats the zeros a sparse "
            "input does not store as missing values, which the model compiler does not encode. Make the "
            "preprocessing output dense (ColumnTransformer(sparse_threshold=0), "
            "OneHotEncoder(sparse_output=False))."
        )
    if name in _TREES:
        affine = _with_code_columns(affine)
    estimator, rule = _estimator(est, affine, margin)
    if isinstance(estimator, Linear | MLP) and not all(c.is_affine for c in affine.columns):
        from ._lift import lift

        affine, estimator = lift(affine, estimator, name)
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
    the object columns counterfact passes around; a model adapter calls this before
    ``predict`` / ``predict_proba``.
    """
    import pandas as pd

    est, pre = _split_model(model)
    if pre or type(est).__name__ not in ("XGBClassifier", "LGBMClassifier") or not isinstance(X, pd.DataFrame):
        return X
    from ._boosters import native_categories

    cats = native_categories(est)
    if not cats:
        return X
    names = list(getattr(est, "feature_names_in_", X.columns))
    out = X.copy()
    for j, values in cats.items():
        name = str(names[j])
        if name in out.columns and not isinstance(out[name].dtype, pd.CategoricalDtype):
            out[name] = pd.Categorical(out[name], categories=values)
    return out
