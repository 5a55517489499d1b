"""Schema inference from a DataFrame (the body of :meth:`counterfact.Schema.infer`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._utils._values import _py
from ..exceptions import SchemaError, ValidationError
from ._feature import NUMERIC_KINDS, Feature
from ._resolution import infer_resolution


def infer_features(
    frame: pd.DataFrame,
    target: str | None = None,
    *,
    kinds: Mapping[str, str] | None = None,
    categories: Mapping[str, Sequence[Any]] | None = None,
    bounds: Mapping[str, tuple[float, float]] | None = None,
    immutable: Iterable[str] = (),
    increasing: Iterable[str] = (),
    decreasing: Iterable[str] = (),
    max_categories: int = 20,
    resolution: Mapping[str, float] | None = None,
) -> tuple[list[Feature], tuple[Any, ...] | None]:
    """The features and classes :meth:`counterfact.Schema.infer` builds (see there)."""
    if not isinstance(frame, pd.DataFrame):
        raise ValidationError(f"Schema.infer needs a pandas DataFrame. Got {type(frame).__name__}.")
    kinds = dict(kinds or {})
    categories = dict(categories or {})
    bounds = dict(bounds or {})
    resolution = dict(resolution or {})
    act: dict[str, str] = {}
    for names, a in (
        (immutable, "immutable"),
        (increasing, "increasing"),
        (decreasing, "decreasing"),
    ):
        for n in names:
            if n in act:
                raise SchemaError(f"Feature '{n}' is given two actionabilities: {act[n]} and {a}.")
            act[n] = a
    if target is not None and target not in frame.columns:
        raise ValidationError(
            f"Target column '{target}' not in the frame's columns {list(frame.columns)}."
        )
    cols = [c for c in frame.columns if c != target]
    for mapping, label in (
        (kinds, "kinds"),
        (categories, "categories"),
        (bounds, "bounds"),
        (act, "actionability"),
        (resolution, "resolution"),
    ):
        unknown = [n for n in mapping if n not in cols]
        if unknown:
            raise SchemaError(f"{label} overrides name unknown columns {unknown}. Columns: {cols}.")
    feats: list[Feature] = []
    for c in cols:
        s = frame[c]
        if s.isna().any():
            raise ValidationError(
                f"Column '{c}' has missing values; impute or drop them before inferring a schema."
            )
        kind = kinds.get(c)
        cats = categories.get(c)
        if kind is None:
            if isinstance(s.dtype, pd.CategoricalDtype):
                kind = "ordinal" if s.dtype.ordered else "categorical"
                if cats is None:
                    cats = list(s.dtype.categories)
            elif pd.api.types.is_bool_dtype(s):
                kind = "binary"
            elif pd.api.types.is_numeric_dtype(s):
                vals = s.to_numpy(dtype=float)
                uniq = np.unique(vals)
                if set(uniq.tolist()) <= {0.0, 1.0} and len(uniq) == 2:
                    kind = "binary"
                elif np.all(np.abs(vals - np.round(vals)) < 1e-9):
                    kind = "integer"
                else:
                    kind = "real"
            else:
                kind = "categorical"
        a = act.get(c, "free")
        if kind in NUMERIC_KINDS:
            lo, hi = bounds.get(c, (float(pd.to_numeric(s).min()), float(pd.to_numeric(s).max())))
            res = resolution.get(c)
            if (
                res is None
            ):  # the step the column is recorded in (integers: 1 unless plainly coarser)
                res = infer_resolution(
                    pd.to_numeric(s).to_numpy(dtype=float), integer=kind == "integer"
                )
            feats.append(Feature(c, kind, lower=lo, upper=hi, actionability=a, resolution=res))  # type: ignore[arg-type]
        else:
            if cats is None:
                uniq_vals = pd.unique(s)
                if len(uniq_vals) > max_categories and c not in kinds:
                    raise SchemaError(
                        f"Column '{c}' has {len(uniq_vals)} distinct non-numeric values "
                        f"(more than max_categories={max_categories}); is it an identifier? "
                        "Drop it, or pass kinds={...} / max_categories to keep it."
                    )
                try:
                    cats = sorted(_py(v) for v in uniq_vals)
                except TypeError:
                    cats = [_py(v) for v in uniq_vals]
            if kind == "binary" and len(cats) != 2:
                kind = "categorical"
            feats.append(Feature(c, kind, categories=tuple(cats), actionability=a))  # type: ignore[arg-type]
    classes = None
    if target is not None:
        try:
            classes = tuple(sorted(_py(v) for v in pd.unique(frame[target])))
        except TypeError:
            classes = tuple(_py(v) for v in pd.unique(frame[target]))
    return feats, classes
