"""Front end for preprocessing: scikit-learn transformers -> :class:`AffineMap`.

Every supported transformer acts column by column, so each estimator input is
a function of exactly one raw feature; we track that function as an
:class:`XColumn` (base value + scikit-learn's exact elementwise operations,
:mod:`._columns` for the non-affine ones).  Encoders live in
:mod:`._encoders`, numeric transforms in :mod:`._numeric`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...exceptions import UnsupportedModelError, ValidationError
from ...schema import Schema
from ._encoders import RAW, encode_columns
from ._ir import AffineMap, InputSpace, XColumn
from ._numeric import as_number, numeric_columns

SUPPORTED_TRANSFORMERS = (
    "ColumnTransformer",
    "Pipeline",
    "OneHotEncoder",
    "OrdinalEncoder",
    "TargetEncoder",
    "StandardScaler",
    "MinMaxScaler",
    "MaxAbsScaler",
    "RobustScaler",
    "KBinsDiscretizer",
    "SimpleImputer",
    "MissingIndicator",
    "FunctionTransformer(func=None|np.log1p|np.log|np.sqrt|...)",
    "QuantileTransformer",
    "PowerTransformer",
    "'passthrough'",
)

_ENCODERS = ("OneHotEncoder", "OrdinalEncoder", "TargetEncoder")


def unsupported(element: str, where: str = "", why: str = "") -> UnsupportedModelError:
    """The error for an unsupported preprocessing element, naming it and its position."""
    at = f" at {where}" if where else ""
    extra = f" ({why})" if why else ""
    return UnsupportedModelError(
        f"The model compiler does not support the preprocessing element {element}{at}{extra}. "
        f"Supported: {', '.join(SUPPORTED_TRANSFORMERS)}, with ColumnTransformer remainder "
        "'drop' or 'passthrough' (see docs/models.md). Rebuild the pipeline with these "
        "(counterfact.models.make_pipeline gives a supported layout), or use a model-agnostic "
        "method (e.g. cf.UFCE, cf.MDPSO)."
    )


def _raw_column(schema: Schema, space: InputSpace, name: str) -> XColumn:
    if name not in schema:
        raise ValidationError(
            f"The model uses the column '{name}', which is not a feature of the schema "
            f"{schema.names}. Compile against the schema the model was trained with."
        )
    blk = space.block(name)
    return XColumn(name=name, feature=name, base=RAW, base_coef=np.zeros(blk.size))


def apply_transformer(
    trans: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str = ""
) -> list[XColumn]:
    """Columns after ``trans`` (fitted), given the columns it receives."""
    if trans is None or (isinstance(trans, str) and trans == "passthrough"):
        return list(cols)
    if isinstance(trans, str):
        raise unsupported(repr(trans), where)
    name = type(trans).__name__
    if name == "ColumnTransformer":
        return _column_transformer(trans, cols, schema, space, where)
    if name == "Pipeline":
        for k, (sname, step) in enumerate(trans.steps):
            cols = apply_transformer(step, cols, schema, space, f"{where} > step {k} ('{sname}')")
        return cols
    if name == "FeatureUnion":
        raise unsupported(name, where, "put the parts side by side in a ColumnTransformer instead")
    if name in _ENCODERS:
        return encode_columns(trans, cols, schema, space, where or "the top of the pipeline")
    out = numeric_columns(trans, cols, schema, space, where)
    if out is None:
        raise unsupported(name, where)
    return out


def _column_transformer(ct: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str) -> list[XColumn]:
    idx_map = getattr(ct, "_transformer_to_input_indices", None)
    out_idx = getattr(ct, "output_indices_", None)
    if idx_map is None or out_idx is None:
        raise unsupported("ColumnTransformer", where, "not fitted, or from an unsupported scikit-learn version")
    n_out = max((s.stop for s in out_idx.values()), default=0)
    result: list[XColumn | None] = [None] * n_out
    for name, trans, _ in ct.transformers_:
        if isinstance(trans, str) and trans == "drop":
            continue
        indices = list(idx_map.get(name, []))
        sl = out_idx.get(name, slice(0, 0))
        if not indices and sl.stop == sl.start:
            continue
        sub = apply_transformer(trans, [cols[i] for i in indices], schema, space, f"{where} > ColumnTransformer part '{name}'")
        if len(sub) != sl.stop - sl.start:
            raise unsupported(
                f"ColumnTransformer part '{name}'", where,
                f"expected {sl.stop - sl.start} output columns, compiled {len(sub)}",
            )
        result[sl] = sub
    if any(c is None for c in result):
        raise unsupported("ColumnTransformer", where, "could not account for every output column")
    return [c for c in result if c is not None]


def input_columns(first_step: Any, schema: Schema, space: InputSpace) -> list[XColumn]:
    """The raw columns the model receives (in the order of ``feature_names_in_``)."""
    names = getattr(first_step, "feature_names_in_", None)
    if names is None:
        names = schema.names
        n_in = getattr(first_step, "n_features_in_", None)
        if n_in is not None and int(n_in) != len(names):
            raise ValidationError(
                f"The model was fitted on {n_in} unnamed columns (a numpy array) but the schema has "
                f"{len(names)} features; fit it on a DataFrame, or on an array whose columns are the "
                "schema's features in schema order."
            )
    return [_raw_column(schema, space, str(n)) for n in names]


def build_affine(cols: list[XColumn], schema: Schema, space: InputSpace, estimator_name: str) -> AffineMap:
    """Finish columns (raw -> number) and fold them into ``x = A z + c``.

    Non-affine columns get a zero row (see :mod:`._columns`).
    """
    cols = [as_number(c, schema, space, f"the estimator {estimator_name}", "the estimator's input") for c in cols]
    A = np.zeros((len(cols), space.n))
    c_vec = np.zeros(len(cols))
    for j, col in enumerate(cols):
        if not col.is_affine:
            continue
        blk = space.block(col.feature)
        A[j, blk.columns] = col.scale * col.base_coef
        c_vec[j] = col.scale * col.base_const + col.offset
    return AffineMap(A=A, c=c_vec, columns=tuple(cols), space=space)
