"""Front end for preprocessing: scikit-learn transformers -> :class:`AffineMap`.

Every supported transformer acts column by column, so each estimator input is
a function of exactly one raw feature; we track that function as an
:class:`XColumn` (base value + scikit-learn's exact elementwise operations).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema, _py
from ._ir import AffineMap, InputSpace, XColumn

SUPPORTED_TRANSFORMERS = (
    "ColumnTransformer",
    "Pipeline",
    "OneHotEncoder",
    "OrdinalEncoder",
    "StandardScaler",
    "MinMaxScaler",
    "MaxAbsScaler",
    "RobustScaler",
    "FunctionTransformer(func=None)",
    "'passthrough'",
)


def _unsupported(element: str, why: str = "") -> UnsupportedModelError:
    extra = f" ({why})" if why else ""
    return UnsupportedModelError(
        f"The model compiler does not support the preprocessing element {element}{extra}. "
        f"Supported: {', '.join(SUPPORTED_TRANSFORMERS)}, with ColumnTransformer remainder "
        "'drop' or 'passthrough'. Rebuild the pipeline with these (counterfact.models.make_pipeline "
        "gives a supported layout), or use a model-agnostic method (e.g. cf.UFCE, cf.MDPSO)."
    )


# a column before any encoding: the raw DataFrame column itself
_RAW = "raw"


def _raw_column(schema: Schema, space: InputSpace, name: str) -> XColumn:
    if name not in schema:
        raise ValidationError(
            f"The model uses the column '{name}', which is not a feature of the schema "
            f"{schema.names}. Compile against the schema the model was trained with."
        )
    blk = space.block(name)
    return XColumn(name=name, feature=name, base=_RAW, base_coef=np.zeros(blk.size))


def _as_number(col: XColumn, schema: Schema, space: InputSpace, element: str) -> XColumn:
    """A raw column used as a number (passthrough / scaler) -> base 'value'."""
    if col.base != _RAW:
        return col
    f = schema[col.feature]
    blk = space.block(col.feature)
    if f.is_numeric:
        return replace(col, base="value", base_coef=np.ones(1))
    try:
        vals = np.asarray([float(c) for c in f.categories or ()], dtype=float)
    except (TypeError, ValueError):
        raise _unsupported(
            element,
            f"feature '{f.name}' is {f.kind} with non-numeric categories and reaches it without an "
            "encoder; encode it with OneHotEncoder or OrdinalEncoder",
        ) from None
    if f.kind == "ordinal":
        step = vals[1] - vals[0] if len(vals) > 1 else 0.0
        if not np.array_equal(vals, vals[0] + step * np.arange(len(vals))):
            raise _unsupported(
                element,
                f"ordinal feature '{f.name}' is used as a number but its levels {list(vals)} are not "
                "evenly spaced, so the value is not affine in the rank; use OrdinalEncoder",
            )
        return replace(col, base="value", base_coef=np.array([step]), base_const=float(vals[0]))
    del blk
    return replace(col, base="value", base_coef=vals)


def _with_op(col: XColumn, op: str, a: float) -> XColumn:
    a = float(a)
    s, o = col.scale, col.offset
    if op == "sub":
        o = o - a
    elif op == "div":
        s, o = s / a, o / a
    elif op == "mul":
        s, o = s * a, o * a
    else:
        o = o + a
    return replace(col, ops=(*col.ops, (op, a)), scale=s, offset=o)


def _encoder_common(enc: Any, element: str) -> None:
    if getattr(enc, "infrequent_categories_", None) is not None and any(
        c is not None for c in enc.infrequent_categories_
    ):
        raise _unsupported(element, "infrequent-category grouping (min_frequency/max_categories)")


def _one_hot(enc: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    element = "OneHotEncoder"
    _encoder_common(enc, element)
    drop_idx = getattr(enc, "drop_idx_", None)
    out = []
    for i, col in enumerate(cols):
        f = schema[col.feature]
        if col.base != _RAW or not f.is_categorical:
            raise _unsupported(
                element,
                f"it encodes feature '{f.name}' ({f.kind}); one-hot encoding is supported for binary "
                "and categorical features only (use OrdinalEncoder for ordinal features)",
            )
        lookup = {c: k for k, c in enumerate(f.categories)}  # type: ignore[arg-type]
        cats = [_py(c) for c in enc.categories_[i]]
        unknown_schema = [c for c in f.categories if c not in set(cats)]  # type: ignore[union-attr]
        if unknown_schema and getattr(enc, "handle_unknown", "error") == "error":
            raise ValidationError(
                f"Feature '{f.name}': categories {unknown_schema} of the schema are unknown to the "
                "model's OneHotEncoder, which would fail on them. Restrict the schema's categories."
            )
        drop = None if drop_idx is None else drop_idx[i]
        for k, c in enumerate(cats):
            if drop is not None and k == int(drop):
                continue
            coef = np.zeros(len(f.categories))  # type: ignore[arg-type]
            if c in lookup:
                coef[lookup[c]] = 1.0
            out.append(XColumn(name=f"{f.name}={c}", feature=f.name, base="indicator", base_coef=coef))
    return out


def _ordinal(enc: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    element = "OrdinalEncoder"
    _encoder_common(enc, element)
    out = []
    for i, col in enumerate(cols):
        f = schema[col.feature]
        if col.base != _RAW or f.is_numeric:
            raise _unsupported(element, f"it encodes the numeric feature '{f.name}'")
        cats = [_py(c) for c in enc.categories_[i]]
        pos = {c: k for k, c in enumerate(cats)}
        codes = []
        for c in f.categories:  # type: ignore[union-attr]
            if c in pos:
                codes.append(float(pos[c]))
            elif getattr(enc, "handle_unknown", "error") == "use_encoded_value":
                codes.append(float(enc.unknown_value))
            else:
                raise ValidationError(
                    f"Feature '{f.name}': category {c!r} of the schema is unknown to the model's "
                    "OrdinalEncoder, which would fail on it. Restrict the schema's categories."
                )
        codes_a = np.array(codes)
        if f.kind == "ordinal":
            step = codes_a[1] - codes_a[0] if len(codes_a) > 1 else 0.0
            if not np.array_equal(codes_a, codes_a[0] + step * np.arange(len(codes_a))):
                raise _unsupported(
                    element,
                    f"its category order for ordinal feature '{f.name}' differs from the schema's "
                    "level order, so the code is not affine in the rank; pass "
                    "categories=[schema levels in order]",
                )
            out.append(XColumn(name=f.name, feature=f.name, base="code", base_coef=np.array([step]),
                               base_const=float(codes_a[0])))
        else:
            out.append(XColumn(name=f.name, feature=f.name, base="code", base_coef=codes_a))
    return out


def _numeric_op(trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    name = type(trans).__name__
    cols = [_as_number(c, schema, space, name) for c in cols]
    n = len(cols)

    def vec(attr: str) -> np.ndarray:
        v = getattr(trans, attr)
        return np.broadcast_to(np.asarray(v, dtype=float), (n,))

    out = []
    if name == "StandardScaler":
        for j, c in enumerate(cols):
            if trans.with_mean:
                c = _with_op(c, "sub", vec("mean_")[j])
            if trans.with_std:
                c = _with_op(c, "div", vec("scale_")[j])
            out.append(c)
    elif name == "MinMaxScaler":
        if trans.clip:
            raise _unsupported("MinMaxScaler(clip=True)", "clipping is not affine")
        for j, c in enumerate(cols):
            out.append(_with_op(_with_op(c, "mul", vec("scale_")[j]), "add", vec("min_")[j]))
    elif name == "MaxAbsScaler":
        if getattr(trans, "clip", False):
            raise _unsupported("MaxAbsScaler(clip=True)", "clipping is not affine")
        out = [_with_op(c, "div", vec("scale_")[j]) for j, c in enumerate(cols)]
    elif name == "RobustScaler":
        for j, c in enumerate(cols):
            if trans.with_centering:
                c = _with_op(c, "sub", vec("center_")[j])
            if trans.with_scaling:
                c = _with_op(c, "div", vec("scale_")[j])
            out.append(c)
    else:  # pragma: no cover - dispatch guarantees the names
        raise _unsupported(name)
    return out


def apply_transformer(trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    """Columns after ``trans`` (fitted), given the columns it receives."""
    if trans is None or (isinstance(trans, str) and trans == "passthrough"):
        return list(cols)
    if isinstance(trans, str):
        raise _unsupported(repr(trans))
    name = type(trans).__name__
    if name == "ColumnTransformer":
        return _column_transformer(trans, cols, schema, space)
    if name == "Pipeline":
        for _, step in trans.steps:
            cols = apply_transformer(step, cols, schema, space)
        return cols
    if name == "OneHotEncoder":
        return _one_hot(trans, cols, schema, space)
    if name == "OrdinalEncoder":
        return _ordinal(trans, cols, schema, space)
    if name in ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler"):
        return _numeric_op(trans, cols, schema, space)
    if name == "FunctionTransformer" and trans.func is None:
        return list(cols)
    raise _unsupported(name)


def _column_transformer(ct: Any, cols: list[XColumn], schema: Schema, space: InputSpace) -> list[XColumn]:
    idx_map = getattr(ct, "_transformer_to_input_indices", None)
    out_idx = getattr(ct, "output_indices_", None)
    if idx_map is None or out_idx is None:
        raise _unsupported("ColumnTransformer", "not fitted, or from an unsupported scikit-learn version")
    n_out = max((s.stop for s in out_idx.values()), default=0)
    result: list[XColumn | None] = [None] * n_out
    for name, trans, _ in ct.transformers_:
        if isinstance(trans, str) and trans == "drop":
            continue
        indices = list(idx_map.get(name, []))
        sl = out_idx.get(name, slice(0, 0))
        if not indices and sl.stop == sl.start:
            continue
        sub = apply_transformer(trans, [cols[i] for i in indices], schema, space)
        if len(sub) != sl.stop - sl.start:
            raise _unsupported(
                f"ColumnTransformer part '{name}'",
                f"expected {sl.stop - sl.start} output columns, compiled {len(sub)}",
            )
        result[sl] = sub
    if any(c is None for c in result):
        raise _unsupported("ColumnTransformer", "could not account for every output column")
    return [c for c in result if c is not None]


def input_columns(first_step: Any, schema: Schema, space: InputSpace) -> list[XColumn]:
    """The raw columns the model receives (in the order of ``feature_names_in_``)."""
    names = getattr(first_step, "feature_names_in_", None)
    if names is None:
        names = schema.names
    return [_raw_column(schema, space, str(n)) for n in names]


def build_affine(cols: list[XColumn], schema: Schema, space: InputSpace, estimator_name: str) -> AffineMap:
    """Finish columns (raw -> number) and fold them into ``x = A z + c``."""
    cols = [_as_number(c, schema, space, f"the estimator {estimator_name}") for c in cols]
    A = np.zeros((len(cols), space.n))
    c_vec = np.zeros(len(cols))
    for j, col in enumerate(cols):
        blk = space.block(col.feature)
        A[j, blk.columns] = col.scale * col.base_coef
        c_vec[j] = col.scale * col.base_const + col.offset
    return AffineMap(A=A, c=c_vec, columns=tuple(cols), space=space)
