"""Schema inference from a DataFrame (the body of :meth:`counterfact.Schema.infer`)."""

from __future__ import annotations

import re
import warnings
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
    act = _actionability_overrides(immutable, increasing, decreasing)
    check_unique_columns(frame)
    if target is not None and target not in frame.columns:
        raise ValidationError(
            f"Target column '{target}' not in the frame's columns {list(frame.columns)}."
        )
    cols = [c for c in frame.columns if c != target]
    _check_override_names(
        cols,
        kinds=kinds,
        categories=categories,
        bounds=bounds,
        actionability=act,
        resolution=resolution,
    )
    feats: list[Feature] = []
    for c in cols:
        s = frame[c]
        if s.isna().any():
            raise ValidationError(
                f"Column '{c}' has missing values; impute or drop them before inferring a schema."
            )
        kind, cats = kinds.get(c), categories.get(c)
        if kind is None:
            kind, cats = _guess_kind(s, cats)
            _warn_numbers_as_text(c, s, kind)
            _warn_identifier(c, s, kind)
        a = act.get(c, "free")
        if kind in NUMERIC_KINDS:
            feats.append(_numeric_feature(c, s, kind, a, bounds.get(c), resolution.get(c)))
        else:
            if cats is None:
                cats = _observed_levels(c, s, max_categories, explicit_kind=c in kinds)
            feats.append(_categorical_feature(c, kind, cats, a))
    return feats, _classes(frame, target)


def _actionability_overrides(
    immutable: Iterable[str], increasing: Iterable[str], decreasing: Iterable[str]
) -> dict[str, str]:
    """Feature name -> actionability; a name given twice is an error."""
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
    return act


def _check_override_names(cols: list[Any], **overrides: Mapping[str, Any]) -> None:
    for label, mapping in overrides.items():
        unknown = [n for n in mapping if n not in cols]
        if unknown:
            raise SchemaError(f"{label} overrides name unknown columns {unknown}. Columns: {cols}.")


#: a real feature whose observed range holds fewer steps of its inferred resolution than this
#: is warned about: answers can only move it in coarse jumps
COARSE_STEPS = 20


def check_unique_columns(frame: pd.DataFrame, what: str = "The frame") -> None:
    """Refuse a frame with two columns of one name (pandas would hand back a frame for it)."""
    repeated = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if repeated:
        raise ValidationError(
            f"{what} has more than one column named {repeated}; give each column its own "
            "name (or drop the copies)."
        )


def _warn_numbers_as_text(c: str, s: pd.Series, kind: str) -> None:
    """Warn when a column guessed categorical holds only numbers written as text."""
    if kind == "categorical" and _numbers_as_text(s):
        warnings.warn(
            f"Column '{c}' holds numbers written as text ({_py(s.iloc[0])!r}, ...), so it is "
            "read as categorical: its values are unordered labels. Convert it with "
            f"pd.to_numeric(frame[{c!r}]) for a numeric feature, or pass "
            f"kinds={{{c!r}: 'categorical'}} to keep it as labels and silence this.",
            UserWarning,
            stacklevel=5,
        )


#: a column name that reads as an identifier: "id", "customer_id", "loan ID", "key"
_IDENTIFIER = re.compile(r"(?:.*[\s_\-.])?(?:id|ids|uuid|key)", re.IGNORECASE)


def _warn_identifier(c: str, s: pd.Series, kind: str) -> None:
    """Warn when an integer column named like an identifier holds a distinct value per row:
    a method would treat it as a feature it may change."""
    if kind != "integer" or len(s) < COARSE_STEPS or not _IDENTIFIER.fullmatch(str(c)):
        return
    if s.nunique() == len(s):
        warnings.warn(
            f"Column '{c}' looks like an identifier (a name like an ID and a different whole "
            "number on every row), so it is read as an integer feature the methods may "
            f"change. Drop it before building the dataset (frame.drop(columns=[{c!r}])), or "
            f"pass kinds={{{c!r}: 'integer'}} to keep it and silence this.",
            UserWarning,
            stacklevel=5,
        )


def _numbers_as_text(s: pd.Series) -> bool:
    """Whether every value of a non-numeric column reads as a number ("3", "47.5")."""
    if pd.api.types.is_bool_dtype(s) or isinstance(s.dtype, pd.CategoricalDtype) or not len(s):
        return False
    return bool(pd.to_numeric(s.astype(str), errors="coerce").notna().all())


def _guess_kind(s: pd.Series, cats: Sequence[Any] | None) -> tuple[str, Sequence[Any] | None]:
    """The kind read from a column's dtype and values (and a categorical dtype's levels)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        kind = "ordinal" if s.dtype.ordered else "categorical"
        return kind, list(s.dtype.categories) if cats is None else cats
    if pd.api.types.is_bool_dtype(s):
        return "binary", cats
    if not pd.api.types.is_numeric_dtype(s):
        return "categorical", cats
    vals = s.to_numpy(dtype=float)
    uniq = np.unique(vals)
    if set(uniq.tolist()) <= {0.0, 1.0} and len(uniq) == 2:
        return "binary", cats
    if np.all(np.abs(vals - np.round(vals)) < 1e-9):
        return "integer", cats
    return "real", cats


def _numeric_feature(
    c: str,
    s: pd.Series,
    kind: str,
    actionability: str,
    bounds: tuple[float, float] | None,
    resolution: float | None,
) -> Feature:
    """A numeric feature bounded by ``bounds`` or the observed range, with the step the
    column is recorded in (integers: 1 unless plainly coarser) unless one is given."""
    values = pd.to_numeric(s)
    lo, hi = bounds if bounds is not None else (float(values.min()), float(values.max()))
    if resolution is None:
        resolution = infer_resolution(values.to_numpy(dtype=float), integer=kind == "integer")
        if kind == "real" and hi > lo and (hi - lo) / resolution < COARSE_STEPS:
            warnings.warn(
                f"Column '{c}' spans only {(hi - lo) / resolution:.0f} steps of its inferred "
                f"resolution {resolution:g} ([{lo:g}, {hi:g}]), so answers move it in coarse "
                f"steps. Pass resolution={{{c!r}: <a finer step>}} (or rescale the column) "
                "if finer moves mean something.",
                UserWarning,
                stacklevel=4,
            )
    return Feature(
        c,
        kind,  # type: ignore[arg-type]
        lower=lo,
        upper=hi,
        actionability=actionability,  # type: ignore[arg-type]
        resolution=resolution,
    )


def _categorical_feature(c: str, kind: str, cats: Sequence[Any], actionability: str) -> Feature:
    """A feature with levels ``cats``; "binary" with other than two levels is categorical."""
    if kind == "binary" and len(cats) != 2:
        kind = "categorical"
    return Feature(
        c,
        kind,  # type: ignore[arg-type]
        categories=tuple(cats),
        actionability=actionability,  # type: ignore[arg-type]
    )


def _observed_levels(c: str, s: pd.Series, max_categories: int, *, explicit_kind: bool) -> list:
    """The distinct values of a non-numeric column, sorted where they can be."""
    uniq_vals = pd.unique(s)
    if len(uniq_vals) > max_categories and not explicit_kind:
        _refuse_separated_numbers(c, uniq_vals)
        raise SchemaError(
            f"Column '{c}' has {len(uniq_vals)} distinct non-numeric values "
            f"(more than max_categories={max_categories}); is it an identifier or a date? "
            "Drop it (on the command line: remove it from the CSV), convert numbers written "
            "as text with pd.to_numeric, or pass kinds={...} / max_categories to keep it."
        )
    try:
        return sorted(_py(v) for v in uniq_vals)
    except TypeError:
        return [_py(v) for v in uniq_vals]


#: a number written with thousands separators: 78,049 or 1,234,567.89
_SEPARATED = re.compile(r"^\s*[+-]?\d{1,3}(,\d{3})+(\.\d+)?\s*$")


def _refuse_separated_numbers(c: str, values: Any) -> None:
    """Raise, naming the fix, when most of a column's values are numbers written with
    thousands separators (which ``pd.to_numeric`` does not read either)."""
    text = [v for v in values if isinstance(v, str)]
    hits = [v for v in text if _SEPARATED.match(v)]
    if text and len(hits) >= 0.9 * len(text):
        raise SchemaError(
            f"Column '{c}' holds numbers written with thousands separators ({hits[0]!r}, ...). "
            "Read the file with pandas.read_csv(..., thousands=',') (on the command line: "
            "remove the separators from the CSV, e.g. save it again without number "
            "formatting), so that the column is numeric."
        )


def _classes(frame: pd.DataFrame, target: str | None) -> tuple[Any, ...] | None:
    """The target's classes, sorted where they can be."""
    if target is None:
        return None
    try:
        return tuple(sorted(_py(v) for v in pd.unique(frame[target])))
    except TypeError:
        return tuple(_py(v) for v in pd.unique(frame[target]))
