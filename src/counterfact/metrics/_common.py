"""Shared plumbing of the metrics: argument coercion, training statistics and
the dispatch that lets every metric take a :class:`~counterfact.result.CounterfactualResult`.

A result is recognised by duck typing (it has ``counterfactuals`` and
``queries``), so that this package never imports :mod:`counterfact.result`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data._dataset import mad as _mad
from ..exceptions import ValidationError
from ..schema import Schema

#: relative tolerance under which two numeric values count as equal (the same
#: as :func:`counterfact.constraints._bounds.changed`)
NUM_TOL = 1e-7


def is_result(obj: Any) -> bool:
    """Whether ``obj`` looks like a :class:`~counterfact.result.CounterfactualResult`."""
    return hasattr(obj, "counterfactuals") and hasattr(obj, "queries")


def as_row(query: Any, what: str = "query") -> pd.Series:
    """One raw row as a Series (a one-row DataFrame is accepted)."""
    if isinstance(query, pd.DataFrame):
        if len(query) != 1:
            raise ValidationError(
                f"The {what} must be one row (a Series or a one-row DataFrame). Got "
                f"{len(query)} rows; pass a CounterfactualResult to evaluate many queries at "
                "once."
            )
        return query.iloc[0]
    if isinstance(query, pd.Series):
        return query
    if isinstance(query, Mapping):
        return pd.Series(dict(query))
    raise ValidationError(
        f"The {what} must be a pandas Series (one raw row). Got {type(query).__name__}."
    )


def as_frame(counterfactuals: Any, schema: Schema, what: str = "counterfactuals") -> pd.DataFrame:
    """Raw rows as a DataFrame holding at least the schema's columns."""
    if isinstance(counterfactuals, pd.Series):
        counterfactuals = counterfactuals.to_frame().T
    if not isinstance(counterfactuals, pd.DataFrame):
        raise ValidationError(
            f"The {what} must be a pandas DataFrame of raw rows with columns {schema.names}. "
            f"Got {type(counterfactuals).__name__}."
        )
    missing = [n for n in schema.names if n not in counterfactuals.columns]
    if missing:
        raise ValidationError(
            f"The {what} lack the columns {missing}. Expected the schema's columns {schema.names}."
        )
    return counterfactuals


def need_schema(schema: Any, fn: str) -> Schema:
    if not isinstance(schema, Schema):
        raise ValidationError(
            f"{fn} needs the schema (a counterfact.Schema). Got {type(schema).__name__}."
        )
    return schema


def cont_mask(schema: Schema) -> np.ndarray:
    """Features measured on a scale (numeric values, ordinal ranks)."""
    return np.array([not f.is_categorical for f in schema], dtype=bool)


def cat_mask(schema: Schema) -> np.ndarray:
    """Unordered features (binary, categorical): compared by equality only."""
    return np.array([f.is_categorical for f in schema], dtype=bool)


# --------------------------------------------------------------- training data
class TrainData:
    """Validated training features and labels, so that :func:`evaluate` checks them once."""

    def __init__(self, train: Any, schema: Schema) -> None:
        self.schema = schema
        self.X, self.y = train_parts(train, schema)


def train_parts(train: Any, schema: Schema) -> tuple[pd.DataFrame, pd.Series | None]:
    """Features and labels of a training :class:`~counterfact.data.Dataset` or DataFrame."""
    if isinstance(train, TrainData) and train.schema is schema:
        return train.X, train.y
    if hasattr(train, "X") and hasattr(train, "y") and hasattr(train, "schema"):
        return schema.validate_frame(train.X, what="train"), train.y
    if isinstance(train, pd.DataFrame):
        X = schema.validate_frame(train, what="train")
        y = (
            train[schema.target]
            if schema.target is not None and schema.target in train.columns
            else None
        )
        return X, y
    raise ValidationError(
        "train must be a counterfact.Dataset (or a DataFrame with the schema's columns). "
        f"Got {type(train).__name__}."
    )


def per_feature(values: Any, schema: Schema, name: str, *, default: Any = 1.0) -> np.ndarray:
    """A per-feature vector (schema order) from an array or a ``{name: value}`` mapping
    (features the mapping omits take ``default``, a scalar or a per-feature array)."""
    if isinstance(values, Mapping):
        unknown = sorted(set(values) - set(schema.names))
        if unknown:
            raise ValidationError(
                f"{name} names unknown features {unknown}. Known features: {schema.names}."
            )
        out = np.array(np.broadcast_to(np.asarray(default, dtype=float), (len(schema),)))
        for k, v in values.items():
            out[schema.index(k)] = float(v)
    else:
        out = np.asarray(values, dtype=float).reshape(-1)
        if out.size != len(schema):
            raise ValidationError(
                f"{name} must have one value per feature ({len(schema)}, in schema order) or "
                f"be a mapping {{feature: value}}. Got {out.size} values."
            )
    return out


def resolve_mad(
    schema: Schema, mad: Any = None, train: Any = None, fn: str = "this metric"
) -> np.ndarray:
    """The MAD vector: given explicitly, else computed from ``train`` (see
    :func:`counterfact.data._dataset.mad`)."""
    if mad is not None:
        if isinstance(mad, Mapping):
            missing = [f.name for f in schema if not f.is_categorical and f.name not in mad]
            if missing:
                raise ValidationError(f"mad lacks values for the continuous features {missing}.")
        out = per_feature(mad, schema, "mad")
    elif train is not None:
        out = _mad(train_parts(train, schema)[0], schema)
    else:
        raise ValidationError(
            f"{fn} weights distances by the median absolute deviation (MAD). Pass mad= (one "
            "value per feature, schema order, or a mapping) or train= (the training "
            "Dataset)."
        )
    # a categorical feature's MAD is never read (a category change moves 1)
    used = np.array([not f.is_categorical for f in schema], dtype=bool)
    bad = [schema.names[j] for j in np.flatnonzero(used & (~np.isfinite(out) | (out <= 0)))]
    if bad:
        raise ValidationError(
            f"MAD values must be finite and positive. Got non-positive values for {bad}."
        )
    return np.where(used, out, 1.0)


def observed_ranges(X: pd.DataFrame, schema: Schema) -> np.ndarray:
    """Observed width of each feature in ``X`` (max - min; ordinal ranks; 1 for
    categorical ones); zero widths become 1."""
    out = np.ones(len(schema))
    for j, f in enumerate(schema):
        if f.is_numeric:
            v = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
            out[j] = float(v.max() - v.min()) if v.size else 1.0
        elif f.kind == "ordinal":
            r = _ranks(X[f.name], f.categories)  # type: ignore[arg-type]
            out[j] = float(np.nanmax(r) - np.nanmin(r)) if r.size else 1.0
    out[~(out > 0)] = 1.0
    return out


def _ranks(column: pd.Series, levels: Sequence[Any]) -> np.ndarray:
    """The ranks of an ordinal column's values among ``levels`` (NaN for unknown values)."""
    return column.map({c: i for i, c in enumerate(levels)}).to_numpy(dtype=float)


def resolve_ranges(schema: Schema, ranges: Any = None) -> np.ndarray:
    """Per-feature normalising ranges ``R_j``: given, or the schema's (:meth:`Schema.ranges`)."""
    if ranges is None:
        return schema.ranges()
    out = per_feature(ranges, schema, "ranges", default=schema.ranges())
    out = np.where(cat_mask(schema), 1.0, out)
    bad = [schema.names[j] for j in np.flatnonzero(~np.isfinite(out) | (out <= 0))]
    if bad:
        raise ValidationError(
            f"ranges must be finite and positive. Got non-positive ranges for {bad}."
        )
    return out


def std_scale(train: Any, schema: Schema) -> np.ndarray:
    """Standard deviation of each numeric feature (ordinal: of the ranks) in ``train``.

    A zero deviation becomes 1.
    """
    X, _ = train_parts(train, schema)
    out = np.ones(len(schema))
    for j, f in enumerate(schema):
        if f.is_numeric:
            v = pd.to_numeric(X[f.name]).to_numpy(dtype=float)
        elif f.kind == "ordinal":
            v = _ranks(X[f.name], f.categories)  # type: ignore[arg-type]
        else:
            continue
        s = float(np.std(v))
        out[j] = s if s > 0 else 1.0
    return out


# ------------------------------------------------------------------ dispatch
def query_frames(result: Any) -> list[tuple[Any, pd.Series, pd.DataFrame]]:
    """``(query id, query row, its counterfactuals)`` for every query of a result."""
    cfs = result.counterfactuals
    out = []
    if len(cfs):
        groups = {k: v for k, v in cfs.groupby(level=0, sort=False)}
    else:
        groups = {}
    empty = cfs.iloc[0:0]
    for q in result.queries.index:
        out.append((q, result.queries.loc[q], groups.get(q, empty)))
    return out


def per_query(
    result: Any, fn: Callable[[Any, pd.Series, pd.DataFrame], float], name: str
) -> pd.Series:
    """A query-level metric for every query of a result (index: query id)."""
    values = [fn(q, x, cf) for q, x, cf in query_frames(result)]
    return pd.Series(values, index=result.queries.index, name=name, dtype=float)


def mean_or_nan(values: np.ndarray) -> float:
    """Mean of a possibly empty array (NaN when empty or all NaN)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0 or np.all(np.isnan(values)):
        return float("nan")
    return float(np.nanmean(values))
