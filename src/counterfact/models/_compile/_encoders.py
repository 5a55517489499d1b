"""Front end for the category encoders: OneHotEncoder, OrdinalEncoder, TargetEncoder.

Every encoder maps each input column's value to a few output values, so on a
raw feature with finitely many values -- the categories of a binary,
categorical or ordinal feature, the integers of an integer feature's domain --
each output column is a *table* over those values.  We obtain the table by
calling the fitted encoder itself on every value (bit-faithful, whatever the
options: ``drop``, ``handle_unknown``, infrequent-category grouping,
``unknown_value``, explicit ``categories``, sparse output), then:

* binary / categorical feature: the column is affine in the one-hot raw
  indicators (``base_coef`` = the table);
* ordinal feature: affine in the rank when the table is (an
  ``OrdinalEncoder`` in level order), else a ``("table", T)`` lookup over the
  rank (one-hot level indicators of an ordinal, target encodings, ...);
* integer feature: a lookup over ``z - lower`` (up to ``MAX_INTEGER_VALUES``
  domain values).

Real features cannot be encoded this way (infinitely many values); the error
suggests ``KBinsDiscretizer``.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from ...exceptions import ValidationError
from ...schema import Schema
from ._ir import InputSpace, XColumn
from ._support import unsupported
from ._xcolumns import RAW, table_column

__all__ = ["ENCODERS", "encode_columns"]

ENCODERS = ("OneHotEncoder", "OrdinalEncoder", "TargetEncoder")

MAX_INTEGER_VALUES = 100_000


def raw_values(
    schema: Schema, space: InputSpace, feature: str, element: str, where: str
) -> list[Any]:
    """Every value the raw feature can take (categories, ranks' levels, domain integers)."""
    f = schema[feature]
    if not f.is_numeric:
        return list(f.categories)  # type: ignore[arg-type]
    if f.kind == "integer":
        lo, hi = int(f.lower), int(f.upper)  # type: ignore[arg-type]
        if hi - lo + 1 > MAX_INTEGER_VALUES:
            raise unsupported(
                element,
                where,
                f"it encodes the integer feature '{feature}', whose domain [{lo}, {hi}] has more "
                f"than {MAX_INTEGER_VALUES} values; bin it with KBinsDiscretizer or scale it "
                "instead",
            )
        return list(range(lo, hi + 1))
    raise unsupported(
        element,
        where,
        f"it encodes the real feature '{feature}' as categories; bin it with KBinsDiscretizer "
        "or scale it instead",
    )


def _n_outputs(enc: Any) -> list[int]:
    name = type(enc).__name__
    n_in = int(enc.n_features_in_)
    if name == "OneHotEncoder":
        return [int(v) for v in enc._n_features_outs]
    if name == "TargetEncoder":
        k = len(enc.classes_) if getattr(enc, "target_type_", "") == "multiclass" else 1
        return [k] * n_in
    return [1] * n_in


def _frame(enc: Any, columns: list[np.ndarray]) -> Any:
    names = getattr(enc, "feature_names_in_", None)
    if names is not None:
        return pd.DataFrame({str(n): c for n, c in zip(names, columns, strict=True)})
    out = np.empty((len(columns[0]), len(columns)), dtype=object)
    for j, c in enumerate(columns):
        out[:, j] = c
    return out


def _typed(values: list[Any], like: np.ndarray) -> np.ndarray:
    """``values`` as an array of the encoder's category dtype when possible."""
    if like.dtype != object:
        try:
            return np.asarray(values, dtype=like.dtype)
        except (TypeError, ValueError):
            pass
    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def encode_columns(
    enc: Any, cols: list[XColumn], schema: Schema, space: InputSpace, where: str
) -> list[XColumn]:
    """Output columns of a fitted category encoder (one of :data:`ENCODERS`) fed the raw
    columns ``cols``."""
    where = where or "the top of the pipeline"
    element = type(enc).__name__
    counts = _n_outputs(enc)
    if len(counts) != len(cols):
        raise unsupported(
            element, where, f"it was fitted on {len(counts)} columns but receives {len(cols)}"
        )
    cats = list(enc.categories_)
    fill = [c[0] if len(c) else 0 for c in cats]
    names = enc.get_feature_names_out()
    labels_of = []
    for col in cols:
        if col.base != RAW:
            raise unsupported(
                element,
                where,
                f"it receives feature '{col.feature}' after a numeric transform; encoders are "
                "supported on raw columns (optionally through SimpleImputer)",
            )
        labels_of.append(raw_values(schema, space, col.feature, element, where))
    # one call: input column i takes its values in its own block of rows, the others a known value
    sizes = [len(v) for v in labels_of]
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    columns = []
    for j in range(len(cols)):
        vals = [fill[j]] * int(offsets[-1])
        vals[offsets[j] : offsets[j + 1]] = labels_of[j]
        columns.append(_typed(vals, cats[j]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            T = enc.transform(_frame(enc, columns))
        except ValueError as exc:
            bad = []
            for i, col in enumerate(cols):
                known = {_py(c) for c in cats[i]}
                bad += [(col.feature, v) for v in labels_of[i] if v not in known][:3]
            raise ValidationError(
                f"The model's {element} ({where}) fails on values of the features' domains "
                f"{bad[:5]} (it was fitted without them and handle_unknown='error'). Restrict the "
                "schema's categories / bounds to what the encoder knows, or refit it with "
                "handle_unknown='ignore' (OneHotEncoder) or 'use_encoded_value' (OrdinalEncoder). "
                f"scikit-learn said: {exc}"
            ) from None
    T = T.toarray() if hasattr(T, "toarray") else np.asarray(T)
    T = np.asarray(T, dtype=float)
    out: list[XColumn] = []
    start = 0
    for i, col in enumerate(cols):
        block = T[offsets[i] : offsets[i + 1]]
        for m in range(start, start + counts[i]):
            out.append(table_column(str(names[m]), space, col.feature, block[:, m]))
        start += counts[i]
    return out


def _py(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v
